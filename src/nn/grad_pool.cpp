// Differentiable 2-d pooling, as torch.nn.functional's max_pool2d, avg_pool2d and
// adaptive_avg_pool2d. Max pooling runs on the backend's kernel where it has one
// (Backend::max_pool2d_forward: the CPU's), its gradient a scatter-add to the recorded
// indices; elsewhere max and average pooling reduce the windows view of ops/window.h,
// their backward passes sending the gradient back through fold_windows (max pooling's to
// the argmax of each window only). Adaptive average pooling is two products
// with averaging matrices (PyTorch's start = floor(i * H / OH), end = ceil((i + 1) * H / OH)
// windows), so autograd comes from matmul's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/backend.h"
#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"
#include "ops/window.h"
#include "ops/window_range.h"

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

void check_pool_input(const char* op, const Tensor& x) {
  if (x.ndim() != 3 && x.ndim() != 4)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": expected a 3-d (unbatched) or 4-d (batched) input, but got input of size ",
                                    dims_str(x.shape())));
  if (!is_floating(x.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": not implemented for ", dtype_name(x.dtype()), " (a floating dtype is needed)"));
}

// PyTorch's rule: padding at most half the kernel size, rounded down (kernel_size / 2 >=
// padding), dilation or not; so no window lies in padding only.
void check_half_padding(const char* op, const ops::Window2d& w) {
  if (w.pt > w.kh / 2 || w.pl > w.kw / 2)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": padding should be at most half of the kernel size (kernel_size / 2), but got ",
                                      ops::window_str(w)));
}

Tensor batched(const Tensor& x) { return x.ndim() == 3 ? ops::unsqueeze(x, 0) : x; }

// ceil_mode: PyTorch rounds the output size up, out = ceil((in + 2p - d(k - 1) - 1) / s) + 1,
// less one when the last window would start past the input and its left padding. The
// windows of the extra output row/column hang over the bottom/right: the window gets that
// much more bottom/right padding, which max pooling fills with -inf and average pooling
// leaves out of the divisor. So a kernel larger than the padded input by less than the
// stride still gives one window, over the whole input (a 3 x 3 input, kernel 4: one).
// check_window has checked that the padded input and the dilated kernel fit in int64;
// the rest is computed in 128 bits, as a stride may be as large as INT64_MAX. The
// overhang is less than the stride, and at most the dilated kernel, so it fits.
int64_t ceil_overhang(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  using Wide = __int128;
  const Wide padded = Wide{in} + Wide{2} * p, kernel = Wide{d} * (k - 1) + 1;
  const Wide span = padded - kernel;
  if (span + s - 1 < 0) return 0;  // no window even rounding up: window_output says so
  Wide out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= Wide{in} + p) --out;
  if (out < 1) return 0;  // an empty input without padding: as above
  const Wide overhang = (out - 1) * s + kernel - padded;
  return overhang > 0 ? static_cast<int64_t>(overhang) : 0;
}

ops::Window2d ceil_window(const char* op, const ops::Window2d& w, const Tensor& x) {
  ops::check_window(op, w, x.size(2), x.size(3));  // the arguments' own errors first
  ops::Window2d c = w;
  if (__builtin_add_overflow(c.pb, ceil_overhang(x.size(2), w.kh, w.sh, w.pt, w.dh), &c.pb) ||
      __builtin_add_overflow(c.pr, ceil_overhang(x.size(3), w.kw, w.sw, w.pl, w.dw), &c.pr))
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": the padding with ceil_mode's overhang is larger than int64 holds (",
                                      ops::window_str(w), ")"));
  int64_t oh = 0, ow = 0;
  ops::window_output(op, c, x.size(2), x.size(3), &oh, &ow);  // a kernel that no rounding fits fails here
  return c;
}
Tensor unbatched_like(const Tensor& out, const Tensor& input) {
  return input.ndim() == 3 ? ops::reshape(out, Dims{out.size(1), out.size(2), out.size(3)}, false) : out;
}

