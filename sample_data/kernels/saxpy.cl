/* The example of CLgen's Figure 5: a macro, a typedef'd type and an inline helper. */
#define DTYPE float
#define ALPHA(a) 3.5f * a

typedef DTYPE real_t;

inline real_t ax(real_t x) { return ALPHA(x); }

__kernel void saxpy( /* SAXPY kernel */
    __global real_t *input1,
    __global real_t *input2,
    const int nelem)
{
    unsigned int idx = get_global_id(0);
    // = ax + y
    if (idx < nelem) {
        input2[idx] += ax(input1[idx]); }
}
