// Verdict "non-deterministic": work-items take tickets from a shared counter, and which
// work-item gets which ticket depends on how the runtime's threads interleave; the
// local scratch array also carries over whatever earlier work-groups left in it.
__kernel void racy_tickets(__global const float* in, __global float* out,
                           __global int* counter, const int n) {
    __local float scratch[64];
    int g = get_global_id(0);
    int l = get_local_id(0) % 64;
    float acc = in[g];
    for (int k = 0; k < 64; k++) {
        acc = acc * 0.5f + sin(acc);
    }
    int ticket = atomic_inc(&counter[0]);
    float stale = scratch[l];
    scratch[l] = stale + acc + 1.0f;
    if (g < n) {
        out[g] = acc + stale + (float)ticket;
    }
}
