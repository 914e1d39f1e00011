// Differentiable 2-d convolution, as torch.nn.functional.conv2d. Each pass (forward,
// input gradient, weight gradient) goes first to the backend's convolution library
// (Backend::conv2d_*: oneDNN for float32 on the CPU); where it has none, to im2col
// (ops/window.h) and one batched matrix product per call (a batch of `groups` products),
// the way libtorch's slow_conv2d and BLAS-based frameworks compute it, whose backward
// (ConvolutionBackward0) reuses the forward's columns for the weight's gradient and folds
// the columns' gradient back with col2im for the input's.
#include "core/backend.h"
#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace dt::ag {

void check_conv_operands(const char* op, const char* weight_layout, const Tensor& x, const Tensor& w,
                         const Tensor& bias, int64_t groups) {
  if (x.ndim() != 3 && x.ndim() != 4)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected a 3-d (unbatched) or 4-d (batched) input, but got input of size ",
                                    dims_str(x.shape())));
  if (w.ndim() != 4)
    fail(DT_ERR_SHAPE_MISMATCH,
         cat(op, ": expected a 4-d weight ", weight_layout, ", but got weight of size ", dims_str(w.shape())));
  if (groups <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": groups must be positive, got ", groups));
  // The channels the weight's second dimension stands for (conv2d's input, conv_transpose2d's
  // output) are w.size(1) * groups, which the checks after this one compute.
  int64_t grouped = 0;
  if (__builtin_mul_overflow(w.size(1), groups, &grouped))
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": groups=", groups, " times the weight's second dimension (weight of size ",
                                    dims_str(w.shape()), ") is more channels than int64 holds"));
  ops::check_same_device(op, x, w);
  if (bias.defined()) ops::check_same_device(op, x, bias);
  if (x.dtype() != w.dtype() || (bias.defined() && bias.dtype() != x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": input (", dtype_name(x.dtype()), "), weight (", dtype_name(w.dtype()), ")",
                                    bias.defined() ? cat(" and bias (", dtype_name(bias.dtype()), ")") : std::string(),
                                    " must have the same dtype"));
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": not implemented for ", dtype_name(x.dtype()), " (a floating dtype is needed)"));
}

namespace {

using G = std::vector<Tensor>;

void check_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t groups) {
  check_conv_operands("conv2d", "[out_channels, in_channels / groups, kH, kW]", x, w, bias, groups);
  const int64_t channels = x.size(x.ndim() - 3);
  if (w.size(0) % groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("conv2d: out_channels (", w.size(0), ", the weight's first dimension) must be ",
                                      "divisible by groups (", groups, ")"));
  if (channels != w.size(1) * groups)
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv2d: given groups=", groups, ", weight of size ", dims_str(w.shape()),
                                    ", expected input", dims_str(x.shape()), " to have ", w.size(1) * groups,
                                    " channels, but got ", channels, " channels instead"));
  if (bias.defined() && (bias.ndim() != 1 || bias.size(0) != w.size(0)))
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv2d: expected bias of size [", w.size(0), "] (out_channels), but got bias of size ",
                                    dims_str(bias.shape())));
}

// The sizes of one conv2d call.
struct ConvShape {
  ops::Window2d win;  // the kernel is the weight's
  int64_t N, C, OC, g, OCg, OH, OW, L, Kg;
  Dims x_shape, w_shape;
};

ConvShape conv_shape(const Tensor& x, const Tensor& w, const ops::Window2d& window, int64_t groups) {
  ConvShape s;
  s.win = window;
  s.win.kh = w.size(2);
  s.win.kw = w.size(3);
  s.N = x.size(0), s.C = x.size(1), s.OC = w.size(0), s.g = groups, s.OCg = s.OC / groups;
  ops::window_output("conv2d", s.win, x.size(2), x.size(3), &s.OH, &s.OW);
  // The output and im2col's columns must be tensors int64 can count; then every product
  // of their sizes below fits too.
  ops::check_numel_fits("conv2d", "output", Dims{s.N, s.OC, s.OH, s.OW});
  ops::check_numel_fits("conv2d", "columns", Dims{s.N, s.OH, s.OW, s.C, s.win.kh, s.win.kw});
  s.L = s.OH * s.OW, s.Kg = (s.C / groups) * s.win.kh * s.win.kw;
  s.x_shape = x.shape(), s.w_shape = w.shape();
  return s;
}

