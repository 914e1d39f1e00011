// Modules: layers, containers and losses with named parameters and buffers, as
// torch.nn. A module owns its tensors; parameters are leaves that require grad.
// to() moves every parameter and buffer IN PLACE (the tensor bodies the caller may hold
// keep pointing at the moved data), as module.to(device) does in PyTorch.
#pragma once
#include <atomic>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/refcounted.h"
#include "core/tensor.h"

namespace dt::nn {

using Named = std::vector<std::pair<std::string, Tensor>>;

class Module : public RefCounted {
 public:
  virtual ~Module() = default;
  static void destroy(Module* m) { delete m; }

  virtual const char* kind() const = 0;  // "Linear", as PyTorch's class name
  // The number of inputs forward takes (1, or 2 for losses): at most arity(), at least
  // min_inputs(); input i may be undefined (NULL in the C API) when input_optional(i),
  // as PyTorch's None (attention masks).
  virtual size_t arity() const { return 1; }
  virtual size_t min_inputs() const { return arity(); }
  virtual bool input_optional(size_t) const { return false; }
  virtual Tensor forward(const std::vector<Tensor>& inputs) = 0;

  // Parameters / buffers of this module and its children, with state_dict names: every
  // key (a child shared by two parents appears under both, as in PyTorch's state_dict,
  // and replicas pair with these lists by position), or with `unique` each tensor once,
  // under its first name (PyTorch's named_parameters(): what optimizers and DDP take).
  Named parameters(bool unique = false) const;
  Named buffers(bool unique = false) const;
  void train(bool on);  // recursive
  bool training() const { return training_.load(std::memory_order_relaxed); }
  // Moves every parameter, gradient and buffer to device, in place: each tensor's
  // storage is replaced under its move lock (core/move_lock.h), so threads reading the
  // tensors meanwhile see the old data or the new, never freed memory.
  void to(Device device);
  // Calls f(tensor) for every parameter and buffer of this module and its children,
  // depth first (no names built: for pinning).
  template <typename F>
  void visit_tensors(const F& f) const {
    for (const auto& [name, t] : params_) f(t);
    for (const auto& [name, t] : buffers_) f(t);
    for (const auto& [name, child] : children_) child->visit_tensors(f);
  }
  // This module's own parameters (params) or buffers, without its children's.
  const Named& own(bool params) const { return params ? params_ : buffers_; }
  // The direct children, named as in state_dict keys ("0", "features"), in order.
  const std::vector<std::pair<std::string, Ref<Module>>>& children() const { return children_; }
  // The descendant at a dotted path ("features.0"), or null; then *missing is the first
  // name not found and *parent the module that lacks it.
  Module* find_child(const std::string& path, std::string* missing, const Module** parent) const;
  // The device of the first parameter or buffer (cpu:0 when there is none).
  Device device() const;
  // The first parameter (params) or buffer, depth first, or null: what forward checks
  // an input's device against, found without building the named lists.
  const Tensor* first(bool params) const;

  // A copy of this module and its children on `device` for DataParallel: the same kind,
  // settings and training flag; its parameters are autograd-tracked copies of this
  // module's (when grad mode is on), so gradients flowing into the replica's parameters
  // reach this module's .grad; buffers are plain copies.
  Ref<Module> replicate(Device device) const;
  // Appends what a replica depends on: every parameter's and buffer's storage version
  // (core/storage.h) and every training flag, depth first. Equal stamps: a replica made
  // at the first is still current at the second.
  void stamp(std::vector<uint64_t>* out) const;

 protected:
  Module() = default;
  // Shares o's tensors and children; clone()'s callers replace them.
  Module(const Module& o);
  // A new module of the same kind and settings sharing this one's tensors and children
  // (replicate() replaces them). Modules that cannot be replicated keep this default,
  // which fails with DT_ERR_NOT_SUPPORTED.
  virtual Module* clone() const;

  Named params_, buffers_;
  std::vector<std::pair<std::string, Ref<Module>>> children_;
  std::atomic<bool> training_{true};  // read by forward while another thread may call train()

 private:
  void collect(const std::string& prefix, bool params, std::set<const TensorImpl*>* seen, Named* out) const;
};

// A tensor for a parameter or buffer: movable (core/move_lock.h), with its own storage
// (never the inline block of tiny tensors), so that to() can replace the storage under it.
Tensor new_parameter(const Dims& shape, DType dtype, Device device);

// "module parameters are on cuda:0 but the input is on cpu" unless they match.
void check_input_device(const Module& m, const Tensor& input);

}  // namespace dt::nn
