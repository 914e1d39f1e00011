// Differentiable normalisation, as torch.nn.functional's batch_norm, layer_norm and
// group_norm. All three share one core: the input, viewed in a "statistics" shape, is
// standardised over some of its dims (xhat = (x - mean) / sqrt(var + eps), the biased
// variance), then scaled and shifted per channel. One autograd node covers input,
// weight and bias with the closed-form gradient
//   dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)),  gxhat = g * weight,
// named as PyTorch's fused op (NativeBatchNormBackward0, ...). BatchNorm in eval mode
// uses fixed statistics (its running buffers), folded into one scale and shift per
// channel: dx = g * scale.
#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

struct NormSpec {
  const char* name;       // the grad_fn's name
  Dims stats_shape;       // x viewed so
  std::vector<int64_t> over;  // the dims of that view the statistics run over
  Dims affine_shape;      // weight and bias viewed so, broadcast against x's shape
};

Tensor mean_over(const Tensor& t, const std::vector<int64_t>& over) {
  return ops::reduce(ReduceOp::Mean, t, over.data(), over.size(), true);
}

// xhat from batch statistics (mean and the biased var out, in the view, kept dims), scaled
// and shifted.
Tensor normalize(const Tensor& input, const NormSpec& s, double eps, const Tensor& weight, const Tensor& bias,
                 Tensor* mean_out, Tensor* var_out) {
  const Tensor x = ops::reshape(input, s.stats_shape, false);
  const Tensor mean = mean_over(x, s.over);
  const Tensor centered = ops::binary(BinaryOp::Sub, x, mean);
  const Tensor var = mean_over(ops::binary(BinaryOp::Mul, centered, centered), s.over);
  const Tensor rstd = ops::unary(UnaryOp::Rsqrt, ops::binary_scalar(BinaryOp::Add, var, eps));
  if (var_out) *var_out = var;
  if (mean_out) *mean_out = mean;
  const Tensor xhat = ops::reshape(ops::binary(BinaryOp::Mul, centered, rstd), input.shape(), false);
  const Tensor w = weight.defined() ? ops::reshape(weight, s.affine_shape, false) : Tensor();
  const Tensor b = bias.defined() ? ops::reshape(bias, s.affine_shape, false) : Tensor();
  Tensor out = w.defined() ? ops::binary(BinaryOp::Mul, xhat, w) : xhat;
  if (b.defined()) out = ops::binary(BinaryOp::Add, out, b);
  if (!should_record({&input, &weight, &bias})) return out;
  const bool need_x = requires_grad(input), need_w = weight.defined() && requires_grad(weight);
  const bool need_b = bias.defined() && requires_grad(bias);
  const Dims in_shape = input.shape(), w_shape = weight.defined() ? weight.shape() : Dims{};
  const Dims b_shape = bias.defined() ? bias.shape() : Dims{};
  const Tensor ws = w.defined() ? detach(w) : Tensor();
  // Detached: without weight and bias, out IS xhat, and a node holding its own output
  // would keep the graph alive forever (a reference cycle).
  const Tensor saved_xhat = detach(xhat);
  record(out, saving(make_node(s.name, [=](const Tensor& g) {
           Tensor gx, gw, gb;
           if (need_w)
             gw = ops::reshape(sum_to(ops::binary(BinaryOp::Mul, g, saved_xhat), s.affine_shape), w_shape, false);
           if (need_b) gb = ops::reshape(sum_to(g, s.affine_shape), b_shape, false);
           if (need_x) {
             const Tensor gxhat = ws.defined() ? ops::binary(BinaryOp::Mul, g, ws) : g;
             const Tensor gv = ops::reshape(gxhat, s.stats_shape, false);
             const Tensor xv = ops::reshape(saved_xhat, s.stats_shape, false);
             Tensor inner = ops::binary(BinaryOp::Sub, gv, mean_over(gv, s.over));
             const Tensor proj = mean_over(ops::binary(BinaryOp::Mul, gv, xv), s.over);
             inner = ops::binary(BinaryOp::Sub, inner, ops::binary(BinaryOp::Mul, xv, proj));
             gx = ops::reshape(ops::binary(BinaryOp::Mul, inner, rstd), in_shape, false);
           }
           return G{gx, gw, gb};
         }), {&ws}),
         {&input, &weight, &bias});
  return out;
}

