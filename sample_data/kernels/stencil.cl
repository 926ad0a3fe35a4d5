#include "common.h"

// A 1-D three-point stencil; the helper and RADIUS come from the local header.
__kernel void stencil(__global const float* in, __global float* out, const int n) {
    int i = get_global_id(0);
    if (i < RADIUS || i >= n - RADIUS) {
        out[i] = in[i];
        return;
    }
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) {
        acc += weight(k) * in[i + k];
    }
    out[i] = acc;
}
