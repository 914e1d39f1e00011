// Differentiable matrix products: matmul (every shape case of torch.matmul, gradients
// summed over broadcast batch dims) and linear (x @ w^T + b, PyTorch's AddmmBackward0
// for 2-d inputs).
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

Tensor mT(const Tensor& t) { return ops::transpose(t, -1, -2); }

const char* matmul_name(int an, int bn) {
  if (an == 1 && bn == 1) return "DotBackward0";
  if (an == 2 && bn == 1) return "MvBackward0";
  if (an == 2 && bn == 2) return "MmBackward0";
  if (an == 3 && bn == 3) return "BmmBackward0";
  return "MatmulBackward0";
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  Tensor out = ops::matmul(a, b);
  if (!should_record({&a, &b})) return out;
  Tensor x = detach(a), y = detach(b);
  const bool need_a = requires_grad(a), need_b = requires_grad(b);  // skip products nobody needs
  record(out, saving(make_node(matmul_name(a.ndim(), b.ndim()), [x, y, need_a, need_b](const Tensor& g) {
           // Work with matrices: a 1-d a is a row [1, K], a 1-d b a column [K, 1].
           Tensor a2 = x.ndim() == 1 ? ops::unsqueeze(x, 0) : x;
           Tensor b2 = y.ndim() == 1 ? ops::unsqueeze(y, 1) : y;
           Tensor g2 = g;
           if (x.ndim() == 1) g2 = ops::unsqueeze(g2, g2.ndim() - (y.ndim() == 1 ? 0 : 1));
           if (y.ndim() == 1) g2 = ops::unsqueeze(g2, g2.ndim());
           Tensor ga, gb;
           if (need_a) ga = ops::reshape(sum_to(ops::matmul(g2, mT(b2)), a2.shape()), x.shape(), false);
           if (need_b) gb = ops::reshape(sum_to(ops::matmul(mT(a2), g2), b2.shape()), y.shape(), false);
           return std::vector<Tensor>{ga, gb};
         }), {need_b ? &x : nullptr, need_a ? &y : nullptr}),
         {&a, &b});
  return out;
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  // One op where the backend adds the bias inside the product (cuBLASLt's epilogue, the
  // CPU's per-block add): a call and a pass over the output fewer per layer.
  const bool fused = bias.defined() && ops::linear_bias_fusable(x, w, bias);
  Tensor out = fused ? ops::linear_bias(x, w, bias) : ops::matmul(x, ops::transpose(w, 0, 1));
  if (bias.defined() && !fused) {
    // The product is fresh and nobody else holds it: add the bias in place when that gives
    // the same result (a 1-d bias of the product's dtype and device, as Linear's always
    // is), saving an output and a pass.
    if (bias.ndim() <= 1 && bias.dtype() == out.dtype() && bias.device() == out.device())
      ops::binary_(BinaryOp::Add, out, bias);
    else out = ops::binary(BinaryOp::Add, out, bias);
  }
  if (!should_record({&x, &w, &bias})) return out;
  Tensor xs = detach(x), ws = detach(w);
  const bool has_bias = bias.defined();
  const Dims bias_shape = has_bias ? bias.shape() : Dims{};
  const char* name = x.ndim() == 2 ? (has_bias ? "AddmmBackward0" : "MmBackward0") : "LinearBackward0";
  const bool need_x = requires_grad(x), need_w = requires_grad(w);  // skip products nobody needs
  record(out, saving(make_node(name, [xs, ws, has_bias, bias_shape, need_x, need_w](const Tensor& g) {
           // g: [..., out]; x: [..., in]; w: [out, in]
           const int64_t in = ws.size(1), outf = ws.size(0);
           int64_t rows = 1;  // the batch: every dim of x but the last
           for (int d = 0; d + 1 < xs.ndim(); ++d) rows *= xs.size(d);
           Tensor g2 = ops::reshape(g, Dims{rows, outf}, false);
           Tensor x2 = ops::reshape(xs, Dims{rows, in}, false);
           Tensor gx = need_x ? ops::reshape(ops::matmul(g2, ws), xs.shape(), false) : Tensor();
           Tensor gw = need_w ? ops::matmul(ops::transpose(g2, 0, 1), x2) : Tensor();
           Tensor gbias = has_bias ? sum_to(g, bias_shape) : Tensor();
           return std::vector<Tensor>{gx, gw, gbias};
         }), {need_w ? &xs : nullptr, need_x ? &ws : nullptr}),
         {&x, &w, &bias});
  return out;
}

}  // namespace dt::ag
