// Distances and similarities between vectors (functions.h), as torch.nn.functional's
// normalize, cosine_similarity and pairwise_distance in PyTorch 1.13, built from
// differentiable ops (vector_norm, clamp, division, sum) so their gradients come with
// them: what a service that compares embeddings computes.
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

void require_floating(const char* op, const Tensor& t) {
  if (!is_floating(t.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected floating tensors, got ", dtype_name(t.dtype())));
}

// t's value clamped below at eps, with t's own gradient (PyTorch clamps the norms in
// cosine_similarity under no_grad, so the clamp does not stop the gradient).
Tensor clamped_value(const Tensor& t, double eps) {
  const Tensor d = detach(t);
  return binary(BinaryOp::Add, t, ops::binary(BinaryOp::Sub, ops::binary_scalar(BinaryOp::Maximum, d, eps), d));
}

}  // namespace

Tensor normalize(const Tensor& a, double p, int64_t dim, double eps) {
  require_floating("normalize", a);
  const Tensor norm = vector_norm(a, p, &dim, 1, true);  // checks dim as PyTorch does
  return binary(BinaryOp::Div, a, binary_scalar(BinaryOp::Maximum, norm, eps));
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const char* op = "cosine_similarity";
  require_floating(op, x1);
  require_floating(op, x2);
  ops::check_same_device(op, x1, x2);
  const Dims shape = ops::broadcast_shapes(op, x1.shape(), x2.shape());
  const int64_t d = wrap_dim(dim, static_cast<int>(shape.size()), op);
  // Both in their promoted dtype first, as PyTorch's (a float32 x1 against a float64 x2
  // is normalised in float64).
  const DType common = promote_types(x1.dtype(), x2.dtype());
  const Tensor a = expand(to(x1, x1.device(), common, false), shape);
  const Tensor b = expand(to(x2, x2.device(), common, false), shape);
  // Each vector divided by its norm first (PyTorch 1.13's order, for range), then the dot.
  const Tensor na = clamped_value(vector_norm(a, 2.0, &d, 1, true), eps);
  const Tensor nb = clamped_value(vector_norm(b, 2.0, &d, 1, true), eps);
  return reduce(ReduceOp::Sum, binary(BinaryOp::Mul, binary(BinaryOp::Div, a, na), binary(BinaryOp::Div, b, nb)), &d, 1,
                false);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const char* op = "pairwise_distance";
  require_floating(op, x1);
  require_floating(op, x2);
  ops::check_same_device(op, x1, x2);
  ops::broadcast_shapes(op, x1.shape(), x2.shape());  // a mismatch's message names pairwise_distance
  // ||x1 - x2 + eps||_p over the last dim (of a 0-d difference: the value's magnitude).
  const Tensor diff = binary_scalar(BinaryOp::Add, binary(BinaryOp::Sub, x1, x2), eps);
  const int64_t last = -1;  // a 0-d difference has one element: its magnitude
  const Tensor out = vector_norm(diff, p, &last, 1, keepdim);
  return named_result(out, "NormBackward1");
}

}  // namespace dt::ag
