#include "core/plugin_backend.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "core/fault_injection.h"
#include "core/registry.h"
#include "core/storage.h"
#include "core/stream.h"

namespace dt {
namespace {

std::string version_string(uint32_t v) { return cat(v / 1000000, ".", v / 1000 % 1000, ".", v % 1000); }

// Whether the plugin's table, built with struct_size bytes, has this (optional) slot set.
#define DT_HAS_SLOT(t, slot) ((t).struct_size >= offsetof(dtp_backend, slot) + sizeof((t).slot) && (t).slot != nullptr)

bool page_locked(const Tensor& t) {
  const Allocator* a = t.storage()->allocator();
  return a && a->page_locked();
}

dtp_tensor describe(const Tensor& t) {
  dtp_tensor d;
  d.data = t.data();
  d.dtype = static_cast<int32_t>(t.dtype());
  d.device = t.device().is_cpu() ? DTP_HOST : t.device().index;
  d.ndim = t.ndim();
  d.pinned = page_locked(t) ? 1 : 0;
  d.numel = t.numel();
  for (int i = 0; i < t.ndim(); ++i) {
    d.sizes[i] = t.size(i);
    d.strides[i] = t.stride(i);
  }
  return d;
}

// Calls a plugin function with a fresh error record and throws what it reports, the
// message prefixed with `what` when given.
template <typename F>
void call(const char* what, F&& f) {
  dtp_error err;
  err.code = DT_OK;
  err.message[0] = '\0';
  const int32_t code = f(&err);
  if (code == DT_OK) return;
  err.message[sizeof err.message - 1] = '\0';
  const char* msg = err.message[0] ? err.message : "backend error";
  if (what) fail(static_cast<dt_status>(code), cat(what, ": ", msg));
  fail(static_cast<dt_status>(code), msg);
}

// As call, for the optional passes a plugin may hand back: DT_ERR_NOT_SUPPORTED is an
// answer (false), not a failure.
template <typename F>
bool call_supported(const char* what, F&& f) {
  bool unsupported = false;
  call(what, [&](dtp_error* e) {
    const int32_t code = f(e);
    unsupported = code == DT_ERR_NOT_SUPPORTED;
    return unsupported ? int32_t{DT_OK} : code;
  });
  return !unsupported;
}

// What an op is called in messages: the table's name, with the two ops whose C names
// differ by an argument.
const char* op_label(int32_t op, const OpArgs& a) {
  if (op == code_of(KernelOp::Random)) return a.i[0] == 0 ? "rand" : "randn";
  if (op == code_of(KernelOp::Softmax)) return a.i[1] ? "log_softmax" : "softmax";
  return op_code_name(op);
}

class DeviceAllocator final : public Allocator {
 public:
  DeviceAllocator(const dtp_backend* t, int32_t ordinal, std::string where)
      : t_(t), ordinal_(ordinal), where_(std::move(where)) {}
  void* allocate(size_t nbytes) override { return allocate_on(nbytes, nullptr); }
  void deallocate(void* p, size_t nbytes) override { deallocate_on(p, nbytes, nullptr); }
  void* allocate_on(size_t nbytes, void* stream) override {
    void* p = nullptr;
    if (fault::allocation_fails()) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory on ", where_, " (injected fault)"));
    call(nullptr, [&](dtp_error* e) { return t_->allocate(ordinal_, nbytes, stream, &p, e); });
    return p;
  }
  void deallocate_on(void* p, size_t nbytes, void* stream) override { t_->deallocate(ordinal_, p, nbytes, stream); }
  AllocatorStats stats() override {
    dtp_mem_stats m;
    std::memset(&m, 0, sizeof m);
    call(nullptr, [&](dtp_error* e) { return t_->memory_stats(ordinal_, &m, e); });
    return AllocatorStats{m.allocated_bytes, m.reserved_bytes, m.peak_allocated_bytes, m.allocation_count,
                          m.system_allocation_count};
  }
  void empty_cache() override {
    call(nullptr, [&](dtp_error* e) { return t_->empty_cache(ordinal_, e); });
  }

