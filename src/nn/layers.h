// The layers and containers of torch.nn that devtensor provides (losses: nn/losses.h).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "core/op_kinds.h"
#include "ops/window.h"

namespace dt::ag {
struct InterpolateOptions;  // nn/functions.h
}

namespace dt::nn {

Module* new_linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, Device device);
Module* new_sequential(const std::vector<Ref<Module>>& modules);
// A module applying a unary op, named `kind` (PyTorch's class name: "ReLU", "GELU").
Module* new_activation(UnaryOp op, const char* kind);
Module* new_leaky_relu(double negative_slope);
Module* new_softmax(int64_t dim, bool log);
Module* new_dropout(double p);
Module* new_flatten(int64_t start_dim, int64_t end_dim);

// A module the caller defines (dt_module_new). Its forward is `forward` (the C shim's
// adapter of the caller's function), shared with every replica DataParallel makes.
struct ForwardFunction {
  virtual ~ForwardFunction() = default;
  virtual Tensor call(Module& self, const std::vector<Tensor>& inputs) = 0;
};
inline constexpr size_t kMaxCustomInputs = 16;
struct CustomModuleSpec {
  std::string kind;
  std::vector<std::pair<std::string, Ref<Module>>> children;
  Named parameters, buffers;  // copied: the module's own tensors hold these values
  size_t min_inputs = 1, max_inputs = 1;  // both 0: 1
  std::shared_ptr<ForwardFunction> forward;
};
// INVALID_ARGUMENT for an empty kind, no forward, a bad or repeated name, a bad input
// count; DTYPE_MISMATCH for a parameter that is not floating.
Module* new_custom_module(CustomModuleSpec spec);
// INVALID_ARGUMENT naming fn when this thread is inside a custom module's forward, where
// moving a module would wait on the tensors the forward holds.
void refuse_inside_forward(const char* fn);

// Conv2d (nn/conv_layers.cpp): PyTorch's arguments, (height, width) pairs.
struct Conv2dOptions {
  int64_t in_channels = 0, out_channels = 0;
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool same_padding = false;  // padding="same": the output has the input's size (stride 1)
  int64_t output_padding[2] = {0, 0};  // ConvTranspose2d only
  int64_t groups = 1;
  bool bias = true;
};
Module* new_conv2d(const Conv2dOptions& o, DType dtype, Device device);
// Conv1d: the options' width entries (index 1) are the 1-d ones; kernel[0] = stride[0] =
// dilation[0] = 1 and padding[0] = 0.
Module* new_conv1d(const Conv2dOptions& o, DType dtype, Device device);
// The window o describes (its "same" padding split as PyTorch does), and o's checks
// (INVALID_ARGUMENT naming fn), shared with the functional dt_conv2d.
ops::Window2d conv_window(const Conv2dOptions& o);
void check_conv_options(const char* fn, const Conv2dOptions& o);
// ConvTranspose2d(o): "weight" [in, out / groups, kH, kW]; and the functional form's
// checks of output_padding (INVALID_ARGUMENT naming fn: negative, or not smaller than
// either the stride or the dilation, as PyTorch requires).
Module* new_conv_transpose2d(const Conv2dOptions& o, DType dtype, Device device);
void check_output_padding(const char* fn, const Conv2dOptions& o);
// Pooling (nn/pool_layers.cpp): PyTorch's arguments, (height, width) pairs; the
// functional forms share the window and its checks (INVALID_ARGUMENT naming fn).
struct PoolOptions {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool ceil_mode = false;        // round output sizes up (PyTorch's ceil_mode=True)
  bool count_include_pad = true;  // AvgPool2d
  int64_t output[2] = {1, 1};     // AdaptiveAvgPool2d
};
ops::Window2d pool_window(const char* fn, const PoolOptions& o);
Module* new_max_pool2d(const PoolOptions& o);
Module* new_avg_pool2d(const PoolOptions& o);
Module* new_adaptive_avg_pool2d(int64_t out_h, int64_t out_w);
// Upsample: F.interpolate with fixed options (ag::InterpolateOptions, nn/functions.h).
Module* new_upsample(const ag::InterpolateOptions& o);

