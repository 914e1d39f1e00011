// Differentiable transposed 2-d convolution, as torch.nn.functional.conv_transpose2d: the
// adjoint of conv2d with respect to its input. Forward: one batched product spreads each
// input pixel over a kernel-sized patch of the output (weight^T x, the columns of conv2d's
// input gradient), and fold_windows (ops/window.h) sums the overlapping patches. Backward
// (ConvolutionBackward0, PyTorch's name): the input's gradient is conv2d of the output's
// gradient with the same weight and window; the weight's is one product of the input with
// the output gradient's windows.
#include <limits>
#include <string>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

void check_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t groups) {
  check_conv_operands("conv_transpose2d", "[in_channels, out_channels / groups, kH, kW]", x, w, bias, groups);
  const int64_t channels = x.size(x.ndim() - 3);
  if (w.size(0) % groups != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("conv_transpose2d: in_channels (", w.size(0), ", the weight's first dimension) ",
                                      "must be divisible by groups (", groups, ")"));
  if (channels != w.size(0))
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv_transpose2d: given groups=", groups, ", weight of size ", dims_str(w.shape()),
                                    ", expected input", dims_str(x.shape()), " to have ", w.size(0),
                                    " channels, but got ", channels, " channels instead"));
  const int64_t out_channels = w.size(1) * groups;
  if (bias.defined() && (bias.ndim() != 1 || bias.size(0) != out_channels))
    fail(DT_ERR_SHAPE_MISMATCH, cat("conv_transpose2d: expected bias of size [", out_channels,
                                    "] (out_channels), but got bias of size ", dims_str(bias.shape())));
}

// One output size of the transposed window; SHAPE_MISMATCH when it is below 1,
// INVALID_ARGUMENT when it, with the padding, is more than int64 holds. Computed in 128 bits: each term is
// an int64, or a product of two, so no step overflows.
int64_t transposed_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int64_t op, const Tensor& x,
                        const Tensor& w) {
  using Wide = __int128;
  const Wide out = Wide{in - 1} * s - Wide{2} * p + Wide{d} * (k - 1) + op + 1;
  const std::string args = cat(" (input of size ", dims_str(x.shape()), ", weight of size ", dims_str(w.shape()),
                               ", stride ", s, ", padding ", p, ", dilation ", d, ", output_padding ", op, ")");
  if (out < 1)
    fail(DT_ERR_SHAPE_MISMATCH,
         cat("conv_transpose2d: the output would have size ",
             out >= std::numeric_limits<int64_t>::min() ? std::to_string(static_cast<int64_t>(out)) : "below -2^63",
             args));
  // The output with its padding (the forward folds into it, the backward pads the
  // gradient to it) must fit too; it is at least the output.
  if (out + Wide{2} * p > std::numeric_limits<int64_t>::max())
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("conv_transpose2d: the output's size, padding included, would be more than int64 holds", args));
  return static_cast<int64_t>(out);
}