 private:
  const dtp_backend* t_;
  int32_t ordinal_;
  std::string where_;
};

// Page-locked host memory straight from the driver; its statistics are the host
// allocator's concern, so none are kept here.
class PinnedAllocator final : public Allocator {
 public:
  explicit PinnedAllocator(const dtp_backend* t) : t_(t) {}
  void* allocate(size_t nbytes) override {
    void* p = nullptr;
    if (fault::allocation_fails()) fail(DT_ERR_OUT_OF_MEMORY, "out of pinned host memory (injected fault)");
    call(nullptr, [&](dtp_error* e) { return t_->host_allocate(nbytes, &p, e); });
    return p;
  }
  void deallocate(void* p, size_t) override { t_->host_deallocate(p); }
  AllocatorStats stats() override { return AllocatorStats{}; }
  void empty_cache() override {}
  bool page_locked() const override { return true; }

 private:
  const dtp_backend* t_;
};

}  // namespace

class PluginBackend::DeviceAllocators {
 public:
  std::vector<DeviceAllocator*> all;
};

PluginBackend::PluginBackend(std::string path, int32_t type, std::string name, std::string display, bool built)
    : path_(std::move(path)), type_(type), name_(std::move(name)), display_(std::move(display)), built_(built) {}

PluginBackend* PluginBackend::open_now(const std::string& path, std::string* why) {
  auto* p = new PluginBackend();
  p->path_ = path;
  p->open();
  if (!p->table_) {
    *why = p->reason_;
    delete p;
    return nullptr;
  }
  p->type_ = p->table_->device_type;
  p->name_ = p->table_->name ? p->table_->name : "";
  p->display_ = p->name_;
  p->accelerator_ = p->table_->accelerator != 0;
  if (p->name_.empty()) {
    *why = cat(path, " names no device type");
    delete p;
    return nullptr;
  }
  return p;
}

void PluginBackend::open() {
  if (!built_) {
    state_ = DT_CUDA_NOT_BUILT;
    reason_ = cat("devtensor was built without the ", display_, " backend (DEVTENSOR_CUDA=" DT_CUDA_OPTION
                  ", or no nvcc when it was configured)");
    return;
  }
  // RTLD_LOCAL: the plugin's libraries stay out of the global namespace. The handle is
  // kept for the life of the process: device tensors may outlive any point where
  // unloading would be safe.
  void* handle = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    state_ = DT_CUDA_PLUGIN_MISSING;
    reason_ = cat("the ", display_.empty() ? "backend" : display_, " plugin could not be loaded from ", path_, ": ",
                  why ? why : "unknown error");
    return;
  }
  const std::string what = display_.empty() ? std::string("plugin") : display_ + " plugin";
  auto entry = reinterpret_cast<dtp_entry_fn>(dlsym(handle, DTP_ENTRY_SYMBOL));
  if (!entry) {
    state_ = DT_CUDA_PLUGIN_MISMATCH;
    reason_ = cat(path_, " is not a devtensor ", what, " (it has no ", DTP_ENTRY_SYMBOL, " symbol)");
    return;
  }
  const dtp_backend* t = entry(DTP_ABI_VERSION);
  if (!t || t->struct_size < offsetof(dtp_backend, host_allocate) || t->abi_version != DTP_ABI_VERSION) {
    state_ = DT_CUDA_PLUGIN_MISMATCH;
    reason_ = cat("the ", what, " ", path_, " does not speak plugin ABI version ", DTP_ABI_VERSION,
                  " (it is from another devtensor release)");
    return;
  }
  if (t->devtensor_version != DT_VERSION_NUMBER) {
    state_ = DT_CUDA_PLUGIN_MISMATCH;
    reason_ = cat("the ", what, " ", path_, " is from devtensor ", version_string(t->devtensor_version),
                  " but this library is ", version_string(DT_VERSION_NUMBER));
    return;
  }
  if (!name_.empty() && (t->device_type != type_ || !t->name || name_ != t->name)) {
    state_ = DT_CUDA_PLUGIN_MISMATCH;
    reason_ = cat(path_, " serves device type ", t->device_type, " ('", t->name ? t->name : "", "'), not ", type_,
                  " ('", name_, "')");
    return;
  }
  table_ = t;
}

