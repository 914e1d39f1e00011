// Convolution modules of torch.nn: Conv2d, Conv1d (over a height of 1) and
// ConvTranspose2d, with PyTorch's constructor arguments, defaults, initialisation and
// state-dict names ("weight" [out, in / groups, kH, kW], ConvTranspose2d's [in, out /
// groups, kH, kW]; "bias" [out]), so a state_dict saved from PyTorch loads unchanged.
#include <cmath>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace dt::nn {

ops::Window2d conv_window(const Conv2dOptions& o) {
  ops::Window2d w;
  w.kh = o.kernel[0];
  w.kw = o.kernel[1];
  w.sh = o.stride[0];
  w.sw = o.stride[1];
  w.dh = o.dilation[0];
  w.dw = o.dilation[1];
  if (o.same_padding) {  // PyTorch: total = dilation * (kernel - 1), the odd one extra at the end
    const int64_t th = w.dh * (w.kh - 1), tw = w.dw * (w.kw - 1);
    w.pt = th / 2;
    w.pb = th - w.pt;
    w.pl = tw / 2;
    w.pr = tw - w.pl;
  } else {
    w.pt = w.pb = o.padding[0];
    w.pl = w.pr = o.padding[1];
  }
  return w;
}

void check_conv_options(const char* fn, const Conv2dOptions& o) {
  for (int i = 0; i < 2; ++i) {
    if (o.kernel[i] <= 0 || o.stride[i] <= 0 || o.dilation[i] <= 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": kernel_size (", o.kernel[0], ", ", o.kernel[1], "), stride (", o.stride[0],
                                        ", ", o.stride[1], ") and dilation (", o.dilation[0], ", ", o.dilation[1],
                                        ") must be positive"));
    if (!o.same_padding && o.padding[i] < 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": padding (", o.padding[0], ", ", o.padding[1], ") must be non-negative"));
  }
  if (o.same_padding && (o.stride[0] != 1 || o.stride[1] != 1))
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": padding='same' is not supported for strided convolutions (stride (",
                                      o.stride[0], ", ", o.stride[1], "))"));
  if (o.groups <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": groups must be positive, got ", o.groups));
}

void check_output_padding(const char* fn, const Conv2dOptions& o) {
  for (int i = 0; i < 2; ++i) {
    if (o.output_padding[i] < 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": output_padding (", o.output_padding[0], ", ", o.output_padding[1],
                                        ") must be non-negative"));
    if (o.output_padding[i] >= o.stride[i] && o.output_padding[i] >= o.dilation[i])
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": output padding must be smaller than either stride or dilation, but got ",
                                        "output_padding (", o.output_padding[0], ", ", o.output_padding[1], "), stride (",
                                        o.stride[0], ", ", o.stride[1], "), dilation (", o.dilation[0], ", ",
                                        o.dilation[1], ")"));
  }
}

namespace {

class Conv2d final : public Module {
 public:
  Module* clone() const override { return new Conv2d(*this); }
  Conv2d(const Conv2dOptions& o, DType dtype, Device device) : o_(o) {
    // PyTorch's reset_parameters: kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(fan_in)
    // for the weight, fan_in = in / groups * kH * kW; the bias is uniform in the same bound.
    const int64_t fan_in = o.in_channels / o.groups * o.kernel[0] * o.kernel[1];
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    Tensor w = new_parameter(Dims{o.out_channels, o.in_channels / o.groups, o.kernel[0], o.kernel[1]}, dtype, device);
    if (w.numel() > 0) init_uniform(w, bound);
    ag::set_requires_grad(w, true);
    params_.emplace_back("weight", w);
    if (o.bias) {
      Tensor b = new_parameter(Dims{o.out_channels}, dtype, device);
      if (b.numel() > 0) init_uniform(b, bound);
      ag::set_requires_grad(b, true);
      params_.emplace_back("bias", b);
    }
  }
  const char* kind() const override { return "Conv2d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat("Conv2d: expected 1 input but got ", in.size()));
    const Tensor& x = in[0];
    check_input_device(*this, x);
    if ((x.ndim() != 3 && x.ndim() != 4) || x.size(x.ndim() - 3) != o_.in_channels)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected an input of shape [N, ", o_.in_channels, ", H, W] or [",
                                      o_.in_channels, ", H, W] but got ", dims_str(x.shape())));
    try {
      return ag::conv2d(x, params_[0].second, o_.bias ? params_[1].second : Tensor(), conv_window(o_), o_.groups);
    } catch (const Error& e) {
      fail(e.code(), cat(describe(), ": ", e.what()));
    }
  }

