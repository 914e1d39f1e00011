// Differentiable reductions and softmax: the gradient of a reduction is spread back over
// the reduced dims (evenly over ties for amax/amin, as PyTorch). var and std are built
// from the differentiable mean, sub, mul and sum, so their gradient comes with them.
#include <algorithm>
#include <cmath>

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

}  // namespace dt::ag
