#include "ops/counting.h"

#include <algorithm>

#include "core/error.h"
#include "ops/nonzero.h"
#include "ops/ops.h"

namespace dt::ops {

UniqueResult unique(const Tensor& a, bool want_inverse, bool want_counts) {
  const Device dev = a.device();
  const int64_t n = a.numel();
  UniqueResult r;
  if (n == 0) {
    r.values = empty(Dims{0}, a.dtype(), dev);
    if (want_inverse) r.inverse = empty(a.shape(), DType::Int64, dev);
    if (want_counts) r.counts = empty(Dims{0}, DType::Int64, dev);
    return r;
  }
  const SortResult s = sort(reshape(a, Dims{n}, false), 0, false);
  // True where a run of equal values starts in the sorted order (NaN differs from
  // everything, itself included, so each NaN is a run; -0.0 and 0.0 are one).
  Tensor starts = full(Dims{1}, 1.0, DType::Bool, dev);
  if (n > 1)
    starts = cat_tensors({starts, binary(BinaryOp::Ne, narrow(s.values, 0, 1, n - 1), narrow(s.values, 0, 0, n - 1))}, 0);
  const Tensor first = true_positions(starts);  // where each run starts: [u]
  const int64_t u = first.numel();
  r.values = index_select(s.values, 0, first);
  if (want_counts) {
    const Tensor ends = cat_tensors({narrow(first, 0, 1, u - 1), full(Dims{1}, static_cast<double>(n), DType::Int64, dev)}, 0);
    r.counts = binary(BinaryOp::Sub, ends, first);
  }
  if (want_inverse) {
    // The run of sorted element k is (runs started up to k) - 1; element k came from
    // position indices[k], each position once.
    const Tensor run = binary_scalar(BinaryOp::Sub, cumsum(starts, 0), 1.0);
    const Tensor inverse = full(Dims{n}, 0.0, DType::Int64, dev);
    scatter_add_(inverse, 0, s.indices, run);
    r.inverse = reshape(inverse, a.shape(), false);
  }
  return r;
}

Tensor bincount(const Tensor& x, const Tensor* weights, int64_t minlength) {
  const char* op = "bincount";
  if (!is_integral(x.dtype(), false))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected integer values, got ", dtype_name(x.dtype())));
  if (x.ndim() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": expected a 1-d tensor, got shape ", dims_str(x.shape())));
  if (minlength < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": minlength must be >= 0, got ", minlength));
  const Device dev = x.device();
  if (weights) {
    check_same_device(op, x, *weights);
    if (weights->ndim() != 1 || weights->numel() != x.numel())
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": weights must be 1-d with the input's length ", x.numel(), ", got shape ",
                                        dims_str(weights->shape())));
  }
  // PyTorch's result dtype: the weights' when floating, float64 for other weights, int64
  // counts without weights.
  const DType dtype = !weights ? DType::Int64 : is_floating(weights->dtype()) ? weights->dtype() : DType::Float64;
  int64_t length = minlength;
  if (x.numel() > 0) {
    const auto [smallest, largest] = host_min_max(x);
    if (smallest < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": values must be >= 0, got ", smallest));
    if (largest == INT64_MAX) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": value ", largest, " asks for too many bins"));
    length = std::max(length, largest + 1);
  }
  const Tensor out = full(Dims{length}, 0.0, dtype, dev);
  if (x.numel() == 0) return out;
  const Tensor add = weights ? to(*weights, dev, dtype, false) : full(Dims{x.numel()}, 1.0, dtype, dev);
  index_add_(out, 0, to(x, dev, DType::Int64, false), add);
  return out;
}

}  // namespace dt::ops
