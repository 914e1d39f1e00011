// The differentiable front ends: each computes its op through src/ops (same rules, same
// errors) and, when autograd must track it (nn/autograd.h), records a node with the
// op's backward formula and PyTorch's name for it. The C shim calls these.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "core/op_kinds.h"
#include "ops/ops.h"  // SortResult
#include "ops/window.h"

namespace dt::ag {

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor binary_scalar(BinaryOp op, const Tensor& a, double b);
// In-place ops refuse tensors autograd tracks (their saved values would go stale).
void binary_(BinaryOp op, const Tensor& self, const Tensor& other);
void binary_scalar_(BinaryOp op, const Tensor& self, double other);
// self.copy_(src) (ops::copy_broadcast_), refused in grad mode when either requires grad:
// an in-place copy is not recorded.
void copy_(const Tensor& self, const Tensor& src, bool non_blocking);
Tensor unary(UnaryOp op, const Tensor& a);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

Tensor reduce(ReduceOp op, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim);
// torch.var / torch.std over dims (all when ndims == 0), dividing by n - correction
// (nn/grad_reduce.cpp); floating tensors only.
Tensor var_std(const Tensor& a, const int64_t* dims, size_t ndims, double correction, bool keepdim, bool take_sqrt);
// torch.logsumexp over dims (all when ndims == 0), stable; integers and bool as the
// default dtype. torch.linalg.vector_norm of order ord over dims, floating tensors only,
// with PyTorch's backward formulas.
Tensor logsumexp(const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim);
Tensor vector_norm(const Tensor& a, double ord, const int64_t* dims, size_t ndims, bool keepdim);
// F.normalize, F.cosine_similarity and F.pairwise_distance, as PyTorch 1.13's
// (grad_distance.cpp); floating tensors only.
Tensor normalize(const Tensor& a, double p, int64_t dim, double eps);
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps);
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim);

// Elements kept or replaced (nn/grad_select.cpp). clamp: lo and/or hi (null: no bound;
// at least one). masked_fill: value where the bool mask (broadcast with a) is true.
// triu / tril: the last two dims' elements on and above / below the diagonal, zeros
// elsewhere (diagonal 0 is the main one, > 0 above it).
Tensor clamp(const Tensor& a, const double* lo, const double* hi);
// torch.nn.functional.leaky_relu: a where a > 0, else a * slope (floating only).
Tensor leaky_relu(const Tensor& a, double slope);
Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);
// torch.masked_select (grad_masked.cpp): a's elements where the bool mask (broadcast with
// a) is true, 1-d, row-major; waits for the device (the count is read back).
Tensor masked_select(const Tensor& a, const Tensor& mask);
Tensor triu(const Tensor& a, int64_t diagonal);
Tensor tril(const Tensor& a, int64_t diagonal);
// Their bool mask [rows, cols] on device: true on and above (upper) or on and below the
// diagonal (tril's of diagonal 0 is the causal mask: query i sees keys 0..i).
Tensor triangle_mask(int64_t rows, int64_t cols, int64_t diagonal, bool upper, Device device);
Tensor softmax(const Tensor& a, int64_t dim, bool log);
Tensor cumsum(const Tensor& a, int64_t dim);
ops::SortResult sort(const Tensor& a, int64_t dim, bool descending);  // grad_sort.cpp
ops::SortResult topk(const Tensor& a, int64_t k, int64_t dim, bool largest);
Tensor matmul(const Tensor& a, const Tensor& b);
// x @ w^T + bias (bias may be undefined), as torch.nn.functional.linear.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias);

