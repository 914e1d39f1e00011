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
  // padding='same' pads by dilation * (kernel - 1) in all (conv_window).
  int64_t total = 0;
  if (o.same_padding && (__builtin_mul_overflow(o.dilation[0], o.kernel[0] - 1, &total) ||
                         __builtin_mul_overflow(o.dilation[1], o.kernel[1] - 1, &total)))
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": padding='same' with kernel_size (", o.kernel[0], ", ", o.kernel[1],
                                      ") and dilation (", o.dilation[0], ", ", o.dilation[1],
                                      ") pads by more than int64 holds"));
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

// What Conv2d, Conv1d and ConvTranspose2d share: their options, PyTorch's initialisation
// of the weight and bias, forward's checks of the one input, and the module's name as
// PyTorch prints it, which every forward error starts with. A subclass gives its weight's
// shape and fan-in, its input's spatial rank and the convolution itself.
class ConvModule : public Module {
 protected:
  // PyTorch's reset_parameters: kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(fan_in)
  // for the weight; the bias is uniform in the same bound. fan_in is a double: a product
  // past int64 (a weight too large to allocate, refused by new_parameter) must not
  // overflow on the way.
  ConvModule(const Conv2dOptions& o, int spatial, const Dims& weight_shape, double fan_in, DType dtype, Device device)
      : o_(o), spatial_(spatial) {
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(fan_in) : 0.0;
    add_parameter("weight", weight_shape, bound, dtype, device);
    if (o.bias) add_parameter("bias", Dims{o.out_channels}, bound, dtype, device);
  }

  // Checks the one input (on the module's device; [N, C, spatial...] or [C, spatial...]
  // with C = in_channels) and returns conv(x, weight, bias or an empty tensor), an error
  // of which is reworded to start with describe().
  template <class Conv>
  Tensor run(const std::vector<Tensor>& in, Conv conv) {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": expected 1 input but got ", in.size()));
    const Tensor& x = in[0];
    check_input_device(*this, x);
    if ((x.ndim() != spatial_ + 1 && x.ndim() != spatial_ + 2) || x.size(x.ndim() - spatial_ - 1) != o_.in_channels) {
      const char* dims = spatial_ == 1 ? "L" : "H, W";
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected an input of shape [N, ", o_.in_channels, ", ", dims,
                                      "] or [", o_.in_channels, ", ", dims, "] but got ", dims_str(x.shape())));
    }
    try {
      return conv(x, params_[0].second, o_.bias ? params_[1].second : Tensor());
    } catch (const Error& e) {
      fail(e.code(), cat(describe(), ": ", e.what()));
    }
  }

  Conv2dOptions o_;

 private:
  void add_parameter(const char* name, const Dims& shape, double bound, DType dtype, Device device) {
    Tensor p = new_parameter(shape, dtype, device);
    if (p.numel() > 0) init_uniform(p, bound);
    ag::set_requires_grad(p, true);
    params_.emplace_back(name, p);
  }

  // A pair of options as PyTorch prints it: "(3, 3)", or "(3,)" for Conv1d, whose values
  // are the pairs' second entries.
  std::string tuple(const int64_t (&v)[2]) const {
    return spatial_ == 1 ? cat("(", v[1], ",)") : cat("(", v[0], ", ", v[1], ")");
  }
  bool all(const int64_t (&v)[2], int64_t value) const { return v[1] == value && (spatial_ == 1 || v[0] == value); }

  // PyTorch's repr, e.g. "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
  // or "ConvTranspose2d(8, 3, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))".
  std::string describe() const {
    std::string s = cat(kind(), "(", o_.in_channels, ", ", o_.out_channels, ", kernel_size=", tuple(o_.kernel),
                        ", stride=", tuple(o_.stride));
    if (o_.same_padding) s += ", padding=same";
    else if (!all(o_.padding, 0)) s += ", padding=" + tuple(o_.padding);
    if (!all(o_.output_padding, 0)) s += ", output_padding=" + tuple(o_.output_padding);
    if (!all(o_.dilation, 1)) s += ", dilation=" + tuple(o_.dilation);
    if (o_.groups != 1) s += cat(", groups=", o_.groups);
    if (!o_.bias) s += ", bias=False";
    return s + ")";
  }

  int spatial_;  // 1 (Conv1d) or 2
};

