// Batched matrix products: floating dtypes through cuBLAS (cublasGemmStridedBatchedEx:
// float32 with or without TF32, float64, float16 and bfloat16 accumulating in float32),
// integers with a plain wrapping kernel (cuBLAS has no integer GEMM of these types).
// Row-major C = A B is computed as column-major C^T = B^T A^T, so no operand is copied
// unless its strides fit neither layout. addmm (Linear's product and bias) goes through
// cuBLASLt's bias epilogue (gemm_lt.h), one kernel, where it has an algorithm.
#include <cublas_v2.h>

#include <climits>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "cuda/gemm_lt.h"
#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/memory.h"
#include "cuda/runtime.h"
#include "ops/cast.h"
#include "ops/functors.h"

namespace dt::cudap {

void check_blas(cublasStatus_t s, int device, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string text = std::string(what) + " on cuda:" + std::to_string(device) + ": " + cublasGetStatusName(s) + ": " +
                     cublasGetStatusString(s);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) raise(DT_ERR_OUT_OF_MEMORY, text);
  if (s == CUBLAS_STATUS_EXECUTION_FAILED) {
    // the kernel failed: let CUDA say whether the context is gone
    cudaError_t e = cudaStreamSynchronize(stream(device));
    if (e != cudaSuccess) check(e, device, what);
  }
  raise(DT_ERR_BACKEND, text);
}

namespace {

// One cuBLAS handle per device, used under its mutex (a handle's stream is state).
struct Blas {
  std::mutex mu;
  cublasHandle_t handle = nullptr;
};
Blas g_blas[64];

// How cuBLAS should read a row-major [rows, cols] matrix with element strides (rs, cs)
// in the swapped (column-major) formulation: not transposed when columns are unit
// stride, transposed when rows are; false when neither fits.
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, cublasOperation_t* op, int64_t* ld) {
  if (cs == 1 && (rs >= std::max<int64_t>(1, cols) || rows == 1)) {
    *op = CUBLAS_OP_N;
    *ld = std::max<int64_t>(rs, std::max<int64_t>(1, cols));
    return true;
  }
  if (rs == 1 && (cs >= std::max<int64_t>(1, rows) || cols == 1)) {
    *op = CUBLAS_OP_T;
    *ld = std::max<int64_t>(cs, std::max<int64_t>(1, rows));
    return true;
  }
  return false;
}

// A [B, rows, cols] operand as cuBLAS will read it, packed densely first if needed.
struct Operand {
  const void* data;
  cublasOperation_t op;
  int64_t ld, batch_stride;
  std::optional<Scratch> packed;
};

void prepare(const dtp_tensor& t, Operand& o) {
  const int64_t batch = t.sizes[0], rows = t.sizes[1], cols = t.sizes[2];
  o.data = t.data;
  o.batch_stride = batch == 1 ? 0 : t.strides[0];
  if (blas_layout(rows, cols, t.strides[1], t.strides[2], &o.op, &o.ld)) return;
  const size_t esize = dtype_size(static_cast<DType>(t.dtype));
  o.packed.emplace(t.device, static_cast<size_t>(t.numel) * esize);
  dtp_tensor dense = t;
  dense.data = o.packed->get();
  dense.strides[2] = 1;
  dense.strides[1] = cols;
  dense.strides[0] = rows * cols;
  copy_on_device(dense, t);
  o.data = dense.data;
  o.op = CUBLAS_OP_N;
  o.ld = std::max<int64_t>(1, cols);
  o.batch_stride = batch == 1 ? 0 : rows * cols;
}

void gemm(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, bool allow_tf32) {
  const int dev = out.device;
  const int64_t B = out.sizes[0], M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
  for (int64_t v : {B, M, N, K})
    if (v > INT_MAX) raise(DT_ERR_NOT_SUPPORTED, "matmul: a dimension above 2^31 - 1 is not supported on CUDA");
  Operand oa, ob;
  prepare(a, oa);
  prepare(b, ob);
  cudaDataType_t type;
  cublasComputeType_t compute;
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = &one_f;
  const void* beta = &zero_f;
  switch (static_cast<DType>(out.dtype)) {
    case DType::Float64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha = &one_d;
      beta = &zero_d;
      break;
    case DType::Float16:
      type = CUDA_R_16F;
      compute = CUBLAS_COMPUTE_32F;
      break;
    case DType::BFloat16:
      type = CUDA_R_16BF;
      compute = CUBLAS_COMPUTE_32F;
      break;
    default:
      type = CUDA_R_32F;
      compute = allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
  }
  Blas& blas = g_blas[dev];
  std::lock_guard<std::mutex> lock(blas.mu);
  if (!blas.handle) check_blas(cublasCreate(&blas.handle), dev, "cublasCreate");
  check_blas(cublasSetStream(blas.handle, stream(dev)), dev, "cublasSetStream");
  // Column-major C^T[N, M] = op(B)^T[N, K] * op(A)^T[K, M]
  check_blas(cublasGemmStridedBatchedEx(blas.handle, ob.op, oa.op, static_cast<int>(N), static_cast<int>(M),
                                        static_cast<int>(K), alpha, ob.data, type, static_cast<int>(ob.ld),
                                        ob.batch_stride, oa.data, type, static_cast<int>(oa.ld), oa.batch_stride,
                                        beta, out.data, type, static_cast<int>(N), M * N, static_cast<int>(B),
                                        compute, CUBLAS_GEMM_DEFAULT),
             dev, "matmul (cublasGemmStridedBatchedEx)");
}

