// Differentiable elementwise ops: binary (broadcast gradients summed back to each
// operand's shape), scalar, unary and where. Formulas as PyTorch's derivatives.yaml.
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor neg(const Tensor& a) { return ops::unary(UnaryOp::Neg, a); }
Tensor muls(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor cmp(BinaryOp op, const Tensor& a, const Tensor& b) { return ops::binary(op, a, b); }
Tensor cmps(BinaryOp op, const Tensor& a, double s) { return ops::binary_scalar(op, a, s); }
Tensor zero_like(const Tensor& g) { return ops::full(Dims{}, 0.0, g.dtype(), g.device()); }
// where(c, x, 0)
Tensor keep(const Tensor& c, const Tensor& x) { return ops::where(c, x, zero_like(x)); }

// Gradient of maximum (is_max) or minimum with respect to `self`: the whole gradient
// where self wins, half of it on ties, as PyTorch.
Tensor extreme_grad(const Tensor& g, const Tensor& self, const Tensor& other, bool is_max) {
  Tensor half = muls(g, 0.5);
  Tensor wins = cmp(is_max ? BinaryOp::Gt : BinaryOp::Lt, self, other);
  return ops::where(cmp(BinaryOp::Eq, self, other), half, keep(wins, g));
}

}  // namespace

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor out = ops::binary(op, a, b);
  if (is_comparison(op) || !should_record({&a, &b})) return out;
  Tensor x = detach(a), y = detach(b), o = detach(out);
  const Dims as = a.shape(), bs = b.shape();
  Node* node = nullptr;
  switch (op) {
    case BinaryOp::Add:
      node = make_node("AddBackward0", [as, bs](const Tensor& g) { return std::vector<Tensor>{sum_to(g, as), sum_to(g, bs)}; });
      break;
    case BinaryOp::Sub:
      node = make_node("SubBackward0",
                       [as, bs](const Tensor& g) { return std::vector<Tensor>{sum_to(g, as), sum_to(neg(g), bs)}; });
      break;
    case BinaryOp::Mul:
      node = make_node("MulBackward0", [x, y, as, bs](const Tensor& g) {
        return std::vector<Tensor>{sum_to(mul(g, y), as), sum_to(mul(g, x), bs)};
      });
      break;
    case BinaryOp::Div:
      node = make_node("DivBackward0", [x, y, as, bs](const Tensor& g) {
        Tensor ga = div(g, y);
        return std::vector<Tensor>{sum_to(ga, as), sum_to(neg(div(mul(ga, x), y)), bs)};
      });
      break;
    case BinaryOp::Pow:
      node = make_node("PowBackward1", [x, y, o, as, bs](const Tensor& g) {
        // d/da = b * a^(b-1); d/db = a^b * log(a), taken as 0 where a == 0 and b >= 0
        Tensor ga = mul(g, mul(y, ops::binary(BinaryOp::Pow, x, ops::binary_scalar(BinaryOp::Sub, y, 1.0))));
        Tensor gb = mul(g, mul(o, ops::unary(UnaryOp::Log, x)));
        Tensor masked = ops::where(cmps(BinaryOp::Eq, x, 0.0), ops::where(cmps(BinaryOp::Ge, y, 0.0), zero_like(gb), gb), gb);
        return std::vector<Tensor>{sum_to(ga, as), sum_to(masked, bs)};
      });
      break;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      const bool is_max = op == BinaryOp::Maximum;
      node = make_node(is_max ? "MaximumBackward0" : "MinimumBackward0", [x, y, as, bs, is_max](const Tensor& g) {
        return std::vector<Tensor>{sum_to(extreme_grad(g, x, y, is_max), as), sum_to(extreme_grad(g, y, x, is_max), bs)};
      });
      break;
    }
    default:
      return out;
  }
  record(out, node, {&a, &b});
  return out;
}

Tensor binary_scalar(BinaryOp op, const Tensor& a, double s) {
  Tensor out = ops::binary_scalar(op, a, s);
  if (is_comparison(op) || !should_record({&a})) return out;
  Tensor x = detach(a);
  Node* node = nullptr;
  switch (op) {
    case BinaryOp::Add: node = make_node("AddBackward0", [](const Tensor& g) { return std::vector<Tensor>{g}; }); break;
    case BinaryOp::Sub: node = make_node("SubBackward0", [](const Tensor& g) { return std::vector<Tensor>{g}; }); break;
    case BinaryOp::Mul:
      node = make_node("MulBackward0", [s](const Tensor& g) { return std::vector<Tensor>{muls(g, s)}; });
      break;
    case BinaryOp::Div:
      node = make_node("DivBackward0", [s](const Tensor& g) {
        return std::vector<Tensor>{ops::binary_scalar(BinaryOp::Div, g, s)};
      });
      break;
    case BinaryOp::Pow:
      node = make_node("PowBackward0", [x, s](const Tensor& g) {
        if (s == 0) return std::vector<Tensor>{ops::full(g.shape(), 0.0, g.dtype(), g.device())};
        return std::vector<Tensor>{mul(g, muls(ops::binary_scalar(BinaryOp::Pow, x, s - 1.0), s))};
      });
      break;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      const bool is_max = op == BinaryOp::Maximum;
      node = make_node(is_max ? "ClampMinBackward0" : "ClampMaxBackward0", [x, s, is_max](const Tensor& g) {
        // clamp_min / clamp_max pass the gradient where the input is kept (ties included)
        return std::vector<Tensor>{keep(cmps(is_max ? BinaryOp::Ge : BinaryOp::Le, x, s), g)};
      });
      break;
    }
    default:
      return out;
  }
  record(out, node, {&a});
  return out;
}