void PluginBackend::probe_once() {
  std::call_once(probed_, [&] {
    if (!table_ && reason_.empty()) open();
    if (!table_) return;
    dtp_probe probe;
    std::memset(&probe, 0, sizeof probe);
    table_->probe(&probe);
    probe.reason[sizeof probe.reason - 1] = '\0';
    state_ = probe.state;
    reason_ = probe.reason;
    if (probe.state == DT_CUDA_AVAILABLE && probe.device_count > 0) {
      devices_ = static_cast<size_t>(probe.device_count);
      auto* allocators = new DeviceAllocators();
      for (size_t i = 0; i < devices_; ++i)
        allocators->all.push_back(
            new DeviceAllocator(table_, static_cast<int32_t>(i), cat(name_, ":", i)));
      allocators_ = allocators;
      if (DT_HAS_SLOT(*table_, host_allocate) && DT_HAS_SLOT(*table_, host_deallocate))
        pinned_ = new PinnedAllocator(table_);
      const dtp_backend& t = *table_;
      streams_ = DT_HAS_SLOT(t, stream_create) && DT_HAS_SLOT(t, stream_destroy) &&
                 DT_HAS_SLOT(t, stream_synchronize) && DT_HAS_SLOT(t, stream_query) &&
                 DT_HAS_SLOT(t, stream_default) && DT_HAS_SLOT(t, event_create) &&
                 DT_HAS_SLOT(t, event_destroy) && DT_HAS_SLOT(t, event_record) && DT_HAS_SLOT(t, event_wait) &&
                 DT_HAS_SLOT(t, event_synchronize) && DT_HAS_SLOT(t, event_query) &&
                 DT_HAS_SLOT(t, event_elapsed_ms);
      usable_ = true;
    }
    if (table_) {
      const dtp_backend& t = *table_;
      collectives_ = DT_HAS_SLOT(t, coll_name) && t.coll_name[0] != '\0' && DT_HAS_SLOT(t, coll_probe) &&
                     DT_HAS_SLOT(t, coll_unique_id) && DT_HAS_SLOT(t, coll_comm_init) &&
                     DT_HAS_SLOT(t, coll_comm_init_all) && DT_HAS_SLOT(t, coll_comm_destroy) &&
                     DT_HAS_SLOT(t, coll_group) && DT_HAS_SLOT(t, coll_run) && DT_HAS_SLOT(t, coll_wait);
    }
  });
}

int32_t PluginBackend::state() {
  probe_once();
  return state_;
}

const std::string& PluginBackend::reason() {
  probe_once();
  return reason_;
}

const dtp_backend& PluginBackend::table() {
  probe_once();
  if (!usable_) fail(DT_ERR_DEVICE_UNAVAILABLE, cat(display_, " is not available: ", reason_));
  return *table_;
}

size_t PluginBackend::device_count() {
  probe_once();
  return devices_;
}

void PluginBackend::check_device(Device d) {
  probe_once();
  if (!usable_)
    fail(DT_ERR_DEVICE_UNAVAILABLE,
         cat(device_str(d), " requested, but ", display_, " is not available: ", reason_));
  if (static_cast<size_t>(d.index) >= devices_)
    fail(DT_ERR_INVALID_DEVICE, cat("invalid device ordinal: ", device_str(d), " requested, ", devices_, " ", display_,
                                    " device", devices_ == 1 ? "" : "s", " visible"));
}

void PluginBackend::properties(int32_t index, dt_device_props* out) {
  const dtp_backend& t = table();
  call(nullptr, [&](dtp_error* e) { return t.device_properties(index, out, e); });
}

void PluginBackend::memory(int32_t index, uint64_t* free_bytes, uint64_t* total_bytes) {
  const dtp_backend& t = table();
  call(nullptr, [&](dtp_error* e) { return t.memory_info(index, free_bytes, total_bytes, e); });
}

Allocator& PluginBackend::allocator(int32_t index) {
  table();  // throws DEVICE_UNAVAILABLE when unusable; ordinals were checked
  return *allocators_->all[static_cast<size_t>(index)];
}

Allocator* PluginBackend::pinned_allocator() {
  probe_once();
  return usable_ ? pinned_ : nullptr;
}

void PluginBackend::synchronize(Device d) {
  const dtp_backend& t = table();
  call(nullptr, [&](dtp_error* e) { return t.synchronize(d.index, e); });
}

