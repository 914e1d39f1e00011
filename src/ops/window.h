// Sliding windows over the last two dims of [N, C, H, W] tensors: the geometry of a 2-d
// convolution or pooling (kernel, stride, padding on each side, dilation), its checks, and
// im2col / col2im, which turn convolution into one matrix product (as libtorch's
// slow_conv2d and every BLAS-based framework do). Both are strided views and copies
// through the ordinary ops, so they run on every backend that copies and adds.
#pragma once
#include <string>

#include "core/tensor.h"

namespace dt::ops {

struct Window2d {
  int64_t kh = 1, kw = 1;        // kernel
  int64_t sh = 1, sw = 1;        // stride
  int64_t pt = 0, pb = 0;        // padding: top, bottom
  int64_t pl = 0, pr = 0;        //          left, right
  int64_t dh = 1, dw = 1;        // dilation
};

// Output height and width of w over an h x wd input; INVALID_ARGUMENT / SHAPE_MISMATCH
// naming `op` and the shapes when an argument is not positive or the (dilated) kernel is
// larger than the padded input.
void window_output(const char* op, const Window2d& w, int64_t h, int64_t wd, int64_t* oh, int64_t* ow);
// window_output's checks of the arguments alone (positive sizes, padding and dilated
// kernel in int64), not of the kernel against the input: ceil_mode pooling checks these
// first, then widens the padding by its overhang, which may let a kernel larger than the
// input fit (PyTorch's one window).
void check_window(const char* op, const Window2d& w, int64_t h, int64_t wd);
std::string window_str(const Window2d& w);  // "kernel_size=(3, 3), stride=(1, 1), ..."
// INVALID_ARGUMENT naming op and what ("output", "columns") when the nonzero sizes of
// shape multiply past int64 (a tensor of it has more elements than int64 counts, or is
// empty only through another dim): checked before the sizes are multiplied (a padding of
// 2^32 asks for an output of 2^66 elements).
void check_numel_fits(const char* op, const char* what, const Dims& shape);

// The windows of x [N, C, H, W] as a view [N, C, OH, OW, KH, KW] of x padded with `fill`
// (a padded copy when w pads, else a view of x itself).
Tensor windows(const Tensor& x, const Window2d& w, double fill);
// The adjoint of windows: g [N, C, OH, OW, KH, KW] (any strides) summed back into a new
// [N, C, H, W] tensor (x_shape), padding dropped.
Tensor fold_windows(const Tensor& g, const Dims& x_shape, const Window2d& w);

// x [N, C, H, W] -> [N, OH*OW, C*KH*KW]: row (n, oh, ow) holds the window at (oh, ow),
// channel-major ((c, kh, kw) order), zeros where it covers padding.
Tensor im2col(const Tensor& x, const Window2d& w);
// The adjoint of im2col: cols [N, OH*OW, C*KH*KW] summed back into [N, C, H, W] (x_shape).
Tensor col2im(const Tensor& cols, const Dims& x_shape, const Window2d& w);

}  // namespace dt::ops
