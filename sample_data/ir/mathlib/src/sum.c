/* mathlib: sums over integer arrays. */
#include <stddef.h>

struct window {
    size_t start;
    size_t length;
};

static long total_calls = 0;

/* Add up the elements above a threshold. */
long sum_above(const int *values, size_t count, int threshold) {
    long total = 0;
    total_calls++;
    for (size_t i = 0; i < count; i++) {
        if (values[i] > threshold) {
            total += values[i];
        }
    }
    return total;
}

/* The sum over a window of the array. */
long sum_window(const int *values, struct window w) {
    return sum_above(values + w.start, w.length, -2147483647 - 1);
}

long sum_calls(void) { return total_calls; }
