// Convolution entry points: the functional dt_conv2d, dt_conv1d and dt_conv_transpose2d,
// and their modules.
#include "api/objects.h"
#include "api/shim.h"
#include "nn/functions.h"
#include "core/context.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace {

// The (height, width) pairs: NULL means PyTorch's default for both.
void pair_arg(const int64_t* p, int64_t dflt, int64_t out[2]) {
  out[0] = p ? p[0] : dflt;
  out[1] = p ? p[1] : dflt;
}

nn::Conv2dOptions conv_options(const int64_t* kernel, const int64_t* stride, const int64_t* padding,
                               const int64_t* dilation, int64_t groups) {
  nn::Conv2dOptions o;
  if (kernel) pair_arg(kernel, 1, o.kernel);
  pair_arg(stride, 1, o.stride);
  pair_arg(dilation, 1, o.dilation);
  o.same_padding = padding && padding[0] == DT_PADDING_SAME;
  if (!o.same_padding) pair_arg(padding, 0, o.padding);
  o.groups = groups;
  return o;
}

}  // namespace

extern "C" {

DT_API dt_status dt_conv2d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias,
                           const int64_t* stride, const int64_t* padding, const int64_t* dilation, int64_t groups,
                           dt_tensor** out) {
  return guard([&] {
    require(out, "dt_conv2d", "out");
    Borrowed x = tensor_arg(input, "dt_conv2d", "input");
    Borrowed w = tensor_arg(weight, "dt_conv2d", "weight");
    const Tensor b = optional_tensor_arg(bias, "dt_conv2d", "bias");
    const Tensor& wt = w;
    if (wt.ndim() != 4)
      fail(DT_ERR_SHAPE_MISMATCH, cat("dt_conv2d: expected a 4-d weight [out_channels, in_channels / groups, kH, kW], ",
                                      "but got weight of size ", dims_str(wt.shape())));
    const int64_t kernel[2] = {wt.size(2), wt.size(3)};
    nn::Conv2dOptions o = conv_options(kernel, stride, padding, dilation, groups);
    nn::check_conv_options("dt_conv2d", o);
    *out = new_handle(ag::conv2d(x, wt, b, nn::conv_window(o), groups));
  });
}

DT_API dt_status dt_conv2d_new(int64_t in_channels, int64_t out_channels, const int64_t* kernel_size,
                               const int64_t* stride, const int64_t* padding, const int64_t* dilation, int64_t groups,
                               int32_t bias, dt_dtype dtype, dt_device device, dt_module** out) {
  return guard([&] {
    require(out, "dt_conv2d_new", "out");
    if (!kernel_size) fail(DT_ERR_INVALID_ARGUMENT, "dt_conv2d_new: kernel_size is NULL (2 values: height, width)");
    flag_arg(bias, "dt_conv2d_new", "bias");
    nn::Conv2dOptions o = conv_options(kernel_size, stride, padding, dilation, groups);
    o.in_channels = in_channels;
    o.out_channels = out_channels;
    o.bias = bias == 1;
    nn::Module* m = nn::new_conv2d(o, resolve_dtype(dtype), resolve_device(device));
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

// Conv1d's scalars as the width entries of Conv2d's options.
nn::Conv2dOptions conv1d_options(int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
  nn::Conv2dOptions o;
  o.kernel[1] = kernel;
  o.stride[1] = stride;
  o.dilation[1] = dilation;
  o.same_padding = padding == DT_PADDING_SAME;
  if (!o.same_padding) o.padding[1] = padding;
  o.groups = groups;
  return o;
}

DT_API dt_status dt_conv1d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias, int64_t stride,
                           int64_t padding, int64_t dilation, int64_t groups, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_conv1d", "out");
    Borrowed x = tensor_arg(input, "dt_conv1d", "input");
    Borrowed w = tensor_arg(weight, "dt_conv1d", "weight");
    const Tensor b = optional_tensor_arg(bias, "dt_conv1d", "bias");
    const Tensor& wt = w;
    if (wt.ndim() != 3)
      fail(DT_ERR_SHAPE_MISMATCH, cat("dt_conv1d: expected a 3-d weight [out_channels, in_channels / groups, kW], ",
                                      "but got weight of size ", dims_str(wt.shape())));
    nn::Conv2dOptions o = conv1d_options(wt.size(2), stride, padding, dilation, groups);
    nn::check_conv_options("dt_conv1d", o);
    *out = new_handle(ag::conv1d(x, wt, b, nn::conv_window(o), groups));
  });
}

