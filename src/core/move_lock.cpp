#include "core/move_lock.h"

#include <sched.h>

#include <chrono>
#include <thread>

#include "core/error.h"

namespace dt {
namespace {

// Lock word: bit 31 a move is swapping, bit 30 a move is waiting, bits 0-29 readers.
constexpr uint32_t kActive = 1u << 31;
constexpr uint32_t kWaiting = 1u << 30;
constexpr uint32_t kReaders = kWaiting - 1;

// Pins this thread holds on any movable tensor (shared locks taken, not yet released).
thread_local uint32_t t_pins_held = 0;

// Spin briefly, then yield, then sleep: a reader may hold its pin for a long operation.
class Backoff {
 public:
  void pause() {
    if (++n_ < 64) return;
    if (n_ < 1024) {
      sched_yield();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }

 private:
  uint32_t n_ = 0;
};

}  // namespace

void move_lock_shared(TensorImpl* t) {
  std::atomic<uint32_t>& w = t->move_lock;
  Backoff backoff;
  uint32_t s = w.load(std::memory_order_relaxed);
  while (true) {
    const bool held_back = (s & kActive) || ((s & kWaiting) && t_pins_held == 0);
    if (!held_back && w.compare_exchange_weak(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed)) break;
    if (held_back) {
      backoff.pause();
      s = w.load(std::memory_order_relaxed);
    }
  }
  ++t_pins_held;
}

void move_unlock_shared(TensorImpl* t) {
  --t_pins_held;
  t->move_lock.fetch_sub(1, std::memory_order_release);
}

void replace_storage(TensorImpl* t, const Tensor& moved) {
  if (!t->movable) fail(DT_ERR_INTERNAL, "replace_storage: the tensor is not a module's parameter or buffer");
  if (t_pins_held != 0) fail(DT_ERR_INTERNAL, "replace_storage: called while this thread pins a tensor");
  if (t->in_storage_block)
    fail(DT_ERR_INTERNAL, "a module tensor lives inside its storage block and cannot be moved in place");
  std::atomic<uint32_t>& w = t->move_lock;
  Backoff backoff;
  // Announce the move (one move at a time), then wait for the readers to leave.
  uint32_t s = w.load(std::memory_order_relaxed);
  while (true) {
    if (!(s & (kActive | kWaiting)) &&
        w.compare_exchange_weak(s, s | kWaiting, std::memory_order_relaxed, std::memory_order_relaxed))
      break;
    backoff.pause();
    s = w.load(std::memory_order_relaxed);
  }
  s = w.load(std::memory_order_acquire);
  while (true) {
    if ((s & kReaders) == 0 && w.compare_exchange_weak(s, kActive, std::memory_order_acquire, std::memory_order_acquire))
      break;
    backoff.pause();
    s = w.load(std::memory_order_acquire);
  }
  Ref<Storage> old = std::move(t->storage);
  t->storage = moved.impl()->storage;
  t->strides = moved.strides();
  t->offset = moved.offset();
  t->contiguous = moved.is_contiguous();
  w.store(0, std::memory_order_release);
  // `old` is released here, after the lock: its last reader has finished.
}

}  // namespace dt