ConvGeometry geometry_of(const ConvShape& s) {
  ConvGeometry geo;
  geo.stride[0] = s.win.sh, geo.stride[1] = s.win.sw;
  geo.pad_begin[0] = s.win.pt, geo.pad_begin[1] = s.win.pl;
  geo.pad_end[0] = s.win.pb, geo.pad_end[1] = s.win.pr;
  geo.dilation[0] = s.win.dh, geo.dilation[1] = s.win.dw;
  geo.groups = s.g;
  return geo;
}

// The im2col path, for every dtype and backend: columns cols [N, L, C*KH*KW] and one
// batched matrix product (groups = 1: one product per image, weight [OC, K] x cols^T
// [K, L], a transposed view BLAS reads with its transpose flag, landing in [N, OC, OH, OW]
// order with no permuting copy; otherwise a batch of g products [N*L, Kg] x [Kg, OCg]).
Tensor im2col_forward(const Tensor& x, const Tensor& w, const Tensor& cols, const ConvShape& s) {
  if (s.g == 1)
    return ops::reshape(ops::matmul(ops::reshape(w, Dims{s.OC, s.Kg}, false), ops::transpose(cols, 1, 2)),
                        Dims{s.N, s.OC, s.OH, s.OW}, false);
  const Tensor a = ops::transpose(ops::reshape(cols, Dims{s.N * s.L, s.g, s.Kg}, false), 0, 1);
  const Tensor b = ops::transpose(ops::reshape(w, Dims{s.g, s.OCg, s.Kg}, false), 1, 2);
  const Tensor y = ops::matmul(a, b);  // [g, N*L, OCg]
  return ops::reshape(ops::permute(ops::reshape(y, Dims{s.g, s.N, s.OH, s.OW, s.OCg}, false), Dims{1, 0, 4, 2, 3}),
                      Dims{s.N, s.OC, s.OH, s.OW}, false);
}

// [N, OC, OH, OW] -> [g, N*L, OCg], the layout of the grouped forward's product.
Tensor grouped_gout(const Tensor& gout, const ConvShape& s) {
  return ops::reshape(ops::permute(ops::reshape(gout, Dims{s.N, s.g, s.OCg, s.OH, s.OW}, false), Dims{1, 0, 3, 4, 2}),
                      Dims{s.g, s.N * s.L, s.OCg}, false);
}

// The forward's products transposed: the columns' gradient, folded back onto the input.
Tensor im2col_input_grad(const Tensor& gout, const Tensor& w, const ConvShape& s) {
  const ops::Window2d& win = s.win;
  if (s.g == 1) {
    const Tensor gv = ops::reshape(gout, Dims{s.N, s.OC, s.L}, false);
    const Tensor gcols = ops::matmul(ops::transpose(ops::reshape(w, Dims{s.OC, s.Kg}, false), 0, 1), gv);  // [N, K, L]
    const Tensor g6 = ops::reshape(gcols, Dims{s.N, s.C, win.kh, win.kw, s.OH, s.OW}, false);
    return ops::fold_windows(ops::permute(g6, Dims{0, 1, 4, 5, 2, 3}), s.x_shape, win);
  }
  const Tensor b = ops::transpose(ops::reshape(w, Dims{s.g, s.OCg, s.Kg}, false), 1, 2);
  Tensor gcols = ops::matmul(grouped_gout(gout, s), ops::transpose(b, 1, 2));  // [g, N*L, Kg]
  gcols = ops::reshape(ops::transpose(gcols, 0, 1), Dims{s.N, s.L, s.C * win.kh * win.kw}, false);
  return ops::col2im(gcols, s.x_shape, win);
}

Tensor im2col_weight_grad(const Tensor& gout, const Tensor& cols, const ConvShape& s) {
  if (s.g == 1) {
    const int64_t batch_dim = 0;  // summed over images of [OC, L] x [L, K]
    const Tensor gv = ops::reshape(gout, Dims{s.N, s.OC, s.L}, false);
    return ops::reshape(ops::reduce(ReduceOp::Sum, ops::matmul(gv, cols), &batch_dim, 1, false), s.w_shape, false);
  }
  const Tensor a = ops::transpose(ops::reshape(cols, Dims{s.N * s.L, s.g, s.Kg}, false), 0, 1);
  return ops::reshape(ops::matmul(ops::transpose(grouped_gout(gout, s), 1, 2), a), s.w_shape, false);
}

