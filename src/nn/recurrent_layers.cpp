// The recurrent layers of torch.nn: RNN (tanh or relu), LSTM and GRU, multi-layer and
// bidirectional, with PyTorch's arguments, gate order (LSTM: input, forget, cell,
// output; GRU: reset, update, new), initialisation and parameter names
// ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "..._reverse"), so a
// state_dict saved from PyTorch loads unchanged.
//
// Each layer and direction is two pieces. The input projection of every time step is
// one matrix product (ag::linear over [L, N, in]), differentiated as any linear. The
// recurrence is one autograd node: its forward runs the steps with plain ops and keeps
// each step's gate values; its backward runs backpropagation through time with them
// (PyTorch's cell formulas) and makes the recurrent weight's gradient as one product
// over every step. Slicing the sequence step by step through autograd would instead
// give each step's gradient the size of the whole sequence (quadratic in its length).
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/layers.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

using Cell = RecurrentCell;

int64_t gate_count(Cell c) { return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1; }

Tensor mul(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Mul, a, b); }
Tensor add(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Add, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return ops::binary(BinaryOp::Sub, a, b); }
Tensor un(UnaryOp op, const Tensor& a) { return ops::unary(op, a); }
// 1 - a
Tensor one_minus(const Tensor& a) { return un(UnaryOp::Neg, ops::binary_scalar(BinaryOp::Sub, a, 1.0)); }
// Gate k of width h of a [N, G * h] block.
Tensor gate(const Tensor& a, int64_t k, int64_t h) { return ops::narrow(a, 1, k * h, h); }
// Row t of a [T, N, X] tensor as [N, X] (a view).
Tensor row(const Tensor& t, int64_t i) {
  return ops::reshape(ops::narrow(t, 0, i, 1), Dims{t.size(1), t.size(2)}, false);
}
// h w^T (+ b): one step's recurrent projection, no autograd.
Tensor project(const Tensor& h, const Tensor& w, const Tensor& b) { return ag::linear(h, w, b); }

// What a step keeps for backward, in the order the steps ran.
struct Step {
  Tensor h_prev, c_prev;  // the state the step started from
  Tensor g0, g1, g2, g3;  // LSTM: i, f, g, o; GRU: r, z, n, h_n (the hidden part of n); RNN: h
  Tensor tanh_c;          // LSTM: tanh of the new cell state
};