// The per-channel scale and shift of batch norm with fixed statistics: scale = weight /
// sqrt(var + eps), shift = bias - mean * scale (shift only when asked).
struct Folded {
  Tensor rstd, scale, shift;
};
Folded fold(const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias, double eps,
            bool with_shift) {
  Folded f;
  f.rstd = ops::unary(UnaryOp::Rsqrt, ops::binary_scalar(BinaryOp::Add, var, eps));
  f.scale = weight.defined() ? ops::binary(BinaryOp::Mul, weight, f.rstd) : f.rstd;
  if (!with_shift) return f;
  f.shift = ops::unary(UnaryOp::Neg, ops::binary(BinaryOp::Mul, mean, f.scale));
  if (bias.defined()) f.shift = ops::binary(BinaryOp::Add, f.shift, bias);
  return f;
}

// Batch norm with fixed statistics (eval mode): y = x * scale + shift per channel. One
// kernel where the backend has it (ops::batch_norm_eval, same rounding), else the scale
// and shift folded on the [C] vectors first, then two passes over x. The backward folds
// the scale again from what it saved (only training through an eval-mode layer pays).
Tensor batch_norm_eval(const Tensor& x, const NormSpec& s, const Tensor& mean, const Tensor& var, const Tensor& weight,
                       const Tensor& bias, double eps) {
  Tensor out;
  if (ops::batch_norm_eval_fusable(x, mean, var, weight, bias)) {
    out = ops::batch_norm_eval(x, mean, var, weight, bias, eps);
  } else {
    const Folded f = fold(mean, var, weight, bias, eps, true);
    out = ops::binary(BinaryOp::Add, ops::binary(BinaryOp::Mul, x, ops::reshape(f.scale, s.affine_shape, false)),
                      ops::reshape(f.shift, s.affine_shape, false));
  }
  if (!should_record({&x, &weight, &bias})) return out;
  const bool need_x = requires_grad(x), need_w = weight.defined() && requires_grad(weight);
  const bool need_b = bias.defined() && requires_grad(bias);
  const Tensor xs = need_w ? detach(x) : Tensor();
  const Tensor ws = weight.defined() ? detach(weight) : Tensor(), ms = detach(mean), vs = detach(var);
  const Dims c{x.size(1)};
  const Dims affine = s.affine_shape;
  record(out, saving(make_node(s.name, [=](const Tensor& g) {
           Tensor gx, gw, gb;
           const Folded f = fold(ms, vs, ws, Tensor(), eps, false);
           if (need_x) gx = ops::binary(BinaryOp::Mul, g, ops::reshape(f.scale, affine, false));
           if (need_w) {
             const Tensor xhat = ops::binary(BinaryOp::Mul,
                                             ops::binary(BinaryOp::Sub, xs, ops::reshape(ms, affine, false)),
                                             ops::reshape(f.rstd, affine, false));
             gw = ops::reshape(sum_to(ops::binary(BinaryOp::Mul, g, xhat), affine), c, false);
           }
           if (need_b) gb = ops::reshape(sum_to(g, affine), c, false);
           return G{gx, gw, gb};
         }), {&xs, &ms, &vs, &ws}),
         {&x, &weight, &bias});
  return out;
}

void check_floating(const char* op, const Tensor& x) {
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a floating input, got ", dtype_name(x.dtype())));
}

// An optional per-channel tensor: defined, 1-d of `size` elements, x's dtype and device.
void check_vector(const char* op, const char* what, const Tensor& t, const Dims& shape, const Tensor& x) {
  if (!t.defined()) return;
  if (t.shape() != shape)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected ", what, " of shape ", dims_str(shape), " for an input of shape ",
                                    dims_str(x.shape()), ", but got ", dims_str(t.shape())));
  if (t.dtype() != x.dtype())
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": ", what, " is ", dtype_name(t.dtype()), " but the input is ",
                                    dtype_name(x.dtype()), " (they must match)"));
  ops::check_same_device(op, x, t);
}

