// Differentiable elementwise ops: binary (broadcast gradients summed back to each
// operand's shape), scalar, unary and where. The formulas are the op table's
// (core/op_table.h), written with the helpers below; they follow PyTorch's
// derivatives.yaml.
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

// The vocabulary of the table's gradient formulas (core/op_table.h).
Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Div, a, b); }
Tensor neg(const Tensor& a) { return ops::unary(UnaryOp::Neg, a); }
Tensor un(UnaryOp op, const Tensor& a) { return ops::unary(op, a); }
Tensor muls(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Mul, a, s); }
Tensor divs(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Div, a, s); }
Tensor pows(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Pow, a, s); }
Tensor rsub1(const Tensor& a) { return ops::binary_scalar(BinaryOp::Add, neg(a), 1.0); }  // 1 - a
Tensor cmp(BinaryOp op, const Tensor& a, const Tensor& b) { return ops::binary(op, a, b); }
Tensor cmps(BinaryOp op, const Tensor& a, double s) { return ops::binary_scalar(op, a, s); }
Tensor gts(const Tensor& a, double s) { return cmps(BinaryOp::Gt, a, s); }
Tensor ges(const Tensor& a, double s) { return cmps(BinaryOp::Ge, a, s); }
Tensor les(const Tensor& a, double s) { return cmps(BinaryOp::Le, a, s); }
Tensor adds(const Tensor& a, double s) { return ops::binary_scalar(BinaryOp::Add, a, s); }
Tensor floor_div(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::FloorDivide, a, b); }
Tensor zero_like(const Tensor& g) { return ops::full(Dims{}, 0.0, g.dtype(), g.device()); }
// A gradient of 0 everywhere, in g's shape (the rounding ops and sign: PyTorch's zeros_like).
Tensor zeros(const Tensor& g) { return ops::full(g.shape(), 0.0, g.dtype(), g.device()); }
// where(c, x, 0)
Tensor keep(const Tensor& c, const Tensor& x) { return ops::where(c, x, zero_like(x)); }
// ReLU's gradient from its output: one kernel where the backend has it, else composed.
// PyTorch's threshold_backward: 0 where o <= 0, g elsewhere, so a NaN output passes g on.
Tensor relu_grad(const Tensor& g, const Tensor& o) {
  return ops::relu_backward_fusable(o, g) ? ops::relu_backward(o, g) : ops::where(les(o, 0.0), zero_like(g), g);
}

// g * sign(x), with sign(0) = 0.
Tensor abs_grad(const Tensor& g, const Tensor& x) {
  return ops::where(gts(x, 0.0), g, keep(cmps(BinaryOp::Lt, x, 0.0), neg(g)));
}
// d silu(x) / dx = s (1 + x (1 - s)), s = sigmoid(x).
Tensor silu_grad(const Tensor& g, const Tensor& x) {
  Tensor s = un(UnaryOp::Sigmoid, x);
  return mul(g, mul(s, ops::binary_scalar(BinaryOp::Add, mul(x, rsub1(s)), 1.0)));
}
// t in g's dtype when t is an integer or bool operand of pow (a^b with b a bool mask):
// y - 1 of a bool tensor is refused, and the log of an integer one would be taken in
// float32. (PyTorch's pow backward fails on the bool exponent.)
Tensor floating_like(const Tensor& t, const Tensor& g) {
  return is_floating(t.dtype()) ? t : ops::to(t, t.device(), g.dtype(), false);
}
// d(a^b)/da = b a^(b-1).
Tensor pow_grad_base(const Tensor& g, const Tensor& x_in, const Tensor& y_in) {
  const Tensor x = floating_like(x_in, g), y = floating_like(y_in, g);
  Tensor gx = mul(g, mul(y, ops::binary(BinaryOp::Pow, x, ops::binary_scalar(BinaryOp::Sub, y, 1.0))));
  // 0 where the exponent is 0 (a constant 1, whatever x), as PyTorch's pow_backward: the
  // formula alone gives 0 * 0^-1 = NaN at x == 0.
  return ops::where(cmps(BinaryOp::Eq, y, 0.0), zero_like(gx), gx);
}
// d(a^b)/db = a^b log(a), taken as 0 where a == 0 and b >= 0 (PyTorch's choice).
Tensor pow_grad_exponent(const Tensor& g, const Tensor& x_in, const Tensor& y, const Tensor& o) {
  const Tensor x = floating_like(x_in, g);
  Tensor gb = mul(g, mul(o, un(UnaryOp::Log, x)));
  return ops::where(cmps(BinaryOp::Eq, x, 0.0), ops::where(ges(y, 0.0), zero_like(gb), gb), gb);
}
// d(a^s)/da = s a^(s-1), and 0 for s == 0.
Tensor pow_grad_scalar(const Tensor& g, const Tensor& x, double s) {
  if (s == 0) return zeros(g);
  return mul(g, muls(pows(x, s - 1.0), s));
}
// d atan2(a, b) = (b da - a db) / (a^2 + b^2): g * numerator / (x^2 + y^2).
Tensor atan2_grad(const Tensor& g, const Tensor& numerator, const Tensor& x, const Tensor& y) {
  return div(mul(g, numerator), ops::binary(BinaryOp::Add, mul(x, x), mul(y, y)));
}
// a's gradient when b is the scalar s: g * s / (x^2 + s^2).
Tensor atan2_grad_scalar(const Tensor& g, double s, const Tensor& x) {
  return div(muls(g, s), adds(mul(x, x), s * s));
}
// Gradient of maximum (is_max) or minimum with respect to `self`: the whole gradient
// where self wins, half of it on ties, as PyTorch.
Tensor extreme_grad(const Tensor& g, const Tensor& self, const Tensor& other, bool is_max) {
  Tensor half = muls(g, 0.5);
  Tensor wins = cmp(is_max ? BinaryOp::Gt : BinaryOp::Lt, self, other);
  return ops::where(cmp(BinaryOp::Eq, self, other), half, keep(wins, g));
}

