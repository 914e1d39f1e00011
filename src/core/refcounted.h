// Intrusive reference counting for internal objects (storage, tensor bodies): one
// atomic per object, no control block, so a tiny tensor costs few allocations.
#pragma once
#include <atomic>
#include <cstdint>
#include <utility>

namespace dt {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  void ref() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Returns true when this was the last reference.
  bool unref() const noexcept { return refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  uint32_t use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }

 protected:
  ~RefCounted() = default;

 private:
  mutable std::atomic<uint32_t> refs_{1};
};

// Owning pointer to a RefCounted T; T must have a static void destroy(T*) or be deletable.
template <typename T>
class Ref {
 public:
  Ref() = default;
  // Adopts a reference the caller owns (a fresh object starts with one).
  static Ref adopt(T* p) { Ref r; r.p_ = p; return r; }
  Ref(const Ref& o) : p_(o.p_) { if (p_) p_->ref(); }
  Ref(Ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Ref& operator=(Ref o) noexcept { std::swap(p_, o.p_); return *this; }
  ~Ref() { reset(); }
  void reset() {
    if (p_ && p_->unref()) T::destroy(p_);
    p_ = nullptr;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  // Gives up ownership of the reference without dropping it.
  T* release() { return std::exchange(p_, nullptr); }

 private:
  T* p_ = nullptr;
};

}  // namespace dt
