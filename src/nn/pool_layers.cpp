// Pooling and resizing modules of torch.nn: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and
// Upsample, with PyTorch's constructor arguments and defaults (stride defaults to the
// kernel size). No parameters.
#include <algorithm>
#include <string>

#include "core/error.h"
#include "nn/functions.h"
#include "nn/layers.h"

namespace dt::nn {

ops::Window2d pool_window(const char* fn, const PoolOptions& o) {
  for (int i = 0; i < 2; ++i) {
    if (o.kernel[i] <= 0 || o.stride[i] <= 0 || o.dilation[i] <= 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": kernel_size (", o.kernel[0], ", ", o.kernel[1], "), stride (", o.stride[0],
                                        ", ", o.stride[1], ") and dilation (", o.dilation[0], ", ", o.dilation[1],
                                        ") must be positive"));
    if (o.padding[i] < 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": padding (", o.padding[0], ", ", o.padding[1], ") must be non-negative"));
  }
  ops::Window2d w;
  w.kh = o.kernel[0];
  w.kw = o.kernel[1];
  w.sh = o.stride[0];
  w.sw = o.stride[1];
  w.pt = w.pb = o.padding[0];
  w.pl = w.pr = o.padding[1];
  w.dh = o.dilation[0];
  w.dw = o.dilation[1];
  return w;
}

namespace {

enum class PoolKind { Max, Avg, AdaptiveAvg };

class Pool2d final : public Module {
 public:
  Module* clone() const override { return new Pool2d(*this); }
  Pool2d(PoolKind kind, const PoolOptions& o) : kind_(kind), o_(o) {
    if (kind != PoolKind::AdaptiveAvg) window_ = pool_window(this->kind(), o);
  }
  const char* kind() const override {
    return kind_ == PoolKind::Max ? "MaxPool2d" : kind_ == PoolKind::Avg ? "AvgPool2d" : "AdaptiveAvgPool2d";
  }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": expected 1 input but got ", in.size()));
    try {
      switch (kind_) {
        case PoolKind::Max: return ag::max_pool2d(in[0], window_, o_.ceil_mode);
        case PoolKind::Avg: return ag::avg_pool2d(in[0], window_, o_.ceil_mode, o_.count_include_pad);
        case PoolKind::AdaptiveAvg: return ag::adaptive_avg_pool2d(in[0], o_.output[0], o_.output[1]);
      }
    } catch (const Error& e) {
      fail(e.code(), cat(describe(), ": ", e.what()));
    }
    return Tensor();
  }

 private:
  // PyTorch's repr: "MaxPool2d(kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))".
  std::string describe() const {
    if (kind_ == PoolKind::AdaptiveAvg) return cat("AdaptiveAvgPool2d(output_size=(", o_.output[0], ", ", o_.output[1], "))");
    return cat(kind(), "(kernel_size=(", o_.kernel[0], ", ", o_.kernel[1], "), stride=(", o_.stride[0], ", ", o_.stride[1],
               "), padding=(", o_.padding[0], ", ", o_.padding[1], ")", o_.ceil_mode ? ", ceil_mode=True" : "", ")");
  }

  PoolKind kind_;
  PoolOptions o_;
  ops::Window2d window_;
};

class Upsample final : public Module {
 public:
  Module* clone() const override { return new Upsample(*this); }
  explicit Upsample(const ag::InterpolateOptions& o) : o_(o), name_(describe(o)) {}
  const char* kind() const override { return "Upsample"; }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.size() != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": expected 1 input but got ", in.size()));
    return ag::interpolate(in[0], o_, name_.c_str());
  }

 private:
  // PyTorch's repr, Upsample(size=(4, 6), mode='bilinear') or Upsample(scale_factor=2.0, mode='nearest'),
  // with align_corners=True added when set (PyTorch's leaves it out).
  static std::string describe(const ag::InterpolateOptions& o) {
    std::string values;
    for (size_t i = 0; i < std::max(o.size.size(), o.scale.size()); ++i)
      values += cat(i ? ", " : "", o.size.empty() ? cat(o.scale[i]) : cat(o.size[i]));
    const size_t n = std::max(o.size.size(), o.scale.size());
    return cat("Upsample(", o.size.empty() ? "scale_factor=" : "size=", n > 1 ? "(" : "", values, n > 1 ? ")" : "",
               ", mode='", o.mode, "'", o.align_corners ? ", align_corners=True" : "", ")");
  }
  ag::InterpolateOptions o_;
  std::string name_;
};

}  // namespace

Module* new_max_pool2d(const PoolOptions& o) { return new Pool2d(PoolKind::Max, o); }
Module* new_avg_pool2d(const PoolOptions& o) { return new Pool2d(PoolKind::Avg, o); }
Module* new_upsample(const ag::InterpolateOptions& o) {
  ag::check_interpolate_options(o, "Upsample");
  return new Upsample(o);
}
Module* new_adaptive_avg_pool2d(int64_t out_h, int64_t out_w) {
  if (out_h <= 0 || out_w <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("AdaptiveAvgPool2d: output_size (", out_h, ", ", out_w, ") must be positive"));
  PoolOptions o;
  o.output[0] = out_h;
  o.output[1] = out_w;
  return new Pool2d(PoolKind::AdaptiveAvg, o);
}

}  // namespace dt::nn
