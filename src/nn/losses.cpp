// The losses are compositions of differentiable ops (log_softmax, a gathered selection of
// the target classes, weighted sums), so their gradients come from autograd and run on
// the input's device like any other op; cross entropy without class weights or label
// smoothing is one fused op each way where the backend has them (fused_cross_entropy).
#include "nn/losses.h"

#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

void check_two(const Module& m, const std::vector<Tensor>& in) {
  if (in.size() != 2) fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": expected (input, target) but got ", in.size(), " inputs"));
}

Tensor reduce_all(ReduceOp op, const Tensor& t) { return ag::reduce(op, t, nullptr, 0, false); }

// Checks (input [N, C] or [C], target [N] or []) and every class index, which must lie
// in [0, C) unless it is ignore_index. Returns C.
int64_t check_classes(const Module& m, const Tensor& input, const Tensor& target, int64_t ignore_index) {
  check_input_device(m, input);
  ops::check_same_device(m.kind(), input, target);
  if (!is_floating(input.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(m.kind(), ": expected a floating input but got ", dtype_name(input.dtype())));
  if (target.dtype() != DType::Int64 && target.dtype() != DType::Int32 && target.dtype() != DType::UInt8 &&
      target.dtype() != DType::Int16 && target.dtype() != DType::Int8)
    fail(DT_ERR_DTYPE_MISMATCH, cat(m.kind(), ": expected class indices of an integer dtype as the target but got ",
                                    dtype_name(target.dtype())));
  // [C] with a 0-d target, [N, C] with [N], or PyTorch's K-dimensional [N, C, d1, ...]
  // with [N, d1, ...].
  bool fits = input.ndim() >= 1 && target.ndim() == input.ndim() - 1;
  for (int64_t d = 0; fits && d < target.ndim(); ++d) fits = target.size(d) == input.size(d == 0 ? 0 : d + 1);
  if (!fits)
    fail(DT_ERR_SHAPE_MISMATCH, cat(m.kind(), ": expected input [N, C] with target [N] (or input [C] with a 0-d target, "
                                              "or input [N, C, d1, ...] with target [N, d1, ...]), got input ",
                                    dims_str(input.shape()), " and target ", dims_str(target.shape())));
  const int64_t classes = input.size(input.ndim() == 1 ? 0 : 1);
  // While a graph captures, the targets have no values yet: the gather that reads them
  // checks them at replay (core/graph.h).
  if (capturing(target.device())) return classes;
  Tensor host = ops::to(target, Device{DT_DEVICE_CPU, 0}, DType::Int64, false);
  host = ops::contiguous(host);
  const int64_t* p = host.data_as<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i)
    if (p[i] != ignore_index && (p[i] < 0 || p[i] >= classes))
      fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": target ", p[i], " is out of bounds for ", classes, " classes"));
  return classes;
}

// Negative log-likelihood of log-probabilities logp [N, C] at class indices target [N],
// weighted; *sample_weight gets each sample's weight (0 where ignored). Each sample's
// log-probability is gathered at its class (backward: a scatter of N values), never
// multiplied by a one-hot [N, C] mask.
Tensor nll(const Tensor& logp, const Tensor& target, const Tensor& weight, int64_t ignore_index, Tensor* sample_weight) {
  const Device d = logp.device();
  const DType dt = logp.dtype();
  Tensor lp = logp.ndim() == 1 ? ag::unsqueeze(logp, 0) : logp;
  Tensor tg = ops::reshape(ops::to(target, d, DType::Int64, false), Dims{-1}, false);
  Tensor keep = ops::binary_scalar(BinaryOp::Ne, tg, static_cast<double>(ignore_index));  // bool [N]
  // Ignored samples gather class 0 (a valid index) and weigh 0.
  Tensor safe = ops::where(keep, tg, ops::full(Dims{}, 0.0, DType::Int64, d));
  Tensor valid = ops::to(keep, d, dt, false);
  *sample_weight = weight.defined() ? ops::binary(BinaryOp::Mul, ops::index_select(ops::to(weight, d, dt, false), 0, safe), valid)
                                    : valid;
  Tensor picked = ag::reshape(ag::gather(lp, 1, ops::unsqueeze(safe, 1)), Dims{-1}, false);  // [N]
  // An ignored sample's gradient is exactly 0, as PyTorch's: a product with its weight 0
  // would pass on NaN where the mean divides by a total weight of 0 (every sample
  // ignored), or where its log-probability is infinite.
  picked = ag::masked_fill(picked, ops::binary_scalar(BinaryOp::Eq, tg, static_cast<double>(ignore_index)), 0.0);
  Tensor loss = ag::unary(UnaryOp::Neg, ag::binary(BinaryOp::Mul, picked, *sample_weight));
  return logp.ndim() == 1 ? ag::reshape(loss, Dims{}, false) : loss;
}

