// Batched matrix products on the CPU: float32/float64 through cpu/gemm.h (oneDNN's or
// OpenBLAS's GEMM, the libraries made for it), float16/bfloat16 through float32 GEMM on
// converted copies, integers with a simple wrapping loop (rare, and no BLAS does them).
// addmm (Linear's a b + bias) adds the bias to each block of the float32 product as the
// block is finished (gemm.h), to float64's after the product.
#include <vector>

#include "core/error.h"
#include "cpu/cpu_backend.h"
#include "cpu/gemm.h"
#include "cpu/parallel.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cpu {
namespace {

// How BLAS should read a [rows, cols] matrix with element strides (rs, cs): row-major
// with leading dimension ld, transposed or not; false when neither fits.
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool* trans, int64_t* ld) {
  if (cs == 1 && (rs >= std::max<int64_t>(1, cols) || rows == 1)) {
    *trans = false;
    *ld = std::max<int64_t>(rs, std::max<int64_t>(1, cols));
    return true;
  }
  if (rs == 1 && (cs >= std::max<int64_t>(1, rows) || cols == 1)) {
    *trans = true;
    *ld = std::max<int64_t>(cs, std::max<int64_t>(1, rows));
    return true;
  }
  return false;
}

// Copies matrix (rows, cols, rs, cs) of S into a dense row-major buffer of D.
template <typename D, typename S>
void pack(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, D* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = cast_value<D>(src[i * rs + j * cs]);
}

// out[r, j] += bias[j] for every row r of the batch, rows split over the threads.
template <typename T>
void add_bias_rows(T* out, int64_t rows, int64_t N, const T* bias) {
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, N)), [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r)
      for (int64_t j = 0; j < N; ++j) out[r * N + j] += bias[j];
  });
}

// out = a b (+ bias, [N], on every row, when not null).
template <typename T>
void blas_matmul(const Tensor& out, const Tensor& a, const Tensor& b, const T* bias = nullptr) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const T* ab = a.data_as<T>();
  const T* bb = b.data_as<T>();
  T* ob = out.data_as<T>();
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < out.numel(); ++i) ob[i] = T(0);
    if (bias) add_bias_rows(ob, B * M, N, bias);
    return;
  }
  // The strides are the same for every item: an operand BLAS cannot read as it is (both
  // strides > 1) is packed once, the whole batch, into a dense buffer.
  int64_t a_item = a.stride(0), b_item = b.stride(0);
  bool ta, tb;
  int64_t lda, ldb;
  std::vector<T> pa, pb;
  if (!blas_layout(M, K, a.stride(1), a.stride(2), &ta, &lda)) {
    pa.resize(static_cast<size_t>(B * M * K));
    for (int64_t i = 0; i < B; ++i) pack<T, T>(ab + i * a_item, M, K, a.stride(1), a.stride(2), pa.data() + i * M * K);
    ab = pa.data(); ta = false; lda = K; a_item = M * K;
  }
  if (!blas_layout(K, N, b.stride(1), b.stride(2), &tb, &ldb)) {
    pb.resize(static_cast<size_t>(B * K * N));
    for (int64_t i = 0; i < B; ++i) pack<T, T>(bb + i * b_item, K, N, b.stride(1), b.stride(2), pb.data() + i * K * N);
    bb = pb.data(); tb = false; ldb = N; b_item = K * N;
  }
  if constexpr (std::is_same<T, float>::value) {
    gemm_batch(ta, tb, M, N, K, lda, ldb, N, B,
               [&](int64_t i) { return GemmItem{ab + i * a_item, bb + i * b_item, ob + i * M * N, bias}; });
  } else {
    for (int64_t i = 0; i < B; ++i) gemm(ta, tb, M, N, K, ab + i * a_item, lda, bb + i * b_item, ldb, ob + i * M * N, N);
    if (bias) add_bias_rows(ob, B * M, N, bias);
  }
}

template <typename T>
void reduced_float_matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  std::vector<float> pa(static_cast<size_t>(M * K)), pb(static_cast<size_t>(K * N)), pc(static_cast<size_t>(M * N));
  T* ob = out.data_as<T>();
  for (int64_t i = 0; i < B; ++i) {
    pack<float, T>(a.data_as<T>() + i * a.stride(0), M, K, a.stride(1), a.stride(2), pa.data());
    pack<float, T>(b.data_as<T>() + i * b.stride(0), K, N, b.stride(1), b.stride(2), pb.data());
    if (M > 0 && N > 0) {
      if (K == 0) std::fill(pc.begin(), pc.end(), 0.0f);
      else gemm(false, false, M, N, K, pa.data(), K, pb.data(), N, pc.data(), N);
    }
    for (int64_t j = 0; j < M * N; ++j) ob[i * M * N + j] = T(pc[static_cast<size_t>(j)]);
  }
}

template <typename T>
void integer_matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const T* ab = a.data_as<T>();
  const T* bb = b.data_as<T>();
  T* ob = out.data_as<T>();
  parallel_for(B * M, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, N * K)), [&](int64_t s, int64_t e) {
    for (int64_t r = s; r < e; ++r) {
      int64_t i = r / M, m = r % M;
      for (int64_t n = 0; n < N; ++n) {
        T acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc = fn::wrap_add(acc, fn::wrap_mul(ab[i * a.stride(0) + m * a.stride(1) + k * a.stride(2)],
                                               bb[i * b.stride(0) + k * b.stride(1) + n * b.stride(2)]));
        ob[(i * M + m) * N + n] = acc;
      }
    }
  });
}

}  // namespace

void CpuBackend::matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) blas_matmul<T>(out, a, b);
    else if constexpr (is_reduced_float<T>::value) reduced_float_matmul<T>(out, a, b);
    else if constexpr (!std::is_same<T, bool>::value) integer_matmul<T>(out, a, b);
  });
}

void CpuBackend::addmm(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias) {
  switch (out.dtype()) {
    case DType::Float32: return blas_matmul<float>(out, a, b, bias.data_as<float>());
    case DType::Float64: return blas_matmul<double>(out, a, b, bias.data_as<double>());
    default: fail(DT_ERR_NOT_SUPPORTED, "addmm: the cpu kernel takes float32 or float64");
  }
}

}  // namespace dt::cpu