void PluginBackend::copy(const Tensor& dst, const Tensor& src, bool non_blocking) {
  const dtp_backend& t = table();
  const Device host{DT_DEVICE_CPU, 0};
  // On the thread's stream of the device the copy runs on (the destination's between devices).
  void* stream = thread_native_stream(dst.device().is_cpu() ? src.device() : dst.device());
  auto plugin_copy = [&](const Tensor& d, const Tensor& s, bool nb) {
    dtp_tensor dd = describe(d), sd = describe(s);
    call(nullptr, [&](dtp_error* e) { return t.copy(&dd, &sd, nb ? 1 : 0, stream, e); });
  };
  // The plugin reads and writes one contiguous host block of the device side's shape;
  // other host layouts go through a staging block (the CPU backend converts it).
  if (src.device().is_cpu()) {
    if (src.shape() == dst.shape() && src.is_contiguous()) return plugin_copy(dst, src, non_blocking);
    Tensor staged = Tensor::empty(dst.shape(), src.dtype(), host);
    backend_for(host).copy(staged, src, false);
    return plugin_copy(dst, staged, false);  // the staging block dies when this returns
  }
  if (dst.device().is_cpu()) {
    if (dst.is_contiguous()) return plugin_copy(dst, src, false);
    Tensor staged = Tensor::empty(dst.shape(), dst.dtype(), host);
    plugin_copy(staged, src, false);
    return backend_for(host).copy(dst, staged, false);
  }
  // Between devices of this backend, on the destination's stream: the source's current
  // stream (when the thread set one) is finished first, as the plugin orders only its own.
  if (src.device() != dst.device())
    if (void* source_stream = thread_native_stream(src.device())) stream_synchronize(src.device().index, source_stream);
  plugin_copy(dst, src, non_blocking);
}

bool PluginBackend::supports(int32_t op) { return table().supports_op(op) != 0; }

void PluginBackend::run(int32_t op, const OpArgs& args) {
  const dtp_backend& t = table();
  dtp_tensor described[OpArgs::kMaxTensors];
  dtp_op_args a;
  std::memset(&a, 0, sizeof a);
  a.nt = args.nt;
  for (int k = 0; k < args.nt; ++k) {
    described[k] = describe(*args.t[k]);
    a.t[k] = &described[k];
  }
  a.f[0] = args.f[0];
  a.f[1] = args.f[1];
  for (int k = 0; k < 4; ++k) a.i[k] = args.i[k];
  a.stream = args.stream;
  call(op_label(op, args), [&](dtp_error* e) { return t.run(op, &a, e); });
}

// The library passes: the geometry travels packed in dtp_op_args' integers
// (dtp_conv_geometry_pack, dtp_pool_geometry_pack), so a field that does not fit keeps
// the pass in the core.
bool PluginBackend::run_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const ConvGeometry& g) {
  int64_t i[4] = {0, 0, 0, 0};
  const dtp_conv_geometry packed = to_abi(g);
  if (!dtp_conv_geometry_pack(&packed, i)) return false;
  i[3] = allow_tf32() ? 1 : 0;
  return run_packed_hook(hook, operands, i, "conv2d");
}
bool PluginBackend::run_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const PoolGeometry& g) {
  int64_t i[4] = {0, 0, 0, 0};
  const dtp_pool_geometry packed = to_abi(g);
  if (!dtp_pool_geometry_pack(&packed, i)) return false;
  return run_packed_hook(hook, operands, i, "max_pool2d");
}
bool PluginBackend::run_packed_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const int64_t i[4],
                                    const char* what, double f0) {
  const dtp_backend& t = table();
  if (!t.supports_op(hook)) return false;
  dtp_op_args a;
  std::memset(&a, 0, sizeof a);
  for (int k = 0; k < 4; ++k) a.i[k] = i[k];
  a.f[0] = f0;
  dtp_tensor described[DTP_MAX_OPERANDS];
  for (const Tensor* operand : operands) {
    described[a.nt] = describe(*operand);
    a.t[a.nt] = &described[a.nt];
    ++a.nt;
  }
  const Tensor& out = **operands.begin();
  a.stream = thread_native_stream(out.device());
  return call_supported(what, [&](dtp_error* e) { return t.run(hook, &a, e); });
}

