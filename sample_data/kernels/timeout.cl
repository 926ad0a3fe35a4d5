// Verdict "timeout": never terminates (each pass writes global memory, so the loop
// cannot be optimised away).
__kernel void spin(__global float* data, const int n) {
    int i = get_global_id(0);
    while (n > 0) {
        data[i % n] += 1.0f;
    }
}