DT_API dt_status dt_conv1d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
                               int64_t padding, int64_t dilation, int64_t groups, int32_t bias, dt_dtype dtype,
                               dt_device device, dt_module** out) {
  return guard([&] {
    require(out, "dt_conv1d_new", "out");
    flag_arg(bias, "dt_conv1d_new", "bias");
    nn::Conv2dOptions o = conv1d_options(kernel_size, stride, padding, dilation, groups);
    o.in_channels = in_channels;
    o.out_channels = out_channels;
    o.bias = bias == 1;
    nn::Module* m = nn::new_conv1d(o, resolve_dtype(dtype), resolve_device(device));
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

// ConvTranspose2d's options: PyTorch's argument order, NULL pairs for the defaults.
nn::Conv2dOptions conv_transpose_options(const int64_t* kernel, const int64_t* stride, const int64_t* padding,
                                         const int64_t* output_padding, int64_t groups, const int64_t* dilation) {
  nn::Conv2dOptions o = conv_options(kernel, stride, nullptr, dilation, groups);
  pair_arg(padding, 0, o.padding);
  pair_arg(output_padding, 0, o.output_padding);
  return o;
}

DT_API dt_status dt_conv_transpose2d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias,
                                     const int64_t* stride, const int64_t* padding, const int64_t* output_padding,
                                     int64_t groups, const int64_t* dilation, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_conv_transpose2d", "out");
    Borrowed x = tensor_arg(input, "dt_conv_transpose2d", "input");
    Borrowed w = tensor_arg(weight, "dt_conv_transpose2d", "weight");
    const Tensor b = optional_tensor_arg(bias, "dt_conv_transpose2d", "bias");
    const Tensor& wt = w;
    if (wt.ndim() != 4)
      fail(DT_ERR_SHAPE_MISMATCH, cat("dt_conv_transpose2d: expected a 4-d weight [in_channels, out_channels / groups, ",
                                      "kH, kW], but got weight of size ", dims_str(wt.shape())));
    const int64_t kernel[2] = {wt.size(2), wt.size(3)};
    nn::Conv2dOptions o = conv_transpose_options(kernel, stride, padding, output_padding, groups, dilation);
    nn::check_conv_options("dt_conv_transpose2d", o);
    nn::check_output_padding("dt_conv_transpose2d", o);
    *out = new_handle(ag::conv_transpose2d(x, wt, b, nn::conv_window(o), o.output_padding, groups));
  });
}

DT_API dt_status dt_conv_transpose2d_new(int64_t in_channels, int64_t out_channels, const int64_t* kernel_size,
                                         const int64_t* stride, const int64_t* padding, const int64_t* output_padding,
                                         int64_t groups, int32_t bias, const int64_t* dilation, dt_dtype dtype,
                                         dt_device device, dt_module** out) {
  return guard([&] {
    require(out, "dt_conv_transpose2d_new", "out");
    if (!kernel_size)
      fail(DT_ERR_INVALID_ARGUMENT, "dt_conv_transpose2d_new: kernel_size is NULL (2 values: height, width)");
    flag_arg(bias, "dt_conv_transpose2d_new", "bias");
    nn::Conv2dOptions o = conv_transpose_options(kernel_size, stride, padding, output_padding, groups, dilation);
    o.in_channels = in_channels;
    o.out_channels = out_channels;
    o.bias = bias == 1;
    nn::Module* m = nn::new_conv_transpose2d(o, resolve_dtype(dtype), resolve_device(device));
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

}  // extern "C"
