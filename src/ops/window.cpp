#include "ops/window.h"

#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {

std::string window_str(const Window2d& w) {
  return cat("kernel_size=(", w.kh, ", ", w.kw, "), stride=(", w.sh, ", ", w.sw, "), padding=(", w.pt,
             w.pb != w.pt ? cat("/", w.pb) : std::string(), ", ", w.pl, w.pr != w.pl ? cat("/", w.pr) : std::string(),
             "), dilation=(", w.dh, ", ", w.dw, ")");
}

void check_numel_fits(const char* op, const char* what, const Dims& shape) {
  // The product of the nonzero sizes: the code multiplies sizes (OH * OW) even when another
  // dim (the batch) is 0.
  int64_t n = 1;
  for (int i = 0; i < shape.n; ++i)
    if (shape.v[i] != 0 && __builtin_mul_overflow(n, shape.v[i], &n))
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(op, ": the ", what, " ", dims_str(shape), " would have more elements than fit in int64"));
}

namespace {

// The padded input (*ph x *pw) and the dilated kernel (*eh x *ew), after check_window's checks.
void padded_and_kernel(const char* op, const Window2d& w, int64_t h, int64_t wd, int64_t* ph_out, int64_t* pw_out,
                       int64_t* eh_out, int64_t* ew_out) {
  if (w.kh <= 0 || w.kw <= 0 || w.sh <= 0 || w.sw <= 0 || w.dh <= 0 || w.dw <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": kernel size, stride and dilation must be positive (", window_str(w), ")"));
  if (w.pt < 0 || w.pb < 0 || w.pl < 0 || w.pr < 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": padding must be non-negative (", window_str(w), ")"));
  // The padded input and the dilated kernel, in int64 where they fit: a padded size that
  // does not is refused; a kernel that does not is larger than any input.
  int64_t ph = 0, pw = 0, eh = 0, ew = 0;
  if (__builtin_add_overflow(h, w.pt, &ph) || __builtin_add_overflow(ph, w.pb, &ph) ||
      __builtin_add_overflow(wd, w.pl, &pw) || __builtin_add_overflow(pw, w.pr, &pw))
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": the padded input (", h, " x ", wd, " with ", window_str(w),
                                      ") is larger than int64 holds"));
  const bool kernel_fits = !__builtin_mul_overflow(w.dh, w.kh - 1, &eh) && !__builtin_add_overflow(eh, 1, &eh) &&
                           !__builtin_mul_overflow(w.dw, w.kw - 1, &ew) && !__builtin_add_overflow(ew, 1, &ew);
  if (!kernel_fits)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": the dilated kernel (", window_str(w),
                                    ") is larger than int64 holds, so larger than any input"));
  *ph_out = ph, *pw_out = pw, *eh_out = eh, *ew_out = ew;
}

}  // namespace

void check_window(const char* op, const Window2d& w, int64_t h, int64_t wd) {
  int64_t ph, pw, eh, ew;
  padded_and_kernel(op, w, h, wd, &ph, &pw, &eh, &ew);
}

void window_output(const char* op, const Window2d& w, int64_t h, int64_t wd, int64_t* oh, int64_t* ow) {
  int64_t ph = 0, pw = 0, eh = 0, ew = 0;
  padded_and_kernel(op, w, h, wd, &ph, &pw, &eh, &ew);
  if (eh > ph || ew > pw)
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": the input's spatial size (", h, " x ", wd, ", padded ", ph, " x ", pw,
                                    ") is smaller than the kernel (", eh, " x ", ew,
                                    w.dh != 1 || w.dw != 1 ? " with dilation; " : "; ", window_str(w), ")"));
  *oh = (ph - eh) / w.sh + 1;
  *ow = (pw - ew) / w.sw + 1;
}

namespace {

// The stride of a windows view along a dim of n windows (or kernel positions), each
// `by` elements of the padded input apart, whose own stride is `unit`. With one window
// the step is never taken and may be any size (a stride or dilation as large as
// INT64_MAX), so it is 0; with two or more it lies inside the padded input, and the
// product fits.
int64_t step(int64_t n, int64_t unit, int64_t by) { return n > 1 ? unit * by : 0; }

// x with `fill` around it (x itself when there is no padding).
Tensor padded(const Tensor& x, const Window2d& w, double fill) {
  if (w.pt == 0 && w.pb == 0 && w.pl == 0 && w.pr == 0) return x;
  const int64_t H = x.size(2), W = x.size(3);
  Tensor p = full(Dims{x.size(0), x.size(1), H + w.pt + w.pb, W + w.pl + w.pr}, fill, x.dtype(), x.device());
  if (x.numel() == 0) return p;  // nothing to copy (and an offset into p may not fit: its dims can be huge)
  copy_(narrow(narrow(p, 2, w.pt, H), 3, w.pl, W), x);
  return p;
}

}  // namespace

