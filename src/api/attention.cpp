// Attention entry points: the functional dt_scaled_dot_product_attention and the modules
// dt_multihead_attention_new (and dt_multihead_attention_forward, which also gives the
// weights), dt_transformer_encoder_layer_new, dt_transformer_encoder_new.
#include <cstring>
#include <vector>

#include "api/call_pins.h"
#include "api/objects.h"
#include "api/shim.h"
#include "core/context.h"
#include "nn/functions.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace {

template <typename Make>
dt_status module_out(const char* fn, dt_module** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    nn::Module* m = make();
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

// One more reference to the module behind handle m.
Ref<nn::Module> shared_module(const dt_module* m, const char* fn, const char* name) {
  nn::Module* mod = object_arg<nn::Module, HandleKind::Module>(m, fn, name);
  mod->ref();
  return Ref<nn::Module>::adopt(mod);
}

}  // namespace

extern "C" {

DT_API dt_status dt_scaled_dot_product_attention(const dt_tensor* query, const dt_tensor* key, const dt_tensor* value,
                                                 const dt_tensor* attn_mask, int32_t is_causal, dt_tensor** out) {
  const char* fn = "dt_scaled_dot_product_attention";
  return guard([&] {
    require(out, fn, "out");
    Borrowed q = tensor_arg(query, fn, "query");
    Borrowed k = tensor_arg(key, fn, "key");
    Borrowed v = tensor_arg(value, fn, "value");
    const Tensor mask = optional_tensor_arg(attn_mask, fn, "attn_mask");
    const bool causal = flag_arg(is_causal, fn, "is_causal");
    *out = new_handle(ag::scaled_dot_product_attention(q, k, v, mask, causal));
  });
}

DT_API dt_status dt_multihead_attention_new(int64_t embed_dim, int64_t num_heads, double dropout, int32_t bias,
                                            int32_t batch_first, dt_dtype dtype, dt_device device, dt_module** out) {
  const char* fn = "dt_multihead_attention_new";
  return module_out(fn, out, [&] {
    nn::AttentionOptions o;
    o.embed_dim = embed_dim;
    o.num_heads = num_heads;
    o.dropout = dropout;
    o.bias = flag_arg(bias, fn, "bias");
    o.batch_first = flag_arg(batch_first, fn, "batch_first");
    return nn::new_multihead_attention(o, resolve_dtype(dtype), resolve_device(device));
  });
}

DT_API dt_status dt_multihead_attention_forward(dt_module* m, const dt_tensor* query, const dt_tensor* key,
                                                const dt_tensor* value, const dt_tensor* key_padding_mask,
                                                const dt_tensor* attn_mask, int32_t average_attn_weights,
                                                dt_tensor** out, dt_tensor** out_weights) {
  const char* fn = "dt_multihead_attention_forward";
  return guard([&] {
    require_two_outs(fn, out, "out", out_weights, "out_weights");
    nn::Module* mod = object_arg<nn::Module, HandleKind::Module>(m, fn, "m");
    if (std::strcmp(mod->kind(), "MultiheadAttention") != 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": m is a ", mod->kind(), " module, not a MultiheadAttention"));
    pin_module_for_call(*mod);  // a concurrent dt_module_to must not free the weights meanwhile
    const bool average = flag_arg(average_attn_weights, fn, "average_attn_weights");
    Borrowed q = tensor_arg(query, fn, "query");
    const Tensor k = optional_tensor_arg(key, fn, "key"), v = optional_tensor_arg(value, fn, "value");
    const Tensor padding = optional_tensor_arg(key_padding_mask, fn, "key_padding_mask");
    const Tensor mask = optional_tensor_arg(attn_mask, fn, "attn_mask");
    Tensor weights;
    Tensor result = nn::multihead_attention_with_weights(*mod, q, k, v, padding, mask, average, &weights);
    write_two(std::move(result), std::move(weights), out, out_weights);
  });
}

DT_API dt_status dt_transformer_encoder_layer_new(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                  double dropout, const char* activation, double layer_norm_eps,
                                                  int32_t batch_first, int32_t norm_first, dt_dtype dtype,
                                                  dt_device device, dt_module** out) {
  const char* fn = "dt_transformer_encoder_layer_new";
  return module_out(fn, out, [&] {
    nn::EncoderLayerOptions o;
    o.d_model = d_model;
    o.nhead = nhead;
    o.dim_feedforward = dim_feedforward;
    o.dropout = dropout;
    o.layer_norm_eps = layer_norm_eps;
    if (activation && std::strcmp(activation, "gelu") == 0) o.gelu = true;
    else if (activation && std::strcmp(activation, "relu") != 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": activation must be \"relu\" or \"gelu\", got \"", activation, "\""));
    o.batch_first = flag_arg(batch_first, fn, "batch_first");
    o.norm_first = flag_arg(norm_first, fn, "norm_first");
    return nn::new_transformer_encoder_layer(o, resolve_dtype(dtype), resolve_device(device));
  });
}

DT_API dt_status dt_transformer_encoder_new(dt_module* const* layers, size_t num_layers, dt_module* norm,
                                            dt_module** out) {
  const char* fn = "dt_transformer_encoder_new";
  return module_out(fn, out, [&] {
    if (num_layers > 0 && !layers) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": layers is NULL but num_layers is ", num_layers));
    std::vector<Ref<nn::Module>> ls;
    for (size_t i = 0; i < num_layers; ++i) ls.push_back(shared_module(layers[i], fn, "layers[i]"));
    Ref<nn::Module> n;
    if (norm) n = shared_module(norm, fn, "norm");
    return nn::new_transformer_encoder(ls, n);
  });
}

}  // extern "C"
