/* vecops borrowed mathlib's sum.c and renamed it: a duplicate across projects. */
#include <stddef.h>

struct range { size_t lo; size_t count; };

static long used = 0;

long vec_sum_above(const int *v, size_t n, int t) {
    long s = 0;
    used++;
    for (size_t i = 0; i < n; i++) {
        if (v[i] > t) {
            s += v[i];
        }
    }
    return s;
}

long vec_sum_range(const int *v, struct range r) {
    return vec_sum_above(v + r.lo, r.count, -2147483647 - 1);
}

long vec_sum_calls(void) { return used; }