bool PluginBackend::conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                                   const ConvGeometry& g) {
  if (bias) return run_hook(DTP_HOOK_CONV2D_FORWARD, {&out, &x, &w, bias}, g);
  return run_hook(DTP_HOOK_CONV2D_FORWARD, {&out, &x, &w}, g);
}
bool PluginBackend::conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) {
  return run_hook(DTP_HOOK_CONV2D_INPUT_GRAD, {&gx, &gout, &w}, g);
}
bool PluginBackend::conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) {
  return run_hook(DTP_HOOK_CONV2D_WEIGHT_GRAD, {&gw, &x, &gout}, g);
}
bool PluginBackend::max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x,
                                       const PoolGeometry& g) {
  return run_hook(DTP_HOOK_MAX_POOL2D_FORWARD, {&out, &indices, &x}, g);
}
bool PluginBackend::attention_forward(const Tensor& out, const Tensor& q, const Tensor& k, const Tensor& v,
                                      double scale, bool causal) {
  const int64_t i[4] = {causal ? 1 : 0, 0, 0, 0};
  return run_packed_hook(DTP_HOOK_ATTENTION_FORWARD, {&out, &q, &k, &v}, i, "scaled_dot_product_attention", scale);
}

// Native graphs and the hook library: straight through to the optional slots.
bool PluginBackend::native_graphs() {
  const dtp_backend& t = table();
  return DT_HAS_SLOT(t, graph_begin) && DT_HAS_SLOT(t, graph_end) && DT_HAS_SLOT(t, graph_launch) &&
         DT_HAS_SLOT(t, graph_destroy);
}
void PluginBackend::graph_begin(int32_t index, void* stream) {
  const dtp_backend& t = table();
  call("dt_graph_replay (recording a native graph)", [&](dtp_error* e) { return t.graph_begin(index, stream, e); });
}
void* PluginBackend::graph_end(int32_t index, void* stream) {
  const dtp_backend& t = table();
  void* exec = nullptr;
  // Not recordable (NOT_SUPPORTED): null, and the graph replays step by step.
  const bool recorded = call_supported("dt_graph_replay (recording a native graph)",
                                       [&](dtp_error* e) { return t.graph_end(index, stream, &exec, e); });
  return recorded ? exec : nullptr;
}
void PluginBackend::graph_launch(int32_t index, void* exec, void* stream) {
  const dtp_backend& t = table();
  call("dt_graph_replay", [&](dtp_error* e) { return t.graph_launch(index, exec, stream, e); });
}
void PluginBackend::graph_destroy(int32_t index, void* exec) noexcept {
  if (table_ && table_->graph_destroy) table_->graph_destroy(index, exec);
}
std::string PluginBackend::hook_library() {
  const dtp_backend& t = table();
  if (!DT_HAS_SLOT(t, hook_library)) return std::string();
  char text[512] = {};
  t.hook_library(text, sizeof text);
  text[sizeof text - 1] = '\0';
  return text;
}

// Streams and events: straight through to the plugin's slots (only called when it has
// them all, has_streams).
std::string PluginBackend::collectives_name() {
  probe_once();
  return collectives_ ? std::string(table_->coll_name) : std::string();
}

bool PluginBackend::collectives_usable(std::string* why, int32_t* version) {
  probe_once();
  if (version) *version = 0;
  if (!collectives_) {
    if (why) *why = table_ ? cat("the ", display_, " plugin has no collectives") : reason_;
    return false;
  }
  if (!usable_) {
    if (why) *why = cat(display_, " is not available: ", reason_);
    return false;
  }
  char reason[512] = {};
  int32_t v = 0;
  const bool ok = table_->coll_probe(&v, reason, sizeof reason) != 0;
  reason[sizeof reason - 1] = '\0';
  if (version) *version = v;
  if (why) *why = reason;
  return ok;
}

// Making a communicator asks the library (coll_probe) whether it can run here; the calls
// on a communicator that exists only check the slots are there, so a collective pays no probe.
const dtp_backend& PluginBackend::coll_table(bool probe) {
  const dtp_backend& t = table();
  std::string why;
  if (probe ? !collectives_usable(&why, nullptr) : !collectives_) {
    if (!probe) why = cat("the ", display_, " plugin has no collectives");
    fail(DT_ERR_NOT_SUPPORTED, why);
  }
  return t;
}

void PluginBackend::coll_unique_id(uint8_t out[DTP_COLL_ID_BYTES]) {
  const dtp_backend& t = coll_table(true);
  call(t.coll_name, [&](dtp_error* e) { return t.coll_unique_id(out, e); });
}

void* PluginBackend::coll_comm_init(int32_t index, int32_t nranks, int32_t rank, const uint8_t id[DTP_COLL_ID_BYTES],
                                    int64_t timeout_ms) {
  const dtp_backend& t = coll_table(true);
  void* comm = nullptr;
  call(nullptr, [&](dtp_error* e) { return t.coll_comm_init(index, nranks, rank, id, timeout_ms, &comm, e); });
  return comm;
}

