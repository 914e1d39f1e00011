#include "cpu/vec_math.h"

namespace dt::cpu {

#define DT_DECLARE(ns)                                                  \
  namespace ns {                                                        \
  double sum_f32(const float* x, int64_t n);                           \
  float max_f32(const float* x, int64_t n);                            \
  double exp_sum_f32(const float* x, int64_t n, float shift, float* y); \
  void scale_f32(float* y, int64_t n, float s);                        \
  void select_f32(float* out, const bool* cond, const float* x, const float* y, float y0, int64_t n); \
  uint32_t sort_keys_f32(const float* x, int64_t n, bool descending, uint32_t* keys);                \
  }
DT_DECLARE(base)
#ifndef DT_NO_AVX2_COPY
DT_DECLARE(avx2)
#else
namespace avx2 = base;  // no AVX2 copy on this architecture
#endif
#undef DT_DECLARE

namespace {
bool use_avx2() {
#ifndef DT_NO_AVX2_COPY
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}
}  // namespace

double sum_f32(const float* x, int64_t n) { return use_avx2() ? avx2::sum_f32(x, n) : base::sum_f32(x, n); }
float max_f32(const float* x, int64_t n) { return use_avx2() ? avx2::max_f32(x, n) : base::max_f32(x, n); }
double exp_sum_f32(const float* x, int64_t n, float shift, float* y) {
  return use_avx2() ? avx2::exp_sum_f32(x, n, shift, y) : base::exp_sum_f32(x, n, shift, y);
}
void scale_f32(float* y, int64_t n, float s) { use_avx2() ? avx2::scale_f32(y, n, s) : base::scale_f32(y, n, s); }
void select_f32(float* out, const bool* cond, const float* x, const float* y, float y0, int64_t n) {
  use_avx2() ? avx2::select_f32(out, cond, x, y, y0, n) : base::select_f32(out, cond, x, y, y0, n);
}

uint32_t sort_keys_f32(const float* x, int64_t n, bool descending, uint32_t* keys) {
  return use_avx2() ? avx2::sort_keys_f32(x, n, descending, keys) : base::sort_keys_f32(x, n, descending, keys);
}

}  // namespace dt::cpu
