/* A host program with its kernel in a string literal, as many OpenCL programs ship. */
#include <stdio.h>
#include <CL/cl.h>

static const char *source =
    "// element-wise sum, a string in a host file\n"
    "__kernel void vecadd(__global const int* a,\n"
    "                     __global const int* b,\n"
    "                     __global int* c, const int n) {\n"
    "    int i = get_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

int main(void) {
    const char *label = "not a kernel: \"just text\"";
    printf("%s %s\n", label, source);
    return 0;
}