void binary_(BinaryOp op, const Tensor& self, const Tensor& other) {
  if (grad_enabled() && requires_grad(self))
    fail(DT_ERR_NOT_SUPPORTED, cat(op_name(op), "_: an in-place operation on a tensor that requires grad is not "
                                                "supported (disable grad mode, or use the out-of-place op)"));
  ops::binary_(op, self, other);
}

void binary_scalar_(BinaryOp op, const Tensor& self, double other) {
  if (grad_enabled() && requires_grad(self))
    fail(DT_ERR_NOT_SUPPORTED, cat(op_name(op), "_: an in-place operation on a tensor that requires grad is not "
                                                "supported (disable grad mode, or use the out-of-place op)"));
  ops::binary_scalar_(op, self, other);
}

Tensor unary(UnaryOp op, const Tensor& a) {
  Tensor out = ops::unary(op, a);
  if (!should_record({&a}) || !is_floating(out.dtype())) return out;
  Tensor x = detach(a), o = detach(out);
  Node* node = nullptr;
  using G = std::vector<Tensor>;
  switch (op) {
    case UnaryOp::Neg: node = make_node("NegBackward0", [](const Tensor& g) { return G{neg(g)}; }); break;
    case UnaryOp::Abs:
      node = make_node("AbsBackward0", [x](const Tensor& g) {
        return G{ops::where(cmps(BinaryOp::Gt, x, 0.0), g, keep(cmps(BinaryOp::Lt, x, 0.0), neg(g)))};
      });
      break;
    case UnaryOp::Exp: node = make_node("ExpBackward0", [o](const Tensor& g) { return G{mul(g, o)}; }); break;
    case UnaryOp::Log: node = make_node("LogBackward0", [x](const Tensor& g) { return G{div(g, x)}; }); break;
    case UnaryOp::Sqrt:
      node = make_node("SqrtBackward0", [o](const Tensor& g) { return G{div(g, muls(o, 2.0))}; });
      break;
    case UnaryOp::Rsqrt:
      node = make_node("RsqrtBackward0", [o](const Tensor& g) {
        return G{mul(g, muls(ops::binary_scalar(BinaryOp::Pow, o, 3.0), -0.5))};
      });
      break;
    case UnaryOp::Sin:
      node = make_node("SinBackward0", [x](const Tensor& g) { return G{mul(g, ops::unary(UnaryOp::Cos, x))}; });
      break;
    case UnaryOp::Cos:
      node = make_node("CosBackward0", [x](const Tensor& g) { return G{neg(mul(g, ops::unary(UnaryOp::Sin, x)))}; });
      break;
    case UnaryOp::Relu:
      node = make_node("ReluBackward0", [o](const Tensor& g) { return G{keep(cmps(BinaryOp::Gt, o, 0.0), g)}; });
      break;
    case UnaryOp::Sigmoid:
      node = make_node("SigmoidBackward0", [o](const Tensor& g) {
        return G{mul(g, mul(o, ops::binary_scalar(BinaryOp::Add, neg(o), 1.0)))};
      });
      break;
    case UnaryOp::Tanh:
      node = make_node("TanhBackward0", [o](const Tensor& g) {
        return G{mul(g, ops::binary_scalar(BinaryOp::Add, neg(mul(o, o)), 1.0))};
      });
      break;
    case UnaryOp::Gelu:
      node = make_node("GeluBackward0", [x](const Tensor& g) { return G{mul(g, ops::unary(UnaryOp::GeluGrad, x))}; });
      break;
    case UnaryOp::Silu:
      node = make_node("SiluBackward0", [x](const Tensor& g) {
        Tensor s = ops::unary(UnaryOp::Sigmoid, x);
        Tensor one_minus_s = ops::binary_scalar(BinaryOp::Add, neg(s), 1.0);
        return G{mul(g, mul(s, ops::binary_scalar(BinaryOp::Add, mul(x, one_minus_s), 1.0)))};
      });
      break;
    default:
      return out;
  }
  record(out, node, {&a});
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = ops::where(cond, a, b);
  if (!should_record({&a, &b})) return out;
  Tensor c = detach(cond);
  const Dims as = a.shape(), bs = b.shape();
  record(out, make_node("WhereBackward0", [c, as, bs](const Tensor& g) {
           Tensor z = zero_like(g);
           return std::vector<Tensor>{sum_to(ops::where(c, g, z), as), sum_to(ops::where(c, z, g), bs)};
         }),
         {&a, &b});
  return out;
}

Tensor sum_to(const Tensor& g, const Dims& shape) {
  if (g.shape() == shape) return g;
  const int lead = g.ndim() - shape.size();
  std::vector<int64_t> dims;
  for (int d = 0; d < g.ndim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && g.size(d) != 1)) dims.push_back(d);
  }
  Tensor r = dims.empty() ? g : ops::reduce(ReduceOp::Sum, g, dims.data(), dims.size(), true);
  return ops::reshape(r, shape, false);
}

}  // namespace dt::ag
