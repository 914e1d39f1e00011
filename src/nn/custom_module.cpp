// A module the caller defines (dt_module_new): named children, parameters and buffers
// fixed at construction, and a forward function the C shim adapts (nn::ForwardFunction).
// Its structure never changes after construction, so it needs no lock of its own.
#include <memory>
#include <string>
#include <utility>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

// How many custom forwards this thread is inside (refuse_inside_forward), and how many
// it may be: a function that runs its own module fails there, not by overflowing the
// stack (each level is a few frames of the caller's and ours).
thread_local int t_forward_depth = 0;
constexpr int kMaxForwardDepth = 100;

class CustomModule final : public Module {
 public:
  explicit CustomModule(CustomModuleSpec spec) : kind_(std::move(spec.kind)), min_(spec.min_inputs),
                                                 max_(spec.max_inputs), fn_(std::move(spec.forward)) {
    params_ = std::move(spec.parameters);
    buffers_ = std::move(spec.buffers);
    children_ = std::move(spec.children);
  }
  Module* clone() const override { return new CustomModule(*this); }  // replicas share the function
  const char* kind() const override { return kind_.c_str(); }
  size_t arity() const override { return max_; }
  size_t min_inputs() const override { return min_; }
  bool input_optional(size_t i) const override { return i >= min_; }  // PyTorch's None
  Tensor forward(const std::vector<Tensor>& in) override {
    if (t_forward_depth >= kMaxForwardDepth)
      fail(DT_ERR_INVALID_ARGUMENT, cat(kind_, ": forwards nested ", kMaxForwardDepth,
                                        " deep (does a forward function run its own module?)"));
    struct Inside {  // the count goes back down however the call ends
      Inside() { ++t_forward_depth; }
      ~Inside() { --t_forward_depth; }
    } inside;
    return fn_->call(*this, in);
  }

 private:
  CustomModule(const CustomModule&) = default;
  std::string kind_;
  size_t min_, max_;
  std::shared_ptr<ForwardFunction> fn_;
};

// INVALID_ARGUMENT unless `name` can be a state-dict name part: not empty, no '.'.
void check_name(const std::string& kind, const char* what, const std::string& name) {
  if (name.empty() || name.find('.') != std::string::npos)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": ", what, " name \"", name,
                                      "\" is not allowed (names are not empty and have no '.')"));
}

// A movable copy of t's values: the module's own parameter or buffer.
Tensor own_copy(const Tensor& t, bool parameter) {
  Tensor own = new_parameter(t.shape(), t.dtype(), t.device());
  if (own.numel() > 0) ops::copy_(own, ag::detach(t));
  if (parameter) ag::set_requires_grad(own, true);
  return own;
}

}  // namespace

Module* new_custom_module(CustomModuleSpec spec) {
  const std::string& kind = spec.kind;
  if (kind.empty()) fail(DT_ERR_INVALID_ARGUMENT, "dt_module_new: kind is empty");
  if (!spec.forward) fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": no forward function"));
  if (spec.min_inputs == 0 && spec.max_inputs == 0) spec.min_inputs = spec.max_inputs = 1;
  if (spec.max_inputs == 0 || spec.max_inputs > kMaxCustomInputs || spec.min_inputs > spec.max_inputs)
    fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": takes min_inputs ", spec.min_inputs, " to max_inputs ",
                                      spec.max_inputs, " (need 1 <= max_inputs <= ", kMaxCustomInputs,
                                      " and min_inputs <= max_inputs)"));
  std::vector<std::pair<std::string, const char*>> names;  // every name, with what it names
  for (const auto& [name, c] : spec.children) names.emplace_back(name, "child");
  for (const auto& [name, t] : spec.parameters) names.emplace_back(name, "parameter");
  for (const auto& [name, t] : spec.buffers) names.emplace_back(name, "buffer");
  for (size_t i = 0; i < names.size(); ++i) {
    check_name(kind, names[i].second, names[i].first);
    for (size_t j = 0; j < i; ++j)
      if (names[j].first == names[i].first)
        fail(DT_ERR_INVALID_ARGUMENT, cat(kind, ": \"", names[i].first, "\" names both a ", names[j].second,
                                          " and a ", names[i].second, " (names must be unique)"));
  }
  for (const auto& [name, t] : spec.parameters)
    if (!is_floating(t.dtype()))
      fail(DT_ERR_DTYPE_MISMATCH, cat(kind, ": parameter \"", name, "\" is ", dtype_name(t.dtype()),
                                      " (a parameter needs a floating dtype; integer state is a buffer)"));
  for (auto& [name, t] : spec.parameters) t = own_copy(t, true);
  for (auto& [name, t] : spec.buffers) t = own_copy(t, false);
  return new CustomModule(std::move(spec));
}

void refuse_inside_forward(const char* fn) {
  if (t_forward_depth > 0)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": called from inside a module's forward function, where the module's",
                                      " tensors are in use"));
}

}  // namespace dt::nn
