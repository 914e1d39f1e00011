#include "core/cuda_proxy.h"

#include <atomic>
#include <cstring>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/cuda_loader.h"
#include "core/error.h"
#include "core/fault_injection.h"
#include "core/storage.h"
#include "core/op_kinds.h"

namespace dt::cuda {
namespace {

dtp_tensor describe(const Tensor& t) {
  dtp_tensor d;
  d.data = t.data();
  d.dtype = static_cast<int32_t>(t.dtype());
  d.device = t.device().is_cpu() ? DTP_HOST : t.device().index;
  d.ndim = t.ndim();
  d.pinned = is_pinned(t) ? 1 : 0;
  d.numel = t.numel();
  for (int i = 0; i < t.ndim(); ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

// Calls a plugin function with a fresh error record and throws what it reports, the
// message prefixed with the op's name when one is given.
template <typename F>
void call(const char* op, F&& f) {
  dtp_error err;
  err.code = DT_OK;
  err.message[0] = '\0';
  int32_t code = f(api(), &err);
  if (code == DT_OK) return;
  if (!op) check(code, err);
  err.message[sizeof err.message - 1] = '\0';
  fail(static_cast<dt_status>(code), cat(op, ": ", err.message));
}
template <typename F>
void call(F&& f) {
  call(nullptr, std::forward<F>(f));
}

class ProxyBackend final : public Backend {
 public:
  void copy(const Tensor& dst, const Tensor& src) override {
    dtp_tensor d = describe(dst), s = describe(src);
    call("copy", [&](const dtp_api& a, dtp_error* e) { return a.copy(&d, &s, 0, e); });
  }
  void fill(const Tensor& dst, double value) override {
    dtp_tensor d = describe(dst);
    call("fill", [&](const dtp_api& a, dtp_error* e) { return a.fill(&d, value, e); });
  }
  void arange(const Tensor& dst, double start, double step) override {
    dtp_tensor d = describe(dst);
    call("arange", [&](const dtp_api& a, dtp_error* e) { return a.arange(&d, start, step, e); });
  }
  void random(const Tensor& dst, RandomDist dist, uint64_t seed, uint64_t offset) override {
    dtp_tensor d = describe(dst);
    call(dist == RandomDist::Uniform ? "rand" : "randn", [&](const dtp_api& a, dtp_error* e) { return a.random(&d, static_cast<int32_t>(dist), seed, offset, e); });
  }
  void binary(BinaryOp op, const Tensor& out, const Tensor& x, const Tensor& y) override {
    dtp_tensor o = describe(out), a_ = describe(x), b_ = describe(y);
    call(op_name(op), [&](const dtp_api& a, dtp_error* e) { return a.binary(static_cast<int32_t>(op), &o, &a_, &b_, e); });
  }
  void unary(UnaryOp op, const Tensor& out, const Tensor& x) override {
    dtp_tensor o = describe(out), a_ = describe(x);
    call(op_name(op), [&](const dtp_api& a, dtp_error* e) { return a.unary(static_cast<int32_t>(op), &o, &a_, e); });
  }
  void where(const Tensor& out, const Tensor& cond, const Tensor& x, const Tensor& y) override {
    dtp_tensor o = describe(out), c = describe(cond), a_ = describe(x), b_ = describe(y);
    call("where", [&](const dtp_api& a, dtp_error* e) { return a.where(&o, &c, &a_, &b_, e); });
  }
  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, uint32_t mask) override {
    dtp_tensor o = describe(out), i = describe(in);
    call(op_name(op), [&](const dtp_api& a, dtp_error* e) { return a.reduce(static_cast<int32_t>(op), &o, &i, mask, e); });
  }
  void softmax(const Tensor& out, const Tensor& in, int dim, bool log) override {
    dtp_tensor o = describe(out), i = describe(in);
    call(log ? "log_softmax" : "softmax", [&](const dtp_api& a, dtp_error* e) { return a.softmax(&o, &i, dim, log ? 1 : 0, e); });
  }
  void matmul(const Tensor& out, const Tensor& x, const Tensor& y) override {
    dtp_tensor o = describe(out), a_ = describe(x), b_ = describe(y);
    int32_t tf32 = allow_tf32() ? 1 : 0;
    call("matmul", [&](const dtp_api& a, dtp_error* e) { return a.matmul(&o, &a_, &b_, tf32, e); });
  }
  void index_select(const Tensor& out, const Tensor& in, int dim, const Tensor& index) override {
    dtp_tensor o = describe(out), i = describe(in), x = describe(index);
    call("index_select", [&](const dtp_api& a, dtp_error* e) { return a.index_select(&o, &i, dim, &x, e); });
  }
  void gather(const Tensor& out, const Tensor& in, int dim, const Tensor& index) override {
    dtp_tensor o = describe(out), i = describe(in), x = describe(index);
    call("gather", [&](const dtp_api& a, dtp_error* e) { return a.gather(&o, &i, dim, &x, e); });
  }
  void synchronize(Device d) override {
    call([&](const dtp_api& a, dtp_error* e) { return a.synchronize(d.index, e); });
  }
};

class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int32_t ordinal) : ordinal_(ordinal) {}
  void* allocate(size_t nbytes) override {
    void* p = nullptr;
    if (fault::allocation_fails())
      fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory on cuda:", ordinal_, " (injected fault)"));
    call([&](const dtp_api& a, dtp_error* e) { return a.allocate(ordinal_, nbytes, &p, e); });
    return p;
  }
  void deallocate(void* p, size_t nbytes) override { api().deallocate(ordinal_, p, nbytes); }
  AllocatorStats stats() override {
    dtp_mem_stats m;
    std::memset(&m, 0, sizeof m);
    call([&](const dtp_api& a, dtp_error* e) { return a.memory_stats(ordinal_, &m, e); });
    return AllocatorStats{m.allocated_bytes, m.reserved_bytes, m.peak_allocated_bytes, m.allocation_count,
                          m.system_allocation_count};
  }
  void empty_cache() override {
    call([&](const dtp_api& a, dtp_error* e) { return a.empty_cache(ordinal_, e); });
  }