// Cross entropy of logits x [N, C] at int64 class indices in one op each way (the
// backend's KernelOp::CrossEntropy and its backward; ops::cross_entropy_fusable says
// when), for the loss without class weights or label smoothing: about twenty calls fewer
// per training step than the composed ops below.
Tensor fused_cross_entropy(const Tensor& x, const Tensor& target, int64_t ignore_index, Reduction r) {
  Tensor lse, count;
  const int reduction = static_cast<int>(r);
  Tensor loss = ops::cross_entropy(x, target, ignore_index, reduction, &lse, &count);
  if (!ag::should_record({&x})) return loss;
  Tensor xs = ag::detach(x), ts = target;
  ag::record(loss, ag::saving(ag::make_node("NllLossBackward0", [xs, ts, lse, count, ignore_index, reduction](const Tensor& g) {
               return std::vector<Tensor>{ops::cross_entropy_backward(g, xs, lse, count, ts, ignore_index, reduction)};
             }), {&xs, &ts}),
             {&x});
  return loss;
}

// PyTorch's K-dimensional loss (input [N, C, d1, ...], target [N, d1, ...]) is the 2-d
// one over the N x d1 x ... positions, the class dim moved last; reduction none gives the
// target's shape back. Inputs of 1 or 2 dims pass unchanged.
struct Positions {
  Tensor input, target;
  bool k_dims = false;
  Dims shape;  // the target's, for reduction none
};
Positions as_rows(const Tensor& input, const Tensor& target) {
  if (input.ndim() < 3) return {input, target, false, {}};
  Dims perm{0};
  for (int64_t d = 2; d < input.ndim(); ++d) perm.push(d);
  perm.push(1);
  return {ag::reshape(ag::permute(input, perm), Dims{-1, input.size(1)}, false), ops::reshape(target, Dims{-1}, false),
          true, target.shape()};
}
// The result in the target's shape under reduction none, named as PyTorch names the last
// node of its K-dimensional loss: nll_loss2d takes 4-d inputs whole, others are viewed as
// 4-d and the unreduced result viewed back.
Tensor k_dims_result(const Tensor& loss, const Positions& p, Reduction r, int64_t input_ndim, bool name_it) {
  if (!p.k_dims) return loss;
  Tensor out = r == Reduction::None ? ag::reshape(loss, p.shape, false) : loss;
  if (!name_it) return out;
  return ag::named_result(out, r != Reduction::None || input_ndim == 4 ? "NllLoss2DBackward0" : "ViewBackward0");
}

Tensor reduce_nll(const Tensor& per_sample, const Tensor& sample_weight, Reduction r) {
  switch (r) {
    case Reduction::None: return per_sample;
    case Reduction::Sum: return reduce_all(ReduceOp::Sum, per_sample);
    case Reduction::Mean: break;
  }
  return ag::binary(BinaryOp::Div, reduce_all(ReduceOp::Sum, per_sample), ops::reduce(ReduceOp::Sum, sample_weight, nullptr, 0, false));
}

class NLLLoss : public Module {
 public:
  Module* clone() const override { return new NLLLoss(*this); }
  NLLLoss(const Tensor& weight, Reduction r, int64_t ignore_index) : reduction_(r), ignore_index_(ignore_index) {
    if (weight.defined()) {
      Tensor w = new_parameter(weight.shape(), weight.dtype(), weight.device());
      ops::copy_(w, weight);
      buffers_.emplace_back("weight", w);
    }
  }
  const char* kind() const override { return "NLLLoss"; }
  size_t arity() const override { return 2; }
  Tensor forward(const std::vector<Tensor>& in) override {
    check_two(*this, in);
    check_weight(check_classes(*this, in[0], in[1], ignore_index_));
    const Positions p = as_rows(in[0], in[1]);
    Tensor sw;
    Tensor per_sample = nll(p.input, p.target, weight(), ignore_index_, &sw);
    if (p.k_dims) return k_dims_result(reduce_nll(per_sample, sw, reduction_), p, reduction_, in[0].ndim(), true);
    return ag::named_result(reduce_nll(per_sample, sw, reduction_), "NllLossBackward0");
  }

