// Isolated from its host program: FLOAT_T and WG_SIZE were set by the build system.
// The shim header supplies them, so this kernel compiles only with it.
__kernel void scale_tile(__global FLOAT_T* data, __global FLOAT_T* out, const int n) {
    __local FLOAT_T tile[WG_SIZE];
    int g = get_global_id(0);
    int l = get_local_id(0);
    tile[l % WG_SIZE] = data[g] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < n) {
        out[g] = tile[l % WG_SIZE] + 1.0f;
    }
}
