#include "nn/layers.h"

#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::nn {

void init_uniform(const Tensor& t, double bound) {
  Tensor u = ops::random(t.shape(), RandomDist::Uniform, t.dtype(), t.device(), "init");
  Tensor scaled = ops::binary_scalar(BinaryOp::Sub, ops::binary_scalar(BinaryOp::Mul, u, 2.0 * bound), bound);
  ops::copy_(t, scaled);
}

Tensor dropout(const Tensor& x, double p) {
  if (p == 1) return ag::binary_scalar(BinaryOp::Mul, x, 0.0);
  // keep each element with probability 1 - p, scaled by 1 / (1 - p)
  Tensor u = ops::random(x.shape(), RandomDist::Uniform, x.dtype(), x.device(), "dropout");
  Tensor keep = ops::binary_scalar(BinaryOp::Ge, u, p);
  Tensor zero = ops::full(Dims{}, 0.0, x.dtype(), x.device());
  return ag::where(keep, ag::binary_scalar(BinaryOp::Mul, x, 1.0 / (1.0 - p)), zero);
}

namespace {

const Tensor& only_input(const Module& m, const std::vector<Tensor>& in) {
  if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": expected 1 input but got ", in.size()));
  return in[0];
}


class Linear final : public Module {
 public:
  Module* clone() const override { return new Linear(*this); }
  Linear(int64_t in, int64_t out, bool bias, DType dtype, Device device) : in_(in), out_(out) {
    // PyTorch's reset_parameters: kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(in) for
    // the weight; the bias is uniform in the same bound.
    const double bound = in > 0 ? 1.0 / std::sqrt(static_cast<double>(in)) : 0.0;
    Tensor w = new_parameter(Dims{out, in}, dtype, device);
    if (w.numel() > 0) init_uniform(w, bound);
    ag::set_requires_grad(w, true);
    params_.emplace_back("weight", w);
    if (bias) {
      Tensor b = new_parameter(Dims{out}, dtype, device);
      if (b.numel() > 0) init_uniform(b, bound);
      ag::set_requires_grad(b, true);
      params_.emplace_back("bias", b);
    }
  }
  const char* kind() const override { return "Linear"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    check_input_device(*this, x);
    if (x.ndim() == 0 || x.size(x.ndim() - 1) != in_)
      fail(DT_ERR_SHAPE_MISMATCH, cat("Linear(in_features=", in_, ", out_features=", out_,
                                      "): the input's last dimension must be ", in_, " but the input has shape ",
                                      dims_str(x.shape()), " (weight shape ", dims_str(params_[0].second.shape()), ")"));
    return ag::linear(x, params_[0].second, params_.size() > 1 ? params_[1].second : Tensor());
  }

 private:
  int64_t in_, out_;
};

class Sequential final : public Module {
 public:
  Module* clone() const override { return new Sequential(*this); }
  explicit Sequential(const std::vector<Ref<Module>>& modules) {
    for (size_t i = 0; i < modules.size(); ++i) children_.emplace_back(std::to_string(i), modules[i]);
  }
  const char* kind() const override { return "Sequential"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    Tensor x = only_input(*this, in);
    for (auto& [name, m] : children_) x = m->forward({x});
    return x;
  }
};

class Activation final : public Module {
 public:
  Module* clone() const override { return new Activation(*this); }
  Activation(UnaryOp op, const char* kind) : op_(op), kind_(kind) {}
  const char* kind() const override { return kind_; }
  Tensor forward(const std::vector<Tensor>& in) override { return ag::unary(op_, only_input(*this, in)); }

 private:
  UnaryOp op_;
  const char* kind_;  // a string literal
};

class LeakyReLU final : public Module {
 public:
  Module* clone() const override { return new LeakyReLU(*this); }
  explicit LeakyReLU(double slope) : slope_(slope) {}
  const char* kind() const override { return "LeakyReLU"; }
  Tensor forward(const std::vector<Tensor>& in) override { return ag::leaky_relu(only_input(*this, in), slope_); }

 private:
  double slope_;
};

class Softmax final : public Module {
 public:
  Module* clone() const override { return new Softmax(*this); }
  Softmax(int64_t dim, bool log) : dim_(dim), log_(log) {}
  const char* kind() const override { return log_ ? "LogSoftmax" : "Softmax"; }
  Tensor forward(const std::vector<Tensor>& in) override { return ag::softmax(only_input(*this, in), dim_, log_); }

 private:
  int64_t dim_;
  bool log_;
};

class Dropout final : public Module {
 public:
  Module* clone() const override { return new Dropout(*this); }
  explicit Dropout(double p) : p_(p) {}
  const char* kind() const override { return "Dropout"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    if (!training() || p_ == 0) return x;
    if (!is_floating(x.dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat("Dropout: expected a floating input but got ", dtype_name(x.dtype())));
    return dropout(x, p_);
  }

 private:
  double p_;
};

class Flatten final : public Module {
 public:
  Module* clone() const override { return new Flatten(*this); }
  Flatten(int64_t start, int64_t end) : start_(start), end_(end) {}
  const char* kind() const override { return "Flatten"; }
  Tensor forward(const std::vector<Tensor>& in) override { return ag::flatten(only_input(*this, in), start_, end_); }

 private:
  int64_t start_, end_;
};

}  // namespace

Module* new_linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, Device device) {
  if (in_features < 0 || out_features < 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("Linear: in_features and out_features must be >= 0, got ", in_features, " and ",
                                      out_features));
  if (!is_floating(dtype)) fail(DT_ERR_DTYPE_MISMATCH, cat("Linear: expected a floating dtype but got ", dtype_name(dtype)));
  return new Linear(in_features, out_features, bias, dtype, device);
}
Module* new_sequential(const std::vector<Ref<Module>>& modules) { return new Sequential(modules); }
Module* new_activation(UnaryOp op, const char* kind) { return new Activation(op, kind); }
Module* new_leaky_relu(double negative_slope) {
  if (!std::isfinite(negative_slope))
    fail(DT_ERR_INVALID_ARGUMENT, cat("LeakyReLU: negative_slope must be finite, got ", negative_slope));
  return new LeakyReLU(negative_slope);
}
Module* new_softmax(int64_t dim, bool log) { return new Softmax(dim, log); }
Module* new_dropout(double p) {
  if (!(p >= 0 && p <= 1)) fail(DT_ERR_INVALID_ARGUMENT, cat("Dropout: probability must be in [0, 1], got ", p));
  return new Dropout(p);
}
Module* new_flatten(int64_t start_dim, int64_t end_dim) { return new Flatten(start_dim, end_dim); }

}  // namespace dt::nn
