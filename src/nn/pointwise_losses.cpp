// The pointwise losses of torch.nn: L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
// BCEWithLogitsLoss and KLDivLoss. forward takes (input, target) of one shape.
//
// Where PyTorch's loss is one native op with its own backward (smooth L1, Huber and both
// binary cross entropies), the forward here is plain ops and one node carries PyTorch's
// backward formula for input and target (named as PyTorch's node), so gradients agree
// with PyTorch's also where the composed ops' would not: at the clamps of BCE's logs, at
// SmoothL1's kink. L1 and KL divergence are compositions in PyTorch too, and here.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/losses.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Sub, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }
Tensor muls(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor adds(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Add, a, s); }
Tensor un(UnaryOp op, const Tensor& a) { return ops::unary(op, a); }
Tensor scalar_like(double v, const Tensor& like) { return ops::full(Dims{}, v, like.dtype(), like.device()); }

// The (input, target) pair every pointwise loss takes: one device, one shape, a floating
// input; the target converted to the input's dtype (through autograd, so that a target
// that requires grad gets its gradient in its own dtype).
struct Pair {
  Tensor input, target;
};
Pair check_pair(const Module& m, const std::vector<Tensor>& in) {
  if (in.size() != 2)
    fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": expected (input, target) but got ", in.size(), " inputs"));
  const Tensor &x = in[0], &t = in[1];
  check_input_device(m, x);
  ops::check_same_device(m.kind(), x, t);
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(m.kind(), ": expected a floating input but got ", dtype_name(x.dtype())));
  if (x.shape() != t.shape())
    fail(DT_ERR_SHAPE_MISMATCH, cat(m.kind(), ": the input has shape ", dims_str(x.shape()),
                                    " but the target has shape ", dims_str(t.shape()), " (they must be equal)"));
  return {x, t.dtype() == x.dtype() ? t : ag::to(t, x.device(), x.dtype(), false)};
}

// The reduction of the elements e; through autograd where e is tracked (L1, KLDiv:
// MeanBackward0 / SumBackward0 last, as PyTorch's), a plain reduction where it is not
// (the native losses, whose own node follows).
Tensor reduce_elements(const Tensor& e, Reduction r) {
  switch (r) {
    case Reduction::None:
      return e;
    case Reduction::Sum:
      return ag::reduce(ReduceOp::Sum, e, nullptr, 0, false);
    case Reduction::Mean:
      break;
  }
  return ag::reduce(ReduceOp::Mean, e, nullptr, 0, false);
}

// The gradient of reduce(elements) for each element, from d element / d operand
// (`local`) and the loss's gradient g (0-d when reduced).
Tensor through_reduction(const Tensor& g, const Tensor& local, Reduction r) {
  Tensor out = mul(local, g);
  return r == Reduction::Mean ? ops::binary_scalar(BinaryOp::Div, out, static_cast<double>(local.numel())) : out;
}

// The binary cross entropies' gradients {input, target} from their local derivatives gx
// and gt (undefined when the target needs none), weighted by w (when defined).
std::vector<Tensor> weighted_grads(const Tensor& g, Tensor gx, Tensor gt, const Tensor& w, Reduction r) {
  if (w.defined()) {
    gx = mul(gx, w);
    if (gt.defined()) gt = mul(gt, w);
  }
  return {through_reduction(g, gx, r), gt.defined() ? through_reduction(g, gt, r) : Tensor()};
}

// Records a native loss's node on `loss`: formula(g) gives the gradients of input and
// target (the target's computed only when it requires grad, else left undefined).
template <typename Formula>
Tensor with_node(Tensor loss, const char* name, const Pair& p, std::initializer_list<const Tensor*> saved, Formula f) {
  if (!ag::should_record({&p.input, &p.target})) return loss;
  ag::record(loss, ag::saving(ag::make_node(name, std::move(f)), saved), {&p.input, &p.target});
  return loss;
}

class PointwiseLoss : public Module {
 public:
  explicit PointwiseLoss(Reduction r) : reduction_(r) {}
  size_t arity() const override { return 2; }

 protected:
  Reduction reduction_;
};

class L1Loss final : public PointwiseLoss {
 public:
  using PointwiseLoss::PointwiseLoss;
  Module* clone() const override { return new L1Loss(*this); }
  const char* kind() const override { return "L1Loss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Pair p = check_pair(*this, in);
    // PyTorch's l1_loss is abs(input - target), then the reduction: AbsBackward0,
    // MeanBackward0 or SumBackward0 last.
    return reduce_elements(ag::unary(UnaryOp::Abs, ag::binary(BinaryOp::Sub, p.input, p.target)), reduction_);
  }
};