// [1, C, 1, ...] for an input of x's rank.
Dims channel_shape(const Tensor& x) {
  Dims s;
  for (int64_t d = 0; d < x.ndim(); ++d) s.push(d == 1 ? x.size(1) : 1);
  return s;
}

// PyTorch's _verify_batch_size, for training batch norm (groups 0: each channel its own
// statistic) and every group norm (groups > 0): refuses an input whose statistics would
// each be over exactly one value. An empty input passes (its output is empty).
void check_more_than_one_value(const char* op, const Tensor& x, int64_t groups) {
  bool one = groups == 0 || x.size(1) == groups;  // a group norm's group of one channel
  for (int64_t d = 0; d < x.ndim() && one; ++d)
    if (d != 1) one = x.size(d) == 1;
  if (one)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected more than 1 value per ", groups > 0 ? "group" : "channel",
                                    groups > 0 ? "" : " when training", ", got input size ", dims_str(x.shape()),
                                    groups > 0 ? cat(" with ", groups, " groups") : std::string()));
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  check_floating(op, x);
  if (x.ndim() < 2)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected an input of at least 2 dims [N, C, ...], but got input of size ",
                                    dims_str(x.shape())));
  const int64_t C = x.size(1);
  const Dims c{C};
  check_vector(op, "weight", weight, c, x);
  check_vector(op, "bias", bias, c, x);
  check_vector(op, "running_mean", running_mean, c, x);
  check_vector(op, "running_var", running_var, c, x);
  if (running_mean.defined() != running_var.defined())
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": running_mean and running_var must both be given or both be NULL"));
  if (!training && !running_mean.defined())
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": eval mode (training = 0) needs running_mean and running_var"));
  if (!(eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": eps must be positive, got ", eps));
  NormSpec s{"NativeBatchNormBackward0", x.shape(), {}, channel_shape(x)};
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != 1) s.over.push_back(d);
  if (!training) return batch_norm_eval(x, s, running_mean, running_var, weight, bias, eps);
  check_more_than_one_value(op, x, 0);
  // An empty input normalises to an empty output and leaves the running statistics as
  // they are, as PyTorch's (which only refuses exactly one value per channel).
  if (x.numel() == 0) return binary_scalar(BinaryOp::Mul, x, 1.0);
  const int64_t per_channel = x.numel() / C;
  Tensor mean, var;
  Tensor out = normalize(x, s, eps, weight, bias, &mean, &var);
  if (running_mean.defined()) {
    // PyTorch's update: running = (1 - momentum) * running + momentum * batch, with the
    // unbiased variance; outside autograd, in place.
    const double unbias = static_cast<double>(per_channel) / static_cast<double>(per_channel - 1);
    Tensor batch_mean = ops::reshape(mean, c, false), batch_var = ops::reshape(var, c, false);
    ops::binary_scalar_(BinaryOp::Mul, running_mean, 1.0 - momentum);
    ops::binary_(BinaryOp::Add, running_mean, ops::binary_scalar(BinaryOp::Mul, batch_mean, momentum));
    ops::binary_scalar_(BinaryOp::Mul, running_var, 1.0 - momentum);
    ops::binary_(BinaryOp::Add, running_var, ops::binary_scalar(BinaryOp::Mul, batch_var, momentum * unbias));
  }
  return out;
}

