#include "nn/module.h"

#include "core/allocator.h"
#include "core/error.h"
#include "core/move_lock.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/ops.h"

namespace dt::nn {

void Module::collect(const std::string& prefix, bool params, std::set<const TensorImpl*>* seen, Named* out) const {
  for (const auto& [name, t] : params ? params_ : buffers_)
    if (!seen || seen->insert(t.impl()).second) out->emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", params, seen, out);
}

Named Module::parameters(bool unique) const {
  Named out;
  std::set<const TensorImpl*> seen;
  collect("", true, unique ? &seen : nullptr, &out);
  return out;
}

Named Module::buffers(bool unique) const {
  Named out;
  std::set<const TensorImpl*> seen;
  collect("", false, unique ? &seen : nullptr, &out);
  return out;
}

void Module::train(bool on) {
  training_.store(on, std::memory_order_relaxed);
  for (auto& [name, child] : children_) child->train(on);
}

void Module::to(Device device) {
  // Copy everything first, then swap: a failure (out of memory) leaves the module as it
  // was. The copies read each tensor under a pin (another thread may be moving it too);
  // the pins are dropped before the swaps, which wait for every reader.
  // (Gradients are not movable tensors; they are read before pinning, since autograd's
  // lock is never taken while a pin is held.)
  std::vector<Tensor> all;
  visit_tensors([&](const Tensor& t) { all.push_back(t); });
  std::vector<Tensor> moved, moved_grads;
  for (const Tensor& t : all) {
    Tensor g = ag::grad(t);
    moved_grads.push_back(g.defined() ? ops::to(g, device, g.dtype(), false) : Tensor());
  }
  {
    std::vector<MovePin> pins;
    pins.reserve(all.size());
    for (const Tensor& t : all) pins.emplace_back(t);
    for (const Tensor& t : all) moved.push_back(ops::to(t, device, t.dtype(), false));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (moved[i].impl() != all[i].impl()) replace_storage(all[i].impl(), moved[i]);
    if (moved_grads[i].defined()) ag::set_grad(all[i], moved_grads[i]);
  }
}

Module* Module::find_child(const std::string& path, std::string* missing, const Module** parent) const {
  const Module* at = this;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string name = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const Module* next = nullptr;
    for (const auto& [n, child] : at->children_)
      if (n == name) next = child.get();
    if (!next) {
      *missing = name;
      *parent = at;
      return nullptr;
    }
    at = next;
    if (dot == std::string::npos) return const_cast<Module*>(at);
    start = dot + 1;
  }
}

const Tensor* Module::first(bool params) const {
  const Named& own = params ? params_ : buffers_;
  if (!own.empty()) return &own[0].second;
  for (const auto& [name, child] : children_)
    if (const Tensor* t = child->first(params)) return t;
  return nullptr;
}

Device Module::device() const {
  const Tensor* t = first(true);
  if (!t) t = first(false);
  return t ? t->device() : Device{DT_DEVICE_CPU, 0};
}

Module::Module(const Module& o)
    : RefCounted(), params_(o.params_), buffers_(o.buffers_), children_(o.children_), training_(o.training()) {}

Module* Module::clone() const { fail(DT_ERR_NOT_SUPPORTED, cat(kind(), " cannot be replicated")); }

Ref<Module> Module::replicate(Device device) const {
  Ref<Module> r = Ref<Module>::adopt(clone());
  for (auto& [name, t] : r->params_) t = ag::to(t, device, t.dtype(), true);
  for (auto& [name, t] : r->buffers_) t = ops::to(t, device, t.dtype(), true);
  for (auto& [name, child] : r->children_) child = child->replicate(device);
  return r;
}

void Module::stamp(std::vector<uint64_t>* out) const {
  out->push_back(training() ? 1 : 0);
  for (const auto& [name, t] : params_) out->push_back(t.storage()->version());
  for (const auto& [name, t] : buffers_) out->push_back(t.storage()->version());
  for (const auto& [name, child] : children_) child->stamp(out);
}

Tensor new_parameter(const Dims& shape, DType dtype, Device device) {
  Tensor t = Tensor::empty_from(allocator_for(device), shape, dtype, device);
  t.impl()->movable = true;
  return t;
}

void check_input_device(const Module& m, const Tensor& input) {
  const Tensor* t = m.first(true);
  const char* what = "parameters";
  if (!t) {
    t = m.first(false);
    what = "buffers";
  }
  if (!t) return;
  Device d = t->device();
  if (d != input.device())
    fail(DT_ERR_DEVICE_MISMATCH, cat(m.kind(), ": module ", what, " are on ", device_str(d), " but the input is on ",
                                     device_str(input.device())));
}

}  // namespace dt::nn
