// Attention modules of torch.nn: MultiheadAttention, TransformerEncoderLayer and
// TransformerEncoder, with PyTorch's arguments, initialisation and state-dict names
// ("in_proj_weight" [3E, E], "in_proj_bias", "out_proj.weight", "out_proj.bias";
// "self_attn.*", "linear1.*", "linear2.*", "norm1.*", "norm2.*"; "layers.<i>.*"), so a
// state_dict saved from PyTorch loads unchanged. Built from differentiable ops (linear,
// matmul, softmax, layer_norm), so autograd comes from theirs.
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

const Tensor kNone;

// Input i when given (defined), else undefined.
const Tensor& optional_input(const std::vector<Tensor>& in, size_t i) { return i < in.size() ? in[i] : kNone; }

class MultiheadAttention final : public Module {
 public:
  Module* clone() const override { return new MultiheadAttention(*this); }
  MultiheadAttention(const AttentionOptions& o, DType dtype, Device device) : o_(o) {
    const int64_t E = o.embed_dim;
    // PyTorch's _reset_parameters: xavier_uniform_ on in_proj_weight (fan_in E, fan_out 3E),
    // the biases zero; out_proj keeps Linear's weight init.
    Tensor w = new_parameter(Dims{3 * E, E}, dtype, device);
    init_uniform(w, std::sqrt(6.0 / static_cast<double>(E + 3 * E)));
    ag::set_requires_grad(w, true);
    params_.emplace_back("in_proj_weight", w);
    if (o.bias) {
      Tensor b = new_parameter(Dims{3 * E}, dtype, device);
      ops::fill_(b, 0.0);
      ag::set_requires_grad(b, true);
      params_.emplace_back("in_proj_bias", b);
    }
    Ref<Module> out = Ref<Module>::adopt(new_linear(E, E, o.bias, dtype, device));
    if (o.bias) ops::fill_(out->parameters()[1].second, 0.0);
    children_.emplace_back("out_proj", out);
    if (o.dropout > 0) children_.emplace_back("dropout", Ref<Module>::adopt(new_dropout(o.dropout)));
  }
  const char* kind() const override { return "MultiheadAttention"; }
  size_t arity() const override { return 5; }  // query, key, value, key_padding_mask, attn_mask
  size_t min_inputs() const override { return 1; }
  bool input_optional(size_t i) const override { return i > 0; }
  Tensor forward(const std::vector<Tensor>& in) override {
    const Tensor& query = in.at(0);
    const Tensor& key = optional_input(in, 1).defined() ? in[1] : query;
    const Tensor& value = optional_input(in, 2).defined() ? in[2] : key;
    check_input_device(*this, query);
    return attend(query, key, value, optional_input(in, 3), optional_input(in, 4), false, nullptr);
  }

