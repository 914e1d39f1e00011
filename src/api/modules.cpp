// Module entry points (optimizers: optimizers.cpp).
#include <vector>

#include "api/objects.h"
#include "api/shim.h"
#include "api/state_dicts.h"
#include "io/module_state.h"
#include "io/safetensors_io.h"
#include "core/context.h"
#include "dist/ddp.h"
#include "nn/data_parallel.h"
#include "nn/layers.h"
#include "nn/losses.h"

using namespace dt;
using namespace dt::api;

namespace {

nn::Module* module_arg(const dt_module* m, const char* fn) {
  return object_arg<nn::Module, HandleKind::Module>(m, fn, "m");
}
// The module, with every parameter and buffer pinned until the call returns: for entry
// points that read them (a concurrent dt_module_to must not free them meanwhile).
nn::Module* module_arg_pinned(const dt_module* m, const char* fn) {
  nn::Module* mod = module_arg(m, fn);
  pin_module_for_call(*mod);
  return mod;
}

// Wraps a freshly made module (one reference) in a handle written to *out.
template <typename Make>
dt_status make_module(const char* fn, dt_module** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    nn::Module* m = make();
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

nn::Reduction reduction_arg(int32_t r, const char* fn) {
  if (r == DT_REDUCTION_BATCHMEAN)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": DT_REDUCTION_BATCHMEAN is KLDivLoss's alone (dt_kl_div_loss_new); use "
                                          "DT_REDUCTION_NONE, _MEAN or _SUM"));
  if (r != DT_REDUCTION_NONE && r != DT_REDUCTION_MEAN && r != DT_REDUCTION_SUM)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": unknown reduction ", r, " (DT_REDUCTION_NONE, _MEAN or _SUM)"));
  return static_cast<nn::Reduction>(r);
}


