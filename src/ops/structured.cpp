#include "ops/structured.h"

#include <cmath>

#include "core/error.h"
#include "ops/nonzero.h"
#include "ops/ops.h"

namespace dt::ops {

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  if (steps < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("linspace: steps must be >= 0, got ", steps));
  if (dtype == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, "linspace: bool is not supported (as in PyTorch)");
  if (steps <= 1) return full(Dims{steps}, start, dtype, device);
  // PyTorch's CPU kernel: the bounds in the dtype first (integers truncated), the step
  // and the values in the dtype's precision (float for the 16-bit floats, double for
  // integers), value i = start + step * i below steps / 2, else end - step * (steps-1-i),
  // so that both ends come out exact.
  const bool integral = !is_floating(dtype);
  DType compute = integral || dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  double a = start, b = end, step = 0;
  if (integral) {
    check_integer_fits("linspace", "start", dtype, std::trunc(start));
    check_integer_fits("linspace", "end", dtype, std::trunc(end));
    a = std::trunc(start), b = std::trunc(end);
    step = (b - a) / static_cast<double>(steps - 1);
  } else if (compute == DType::Float32) {
    // (PyTorch's 16-bit kernels round after every operation, and its vectorised chunks
    // differ in the last bit too: those match it within an ulp, float32 to the bit.)
    const float fa = static_cast<float>(start), fb = static_cast<float>(end);
    a = fa, b = fb;
    step = static_cast<float>(fb - fa) / static_cast<float>(steps - 1);
  } else {
    step = (b - a) / static_cast<double>(steps - 1);
  }
  const int64_t halfway = steps / 2;
  const Tensor i = arange(0, static_cast<double>(steps), 1, static_cast<dt_dtype>(compute), device);
  const Tensor j = arange(static_cast<double>(steps - 1), -1, -1, static_cast<dt_dtype>(compute), device);
  const Tensor low = binary_scalar(BinaryOp::Add, binary_scalar(BinaryOp::Mul, i, step), a);
  const Tensor high = binary(BinaryOp::Sub, full(Dims{}, b, compute, device), binary_scalar(BinaryOp::Mul, j, step));
  const Tensor first_half = binary_scalar(BinaryOp::Lt, i, static_cast<double>(halfway));
  return to(where(first_half, low, high), device, dtype, false);
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (n < 0 || m < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("eye: n and m must be >= 0, got n=", n, ", m=", m));
  // Zeros, then ones along the diagonal: a view of every (m + 1)-th element.
  Tensor t = full(Dims{n, m}, 0.0, dtype, device);
  const int64_t k = n < m ? n : m;
  if (k > 0) fill_(t.view_as(Dims{k}, Dims{m + 1}, t.offset()), 1.0);
  return t;
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  if (indices.dtype() != DType::Int64)
    fail(DT_ERR_DTYPE_MISMATCH,
         cat("one_hot: expected int64 class indices but got ", dtype_name(indices.dtype())));
  if (num_classes < -1)
    fail(DT_ERR_INVALID_ARGUMENT, cat("one_hot: num_classes must be -1 (inferred) or >= 0, got ", num_classes));
  if (indices.ndim() >= kMaxDims)
    fail(DT_ERR_INVALID_ARGUMENT, cat("one_hot: indices of ", indices.ndim(), " dims would give a result of ",
                                      indices.ndim() + 1, " (at most ", kMaxDims, ")"));
  const Device dev = indices.device();
  Dims shape = indices.shape();
  if (indices.numel() == 0) {
    if (num_classes == -1)
      fail(DT_ERR_INVALID_ARGUMENT, "one_hot: cannot infer num_classes from an empty tensor (pass it)");
    shape.push(num_classes);
    return full(shape, 0.0, DType::Int64, dev);
  }
  const auto [smallest, largest] = host_min_max(indices);
  if (smallest < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("one_hot: class values must be >= 0, got ", smallest));
  if (num_classes == -1) num_classes = largest + 1;
  if (largest >= num_classes)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("one_hot: class value ", largest, " is not smaller than num_classes (", num_classes, ")"));
  const Tensor classes = arange(0, static_cast<double>(num_classes), 1, DT_INT64, dev);
  return to(binary(BinaryOp::Eq, unsqueeze(indices, indices.ndim()), classes), dev, DType::Int64, false);
}

}  // namespace dt::ops