// SmoothL1 (Huber: scale 1 and the quadratic part unscaled) in PyTorch's branches.
class SmoothL1Loss final : public PointwiseLoss {
 public:
  SmoothL1Loss(Reduction r, double beta, bool huber) : PointwiseLoss(r), beta_(beta), huber_(huber) {}
  Module* clone() const override { return new SmoothL1Loss(*this); }
  const char* kind() const override { return huber_ ? "HuberLoss" : "SmoothL1Loss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Pair p = check_pair(*this, in);
    const double b = beta_;
    const Tensor d = sub(p.input, p.target), z = un(UnaryOp::Abs, d);
    // SmoothL1: z < b ? 0.5 z^2 / b : z - 0.5 b.  Huber: z < b ? 0.5 z^2 : b (z - 0.5 b).
    Tensor quad = huber_ ? mul(muls(z, 0.5), z) : ops::binary_scalar(BinaryOp::Div, mul(muls(z, 0.5), z), b);
    Tensor lin = huber_ ? muls(adds(z, -0.5 * b), b) : adds(z, -0.5 * b);
    Tensor e = b == 0 && !huber_ ? z : ops::where(ops::binary_scalar(BinaryOp::Lt, z, b), quad, lin);
    const Tensor x = ag::detach(p.input), t = ag::detach(p.target);
    const bool target_grad = ag::requires_grad(p.target);
    const Reduction r = reduction_;
    const bool huber = huber_;
    return with_node(reduce_elements(e, r), huber ? "HuberLossBackward0" : "SmoothL1LossBackward0", p, {&x, &t},
                     [x, t, b, r, huber, target_grad](const Tensor& g) {
                       // PyTorch's backward: d <= -b ? -s : d >= b ? s : d (/ b), s = 1 (SmoothL1) or b
                       // (Huber); so beta 0 gives sign(d), and -1 at d = 0, as PyTorch's kernel.
                       const Tensor d = sub(x, t);
                       const double s = huber ? b : 1.0;
                       Tensor inner = b == 0 ? d : huber ? d : muls(d, 1.0 / b);
                       Tensor local =
                           ops::where(ops::binary_scalar(BinaryOp::Le, d, -b), scalar_like(-s, d),
                                      ops::where(ops::binary_scalar(BinaryOp::Ge, d, b), scalar_like(s, d), inner));
                       Tensor gx = through_reduction(g, local, r);
                       return std::vector<Tensor>{gx, target_grad ? un(UnaryOp::Neg, gx) : Tensor()};
                     });
  }

 private:
  double beta_;
  bool huber_;
};

// Weights a loss module keeps as buffers, broadcast to the input at forward.
class WeightedLoss : public PointwiseLoss {
 public:
  using PointwiseLoss::PointwiseLoss;

 protected:
  void keep(const char* name, const Tensor& w) {
    if (!w.defined()) return;
    if (!is_floating(w.dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat(kind(), ": ", name, " must be a floating tensor, got ", dtype_name(w.dtype())));
    Tensor b = new_parameter(w.shape(), w.dtype(), w.device());
    ops::copy_(b, w);
    buffers_.emplace_back(name, b);
  }
  // The buffer `name` in the input's dtype, or undefined; SHAPE_MISMATCH unless it
  // broadcasts to the input's shape.
  Tensor buffer(const char* name, const Tensor& input) const {
    for (const auto& [n, t] : buffers_) {
      if (n != name) continue;
      bool fits = t.ndim() <= input.ndim();
      for (int64_t i = 1; fits && i <= t.ndim(); ++i) {
        const int64_t have = t.size(t.ndim() - i), want = input.size(input.ndim() - i);
        fits = have == want || have == 1;
      }
      if (!fits)
        fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": ", name, " of shape ", dims_str(t.shape()),
                                        " does not broadcast to the input's shape ", dims_str(input.shape())));
      return ops::to(t, input.device(), input.dtype(), false);
    }
    return Tensor();
  }
};

