// Verdict "non-deterministic": reads local memory before anything in this run wrote it,
// so each result carries what the previous work-group (or run) left behind.
__kernel void stale_local(__global const float* in, __global float* out, const int n) {
    __local float scratch[64];
    int g = get_global_id(0);
    int l = get_local_id(0) % 64;
    float stale = scratch[l];
    scratch[l] = in[g] + (float)g;
    if (g < n) {
        out[g] = in[g] + stale;
    }
}
