// Scaled dot-product attention, as torch.nn.functional.scaled_dot_product_attention:
// softmax(q k^T / sqrt(E) + mask) v over the last two dims, batched over the rest. Built
// from differentiable ops (matmul, softmax, where), so autograd comes from theirs; a
// forward that autograd does not record goes to the backend's fused kernel where it has
// one (Backend::attention_forward), which never writes the [L, S] scores to memory.
#include <cmath>
#include <limits>
#include <vector>

#include "core/backend.h"
#include "core/error.h"
#include "core/graph.h"
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

namespace {

// The backend's fused attention (Backend::attention_forward) for an unrecorded forward
// without an explicit mask, on batch dims that match exactly; undefined when it does not
// apply or the backend has no kernel for it (the composed ops then run).
Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal, double scale) {
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || q.device() != k.device() || q.device() != v.device() ||
      q.ndim() != k.ndim() || q.ndim() != v.ndim())
    return {};
  const int nd = q.ndim();
  const int64_t L = q.size(nd - 2), S = k.size(nd - 2), E = q.size(nd - 1), Ev = v.size(nd - 1);
  if (L == 0 || S == 0 || E == 0 || Ev == 0) return {};
  int64_t N = 1;
  for (int d = 0; d < nd - 2; ++d) {
    if (k.size(d) != q.size(d) || v.size(d) != q.size(d)) return {};  // broadcast batch dims: composed
    N *= q.size(d);
  }
  if (N == 0 || should_record({&q, &k, &v}) || capturing(q.device())) return {};
  // Asked first: without the pass, no copy of a strided operand and no output is made.
  Backend& backend = backend_for(q.device());
  if (!backend.supports(DTP_HOOK_ATTENTION_FORWARD)) return {};
  const Tensor q3 = ops::reshape(ops::contiguous(q), Dims{N, L, E}, false);
  const Tensor k3 = ops::reshape(ops::contiguous(k), Dims{N, S, E}, false);
  const Tensor v3 = ops::reshape(ops::contiguous(v), Dims{N, S, Ev}, false);
  Tensor out = ops::empty(Dims{N, L, Ev}, q.dtype(), q.device());
  if (!backend.attention_forward(out, q3, k3, v3, scale, is_causal)) return {};
  Dims shape = q.shape();
  shape.v[nd - 1] = Ev;
  return ops::reshape(out, shape, false);
}

}  // namespace

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
  if (!attn_mask.defined())
    if (Tensor fused = fused_attention(q, k, v, is_causal, scale); fused.defined()) return fused;
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
