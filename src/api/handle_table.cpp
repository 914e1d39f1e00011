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

// "a tensor", "an event".
std::string with_article(const char* noun) {
  const char c = noun[0];
  const bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
  return std::string(vowel ? "an " : "a ") + noun;
}


// A handle's value is (generation << 24) | slot index: not an address, so all 64 bits
// serve the check. state = generation (upper 40 bits) | reference count (lower 24 bits).
// A slot is live while its count is nonzero; freeing it bumps the generation so old
// handles stop matching. Generations only grow (a slot whose 40 bits run out is retired,
// never reused), so a handle value is never given out twice in a process: a stale handle
// is detected however many handles came after it (2^40 reuses of one slot take days of
// nothing but creating and releasing it).
struct alignas(32) Slot {
  std::atomic<uint64_t> state{0};
  void* object = nullptr;
  HandleDestroy destroy = nullptr;
  uint32_t kind = 0;
};
static_assert(sizeof(Slot) == 32, "slot layout");
static_assert(sizeof(void*) == 8, "handles are 64-bit values");

constexpr uint64_t kIndexBits = 24;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr size_t kMaxSlots = size_t{1} << kIndexBits;  // 16M live handles, 512 MiB of address space
constexpr uint64_t kCountBits = 24;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;  // references per handle
constexpr uint64_t kLastGeneration = (uint64_t{1} << (64 - kCountBits)) - 1;

uint64_t generation_of_state(uint64_t st) { return st >> kCountBits; }
uint64_t count_of_state(uint64_t st) { return st & kCountMask; }

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
    // Generations start at 1, so no handle is NULL.
    uint64_t gen = generation_of_state(s.state.load(std::memory_order_relaxed));
    if (gen == 0) gen = 1;
    s.state.store((gen << kCountBits) | 1u, std::memory_order_release);
    return encode(index, gen);
  }

  // Returns the slot for a handle whose generation matches and count is nonzero.
  Slot& lookup(const void* handle, HandleKind kind, const char* what, uint64_t* state_out) {
    const uint64_t h = reinterpret_cast<uintptr_t>(handle);
    const uint64_t index = h & kIndexMask;
    if (!slots_ || index >= used_published_.load(std::memory_order_acquire))
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": not a devtensor handle"));
    Slot& s = slots_[index];
    uint64_t st = s.state.load(std::memory_order_acquire);
    check_generation(handle, st, what);
    if (s.kind != static_cast<uint32_t>(kind))
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": expected ", with_article(handle_kind_name(kind)), " handle but got ",
                                      with_article(handle_kind_name(static_cast<HandleKind>(s.kind))), " handle"));
    *state_out = st;
    return s;
  }

  void retain(const void* handle, HandleKind kind) {
    uint64_t st;
    Slot& s = lookup(handle, kind, "retain", &st);
    while (true) {
      if (count_of_state(st) == kCountMask)
        fail(DT_ERR_INVALID_ARGUMENT, cat("retain: the handle already holds ", kCountMask, " references (the most one handle can)"));
      if (s.state.compare_exchange_weak(st, st + 1, std::memory_order_acq_rel)) return;
      check_generation(handle, st, "retain");
    }
  }

  void release(const void* handle, HandleKind kind) {
    uint64_t st;
    Slot& s = lookup(handle, kind, "release", &st);
    while (true) {
      const uint64_t count = count_of_state(st), gen = generation_of_state(st);
      // The last reference: the next generation, count 0. A slot at the last generation
      // keeps it with count 0 and is never handed out again (retired).
      const bool retire = count == 1 && gen == kLastGeneration;
      const uint64_t next = count != 1 ? st - 1 : retire ? gen << kCountBits : (gen + 1) << kCountBits;
      if (s.state.compare_exchange_weak(st, next, std::memory_order_acq_rel)) {
        if (count == 1) free_slot(s, retire);
        return;
      }
      check_generation(handle, st, "release");
    }
  }

  void* age_to_last_generation(const void* handle, HandleKind kind) {
    uint64_t st;
    Slot& s = lookup(handle, kind, "age_to_last_generation", &st);
    while (!s.state.compare_exchange_weak(st, (kLastGeneration << kCountBits) | count_of_state(st)))
      check_generation(handle, st, "age_to_last_generation");
    return encode(static_cast<uint32_t>(&s - slots_), kLastGeneration);
  }

  // Counts live slots (a scan: meant for leak checks, not hot paths).
  size_t live() {
    size_t used = used_published_.load(std::memory_order_acquire), n = 0;
    for (size_t i = 0; i < used; ++i)
      if (count_of_state(slots_[i].state.load(std::memory_order_acquire))) ++n;
    return n;
  }

 private:
  // INVALID_HANDLE unless the handle's generation is the slot's and the slot is live.
  // Generations only grow, so a generation above the slot's was never given out: the
  // value is not a handle (a foreign pointer), rather than a released one.
  static void check_generation(const void* handle, uint64_t st, const char* what) {
    const uint64_t gen = reinterpret_cast<uintptr_t>(handle) >> kIndexBits;
    const uint64_t current = generation_of_state(st);
    if (gen > current || gen == 0) fail(DT_ERR_INVALID_HANDLE, cat(what, ": not a devtensor handle"));
    if (gen != current || count_of_state(st) == 0)
      fail(DT_ERR_INVALID_HANDLE, cat(what, ": the handle was already released (use after release or double release)"));
  }

  void free_slot(Slot& s, bool retire) {
    void* object = s.object;
    HandleDestroy destroy = s.destroy;
    s.object = nullptr;
    if (retire) {
      destroy(object);
      return;
    }
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

  static void* encode(uint32_t index, uint64_t gen) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>((gen << kIndexBits) | index));
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
    case HandleKind::Stream: return "stream";
    case HandleKind::Event: return "event";
    case HandleKind::Graph: return "graph";
    case HandleKind::LrScheduler: return "learning-rate scheduler";
    case HandleKind::ProcessGroup: return "process group";
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
void* handle_age_to_last_generation(const void* handle, HandleKind kind) {
  return table().age_to_last_generation(handle, kind);
}

}  // namespace dt