// The backend's convolution library (Backend::conv2d_*: oneDNN on the CPU), when it has a
// kernel for these operands; an undefined tensor when not. While a graph captures, never:
// a hook runs at once, and whether it has a kernel is known only by running it, so a
// capture records the im2col path, op by op (core/graph.h).
Tensor library_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvShape& s) {
  if (capturing(x.device())) return Tensor();
  Tensor out = ops::empty(Dims{s.N, s.OC, s.OH, s.OW}, x.dtype(), x.device());
  const Tensor b = bias.defined() ? ops::contiguous(bias) : Tensor();
  if (!backend_for(x.device()).conv2d_forward(out, x, w, b.defined() ? &b : nullptr, geometry_of(s))) return Tensor();
  return out;
}
Tensor library_input_grad(const Tensor& gout, const Tensor& w, const ConvShape& s) {
  if (capturing(gout.device())) return Tensor();
  Tensor gx = ops::empty(s.x_shape, gout.dtype(), gout.device());
  return backend_for(gout.device()).conv2d_input_grad(gx, gout, w, geometry_of(s)) ? gx : Tensor();
}
Tensor library_weight_grad(const Tensor& gout, const Tensor& x, const ConvShape& s) {
  if (capturing(gout.device())) return Tensor();
  Tensor gw = ops::empty(s.w_shape, gout.dtype(), gout.device());
  return backend_for(gout.device()).conv2d_weight_grad(gw, x, gout, geometry_of(s)) ? gw : Tensor();
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& window,
              int64_t groups) {
  check_conv2d(input, weight, bias, groups);
  const bool unbatched = input.ndim() == 3;
  const Tensor x = ops::contiguous(unbatched ? ops::unsqueeze(input, 0) : input);
  const Tensor w = ops::contiguous(weight);
  const ConvShape s = conv_shape(x, w, window, groups);

  // The backend's library when it takes these operands (bias included), else im2col.
  Tensor out = library_forward(x, w, bias, s), cols;
  const bool by_library = out.defined();
  if (!by_library) {
    cols = ops::im2col(x, s.win);
    out = im2col_forward(x, w, cols, s);
    if (bias.defined()) out = ops::binary(BinaryOp::Add, out, ops::reshape(bias, Dims{1, s.OC, 1, 1}, false));
  }
  if (unbatched) out = ops::reshape(out, Dims{s.OC, s.OH, s.OW}, false);
  if (!should_record({&input, &weight, &bias})) return out;

  // The weight's gradient needs the input (the library) or its columns (im2col).
  const bool need_x = requires_grad(input), need_w = requires_grad(weight), has_bias = bias.defined();
  const Dims in_shape = input.shape();
  const Tensor saved_w = need_x ? detach(w) : Tensor();
  const Tensor saved_x = need_w && by_library ? detach(x) : Tensor();
  const Tensor saved_cols = need_w && !by_library ? cols : Tensor();
  record(out, saving(make_node("ConvolutionBackward0", [=](const Tensor& grad) {
           const Tensor gout = ops::contiguous(unbatched ? ops::unsqueeze(grad, 0) : grad);  // [N, OC, OH, OW]
           Tensor gx, gw, gb;
           if (need_x) {
             gx = by_library ? library_input_grad(gout, saved_w, s) : Tensor();
             if (!gx.defined()) gx = im2col_input_grad(gout, saved_w, s);
             gx = ops::reshape(gx, in_shape, false);
           }
           if (need_w) {
             gw = by_library ? library_weight_grad(gout, saved_x, s) : Tensor();
             if (!gw.defined()) gw = im2col_weight_grad(gout, by_library ? ops::im2col(saved_x, s.win) : saved_cols, s);
           }
           if (has_bias) {
             const int64_t dims[] = {0, 2, 3};
             gb = ops::reduce(ReduceOp::Sum, gout, dims, 3, false);
           }
           return G{gx, gw, gb};
         }), {&saved_w, &saved_x}),
         {&input, &weight, &bias});
  return out;
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& window,
              int64_t groups) {
  if (input.ndim() != 2 && input.ndim() != 3)
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv1d: expected a 2-d (unbatched) or 3-d (batched) input, but got input of size ",
                                    dims_str(input.shape())));
  if (weight.ndim() != 3)
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv1d: expected a 3-d weight [out_channels, in_channels / groups, kW], but got ",
                                    "weight of size ", dims_str(weight.shape())));
  ops::Window2d win = window;  // height 1
  win.kh = win.sh = win.dh = 1;
  win.pt = win.pb = 0;
  const int64_t h = input.ndim() - 1;  // the new height dim, before the length
  Tensor out = conv2d(unsqueeze(input, h), unsqueeze(weight, 2), bias, win, groups);
  return squeeze(out, &h, 1);
}

}  // namespace dt::ag
