// torch.nn.functional.interpolate, differentiable, built from index_select: each spatial
// dim is resized on its own (the modes are separable), from the last dim to the first as
// PyTorch's kernels nest their sums. "nearest" gathers one input position per output
// position; the linear modes gather the two neighbours and mix them with weights, so the
// gradient is index_select's (each input element gets the weighted sum over the outputs
// that read it). Indices and weights follow PyTorch's arithmetic, in float (double for
// float64 inputs), so that results agree to the last bits where they can.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

// PyTorch's compute_scales_value: the input step per output step, from the given factor
// (1 / factor) or from the sizes.
template <typename T>
T coordinate_scale(const InterpolateOptions& o, size_t i, int64_t in, int64_t out) {
  if (!o.scale.empty()) return static_cast<T>(1.0 / o.scale[o.scale.size() == 1 ? 0 : i]);
  return static_cast<T>(in) / static_cast<T>(out);
}

// PyTorch's nearest_idx (always in float).
std::vector<int64_t> nearest_indices(const InterpolateOptions& o, size_t i, int64_t in, int64_t out) {
  std::vector<int64_t> idx(static_cast<size_t>(out));
  const float scale = coordinate_scale<float>(o, i, in, out);
  for (int64_t j = 0; j < out; ++j) {
    if (out == in)
      idx[j] = j;
    else if (out == 2 * in)
      idx[j] = j >> 1;
    else
      idx[j] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(j) * scale)), in - 1);
  }
  return idx;
}

// The two neighbours of each output position and their weights (PyTorch's
// area_pixel_compute_source_index and compute_indices_weights_linear).
template <typename T>
void linear_weights(const InterpolateOptions& o, size_t i, int64_t in, int64_t out, std::vector<int64_t>& i0,
                    std::vector<int64_t>& i1, std::vector<T>& w0, std::vector<T>& w1) {
  T scale;
  if (o.align_corners)
    scale = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  else
    scale = coordinate_scale<T>(o, i, in, out);
  for (int64_t j = 0; j < out; ++j) {
    T src = o.align_corners ? scale * static_cast<T>(j) : scale * (static_cast<T>(j) + T(0.5)) - T(0.5);
    if (src < T(0)) src = T(0);
    const int64_t lo = static_cast<int64_t>(src);
    const int64_t hi = lo + (lo < in - 1 ? 1 : 0);
    const T l1 = src - static_cast<T>(lo);
    i0.push_back(lo);
    i1.push_back(hi);
    w0.push_back(T(1) - l1);
    w1.push_back(l1);
  }
}

// Weights [out] as a tensor of x's dtype shaped to broadcast along dim.
template <typename T>
Tensor weight_tensor(const std::vector<T>& w, const Tensor& x, int64_t dim) {
  const DType host = std::is_same<T, double>::value ? DType::Float64 : DType::Float32;
  Tensor t = ops::from_host(w.data(), w.size() * sizeof(T), Dims{static_cast<int64_t>(w.size())}, host, x.device());
  Dims shape;
  shape.push(static_cast<int64_t>(w.size()));
  for (int64_t d = dim + 1; d < x.ndim(); ++d) shape.push(1);
  return ops::reshape(ops::to(t, x.device(), x.dtype(), false), shape, false);
}

Tensor index_tensor(const std::vector<int64_t>& idx, Device device) {
  return ops::from_host(idx.data(), idx.size() * sizeof(int64_t), Dims{static_cast<int64_t>(idx.size())}, DType::Int64,
                        device);
}

template <typename T>
Tensor linear_pass(const Tensor& x, const InterpolateOptions& o, size_t i, int64_t dim, int64_t out) {
  std::vector<int64_t> i0, i1;
  std::vector<T> w0, w1;
  linear_weights<T>(o, i, x.size(dim), out, i0, i1, w0, w1);
  const Tensor a = binary(BinaryOp::Mul, index_select(x, dim, index_tensor(i0, x.device())), weight_tensor(w0, x, dim));
  const Tensor b = binary(BinaryOp::Mul, index_select(x, dim, index_tensor(i1, x.device())), weight_tensor(w1, x, dim));
  return binary(BinaryOp::Add, a, b);
}

