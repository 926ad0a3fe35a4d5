/* mathlib: scale an array in place. */
#include <stddef.h>

void scale(double *values, size_t count) {
    for (size_t i = 0; i < count; i++) {
        values[i] = values[i] * 3.0;
    }
}
