#include "api/call_pins.h"

#include <vector>

#include "core/error.h"
#include "core/graph.h"
#include "core/move_lock.h"
#include "nn/module.h"

namespace dt::api {
namespace {
// The pinned tensors of this thread's open calls, innermost last; its size is
// call_pin_state().count.
std::vector<TensorImpl*>& pinned() {
  static thread_local std::vector<TensorImpl*> list;
  return list;
}
}  // namespace

void pin_movable_for_call(TensorImpl* t) {
  CallPinState& s = call_pin_state();
  if (s.depth == 0) fail(DT_ERR_INTERNAL, "a module tensor was pinned outside an entry point");
  std::vector<TensorImpl*>& list = pinned();
  list.reserve(list.size() + 1);  // the only step that can fail, before anything is taken
  move_lock_shared(t);
  t->ref();
  list.push_back(t);
  s.count = static_cast<uint32_t>(list.size());
  // A graph captured now may use it: replay must know if a move replaces its storage.
  if (Capture* c = capturing(t->storage->device())) {
    std::lock_guard<std::mutex> lock(c->mu);
    c->graph->note_movable(t);
  }
}

void release_call_pins(uint32_t mark) noexcept {
  std::vector<TensorImpl*>& list = pinned();
  while (list.size() > mark) {
    TensorImpl* t = list.back();
    list.pop_back();
    move_unlock_shared(t);
    if (t->unref()) TensorImpl::destroy(t);
  }
  call_pin_state().count = mark;
}

void pin_module_for_call(const nn::Module& m) {
  m.visit_tensors([](const Tensor& t) { pin_for_call(t.impl()); });
}

}  // namespace dt::api