dt_status named_entry(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed, dt_tensor** tensor,
                      bool params, const char* fn) {
  return guard([&] {
    check_string_buffer(buf, cap, fn);
    nn::Module* mod = module_arg(m, fn);
    nn::Named all = params ? mod->parameters(true) : mod->buffers(true);
    if (i >= all.size())
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": index ", i, " is out of range (the module has ", all.size(), ")"));
    dt_tensor* h = tensor ? new_handle(all[i].second) : nullptr;
    write_string(all[i].first, buf, cap, needed);
    if (tensor) *tensor = h;
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_linear_new(int64_t in_features, int64_t out_features, int32_t bias, dt_dtype dtype,
                               dt_device device, dt_module** out) {
  return make_module("dt_linear_new", out, [&] {
    flag_arg(bias, "dt_linear_new", "bias");
    return nn::new_linear(in_features, out_features, bias == 1, resolve_dtype(dtype), resolve_device(device));
  });
}

DT_API dt_status dt_sequential_new(dt_module* const* modules, size_t n, dt_module** out) {
  return make_module("dt_sequential_new", out, [&] {
    if (n > 0 && !modules) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_sequential_new: modules is NULL but n is ", n));
    std::vector<Ref<nn::Module>> children;
    for (size_t i = 0; i < n; ++i) {
      nn::Module* c = module_arg(modules[i], "dt_sequential_new");
      c->ref();
      children.push_back(Ref<nn::Module>::adopt(c));
    }
    return nn::new_sequential(children);
  });
}

DT_API dt_status dt_relu_new(dt_module** out) {
  return make_module("dt_relu_new", out, [] { return nn::new_activation(UnaryOp::Relu, "ReLU"); });
}
DT_API dt_status dt_sigmoid_new(dt_module** out) {
  return make_module("dt_sigmoid_new", out, [] { return nn::new_activation(UnaryOp::Sigmoid, "Sigmoid"); });
}
DT_API dt_status dt_tanh_new(dt_module** out) {
  return make_module("dt_tanh_new", out, [] { return nn::new_activation(UnaryOp::Tanh, "Tanh"); });
}
DT_API dt_status dt_gelu_new(dt_module** out) {
  return make_module("dt_gelu_new", out, [] { return nn::new_activation(UnaryOp::Gelu, "GELU"); });
}
DT_API dt_status dt_gelu_tanh_new(dt_module** out) {
  return make_module("dt_gelu_tanh_new", out, [] { return nn::new_activation(UnaryOp::GeluTanh, "GELU"); });
}
DT_API dt_status dt_silu_new(dt_module** out) {
  return make_module("dt_silu_new", out, [] { return nn::new_activation(UnaryOp::Silu, "SiLU"); });
}
DT_API dt_status dt_leaky_relu_new(double negative_slope, dt_module** out) {
  return make_module("dt_leaky_relu_new", out, [&] { return nn::new_leaky_relu(negative_slope); });
}
DT_API dt_status dt_softmax_new(int64_t dim, dt_module** out) {
  return make_module("dt_softmax_new", out, [&] { return nn::new_softmax(dim, false); });
}
DT_API dt_status dt_log_softmax_new(int64_t dim, dt_module** out) {
  return make_module("dt_log_softmax_new", out, [&] { return nn::new_softmax(dim, true); });
}
DT_API dt_status dt_dropout_new(double p, dt_module** out) {
  return make_module("dt_dropout_new", out, [&] { return nn::new_dropout(p); });
}
DT_API dt_status dt_flatten_new(int64_t start_dim, int64_t end_dim, dt_module** out) {
  return make_module("dt_flatten_new", out, [&] { return nn::new_flatten(start_dim, end_dim); });
}

DT_API dt_status dt_cross_entropy_loss_new(const dt_tensor* weight, int32_t reduction, int64_t ignore_index,
                                           double label_smoothing, dt_module** out) {
  const char* fn = "dt_cross_entropy_loss_new";
  return make_module(fn, out, [&] {
    return nn::new_cross_entropy(optional_tensor_arg(weight, fn, "weight"), reduction_arg(reduction, fn), ignore_index,
                                 label_smoothing);
  });
}

DT_API dt_status dt_nll_loss_new(const dt_tensor* weight, int32_t reduction, int64_t ignore_index, dt_module** out) {
  const char* fn = "dt_nll_loss_new";
  return make_module(fn, out, [&] {
    return nn::new_nll(optional_tensor_arg(weight, fn, "weight"), reduction_arg(reduction, fn), ignore_index);
  });
}

DT_API dt_status dt_mse_loss_new(int32_t reduction, dt_module** out) {
  return make_module("dt_mse_loss_new", out, [&] { return nn::new_mse(reduction_arg(reduction, "dt_mse_loss_new")); });
}

DT_API dt_status dt_l1_loss_new(int32_t reduction, dt_module** out) {
  return make_module("dt_l1_loss_new", out, [&] { return nn::new_l1(reduction_arg(reduction, "dt_l1_loss_new")); });
}

DT_API dt_status dt_smooth_l1_loss_new(int32_t reduction, double beta, dt_module** out) {
  const char* fn = "dt_smooth_l1_loss_new";
  return make_module(fn, out, [&] { return nn::new_smooth_l1(reduction_arg(reduction, fn), beta); });
}

DT_API dt_status dt_huber_loss_new(int32_t reduction, double delta, dt_module** out) {
  const char* fn = "dt_huber_loss_new";
  return make_module(fn, out, [&] { return nn::new_huber(reduction_arg(reduction, fn), delta); });
}

DT_API dt_status dt_bce_loss_new(const dt_tensor* weight, int32_t reduction, dt_module** out) {
  const char* fn = "dt_bce_loss_new";
  return make_module(fn, out, [&] { return nn::new_bce(optional_tensor_arg(weight, fn, "weight"), reduction_arg(reduction, fn)); });
}

DT_API dt_status dt_bce_with_logits_loss_new(const dt_tensor* weight, const dt_tensor* pos_weight, int32_t reduction,
                                             dt_module** out) {
  const char* fn = "dt_bce_with_logits_loss_new";
  return make_module(fn, out, [&] {
    return nn::new_bce_with_logits(optional_tensor_arg(weight, fn, "weight"), optional_tensor_arg(pos_weight, fn, "pos_weight"),
                                   reduction_arg(reduction, fn));
  });
}

DT_API dt_status dt_kl_div_loss_new(int32_t reduction, int32_t log_target, dt_module** out) {
  const char* fn = "dt_kl_div_loss_new";
  return make_module(fn, out, [&] {
    const bool log = flag_arg(log_target, fn, "log_target");
    if (reduction == DT_REDUCTION_BATCHMEAN) return nn::new_kl_div(nn::Reduction::Sum, true, log);
    if (reduction != DT_REDUCTION_NONE && reduction != DT_REDUCTION_MEAN && reduction != DT_REDUCTION_SUM)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(fn, ": unknown reduction ", reduction, " (DT_REDUCTION_NONE, _MEAN, _SUM or _BATCHMEAN)"));
    return nn::new_kl_div(static_cast<nn::Reduction>(reduction), false, log);
  });
}