class BCELoss final : public WeightedLoss {
 public:
  BCELoss(const Tensor& weight, Reduction r) : WeightedLoss(r) { keep("weight", weight); }
  Module* clone() const override { return new BCELoss(*this); }
  const char* kind() const override { return "BCELoss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Pair p = check_pair(*this, in);
    const Tensor w = buffer("weight", p.input);
    check_probabilities(p.input);
    const Tensor &x = p.input, &t = p.target;
    // (t - 1) * max(log(1 - x), -100) - t * max(log(x), -100), times the weight
    const Tensor log_x = ops::binary_scalar(BinaryOp::Maximum, un(UnaryOp::Log, x), -100.0);
    const Tensor log_1mx = ops::binary_scalar(BinaryOp::Maximum, un(UnaryOp::Log1p, un(UnaryOp::Neg, x)), -100.0);
    Tensor e = sub(mul(adds(t, -1.0), log_1mx), mul(t, log_x));
    if (w.defined()) e = mul(e, w);
    const Tensor xs = ag::detach(x), ts = ag::detach(t);
    const bool target_grad = ag::requires_grad(t);
    const Reduction r = reduction_;
    return with_node(reduce_elements(e, r), "BinaryCrossEntropyBackward0", p, {&xs, &ts, &w},
                     [xs, ts, w, r, target_grad](const Tensor& g) {
                       // input: (x - t) / max((1 - x) x, eps); target: -logit(x) = log(1 - x) - log(x).
                       // eps is PyTorch's EPSILON, a float 1e-12 (9.99999996e-13 as a double).
                       const Tensor one_minus = un(UnaryOp::Neg, adds(xs, -1.0));
                       constexpr float kEpsilon = 1e-12f;
                       Tensor gx = ops::binary(BinaryOp::Div, sub(xs, ts),
                                               ops::binary_scalar(BinaryOp::Maximum, mul(one_minus, xs), kEpsilon));
                       Tensor gt;
                       if (target_grad) gt = sub(un(UnaryOp::Log, one_minus), un(UnaryOp::Log, xs));
                       return weighted_grads(g, gx, gt, w, r);
                     });
  }

 private:
  // PyTorch's "all elements of input should be between 0 and 1" (NaN fails too); values
  // are unknown while a graph captures.
  void check_probabilities(const Tensor& x) const {
    if (x.numel() == 0 || capturing(x.device())) return;
    const Tensor outside =
        ops::binary(BinaryOp::Add, ops::binary_scalar(BinaryOp::Lt, x, 0.0), ops::binary_scalar(BinaryOp::Gt, x, 1.0));
    const Tensor bad = ops::reduce(ReduceOp::Sum, outside, nullptr, 0, false);
    const Tensor nan = ops::reduce(ReduceOp::Sum, ops::binary(BinaryOp::Ne, x, x), nullptr, 0, false);
    const Tensor count = ops::to(add(bad, nan), Device{DT_DEVICE_CPU, 0}, DType::Int64, false);
    const int64_t n = *count.data_as<int64_t>();
    if (n > 0)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(kind(), ": all elements of input should be between 0 and 1, but ", n, " of ", x.numel(),
               " are not (probabilities, as sigmoid gives; for logits use "
               "BCEWithLogitsLoss)"));
  }
};

class BCEWithLogitsLoss final : public WeightedLoss {
 public:
  BCEWithLogitsLoss(const Tensor& weight, const Tensor& pos_weight, Reduction r) : WeightedLoss(r) {
    keep("weight", weight);
    keep("pos_weight", pos_weight);
  }
  Module* clone() const override { return new BCEWithLogitsLoss(*this); }
  const char* kind() const override { return "BCEWithLogitsLoss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Pair p = check_pair(*this, in);
    const Tensor w = buffer("weight", p.input), pw = buffer("pos_weight", p.input);
    const Tensor &x = p.input, &t = p.target;
    // PyTorch's stable form, m = max(-x, 0):
    //   (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), lw = (pw - 1) t + 1 (1 without pw)
    const Tensor m = ops::binary_scalar(BinaryOp::Maximum, un(UnaryOp::Neg, x), 0.0);
    const Tensor softplus = add(
        un(UnaryOp::Log, add(un(UnaryOp::Exp, un(UnaryOp::Neg, m)), un(UnaryOp::Exp, sub(un(UnaryOp::Neg, x), m)))), m);
    const Tensor lin = mul(un(UnaryOp::Neg, adds(t, -1.0)), x);
    Tensor e = pw.defined() ? add(lin, mul(adds(mul(adds(pw, -1.0), t), 1.0), softplus)) : add(lin, softplus);
    if (w.defined()) e = mul(e, w);
    const Tensor xs = ag::detach(x), ts = ag::detach(t);
    const bool target_grad = ag::requires_grad(t);
    const Reduction r = reduction_;
    return with_node(reduce_elements(e, r), "BinaryCrossEntropyWithLogitsBackward0", p, {&xs, &ts, &w, &pw},
                     [xs, ts, w, pw, r, target_grad](const Tensor& g) {
                       // input: (pw t + 1 - t) sigmoid(x) - pw t, or sigmoid(x) - t without pw
                       const Tensor sig = un(UnaryOp::Sigmoid, xs);
                       Tensor gx;
                       if (pw.defined()) {
                         const Tensor pt = mul(pw, ts);
                         gx = sub(mul(sub(adds(pt, 1.0), ts), sig), pt);
                       } else {
                         gx = sub(sig, ts);
                       }
                       // target: log_sigmoid(-x) - pw log_sigmoid(x), or -x without pw
                       Tensor gt;
                       if (target_grad)
                         gt = pw.defined() ? sub(log_sigmoid(un(UnaryOp::Neg, xs)), mul(log_sigmoid(xs), pw))
                                           : un(UnaryOp::Neg, xs);
                       return weighted_grads(g, gx, gt, w, r);
                     });
  }

