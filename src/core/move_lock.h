// Moving a module in place (nn::Module::to) replaces the storage of each of its
// parameters and buffers (their TensorImpl's `storage`, strides and offset) while other
// threads may hold handles to those tensors and read them. A movable tensor
// (TensorImpl::movable) therefore carries a small reader/writer lock:
//  - every reader pins it (shared) for as long as it uses the storage: an entry point
//    pins each movable tensor it reads for the length of the call (api/call_pins.h),
//    internal code that reads one outside such a call takes a MovePin;
//  - a move replaces the storage only under the exclusive lock (replace_storage).
// So a racing reader sees the old storage or the new one, whole, and the old one is
// freed only after its last reader let go. Tensors that are not movable (nearly all)
// pay one flag test.
//
// Waiting moves are preferred over new readers, so a stream of readers cannot starve a
// move; a thread that already holds a pin is let through regardless (it may hold this
// very tensor, or be inside a call that does), which keeps recursive pins deadlock-free.
// A move holds at most one exclusive lock at a time and never while it holds a pin.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace dt {

// Shared lock on t's storage slot (t must be movable). Blocks only while a move of t is
// swapping, or while one waits and this thread holds no other pin.
void move_lock_shared(TensorImpl* t);
void move_unlock_shared(TensorImpl* t);

// Pins a tensor's storage for a scope (no-op for tensors that cannot move).
class MovePin {
 public:
  MovePin() = default;
  explicit MovePin(const Tensor& t) : t_(t.defined() && t.impl()->movable ? t.impl() : nullptr) {
    if (t_) move_lock_shared(t_);
  }
  MovePin(MovePin&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  MovePin(const MovePin&) = delete;
  MovePin& operator=(const MovePin&) = delete;
  MovePin& operator=(MovePin&&) = delete;
  ~MovePin() {
    if (t_) move_unlock_shared(t_);
  }

 private:
  TensorImpl* t_ = nullptr;
};

// Gives the movable tensor t the storage and layout of `moved` (same shape and dtype),
// under t's exclusive lock: waits for t's readers to finish. The old storage loses t's
// reference (freed if that was the last). INTERNAL if t is not movable, or if this
// thread holds a pin (it could be t's own, which would never be released).
void replace_storage(TensorImpl* t, const Tensor& moved);

}  // namespace dt