 protected:
  Tensor weight() const { return buffers_.empty() ? Tensor() : buffers_[0].second; }
  void check_weight(int64_t classes) const {
    Tensor w = weight();
    if (w.defined() && (w.ndim() != 1 || w.size(0) != classes))
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": the class weight has shape ", dims_str(w.shape()), " but the input has ",
                                      classes, " classes"));
  }
  Reduction reduction_;
  int64_t ignore_index_;
};

class CrossEntropyLoss final : public NLLLoss {
 public:
  Module* clone() const override { return new CrossEntropyLoss(*this); }
  CrossEntropyLoss(const Tensor& weight, Reduction r, int64_t ignore_index, double smoothing)
      : NLLLoss(weight, r, ignore_index), smoothing_(smoothing) {}
  const char* kind() const override { return "CrossEntropyLoss"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    check_two(*this, in);
    if (is_floating(in[1].dtype())) return with_probabilities(in[0], in[1]);
    const int64_t classes = check_classes(*this, in[0], in[1], ignore_index_);
    check_weight(classes);
    const Positions p = as_rows(in[0], in[1]);
    const int64_t ndim = in[0].ndim();
    if (smoothing_ == 0 && !weight().defined()) {
      const Tensor target = ops::to(p.target, p.input.device(), DType::Int64, false);
      if (ops::cross_entropy_fusable(p.input, target))
        return k_dims_result(fused_cross_entropy(p.input, target, ignore_index_, reduction_), p, reduction_, ndim, true);
    }
    const int64_t class_dim = p.input.ndim() - 1;
    Tensor logp = ag::softmax(p.input, class_dim, true);
    Tensor sw;
    Tensor loss = reduce_nll(nll(logp, p.target, weight(), ignore_index_, &sw), sw, reduction_);
    // PyTorch's cross entropy is nll_loss(log_softmax); with label smoothing its last op is an add.
    if (smoothing_ == 0)
      return p.k_dims ? k_dims_result(loss, p, reduction_, ndim, true) : ag::named_result(loss, "NllLossBackward0");
    // PyTorch's label smoothing: (1 - e) * nll + e / C * smooth, where smooth is the
    // (weighted) sum of -logp over the classes, zero for ignored samples.
    const Device d = logp.device();
    Tensor weighted = weight().defined() ? ag::binary(BinaryOp::Mul, logp, ops::to(weight(), d, logp.dtype(), false)) : logp;
    int64_t cd = class_dim;
    Tensor smooth = ag::unary(UnaryOp::Neg, ag::reduce(ReduceOp::Sum, weighted, &cd, 1, false));
    // Zero for ignored samples, their gradient too (see nll).
    Tensor ignored = ops::binary_scalar(BinaryOp::Eq, ops::reshape(ops::to(p.target, d, DType::Int64, false), Dims{-1}, false),
                                        static_cast<double>(ignore_index_));
    smooth = ag::masked_fill(smooth, p.target.ndim() == 0 ? ops::reshape(ignored, Dims{}, false) : ignored, 0.0);
    Tensor reduced;
    switch (reduction_) {
      case Reduction::None: reduced = smooth; break;
      case Reduction::Sum: reduced = reduce_all(ReduceOp::Sum, smooth); break;
      case Reduction::Mean:  // over the weights of the samples kept (their count when unweighted)
        reduced = ag::binary(BinaryOp::Div, reduce_all(ReduceOp::Sum, smooth), ops::reduce(ReduceOp::Sum, sw, nullptr, 0, false));
        break;
    }
    // Each term in the target's shape first, so that the add stays the last op.
    return ag::binary(BinaryOp::Add, ag::binary_scalar(BinaryOp::Mul, k_dims_result(loss, p, reduction_, ndim, false), 1.0 - smoothing_),
                      ag::binary_scalar(BinaryOp::Mul, k_dims_result(reduced, p, reduction_, ndim, false),
                                        smoothing_ / static_cast<double>(classes)));
  }