  // Attention of query [L, N, E] (batch_first: [N, L, E]; unbatched [L, E]) over key and
  // value [S, N, E]; masks as nn.MultiheadAttention's (bool: true = not allowed). With
  // weights, *weights gets the attention weights [N, H, L, S] (after dropout, as PyTorch
  // returns them), averaged over H when `average`, the batch dim dropped when unbatched.
  Tensor attend(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
                const Tensor& attn_mask, bool average, Tensor* weights) {
    const int64_t E = o_.embed_dim, H = o_.num_heads, hd = E / H;
    const bool batched = query.ndim() == 3;
    if ((query.ndim() != 3 && query.ndim() != 2) || key.ndim() != query.ndim() || value.ndim() != query.ndim() ||
        query.size(query.ndim() - 1) != E || key.size(key.ndim() - 1) != E || value.size(value.ndim() - 1) != E)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": expected query, key and value of shape [L, N, ", E, "]",
                                      o_.batch_first ? " (batch_first: [N, L, E])" : "", " or [L, ", E, "], got ",
                                      dims_str(query.shape()), ", ", dims_str(key.shape()), " and ",
                                      dims_str(value.shape())));
    // To [N, L, E].
    auto to_batch_first = [&](const Tensor& t) {
      if (!batched) return ag::unsqueeze(t, 0);
      return o_.batch_first ? t : ag::transpose(t, 0, 1);
    };
    const Tensor q = to_batch_first(query), k = to_batch_first(key), v = to_batch_first(value);
    const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
    if (k.size(0) != N || v.size(0) != N || v.size(1) != S)
      fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": key ", dims_str(key.shape()), " and value ", dims_str(value.shape()),
                                      " must have the query's batch and one length"));
    const Tensor& w = params_[0].second;
    const Tensor b = o_.bias ? params_[1].second : Tensor();
    auto project = [&](const Tensor& x, int64_t part, int64_t len) {  // [N, len, E] -> [N, H, len, hd]
      Tensor y = ag::linear(x, ag::narrow(w, 0, part * E, E), b.defined() ? ag::narrow(b, 0, part * E, E) : Tensor());
      return ag::permute(ag::reshape(y, Dims{N, len, H, hd}, false), Dims{0, 2, 1, 3});
    };
    const Tensor qh = project(q, 0, L), kh = project(k, 1, S), vh = project(v, 2, S);
    Tensor scores = ag::matmul(ag::binary_scalar(BinaryOp::Mul, qh, 1.0 / std::sqrt(static_cast<double>(hd))),
                               ag::transpose(kh, 2, 3));  // [N, H, L, S]
    if (attn_mask.defined()) {
      ops::check_same_device("MultiheadAttention", query, attn_mask);
      Tensor m = ag::additive_mask("MultiheadAttention", attn_mask, true, scores.dtype());
      if (m.ndim() == 2 && m.size(0) == L && m.size(1) == S) {
      } else if (m.ndim() == 3 && m.size(0) == N * H && m.size(1) == L && m.size(2) == S) {
        m = ops::reshape(m, Dims{N, H, L, S}, false);
      } else {
        fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": attn_mask must be [", L, ", ", S, "] or [", N * H, ", ", L, ", ", S,
                                        "], got ", dims_str(attn_mask.shape())));
      }
      scores = ag::binary(BinaryOp::Add, scores, m);
    }
    if (key_padding_mask.defined()) {
      ops::check_same_device("MultiheadAttention", query, key_padding_mask);
      const bool ok = batched ? (key_padding_mask.ndim() == 2 && key_padding_mask.size(0) == N &&
                                 key_padding_mask.size(1) == S)
                              : (key_padding_mask.ndim() == 1 && key_padding_mask.size(0) == S);
      if (!ok)
        fail(DT_ERR_SHAPE_MISMATCH, cat(describe(), ": key_padding_mask must be [", N, ", ", S, "]", " (unbatched: [", S,
                                        "]), got ", dims_str(key_padding_mask.shape())));
      Tensor m = ag::additive_mask("MultiheadAttention", key_padding_mask, true, scores.dtype());
      scores = ag::binary(BinaryOp::Add, scores, ops::reshape(m, Dims{N, 1, 1, S}, false));
    }
    Tensor attn = ag::softmax(scores, -1, false);
    if (children_.size() > 1 && training()) attn = children_[1].second->forward({attn});  // dropout
    if (weights) {
      const int64_t head_dim = 1, batch_dim = 0;
      Tensor w = average ? ag::reduce(ReduceOp::Mean, attn, &head_dim, 1, false) : attn;
      *weights = batched ? w : ag::squeeze(w, &batch_dim, 1);
    }
    Tensor out = ag::matmul(attn, vh);  // [N, H, L, hd]
    out = ag::reshape(ag::permute(out, Dims{0, 2, 1, 3}), Dims{N, L, E}, false);
    out = children_[0].second->forward({out});  // out_proj
    if (!batched) return ag::reshape(out, Dims{L, E}, false);
    return o_.batch_first ? out : ag::transpose(out, 0, 1);
  }

 private:
  std::string describe() const {
    return cat("MultiheadAttention(embed_dim=", o_.embed_dim, ", num_heads=", o_.num_heads, ")");
  }
  AttentionOptions o_;
};

