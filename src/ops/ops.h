// The front end of every operation: device, shape and dtype rules (PyTorch's), output
// allocation, then one call into the device's backend. The C shim (src/api) calls
// these; they throw dt::Error on bad input.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "core/op_kinds.h"

namespace dt::ops {

// ---- construction and movement (factory.cpp)
Tensor empty(const Dims& shape, DType dtype, Device device);
Tensor full(const Dims& shape, double value, DType dtype, Device device);
void fill_(const Tensor& t, double value);  // every element of t, in place
Tensor arange(double start, double end, double step, dt_dtype dtype, Device device);
Tensor random(const Dims& shape, RandomDist dist, DType dtype, Device device, const char* op);
Tensor from_host(const void* data, size_t nbytes, const Dims& shape, DType dtype, Device device);
// t on device with dtype; returns t itself when nothing changes and !force_copy.
// non_blocking: a copy from pinned host memory to a GPU may return before it ends.
Tensor to(const Tensor& t, Device device, DType dtype, bool force_copy, bool non_blocking = false);
// Page-locked host memory (needs the CUDA backend).
Tensor empty_pinned(const Dims& shape, DType dtype);
Tensor pin_memory(const Tensor& t);  // t itself when already pinned
bool is_pinned(const Tensor& t);     // t's memory is page-locked host memory
void copy_to_host(const Tensor& t, void* dst, size_t nbytes);
void copy_from_host(const Tensor& t, const void* src, size_t nbytes);
void copy_(const Tensor& dst, const Tensor& src, bool non_blocking = false);  // dst = src, broadcast and cast
// Tensor.copy_ for users (dt_copy_): src must broadcast to dst's shape (SHAPE_MISMATCH
// naming both otherwise), then copy_, any devices.
void copy_broadcast_(const Tensor& dst, const Tensor& src, bool non_blocking);
Tensor contiguous(const Tensor& t);
Tensor scalar_tensor(double v, Device device);  // a "wrapped number" for promotion
// INVALID_ARGUMENT "op: what 300 cannot be converted to int8 without overflow" when
// dtype is an integer one whose range misses value (NaN and infinities included), as
// PyTorch's checked scalar conversions; other dtypes pass.
void check_integer_fits(const char* op, const char* what, DType dtype, double value);

// ---- elementwise (elementwise.cpp)
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor binary_scalar(BinaryOp op, const Tensor& a, double b);
void binary_(BinaryOp op, const Tensor& self, const Tensor& other);
void binary_scalar_(BinaryOp op, const Tensor& self, double other);
Tensor unary(UnaryOp op, const Tensor& a);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- reductions (reduce.cpp)
Tensor reduce(ReduceOp op, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim);
Tensor softmax(const Tensor& a, int64_t dim, bool log);
// torch.cumsum: integer and bool inputs sum in int64; reverse sums from the end (the
// gradient of a cumsum).
Tensor cumsum(const Tensor& a, int64_t dim, bool reverse = false);

// ---- sorting (sort.cpp)
struct SortResult {
  Tensor values;
  Tensor indices;  // int64: where each value was along the sorted dim
};
// torch.sort(stable=True): NaN largest, ties in order of position, descending too.
SortResult sort(const Tensor& a, int64_t dim, bool descending);
// torch.topk: the first k of a sort (largest: descending); bool refused.
SortResult topk(const Tensor& a, int64_t k, int64_t dim, bool largest);

// ---- linear algebra (linalg.cpp)
Tensor matmul(const Tensor& a, const Tensor& b);
// Linear's x w^T + bias as one op on the device (KernelOp::Addmm), x [..., in], w [out,
// in], bias [out]: for float32 and float64 operands of one device whose backend has the
// op (linear_bias_fusable); the result equals matmul followed by an add.
bool linear_bias_fusable(const Tensor& x, const Tensor& w, const Tensor& bias);
Tensor linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias);

// ---- views and joins (shape_ops.cpp)
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
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim);
// How many pieces chunk / split make (with their argument checks), without making them.
int64_t chunk_pieces(const Tensor& t, int64_t chunks, int64_t dim);
int64_t split_pieces(const Tensor& t, int64_t split_size, int64_t dim);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);

// ---- scatters (scatter.cpp): out-of-place, as torch.index_add / torch.scatter_add
// index_add: out = t, then out[.. index[j] ..] += source[.. j ..] along dim (source has
// t's shape but index.numel() along dim). scatter_add: out = t, then out[.. index[p] ..]
// += src[p] along dim for every position p of index (index no larger than src, nor than t
// off dim).
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
// The same into t, in place (backward passes add into fresh zeros this way).
void index_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source);
void scatter_add_(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);

// ---- fused optimizer steps (optim_step.cpp)
// Whether sgd_step_ can take these operands: float32 or float64, one dtype, device and
// shape, all contiguous, no two sharing storage, the parameter writable, on a backend
// that has the kernel. The optimizer falls back to its unfused ops otherwise.
bool sgd_step_fusable(const Tensor& param, const Tensor& grad, const Tensor* buf);
// One SGD step of param in place (KernelOp::SgdStep; core/plugin_abi.h gives the
// formula): buf null without momentum; `fresh` when buf is new and takes the gradient.
// INVALID_ARGUMENT unless sgd_step_fusable.
void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor* buf, double lr, double momentum, bool fresh,
               bool nesterov);