// One direction of one layer over the whole sequence, as one autograd node. xw [L, N,
// G * H] is the input projection with its bias; h0 and c0 [N, H] (c0 for LSTM only);
// w_hh [G * H, H], b_hh [G * H] or undefined. Returns [L, N, H], the hidden state after
// each time step in time order (reverse: step t is the state after reading t..L-1), and
// for LSTM one more row, the last cell state.
Tensor run_direction(Cell cell, const Tensor& xw, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                     const Tensor& b_hh, bool reverse) {
  const int64_t L = xw.size(0), N = xw.size(1), H = h0.size(1);
  const bool lstm = cell == Cell::Lstm;
  const Tensor xs = ag::detach(xw), ws = ag::detach(w_hh), bs = b_hh.defined() ? ag::detach(b_hh) : Tensor();
  Tensor out = ops::empty(Dims{L + (lstm ? 1 : 0), N, H}, xw.dtype(), xw.device());
  std::vector<Step> steps(static_cast<size_t>(L));
  Tensor h = ag::detach(h0), c = lstm ? ag::detach(c0) : Tensor();
  for (int64_t k = 0; k < L; ++k) {
    const int64_t t = reverse ? L - 1 - k : k;
    Step& s = steps[static_cast<size_t>(k)];
    s.h_prev = h;
    s.c_prev = c;
    const Tensor x = row(xs, t), hw = project(h, ws, bs);
    switch (cell) {
      case Cell::Tanh:
        h = s.g0 = un(UnaryOp::Tanh, add(x, hw));
        break;
      case Cell::Relu:
        h = s.g0 = un(UnaryOp::Relu, add(x, hw));
        break;
      case Cell::Lstm: {
        const Tensor a = add(x, hw);
        s.g0 = un(UnaryOp::Sigmoid, gate(a, 0, H));
        s.g1 = un(UnaryOp::Sigmoid, gate(a, 1, H));
        s.g2 = un(UnaryOp::Tanh, gate(a, 2, H));
        s.g3 = un(UnaryOp::Sigmoid, gate(a, 3, H));
        c = add(mul(s.g1, c), mul(s.g0, s.g2));
        s.tanh_c = un(UnaryOp::Tanh, c);
        h = mul(s.g3, s.tanh_c);
        break;
      }
      case Cell::Gru: {
        s.g0 = un(UnaryOp::Sigmoid, add(gate(x, 0, H), gate(hw, 0, H)));
        s.g1 = un(UnaryOp::Sigmoid, add(gate(x, 1, H), gate(hw, 1, H)));
        s.g3 = gate(hw, 2, H);
        s.g2 = un(UnaryOp::Tanh, add(gate(x, 2, H), mul(s.g0, s.g3)));
        h = add(mul(one_minus(s.g1), s.g2), mul(s.g1, s.h_prev));  // (1 - z) n + z h
        break;
      }
    }
    ops::copy_(row(out, t), h);
  }
  if (lstm) ops::copy_(row(out, L), c);
  if (!ag::should_record({&xw, &h0, &c0, &w_hh, &b_hh})) return out;
  const bool has_bias = b_hh.defined();
  const char* name = lstm ? "LstmLayerBackward0" : cell == Cell::Gru ? "GruLayerBackward0" : "RnnLayerBackward0";
  auto backward = [cell, steps = std::move(steps), ws, L, N, H, reverse, has_bias](const Tensor& g) {
    const int64_t G = gate_count(cell);
    const bool lstm = cell == Cell::Lstm;
    // dXW: the gradient of the input projection, in time order; dAH: that of the
    // recurrent projection (the same but for GRU's new gate); H_prev: each step's
    // starting state, in the same order, for the weight's gradient.
    Tensor dxw = ops::empty(Dims{L, N, G * H}, g.dtype(), g.device());
    Tensor dah = cell == Cell::Gru ? ops::empty(Dims{L, N, G * H}, g.dtype(), g.device()) : dxw;
    Tensor h_prev = ops::empty(Dims{L, N, H}, g.dtype(), g.device());
    Tensor dh = ops::full(Dims{N, H}, 0.0, g.dtype(), g.device());
    Tensor dc = lstm ? ops::contiguous(row(g, L)) : Tensor();
    for (int64_t k = L - 1; k >= 0; --k) {
      const int64_t t = reverse ? L - 1 - k : k;
      const Step& s = steps[static_cast<size_t>(k)];
      dh = add(dh, row(g, t));
      Tensor da_x, da_h, dh_direct;
      switch (cell) {
        case Cell::Tanh:
          da_x = mul(dh, one_minus(mul(s.g0, s.g0)));
          break;
        case Cell::Relu:
          da_x = ops::where(ops::binary_scalar(BinaryOp::Gt, s.g0, 0.0), dh,
                            ops::full(Dims{}, 0.0, dh.dtype(), dh.device()));
          break;
        case Cell::Lstm: {
          // c = f c_prev + i g; h = o tanh(c)
          const Tensor d_o = mul(dh, s.tanh_c);
          dc = add(dc, mul(mul(dh, s.g3), one_minus(mul(s.tanh_c, s.tanh_c))));
          const Tensor di = mul(dc, s.g2), dg = mul(dc, s.g0), df = mul(dc, s.c_prev);
          da_x = ops::cat_tensors({mul(di, mul(s.g0, one_minus(s.g0))), mul(df, mul(s.g1, one_minus(s.g1))),
                                   mul(dg, one_minus(mul(s.g2, s.g2))), mul(d_o, mul(s.g3, one_minus(s.g3)))},
                                  1);
          dc = mul(dc, s.g1);
          break;
        }
        case Cell::Gru: {
          // h = (1 - z) n + z h_prev; n = tanh(x_n + r h_n); r, z = sigmoid(x + h W + b)
          const Tensor dn = mul(dh, one_minus(s.g1)), dz = mul(dh, sub(s.h_prev, s.g2));
          dh_direct = mul(dh, s.g1);
          const Tensor dan = mul(dn, one_minus(mul(s.g2, s.g2)));
          const Tensor dar = mul(mul(dan, s.g3), mul(s.g0, one_minus(s.g0)));
          const Tensor daz = mul(dz, mul(s.g1, one_minus(s.g1)));
          da_x = ops::cat_tensors({dar, daz, dan}, 1);
          da_h = ops::cat_tensors({dar, daz, mul(dan, s.g0)}, 1);
          break;
        }
      }
      ops::copy_(row(dxw, t), da_x);
      if (da_h.defined()) ops::copy_(row(dah, t), da_h);
      ops::copy_(row(h_prev, t), s.h_prev);
      const Tensor back = ops::matmul(da_h.defined() ? da_h : da_x, ws);  // [N, H]
      dh = dh_direct.defined() ? add(back, dh_direct) : back;
    }
    const Tensor dah2 = ops::reshape(dah, Dims{L * N, G * H}, false);
    const Tensor dw = ops::matmul(ops::transpose(dah2, 0, 1), ops::reshape(h_prev, Dims{L * N, H}, false));
    const int64_t steps_and_batch = 0;  // the dim of dah2 summed for the bias
    const Tensor db = has_bias ? ops::reduce(ReduceOp::Sum, dah2, &steps_and_batch, 1, false) : Tensor();
    return std::vector<Tensor>{dxw, dh, dc, dw, db};
  };
  ag::record(out, ag::saving(ag::make_node(name, std::move(backward)), {&xs, &ws}), {&xw, &h0, &c0, &w_hh, &b_hh});
  return out;
}

