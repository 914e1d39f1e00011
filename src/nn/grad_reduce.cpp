// Differentiable reductions and softmax: the gradient of a reduction is spread back over
// the reduced dims (evenly over ties for amax/amin, as PyTorch). var and std are built
// from the differentiable mean, sub, mul and sum, so their gradient comes with them.
#include <algorithm>
#include <cmath>

#include "core/context.h"
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

// a's shape with the reduced dims set to 1 (all dims when ndims == 0), and the count of
// elements each output reduces.
Dims kept_shape(const Tensor& a, const int64_t* dims, size_t ndims, int64_t* count) {
  Dims k = a.shape();
  *count = 1;
  if (ndims == 0) {
    for (int d = 0; d < k.size(); ++d) {
      *count *= k[d];
      k[d] = 1;
    }
    return k;
  }
  for (size_t i = 0; i < ndims; ++i) {
    int d = wrap_dim(dims[i], a.ndim(), "reduce");
    if (a.ndim() == 0) continue;
    if (k[d] != 1 || a.size(d) == 1) *count *= a.size(d);
    k[d] = 1;
  }
  return k;
}

}  // namespace

Tensor reduce(ReduceOp op, const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim) {
  Tensor out = ops::reduce(op, a, dims, ndims, keepdim);
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin || !should_record({&a})) return out;
  int64_t count = 1;
  const Dims k = kept_shape(a, dims, ndims, &count);
  const Dims as = a.shape();
  using G = std::vector<Tensor>;
  Node* node = nullptr;
  switch (op) {
    case ReduceOp::Sum:
      node = make_node(ndims == 0 ? "SumBackward0" : "SumBackward1", [k, as](const Tensor& g) {
        return G{ops::expand(ops::reshape(g, k, false), as)};
      });
      break;
    case ReduceOp::Mean:
      node = make_node(ndims == 0 ? "MeanBackward0" : "MeanBackward1", [k, as, count](const Tensor& g) {
        Tensor scaled = ops::binary_scalar(BinaryOp::Div, ops::reshape(g, k, false), static_cast<double>(count));
        return G{ops::expand(scaled, as)};
      });
      break;
    case ReduceOp::Max:
    case ReduceOp::Min: {
      Tensor x = detach(a), o = detach(out);
      std::vector<int64_t> dv(dims, dims + ndims);
      node = saving(make_node(op == ReduceOp::Max ? "AmaxBackward0" : "AminBackward0", [x, o, k, dv](const Tensor& g) {
        Tensor mask = ops::to(ops::binary(BinaryOp::Eq, x, ops::reshape(o, k, false)), x.device(), g.dtype(), false);
        Tensor ties = ops::reduce(ReduceOp::Sum, mask, dv.data(), dv.size(), true);
        return G{ops::binary(BinaryOp::Mul, mask, ops::binary(BinaryOp::Div, ops::reshape(g, k, false), ties))};
      }), {&x, &o});
      break;
    }
    default:
      return out;
  }
  record(out, node, {&a});
  return out;
}

Tensor softmax(const Tensor& a, int64_t dim, bool log) {
  Tensor out = ops::softmax(a, dim, log);
  if (!should_record({&a})) return out;
  Tensor o = detach(out);
  using G = std::vector<Tensor>;
  Node* node;
  if (log) {
    node = make_node("LogSoftmaxBackward0", [o, dim](const Tensor& g) {
      Tensor total = ops::reduce(ReduceOp::Sum, g, &dim, 1, true);
      return G{ops::binary(BinaryOp::Sub, g, ops::binary(BinaryOp::Mul, ops::unary(UnaryOp::Exp, o), total))};
    });
  } else {
    node = make_node("SoftmaxBackward0", [o, dim](const Tensor& g) {
      Tensor go = ops::binary(BinaryOp::Mul, g, o);
      Tensor total = ops::reduce(ReduceOp::Sum, go, &dim, 1, true);
      return G{ops::binary(BinaryOp::Sub, go, ops::binary(BinaryOp::Mul, o, total))};
    });
  }
  record(out, saving(node, {&o}), {&a});
  return out;
}

// d cumsum(a)[j] / d a[i] = 1 for j >= i: the gradient is g summed from the end.
Tensor cumsum(const Tensor& a, int64_t dim) {
  Tensor out = ops::cumsum(a, dim);
  if (!should_record({&a})) return out;
  record(out, make_node("CumsumBackward0", [dim](const Tensor& g) { return std::vector<Tensor>{ops::cumsum(g, dim, true)}; }),
         {&a});
  return out;
}