 private:
  // PyTorch's soft targets: target holds class probabilities in the input's shape; the
  // loss of a position is -sum_c weight_c * target_c * log_softmax(input)_c, and mean
  // divides by the number of positions (input.numel() / C), never by the weights.
  Tensor with_probabilities(const Tensor& input, const Tensor& target) {
    check_input_device(*this, input);
    ops::check_same_device(kind(), input, target);
    if (!is_floating(input.dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat(kind(), ": expected a floating input but got ", dtype_name(input.dtype())));
    if (input.ndim() == 0 || input.shape() != target.shape())
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": a floating target holds class probabilities and must have the input's "
                                              "shape [N, C, ...] (or [C]), but the input is ",
                                      dims_str(input.shape()), " and the target ", dims_str(target.shape()),
                                      " (class indices need an integer target)"));
    const int64_t class_dim = input.ndim() == 1 ? 0 : 1, classes = input.size(class_dim);
    check_weight(classes);
    // Smoothed in the target's own dtype, then converted, as PyTorch's promotion does.
    Tensor t = target;
    if (smoothing_ > 0)
      t = ag::binary_scalar(BinaryOp::Add, ag::binary_scalar(BinaryOp::Mul, t, 1.0 - smoothing_),
                            smoothing_ / static_cast<double>(classes));
    t = ag::to(t, input.device(), input.dtype(), false);
    Tensor terms = ag::binary(BinaryOp::Mul, ag::softmax(input, class_dim, true), t);
    if (weight().defined()) {
      Dims shape;  // the weight along the class dim, broadcast over the rest
      for (int64_t d = 0; d < input.ndim(); ++d) shape.push(d == class_dim ? classes : 1);
      terms = ag::binary(BinaryOp::Mul, terms,
                         ops::reshape(ops::to(weight(), input.device(), input.dtype(), false), shape, false));
    }
    switch (reduction_) {
      case Reduction::None: return ag::unary(UnaryOp::Neg, ag::reduce(ReduceOp::Sum, terms, &class_dim, 1, false));
      case Reduction::Sum: return ag::unary(UnaryOp::Neg, reduce_all(ReduceOp::Sum, terms));
      case Reduction::Mean: break;
    }
    int64_t positions = 1;
    for (int64_t d = 0; d < input.ndim(); ++d) positions *= d == class_dim ? 1 : input.size(d);
    // 0 / 0 = NaN for an empty batch, as PyTorch; named as ATen's division by a Scalar.
    return ag::named_result(ag::binary_scalar(BinaryOp::Div, ag::unary(UnaryOp::Neg, reduce_all(ReduceOp::Sum, terms)),
                                              static_cast<double>(positions)),
                            "DivBackward1");
  }

  double smoothing_;
};

class MSELoss final : public Module {
 public:
  Module* clone() const override { return new MSELoss(*this); }
  explicit MSELoss(Reduction r) : reduction_(r) {}
  const char* kind() const override { return "MSELoss"; }
  size_t arity() const override { return 2; }
  Tensor forward(const std::vector<Tensor>& in) override {
    check_two(*this, in);
    ops::check_same_device("MSELoss", in[0], in[1]);
    if (in[0].shape() != in[1].shape())
      fail(DT_ERR_SHAPE_MISMATCH, cat("MSELoss: the input has shape ", dims_str(in[0].shape()), " but the target has shape ",
                                      dims_str(in[1].shape())));
    Tensor diff = ag::binary(BinaryOp::Sub, in[0], in[1]);
    Tensor sq = ag::binary(BinaryOp::Mul, diff, diff);
    Tensor loss;
    switch (reduction_) {
      case Reduction::None: loss = sq; break;
      case Reduction::Sum: loss = reduce_all(ReduceOp::Sum, sq); break;
      case Reduction::Mean: loss = reduce_all(ReduceOp::Mean, sq); break;
    }
    return ag::named_result(loss, "MseLossBackward0");
  }

 private:
  Reduction reduction_;
};

void check_common(Reduction r, const Tensor& weight, const char* kind) {
  check_reduction(r, kind);
  if (weight.defined() && (!is_floating(weight.dtype()) || weight.ndim() != 1))
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": the class weight must be a 1-d floating tensor, got ",
                                      dtype_name(weight.dtype()), " of shape ", dims_str(weight.shape())));
}

}  // namespace

void check_reduction(Reduction r, const char* kind) {
  if (r != Reduction::None && r != Reduction::Mean && r != Reduction::Sum)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": unknown reduction ", static_cast<int>(r), " (0 none, 1 mean, 2 sum)"));
}

Module* new_cross_entropy(const Tensor& weight, Reduction r, int64_t ignore_index, double label_smoothing) {
  check_common(r, weight, "CrossEntropyLoss");
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    fail(DT_ERR_INVALID_ARGUMENT, cat("CrossEntropyLoss: label_smoothing must be in [0, 1], got ", label_smoothing));
  return new CrossEntropyLoss(weight, r, ignore_index, label_smoothing);
}

Module* new_nll(const Tensor& weight, Reduction r, int64_t ignore_index) {
  check_common(r, weight, "NLLLoss");
  return new NLLLoss(weight, r, ignore_index);
}

Module* new_mse(Reduction r) {
  check_common(r, Tensor(), "MSELoss");
  return new MSELoss(r);
}

}  // namespace dt::nn
