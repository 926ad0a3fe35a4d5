// A copy of sum.c with every name changed and other comments:
// it must hash like sum.c (same structure, constants and control flow).
#include <stddef.h>

struct span { size_t first; size_t n; };

static long invocations = 0;

long accumulate_over(const int *xs, size_t len, int floor_value)
{
    long acc = 0;                   // running sum
    invocations++;
    for (size_t k = 0; k < len; k++)
        if (xs[k] > floor_value)
            acc += xs[k];
    return acc;
}

long accumulate_span(const int *xs, struct span s)
{
    return accumulate_over(xs + s.first, s.n, -2147483647 - 1);
}

long accumulate_calls(void) { return invocations; }