template <typename T>
void integer_matmul(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b) {
  const int64_t M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
  const int64_t as0 = a.strides[0], as1 = a.strides[1], as2 = a.strides[2];
  const int64_t bs0 = b.strides[0], bs1 = b.strides[1], bs2 = b.strides[2];
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  T* o = static_cast<T*>(out.data);
  launch(out.device, out.numel, "matmul", [=] __device__(int64_t i) {
    const int64_t n = i % N, m = i / N % M, batch = i / (M * N);
    T acc = 0;
    for (int64_t k = 0; k < K; ++k)
      acc = fn::wrap_add(acc, fn::wrap_mul(x[batch * as0 + m * as1 + k * as2], y[batch * bs0 + k * bs1 + n * bs2]));
    o[i] = acc;
  });
}

// out[r, j] += bias[j]: a contiguous [rows, N] output, where cuBLASLt's epilogue is not used.
template <typename T>
void add_bias_rows(const dtp_tensor& out, const dtp_tensor& bias) {
  const int64_t N = out.sizes[2];
  T* o = static_cast<T*>(out.data);
  const T* b = static_cast<const T*>(bias.data);
  launch(out.device, out.numel, "addmm (bias)", [=] __device__(int64_t i) { o[i] = o[i] + b[i % N]; });
}

// The product and its bias in one cuBLASLt call, in the layout gemm() gives cuBLAS; false
// when cuBLASLt offers no algorithm (nothing was queued).
bool gemm_with_bias(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, const dtp_tensor& bias,
                    bool allow_tf32) {
  const int64_t M = out.sizes[1], N = out.sizes[2], K = a.sizes[2];
  for (int64_t v : {M, N, K})
    if (v > INT_MAX) return false;
  Operand oa, ob;
  prepare(a, oa);
  prepare(b, ob);
  const bool wide = static_cast<DType>(out.dtype) == DType::Float64;
  LtGemm g{};
  g.op_a = ob.op;  // column-major C^T[N, M] = op(B)^T[N, K] * op(A)^T[K, M], as gemm()
  g.op_b = oa.op;
  g.m = N;
  g.n = M;
  g.k = K;
  g.a = ob.data;
  g.lda = ob.ld;
  g.b = oa.data;
  g.ldb = oa.ld;
  g.d = out.data;
  g.ldd = N;
  g.bias = bias.data;
  g.type = wide ? CUDA_R_64F : CUDA_R_32F;
  g.compute = wide ? CUBLAS_COMPUTE_64F : allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  return gemm_bias_lt(out.device, g);
}

}  // namespace

void addmm(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, const dtp_tensor& bias, bool allow_tf32) {
  if (out.numel == 0) return;
  const DType dtype = static_cast<DType>(out.dtype);
  if (dtype != DType::Float32 && dtype != DType::Float64)
    raise(DT_ERR_NOT_SUPPORTED, "addmm: the CUDA kernel takes float32 or float64");
  // One batch item with a product to compute: cuBLASLt's epilogue, once a GPU has checked
  // it (DEVTENSOR_CUBLASLT=1 until then); otherwise (a batch, an empty sum, no algorithm)
  // the product and then the bias.
  static const bool epilogue = env_equals("DEVTENSOR_CUBLASLT", "1");
  if (epilogue && out.sizes[0] == 1 && a.sizes[2] > 0 && gemm_with_bias(out, a, b, bias, allow_tf32)) return;
  matmul(out, a, b, allow_tf32);
  if (dtype == DType::Float64) add_bias_rows<double>(out, bias);
  else add_bias_rows<float>(out, bias);
}

void matmul(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, bool allow_tf32) {
  if (out.numel == 0) return;
  if (a.sizes[2] == 0) {  // an empty sum: zeros
    check(cudaMemsetAsync(out.data, 0, static_cast<size_t>(out.numel) * dtype_size(static_cast<DType>(out.dtype)),
                          stream(out.device)),
          out.device, "matmul");
    return;
  }
  dispatch(out.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_like<T>) gemm(out, a, b, allow_tf32);
    else if constexpr (!std::is_same<T, bool>::value) integer_matmul<T>(out, a, b);
  });
}

}  // namespace dt::cudap
