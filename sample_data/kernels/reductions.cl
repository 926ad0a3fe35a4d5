/* Two kernels sharing helpers; each item keeps only what its kernel needs. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define BLOCK 32

typedef struct {
    float lo;
    float hi;
} range_t;

float clampf(float x, range_t r) { return fmin(fmax(x, r.lo), r.hi); }

float square(float x) { return x * x; }

/* Not used by any kernel: dropped from both items. */
float unused_helper(float x) { return x - 1.0f; }

__kernel void clamp_all(__global float* data, const float lo, const int n) {
    range_t r = {lo, lo + 0.5f};
    int i = get_global_id(0);
    if (i < n) {
        data[i] = clampf(data[i], r);
    }
}

__kernel void block_sum_squares(__global const float* in, __global float* out,
                                __local float* partial, const int n) {
    int g = get_global_id(0);
    int l = get_local_id(0);
    partial[l] = g < n ? square(in[g]) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = get_local_size(0) / 2; step > 0; step >>= 1) {
        if (l < step) {
            partial[l] += partial[l + step];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        out[get_group_id(0)] = partial[0];
    }
}