Tensor var_std(const Tensor& a, const int64_t* dims, size_t ndims, double correction, bool keepdim, bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  if (!is_floating(a.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a floating tensor, got ", dtype_name(a.dtype()),
                                    " (std and var only support floating dtypes, as in PyTorch)"));
  if (!std::isfinite(correction)) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": correction must be finite, got ", correction));
  int64_t count = 1;
  for (size_t i = 0; i < ndims; ++i) wrap_dim(dims[i], a.ndim(), op);  // names the op on a bad dim
  kept_shape(a, dims, ndims, &count);
  // Narrower floats compute in PyTorch's accumulation type and come back to their dtype:
  // float64 on the CPU (a float32 square overflows from |x| = 1.8e19 on, where the
  // variance itself fits), float32 on a GPU for the 16-bit ones, whose squares would lose
  // most of their bits.
  const bool narrow = a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16 ||
                      (a.dtype() == DType::Float32 && a.device().is_cpu());
  const Tensor x = narrow ? to(a, a.device(), a.device().is_cpu() ? DType::Float64 : DType::Float32, false) : a;
  const Tensor centred = binary(BinaryOp::Sub, x, reduce(ReduceOp::Mean, x, dims, ndims, true));
  const Tensor squares = reduce(ReduceOp::Sum, binary(BinaryOp::Mul, centred, centred), dims, ndims, keepdim);
  // n - correction <= 0 divides by 0, giving inf (or NaN for 0 / 0), as PyTorch.
  Tensor out = binary_scalar(BinaryOp::Div, squares, std::max(static_cast<double>(count) - correction, 0.0));
  if (take_sqrt) out = unary(UnaryOp::Sqrt, out);
  if (narrow) out = to(out, a.device(), a.dtype(), false);
  return named_result(out, take_sqrt ? "StdBackward0" : "VarBackward0");
}

namespace {
using G = std::vector<Tensor>;
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor abs(const Tensor& a) { return ops::unary(UnaryOp::Abs, a); }
Tensor pow(const Tensor& a, double p) { return ops::binary_scalar(BinaryOp::Pow, a, p); }
// a with 0 where mask (bool, broadcast) is true.
Tensor zero_where(const Tensor& a, const Tensor& mask) {
  return ops::where(mask, ops::full(Dims{}, 0.0, a.dtype(), a.device()), a);
}
// PyTorch's accumulation type of a norm: float32 for the 16-bit floats, the dtype itself
// otherwise (float32 squares past 3.4e38 overflow to inf there too).
DType accumulation_dtype(const Tensor& a) {
  return a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16 ? DType::Float32 : a.dtype();
}
}  // namespace

Tensor logsumexp(const Tensor& a, const int64_t* dims, size_t ndims, bool keepdim) {
  const Tensor x = is_floating(a.dtype()) ? a
                   : ops::to(a, a.device(), is_floating(default_dtype()) ? default_dtype() : DType::Float32, false);
  int64_t count = 1;
  for (size_t i = 0; i < ndims; ++i) wrap_dim(dims[i], x.ndim(), "logsumexp");
  const Dims k = kept_shape(x, dims, ndims, &count);
  Tensor out;
  if (count == 0) {
    // Over no element: log(0). (The largest value of nothing does not exist.)
    const Tensor empty_sum = ops::reduce(ReduceOp::Sum, x, dims, ndims, keepdim);
    out = ops::full(empty_sum.shape(), -INFINITY, x.dtype(), x.device());
  } else {
    // m = the largest value of each reduction, 0 where it is infinite (exp(x - inf) would
    // be NaN for x = inf, and 0 for every x when it is -inf: log 0 = -inf stays right).
    Tensor m = ops::reduce(ReduceOp::Max, x, dims, ndims, true);
    m = zero_where(m, ops::binary_scalar(BinaryOp::Eq, abs(m), INFINITY));
    Tensor s = ops::reduce(ReduceOp::Sum, ops::unary(UnaryOp::Exp, ops::binary(BinaryOp::Sub, x, m)), dims, ndims,
                           keepdim);
    out = ops::binary(BinaryOp::Add, ops::unary(UnaryOp::Log, s), keepdim ? m : ops::reshape(m, s.shape(), false));
  }
  if (!should_record({&a})) return out;
  // (Recorded only for a floating a, which requires grad: then x is a itself.)
  const Tensor xs = detach(x), o = detach(out);
  const Dims as = x.shape();
  Node* node = saving(make_node("LogsumexpBackward0", [xs, o, k, as](const Tensor& g) {
                        // d/dx = exp(x - result): the softmax over the reduced dims
                        Tensor w = ops::unary(UnaryOp::Exp, ops::binary(BinaryOp::Sub, xs, ops::reshape(o, k, false)));
                        return G{mul(ops::expand(ops::reshape(g, k, false), as), w)};
                      }),
                      {&xs, &o});
  record(out, node, {&a});
  return out;
}

