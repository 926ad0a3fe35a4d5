/* vecops: dot product and saxpy. */
#include <stddef.h>

double dot(const double *a, const double *b, size_t n) {
    double acc = 0.0;
    for (size_t i = 0; i < n; i++) {
        acc += a[i] * b[i];
    }
    return acc;
}

void saxpy(float alpha, const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        y[i] = alpha * x[i] + y[i];
    }
}