// Whether a window along one axis (out of them, k elements d apart, s apart, the first
// starting p before the input) holds no element of the input: only padding, or a
// dilation that steps over the input (kernel 2, dilation 2 and padding 1 over one row).
// PyTorch's padding rule does not rule that out; such a window's maximum is -inf, its
// index -1 (the backends' kernels), and it passes no gradient. O(out) on the host.
bool has_empty_window(int64_t size, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  for (int64_t o = 0; o < out; ++o) {
    int64_t first = 0, last = 0;
    ops::window_inside(o * s - p, k, d, size, &first, &last);
    if (first == last) return true;
  }
  return false;
}

// The backend's max pooling (Backend::max_pool2d_forward), with PyTorch's plane indices;
// undefined tensors when the backend has none for x.
std::pair<Tensor, Tensor> backend_max_pool(const Tensor& x, const ops::Window2d& w) {
  if (capturing(x.device())) return {};  // a hook runs at once: captures record the ops (core/graph.h)
  int64_t OH = 0, OW = 0;
  ops::window_output("max_pool2d", w, x.size(2), x.size(3), &OH, &OW);
  const Tensor xc = ops::contiguous(x);
  Tensor out = ops::empty(Dims{x.size(0), x.size(1), OH, OW}, x.dtype(), x.device());
  Tensor indices = ops::empty(Dims{x.size(0), x.size(1), OH, OW}, DType::Int64, x.device());
  PoolGeometry g;
  g.kernel[0] = w.kh, g.kernel[1] = w.kw, g.stride[0] = w.sh, g.stride[1] = w.sw;
  g.pad_begin[0] = w.pt, g.pad_begin[1] = w.pl, g.dilation[0] = w.dh, g.dilation[1] = w.dw;
  if (!backend_for(x.device()).max_pool2d_forward(out, indices, xc, g)) return {};
  return {out, indices};
}

}  // namespace

Tensor max_pool2d(const Tensor& input, const ops::Window2d& window, bool ceil_mode) {
  check_pool_input("max_pool2d", input);
  check_half_padding("max_pool2d", window);
  const Tensor x = batched(input);
  const ops::Window2d w = ceil_mode ? ceil_window("max_pool2d", window, x) : window;
  if (auto [pooled, indices] = backend_max_pool(x, w); pooled.defined()) {
    Tensor out = unbatched_like(pooled, input);
    if (!should_record({&input})) return out;
    const Dims x_shape = x.shape(), in_shape = input.shape();
    const Tensor idx = ops::reshape(indices, Dims{x_shape.v[0], x_shape.v[1], -1}, false);
    const bool empty = has_empty_window(x.size(2), pooled.size(2), w.kh, w.sh, w.pt, w.dh) ||
                       has_empty_window(x.size(3), pooled.size(3), w.kw, w.sw, w.pl, w.dw);
    record(out, make_node("MaxPool2DWithIndicesBackward0", [=](const Tensor& grad) {
             // Each output's gradient lands on its window's largest element of the plane;
             // an empty window's (index -1) nowhere, as in PyTorch.
             Tensor g = ops::reshape(grad, idx.shape(), false), at = idx;
             if (empty) {
               const Tensor inside = ops::binary_scalar(BinaryOp::Ge, idx, 0.0);
               g = ops::where(inside, g, ops::full(Dims{}, 0.0, g.dtype(), g.device()));
               at = ops::where(inside, idx, ops::full(Dims{}, 0.0, DType::Int64, idx.device()));
             }
             Tensor gx = ops::full(Dims{x_shape.v[0], x_shape.v[1], x_shape.v[2] * x_shape.v[3]}, 0.0, grad.dtype(),
                                   grad.device());
             ops::scatter_add_(gx, 2, at, g);
             return G{ops::reshape(gx, in_shape, false)};
           }),
           {&input});
    return out;
  }
  Tensor v = ops::windows(x, w, -std::numeric_limits<double>::infinity());
  const int64_t N = v.size(0), C = v.size(1), OH = v.size(2), OW = v.size(3);
  int64_t K = 0;
  // kh * kw overflows only when the padded input holds no element (it is at least kh x kw
  // in its spatial dims, and no tensor holds more elements than int64 counts): the result
  // is then empty, and so is every gradient that reaches the input (found by fuzz_nn).
  const bool kernel_overflows = __builtin_mul_overflow(w.kh, w.kw, &K);
  const bool recording = should_record({&input});
  if (!recording || kernel_overflows) {
    // No indices needed: the largest value of each window straight off the view, without
    // first copying every window out ([N, C, OH, OW, kh, kw], kh * kw times the output).
    const int64_t window_dims[2] = {4, 5};
    Tensor out = unbatched_like(ops::reduce(ReduceOp::Max, v, window_dims, 2, false), input);
    if (!recording) return out;
    const Dims in_shape = input.shape();
    record(out, make_node("MaxPool2DWithIndicesBackward0", [=](const Tensor& grad) {
             return G{ops::full(in_shape, 0.0, grad.dtype(), grad.device())};
           }),
           {&input});
    return out;
  }
  Tensor flat = ops::reshape(ops::contiguous(v), Dims{N, C, OH, OW, K}, false);
  const int64_t last = 4;
  Tensor out = unbatched_like(ops::reduce(ReduceOp::Max, flat, &last, 1, false), input);
  Tensor idx = ops::unsqueeze(ops::reduce(ReduceOp::ArgMax, flat, &last, 1, false), 4);  // [N, C, OH, OW, 1]
  const Dims x_shape = x.shape(), in_shape = input.shape();
  record(out, make_node("MaxPool2DWithIndicesBackward0", [=](const Tensor& grad) {
           Tensor g = ops::reshape(grad, Dims{N, C, OH, OW, 1}, false);
           Tensor cols = ops::full(Dims{N, C, OH, OW, K}, 0.0, grad.dtype(), grad.device());
           ops::scatter_add_(cols, 4, idx, g);
           Tensor gx = ops::fold_windows(ops::reshape(cols, Dims{N, C, OH, OW, w.kh, w.kw}, false), x_shape, w);
           return G{ops::reshape(gx, in_shape, false)};
         }),
         {&input});
  return out;
}