DT_API dt_status dt_data_parallel_new(dt_module* module, const dt_device* device_ids, size_t n,
                                      dt_device output_device, dt_module** out) {
  return make_module("dt_data_parallel_new", out, [&] {
    const char* fn = "dt_data_parallel_new";
    nn::Module* inner = module_arg_pinned(module, fn);
    if (n > 0 && !device_ids) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": device_ids is NULL but n is ", n));
    // DT_DEVICE_DEFAULT entries mean the process default device; new_data_parallel checks
    // every entry, naming it in its message.
    auto device_of = [](dt_device d) { return d.type == DT_DEVICE_DEFAULT ? default_device() : Device::from_c(d); };
    std::vector<Device> devices;
    for (size_t i = 0; i < n; ++i) devices.push_back(device_of(device_ids[i]));
    const Device output = device_of(output_device);
    inner->ref();
    Ref<nn::Module> owned = Ref<nn::Module>::adopt(inner);
    return nn::new_data_parallel(owned, std::move(devices),
                                 output_device.type == DT_DEVICE_DEFAULT ? nullptr : &output);
  });
}

DT_API dt_status dt_distributed_data_parallel_new(dt_module* module, const dt_process_group* pg,
                                                  int64_t bucket_cap_bytes, int32_t find_unused_parameters,
                                                  dt_module** out) {
  return make_module("dt_distributed_data_parallel_new", out, [&] {
    const char* fn = "dt_distributed_data_parallel_new";
    nn::Module* inner = module_arg_pinned(module, fn);
    dist::ProcessGroup* g = object_arg<dist::ProcessGroup, HandleKind::ProcessGroup>(pg, fn, "pg");
    if (bucket_cap_bytes < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": bucket_cap_bytes ", bucket_cap_bytes, " is negative"));
    if (find_unused_parameters != 0 && find_unused_parameters != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": find_unused_parameters is ", find_unused_parameters, "; expected 0 or 1"));
    inner->ref();
    Ref<nn::Module> owned = Ref<nn::Module>::adopt(inner);
    g->ref();
    Ref<dist::ProcessGroup> group = Ref<dist::ProcessGroup>::adopt(g);
    return dist::new_distributed_data_parallel(owned, group, static_cast<size_t>(bucket_cap_bytes),
                                               find_unused_parameters == 1);
  });
}

DT_API dt_status dt_distributed_data_parallel_no_sync(dt_module* ddp, int32_t no_sync) {
  return guard([&] {
    const char* fn = "dt_distributed_data_parallel_no_sync";
    nn::Module* m = object_arg<nn::Module, HandleKind::Module>(ddp, fn, "ddp");
    if (no_sync != 0 && no_sync != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": no_sync is ", no_sync, "; expected 0 or 1"));
    dist::set_no_sync(*m, no_sync == 1, fn);
  });
}

DT_API dt_status dt_module_retain(dt_module* m) {
  return guard([&] {
    if (!m) fail(DT_ERR_INVALID_ARGUMENT, "dt_module_retain: m is NULL");
    handle_retain(m, HandleKind::Module);
  });
}

DT_API dt_status dt_module_release(dt_module* m) {
  return guard([&] {
    if (m) handle_release(m, HandleKind::Module);
  });
}

DT_API dt_status dt_module_forward(dt_module* m, const dt_tensor* const* inputs, size_t n, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_module_forward";
    require(out, fn, "out");
    nn::Module* mod = module_arg_pinned(m, fn);
    if (n > 0 && !inputs) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": inputs is NULL but n is ", n));
    if (n > mod->arity() || n < mod->min_inputs()) {
      const std::string count = mod->min_inputs() == mod->arity() ? cat(mod->arity())
                                                                    : cat(mod->min_inputs(), " to ", mod->arity());
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", mod->kind(), " takes ", count, " input",
                                        mod->arity() == 1                                   ? ""
                                        : mod->arity() == 2 && mod->min_inputs() == 2 ? "s (input, target)"
                                                                                      : "s",
                                        " but ", n, n == 1 ? " was given" : " were given"));
    }
    std::vector<Tensor> in;
    for (size_t i = 0; i < n; ++i) {
      if (!inputs[i] && mod->input_optional(i)) {  // None
        in.emplace_back();
        continue;
      }
      Borrowed b = tensor_arg(inputs[i], fn, "inputs[i]");
      in.push_back(b);
    }
    *out = new_handle(mod->forward(in));
  });
}

DT_API dt_status dt_module_to(dt_module* m, dt_device device) {
  return guard([&] {
    nn::refuse_inside_forward("dt_module_to");
    nn::Module* mod = module_arg(m, "dt_module_to");
    Device d = Device::from_c(device);
    check_device(d);
    mod->to(d);
  });
}

DT_API dt_status dt_module_device(const dt_module* m, dt_device* out) {
  return guard([&] {
    require(out, "dt_module_device", "out");
    *out = module_arg_pinned(m, "dt_module_device")->device().to_c();
  });
}