 private:
  int32_t ordinal_;
};

// Pinned host memory comes straight from the driver (cudaHostAlloc); its statistics are
// the host allocator's concern, so only counts are kept here.
class PinnedAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    void* p = nullptr;
    call([&](const dtp_api& a, dtp_error* e) { return a.host_allocate(nbytes, &p, e); });
    return p;
  }
  void deallocate(void* p, size_t) override { api().host_deallocate(p); }
  AllocatorStats stats() override { return AllocatorStats{}; }
  void empty_cache() override {}
};

// Set once the pinned allocator exists, so is_pinned never has to load the plugin.
std::atomic<const Allocator*> g_pinned{nullptr};

}  // namespace

Backend& backend() {
  require_available();
  static ProxyBackend* b = new ProxyBackend();  // outlives static destructors
  return *b;
}

Allocator& device_allocator(int32_t ordinal) {
  require_available();
  // One per visible device, made once; ordinals were checked against device_count().
  static std::vector<DeviceAllocator*>* all = [] {
    auto* v = new std::vector<DeviceAllocator*>();
    for (size_t i = 0; i < device_count(); ++i) v->push_back(new DeviceAllocator(static_cast<int32_t>(i)));
    return v;
  }();
  return *(*all)[static_cast<size_t>(ordinal)];
}

Allocator& pinned_allocator() {
  require_available();
  static PinnedAllocator* p = [] {
    auto* a = new PinnedAllocator();
    g_pinned.store(a, std::memory_order_release);
    return a;
  }();
  return *p;
}

bool is_pinned(const Tensor& t) {
  const Allocator* a = t.storage()->allocator();
  return a != nullptr && a == g_pinned.load(std::memory_order_acquire);
}

void copy_between_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  dtp_tensor d = describe(dst), s = describe(src);
  call([&](const dtp_api& a, dtp_error* e) { return a.copy(&d, &s, non_blocking ? 1 : 0, e); });
}

void device_properties(int32_t ordinal, dt_device_props* out) {
  call([&](const dtp_api& a, dtp_error* e) { return a.device_properties(ordinal, out, e); });
}

void memory_info(int32_t ordinal, uint64_t* free_bytes, uint64_t* total_bytes) {
  call([&](const dtp_api& a, dtp_error* e) { return a.memory_info(ordinal, free_bytes, total_bytes, e); });
}

}  // namespace dt::cuda
