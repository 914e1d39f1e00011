// Recurrent layer entry points: dt_rnn_new, dt_lstm_new, dt_gru_new, and dt_rnn_forward
// (the output with the last hidden and cell states).
#include <string>

#include "api/call_pins.h"
#include "api/objects.h"
#include "api/shim.h"
#include "core/context.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace {

dt_status make_recurrent(const char* fn, nn::RecurrentCell cell, int64_t input_size, int64_t hidden_size,
                         int64_t num_layers, int32_t bias, int32_t batch_first, double dropout, int32_t bidirectional,
                         dt_dtype dtype, dt_device device, dt_module** out) {
  return guard([&] {
    require(out, fn, "out");
    nn::RecurrentOptions o;
    o.cell = cell;
    o.input_size = input_size;
    o.hidden_size = hidden_size;
    o.num_layers = num_layers;
    o.bias = flag_arg(bias, fn, "bias");
    o.batch_first = flag_arg(batch_first, fn, "batch_first");
    o.bidirectional = flag_arg(bidirectional, fn, "bidirectional");
    o.dropout = dropout;
    nn::Module* m = nn::new_recurrent(o, resolve_dtype(dtype), resolve_device(device));
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_lstm_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, int32_t bias,
                             int32_t batch_first, double dropout, int32_t bidirectional, dt_dtype dtype,
                             dt_device device, dt_module** out) {
  return make_recurrent("dt_lstm_new", nn::RecurrentCell::Lstm, input_size, hidden_size, num_layers, bias, batch_first,
                        dropout, bidirectional, dtype, device, out);
}

DT_API dt_status dt_gru_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, int32_t bias,
                            int32_t batch_first, double dropout, int32_t bidirectional, dt_dtype dtype,
                            dt_device device, dt_module** out) {
  return make_recurrent("dt_gru_new", nn::RecurrentCell::Gru, input_size, hidden_size, num_layers, bias, batch_first,
                        dropout, bidirectional, dtype, device, out);
}

DT_API dt_status dt_rnn_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, const char* nonlinearity,
                            int32_t bias, int32_t batch_first, double dropout, int32_t bidirectional, dt_dtype dtype,
                            dt_device device, dt_module** out) {
  const char* fn = "dt_rnn_new";
  const std::string name = nonlinearity ? nonlinearity : "";
  if (!nonlinearity || (name != "tanh" && name != "relu"))
    return guard([&] {
      fail(DT_ERR_INVALID_ARGUMENT, nonlinearity
                                        ? cat(fn, ": unknown nonlinearity \"", name, "\" (\"tanh\" or \"relu\")")
                                        : cat(fn, ": nonlinearity is NULL (\"tanh\" or \"relu\")"));
    });
  return make_recurrent(fn, name == "relu" ? nn::RecurrentCell::Relu : nn::RecurrentCell::Tanh, input_size, hidden_size,
                        num_layers, bias, batch_first, dropout, bidirectional, dtype, device, out);
}

DT_API dt_status dt_rnn_forward(dt_module* m, const dt_tensor* input, const dt_tensor* h0, const dt_tensor* c0,
                                dt_tensor** output, dt_tensor** h_n, dt_tensor** c_n) {
  const char* fn = "dt_rnn_forward";
  return guard([&] {
    require(output, fn, "output");
    if (output == h_n || output == c_n || (h_n && h_n == c_n))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": output, h_n and c_n must be different out-parameters"));
    nn::Module* mod = object_arg<nn::Module, HandleKind::Module>(m, fn, "m");
    const std::string kind = mod->kind();
    if (kind != "RNN" && kind != "LSTM" && kind != "GRU")
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": m is a ", kind, " module, not an RNN, LSTM or GRU"));
    pin_module_for_call(*mod);  // a concurrent dt_module_to must not free the weights meanwhile
    Borrowed x = tensor_arg(input, fn, "input");
    const Tensor h = optional_tensor_arg(h0, fn, "h0"), c = optional_tensor_arg(c0, fn, "c0");
    Tensor hn, cn;
    Tensor y = nn::recurrent_forward(*mod, x, h, c, h_n ? &hn : nullptr, c_n ? &cn : nullptr);
    // Every handle is made before any out-parameter is written.
    dt_tensor* handles[3] = {new_handle(std::move(y)), nullptr, nullptr};
    try {
      if (h_n) handles[1] = new_handle(std::move(hn));
      if (c_n) handles[2] = new_handle(std::move(cn));
    } catch (...) {
      for (dt_tensor* t : handles) dt_tensor_release(t);
      throw;
    }
    *output = handles[0];
    if (h_n) *h_n = handles[1];
    if (c_n) *c_n = handles[2];
  });
}

}  // extern "C"