 private:
  // PyTorch's repr: "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))".
  std::string describe() const {
    std::string s = cat("Conv2d(", o_.in_channels, ", ", o_.out_channels, ", kernel_size=(", o_.kernel[0], ", ",
                        o_.kernel[1], "), stride=(", o_.stride[0], ", ", o_.stride[1], ")");
    if (o_.same_padding) s += ", padding=same";
    else if (o_.padding[0] || o_.padding[1]) s += cat(", padding=(", o_.padding[0], ", ", o_.padding[1], ")");
    if (o_.dilation[0] != 1 || o_.dilation[1] != 1) s += cat(", dilation=(", o_.dilation[0], ", ", o_.dilation[1], ")");
    if (o_.groups != 1) s += cat(", groups=", o_.groups);
    if (!o_.bias) s += ", bias=False";
    return s + ")";
  }

  Conv2dOptions o_;
};

// Conv1d: Conv2d over a height of 1 (input [N, C, L] -> [N, C, 1, L], weight [OC, C / g,
// K] -> [OC, C / g, 1, K]), so it shares Conv2d's kernels and ConvolutionBackward0.
class Conv1d final : public Module {
 public:
  Module* clone() const override { return new Conv1d(*this); }
  Conv1d(const Conv2dOptions& o, DType dtype, Device device) : o_(o) {
    const int64_t fan_in = o.in_channels / o.groups * o.kernel[1];
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    Tensor w = new_parameter(Dims{o.out_channels, o.in_channels / o.groups, o.kernel[1]}, dtype, device);
    if (w.numel() > 0) init_uniform(w, bound);
    ag::set_requires_grad(w, true);
    params_.emplace_back("weight", w);
    if (o.bias) {
      Tensor b = new_parameter(Dims{o.out_channels}, dtype, device);
      if (b.numel() > 0) init_uniform(b, bound);
      ag::set_requires_grad(b, true);
      params_.emplace_back("bias", b);
    }
  }
  const char* kind() const override { return "Conv1d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat("Conv1d: expected 1 input but got ", in.size()));
    const Tensor& x = in[0];
    check_input_device(*this, x);
    const std::string what = cat("Conv1d(", o_.in_channels, ", ", o_.out_channels, ", kernel_size=(", o_.kernel[1],
                                 ",), stride=(", o_.stride[1], ",))");
    if ((x.ndim() != 2 && x.ndim() != 3) || x.size(x.ndim() - 2) != o_.in_channels)
      fail(DT_ERR_SHAPE_MISMATCH, cat(what, ": expected an input of shape [N, ", o_.in_channels, ", L] or [",
                                      o_.in_channels, ", L] but got ", dims_str(x.shape())));
    try {
      return ag::conv1d(x, params_[0].second, o_.bias ? params_[1].second : Tensor(), conv_window(o_), o_.groups);
    } catch (const Error& e) {
      fail(e.code(), cat(what, ": ", e.what()));
    }
  }

 private:
  Conv2dOptions o_;
};

