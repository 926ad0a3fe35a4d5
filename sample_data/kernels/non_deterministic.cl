// Verdict "non-deterministic": reads local memory that nothing in this work-group wrote.
// Each work-group adds to what the previous one (or the previous run) left there, so
// the same input gives a different result every run.
__kernel void stale_local(__global const float* in, __global float* out, const int n) {
    __local float scratch[64];
    int g = get_global_id(0);
    int l = get_local_id(0) % 64;
    float stale = scratch[l];
    scratch[l] = stale + in[g] + 1.0f;
    if (g < n) {
        out[g] = in[g] + stale;
    }
}
