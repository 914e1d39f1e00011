#include "cpu/vec_math.h"

#include <cmath>
#include <cstring>
#include <limits>

#define DT_MULTIVERSION __attribute__((target_clones("arch=haswell", "default")))

namespace dt::cpu {
namespace {

inline float exp_approx(float x) {
  // clamp to the range where the result is a normal float or overflows cleanly
  const float hi = 88.7228394f, lo = -87.3365479f;
  float xc = x < lo ? lo : (x > hi ? hi : x);
  const float log2e = 1.44269504088896341f;
  float n = __builtin_floorf(xc * log2e + 0.5f);
  // Cody-Waite: r = x - n*ln2 in two parts
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // exp(r) on [-ln2/2, ln2/2], minimax polynomial (Cephes expf coefficients)
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t e = static_cast<int32_t>(n) + 127;
  uint32_t bits = static_cast<uint32_t>(e) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  float y = p * scale;
  y = x < lo ? 0.0f : y;
  y = x > hi ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

}  // namespace

DT_MULTIVERSION void exp_rows(const float* x, float* y, int64_t n, float shift) {
  for (int64_t i = 0; i < n; ++i) y[i] = exp_approx(x[i] - shift);
}

DT_MULTIVERSION double sum_f32(const float* x, int64_t n) {
  double total = 0;
  constexpr int64_t kBlock = 4096;
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t e = b + kBlock < n ? b + kBlock : n;
    float lanes[16] = {};
    int64_t i = b;
    for (; i + 16 <= e; i += 16)
      for (int k = 0; k < 16; ++k) lanes[k] += x[i + k];
    float part = 0;
    for (; i < e; ++i) part += x[i];
    double block = part;
    for (int k = 0; k < 16; ++k) block += lanes[k];
    total += block;
  }
  return total;
}

DT_MULTIVERSION float max_f32(const float* x, int64_t n) {
  float lanes[16];
  for (int k = 0; k < 16; ++k) lanes[k] = -std::numeric_limits<float>::infinity();
  bool nan = false;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) {
      float v = x[i + k];
      nan |= v != v;
      lanes[k] = v > lanes[k] ? v : lanes[k];
    }
  float m = -std::numeric_limits<float>::infinity();
  for (int k = 0; k < 16; ++k) m = lanes[k] > m ? lanes[k] : m;
  for (; i < n; ++i) {
    nan |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

DT_MULTIVERSION double exp_sum_f32(const float* x, int64_t n, float shift, float* y) {
  float lanes[16] = {};
  int64_t i = 0;
  if (y) {
    for (; i + 16 <= n; i += 16)
      for (int k = 0; k < 16; ++k) {
        float v = exp_approx(x[i + k] - shift);
        y[i + k] = v;
        lanes[k] += v;
      }
  } else {
    for (; i + 16 <= n; i += 16)
      for (int k = 0; k < 16; ++k) lanes[k] += exp_approx(x[i + k] - shift);
  }
  double s = 0;
  for (; i < n; ++i) {
    float v = exp_approx(x[i] - shift);
    if (y) y[i] = v;
    s += v;
  }
  for (int k = 0; k < 16; ++k) s += lanes[k];
  return s;
}

DT_MULTIVERSION void scale_f32(float* y, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

DT_MULTIVERSION void add_f32(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace dt::cpu