// The same step for many parameters of one device and dtype in one call
// (KernelOp::SgdStepMulti), each as sgd_step_ would make it. The backend reads the
// tensors by address, so a graph capture (which keeps the tensors its steps use) must
// not record it: callers take it only outside a capture, where sgd_step_multi_offered.
struct SgdItem {
  const Tensor* param;
  const Tensor* grad;
  const Tensor* buf;  // null without momentum
  bool fresh;         // buf is new and takes the gradient
};
bool sgd_step_multi_offered(Device device);
void sgd_step_multi_(const std::vector<SgdItem>& items, double lr, double momentum, bool nesterov);
// One Adam, RMSprop or Adagrad step of param and its state tensors in place
// (KernelOp::AdaptiveStep; core/plugin_abi.h gives the formulas, the flags and the
// order of the scalars and the state): the unfused plan's bits in one pass, without its
// temporaries. adaptive_step_fusable: as sgd_step_fusable for every state tensor, on a
// backend that has the kernel; adaptive_step_ is INVALID_ARGUMENT otherwise. The
// constants are a host float64 tensor (adaptive_constants), made before the first
// parameter is written so that nothing allocates between the writes of one step.
enum class AdaptiveKind { Adam = 0, Rmsprop = 1, Adagrad = 2 };
enum AdaptiveFlags { kL2Decay = 1, kDecoupledDecay = 2, kCentered = 4, kMomentum = 8 };
bool adaptive_step_fusable(const Tensor& param, const Tensor& grad, const std::vector<const Tensor*>& state);
Tensor adaptive_constants(const std::vector<double>& values);
void adaptive_step_(AdaptiveKind kind, int flags, const Tensor& param, const Tensor& grad,
                    const std::vector<const Tensor*>& state, const Tensor& constants);

// ---- ReLU's gradient in one kernel (relu_backward.cpp)
// Whether relu_backward can take these operands: o and g of one shape, dtype (float32 or
// float64) and device, contiguous, on a backend with KernelOp::ReluBackward.
bool relu_backward_fusable(const Tensor& o, const Tensor& g);
// g where o > 0, else 0, in one op (the composed form: a comparison, a zero and a where,
// four calls with its scalar fills). INVALID_ARGUMENT unless relu_backward_fusable.
Tensor relu_backward(const Tensor& o, const Tensor& g);

// ---- Cross entropy over class indices in one kernel each way (cross_entropy.cpp)
// Whether the fused ops take these: contiguous float32 or float64 logits x [N, C > 0] and
// contiguous int64 targets [N] of one device whose backend has both ops.
bool cross_entropy_fusable(const Tensor& x, const Tensor& target);
// The loss, reduced (reduction 0 none: [N], 1 mean, 2 sum: 0-d), with what the backward
// needs: each row's log-sum-exp (*lse, [N]) and the count of rows not ignored (*count,
// 0-d). INVALID_ARGUMENT unless cross_entropy_fusable.
Tensor cross_entropy(const Tensor& x, const Tensor& target, int64_t ignore_index, int reduction, Tensor* lse,
                     Tensor* count);
// The gradient with respect to x of that loss, given the loss's gradient g.
Tensor cross_entropy_backward(const Tensor& g, const Tensor& x, const Tensor& lse, const Tensor& count,
                              const Tensor& target, int64_t ignore_index, int reduction);

// ---- batch norm with fixed statistics (batch_norm_eval.cpp)
// Whether batch_norm_eval can take these operands: x float32 or float64, contiguous, at
// least 2-d; mean, var and the weight and bias that are defined contiguous [C] of x's
// dtype and device; a backend that has the kernel. Undefined weight or bias: none.
bool batch_norm_eval_fusable(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& weight,
                             const Tensor& bias);
// (x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1) in one pass
// (KernelOp::BatchNormEval; core/plugin_abi.h gives the rounding, which is that of the
// unfused ops). INVALID_ARGUMENT unless batch_norm_eval_fusable. No autograd.
Tensor batch_norm_eval(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias,
                       double eps);

// ---- shared rules (rules.cpp, and checked_index in shape_ops.cpp)
// index as a contiguous int64 tensor on its device, every value checked against size
// (INVALID_ARGUMENT naming op and the value; DTYPE_MISMATCH unless int64 or int32).
Tensor checked_index(const char* op, const Tensor& index, int64_t size, bool allow_negative);
// "op: expected device X but got device Y" unless all tensors share a device.
void check_same_device(const char* op, const Tensor& a, const Tensor& b);
// Broadcast shape of a and b, or SHAPE_MISMATCH naming both shapes.
Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b);
// Memory overlap, as PyTorch's MemOverlap. Every in-place write of the front ends
// starts here: a tensor with two elements at one address (a dimension of size > 1 with
// stride 0, as an expanded tensor) is never written, since the result would depend on
// the order of the writes (INVALID_ARGUMENT naming op and suffix: "add", "_"); then the
// storage's begin_write (read-only storages, the version). Builds no string unless it fails.
void begin_write(const char* op, const char* suffix, const Tensor& written);
// What an in-place write of `written` reads for `read`: read itself, or a copy of it when
// it shares part of written's memory other than element for element (a view of part of
// it, its transpose), so that no element is read after it was written. A view identical
// to written needs no copy: an elementwise op reads each element before writing it.
Tensor read_apart(const Tensor& written, const Tensor& read);
// PyTorch's result_type over operands; `wrapped` marks scalars turned into tensors.
struct Operand {
  const Tensor* t;
  bool wrapped;
};
DType result_type(std::initializer_list<Operand> ops);

}  // namespace dt::ops
