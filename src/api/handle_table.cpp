#include "api/handle_table.h"

#include <sys/mman.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "core/fault_injection.h"
#include "devtensor.h"

namespace dt {

namespace {

// state = generation (upper 32 bits) | reference count (lower 32 bits). A slot is live
// while its count is nonzero; freeing bumps the generation so old handles stop matching.
struct alignas(32) Slot {
  std::atomic<uint64_t> state{0};
  void* object = nullptr;
  HandleDestroy destroy = nullptr;
  uint32_t kind = 0;
};
static_assert(sizeof(Slot) == 32, "slot layout");

constexpr uint64_t kAddressBits = 48;
constexpr uint64_t kAddressMask = (uint64_t{1} << kAddressBits) - 1;
constexpr size_t kMaxSlots = size_t{1} << 24;  // 16M live handles, 512 MiB of address space

class Table {
 public:
  Table() {
    // Reserve address space once; pages are only backed when first touched.
    void* p = mmap(nullptr, kMaxSlots * sizeof(Slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    slots_ = (p == MAP_FAILED) ? nullptr : static_cast<Slot*>(p);
  }

  void* create(HandleKind kind, void* object, HandleDestroy destroy) {
    LocalCache& cache = local_cache();
    if (cache.n == 0) refill(cache);
    uint32_t index = cache.idx[--cache.n];
    Slot& s = slots_[index];
    s.object = object;
    s.destroy = destroy;
    s.kind = static_cast<uint32_t>(kind);
    uint64_t gen = s.state.load(std::memory_order_relaxed) >> 32;
    s.state.store((gen << 32) | 1u, std::memory_order_release);
    return encode(index, gen);
  }

  // Returns the slot for a handle whose generation matches and count is nonzero.
  Slot& lookup(const void* handle, HandleKind kind, const char* what, uint64_t* state_out) {
    uintptr_t h = reinterpret_cast<uintptr_t>(handle);
    uintptr_t addr = h & kAddressMask;
    uintptr_t base = reinterpret_cast<uintptr_t>(slots_);
    if (!slots_ || addr < base || addr >= base + used_bytes() || (addr - base) % sizeof(Slot) != 0)
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": not a devtensor handle"));
    Slot& s = *reinterpret_cast<Slot*>(addr);
    uint64_t st = s.state.load(std::memory_order_acquire);
    uint16_t gen = static_cast<uint16_t>(h >> kAddressBits);
    if (static_cast<uint16_t>(st >> 32) != gen || (st & 0xffffffffu) == 0)
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": the handle was already released (use after release or double release)"));
    if (s.kind != static_cast<uint32_t>(kind))
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": expected a ", handle_kind_name(kind), " handle but got a ",
                                      handle_kind_name(static_cast<HandleKind>(s.kind)), " handle"));
    *state_out = st;
    return s;
  }

  void retain(const void* handle, HandleKind kind) {
    uint64_t st;
    Slot& s = lookup(handle, kind, "retain", &st);
    while (true) {
      if ((st & 0xffffffffu) == 0xffffffffu) fail(DT_ERR_INVALID_ARGUMENT, "retain: reference count overflow");
      if (s.state.compare_exchange_weak(st, st + 1, std::memory_order_acq_rel)) return;
      check_same_generation(handle, st, "retain");
    }
  }

  void release(const void* handle, HandleKind kind) {
    uint64_t st;
    Slot& s = lookup(handle, kind, "release", &st);
    while (true) {
      uint64_t count = st & 0xffffffffu;
      uint64_t next = count == 1 ? ((st >> 32) + 1) << 32 : st - 1;
      if (s.state.compare_exchange_weak(st, next, std::memory_order_acq_rel)) {
        if (count == 1) free_slot(s);
        return;
      }
      check_same_generation(handle, st, "release");
    }
  }

  // Counts live slots (a scan: meant for leak checks, not hot paths).
  size_t live() {
    size_t used = used_published_.load(std::memory_order_acquire), n = 0;
    for (size_t i = 0; i < used; ++i)
      if (slots_[i].state.load(std::memory_order_acquire) & 0xffffffffu) ++n;
    return n;
  }

 private:
  void check_same_generation(const void* handle, uint64_t st, const char* what) {
    uint16_t gen = static_cast<uint16_t>(reinterpret_cast<uintptr_t>(handle) >> kAddressBits);
    if (static_cast<uint16_t>(st >> 32) != gen || (st & 0xffffffffu) == 0)
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": the handle was already released (use after release or double release)"));
  }

  void free_slot(Slot& s) {
    void* object = s.object;
    HandleDestroy destroy = s.destroy;
    s.object = nullptr;
    LocalCache& cache = local_cache();
    if (cache.n == LocalCache::kCapacity) spill(cache, LocalCache::kCapacity / 2);
    cache.idx[cache.n++] = static_cast<uint32_t>(&s - slots_);
    destroy(object);
  }

  // Free slot indices are kept per thread so that creating and releasing a handle takes
  // no lock in a steady loop; batches move to and from the shared list under the lock.
  struct LocalCache {
    static constexpr int kCapacity = 64;
    uint32_t idx[kCapacity];
    int n = 0;
    ~LocalCache() {
      if (n > 0) table_for_cache().spill(*this, n);  // thread exit: hand the slots back
    }
  };

  static LocalCache& local_cache() {
    // initial-exec: a direct TLS access instead of a __tls_get_addr call per handle
    static thread_local LocalCache cache __attribute__((tls_model("initial-exec")));
    return cache;
  }

  void refill(LocalCache& cache) {
    std::lock_guard<std::mutex> lock(mu_);
    while (cache.n < LocalCache::kCapacity / 2 && !free_.empty()) {
      cache.idx[cache.n++] = free_.back();
      free_.pop_back();
    }
    while (cache.n < LocalCache::kCapacity / 2) {
      if (!slots_ || used_ >= kMaxSlots) {
        if (cache.n > 0) return;
        fail(DT_ERR_OUT_OF_MEMORY, "out of handles: too many live objects");
      }
      if (free_.capacity() < used_ + LocalCache::kCapacity) free_.reserve(used_ * 2 + 1024);  // spills never allocate
      cache.idx[cache.n++] = static_cast<uint32_t>(used_++);
    }
    used_published_.store(used_, std::memory_order_release);
  }

  void spill(LocalCache& cache, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < count; ++i) free_.push_back(cache.idx[--cache.n]);
  }

  static Table& table_for_cache();

  size_t used_bytes() {
    return used_published_.load(std::memory_order_acquire) * sizeof(Slot);
  }

  void* encode(uint32_t index, uint64_t gen) {
    uintptr_t addr = reinterpret_cast<uintptr_t>(&slots_[index]);
    return reinterpret_cast<void*>(((gen & 0xffff) << kAddressBits) | addr);
  }

  Slot* slots_ = nullptr;
  std::mutex mu_;
  std::vector<uint32_t> free_;
  size_t used_ = 0;
  std::atomic<size_t> used_published_{0};  // used_, readable without the lock
};

Table& table() {
  static Table* t = new Table();  // never destroyed: handles may be released during exit
  return *t;
}
Table& Table::table_for_cache() { return table(); }

}  // namespace

const char* handle_kind_name(HandleKind k) {
  switch (k) {
    case HandleKind::Tensor: return "tensor";
    case HandleKind::Module: return "module";
    case HandleKind::Optimizer: return "optimizer";
    case HandleKind::StateDict: return "state dict";
  }
  return "unknown";
}

void* handle_create(HandleKind kind, void* object, HandleDestroy destroy) {
  if (fault::allocation_fails()) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory allocating a ", handle_kind_name(kind), " handle"));
  return table().create(kind, object, destroy);
}
void* handle_resolve(const void* handle, HandleKind kind, const char* what) {
  uint64_t st;
  return table().lookup(handle, kind, what, &st).object;
}
void handle_retain(const void* handle, HandleKind kind) { table().retain(handle, kind); }
void handle_release(const void* handle, HandleKind kind) { table().release(handle, kind); }
size_t handle_live_count() { return table().live(); }

}  // namespace dt