Tensor layer_norm(const Tensor& x, const Dims& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  check_floating(op, x);
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool fits = k >= 1 && k <= x.ndim();
  for (int64_t i = 0; fits && i < k; ++i) fits = x.size(x.ndim() - k + i) == normalized_shape[static_cast<int>(i)];
  if (!fits)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": normalized_shape ", dims_str(normalized_shape),
                                    " must be the last dims of the input, but got input of size ", dims_str(x.shape())));
  check_vector(op, "weight", weight, normalized_shape, x);
  check_vector(op, "bias", bias, normalized_shape, x);
  if (!(eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": eps must be positive, got ", eps));
  NormSpec s{"NativeLayerNormBackward0", x.shape(), {}, normalized_shape};
  for (int64_t d = x.ndim() - k; d < x.ndim(); ++d) s.over.push_back(d);
  return normalize(x, s, eps, weight, bias, nullptr, nullptr);
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "group_norm";
  check_floating(op, x);
  if (x.ndim() < 2)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected an input of at least 2 dims [N, C, ...], but got input of size ",
                                    dims_str(x.shape())));
  const int64_t N = x.size(0), C = x.size(1);
  if (groups <= 0 || C % groups != 0)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected the number of channels (", C, ") of input of size ",
                                    dims_str(x.shape()), " to be divisible by num_groups (", groups, ")"));
  check_vector(op, "weight", weight, Dims{C}, x);
  check_vector(op, "bias", bias, Dims{C}, x);
  if (!(eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": eps must be positive, got ", eps));
  // No channel passes the divisibility check for any num_groups, even 2^62: the output is
  // as empty as the input, and one group keeps its statistics from being N x 2^62
  // values. Otherwise groups <= C, so N * groups <= numel fits when there are elements.
  check_more_than_one_value(op, x, groups);
  const int64_t g = C == 0 ? 1 : groups;
  const int64_t rest = x.numel() > 0 ? x.numel() / (N * g) : 0;
  NormSpec s{"NativeGroupNormBackward0", Dims{N, g, rest}, {2}, channel_shape(x)};
  return normalize(x, s, eps, weight, bias, nullptr, nullptr);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  const char* op = "embedding";
  if (weight.ndim() != 2)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected a 2-d weight [num_embeddings, embedding_dim], but got weight of size ",
                                    dims_str(weight.shape())));
  if (indices.dtype() != DType::Int64 && indices.dtype() != DType::Int32)
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected indices of dtype int64 or int32, but got ", dtype_name(indices.dtype()),
                                    " (indices of size ", dims_str(indices.shape()), ")"));
  ops::check_same_device(op, weight, indices);
  const int64_t num = weight.size(0), dim = weight.size(1);
  if (padding_idx != kNoPaddingIdx) {
    if (padding_idx < -num || padding_idx >= num)
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": padding_idx ", padding_idx, " is outside [-", num, ", ", num, ")"));
    if (padding_idx < 0) padding_idx += num;  // counted from the end, as F.embedding's
  }
  const Tensor flat = ops::checked_index(op, ops::reshape(indices, Dims{indices.numel()}, false), num, false);
  if (indices.ndim() >= kMaxDims)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": indices of size ", dims_str(indices.shape()), " have too many dims (the result ",
                                    "adds one; at most ", kMaxDims, ")"));
  Dims out_shape = indices.shape();
  out_shape.push(dim);
  Tensor out = ops::reshape(ops::index_select(weight, 0, flat), out_shape, false);
  if (!should_record({&weight})) return out;
  const Dims w_shape = weight.shape();
  record(out, saving(make_node("EmbeddingBackward0", [=](const Tensor& g) {
           Tensor rows = ops::reshape(g, Dims{flat.numel(), dim}, false);
           if (padding_idx != kNoPaddingIdx) {  // the padding row gets no gradient
             Tensor keep = ops::binary_scalar(BinaryOp::Ne, flat, static_cast<double>(padding_idx));
             rows = ops::binary(BinaryOp::Mul, rows, ops::to(ops::unsqueeze(keep, 1), rows.device(), rows.dtype(), false));
           }
           Tensor gw = ops::full(w_shape, 0.0, g.dtype(), g.device());
           ops::index_add_(gw, 0, flat, rows);
           return G{gw};
         }), {&flat}),
         {&weight});
  return out;
}

}  // namespace dt::ag
