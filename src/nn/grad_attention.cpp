// Scaled dot-product attention, as torch.nn.functional.scaled_dot_product_attention:
// softmax(q k^T / sqrt(E) + mask) v over the last two dims, batched over the rest. Built
// from differentiable ops (matmul, softmax, where), so autograd comes from theirs.
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::ag {

Tensor additive_mask(const char* op, const Tensor& mask, bool true_masks, DType dtype) {
  if (mask.dtype() == DType::Bool) {
    // A boolean mask becomes 0 where attention is allowed and -inf where it is not.
    const Tensor zero = ops::full(Dims{}, 0.0, dtype, mask.device());
    const Tensor ninf = ops::full(Dims{}, -std::numeric_limits<double>::infinity(), dtype, mask.device());
    return true_masks ? ops::where(mask, ninf, zero) : ops::where(mask, zero, ninf);
  }
  if (mask.dtype() != dtype)
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": a mask is bool or of the query's dtype (", dtype_name(dtype), "), got ",
                                    dtype_name(mask.dtype())));
  return mask;
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    bool is_causal) {
  const char* op = "scaled_dot_product_attention";
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": query, key and value need at least 2 dims [..., L, E], got ",
                                    dims_str(q.shape()), ", ", dims_str(k.shape()), " and ", dims_str(v.shape())));
  if (!is_floating(q.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a floating query, got ", dtype_name(q.dtype())));
  const int64_t E = q.size(q.ndim() - 1), L = q.size(q.ndim() - 2), S = k.size(k.ndim() - 2);
  if (k.size(k.ndim() - 1) != E || v.size(v.ndim() - 2) != S)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": query ", dims_str(q.shape()), ", key ", dims_str(k.shape()), " and value ",
                                    dims_str(v.shape()), " do not fit (key [..., S, E], value [..., S, Ev])"));
  if (is_causal && attn_mask.defined())
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": give either attn_mask or is_causal, not both"));
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  Tensor scores = matmul(binary_scalar(BinaryOp::Mul, q, scale), transpose(k, k.ndim() - 2, k.ndim() - 1));
  if (is_causal) {  // position i sees keys 0..i
    const Tensor allowed = triangle_mask(L, S, 0, false, q.device());
    scores = binary(BinaryOp::Add, scores, additive_mask(op, allowed, false, scores.dtype()));
  } else if (attn_mask.defined()) {
    ops::check_same_device(op, q, attn_mask);
    const Dims& w = scores.shape();
    bool fits = attn_mask.ndim() <= w.size();
    for (int i = 1; fits && i <= attn_mask.ndim(); ++i) {
      const int64_t m = attn_mask.size(attn_mask.ndim() - i);
      fits = m == 1 || m == w[w.size() - i];
    }
    if (!fits)
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": attn_mask of shape ", dims_str(attn_mask.shape()),
                                      " does not broadcast to the attention weights' shape ", dims_str(w),
                                      " ([..., L, S] with L = ", L, " queries and S = ", S, " keys)"));
    // SDPA's boolean mask says where attention is allowed (True: take part).
    scores = binary(BinaryOp::Add, scores, additive_mask(op, attn_mask, false, scores.dtype()));
  }
  return matmul(softmax(scores, -1, false), v);
}

}  // namespace dt::ag
