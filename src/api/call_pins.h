// Movable tensors (a module's parameters and buffers, core/move_lock.h) that an entry
// point reads stay pinned until it returns: guard() opens a CallScope, tensor_arg and the
// module and optimizer entry points pin what they read, and the scope releases the pins
// when the call ends, however it ends. Tensors that cannot move cost one flag test.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace dt::nn {
class Module;
}

namespace dt::api {

struct CallPinState {
  uint32_t count;  // pins held by this thread's open calls
  uint32_t depth;  // open calls (entry points may nest)
};
inline CallPinState& call_pin_state() {
  // initial-exec: a direct TLS access in every entry point, no __tls_get_addr call
  static thread_local CallPinState state __attribute__((tls_model("initial-exec")));
  return state;
}

void release_call_pins(uint32_t mark) noexcept;

// One per entry point (guard): pins taken inside are released when it ends.
class CallScope {
 public:
  CallScope() noexcept : mark_(call_pin_state().count) { ++call_pin_state().depth; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  ~CallScope() {
    CallPinState& s = call_pin_state();
    if (s.count != mark_) release_call_pins(mark_);
    --s.depth;
  }

 private:
  uint32_t mark_;
};

void pin_movable_for_call(TensorImpl* t);
// Pins t until the current entry point returns, when t is movable (holding a reference).
inline void pin_for_call(TensorImpl* t) {
  if (t->movable) pin_movable_for_call(t);
}
// Pins every parameter and buffer of m and its children for the current call.
void pin_module_for_call(const nn::Module& m);

}  // namespace dt::api
