// Differentiable ops that keep some elements and replace the others: clamp, leaky_relu,
// masked_fill, triu and tril. Each is built from differentiable ops (maximum / minimum with a scalar,
// where), so the gradient comes with them, and named as PyTorch names its node.
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::ag {

Tensor clamp(const Tensor& a, const double* lo, const double* hi) {
  if (!lo && !hi) fail(DT_ERR_INVALID_ARGUMENT, "clamp: at least one of min and max must be given");
  // maximum(x, lo) is PyTorch's clamp_min and minimum(., hi) its clamp_max, gradients
  // included: g where lo <= x <= hi, 0 elsewhere and for NaN; when lo > hi every element
  // is hi, as in PyTorch.
  // The result dtype is promoted over both bounds first, as PyTorch's: clamp(uint8, -7,
  // 0.5) is float32 and compares with -7, not with -7 wrapped into uint8.
  Tensor out = a;
  if (!is_floating(a.dtype())) {
    const Tensor slo = ops::scalar_tensor(lo ? *lo : 0.0, Device{DT_DEVICE_CPU, 0});
    const Tensor shi = ops::scalar_tensor(hi ? *hi : 0.0, Device{DT_DEVICE_CPU, 0});
    const DType common = ops::result_type({{&a, false}, {&slo, true}, {&shi, true}});
    if (common != a.dtype()) out = ops::to(a, a.device(), common, false);
  }
  if (lo) out = binary_scalar(BinaryOp::Maximum, out, *lo);
  if (hi) out = binary_scalar(BinaryOp::Minimum, out, *hi);
  return named_result(out, "ClampBackward1");
}

Tensor leaky_relu(const Tensor& a, double slope) {
  if (!is_floating(a.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("leaky_relu: expected a floating tensor, got ", dtype_name(a.dtype())));
  if (!std::isfinite(slope)) fail(DT_ERR_INVALID_ARGUMENT, cat("leaky_relu: negative_slope must be finite, got ", slope));
  // where(a > 0, a, a * slope): the gradient is g or g * slope (the slope at 0 and for
  // NaN, as PyTorch's), from where's and the product's.
  const Tensor positive = ops::binary_scalar(BinaryOp::Gt, a, 0.0);
  return named_result(where(positive, a, binary_scalar(BinaryOp::Mul, a, slope)), "LeakyReluBackward0");
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, double value) {
  const char* op = "masked_fill";
  if (mask.dtype() != DType::Bool)
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a bool mask, got ", dtype_name(mask.dtype())));
  ops::check_same_device(op, a, mask);
  ops::broadcast_shapes(op, a.shape(), mask.shape());  // names the op and both shapes
  // value converts to a's dtype as a cast would (2.5 into int64 is 2), as PyTorch's does,
  // but one an integer dtype cannot hold (300 into int8, NaN into int64) is refused, as
  // there, not wrapped.
  ops::check_integer_fits(op, "the value", a.dtype(), value);
  const Tensor fill = ops::full(Dims{}, value, a.dtype(), a.device());
  return named_result(where(mask, fill, a), "MaskedFillBackward0");
}

// Made on the device from two aranges (j - i, compared with the diagonal): no host
// memory crosses, so a GPU stream does not wait for it and a graph capture records it.
Tensor triangle_mask(int64_t rows, int64_t cols, int64_t diagonal, bool upper, Device device) {
  const Tensor i = ops::reshape(ops::arange(0, static_cast<double>(rows), 1, DT_INT64, device), Dims{rows, 1}, false);
  const Tensor j = ops::reshape(ops::arange(0, static_cast<double>(cols), 1, DT_INT64, device), Dims{1, cols}, false);
  const Tensor off = ops::binary(BinaryOp::Sub, j, i);  // the diagonal each element sits on
  // An int64 0-d diagonal, so the comparison stays in integers at any size.
  const Tensor d = ops::full(Dims{}, static_cast<double>(diagonal), DType::Int64, device);
  return ops::binary(upper ? BinaryOp::Ge : BinaryOp::Le, off, d);
}

namespace {

// Keeps the elements on and above (upper) or on and below (lower) the given diagonal of
// the last two dims, zeros the rest.
Tensor triangle(const Tensor& a, int64_t diagonal, bool upper) {
  const char* op = upper ? "triu" : "tril";
  if (a.ndim() < 2)  // INVALID_ARGUMENT as for any dimension out of range (here dim -2)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": expected a tensor of at least 2 dims, got ", dims_str(a.shape())));
  const Tensor mask = triangle_mask(a.size(a.ndim() - 2), a.size(a.ndim() - 1), diagonal, upper, a.device());
  const Tensor zero = ops::full(Dims{}, 0.0, a.dtype(), a.device());
  return named_result(where(mask, a, zero), upper ? "TriuBackward0" : "TrilBackward0");
}

}  // namespace

Tensor triu(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, true); }
Tensor tril(const Tensor& a, int64_t diagonal) { return triangle(a, diagonal, false); }

}  // namespace dt::ag
