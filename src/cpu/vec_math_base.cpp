// The baseline x86-64 copy of the hot loops.
#define DT_VEC_NS base
#include "cpu/vec_math_kernels.inc"