Tensor windows(const Tensor& x, const Window2d& w, double fill) {
  int64_t oh = 0, ow = 0;
  window_output("windows", w, x.size(2), x.size(3), &oh, &ow);
  Tensor p = padded(x, w, fill);
  // Window (oh, ow) starts at (oh * sh, ow * sw) of the padded input.
  const int64_t sN = p.stride(0), sC = p.stride(1), sH = p.stride(2), sW = p.stride(3);
  Dims shape, strides;
  for (int64_t v : {x.size(0), x.size(1), oh, ow, w.kh, w.kw}) shape.push(v);
  if (p.numel() == 0) {  // no window reads anything; the padded sizes, and so the steps, may not fit
    for (int i = 0; i < 6; ++i) strides.push(0);
    return p.view_as(shape, strides, p.offset());
  }
  for (int64_t v : {sN, sC, step(oh, sH, w.sh), step(ow, sW, w.sw), step(w.kh, sH, w.dh), step(w.kw, sW, w.dw)})
    strides.push(v);
  return p.view_as(shape, strides, p.offset());
}

Tensor fold_windows(const Tensor& g, const Dims& x_shape, const Window2d& w) {
  const int64_t N = x_shape.v[0], C = x_shape.v[1], H = x_shape.v[2], W = x_shape.v[3];
  const int64_t oh = g.size(2), ow = g.size(3);
  // Nothing to sum (an empty batch, or no window): zeros, without a pass per kernel offset
  // (a pool's kernel may be 2^62 wide when the input is empty).
  if (g.numel() == 0 || numel_of(x_shape) == 0) return full(x_shape, 0.0, g.dtype(), g.device());
  Tensor p = full(Dims{N, C, H + w.pt + w.pb, W + w.pl + w.pr}, 0.0, g.dtype(), g.device());
  const int64_t sN = p.stride(0), sC = p.stride(1), sH = p.stride(2), sW = p.stride(3);
  Dims shape, strides;
  for (int64_t v : {N, C, oh, ow}) shape.push(v);
  for (int64_t v : {sN, sC, step(oh, sH, w.sh), step(ow, sW, w.sw)}) strides.push(v);
  // One kernel position at a time: its windows never overlap each other, so each add is
  // an ordinary in-place add into a strided view of the padded result.
  for (int64_t i = 0; i < w.kh; ++i)
    for (int64_t j = 0; j < w.kw; ++j) {
      Tensor dst = p.view_as(shape, strides, p.offset() + i * w.dh * sH + j * w.dw * sW);
      binary_(BinaryOp::Add, dst, reshape(narrow(narrow(g, 4, i, 1), 5, j, 1), shape, false));
    }
  if (w.pt == 0 && w.pb == 0 && w.pl == 0 && w.pr == 0) return p;
  return contiguous(narrow(narrow(p, 2, w.pt, H), 3, w.pl, W));
}

Tensor im2col(const Tensor& x, const Window2d& w) {
  Tensor v = windows(x, w, 0.0);  // [N, C, OH, OW, KH, KW]
  const int64_t N = v.size(0), C = v.size(1), oh = v.size(2), ow = v.size(3);
  return reshape(contiguous(permute(v, Dims{0, 2, 3, 1, 4, 5})), Dims{N, oh * ow, C * w.kh * w.kw}, false);
}

Tensor col2im(const Tensor& cols, const Dims& x_shape, const Window2d& w) {
  int64_t oh = 0, ow = 0;
  window_output("col2im", w, x_shape.v[2], x_shape.v[3], &oh, &ow);
  Tensor g = reshape(cols, Dims{x_shape.v[0], oh, ow, x_shape.v[1], w.kh, w.kw}, false);
  return fold_windows(permute(g, Dims{0, 3, 1, 2, 4, 5}), x_shape, w);
}

}  // namespace dt::ops