const char* backward_name(const InterpolateOptions& o, int64_t spatial) {
  static const char* const nearest[] = {"UpsampleNearest1DBackward1", "UpsampleNearest2DBackward1",
                                        "UpsampleNearest3DBackward1"};
  static const char* const linear[] = {"UpsampleLinear1DBackward1", "UpsampleBilinear2DBackward1",
                                       "UpsampleTrilinear3DBackward1"};
  return (o.linear_dims ? linear : nearest)[spatial - 1];
}

}  // namespace

void check_interpolate_options(const InterpolateOptions& o, const char* who) {
  if (o.size.empty() == o.scale.empty())
    fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": exactly one of size and scale_factor must be given"));
  for (int64_t v : o.size)
    if (v <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": output sizes must be positive, got ", v));
  for (double f : o.scale)
    if (!(f > 0) || !std::isfinite(f))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": scale factors must be positive and finite, got ", f));
  if (o.align_corners && !o.linear_dims)
    fail(DT_ERR_INVALID_ARGUMENT, cat(who,
                                      ": align_corners can only be set with the interpolating modes (linear, "
                                      "bilinear, trilinear), not \"",
                                      o.mode, "\""));
}

Tensor interpolate(const Tensor& x, const InterpolateOptions& o, const char* who) {
  check_interpolate_options(o, who);
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(who, ": expected a floating input, got ", dtype_name(x.dtype())));
  const int64_t spatial = x.ndim() - 2;
  if (spatial < 1 || spatial > 3)
    fail(DT_ERR_SHAPE_MISMATCH,
         cat(who, ": expected an input [N, C, L], [N, C, H, W] or [N, C, D, H, W], got ", dims_str(x.shape())));
  if (o.linear_dims && spatial != o.linear_dims)
    fail(DT_ERR_SHAPE_MISMATCH,
         cat(who, ": mode \"", o.mode, "\" takes a ", o.linear_dims + 2, "-d input, got ", dims_str(x.shape())));
  const size_t n = o.size.empty() ? o.scale.size() : o.size.size();
  if (n != 1 && n != static_cast<size_t>(spatial))
    fail(DT_ERR_INVALID_ARGUMENT,
         cat(who, ": ", n, " ", o.size.empty() ? "scale factors" : "sizes", " for an input ", dims_str(x.shape()),
             " with ", spatial, " spatial dims (give 1 or ", spatial, ")"));
  std::vector<int64_t> out(static_cast<size_t>(spatial));
  for (int64_t i = 0; i < spatial; ++i) {
    const int64_t in = x.size(2 + i);
    const size_t k = n == 1 ? 0 : static_cast<size_t>(i);
    // Output sizes stay below 2^60 (their index lists take 8 bytes an element).
    constexpr double kMaxSize = static_cast<double>(int64_t{1} << 60);
    const double scaled = std::floor(static_cast<double>(in) * (o.size.empty() ? o.scale[k] : 1.0));
    if ((o.size.empty() && scaled >= kMaxSize) || (!o.size.empty() && o.size[k] >= (int64_t{1} << 60)))
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": the output size of spatial dim ", i, " would be too large"));
    out[i] = o.size.empty() ? static_cast<int64_t>(scaled) : o.size[k];
    if (in <= 0 || out[i] <= 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(who, ": input and output sizes must be positive, but spatial dim ", i,
                                        " goes from ", in, " to ", out[i], " (input ", dims_str(x.shape()), ")"));
  }
  // Half and bfloat16 mix in float and round once at the end, as PyTorch's kernels do
  // (rounding after each product and sum loses up to 3% in bfloat16).
  const bool narrow_float = o.linear_dims && (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16);
  Tensor y = narrow_float ? to(x, x.device(), DType::Float32, false) : x;
  for (int64_t i = spatial - 1; i >= 0; --i) {
    const int64_t dim = 2 + i;
    if (!o.linear_dims) {
      y = index_select(y, dim,
                       index_tensor(nearest_indices(o, static_cast<size_t>(i), x.size(dim), out[i]), x.device()));
    } else if (x.dtype() == DType::Float64) {
      y = linear_pass<double>(y, o, static_cast<size_t>(i), dim, out[i]);
    } else {
      y = linear_pass<float>(y, o, static_cast<size_t>(i), dim, out[i]);
    }
  }
  if (narrow_float) y = to(y, x.device(), x.dtype(), false);
  return named_result(y, backward_name(o, spatial));
}

}  // namespace dt::ag
