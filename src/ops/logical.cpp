#include "ops/logical.h"

#include <cmath>

#include "ops/ops.h"

namespace dt::ops {
namespace {

// a as truth values: a bool tensor as it is, any other a != 0.
Tensor truth(const Tensor& a) { return a.dtype() == DType::Bool ? a : binary_scalar(BinaryOp::Ne, a, 0.0); }

Tensor all_false(const Tensor& a) { return full(a.shape(), 0.0, DType::Bool, a.device()); }

}  // namespace

Tensor predicate(Predicate p, const Tensor& a) {
  if (!is_floating(a.dtype())) return p == Predicate::IsFinite ? full(a.shape(), 1.0, DType::Bool, a.device()) : all_false(a);
  switch (p) {
    case Predicate::IsNan:
      return binary(BinaryOp::Ne, a, a);  // only NaN differs from itself
    case Predicate::IsInf:
      return binary_scalar(BinaryOp::Eq, unary(UnaryOp::Abs, a), INFINITY);
    default:  // NaN < inf is false too
      return binary_scalar(BinaryOp::Lt, unary(UnaryOp::Abs, a), INFINITY);
  }
}

Tensor logical(LogicalOp op, const Tensor& a, const Tensor& b) {
  const Tensor x = truth(a), y = truth(b);
  switch (op) {
    case LogicalOp::And:
      return binary(BinaryOp::Mul, x, y);  // bool * bool is and
    case LogicalOp::Or:
      return binary(BinaryOp::Add, x, y);  // bool + bool is or
    default:
      return binary(BinaryOp::Ne, x, y);
  }
}

Tensor logical_not(const Tensor& a) { return binary_scalar(BinaryOp::Eq, a, 0.0); }

Tensor any_all(bool all, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim) {
  const Tensor x = truth(a);
  if (x.numel() == 0) {
    // max and min of nothing do not exist; any / all of nothing are false / true. The
    // sum over the same dims gives the result's shape (and checks the dims).
    const Tensor shape_of = reduce(ReduceOp::Sum, x, dims, ndims, keepdim);
    return full(shape_of.shape(), all ? 1.0 : 0.0, DType::Bool, a.device());
  }
  return reduce(all ? ReduceOp::Min : ReduceOp::Max, x, dims, ndims, keepdim);
}

}  // namespace dt::ops