Tensor vector_norm(const Tensor& a, double ord, const int64_t* dims, size_t ndims, bool keepdim) {
  const char* op = "vector_norm";
  if (!is_floating(a.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a floating tensor, got ", dtype_name(a.dtype()),
                                    " (linalg.vector_norm only supports floating dtypes, as in PyTorch)"));
  if (std::isnan(ord)) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": ord must be a number, got nan"));
  int64_t count = 1;
  for (size_t i = 0; i < ndims; ++i) wrap_dim(dims[i], a.ndim(), op);
  const Dims k = kept_shape(a, dims, ndims, &count);
  if (count == 0 && std::isinf(ord))
    fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": cannot compute the ", ord > 0 ? "" : "-", "inf norm over no element (",
                                      dims_str(a.shape()), " reduced over a dimension of size 0): max and min have "
                                      "no identity, as in PyTorch"));
  const DType acc = accumulation_dtype(a);
  const Tensor x = acc == a.dtype() ? a : ops::to(a, a.device(), acc, false);
  const Tensor ax = abs(x);
  Tensor out;
  if (ord == INFINITY) out = ops::reduce(ReduceOp::Max, ax, dims, ndims, keepdim);
  else if (ord == -INFINITY) out = ops::reduce(ReduceOp::Min, ax, dims, ndims, keepdim);
  else if (ord == 0)
    out = ops::reduce(ReduceOp::Sum, ops::to(ops::binary_scalar(BinaryOp::Ne, x, 0.0), x.device(), acc, false), dims,
                      ndims, keepdim);
  else if (ord == 1) out = ops::reduce(ReduceOp::Sum, ax, dims, ndims, keepdim);
  else if (ord == 2) out = ops::unary(UnaryOp::Sqrt, ops::reduce(ReduceOp::Sum, mul(x, x), dims, ndims, keepdim));
  else out = pow(ops::reduce(ReduceOp::Sum, pow(ax, ord), dims, ndims, keepdim), 1.0 / ord);
  if (acc != a.dtype()) out = ops::to(out, out.device(), a.dtype(), false);
  if (!should_record({&a})) return out;
  const Tensor xs = detach(a), o = detach(out);
  std::vector<int64_t> dv(dims, dims + ndims);
  // PyTorch's norm_backward (FunctionsManual.cpp), by order.
  Node* node = saving(make_node("LinalgVectorNormBackward0", [xs, o, k, dv, ord](const Tensor& g) {
                        const Tensor gk = ops::reshape(g, k, false), n = ops::reshape(o, k, false);
                        const Tensor norm_is_zero = ops::binary_scalar(BinaryOp::Eq, n, 0.0);
                        if (ord == 0) return G{Tensor()};  // none, as PyTorch's (a count of nonzeros)
                        if (ord == 1) return G{mul(ops::unary(UnaryOp::Sign, xs), gk)};
                        if (ord == 2) return G{mul(xs, zero_where(div(gk, n), norm_is_zero))};
                        if (std::isinf(ord)) {
                          // sign(x) * g shared evenly between the elements where |x| is the norm
                          // or NaN (PyTorch's mask)
                          const Tensor ax = abs(xs);
                          Tensor at = ops::binary(
                              BinaryOp::Add, ops::to(ops::binary(BinaryOp::Eq, ax, n), xs.device(), xs.dtype(), false),
                              ops::to(ops::binary(BinaryOp::Ne, ax, ax), xs.device(), xs.dtype(), false));
                          Tensor ties = ops::reduce(ReduceOp::Sum, at, dv.data(), dv.size(), true);
                          return G{mul(mul(ops::unary(UnaryOp::Sign, xs), at), div(gk, ties))};
                        }
                        if (ord < 1) {
                          // sign(x) |x|^(p-1) (0 at x = 0) * g * norm^(1-p)
                          Tensor scaled = zero_where(pow(abs(xs), ord - 1), ops::binary_scalar(BinaryOp::Eq, xs, 0.0));
                          return G{mul(mul(ops::unary(UnaryOp::Sign, xs), scaled), mul(gk, pow(n, 1 - ord)))};
                        }
                        Tensor scale = zero_where(div(gk, pow(n, ord - 1)), norm_is_zero);
                        if (ord < 2) return G{mul(mul(ops::unary(UnaryOp::Sign, xs), pow(abs(xs), ord - 1)), scale)};
                        return G{mul(mul(xs, pow(abs(xs), ord - 2)), scale)};
                      }),
                      {&xs, &o});
  record(out, node, {&a});
  return out;
}

}  // namespace dt::ag
