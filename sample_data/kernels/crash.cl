// Verdict "crash": writes far outside its buffer; the runtime process dies.
__kernel void scribble(__global float* data, const int n) {
    int i = get_global_id(0);
    __global float* far = data + ((long)1 << 44) + i * n;
    far[0] = data[i];
    data[i] = far[1] + 1.0f;
}