const char* kind_of(Cell c) { return c == Cell::Lstm ? "LSTM" : c == Cell::Gru ? "GRU" : "RNN"; }

class Recurrent final : public Module {
 public:
  Module* clone() const override { return new Recurrent(*this); }
  Recurrent(const RecurrentOptions& o, DType dtype, Device device) : o_(o) {
    const int64_t G = gate_count(o.cell), H = o.hidden_size, D = o.bidirectional ? 2 : 1;
    // PyTorch's reset_parameters: every weight and bias uniform in 1/sqrt(hidden_size).
    const double bound = 1.0 / std::sqrt(static_cast<double>(H));
    auto add_param = [&](const std::string& name, const Dims& shape) {
      Tensor p = new_parameter(shape, dtype, device);
      if (p.numel() > 0) init_uniform(p, bound);
      ag::set_requires_grad(p, true);
      params_.emplace_back(name, p);
    };
    for (int64_t l = 0; l < o.num_layers; ++l) {
      const int64_t in = l == 0 ? o.input_size : H * D;
      for (int64_t d = 0; d < D; ++d) {
        const std::string sfx = cat("_l", l, d == 1 ? "_reverse" : "");
        add_param("weight_ih" + sfx, Dims{G * H, in});
        add_param("weight_hh" + sfx, Dims{G * H, H});
        if (o.bias) {
          add_param("bias_ih" + sfx, Dims{G * H});
          add_param("bias_hh" + sfx, Dims{G * H});
        }
      }
    }
  }
  const char* kind() const override { return kind_of(o_.cell); }
  size_t arity() const override { return o_.cell == Cell::Lstm ? 3 : 2; }
  size_t min_inputs() const override { return 1; }
  bool input_optional(size_t i) const override { return i > 0; }
  Tensor forward(const std::vector<Tensor>& in) override {
    if (in.empty() || in.size() > arity())
      fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": expected 1 to ", arity(), " inputs but got ", in.size()));
    return run(in[0], in.size() > 1 ? in[1] : Tensor(), in.size() > 2 ? in[2] : Tensor(), nullptr, nullptr);
  }

  bool lstm() const { return o_.cell == Cell::Lstm; }

  // The output; *h_n and *c_n (when wanted) the last states of every layer and direction.
  Tensor run(const Tensor& input, const Tensor& h0, const Tensor& c0, Tensor* h_n, Tensor* c_n) {
    const int64_t H = o_.hidden_size, D = o_.bidirectional ? 2 : 1, layers = o_.num_layers;
    check_input_device(*this, input);
    const Tensor& w0 = params_[0].second;
    if (input.ndim() != 2 && input.ndim() != 3)
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(),
                                      ": expected an input of 3 dims ([L, N, input_size]; [N, L, input_size] with "
                                      "batch_first) or 2 (unbatched [L, input_size]), got ",
                                      dims_str(input.shape())));
    if (input.dtype() != w0.dtype())
      fail(DT_ERR_DTYPE_MISMATCH, cat(kind(), ": the input is ", dtype_name(input.dtype()), " but the parameters are ",
                                      dtype_name(w0.dtype())));
    if (input.size(input.ndim() - 1) != o_.input_size)
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": input.size(-1) must be input_size (", o_.input_size,
                                      "), but the input has shape ", dims_str(input.shape())));
    const bool batched = input.ndim() == 3;
    // Time-major [L, N, in] inside.
    Tensor x = !batched ? ag::unsqueeze(input, 1) : o_.batch_first ? ag::transpose(input, 0, 1) : input;
    const int64_t L = x.size(0), N = x.size(1);
    if (L == 0)
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": the sequence is empty (input shape ", dims_str(input.shape()), ")"));
    if (c0.defined() && !h0.defined())
      fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": c0 was given without h0 (give both, or neither for zeros)"));
    if (h0.defined() && lstm() && !c0.defined())
      fail(DT_ERR_INVALID_ARGUMENT, cat(kind(), ": h0 was given without c0 (give both, or neither for zeros)"));
    const Tensor h = state(h0, "h0", input, batched, N), c = lstm() ? state(c0, "c0", input, batched, N) : Tensor();
    std::vector<Tensor> last_h, last_c;
    size_t p = 0;
    for (int64_t l = 0; l < layers; ++l) {
      std::vector<Tensor> outs;
      for (int64_t d = 0; d < D; ++d) {
        const Tensor& w_ih = params_[p++].second;
        const Tensor& w_hh = params_[p++].second;
        const Tensor b_ih = o_.bias ? params_[p++].second : Tensor();
        const Tensor b_hh = o_.bias ? params_[p++].second : Tensor();
        const int64_t i = l * D + d;
        const Tensor xw = ag::linear(x, w_ih, b_ih);
        const Tensor hi = ag::reshape(ag::narrow(h, 0, i, 1), Dims{N, H}, false);
        const Tensor ci = lstm() ? ag::reshape(ag::narrow(c, 0, i, 1), Dims{N, H}, false) : Tensor();
        const Tensor z = run_direction(o_.cell, ag::contiguous(xw), hi, ci, w_hh, b_hh, d == 1);
        outs.push_back(lstm() ? ag::narrow(z, 0, 0, L) : z);
        last_h.push_back(ag::narrow(z, 0, d == 1 ? 0 : L - 1, 1));
        if (lstm()) last_c.push_back(ag::narrow(z, 0, L, 1));
      }
      x = D == 2 ? ag::cat_tensors(outs, 2) : outs[0];
      if (l + 1 < layers && training() && o_.dropout > 0) x = dropout(x, o_.dropout);
    }
    auto finish = [&](const Tensor& t) {  // [L, N, X] back to the caller's layout
      return !batched ? ag::reshape(t, Dims{t.size(0), t.size(2)}, false) : o_.batch_first ? ag::transpose(t, 0, 1) : t;
    };
    auto states = [&](const std::vector<Tensor>& rows) {  // [layers * D, N, H], unbatched [layers * D, H]
      Tensor s = ag::cat_tensors(rows, 0);
      return batched ? s : ag::reshape(s, Dims{s.size(0), H}, false);
    };
    if (h_n) *h_n = states(last_h);
    if (c_n && lstm()) *c_n = states(last_c);
    return finish(x);
  }

 private:
  // A given initial state in the layout [layers * D, N, H] (checked against the input),
  // or zeros.
  Tensor state(const Tensor& s, const char* name, const Tensor& input, bool batched, int64_t N) const {
    const int64_t rows = o_.num_layers * (o_.bidirectional ? 2 : 1), H = o_.hidden_size;
    const Dims want = batched ? Dims{rows, N, H} : Dims{rows, H};
    if (!s.defined()) return ops::full(Dims{rows, N, H}, 0.0, input.dtype(), input.device());
    ops::check_same_device(kind(), input, s);
    if (s.shape() != want)
      fail(DT_ERR_SHAPE_MISMATCH, cat(kind(), ": expected ", name, " of shape ", dims_str(want), " (num_layers * ",
                                      "num_directions, batch, hidden_size) for an input of shape ",
                                      dims_str(input.shape()), ", got ", dims_str(s.shape())));
    if (s.dtype() != input.dtype())
      fail(DT_ERR_DTYPE_MISMATCH,
           cat(kind(), ": ", name, " is ", dtype_name(s.dtype()), " but the input is ", dtype_name(input.dtype())));
    return batched ? s : ag::unsqueeze(s, 1);
  }

  RecurrentOptions o_;
};

}  // namespace