 private:
  // log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|))), finite for every finite x.
  static Tensor log_sigmoid(const Tensor& x) {
    const Tensor m = ops::binary_scalar(BinaryOp::Maximum, un(UnaryOp::Neg, x), 0.0);
    return un(UnaryOp::Neg, add(m, un(UnaryOp::Log1p, un(UnaryOp::Exp, un(UnaryOp::Neg, un(UnaryOp::Abs, x))))));
  }
};

class KLDivLoss final : public PointwiseLoss {
 public:
  KLDivLoss(Reduction r, bool batchmean, bool log_target)
      : PointwiseLoss(r), batchmean_(batchmean), log_target_(log_target) {}
  Module* clone() const override { return new KLDivLoss(*this); }
  const char* kind() const override { return "KLDivLoss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Pair p = check_pair(*this, in);
    const Tensor &x = p.input, &t = p.target;
    // PyTorch's composition: exp(t) (t - x) for log targets, else xlogy(t, t) - t x,
    // where xlogy(t, t) is t log t with 0 at t = 0 (the product masked to 0 there).
    Tensor e;
    if (log_target_) {
      e = ag::binary(BinaryOp::Mul, ag::unary(UnaryOp::Exp, t), ag::binary(BinaryOp::Sub, t, x));
    } else {
      Tensor tlogt = ag::masked_fill(ag::binary(BinaryOp::Mul, t, ag::unary(UnaryOp::Log, t)),
                                     ops::binary_scalar(BinaryOp::Eq, ag::detach(t), 0.0), 0.0);
      e = ag::binary(BinaryOp::Sub, tlogt, ag::binary(BinaryOp::Mul, t, x));
    }
    if (batchmean_) {
      Tensor sum = ag::reduce(ReduceOp::Sum, e, nullptr, 0, false);
      if (x.ndim() == 0) return sum;
      return ag::named_result(ag::binary_scalar(BinaryOp::Div, sum, static_cast<double>(x.size(0))), "DivBackward0");
    }
    return reduce_elements(e, reduction_);
  }

 private:
  bool batchmean_, log_target_;
};

}  // namespace

Module* new_l1(Reduction r) {
  check_reduction(r, "L1Loss");
  return new L1Loss(r);
}

Module* new_smooth_l1(Reduction r, double beta) {
  check_reduction(r, "SmoothL1Loss");
  if (!(beta >= 0) || !std::isfinite(beta))
    fail(DT_ERR_INVALID_ARGUMENT, cat("SmoothL1Loss: beta must be finite and >= 0, got ", beta));
  return new SmoothL1Loss(r, beta, false);
}

Module* new_huber(Reduction r, double delta) {
  check_reduction(r, "HuberLoss");
  if (!(delta > 0) || !std::isfinite(delta))
    fail(DT_ERR_INVALID_ARGUMENT, cat("HuberLoss: delta must be finite and > 0, got ", delta));
  return new SmoothL1Loss(r, delta, true);
}

Module* new_bce(const Tensor& weight, Reduction r) {
  check_reduction(r, "BCELoss");
  return new BCELoss(weight, r);
}

Module* new_bce_with_logits(const Tensor& weight, const Tensor& pos_weight, Reduction r) {
  check_reduction(r, "BCEWithLogitsLoss");
  return new BCEWithLogitsLoss(weight, pos_weight, r);
}

Module* new_kl_div(Reduction r, bool batchmean, bool log_target) {
  check_reduction(r, "KLDivLoss");
  return new KLDivLoss(r, batchmean, log_target);
}

}  // namespace dt::nn
