// Modules the caller defines (dt_module_new) and the by-name lookups their forward
// functions use (dt_module_get_parameter, dt_module_get_buffer).
#include <string>
#include <utility>
#include <vector>

#include "api/objects.h"
#include "api/shim.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace dt::api {
const char* last_error() noexcept;  // api/shim.cpp
}

namespace {

// Drops a handle this file made, ignoring a handle the caller's function already
// released (the generation check reports it; nothing else can go wrong).
void drop(const void* h, HandleKind kind) noexcept {
  try {
    if (h) handle_release(h, kind);
  } catch (...) {
  }
}

// The caller's forward function behind nn::ForwardFunction: handles for self and the
// inputs for the length of the call, the status and message of a failure, the output's
// reference taken over. The module and its replicas share it; the last one frees
// user_data.
class CallerForward final : public nn::ForwardFunction {
 public:
  CallerForward(dt_module_forward_fn fn, void* user_data, dt_module_free_fn free_user_data)
      : fn_(fn), user_data_(user_data), free_(free_user_data) {}
  // From here the last module or replica to go frees user_data.
  void own(dt_module_free_fn free_user_data) { free_ = free_user_data; }
  ~CallerForward() override {
    if (free_) free_(user_data_);
  }

  Tensor call(nn::Module& self, const std::vector<Tensor>& inputs) override {
    struct Handles {
      void* self = nullptr;
      std::vector<dt_tensor*> inputs;
      ~Handles() {
        for (dt_tensor* h : inputs) drop(h, HandleKind::Tensor);
        drop(self, HandleKind::Module);
      }
    } h;
    h.inputs.reserve(inputs.size());
    for (const Tensor& t : inputs) h.inputs.push_back(t.defined() ? new_handle(t) : nullptr);
    h.self = shared_object_handle<nn::Module, HandleKind::Module>(&self);
    // Cleared so that a failure's message is the function's, or none; put back after a
    // success (successful calls do not change it).
    const std::string before = last_error();
    set_error(DT_OK, "");
    dt_tensor* out = nullptr;
    const dt_status st = fn_(static_cast<dt_module*>(h.self), h.inputs.data(), h.inputs.size(), user_data_, &out);
    if (st == DT_OK) set_error(DT_OK, before.c_str());
    if (st != DT_OK) {
      drop(out, HandleKind::Tensor);  // a function that wrote an output and then failed
      const std::string why = last_error();
      const bool known = st > DT_OK && st <= DT_ERR_DISTRIBUTED;
      // "ResNet.forward: BasicBlock.forward: Conv2d(...): ...", a traceback of sorts.
      if (!known) fail(DT_ERR_INTERNAL, cat(self.kind(), ".forward returned ", st, ", which is not a status",
                                            why.empty() ? "" : ": ", why));
      fail(st, why.empty() ? cat(self.kind(), ".forward failed (", dt_status_string(st), ") without a message")
                           : cat(self.kind(), ".forward: ", why));
    }
    if (!out) fail(DT_ERR_INVALID_ARGUMENT, cat(self.kind(), ": its forward function returned DT_OK but no output"));
    Tensor result;
    {
      Borrowed b = tensor_arg(out, self.kind(), "the forward function's output");
      result = b;
    }
    drop(out, HandleKind::Tensor);
    return result;
  }

 private:
  dt_module_forward_fn fn_;
  void* user_data_;
  dt_module_free_fn free_;
};

// The entries of one of spec's lists, each name and element checked non-NULL.
template <typename T, typename Add>
void each_entry(size_t n, const char* const* names, const T* items, const char* list, const Add& add) {
  const char* fn = "dt_module_new";
  if (n == 0) return;
  if (!names || !items) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", list, " has ", n, " entries but its names or "
                                                          "elements are NULL"));
  for (size_t i = 0; i < n; ++i) {
    if (!names[i]) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", list, " name ", i, " is NULL"));
    if (!items[i]) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", list, " entry ", i, " (\"", names[i], "\") is NULL"));
    add(names[i], items[i]);
  }
}