// Normalisation and embedding (nn/norm_layers.cpp), PyTorch's arguments and defaults.
struct BatchNormOptions {
  int64_t num_features = 0;
  double eps = 1e-5;
  double momentum = 0.1;  // negative: PyTorch's None, the cumulative moving average
  bool affine = true, track_running_stats = true;
  bool cumulative() const { return momentum < 0; }
};
// spatial_dims 1: BatchNorm1d ([N, C] or [N, C, L]); 2: BatchNorm2d ([N, C, H, W]).
Module* new_batch_norm(const BatchNormOptions& o, int spatial_dims, DType dtype, Device device);
Module* new_layer_norm(const Dims& normalized_shape, double eps, bool elementwise_affine, bool bias, DType dtype,
                       Device device);
Module* new_group_norm(int64_t num_groups, int64_t num_channels, double eps, bool affine, DType dtype, Device device);
// padding_idx: ag::kNoPaddingIdx for none, negative counts from the end.
Module* new_embedding(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, DType dtype, Device device);

// Attention (nn/attention_layers.cpp), PyTorch's arguments and defaults.
struct AttentionOptions {
  int64_t embed_dim = 0, num_heads = 1;
  double dropout = 0.0;  // on the attention weights, in training mode
  bool bias = true, batch_first = false;
};
Module* new_multihead_attention(const AttentionOptions& o, DType dtype, Device device);
// MultiheadAttention's forward with need_weights=True: the output as forward({query, key,
// value, key_padding_mask, attn_mask}) gives (undefined key/value: the query), and
// *weights the attention weights, averaged over the heads when `average`. INVALID_ARGUMENT
// when m is another kind of module.
Tensor multihead_attention_with_weights(Module& m, const Tensor& query, const Tensor& key, const Tensor& value,
                                        const Tensor& key_padding_mask, const Tensor& attn_mask, bool average,
                                        Tensor* weights);
struct EncoderLayerOptions {
  int64_t d_model = 0, nhead = 1, dim_feedforward = 2048;
  double dropout = 0.1, layer_norm_eps = 1e-5;
  bool gelu = false;  // activation: relu, or gelu (exact)
  bool batch_first = false, norm_first = false;
};
Module* new_transformer_encoder_layer(const EncoderLayerOptions& o, DType dtype, Device device);
// TransformerEncoder: the layers (distinct TransformerEncoderLayers) as child "layers"
// ("layers.0.self_attn.in_proj_weight"), then norm (may be null) as child "norm".
Module* new_transformer_encoder(const std::vector<Ref<Module>>& layers, const Ref<Module>& norm);

// Recurrent layers (nn/recurrent_layers.cpp): RNN (tanh or relu), LSTM and GRU, with
// PyTorch's arguments and defaults.
enum class RecurrentCell { Tanh, Relu, Lstm, Gru };
struct RecurrentOptions {
  RecurrentCell cell = RecurrentCell::Tanh;
  int64_t input_size = 0, hidden_size = 0, num_layers = 1;
  bool bias = true, batch_first = false, bidirectional = false;
  double dropout = 0.0;  // between layers, in training mode
};
Module* new_recurrent(const RecurrentOptions& o, DType dtype, Device device);
// The whole result of an RNN, LSTM or GRU m: the output, as forward({input, h0, c0})
// gives it (undefined states: zeros), and when not null *h_n the last hidden state of
// every layer and direction, *c_n LSTM's last cell state. INVALID_ARGUMENT when m is
// another kind of module, or for c0 or c_n with a module other than an LSTM.
Tensor recurrent_forward(Module& m, const Tensor& input, const Tensor& h0, const Tensor& c0, Tensor* h_n, Tensor* c_n);

// nn.Dropout in training mode: each element zeroed with probability p, the rest scaled
// by 1 / (1 - p) (the device's Philox stream).
Tensor dropout(const Tensor& x, double p);

// Uniform in [-bound, bound) from the device's Philox stream, written into t (the
// initialisation of PyTorch's layers).
void init_uniform(const Tensor& t, double bound);

}  // namespace dt::nn
