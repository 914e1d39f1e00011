// Products and sums rounded one at a time (the _rn intrinsics), which nvcc never
// contracts into FMAs: for fused kernels that must give the bits of the unfused ops (one
// kernel each, where nothing can be contracted).
#pragma once

namespace dt::cudap {

__device__ inline float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double sub_rn(double a, double b) { return __dsub_rn(a, b); }

}  // namespace dt::cudap