// x [N, C, H, W] widened with zeros to H + dh rows and W + dw columns (dh, dw >= 0).
Tensor zero_extended(const Tensor& x, int64_t dh, int64_t dw) {
  if (dh == 0 && dw == 0) return x;
  const int64_t H = x.size(2), W = x.size(3);
  Tensor p = ops::full(Dims{x.size(0), x.size(1), H + dh, W + dw}, 0.0, x.dtype(), x.device());
  ops::copy_(ops::narrow(ops::narrow(p, 2, 0, H), 3, 0, W), x);
  return p;
}

}  // namespace

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& window,
                        const int64_t output_padding[2], int64_t groups) {
  check_conv_transpose2d(input, weight, bias, groups);
  ops::Window2d win = window;  // the kernel is the weight's; padding symmetric
  win.kh = weight.size(2);
  win.kw = weight.size(3);
  const int64_t oph = output_padding[0], opw = output_padding[1];
  const bool unbatched = input.ndim() == 3;
  const Tensor x = unbatched ? ops::unsqueeze(input, 0) : input;
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t g = groups, Cg = C / g, OCg = weight.size(1), OC = OCg * g, KK = win.kh * win.kw;
  const int64_t OH = transposed_size(H, win.kh, win.sh, win.pt, win.dh, oph, x, weight);
  const int64_t OW = transposed_size(W, win.kw, win.sw, win.pl, win.dw, opw, x, weight);
  ops::check_numel_fits("conv_transpose2d", "output", Dims{N, OC, OH, OW});

  // cols [N, g, OCg*KH*KW, H*W] = weight_g^T [OCg*KK, Cg] x x_g [Cg, H*W], for every image.
  const Tensor wt = ops::transpose(ops::reshape(weight, Dims{1, g, Cg, OCg * KK}, false), 2, 3);
  const Tensor cols = ops::matmul(wt, ops::reshape(x, Dims{N, g, Cg, H * W}, false));
  // As conv2d's windows [N, OC, H, W, KH, KW] (a permuted view) of the output padded by
  // `padding` on top/left and padding - output_padding on the bottom/right. Where
  // output_padding is larger than padding, the windows stop short of the last rows: fold
  // into the rows they reach, and the rest are zeros.
  const Tensor patches = ops::permute(ops::reshape(cols, Dims{N, OC, win.kh, win.kw, H, W}, false), Dims{0, 1, 4, 5, 2, 3});
  ops::Window2d fold = win;
  fold.pb = win.pt - oph;
  fold.pr = win.pl - opw;
  const int64_t short_h = fold.pb < 0 ? -fold.pb : 0, short_w = fold.pr < 0 ? -fold.pr : 0;
  fold.pb += short_h;
  fold.pr += short_w;
  Tensor out = zero_extended(ops::fold_windows(patches, Dims{N, OC, OH - short_h, OW - short_w}, fold), short_h, short_w);
  if (bias.defined()) out = ops::binary(BinaryOp::Add, out, ops::reshape(bias, Dims{1, OC, 1, 1}, false));
  if (unbatched) out = ops::reshape(out, Dims{OC, OH, OW}, false);
  if (!should_record({&input, &weight, &bias})) return out;

  const bool need_x = requires_grad(input), need_w = requires_grad(weight), has_bias = bias.defined();
  const Tensor saved_w = need_x ? detach(weight) : Tensor(), saved_x = need_w ? detach(x) : Tensor();
  const Dims in_shape = input.shape(), w_shape = weight.shape();
  // conv2d's window over the output with symmetric padding: its output is at least H x W
  // (more when output_padding >= stride); the first H x W windows are the input's pixels.
  ops::Window2d sym = win;
  sym.pb = win.pt;
  sym.pr = win.pl;
  record(out, saving(make_node("ConvolutionBackward0", [=](const Tensor& grad) {
           const Tensor gout = unbatched ? ops::unsqueeze(grad, 0) : grad;  // [N, OC, OH, OW]
           Tensor gx, gw, gb;
           if (need_x) {
             const Tensor full_gx = conv2d(gout, saved_w, Tensor(), sym, g);  // [N, C, >= H, >= W]
             gx = ops::reshape(ops::contiguous(ops::narrow(ops::narrow(full_gx, 2, 0, H), 3, 0, W)), in_shape, false);
           }
           if (need_w) {
             // windows [N, OC, H, W, KH, KW] -> [N, g, H*W, OCg*KK]; x_g [N, g, Cg, H*W]; the
             // products [N, g, Cg, OCg*KK] summed over the images.
             const Tensor v = ops::narrow(ops::narrow(ops::windows(gout, sym, 0.0), 2, 0, H), 3, 0, W);
             const Tensor vg = ops::reshape(
                 ops::contiguous(ops::permute(ops::reshape(v, Dims{N, g, OCg, H, W, win.kh, win.kw}, false),
                                              Dims{0, 1, 3, 4, 2, 5, 6})),
                 Dims{N, g, H * W, OCg * KK}, false);
             const int64_t batch_dim = 0;
             const Tensor prod = ops::matmul(ops::reshape(saved_x, Dims{N, g, Cg, H * W}, false), vg);
             gw = ops::reshape(ops::reduce(ReduceOp::Sum, prod, &batch_dim, 1, false), w_shape, false);
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

}  // namespace dt::ag
