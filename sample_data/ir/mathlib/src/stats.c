/* mathlib: mean and variance with a running accumulator (Welford). */
#include <math.h>
#include <stddef.h>

struct moments {
    size_t n;
    double mean;
    double m2;
};

void moments_push(struct moments *m, double x) {
    m->n += 1;
    double delta = x - m->mean;
    m->mean += delta / (double)m->n;
    m->m2 += delta * (x - m->mean);
}

double moments_stddev(const struct moments *m) {
    if (m->n < 2) {
        return 0.0;
    }
    return sqrt(m->m2 / (double)(m->n - 1));
}

int classify(double z) {
    switch ((int)z) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 4;
    default: return z < 0 ? -1 : 9;
    }
}
