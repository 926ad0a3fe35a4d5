// A local header: a helper and a macro used by stencil.cl.
#ifndef COMMON_H
#define COMMON_H
#define RADIUS 1
inline float weight(int offset) { return offset == 0 ? 0.5f : 0.25f; }
#endif
