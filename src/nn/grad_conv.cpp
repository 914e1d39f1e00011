// Differentiable 2-d convolution, as torch.nn.functional.conv2d: im2col (ops/window.h)
// and one batched matrix product per call (a batch of `groups` products), the way
// libtorch's slow_conv2d and BLAS-based frameworks compute it. The backward
// (ConvolutionBackward0) reuses the forward's columns for the weight's gradient and
// folds the columns' gradient back with col2im for the input's.
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

void check_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t groups) {
  if (x.ndim() != 3 && x.ndim() != 4)
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv2d: expected a 3-d (unbatched) or 4-d (batched) input, but got input of size ",
                                    dims_str(x.shape())));
  if (w.ndim() != 4)
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv2d: expected a 4-d weight [out_channels, in_channels / groups, kH, kW], but got ",
                                    "weight of size ", dims_str(w.shape())));
  if (groups <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat("conv2d: groups must be positive, got ", groups));
  ops::check_same_device("conv2d", x, w);
  if (bias.defined()) ops::check_same_device("conv2d", x, bias);
  if (x.dtype() != w.dtype() || (bias.defined() && bias.dtype() != x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("conv2d: input (", dtype_name(x.dtype()), "), weight (", dtype_name(w.dtype()), ")",
                                    bias.defined() ? cat(" and bias (", dtype_name(bias.dtype()), ")") : std::string(),
                                    " must have the same dtype"));
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("conv2d: not implemented for ", dtype_name(x.dtype()), " (a floating dtype is needed)"));
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

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& window,
              int64_t groups) {
  check_conv2d(input, weight, bias, groups);
  ops::Window2d win = window;  // the kernel is the weight's
  win.kh = weight.size(2);
  win.kw = weight.size(3);
  const bool unbatched = input.ndim() == 3;
  const Tensor x = unbatched ? ops::unsqueeze(input, 0) : input;
  const int64_t N = x.size(0), C = x.size(1), OC = weight.size(0), g = groups, OCg = OC / g;
  int64_t OH = 0, OW = 0;
  ops::window_output("conv2d", win, x.size(2), x.size(3), &OH, &OW);
  const int64_t L = OH * OW, Kg = (C / g) * win.kh * win.kw;

  // cols [N, L, C*KH*KW] -> [g, N*L, Kg]; weight [OC, C/g, KH, KW] -> [g, Kg, OCg].
  Tensor cols = ops::im2col(x, win);
  Tensor a = ops::transpose(ops::reshape(cols, Dims{N * L, g, Kg}, false), 0, 1);
  Tensor b = ops::transpose(ops::reshape(weight, Dims{g, OCg, Kg}, false), 1, 2);
  Tensor out;
  if (g == 1) {
    // One product per image, weight [OC, K] x cols^T [K, L] (a transposed view: BLAS reads
    // it with the transpose flag), lands in [N, OC, OH, OW] order with no permuting copy.
    out = ops::reshape(ops::matmul(ops::reshape(weight, Dims{OC, Kg}, false), ops::transpose(cols, 1, 2)),
                       Dims{N, OC, OH, OW}, false);
  } else {
    Tensor y = ops::matmul(a, b);  // [g, N*L, OCg]
    out = ops::reshape(ops::permute(ops::reshape(y, Dims{g, N, OH, OW, OCg}, false), Dims{1, 0, 4, 2, 3}),
                       Dims{N, OC, OH, OW}, false);
  }
  if (bias.defined()) out = ops::binary(BinaryOp::Add, out, ops::reshape(bias, Dims{1, OC, 1, 1}, false));
  if (unbatched) out = ops::reshape(out, Dims{OC, OH, OW}, false);
  if (!should_record({&input, &weight, &bias})) return out;

  const bool need_x = requires_grad(input), need_w = requires_grad(weight), has_bias = bias.defined();
  const Dims x_shape = x.shape(), w_shape = weight.shape(), in_shape = input.shape();
  Tensor saved_a = need_w && g != 1 ? a : Tensor(), saved_b = need_x && g != 1 ? detach(b) : Tensor();
  const Tensor saved_cols = need_w && g == 1 ? cols : Tensor(), saved_w = need_x && g == 1 ? detach(weight) : Tensor();
  record(out, make_node("ConvolutionBackward0", [=](const Tensor& grad) {
           Tensor gout = unbatched ? ops::unsqueeze(grad, 0) : grad;  // [N, OC, OH, OW]
           Tensor gx, gw, gb;
           if (g == 1) {
             // The forward's per-image products, transposed: no permuting copy of the gradient.
             const Tensor gv = ops::reshape(gout, Dims{N, OC, L}, false);
             if (need_x) {
               const Tensor w2 = ops::reshape(saved_w, Dims{OC, Kg}, false);
               const Tensor gcols = ops::matmul(ops::transpose(w2, 0, 1), gv);  // [N, K, L]
               const Tensor g6 = ops::reshape(gcols, Dims{N, C, win.kh, win.kw, OH, OW}, false);
               gx = ops::reshape(ops::fold_windows(ops::permute(g6, Dims{0, 1, 4, 5, 2, 3}), x_shape, win), in_shape,
                                 false);
             }
             if (need_w) {
               const int64_t batch_dim = 0;
               gw = ops::reshape(ops::reduce(ReduceOp::Sum, ops::matmul(gv, saved_cols), &batch_dim, 1, false), w_shape,
                                 false);  // sum over images of [OC, L] x [L, K]
             }
           } else {
             // [N, g, OCg, OH, OW] -> [g, N*L, OCg], the layout of the forward's product.
             Tensor gy = ops::reshape(
                 ops::permute(ops::reshape(gout, Dims{N, g, OCg, OH, OW}, false), Dims{1, 0, 3, 4, 2}),
                 Dims{g, N * L, OCg}, false);
             if (need_x) {
               Tensor gcols = ops::matmul(gy, ops::transpose(saved_b, 1, 2));  // [g, N*L, Kg]
               gcols = ops::reshape(ops::transpose(gcols, 0, 1), Dims{N, L, C * win.kh * win.kw}, false);
               gx = ops::reshape(ops::col2im(gcols, x_shape, win), in_shape, false);
             }
             if (need_w) gw = ops::reshape(ops::matmul(ops::transpose(gy, 1, 2), saved_a), w_shape, false);
           }
           if (has_bias) {
             const int64_t dims[] = {0, 2, 3};
             gb = ops::reduce(ReduceOp::Sum, gout, dims, 3, false);
           }
           return G{gx, gw, gb};
         }),
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