constexpr bool differentiable(const char* backward) {
  // "NotDifferentiable" is the table's word for ops without a gradient.
  const char* none = "NotDifferentiable";
  for (; *backward && *backward == *none; ++backward, ++none) {
  }
  return *backward != *none;
}

}  // namespace

// Each formula's lambda captures (by value, [=]) only the saved tensors it names:
// x and y (the detached inputs), o (the detached output), the shapes, the scalar s.
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor out = ops::binary(op, a, b);
  if (is_comparison(op) || !should_record({&a, &b})) return out;
  const Tensor x = detach(a), y = detach(b), o = detach(out);
  const Dims as = a.shape(), bs = b.shape();
  Node* node = nullptr;
  switch (op) {
#define DT_X(Name, code, c_name, rule, backward, grad_a, grad_b, scalar_backward, grad_scalar, ...)        \
  case BinaryOp::Name:                                                                               \
    if (!differentiable(#backward)) return out;                                                      \
    node = saving(make_node(#backward, [=](const Tensor& g) {                                        \
      return std::vector<Tensor>{sum_to(grad_a, as), sum_to(grad_b, bs)};                            \
    }), {formula_names(#grad_a " " #grad_b, 'x') ? &x : nullptr,                                     \
         formula_names(#grad_a " " #grad_b, 'y') ? &y : nullptr,                                     \
         formula_names(#grad_a " " #grad_b, 'o') ? &o : nullptr});                                   \
    break;
    DT_BINARY_OPS(DT_X)
#undef DT_X
  }
  record(out, node, {&a, &b});
  return out;
}

Tensor binary_scalar(BinaryOp op, const Tensor& a, double s) {
  Tensor out = ops::binary_scalar(op, a, s);
  if (is_comparison(op) || !should_record({&a})) return out;
  const Tensor x = detach(a);
  Node* node = nullptr;
  switch (op) {
#define DT_X(Name, code, c_name, rule, backward, grad_a, grad_b, scalar_backward, grad_scalar, ...)        \
  case BinaryOp::Name:                                                                               \
    if (!differentiable(#scalar_backward)) return out;                                               \
    node = saving(make_node(#scalar_backward, [=](const Tensor& g) { return std::vector<Tensor>{grad_scalar}; }), \
                  {formula_names(#grad_scalar, 'x') ? &x : nullptr});                                 \
    break;
    DT_BINARY_OPS(DT_X)
#undef DT_X
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

void copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  if (grad_enabled() && (requires_grad(self) || requires_grad(src)))
    fail(DT_ERR_NOT_SUPPORTED, cat("copy_: the ", requires_grad(self) ? "destination" : "source",
                                   " requires grad, and an in-place copy is not recorded by autograd (disable grad mode "
                                   "to copy values into or out of such a tensor, or use dt_tensor_to)"));
  ops::copy_broadcast_(self, src, non_blocking);
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
  const Tensor x = detach(a), o = detach(out);
  Node* node = nullptr;
  switch (op) {
#define DT_X(Name, code, c_name, rule, cost, visibility, backward, grad, ...)                                 \
  case UnaryOp::Name:                                                                                   \
    if (!differentiable(#backward)) return out;                                                         \
    node = saving(make_node(#backward, [=](const Tensor& g) { return std::vector<Tensor>{grad}; }),      \
                  {formula_names(#grad, 'x') ? &x : nullptr, formula_names(#grad, 'o') ? &o : nullptr});  \
    break;
    DT_UNARY_OPS(DT_X)
#undef DT_X
  }
  record(out, node, {&a});
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  Tensor out = ops::where(cond, a, b);
  if (!should_record({&a, &b})) return out;
  Tensor c = detach(cond);
  const Dims as = a.shape(), bs = b.shape();
  record(out, saving(make_node("WhereBackward0", [c, as, bs](const Tensor& g) {
                  Tensor z = zero_like(g);
                  return std::vector<Tensor>{sum_to(ops::where(c, g, z), as), sum_to(ops::where(c, z, g), bs)};
                }), {&c}),
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
