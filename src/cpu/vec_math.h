// Hot float32 row kernels compiled twice (AVX2+FMA and baseline x86-64) and picked at
// load time by the CPU (GCC target_clones), so one binary is fast everywhere. Their
// loops are written to auto-vectorise: no branches in the element loop.
#pragma once
#include <cstdint>

namespace dt::cpu {

// exp(x) for float with ~1 ulp error over the float range (Cody-Waite reduction and a
// degree-6 polynomial); exp of very negative x flushes to 0, of x > 88.7 to +inf.
void exp_rows(const float* x, float* y, int64_t n, float shift);
// Sum of n floats, accumulated in 16 float lanes and combined in double.
double sum_f32(const float* x, int64_t n);
float max_f32(const float* x, int64_t n);  // NaN propagates
// y = x - shift, and returns sum(exp(y)) computed in float lanes
double exp_sum_f32(const float* x, int64_t n, float shift, float* y_or_null);
void scale_f32(float* y, int64_t n, float s);
void add_f32(const float* a, const float* b, float* out, int64_t n);

}  // namespace dt::cpu