class TransformerEncoderLayer final : public Module {
 public:
  Module* clone() const override { return new TransformerEncoderLayer(*this); }
  TransformerEncoderLayer(const EncoderLayerOptions& o, DType dtype, Device device) : o_(o) {
    AttentionOptions a;
    a.embed_dim = o.d_model;
    a.num_heads = o.nhead;
    a.dropout = o.dropout;
    a.bias = true;
    a.batch_first = o.batch_first;
    const Dims d{o.d_model};
    children_.emplace_back("self_attn", Ref<Module>::adopt(new MultiheadAttention(a, dtype, device)));
    children_.emplace_back("linear1", Ref<Module>::adopt(new_linear(o.d_model, o.dim_feedforward, true, dtype, device)));
    children_.emplace_back("dropout", Ref<Module>::adopt(new_dropout(o.dropout)));
    children_.emplace_back("linear2", Ref<Module>::adopt(new_linear(o.dim_feedforward, o.d_model, true, dtype, device)));
    children_.emplace_back("norm1", Ref<Module>::adopt(new_layer_norm(d, o.layer_norm_eps, true, true, dtype, device)));
    children_.emplace_back("norm2", Ref<Module>::adopt(new_layer_norm(d, o.layer_norm_eps, true, true, dtype, device)));
    children_.emplace_back("dropout1", Ref<Module>::adopt(new_dropout(o.dropout)));
    children_.emplace_back("dropout2", Ref<Module>::adopt(new_dropout(o.dropout)));
  }
  const char* kind() const override { return "TransformerEncoderLayer"; }
  size_t arity() const override { return 3; }  // src, src_mask, src_key_padding_mask
  size_t min_inputs() const override { return 1; }
  bool input_optional(size_t i) const override { return i > 0; }
  Tensor forward(const std::vector<Tensor>& in) override {
    // An error inside (self_attn's checks of src_mask, a LayerNorm's of the width) names
    // this layer first: the user built a TransformerEncoderLayer, not its children.
    check_input_device(*this, in.at(0));
    try {
      return run(in);
    } catch (const Error& e) {
      throw Error(e.code(), cat("TransformerEncoderLayer(d_model=", o_.d_model, ", nhead=", o_.nhead, "): ", e.what(),
                                " (src_mask is self_attn's attn_mask, src_key_padding_mask its key_padding_mask)"));
    }
  }

 private:
  Tensor run(const std::vector<Tensor>& in) {
    Tensor x = in.at(0);
    const Tensor &mask = optional_input(in, 1), &padding = optional_input(in, 2);
    if (o_.norm_first) {
      x = ag::binary(BinaryOp::Add, x, self_attention(child(4)->forward({x}), mask, padding));
      return ag::binary(BinaryOp::Add, x, feed_forward(child(5)->forward({x})));
    }
    x = child(4)->forward({ag::binary(BinaryOp::Add, x, self_attention(x, mask, padding))});
    return child(5)->forward({ag::binary(BinaryOp::Add, x, feed_forward(x))});
  }
  Module* child(size_t i) const { return children_[i].second.get(); }
  Tensor self_attention(const Tensor& x, const Tensor& mask, const Tensor& padding) {
    Tensor y = static_cast<MultiheadAttention*>(child(0))->attend(x, x, x, padding, mask, false, nullptr);
    return child(6)->forward({y});  // dropout1
  }
  Tensor feed_forward(const Tensor& x) {
    Tensor h = child(1)->forward({x});
    h = ag::unary(o_.gelu ? UnaryOp::Gelu : UnaryOp::Relu, h);
    h = child(3)->forward({child(2)->forward({h})});  // linear2(dropout(h))
    return child(7)->forward({h});                    // dropout2
  }
  EncoderLayerOptions o_;
};

class TransformerEncoder final : public Module {
 public:
  Module* clone() const override { return new TransformerEncoder(*this); }
  TransformerEncoder(const std::vector<Ref<Module>>& layers, const Ref<Module>& norm) {
    children_.emplace_back("layers", Ref<Module>::adopt(new_sequential(layers)));
    if (norm) children_.emplace_back("norm", norm);
  }
  const char* kind() const override { return "TransformerEncoder"; }
  size_t arity() const override { return 3; }  // src, mask, src_key_padding_mask
  size_t min_inputs() const override { return 1; }
  bool input_optional(size_t i) const override { return i > 0; }
  Tensor forward(const std::vector<Tensor>& in) override {
    Tensor x = in.at(0);
    check_input_device(*this, x);
    for (const auto& [name, layer] : children_[0].second->children()) {
      try {
        x = layer->forward({x, optional_input(in, 1), optional_input(in, 2)});
      } catch (const Error& e) {
        throw Error(e.code(), cat("TransformerEncoder: layers.", name, ": ", e.what()));
      }
    }
    return children_.size() > 1 ? children_[1].second->forward({x}) : x;
  }
};

