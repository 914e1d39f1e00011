// torch.sort, torch.argsort and torch.topk. The backends sort the rows of a contiguous
// tensor along its last dim and keep the first k of each (KernelOp::Sort; k is the
// size of the results' last dim); this front end moves the requested dim there and back.
#include "core/backend.h"
#include "core/error.h"
#include "core/op_kinds.h"
#include "ops/ops.h"

namespace dt::ops {
namespace {

// The first k of each sorted row along dim d of a (ndim >= 1).
SortResult sorted_rows(const Tensor& a, int d, int64_t k, bool descending) {
  const int last = a.ndim() - 1;
  const Tensor in = contiguous(d == last ? a : transpose(a, d, last));
  Dims shape = in.shape();
  shape[last] = k;
  SortResult r{Tensor::empty(shape, a.dtype(), a.device()), Tensor::empty(shape, DType::Int64, a.device())};
  if (r.values.numel() > 0) {
    OpArgs args{&r.values, &r.indices, &in};
    args.i[0] = descending ? 1 : 0;
    run_op(KernelOp::Sort, args);
  }
  if (d != last) {
    r.values = contiguous(transpose(r.values, d, last));
    r.indices = contiguous(transpose(r.indices, d, last));
  }
  return r;
}

// A scalar is sorted: itself, at position 0.
SortResult scalar_sorted(const Tensor& a) {
  return SortResult{to(a, a.device(), a.dtype(), true), full(Dims{}, 0.0, DType::Int64, a.device())};
}

}  // namespace

SortResult sort(const Tensor& a, int64_t dim, bool descending) {
  const int d = wrap_dim(dim, a.ndim(), "sort");
  if (a.ndim() == 0) return scalar_sorted(a);
  return sorted_rows(a, d, a.size(d), descending);
}

SortResult topk(const Tensor& a, int64_t k, int64_t dim, bool largest) {
  const int d = wrap_dim(dim, a.ndim(), "topk");
  if (a.dtype() == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, "topk: not implemented for bool (as PyTorch)");
  const int64_t size = a.ndim() == 0 ? 1 : a.size(d);
  if (k < 0 || k > size)
    fail(DT_ERR_INVALID_ARGUMENT, cat("topk: k (", k, ") is out of range for dim ", dim, " of size ", size));
  if (a.ndim() == 0) return scalar_sorted(a);  // for k 0 too, as PyTorch
  return sorted_rows(a, d, k, largest);
}

}  // namespace dt::ops
