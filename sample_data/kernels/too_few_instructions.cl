// Verdict "too-few-instructions": compiles, but does nothing.
__kernel void nothing(__global float* a) {
}