void check_dropout(const char* kind, double p) {
  if (!(p >= 0 && p <= 1)) fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": dropout must be in [0, 1], got ", p));
}

// The attention's in_proj_weight is [3 * E, E]: its sizes must be computable.
void check_embed_dim(const char* kind, int64_t E) {
  int64_t rows = 0, numel = 0;
  if (__builtin_mul_overflow(E, int64_t{3}, &rows) || __builtin_mul_overflow(rows, E, &numel))
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": embed_dim (", E, ") is too large: in_proj_weight [3 * ", E, ", ", E,
                                      "] would have more elements than fit in int64"));
}

}  // namespace

Tensor multihead_attention_with_weights(Module& m, const Tensor& query, const Tensor& key, const Tensor& value,
                                        const Tensor& key_padding_mask, const Tensor& attn_mask, bool average,
                                        Tensor* weights) {
  auto* mha = dynamic_cast<MultiheadAttention*>(&m);
  if (!mha) fail(DT_ERR_INVALID_ARGUMENT, cat("expected a MultiheadAttention module but got a ", m.kind()));
  const Tensor& k = key.defined() ? key : query;
  const Tensor& v = value.defined() ? value : k;
  check_input_device(m, query);
  return mha->attend(query, k, v, key_padding_mask, attn_mask, average, weights);
}

Module* new_multihead_attention(const AttentionOptions& o, DType dtype, Device device) {
  if (o.embed_dim <= 0 || o.num_heads <= 0 || o.embed_dim % o.num_heads != 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("MultiheadAttention: embed_dim (", o.embed_dim,
                                      ") must be a positive multiple of num_heads (", o.num_heads, ")"));
  check_embed_dim("MultiheadAttention", o.embed_dim);
  check_dropout("MultiheadAttention", o.dropout);
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat("MultiheadAttention: parameters need a floating dtype, got ", dtype_name(dtype)));
  return new MultiheadAttention(o, dtype, device);
}

Module* new_transformer_encoder_layer(const EncoderLayerOptions& o, DType dtype, Device device) {
  if (o.d_model <= 0 || o.nhead <= 0 || o.d_model % o.nhead != 0 || o.dim_feedforward <= 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat("TransformerEncoderLayer: d_model (", o.d_model,
                                      ") must be a positive multiple of nhead (", o.nhead,
                                      ") and dim_feedforward (", o.dim_feedforward, ") positive"));
  check_embed_dim("TransformerEncoderLayer", o.d_model);
  check_dropout("TransformerEncoderLayer", o.dropout);
  if (!(o.layer_norm_eps > 0))
    fail(DT_ERR_INVALID_ARGUMENT, cat("TransformerEncoderLayer: layer_norm_eps must be positive, got ", o.layer_norm_eps));
  if (!is_floating(dtype))
    fail(DT_ERR_DTYPE_MISMATCH, cat("TransformerEncoderLayer: parameters need a floating dtype, got ", dtype_name(dtype)));
  return new TransformerEncoderLayer(o, dtype, device);
}

Module* new_transformer_encoder(const std::vector<Ref<Module>>& layers, const Ref<Module>& norm) {
  if (layers.empty()) fail(DT_ERR_INVALID_ARGUMENT, "TransformerEncoder: needs at least one layer");
  for (size_t i = 0; i < layers.size(); ++i) {
    if (std::string(layers[i]->kind()) != "TransformerEncoderLayer")
      fail(DT_ERR_INVALID_ARGUMENT, cat("TransformerEncoder: layers[", i, "] is a ", layers[i]->kind(),
                                        ", not a TransformerEncoderLayer"));
    for (size_t j = 0; j < i; ++j)
      if (layers[j].get() == layers[i].get())
        fail(DT_ERR_INVALID_ARGUMENT, cat("TransformerEncoder: layers[", j, "] and layers[", i,
                                          "] are the same module (each layer needs its own parameters)"));
  }
  return new TransformerEncoder(layers, norm);
}

}  // namespace dt::nn
