// Normalisation and embedding modules of torch.nn: BatchNorm1d, BatchNorm2d, LayerNorm,
// GroupNorm and Embedding, with PyTorch's constructor arguments, defaults, initialisation
// and state-dict names ("weight", "bias", "running_mean", "running_var",
// "num_batches_tracked"), so a state_dict saved from PyTorch loads unchanged. The math
// is the functional forms' (nn/grad_norm.cpp).
#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

const Tensor& only_input(const Module& m, const std::vector<Tensor>& in) {
  if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": expected 1 input but got ", in.size()));
  return in[0];
}

// A parameter (requires grad) or buffer filled with `value`.
Tensor filled(const Dims& shape, double value, DType dtype, Device device, bool parameter) {
  Tensor t = new_parameter(shape, dtype, device);
  if (t.numel() > 0) ops::fill_(t, value);
  if (parameter) ag::set_requires_grad(t, true);
  return t;
}

void check_floating_dtype(const char* kind, DType dtype) {
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat(kind, ": parameters need a floating dtype, got ", dtype_name(dtype)));
}

// Runs f, prefixing an error's message with the module's description.
template <typename F>
Tensor described(const std::string& what, F f) {
  try {
    return f();
  } catch (const Error& e) {
    fail(e.code(), cat(what, ": ", e.what()));
  }
}

class BatchNorm final : public Module {
 public:
  Module* clone() const override { return new BatchNorm(*this); }
  BatchNorm(const BatchNormOptions& o, int spatial_dims, DType dtype, Device device)
      : o_(o), spatial_dims_(spatial_dims) {
    const Dims c{o.num_features};
    if (o.affine) {
      params_.emplace_back("weight", filled(c, 1.0, dtype, device, true));
      params_.emplace_back("bias", filled(c, 0.0, dtype, device, true));
    }
    if (o.track_running_stats) {
      buffers_.emplace_back("running_mean", filled(c, 0.0, dtype, device, false));
      buffers_.emplace_back("running_var", filled(c, 1.0, dtype, device, false));
      buffers_.emplace_back("num_batches_tracked", filled(Dims{}, 0.0, DType::Int64, device, false));
    }
  }
  const char* kind() const override { return spatial_dims_ == 2 ? "BatchNorm2d" : "BatchNorm1d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    check_input_device(*this, x);
    const bool ok_rank = spatial_dims_ == 2 ? x.ndim() == 4 : (x.ndim() == 2 || x.ndim() == 3);
    if (!ok_rank)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected ", spatial_dims_ == 2 ? "4D" : "2D or 3D", " input (got ",
                                      x.ndim(), "D input of size ", dims_str(x.shape()), ")"));
    if (x.size(1) != o_.num_features)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected an input with ", o_.num_features,
                                      " channels (dim 1), but got input of size ", dims_str(x.shape())));
    const bool training = this->training();
    double factor = o_.momentum;
    Tensor mean, var;
    if (o_.track_running_stats) {
      mean = buffers_[0].second;
      var = buffers_[1].second;
      if (training) {
        const Tensor& tracked = buffers_[2].second;
        ops::binary_scalar_(BinaryOp::Add, tracked, 1.0);
        if (o_.cumulative()) {  // momentum None: the cumulative moving average
          int64_t n = 0;
          ops::copy_to_host(tracked, &n, sizeof n);
          factor = 1.0 / static_cast<double>(n);
        }
      }
    }
    const Tensor w = o_.affine ? params_[0].second : Tensor(), b = o_.affine ? params_[1].second : Tensor();
    // Batch statistics when training or not tracking (no running tensors then in eval);
    // the running ones in eval.
    const bool use_batch = training || !o_.track_running_stats;
    return described(describe(), [&] { return ag::batch_norm(x, mean, var, w, b, use_batch, factor, o_.eps); });
  }

 private:
  // PyTorch's repr: "BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)".
  std::string describe() const {
    return cat(kind(), "(", o_.num_features, ", eps=", o_.eps, ", momentum=", o_.cumulative() ? std::string("None") : cat(o_.momentum),
               ", affine=", o_.affine ? "True" : "False", ", track_running_stats=",
               o_.track_running_stats ? "True" : "False", ")");
  }
  BatchNormOptions o_;
  int spatial_dims_;
};

class LayerNorm final : public Module {
 public:
  Module* clone() const override { return new LayerNorm(*this); }
  LayerNorm(const Dims& shape, double eps, bool affine, bool bias, DType dtype, Device device)
      : shape_(shape), eps_(eps) {
    if (affine) {
      params_.emplace_back("weight", filled(shape, 1.0, dtype, device, true));
      if (bias) params_.emplace_back("bias", filled(shape, 0.0, dtype, device, true));
    }
  }
  const char* kind() const override { return "LayerNorm"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    check_input_device(*this, x);
    const Tensor w = params_.size() > 0 ? params_[0].second : Tensor(), b = params_.size() > 1 ? params_[1].second : Tensor();
    return described(cat("LayerNorm(", dims_str(shape_), ", eps=", eps_, ")"),
                     [&] { return ag::layer_norm(x, shape_, w, b, eps_); });
  }