// The tensor at a dotted path among parameters (params) or buffers, or INVALID_ARGUMENT
// naming what is missing and what there is.
Tensor tensor_at(const dt_module* m, const char* path, bool params, const char* fn) {
  if (!path) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": path is NULL"));
  const nn::Module* mod = object_arg<nn::Module, HandleKind::Module>(m, fn, "m");
  const std::string p = path;
  const size_t dot = p.rfind('.');
  const std::string leaf = dot == std::string::npos ? p : p.substr(dot + 1);
  if (dot != std::string::npos) {
    std::string missing;
    const nn::Module* parent = nullptr;
    mod = mod->find_child(p.substr(0, dot), &missing, &parent);
    if (!mod) {
      std::string children;
      for (const auto& [name, c] : parent->children()) children += (children.empty() ? "" : ", ") + name;
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": no child \"", missing, "\" on the path \"", p, "\" (the ",
                                        parent->kind(), " there has ",
                                        children.empty() ? std::string("no children") : cat("children ", children),
                                        ")"));
    }
  }
  std::string names;
  for (const auto& [name, t] : mod->own(params)) {
    if (name == leaf) return t;
    names += (names.empty() ? "" : ", ") + name;
  }
  const char* what = params ? "parameter" : "buffer";
  fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": no ", what, " \"", p, "\" (the ", mod->kind(), " there has ",
                                    names.empty() ? cat("no ", what, "s") : cat(what, "s ", names), ")"));
}

}  // namespace

extern "C" {

DT_API dt_status dt_module_new(const dt_module_spec* spec, dt_module** out) {
  const char* fn = "dt_module_new";
  return guard([&] {
    require(out, fn, "out");
    require(spec, fn, "spec");
    if (spec->struct_size < sizeof(dt_module_spec))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": spec->struct_size is ", spec->struct_size, ", expected at least ",
                                        sizeof(dt_module_spec), " (sizeof(dt_module_spec))"));
    if (!spec->kind) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": spec->kind is NULL"));
    if (!spec->forward) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": spec->forward is NULL"));
    nn::CustomModuleSpec s;
    s.kind = spec->kind;
    each_entry(spec->n_children, spec->child_names, spec->children, "children", [&](const char* name, dt_module* c) {
      nn::Module* child = object_arg<nn::Module, HandleKind::Module>(c, fn, "children[i]");
      child->ref();
      s.children.emplace_back(name, Ref<nn::Module>::adopt(child));
    });
    each_entry(spec->n_parameters, spec->parameter_names, spec->parameters, "parameters",
               [&](const char* name, const dt_tensor* t) {
                 s.parameters.emplace_back(name, Tensor(tensor_arg(t, fn, "parameters[i]")));
               });
    each_entry(spec->n_buffers, spec->buffer_names, spec->buffers, "buffers", [&](const char* name, const dt_tensor* t) {
      s.buffers.emplace_back(name, Tensor(tensor_arg(t, fn, "buffers[i]")));
    });
    s.min_inputs = spec->min_inputs;
    s.max_inputs = spec->max_inputs;
    // The function object frees user_data only once the module's handle exists (own()),
    // so on any failure here user_data stays the caller's, as documented.
    auto forward = std::make_shared<CallerForward>(spec->forward, spec->user_data, nullptr);
    s.forward = forward;
    nn::Module* m = nn::new_custom_module(std::move(s));
    dt_module* h = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
    forward->own(spec->free_user_data);
    *out = h;
  });
}

DT_API dt_status dt_module_get_parameter(const dt_module* m, const char* path, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_module_get_parameter", "out");
    *out = new_handle(tensor_at(m, path, true, "dt_module_get_parameter"));
  });
}

DT_API dt_status dt_module_get_buffer(const dt_module* m, const char* path, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_module_get_buffer", "out");
    *out = new_handle(tensor_at(m, path, false, "dt_module_get_buffer"));
  });
}

}  // extern "C"