class Conv2d final : public ConvModule {
 public:
  Conv2d(const Conv2dOptions& o, DType dtype, Device device)
      : ConvModule(o, 2, Dims{o.out_channels, o.in_channels / o.groups, o.kernel[0], o.kernel[1]},
                   static_cast<double>(o.in_channels / o.groups) * o.kernel[0] * o.kernel[1], dtype, device) {}
  Module* clone() const override { return new Conv2d(*this); }
  const char* kind() const override { return "Conv2d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    return run(in, [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return ag::conv2d(x, w, b, conv_window(o_), o_.groups);
    });
  }
};

// Conv1d: Conv2d over a height of 1 (input [N, C, L] -> [N, C, 1, L], weight [OC, C / g,
// K] -> [OC, C / g, 1, K]), so it shares Conv2d's kernels and ConvolutionBackward0.
class Conv1d final : public ConvModule {
 public:
  Conv1d(const Conv2dOptions& o, DType dtype, Device device)
      : ConvModule(o, 1, Dims{o.out_channels, o.in_channels / o.groups, o.kernel[1]},
                   static_cast<double>(o.in_channels / o.groups) * o.kernel[1], dtype, device) {}
  Module* clone() const override { return new Conv1d(*this); }
  const char* kind() const override { return "Conv1d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    return run(in, [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return ag::conv1d(x, w, b, conv_window(o_), o_.groups);
    });
  }
};

// ConvTranspose2d: weight [in, out / groups, kH, kW]. PyTorch's kaiming_uniform_(a=sqrt(5))
// takes fan_in from the weight's second dimension: out / groups * kH * kW.
class ConvTranspose2d final : public ConvModule {
 public:
  ConvTranspose2d(const Conv2dOptions& o, DType dtype, Device device)
      : ConvModule(o, 2, Dims{o.in_channels, o.out_channels / o.groups, o.kernel[0], o.kernel[1]},
                   static_cast<double>(o.out_channels / o.groups) * o.kernel[0] * o.kernel[1], dtype, device) {}
  Module* clone() const override { return new ConvTranspose2d(*this); }
  const char* kind() const override { return "ConvTranspose2d"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    return run(in, [&](const Tensor& x, const Tensor& w, const Tensor& b) {
      return ag::conv_transpose2d(x, w, b, conv_window(o_), o_.output_padding, o_.groups);
    });
  }
};

// The checks every convolution module's constructor makes, naming the module (fn);
// output_padding is checked for a transposed one.
void check_module_options(const char* fn, const Conv2dOptions& o, DType dtype, bool transposed = false) {
  check_conv_options(fn, o);
  if (transposed) check_output_padding(fn, o);
  if (o.in_channels <= 0 || o.out_channels <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": in_channels (", o.in_channels, ") and out_channels (", o.out_channels,
                                      ") must be positive"));
  if (o.in_channels % o.groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(fn, ": in_channels (", o.in_channels, ") must be divisible by groups (", o.groups, ")"));
  if (o.out_channels % o.groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(fn, ": out_channels (", o.out_channels, ") must be divisible by groups (", o.groups, ")"));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat(fn, ": parameters need a floating dtype, got ", dtype_name(dtype)));
}

}  // namespace

Module* new_conv_transpose2d(const Conv2dOptions& o, DType dtype, Device device) {
  if (o.same_padding)
    fail(DT_ERR_INVALID_ARGUMENT, "ConvTranspose2d: padding='same' is not supported (nor by PyTorch's ConvTranspose2d)");
  check_module_options("ConvTranspose2d", o, dtype, /*transposed=*/true);
  return new ConvTranspose2d(o, dtype, device);
}

Module* new_conv1d(const Conv2dOptions& o, DType dtype, Device device) {
  check_module_options("Conv1d", o, dtype);
  return new Conv1d(o, dtype, device);
}

Module* new_conv2d(const Conv2dOptions& o, DType dtype, Device device) {
  check_module_options("Conv2d", o, dtype);
  return new Conv2d(o, dtype, device);
}

}  // namespace dt::nn