Tensor to(const Tensor& t, Device device, DType dtype, bool force_copy, bool non_blocking = false);
Tensor contiguous(const Tensor& t);
Tensor reshape(const Tensor& t, const Dims& shape, bool must_view);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor permute(const Tensor& t, const Dims& dims);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor squeeze(const Tensor& t, const int64_t* dims, size_t ndims);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor expand(const Tensor& t, const Dims& shape);
Tensor flatten(const Tensor& t, int64_t start, int64_t end);
Tensor cat_tensors(const std::vector<Tensor>& ts, int64_t dim);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim);
// torch.flip (distinct dims), torch.roll (ndims 0: flattened, one shift; else one shift
// per dim) and Tensor.repeat (n >= ndim repeats): new tensors (nn/grad_reorder.cpp).
Tensor flip(const Tensor& t, const int64_t* dims, size_t ndims);
Tensor roll(const Tensor& t, const int64_t* shifts, size_t nshifts, const int64_t* dims, size_t ndims);
Tensor repeat(const Tensor& t, const int64_t* repeats, size_t n);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// The gradient of values gathered along dim (wrapped) at index (int64) from a tensor of
// shape: g added at those positions into zeros (GatherBackward0, SortBackward0, TopkBackward0).
Tensor gather_backward(const Tensor& g, const Dims& shape, int dim, const Tensor& index);
// torch.nn.functional.interpolate (nn/grad_interpolate.cpp): exactly one of size and
// scale (1 value for every spatial dim, or one each); linear_dims 0 for "nearest", else
// the spatial rank the linear mode needs (1 linear, 2 bilinear, 3 trilinear).
struct InterpolateOptions {
  std::vector<int64_t> size;
  std::vector<double> scale;
  int linear_dims = 0;
  bool align_corners = false;
  const char* mode = "nearest";  // a string literal, for messages
};
// The checks that need no input (both or neither of size and scale, values not positive,
// align_corners with nearest), `who` naming the caller in messages.
void check_interpolate_options(const InterpolateOptions& o, const char* who);
Tensor interpolate(const Tensor& x, const InterpolateOptions& o, const char* who);
// torch.nn.functional.pad (nn/grad_pad.cpp): pad holds (before, after) pairs from the last
// dim backwards; negative values crop. Constant mode fills with value; the others
// (reflect, replicate, circular) gather each padded dim through index_select.
enum class PadMode { Constant, Reflect, Replicate, Circular };
Tensor pad(const Tensor& t, const std::vector<int64_t>& pad, PadMode mode, double value);
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);

// torch.nn.functional.conv2d: input [N, C, H, W] or [C, H, W], weight [OC, C / groups,
// KH, KW] (win's kernel size is ignored: the weight's), bias [OC] or undefined.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& win, int64_t groups);

// The checks conv2d and conv_transpose2d share (nn/grad_conv.cpp): a 3-d or 4-d input, a
// 4-d weight (weight_layout names its dims in the message), positive groups, one device,
// one floating dtype. Fails with messages that start with `op`.
void check_conv_operands(const char* op, const char* weight_layout, const Tensor& x, const Tensor& w,
                         const Tensor& bias, int64_t groups);

// torch.nn.functional.conv1d: input [N, C, L] or [C, L], weight [OC, C / groups, K]; the
// window's width entries apply (its height is 1).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& win, int64_t groups);

// torch.nn.functional.conv_transpose2d (nn/grad_conv_transpose.cpp): input [N, C, H, W] or
// [C, H, W], weight [C, OC / groups, KH, KW], bias [OC] or undefined; win's stride,
// dilation and (symmetric: pt, pl) padding apply, output_padding adds rows/columns at the
// bottom/right.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ops::Window2d& win,
                        const int64_t output_padding[2], int64_t groups);

// torch.nn.functional's pooling over [N, C, H, W] or [C, H, W] (nn/grad_pool.cpp); w's
// padding is symmetric (pt = pb, pl = pr), and ceil_mode rounds the output size up.
Tensor max_pool2d(const Tensor& input, const ops::Window2d& w, bool ceil_mode);
Tensor avg_pool2d(const Tensor& input, const ops::Window2d& w, bool ceil_mode, bool count_include_pad);
Tensor adaptive_avg_pool2d(const Tensor& input, int64_t out_h, int64_t out_w);

// torch.nn.functional's normalisation (nn/grad_norm.cpp); weight and bias may be
// undefined. batch_norm: input [N, C, ...]; with training, batch statistics (and, when
// the running tensors are defined, their update in place: running = (1 - momentum) *
// running + momentum * batch, the variance unbiased); without, the running statistics.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps);
Tensor layer_norm(const Tensor& input, const Dims& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps);
Tensor group_norm(const Tensor& input, int64_t groups, const Tensor& weight, const Tensor& bias, double eps);
// torch.nn.functional.embedding: rows of weight [num, dim] picked by integer indices of
// any shape (result: indices' shape + [dim]); the row padding_idx (in [0, num), or
// kNoPaddingIdx) gets no gradient.
constexpr int64_t kNoPaddingIdx = INT64_MIN;
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx);

// torch.nn.functional.scaled_dot_product_attention (nn/grad_attention.cpp): q [..., L, E],
// k [..., S, E], v [..., S, Ev]; attn_mask (may be undefined) bool (true: take part) or
// additive of q's dtype, broadcast to [..., L, S]; is_causal masks keys after the query.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    bool is_causal);
// A mask as the additive float form: bool masks give -inf where true (true_masks, as
// nn.MultiheadAttention's) or where false (as SDPA's); float masks pass through.
Tensor additive_mask(const char* op, const Tensor& mask, bool true_masks, DType dtype);

// g summed over the dims broadcasting added or stretched, back to `shape`.
Tensor sum_to(const Tensor& g, const Dims& shape);

}  // namespace dt::ag
