// Verdict "compile-error": calls a function nobody declared (the shim cannot help).
__kernel void broken(__global float* a, const int n) {
    int i = get_global_id(0);
    a[i] = undeclared_helper(a[i], n);
}
