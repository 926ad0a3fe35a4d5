// Verdict "input-insensitive": the output depends only on the work-item's index.
__kernel void iota(__global const float* in, __global float* out, const int n) {
    int i = get_global_id(0);
    if (i < n) {
        out[i] = (float)(i * 2 + 1);
    }
}