Module* new_recurrent(const RecurrentOptions& o, DType dtype, Device device) {
  const char* kind = kind_of(o.cell);
  if (o.input_size <= 0 || o.hidden_size <= 0 || o.num_layers <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": input_size (", o.input_size, "), hidden_size (", o.hidden_size,
                                      ") and num_layers (", o.num_layers, ") must be positive"));
  // Each layer is four tensors made one by one: a count past any real model's (they
  // have tens) would only spin, so it is refused up front.
  constexpr int64_t kMaxLayers = int64_t{1} << 16;
  if (o.num_layers > kMaxLayers)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": num_layers (", o.num_layers, ") is too large (at most ", kMaxLayers, ")"));
  // Every weight's element count must be computable: G * H * max(input_size, 2 H), H
  // bounded first so that 2 H is.
  int64_t rows = 0, wide = 0, numel = 0;
  const bool huge_hidden = o.hidden_size > (int64_t{1} << 40);
  const int64_t widest = huge_hidden || o.input_size > 2 * o.hidden_size ? o.input_size : 2 * o.hidden_size;
  if (huge_hidden || __builtin_mul_overflow(gate_count(o.cell), o.hidden_size, &rows) ||
      __builtin_mul_overflow(rows, widest, &wide) || __builtin_mul_overflow(wide, o.num_layers, &numel))
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": input_size (", o.input_size, ") and hidden_size (", o.hidden_size,
                                      ") are too large: the weights would have more elements than fit in int64"));
  if (!(o.dropout >= 0 && o.dropout <= 1))
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": dropout must be in [0, 1], got ", o.dropout));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat(kind, ": parameters need a floating dtype, got ", dtype_name(dtype)));
  return new Recurrent(o, dtype, device);
}

Tensor recurrent_forward(Module& m, const Tensor& input, const Tensor& h0, const Tensor& c0, Tensor* h_n, Tensor* c_n) {
  auto* r = dynamic_cast<Recurrent*>(&m);
  if (!r) fail(DT_ERR_INVALID_ARGUMENT, cat("m is a ", m.kind(), " module, not an RNN, LSTM or GRU"));
  if (!r->lstm() && c0.defined())
    fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": c0 is LSTM's alone (pass NULL)"));
  if (!r->lstm() && c_n)
    fail(DT_ERR_INVALID_ARGUMENT, cat(m.kind(), ": c_n is LSTM's alone (pass NULL)"));
  return r->run(input, h0, c0, h_n, c_n);
}

}  // namespace dt::nn
