// The AVX2+FMA copy of the hot loops (this file is compiled with -mavx2 -mfma).
#define DT_VEC_NS avx2
#include "cpu/vec_math_kernels.inc"
