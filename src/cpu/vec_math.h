// Hot float32 row kernels. Each exists twice (AVX2+FMA and baseline x86-64, see
// vec_math_kernels.inc); the calls below pick the copy the CPU runs, once.
#pragma once
#include <cstdint>

namespace dt::cpu {

// Sum of n floats: 64 float lanes per 4096-element block, blocks combined in double.
double sum_f32(const float* x, int64_t n);
// Largest of n floats (n >= 1); NaN if any is NaN.
float max_f32(const float* x, int64_t n);
// sum(exp(x - shift)), also storing exp(x - shift) into y when y is not null. shift must
// be >= every x (softmax passes the row's max), so every exponent is <= 0.
double exp_sum_f32(const float* x, int64_t n, float shift, float* y);
void scale_f32(float* y, int64_t n, float s);
// out[i] = cond[i] ? x[i] : (y ? y[i] : y0); NaN and infinities pass through untouched.
void select_f32(float* out, const bool* cond, const float* x, const float* y, float y0, int64_t n);
// keys[i] = the sort key of x[i] (ops/sort_keys.h's encode); returns the smallest key.
uint32_t sort_keys_f32(const float* x, int64_t n, bool descending, uint32_t* keys);

}  // namespace dt::cpu