 private:
  Dims shape_;
  double eps_;
};

class GroupNorm final : public Module {
 public:
  Module* clone() const override { return new GroupNorm(*this); }
  GroupNorm(int64_t groups, int64_t channels, double eps, bool affine, DType dtype, Device device)
      : groups_(groups), channels_(channels), eps_(eps) {
    if (affine) {
      params_.emplace_back("weight", filled(Dims{channels}, 1.0, dtype, device, true));
      params_.emplace_back("bias", filled(Dims{channels}, 0.0, dtype, device, true));
    }
  }
  const char* kind() const override { return "GroupNorm"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    check_input_device(*this, x);
    const std::string what = cat("GroupNorm(", groups_, ", ", channels_, ", eps=", eps_, ")");
    if (x.ndim() < 2 || x.size(1) != channels_)
      fail(DT_ERR_SHAPE_MISMATCH, cat(what, ": expected an input [N, ", channels_, ", ...], but got input of size ",
                                      dims_str(x.shape())));
    const Tensor w = params_.empty() ? Tensor() : params_[0].second, b = params_.empty() ? Tensor() : params_[1].second;
    return described(what, [&] { return ag::group_norm(x, groups_, w, b, eps_); });
  }

 private:
  int64_t groups_, channels_;
  double eps_;
};

class Embedding final : public Module {
 public:
  Module* clone() const override { return new Embedding(*this); }
  Embedding(int64_t num, int64_t dim, int64_t padding_idx, DType dtype, Device device)
      : num_(num), dim_(dim), padding_idx_(padding_idx) {
    // PyTorch's reset_parameters: normal(0, 1), then the padding row zeroed.
    Tensor w = new_parameter(Dims{num, dim}, dtype, device);
    if (w.numel() > 0) ops::copy_(w, ops::random(w.shape(), RandomDist::Normal, dtype, device, "init"));
    if (padding_idx != ag::kNoPaddingIdx) ops::fill_(ops::narrow(w, 0, padding_idx, 1), 0.0);
    ag::set_requires_grad(w, true);
    params_.emplace_back("weight", w);
  }
  const char* kind() const override { return "Embedding"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& x = only_input(*this, in);
    check_input_device(*this, x);
    std::string what = cat("Embedding(", num_, ", ", dim_);
    if (padding_idx_ != ag::kNoPaddingIdx) what += cat(", padding_idx=", padding_idx_);
    what += ")";
    return described(what, [&] { return ag::embedding(params_[0].second, x, padding_idx_); });
  }

 private:
  int64_t num_, dim_, padding_idx_;
};

}  // namespace

Module* new_batch_norm(const BatchNormOptions& o, int spatial_dims, DType dtype, Device device) {
  const char* kind = spatial_dims == 2 ? "BatchNorm2d" : "BatchNorm1d";
  if (o.num_features <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": num_features must be positive, got ", o.num_features));
  if (!(o.eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": eps must be positive, got ", o.eps));
  if (!o.cumulative() && !(o.momentum <= 1.0))
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": momentum must be in [0, 1] (or negative for None), got ", o.momentum));
  check_floating_dtype(kind, dtype);
  return new BatchNorm(o, spatial_dims, dtype, device);
}

Module* new_layer_norm(const Dims& shape, double eps, bool affine, bool bias, DType dtype, Device device) {
  if (shape.size() == 0) fail(DT_ERR_INVALID_ARGUMENT, "LayerNorm: normalized_shape needs at least one dim");
  for (int64_t d : shape)
    if (d <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat("LayerNorm: normalized_shape ", dims_str(shape), " must be positive"));
  if (!(eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("LayerNorm: eps must be positive, got ", eps));
  check_floating_dtype("LayerNorm", dtype);
  return new LayerNorm(shape, eps, affine, bias, dtype, device);
}

Module* new_group_norm(int64_t groups, int64_t channels, double eps, bool affine, DType dtype, Device device) {
  if (groups <= 0 || channels <= 0 || channels % groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("GroupNorm: num_channels (", channels, ") must be a positive multiple of num_groups (",
                                      groups, ")"));
  if (!(eps > 0)) fail(DT_ERR_INVALID_ARGUMENT, cat("GroupNorm: eps must be positive, got ", eps));
  check_floating_dtype("GroupNorm", dtype);
  return new GroupNorm(groups, channels, eps, affine, dtype, device);
}

Module* new_embedding(int64_t num, int64_t dim, int64_t padding_idx, DType dtype, Device device) {
  if (num <= 0 || dim <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("Embedding: num_embeddings (", num, ") and embedding_dim (", dim,
                                      ") must be positive"));
  if (padding_idx != ag::kNoPaddingIdx) {
    if (padding_idx < -num || padding_idx >= num)
      fail(DT_ERR_INVALID_ARGUMENT, cat("Embedding: padding_idx ", padding_idx, " must be within num_embeddings (", num, ")"));
    if (padding_idx < 0) padding_idx += num;  // PyTorch counts a negative one from the end
  }
  check_floating_dtype("Embedding", dtype);
  return new Embedding(num, dim, padding_idx, dtype, device);
}

}  // namespace dt::nn
