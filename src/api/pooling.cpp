// Pooling and resizing entry points: the functional dt_max_pool2d, dt_avg_pool2d,
// dt_adaptive_avg_pool2d and dt_interpolate, and their modules.
#include <string>

#include "api/objects.h"
#include "api/shim.h"
#include "nn/functions.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace {

// PyTorch's defaults: stride = kernel_size, padding 0, dilation 1.
nn::PoolOptions pool_options(const char* fn, const int64_t* kernel, const int64_t* stride, const int64_t* padding,
                             const int64_t* dilation, int32_t ceil_mode) {
  if (!kernel) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": kernel_size is NULL (2 values: height, width)"));
  nn::PoolOptions o;
  for (int i = 0; i < 2; ++i) {
    o.kernel[i] = kernel[i];
    o.stride[i] = stride ? stride[i] : kernel[i];
    o.padding[i] = padding ? padding[i] : 0;
    o.dilation[i] = dilation ? dilation[i] : 1;
  }
  o.ceil_mode = flag_arg(ceil_mode, fn, "ceil_mode");
  return o;
}

template <typename Make>
dt_status module_out(const char* fn, dt_module** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    nn::Module* m = make();
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

// dt_interpolate's and dt_upsample_new's arguments, copied.
ag::InterpolateOptions interpolate_options(const char* fn, const int64_t* size, const double* scale_factor, size_t n,
                                           const char* mode, int32_t align_corners) {
  ag::InterpolateOptions o;
  if (size && scale_factor) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": give size or scale_factor, not both"));
  if (!size && !scale_factor) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": size and scale_factor are both NULL"));
  if (n < 1 || n > 3) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": n is ", n, " (1 value for every spatial dim, or 1 to 3)"));
  if (size) o.size.assign(size, size + n);
  else o.scale.assign(scale_factor, scale_factor + n);
  const std::string m = mode ? mode : "nearest";
  static const char* const kModes[] = {"nearest", "linear", "bilinear", "trilinear"};
  for (int i = 0; i < 4; ++i)
    if (m == kModes[i]) {
      o.mode = kModes[i];
      o.linear_dims = i;
    }
  if (m != o.mode) {
    if (m == "bicubic" || m == "area" || m == "nearest-exact")
      fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": mode \"", m, "\" is not supported yet (nearest, linear, bilinear, trilinear)"));
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": unknown mode \"", m, "\" (nearest, linear, bilinear or trilinear)"));
  }
  o.align_corners = flag_arg(align_corners, fn, "align_corners");
  ag::check_interpolate_options(o, fn);
  return o;
}

const int64_t* output_size_arg(const int64_t* output_size, const char* fn) {
  if (!output_size) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": output_size is NULL (2 values: height, width)"));
  return output_size;
}

}  // namespace

extern "C" {

DT_API dt_status dt_max_pool2d(const dt_tensor* input, const int64_t* kernel_size, const int64_t* stride,
                               const int64_t* padding, const int64_t* dilation, int32_t ceil_mode, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_max_pool2d", "out");
    Borrowed x = tensor_arg(input, "dt_max_pool2d", "input");
    nn::PoolOptions o = pool_options("dt_max_pool2d", kernel_size, stride, padding, dilation, ceil_mode);
    *out = new_handle(ag::max_pool2d(x, nn::pool_window("dt_max_pool2d", o), o.ceil_mode));
  });
}

DT_API dt_status dt_avg_pool2d(const dt_tensor* input, const int64_t* kernel_size, const int64_t* stride,
                               const int64_t* padding, int32_t ceil_mode, int32_t count_include_pad, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_avg_pool2d", "out");
    Borrowed x = tensor_arg(input, "dt_avg_pool2d", "input");
    nn::PoolOptions o = pool_options("dt_avg_pool2d", kernel_size, stride, padding, nullptr, ceil_mode);
    const bool include = flag_arg(count_include_pad, "dt_avg_pool2d", "count_include_pad");
    *out = new_handle(ag::avg_pool2d(x, nn::pool_window("dt_avg_pool2d", o), o.ceil_mode, include));
  });
}

DT_API dt_status dt_adaptive_avg_pool2d(const dt_tensor* input, const int64_t* output_size, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_adaptive_avg_pool2d", "out");
    Borrowed x = tensor_arg(input, "dt_adaptive_avg_pool2d", "input");
    const int64_t* s = output_size_arg(output_size, "dt_adaptive_avg_pool2d");
    *out = new_handle(ag::adaptive_avg_pool2d(x, s[0], s[1]));
  });
}

DT_API dt_status dt_interpolate(const dt_tensor* input, const int64_t* size, const double* scale_factor, size_t n,
                                const char* mode, int32_t align_corners, dt_tensor** out) {
  const char* fn = "dt_interpolate";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(input, fn, "input");
    *out = new_handle(ag::interpolate(x, interpolate_options(fn, size, scale_factor, n, mode, align_corners), fn));
  });
}

DT_API dt_status dt_max_pool2d_new(const int64_t* kernel_size, const int64_t* stride, const int64_t* padding,
                                   const int64_t* dilation, int32_t ceil_mode, dt_module** out) {
  return module_out("dt_max_pool2d_new", out, [&] {
    nn::PoolOptions o = pool_options("dt_max_pool2d_new", kernel_size, stride, padding, dilation, ceil_mode);
    return nn::new_max_pool2d(o);
  });
}

DT_API dt_status dt_avg_pool2d_new(const int64_t* kernel_size, const int64_t* stride, const int64_t* padding,
                                   int32_t ceil_mode, int32_t count_include_pad, dt_module** out) {
  return module_out("dt_avg_pool2d_new", out, [&] {
    nn::PoolOptions o = pool_options("dt_avg_pool2d_new", kernel_size, stride, padding, nullptr, ceil_mode);
    o.count_include_pad = flag_arg(count_include_pad, "dt_avg_pool2d_new", "count_include_pad");
    return nn::new_avg_pool2d(o);
  });
}

DT_API dt_status dt_adaptive_avg_pool2d_new(const int64_t* output_size, dt_module** out) {
  return module_out("dt_adaptive_avg_pool2d_new", out, [&] {
    const int64_t* s = output_size_arg(output_size, "dt_adaptive_avg_pool2d_new");
    return nn::new_adaptive_avg_pool2d(s[0], s[1]);
  });
}

DT_API dt_status dt_upsample_new(const int64_t* size, const double* scale_factor, size_t n, const char* mode,
                                 int32_t align_corners, dt_module** out) {
  const char* fn = "dt_upsample_new";
  return module_out(fn, out, [&] {
    return nn::new_upsample(interpolate_options(fn, size, scale_factor, n, mode, align_corners));
  });
}

}  // extern "C"