std::vector<void*> PluginBackend::coll_comm_init_all(const std::vector<int32_t>& indices) {
  const dtp_backend& t = coll_table(true);
  std::vector<void*> comms(indices.size(), nullptr);
  call(nullptr, [&](dtp_error* e) {
    return t.coll_comm_init_all(static_cast<int32_t>(indices.size()), indices.data(), comms.data(), e);
  });
  return comms;
}

void PluginBackend::coll_comm_destroy(void* comm, bool abort) noexcept {
  if (comm && table_ && collectives_) table_->coll_comm_destroy(comm, abort ? 1 : 0);
}

void PluginBackend::coll_group(bool begin) {
  const dtp_backend& t = coll_table(false);
  call(nullptr, [&](dtp_error* e) { return t.coll_group(begin ? 1 : 0, e); });
}

void PluginBackend::coll_run(int32_t kind, const dtp_coll_args& args) {
  const dtp_backend& t = coll_table(false);
  call(nullptr, [&](dtp_error* e) { return t.coll_run(kind, &args, e); });
}

void PluginBackend::coll_wait(void* comm, int32_t index, void* stream, int64_t timeout_ms) {
  const dtp_backend& t = coll_table(false);
  call(nullptr, [&](dtp_error* e) { return t.coll_wait(comm, index, stream, timeout_ms, e); });
}

bool PluginBackend::has_streams() {
  probe_once();
  return streams_;
}
void* PluginBackend::stream_create(int32_t index) {
  const dtp_backend& t = table();
  void* s = nullptr;
  if (fault::allocation_fails()) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory creating a stream on ", name_, ":", index, " (injected fault)"));
  call("dt_stream_create", [&](dtp_error* e) { return t.stream_create(index, &s, e); });
  return s;
}
void PluginBackend::stream_destroy(int32_t index, void* stream) noexcept { table_->stream_destroy(index, stream); }
void PluginBackend::stream_synchronize(int32_t index, void* stream) {
  const dtp_backend& t = table();
  call("dt_stream_synchronize", [&](dtp_error* e) { return t.stream_synchronize(index, stream, e); });
}
bool PluginBackend::stream_query(int32_t index, void* stream) {
  const dtp_backend& t = table();
  int32_t done = 0;
  call("dt_stream_query", [&](dtp_error* e) { return t.stream_query(index, stream, &done, e); });
  return done != 0;
}
void* PluginBackend::stream_default_native(int32_t index) {
  const dtp_backend& t = table();
  void* s = nullptr;
  call("dt_stream_native_handle", [&](dtp_error* e) { return t.stream_default(index, &s, e); });
  return s;
}
void* PluginBackend::event_create(int32_t index) {
  const dtp_backend& t = table();
  void* ev = nullptr;
  if (fault::allocation_fails()) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory creating an event on ", name_, ":", index, " (injected fault)"));
  call("dt_event_create", [&](dtp_error* e) { return t.event_create(index, &ev, e); });
  return ev;
}
void PluginBackend::event_destroy(int32_t index, void* event) noexcept { table_->event_destroy(index, event); }
void PluginBackend::event_record(int32_t index, void* event, void* stream) {
  const dtp_backend& t = table();
  call("dt_event_record", [&](dtp_error* e) { return t.event_record(index, event, stream, e); });
}
void PluginBackend::event_wait(int32_t index, void* stream, void* event) {
  const dtp_backend& t = table();
  call("dt_stream_wait_event", [&](dtp_error* e) { return t.event_wait(index, stream, event, e); });
}
void PluginBackend::event_synchronize(int32_t index, void* event) {
  const dtp_backend& t = table();
  call("dt_event_synchronize", [&](dtp_error* e) { return t.event_synchronize(index, event, e); });
}
bool PluginBackend::event_query(int32_t index, void* event) {
  const dtp_backend& t = table();
  int32_t done = 0;
  call("dt_event_query", [&](dtp_error* e) { return t.event_query(index, event, &done, e); });
  return done != 0;
}
float PluginBackend::event_elapsed_ms(int32_t index, void* start, void* end) {
  const dtp_backend& t = table();
  float ms = 0;
  call("dt_event_elapsed_ms", [&](dtp_error* e) { return t.event_elapsed_ms(index, start, end, &ms, e); });
  return ms;
}

}  // namespace dt
