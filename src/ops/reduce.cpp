// Front ends of the reductions and softmax: dims, keepdim, dtype rules.
#include <limits>

#include "core/backend.h"
#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {

Tensor reduce(ReduceOp op, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim) {
  const char* name = op_name(op);
  const int nd = a.ndim();
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": dims is NULL but ndims is ", ndims));
  if (arg && ndims > 1) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": reduces over at most one dimension, got ", ndims));
  if (ndims > static_cast<size_t>(kMaxDims)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": too many dims"));
  uint32_t mask = 0;
  for (size_t i = 0; i < ndims; ++i) {
    int d = wrap_dim(dims[i], nd, name);
    if (nd == 0) continue;  // a 0-d tensor reduces over "dim 0" trivially
    if (mask & (1u << d)) fail(DT_ERR_INVALID_ARGUMENT, cat(name, ": dimension ", dims[i], " appears more than once"));
    mask |= 1u << d;
  }
  const bool all = ndims == 0;
  if (all) mask = nd == 0 ? 0u : (nd >= 32 ? 0xffffffffu : (1u << nd) - 1u);

  DType in = a.dtype(), out_dtype = in;
  switch (op) {
    case ReduceOp::Sum: out_dtype = is_floating(in) ? in : DType::Int64; break;
    case ReduceOp::Mean:
      if (!is_floating(in))
        fail(DT_ERR_DTYPE_MISMATCH, cat("mean: could not infer output dtype; the input must be floating but got ",
                                        dtype_name(in)));
      break;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      if (in == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": not implemented for bool"));
      out_dtype = DType::Int64;
      break;
    default: break;
  }
  if (op == ReduceOp::Max || op == ReduceOp::Min || arg) {
    for (int d = 0; d < nd; ++d)
      if ((mask & (1u << d)) && a.size(d) == 0)
        fail(DT_ERR_SHAPE_MISMATCH, cat(name, ": expected a non-empty extent to reduce, but dimension ", d, " of shape ",
                                        dims_str(a.shape()), " is empty"));
    if (nd == 0 && a.numel() == 0) fail(DT_ERR_SHAPE_MISMATCH, cat(name, ": empty input"));
  }

  // argmax over everything is argmax of the flattened tensor.
  if (arg && all && nd > 1) {
    Tensor flat = reshape(a, Dims{a.numel()}, false);
    int64_t d0 = 0;
    Tensor r = reduce(op, flat, &d0, 1, false);
    if (!keepdim) return r;
    Dims ones;
    for (int d = 0; d < nd; ++d) ones.push(1);
    return reshape(r, ones, true);
  }

  Dims kept;  // keepdim shape
  kept.n = nd;
  for (int d = 0; d < nd; ++d) kept.v[d] = (mask & (1u << d)) ? 1 : a.size(d);
  Tensor out = Tensor::empty(kept, out_dtype, a.device());
  if (out.numel() > 0) {
    if (a.numel() == 0) {
      fill_(out, op == ReduceOp::Mean ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    } else {
      OpArgs args{&out, &a};
      args.i[0] = mask;
      run_op(op, args);
    }
  }
  if (keepdim) return out;
  Dims final_shape;
  for (int d = 0; d < nd; ++d)
    if (!(mask & (1u << d))) final_shape.push(a.size(d));
  return reshape(out, final_shape, true);
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  int d = wrap_dim(dim, a.ndim(), name);
  if (!is_floating(a.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(name, ": expected a floating tensor but got ", dtype_name(a.dtype())));
  // A 0-d tensor is a row of one: 1 (log 0), or NaN from a NaN or infinite value, as PyTorch.
  if (a.ndim() == 0) return reshape(softmax(reshape(a, Dims{1}, false), 0, log), Dims{}, false);
  Tensor in = contiguous(a);
  Tensor out = Tensor::empty(a.shape(), a.dtype(), a.device());
  if (out.numel() > 0) {
    OpArgs args{&out, &in};
    args.i[0] = d;
    args.i[1] = log ? 1 : 0;
    run_op(KernelOp::Softmax, args);
  }
  return out;
}

Tensor cumsum(const Tensor& a, int64_t dim, bool reverse) {
  const int d = wrap_dim(dim, a.ndim(), "cumsum");
  if (a.ndim() == 0) return reshape(cumsum(reshape(a, Dims{1}, false), 0, reverse), Dims{}, false);
  const DType dtype = is_floating(a.dtype()) ? a.dtype() : DType::Int64;  // as PyTorch's sums
  Tensor in = contiguous(a.dtype() == dtype ? a : to(a, a.device(), dtype, false));
  Tensor out = Tensor::empty(a.shape(), dtype, a.device());
  if (out.numel() > 0) {
    OpArgs args{&out, &in};
    args.i[0] = d;
    args.i[1] = reverse ? 1 : 0;
    run_op(KernelOp::Cumsum, args);
  }
  return out;
}

}  // namespace dt::ops