// ConvTranspose2d: weight [in, out / groups, kH, kW]. PyTorch's kaiming_uniform_(a=sqrt(5))
// takes fan_in from the weight's second dimension: out / groups * kH * kW.
class ConvTranspose2d final : public Module {
 public:
  Module* clone() const override { return new ConvTranspose2d(*this); }
  ConvTranspose2d(const Conv2dOptions& o, DType dtype, Device device) : o_(o) {
    const int64_t fan_in = o.out_channels / o.groups * o.kernel[0] * o.kernel[1];
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    Tensor w = new_parameter(Dims{o.in_channels, o.out_channels / o.groups, o.kernel[0], o.kernel[1]}, dtype, device);
    if (w.numel() > 0) init_uniform(w, bound);
    ag::set_requires_grad(w, true);
    params_.emplace_back("weight", w);
    if (o.bias) {
      Tensor b = new_parameter(Dims{o.out_channels}, dtype, device);
      if (b.numel() > 0) init_uniform(b, bound);
      ag::set_requires_grad(b, true);
      params_.emplace_back("bias", b);
    }
  }
  const char* kind() const override { return "ConvTranspose2d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat("ConvTranspose2d: expected 1 input but got ", in.size()));
    const Tensor& x = in[0];
    check_input_device(*this, x);
    if ((x.ndim() != 3 && x.ndim() != 4) || x.size(x.ndim() - 3) != o_.in_channels)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected an input of shape [N, ", o_.in_channels, ", H, W] or [",
                                      o_.in_channels, ", H, W] but got ", dims_str(x.shape())));
    try {
      return ag::conv_transpose2d(x, params_[0].second, o_.bias ? params_[1].second : Tensor(), conv_window(o_),
                                  o_.output_padding, o_.groups);
    } catch (const Error& e) {
      fail(e.code(), cat(describe(), ": ", e.what()));
    }
  }

 private:
  // PyTorch's repr: "ConvTranspose2d(8, 3, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))".
  std::string describe() const {
    std::string s = cat("ConvTranspose2d(", o_.in_channels, ", ", o_.out_channels, ", kernel_size=(", o_.kernel[0], ", ",
                        o_.kernel[1], "), stride=(", o_.stride[0], ", ", o_.stride[1], ")");
    if (o_.padding[0] || o_.padding[1]) s += cat(", padding=(", o_.padding[0], ", ", o_.padding[1], ")");
    if (o_.output_padding[0] || o_.output_padding[1])
      s += cat(", output_padding=(", o_.output_padding[0], ", ", o_.output_padding[1], ")");
    if (o_.dilation[0] != 1 || o_.dilation[1] != 1) s += cat(", dilation=(", o_.dilation[0], ", ", o_.dilation[1], ")");
    if (o_.groups != 1) s += cat(", groups=", o_.groups);
    if (!o_.bias) s += ", bias=False";
    return s + ")";
  }

  Conv2dOptions o_;
};

}  // namespace

Module* new_conv_transpose2d(const Conv2dOptions& o, DType dtype, Device device) {
  if (o.same_padding)
    fail(DT_ERR_INVALID_ARGUMENT, "ConvTranspose2d: padding='same' is not supported (nor by PyTorch's ConvTranspose2d)");
  check_conv_options("ConvTranspose2d", o);
  check_output_padding("ConvTranspose2d", o);
  if (o.in_channels <= 0 || o.out_channels <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("ConvTranspose2d: in_channels (", o.in_channels, ") and out_channels (",
                                      o.out_channels, ") must be positive"));
  if (o.in_channels % o.groups != 0 || o.out_channels % o.groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("ConvTranspose2d: in_channels (", o.in_channels, ") and out_channels (",
                                      o.out_channels, ") must be divisible by groups (", o.groups, ")"));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat("ConvTranspose2d: parameters need a floating dtype, got ", dtype_name(dtype)));
  return new ConvTranspose2d(o, dtype, device);
}

Module* new_conv1d(const Conv2dOptions& o, DType dtype, Device device) {
  check_conv_options("Conv1d", o);
  if (o.in_channels <= 0 || o.out_channels <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("Conv1d: in_channels (", o.in_channels, ") and out_channels (", o.out_channels,
                                      ") must be positive"));
  if (o.in_channels % o.groups != 0 || o.out_channels % o.groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("Conv1d: in_channels (", o.in_channels, ") and out_channels (", o.out_channels,
                                      ") must be divisible by groups (", o.groups, ")"));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat("Conv1d: parameters need a floating dtype, got ", dtype_name(dtype)));
  return new Conv1d(o, dtype, device);
}

Module* new_conv2d(const Conv2dOptions& o, DType dtype, Device device) {
  check_conv_options("Conv2d", o);
  if (o.in_channels <= 0 || o.out_channels <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("Conv2d: in_channels (", o.in_channels, ") and out_channels (", o.out_channels,
                                      ") must be positive"));
  if (o.in_channels % o.groups != 0) fail(DT_ERR_INVALID_ARGUMENT, cat("Conv2d: in_channels (", o.in_channels,
                                                                       ") must be divisible by groups (", o.groups, ")"));
  if (o.out_channels % o.groups != 0) fail(DT_ERR_INVALID_ARGUMENT, cat("Conv2d: out_channels (", o.out_channels,
                                                                        ") must be divisible by groups (", o.groups, ")"));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat("Conv2d: parameters need a floating dtype, got ", dtype_name(dtype)));
  return new Conv2d(o, dtype, device);
}

}  // namespace dt::nn