Tensor avg_pool2d(const Tensor& input, const ops::Window2d& window, bool ceil_mode, bool count_include_pad) {
  check_pool_input("avg_pool2d", input);
  check_half_padding("avg_pool2d", window);
  const Tensor x = batched(input);
  const ops::Window2d w = ceil_mode ? ceil_window("avg_pool2d", window, x) : window;
  // The overhang of ceil_mode (w's extra bottom/right padding) never counts in the divisor.
  const bool overhang = w.pb != window.pb || w.pr != window.pr;
  Tensor v = ops::windows(x, w, 0.0);
  const int64_t N = v.size(0), C = v.size(1), OH = v.size(2), OW = v.size(3);
  const int64_t last2[] = {4, 5};
  Tensor sums = ops::reduce(ReduceOp::Sum, v, last2, 2, false);  // [N, C, OH, OW]
  // The divisor: the window's size, or the number of its elements inside the input (without
  // padding) or inside the symmetrically padded input (with padding, under ceil_mode), as
  // PyTorch counts: ones over the region that counts, windowed like x, summed.
  Tensor divisor;
  if (!count_include_pad) {
    divisor = ops::reduce(ReduceOp::Sum,
                          ops::windows(ops::full(Dims{1, 1, x.size(2), x.size(3)}, 1.0, x.dtype(), x.device()), w, 0.0),
                          last2, 2, false);  // [1, 1, OH, OW]
  } else if (overhang) {
    ops::Window2d region = w;  // ones over the padded input, the overhang left as padding
    region.pb -= region.pt;
    region.pr -= region.pl;
    region.pt = region.pl = 0;
    divisor = ops::reduce(ReduceOp::Sum,
                          ops::windows(ops::full(Dims{1, 1, x.size(2) + 2 * w.pt, x.size(3) + 2 * w.pl}, 1.0,
                                                 x.dtype(), x.device()),
                                       region, 0.0),
                          last2, 2, false);
  }
  const double k = static_cast<double>(w.kh) * static_cast<double>(w.kw);  // each may be near 2^63
  const bool by_k = !divisor.defined();
  Tensor avg = by_k ? ops::binary_scalar(BinaryOp::Div, sums, k) : ops::binary(BinaryOp::Div, sums, divisor);
  Tensor out = unbatched_like(avg, input);
  if (!should_record({&input})) return out;
  const Dims x_shape = x.shape(), in_shape = input.shape();
  record(out, make_node("AvgPool2DBackward0", [=](const Tensor& grad) {
           Tensor g = ops::reshape(grad, Dims{N, C, OH, OW}, false);
           g = by_k ? ops::binary_scalar(BinaryOp::Div, g, k) : ops::binary(BinaryOp::Div, g, divisor);
           Tensor spread = ops::expand(ops::reshape(g, Dims{N, C, OH, OW, 1, 1}, false), Dims{N, C, OH, OW, w.kh, w.kw});
           return G{ops::reshape(ops::fold_windows(spread, x_shape, w), in_shape, false)};
         }),
         {&input});
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& input, int64_t oh, int64_t ow) {
  if (oh <= 0 || ow <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("adaptive_avg_pool2d: output_size (", oh, ", ", ow, ") must be positive"));
  check_pool_input("adaptive_avg_pool2d", input);
  const int64_t H = input.size(input.ndim() - 2), W = input.size(input.ndim() - 1);
  if (H == 0 || W == 0)
    fail(DT_ERR_SHAPE_MISMATCH, cat("adaptive_avg_pool2d: expected an input with non-zero height and width, but got ",
                                    dims_str(input.shape())));
  if (H % oh == 0 && W % ow == 0) {
    // Windows that tile the input (global pooling included, ResNet's): a mean over each
    // [H / oh, W / ow] block of a view, one reduction and no copy (the averaging matrices
    // below would cross from the host, which a graph capture cannot record).
    const int64_t nd = input.ndim();
    Dims blocks;
    for (int64_t d = 0; d + 2 < nd; ++d) blocks.push(input.size(d));
    blocks.push(oh), blocks.push(H / oh), blocks.push(ow), blocks.push(W / ow);
    const int64_t dims[2] = {nd - 1, nd + 1};
    return reduce(ReduceOp::Mean, reshape(input, blocks, false), dims, 2, false);
  }
  if (!input.device().is_cpu() && capturing(input.device()))
    fail(DT_ERR_NOT_SUPPORTED,
         cat("adaptive_avg_pool2d: output size (", oh, ", ", ow, ") does not divide the input's ", H, "x", W,
             ", so its averaging matrices are made on the host, and a copy from the host cannot be captured into a "
             "graph on ", device_str(input.device()), "; pool before the capture, or to a size that divides the "
             "input. The capture goes on without it"));
  // rows x cols averaging matrix: row i averages [floor(i * n / rows), ceil((i + 1) * n / rows)).
  // Its size is checked first: an output size as large as INT64_MAX is valid, but the
  // matrix (and the output) cannot be allocated.
  auto averaging = [&](int64_t rows, int64_t n) {
    ops::check_numel_fits("adaptive_avg_pool2d", "averaging matrix", Dims{rows, n});
    const int64_t size = rows * n;
    if (static_cast<uint64_t>(size) > std::numeric_limits<size_t>::max() / 2 / sizeof(double))
      fail(DT_ERR_OUT_OF_MEMORY, cat("adaptive_avg_pool2d: output size (", oh, ", ", ow, ") over an input of ", H,
                                     "x", W, " needs a ", rows, " x ", n, " averaging matrix, more than memory holds"));
    std::vector<double> m(static_cast<size_t>(size), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t start = (i * n) / rows, end = ((i + 1) * n + rows - 1) / rows;  // below size + rows: fits
      for (int64_t j = start; j < end; ++j) m[static_cast<size_t>(i * n + j)] = 1.0 / static_cast<double>(end - start);
    }
    Tensor t = ops::from_host(m.data(), m.size() * sizeof(double), Dims{rows, n}, DType::Float64, Device{DT_DEVICE_CPU, 0});
    return ops::to(t, input.device(), input.dtype(), false);
  };
  Tensor ph = averaging(oh, H), pw = averaging(ow, W);  // [OH, H], [OW, W]
  return matmul(matmul(ph, input), ops::transpose(pw, 0, 1));
}

}  // namespace dt::ag