DT_API dt_status dt_module_train(dt_module* m) {
  return guard([&] { module_arg(m, "dt_module_train")->train(true); });
}
DT_API dt_status dt_module_eval(dt_module* m) {
  return guard([&] { module_arg(m, "dt_module_eval")->train(false); });
}

DT_API dt_status dt_module_parameter_count(const dt_module* m, size_t* out) {
  return guard([&] {
    require(out, "dt_module_parameter_count", "out");
    *out = module_arg(m, "dt_module_parameter_count")->parameters(true).size();
  });
}
DT_API dt_status dt_module_parameter(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                     dt_tensor** tensor) {
  return named_entry(m, i, buf, cap, needed, tensor, true, "dt_module_parameter");
}
DT_API dt_status dt_module_buffer_count(const dt_module* m, size_t* out) {
  return guard([&] {
    require(out, "dt_module_buffer_count", "out");
    *out = module_arg(m, "dt_module_buffer_count")->buffers(true).size();
  });
}
DT_API dt_status dt_module_buffer(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                  dt_tensor** tensor) {
  return named_entry(m, i, buf, cap, needed, tensor, false, "dt_module_buffer");
}

DT_API dt_status dt_module_kind(const dt_module* m, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_module_kind");
    write_string(module_arg(m, "dt_module_kind")->kind(), buf, cap, needed);
  });
}

DT_API dt_status dt_module_child_count(const dt_module* m, size_t* out) {
  return guard([&] {
    require(out, "dt_module_child_count", "out");
    *out = module_arg(m, "dt_module_child_count")->children().size();
  });
}

namespace {
dt_module* shared_module_handle(nn::Module* child) {
  return static_cast<dt_module*>(shared_object_handle<nn::Module, HandleKind::Module>(child));
}
}  // namespace

DT_API dt_status dt_module_child_at(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                    dt_module** child) {
  const char* fn = "dt_module_child_at";
  return guard([&] {
    check_string_buffer(buf, cap, fn);
    const auto& children = module_arg(m, fn)->children();
    if (i >= children.size())
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": index ", i, " is out of range (the module has ", children.size(),
                                        " children)"));
    dt_module* h = child ? shared_module_handle(children[i].second.get()) : nullptr;
    write_string(children[i].first, buf, cap, needed);
    if (child) *child = h;
  });
}

DT_API dt_status dt_module_child(const dt_module* m, const char* path, dt_module** out) {
  const char* fn = "dt_module_child";
  return guard([&] {
    require(out, fn, "out");
    if (!path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is NULL"));
    nn::Module* mod = module_arg(m, fn);
    std::string missing;
    const nn::Module* parent = nullptr;
    nn::Module* found = mod->find_child(path, &missing, &parent);
    if (!found) {
      std::string names;
      for (const auto& [name, c] : parent->children()) names += (names.empty() ? "" : ", ") + name;
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": no child \"", missing, "\" on the path \"", path, "\" (", parent->kind(),
                                        names.empty() ? std::string(" has no children") : cat("'s children: ", names),
                                        ")"));
    }
    *out = shared_module_handle(found);
  });
}

DT_API dt_status dt_module_state_dict(const dt_module* m, dt_state_dict** out) {
  return guard([&] {
    require(out, "dt_module_state_dict", "out");
    *out = new_state_dict_handle(io::state_dict(*module_arg(m, "dt_module_state_dict")));
  });
}

DT_API dt_status dt_module_load_state_dict(dt_module* m, const dt_state_dict* sd) {
  return guard([&] {
    const char* fn = "dt_module_load_state_dict";
    nn::Module* mod = module_arg_pinned(m, fn);
    io::load_state_dict(*mod, state_dict_arg(sd, fn, "sd"), DT_ERR_INVALID_ARGUMENT, fn);
  });
}

namespace {
std::string path_arg(const char* path, const char* fn) {
  if (!path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is NULL"));
  if (!*path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is empty"));
  return path;
}
}  // namespace

DT_API dt_status dt_module_save(const dt_module* m, const char* path) {
  return guard([&] {
    const char* fn = "dt_module_save";
    nn::Module* mod = module_arg_pinned(m, fn);
    io::save_safetensors(*io::state_dict(*mod), path_arg(path, fn), fn);
  });
}

DT_API dt_status dt_module_load(dt_module* m, const char* path) {
  return guard([&] {
    const char* fn = "dt_module_load";
    nn::Module* mod = module_arg_pinned(m, fn);
    std::string p = path_arg(path, fn);
    std::unique_ptr<io::StateDict> sd = io::load_safetensors(p, Device{DT_DEVICE_CPU, 0}, fn);
    io::load_state_dict(*mod, *sd, DT_ERR_FORMAT, cat(fn, ": ", p).c_str());
  });
}

}  // extern "C"
