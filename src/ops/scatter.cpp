// Front ends of index_add and scatter_add (torch.index_add / torch.scatter_add): PyTorch's
// shape, dtype and index checks, then a copy of t that the backend adds into in place
// (KernelOp::IndexAdd / ScatterAdd). They are also the backward of index_select and
// gather, so a gradient costs O(index x row), never a one-hot of the whole dimension.
#include <algorithm>

#include "core/backend.h"
#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {
namespace {

void check_same_dtype(const char* op, const Tensor& t, const Tensor& other, const char* what) {
  if (t.dtype() != other.dtype())
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": self (", dtype_name(t.dtype()), ") and ", what, " (",
                                    dtype_name(other.dtype()), ") must have the same dtype"));
}

// op adds values into self in place (index checked, dims wrapped).
void add_into(KernelOp op, const Tensor& self, int d, const Tensor& index, const Tensor& values) {
  if (index.numel() == 0 || self.numel() == 0) return;
  self.storage()->begin_write(op_name(op), "_");
  OpArgs args{&self, &index, &values};
  args.i[0] = d;
  run_op(op, args);
}

}  // namespace

void index_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_add_";
  check_same_device(op, t, index);
  check_same_device(op, t, source);
  check_same_dtype(op, t, source, "source");
  if (index.ndim() > 1) fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": index must be a 0-d or 1-d tensor, got ", dims_str(index.shape())));
  const int d = wrap_dim(dim, t.ndim(), op);
  if (t.ndim() == 0) {
    if (source.ndim() != 0 || index.numel() != 1)
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": a 0-d self takes a 0-d source and one index"));
  } else {
    bool ok = source.ndim() == t.ndim() && source.size(d) == index.numel();
    for (int k = 0; ok && k < t.ndim(); ++k) ok = k == d || source.size(k) == t.size(k);
    if (!ok)
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": source ", dims_str(source.shape()), " must have self's shape ",
                                      dims_str(t.shape()), " with ", index.numel(), " (the index's length) at dim ", d));
  }
  const int64_t size = t.ndim() == 0 ? 1 : t.size(d);
  Tensor idx = checked_index(op, index, size, false);
  if (t.ndim() == 0) return binary_(BinaryOp::Add, t, source);  // one index, necessarily 0: t += source
  add_into(KernelOp::IndexAdd, t, d, idx.ndim() == 0 ? reshape(idx, Dims{1}, false) : idx, source);
}

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  Tensor out = to(t, t.device(), t.dtype(), true);
  index_add_(out, dim, index, source);
  return out;
}

void scatter_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* op = "scatter_add_";
  check_same_device(op, t, index);
  check_same_device(op, t, src);
  check_same_dtype(op, t, src, "src");
  const int d = wrap_dim(dim, t.ndim(), op);
  const int n = std::max(1, t.ndim());
  if (std::max(1, index.ndim()) != n || std::max(1, src.ndim()) != n)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": index ", dims_str(index.shape()), " and src ", dims_str(src.shape()),
                                    " must have as many dimensions as self ", dims_str(t.shape())));
  for (int k = 0; k < index.ndim(); ++k) {
    if (index.size(k) > src.size(k))
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": index ", dims_str(index.shape()), " exceeds src ", dims_str(src.shape()),
                                      " at dimension ", k));
    if (k != d && t.ndim() > 0 && index.size(k) > t.size(k))
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": index ", dims_str(index.shape()), " exceeds self ", dims_str(t.shape()),
                                      " at dimension ", k));
  }
  const int64_t size = t.ndim() == 0 ? 1 : t.size(d);
  Tensor idx = checked_index(op, index, size, false);
  if (t.ndim() == 0) {  // every index is 0: t += src[j] for each of index's positions, in order
    for (int64_t j = 0; j < idx.numel(); ++j)
      binary_(BinaryOp::Add, t, src.ndim() == 0 ? src : reshape(narrow(src, 0, j, 1), Dims{}, false));
    return;
  }
  // The kernel walks index's positions and reads src at the same coordinates.
  add_into(KernelOp::ScatterAdd, t, d, idx, src);
}

Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = to(t, t.device(), t.dtype(), true);
  scatter_add_(out, dim, index, src);
  return out;
}

}  // namespace dt::ops
