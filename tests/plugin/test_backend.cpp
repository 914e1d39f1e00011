// A second CPU-like backend, loaded as a plugin: libdevtensor-test-backend.so, built only
// with the tests. It registers device type 12 (DLPack's kDLExtDev, "reserved for testing
// extension devices") as "testdev", with two devices whose memory is plain host memory,
// and runs every op of the table by code through the plugin ABI (core/plugin_abi.h),
// computing with the CPU backend's own kernels (linked in as objects). It proves the
// claim of docs/architecture.md, "How to add a backend": nothing in the core, the C shim,
// ops or io names it. ctest loads it through DEVTENSOR_PLUGINS and runs the PyTorch
// reference suite on testdev:0 (test_reference_ops_plugin) and the plugin's own checks
// (test_plugin_backend).
//
// It keeps count of its allocations and ops (exported for the tests as
// devtensor_test_backend_ops), so a test can see that work really ran here. It has
// streams and events of its own (the optional slots), which do their work at once, as
// the CPU, but count what was queued on each (devtensor_test_backend_stream_counts), so
// a test can see which stream the core sent an op, an allocation, a free or a wait to.
// It has native graphs too (CUDA's stream capture: work queued on a recording stream is
// kept, not run, and a launch runs it again), so the core's native-graph path, failures
// included, runs in CI without a GPU.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/plugin_abi.h"
#include "core/storage.h"
#include "core/tensor.h"
#include "cpu/cpu_backend.h"
#include "test_collectives.h"

namespace {

constexpr int32_t kDevices = 2;
constexpr int32_t kDeviceType = 12;  // kDLExtDev

std::atomic<uint64_t> g_allocated[kDevices], g_peak[kDevices], g_allocations[kDevices], g_ops{0}, g_hooks{0};

void set_error(dtp_error* err, int32_t code, const char* message) {
  err->code = code;
  std::snprintf(err->message, sizeof err->message, "%s", message);
}

template <typename F>
int32_t guarded(dtp_error* err, F&& f) {
  try {
    f();
    return DT_OK;
  } catch (const dt::Error& e) {
    set_error(err, e.code(), e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_error(err, DT_ERR_OUT_OF_MEMORY, "testdev: out of memory");
    return DT_ERR_OUT_OF_MEMORY;
  } catch (...) {
    set_error(err, DT_ERR_INTERNAL, "testdev: unexpected exception");
    return DT_ERR_INTERNAL;
  }
}

// A tensor over a descriptor's memory (host memory on either side), for the kernels. Not
// borrow_tensor: an output's bytes are not values yet, so nothing may be checked.
dt::Tensor wrap(const dtp_tensor& d) {
  dt::Dims shape(d.sizes, static_cast<size_t>(d.ndim)), strides(d.strides, static_cast<size_t>(d.ndim));
  dt::Ref<dt::Storage> storage = dt::Storage::borrow(dt::Device{DT_DEVICE_CPU, 0}, d.data, 0, nullptr, nullptr);
  return dt::Tensor(dt::Ref<dt::TensorImpl>::adopt(
      dt::TensorImpl::create(std::move(storage), static_cast<dt::DType>(d.dtype), shape, strides, 0)));
}

dt::cpu::CpuBackend& kernels() {
  static auto* k = new dt::cpu::CpuBackend();
  return *k;
}

void probe(dtp_probe* out) {
  out->state = DT_CUDA_AVAILABLE;
  out->device_count = kDevices;
  std::snprintf(out->reason, sizeof out->reason, "%d testdev devices (host memory)", kDevices);
}

int32_t device_properties(int32_t device, dt_device_props* out, dtp_error* err) {
  return guarded(err, [&] {
    std::snprintf(out->name, sizeof out->name, "devtensor test device %d", device);
    dt::host_memory(&out->free_memory, &out->total_memory);
    out->multiprocessor_count = 1;
    out->physical_index = device;
  });
}

int32_t memory_info(int32_t, uint64_t* free_bytes, uint64_t* total_bytes, dtp_error* err) {
  return guarded(err, [&] { dt::host_memory(free_bytes, total_bytes); });
}

// A stream: what was queued on it. The default stream of each device is kDefault[d]
// (the core passes NULL for it).
struct Recording;
struct TestStream {
  std::atomic<uint64_t> ops{0}, allocations{0}, frees{0}, copies{0}, waits{0}, records{0};
  Recording* recording = nullptr;  // between graph_begin and graph_end (native graphs, below)
};
TestStream g_default_streams[kDevices];
TestStream& on(int32_t device, void* s) { return s ? *static_cast<TestStream*>(s) : g_default_streams[device]; }

struct TestEvent {
  std::atomic<double> at_ms{0};
};

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

int32_t stream_create(int32_t, void** out, dtp_error* err) {
  return guarded(err, [&] { *out = new TestStream(); });
}
void stream_destroy(int32_t, void* s) { delete static_cast<TestStream*>(s); }
int32_t stream_synchronize(int32_t, void*, dtp_error*) { return DT_OK; }
int32_t stream_query(int32_t, void*, int32_t* done, dtp_error*) {
  *done = 1;
  return DT_OK;
}
int32_t stream_default(int32_t device, void** out, dtp_error*) {
  *out = &g_default_streams[device];
  return DT_OK;
}
int32_t event_create(int32_t, void** out, dtp_error* err) {
  return guarded(err, [&] { *out = new TestEvent(); });
}
void event_destroy(int32_t, void* e) { delete static_cast<TestEvent*>(e); }
int32_t event_record(int32_t device, void* e, void* s, dtp_error*) {
  static_cast<TestEvent*>(e)->at_ms.store(now_ms());
  on(device, s).records.fetch_add(1);
  return DT_OK;
}
int32_t event_wait(int32_t device, void* s, void*, dtp_error*) {
  on(device, s).waits.fetch_add(1);
  return DT_OK;
}
int32_t event_synchronize(int32_t, void*, dtp_error*) { return DT_OK; }
int32_t event_query(int32_t, void*, int32_t* done, dtp_error*) {
  *done = 1;
  return DT_OK;
}
int32_t event_elapsed_ms(int32_t, void* a, void* b, float* out, dtp_error*) {
  *out = static_cast<float>(static_cast<TestEvent*>(b)->at_ms.load() - static_cast<TestEvent*>(a)->at_ms.load());
  return DT_OK;
}

int32_t allocate(int32_t device, size_t nbytes, void* stream, void** out, dtp_error* err) {
  return guarded(err, [&] {
    on(device, stream).allocations.fetch_add(1);
    void* p = nullptr;
    if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0) throw std::bad_alloc();
    const uint64_t now = g_allocated[device].fetch_add(nbytes) + nbytes;
    uint64_t peak = g_peak[device].load();
    while (now > peak && !g_peak[device].compare_exchange_weak(peak, now)) {
    }
    g_allocations[device].fetch_add(1);
    *out = p;
  });
}

void deallocate(int32_t device, void* p, size_t nbytes, void* stream) {
  on(device, stream).frees.fetch_add(1);
  g_allocated[device].fetch_sub(nbytes);
  std::free(p);
}

int32_t memory_stats(int32_t device, dtp_mem_stats* out, dtp_error* err) {
  return guarded(err, [&] {
    out->allocated_bytes = g_allocated[device].load();
    out->reserved_bytes = out->allocated_bytes;
    out->peak_allocated_bytes = g_peak[device].load();
    out->allocation_count = g_allocations[device].load();
    out->system_allocation_count = out->allocation_count;
  });
}

int32_t empty_cache(int32_t, dtp_error*) { return DT_OK; }

// Native graphs (the optional graph_* slots), CUDA's stream-capture model: between
// graph_begin and graph_end the ops and copies queued on the stream are recorded, not
// run; graph_launch runs the recording again on the stream it is given. The tests count
// live graphs (a graph the core lost would stay counted) and can make the next recorded
// op fail, as a kernel whose launch cannot be captured does.
struct Recorded {
  int32_t op;  // kCopy for a copy
  dtp_tensor t[DTP_MAX_OPERANDS];
  int32_t nt;
  double f[2];
  int64_t i[4];
};
constexpr int32_t kCopy = -1;
struct Recording {
  std::vector<Recorded> work;
};
std::atomic<int64_t> g_graphs_live{0};
std::atomic<uint64_t> g_graph_launches{0};
std::atomic<bool> g_fail_next_recorded_op{false};

// Records work queued on a recording stream; false when s is not recording.
bool record_if_capturing(TestStream& s, int32_t op, const dtp_tensor* const* t, int32_t nt, const double* f,
                         const int64_t* i) {
  if (!s.recording) return false;
  if (g_fail_next_recorded_op.exchange(false))
    dt::fail(DT_ERR_NOT_SUPPORTED, "testdev: this op cannot be recorded (a failure the tests asked for)");
  Recorded r{};
  r.op = op;
  r.nt = nt;
  for (int k = 0; k < nt; ++k) r.t[k] = *t[k];
  if (f) r.f[0] = f[0], r.f[1] = f[1];
  if (i)
    for (int k = 0; k < 4; ++k) r.i[k] = i[k];
  s.recording->work.push_back(r);
  return true;
}

void copy_now(const dtp_tensor& dst, const dtp_tensor& src, void* stream) {
  kernels().copy(wrap(dst), wrap(src));
  on(dst.device != DTP_HOST ? dst.device : src.device, stream).copies.fetch_add(1);
}

int32_t copy(const dtp_tensor* dst, const dtp_tensor* src, int32_t, void* stream, dtp_error* err) {
  return guarded(err, [&] {
    const dtp_tensor* t[2] = {dst, src};
    if (!record_if_capturing(on(dst->device != DTP_HOST ? dst->device : src->device, stream), kCopy, t, 2, nullptr,
                             nullptr))
      copy_now(*dst, *src, stream);
  });
}

// The library passes too (DTP_HOOK_*), served by the CPU backend's own hooks (oneDNN's
// convolutions, its max pooling kernel), so the core's packing of a hook and its fallback
// when one is handed back run here; fused attention, which the CPU backend lacks, by the
// loop below.
bool is_hook(int32_t op) {
  return op == DTP_HOOK_CONV2D_FORWARD || op == DTP_HOOK_CONV2D_INPUT_GRAD || op == DTP_HOOK_CONV2D_WEIGHT_GRAD ||
         op == DTP_HOOK_MAX_POOL2D_FORWARD || op == DTP_HOOK_ATTENTION_FORWARD;
}

// DTP_HOOK_ATTENTION_FORWARD by definition, in double, one query row at a time: out[n, l]
// = sum_s softmax_s(q[n, l] . k[n, s] * scale, s <= l when causal) v[n, s] (v's rows Ev wide).
template <typename T>
void attention_rows(const dt::Tensor& out, const dt::Tensor& q, const dt::Tensor& k, const dt::Tensor& v,
                    double scale, bool causal) {
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1), E = q.size(2), Ev = v.size(2);
  const T *qp = q.data_as<T>(), *kp = k.data_as<T>(), *vp = v.data_as<T>();
  T* op = out.data_as<T>();
  std::vector<double> w(static_cast<size_t>(S));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t l = 0; l < L; ++l) {
      const T* qr = qp + (n * L + l) * E;
      const int64_t seen = causal ? std::min(S, l + 1) : S;
      double top = -INFINITY, total = 0;
      for (int64_t j = 0; j < seen; ++j) {
        const T* kr = kp + (n * S + j) * E;
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) dot += double(qr[e]) * double(kr[e]);
        w[j] = dot * scale;
        top = std::max(top, w[j]);
      }
      for (int64_t j = 0; j < seen; ++j) total += (w[j] = std::exp(w[j] - top));
      for (int64_t e = 0; e < Ev; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < seen; ++j) acc += w[j] * double(vp[(n * S + j) * Ev + e]);
        op[(n * L + l) * Ev + e] = T(acc / total);
      }
    }
}
int32_t supports_op(int32_t op) { return kernels().supports(op) || is_hook(op) ? 1 : 0; }

// A hook pass through the CPU backend's; DT_ERR_NOT_SUPPORTED when it has none for these
// operands (the core then computes the pass itself).
void run_hook(int32_t op, const dt::OpArgs& args, const int64_t* packed) {
  const dt::ConvGeometry g = dt::from_abi(dtp_conv_geometry_unpack(packed));
  const dt::Tensor& out = *args.t[0];
  bool done = false;
  if (op == DTP_HOOK_ATTENTION_FORWARD) {
    const bool causal = args.i[0] != 0;
    done = true;
    if (out.dtype() == dt::DType::Float32)
      attention_rows<float>(out, *args.t[1], *args.t[2], *args.t[3], args.f[0], causal);
    else if (out.dtype() == dt::DType::Float64)
      attention_rows<double>(out, *args.t[1], *args.t[2], *args.t[3], args.f[0], causal);
    else
      done = false;  // 16-bit floats: handed back, the core composes the ops
  } else if (op == DTP_HOOK_MAX_POOL2D_FORWARD)
    done = kernels().max_pool2d_forward(out, *args.t[1], *args.t[2], dt::from_abi(dtp_pool_geometry_unpack(packed)));
  else if (op == DTP_HOOK_CONV2D_FORWARD)
    done = kernels().conv2d_forward(out, *args.t[1], *args.t[2], args.nt > 3 ? args.t[3] : nullptr, g);
  else if (op == DTP_HOOK_CONV2D_INPUT_GRAD)
    done = kernels().conv2d_input_grad(out, *args.t[1], *args.t[2], g);
  else
    done = kernels().conv2d_weight_grad(out, *args.t[1], *args.t[2], g);
  if (!done) dt::fail(DT_ERR_NOT_SUPPORTED, "testdev: no library pass for these operands");
  g_hooks.fetch_add(1);
}

// Runs one op now (a hook through run_hook), counted on the stream it was queued on.
void run_now(int32_t op, const dtp_op_args* a) {
  dt::Tensor held[DTP_MAX_OPERANDS];
  dt::OpArgs args;
  for (int k = 0; k < a->nt; ++k) {
    held[k] = wrap(*a->t[k]);
    args.t[args.nt++] = &held[k];
  }
  args.f[0] = a->f[0];
  args.f[1] = a->f[1];
  for (int k = 0; k < 4; ++k) args.i[k] = a->i[k];
  if (is_hook(op)) return run_hook(op, args, a->i);
  kernels().run(op, args);
  g_ops.fetch_add(1);
  on(a->t[0]->device, a->stream).ops.fetch_add(1);
}

int32_t run(int32_t op, const dtp_op_args* a, dtp_error* err) {
  return guarded(err, [&] {
    TestStream& s = on(a->t[0]->device, a->stream);
    // A library pass decides at run time whether it takes its operands: handed back to
    // the core while recording, which then records its own ops for it.
    if (s.recording && is_hook(op)) dt::fail(DT_ERR_NOT_SUPPORTED, "testdev: library passes are not recorded");
    if (!record_if_capturing(s, op, a->t, a->nt, a->f, a->i)) run_now(op, a);
  });
}

int32_t graph_begin(int32_t device, void* stream, dtp_error* err) {
  return guarded(err, [&] {
    TestStream& s = on(device, stream);
    if (!stream || s.recording) dt::fail(DT_ERR_INVALID_ARGUMENT, "testdev: graph_begin on a default or recording stream");
    s.recording = new Recording();
  });
}
// Hands over what was recorded, whatever happened meanwhile (as cudaStreamEndCapture
// does when the failure was not the capture's own): the core decides what to keep.
int32_t graph_end(int32_t device, void* stream, void** exec, dtp_error* err) {
  return guarded(err, [&] {
    TestStream& s = on(device, stream);
    if (!s.recording) dt::fail(DT_ERR_INVALID_ARGUMENT, "testdev: graph_end on a stream that is not recording");
    *exec = s.recording;
    s.recording = nullptr;
    g_graphs_live.fetch_add(1);
  });
}
int32_t graph_launch(int32_t, void* exec, void* stream, dtp_error* err) {
  return guarded(err, [&] {
    for (const Recorded& r : static_cast<Recording*>(exec)->work) {
      if (r.op == kCopy) {
        copy_now(r.t[0], r.t[1], stream);
        continue;
      }
      dtp_op_args a{};
      for (int k = 0; k < r.nt; ++k) a.t[k] = &r.t[k];
      a.nt = r.nt;
      a.f[0] = r.f[0], a.f[1] = r.f[1];
      for (int k = 0; k < 4; ++k) a.i[k] = r.i[k];
      a.stream = stream;
      run_now(r.op, &a);
    }
    g_graph_launches.fetch_add(1);
  });
}
void graph_destroy(int32_t, void* exec) {
  delete static_cast<Recording*>(exec);
  g_graphs_live.fetch_sub(1);
}

int32_t synchronize(int32_t, dtp_error*) { return DT_OK; }

dtp_backend make_table() {
  dtp_backend t{};
  t.struct_size = sizeof(dtp_backend);
  t.abi_version = DTP_ABI_VERSION;
  t.devtensor_version = DT_VERSION_NUMBER;
  t.device_type = kDeviceType;
  t.name = "testdev";
  t.accelerator = 0;
  t.probe = &probe;
  t.device_properties = &device_properties;
  t.memory_info = &memory_info;
  t.allocate = &allocate;
  t.deallocate = &deallocate;
  t.memory_stats = &memory_stats;
  t.empty_cache = &empty_cache;
  t.copy = &copy;
  t.supports_op = &supports_op;
  t.run = &run;
  t.synchronize = &synchronize;
  t.stream_create = &stream_create;
  t.stream_destroy = &stream_destroy;
  t.stream_synchronize = &stream_synchronize;
  t.stream_query = &stream_query;
  t.stream_default = &stream_default;
  t.event_create = &event_create;
  t.event_destroy = &event_destroy;
  t.event_record = &event_record;
  t.event_wait = &event_wait;
  t.event_synchronize = &event_synchronize;
  t.event_query = &event_query;
  t.event_elapsed_ms = &event_elapsed_ms;
  t.graph_begin = &graph_begin;
  t.graph_end = &graph_end;
  t.graph_launch = &graph_launch;
  t.graph_destroy = &graph_destroy;
  set_test_collectives(t);
  return t;  // no pinned memory: those optional slots stay NULL
}

const dtp_backend kTable = make_table();

}  // namespace

extern "C" __attribute__((visibility("default"))) const dtp_backend* devtensor_backend_entry(uint32_t abi_version) {
  return abi_version == DTP_ABI_VERSION ? &kTable : nullptr;
}

// For the tests: ops run here so far.
extern "C" __attribute__((visibility("default"))) uint64_t devtensor_test_backend_ops(void) { return g_ops.load(); }
// For the tests: how many library passes (DTP_HOOK_*: convolutions, max pooling) this backend ran.
extern "C" __attribute__((visibility("default"))) uint64_t devtensor_test_backend_hooks(void) { return g_hooks.load(); }

// For the tests: what was queued on a stream (its native handle, from
// dt_stream_native_handle): out = {ops, allocations, frees, copies, waits, records}.
extern "C" __attribute__((visibility("default"))) void devtensor_test_backend_stream_counts(void* stream,
                                                                                          uint64_t out[6]) {
  const TestStream& s = *static_cast<TestStream*>(stream);
  out[0] = s.ops.load();
  out[1] = s.allocations.load();
  out[2] = s.frees.load();
  out[3] = s.copies.load();
  out[4] = s.waits.load();
  out[5] = s.records.load();
}

// For the tests: native graphs alive (made by graph_end, not yet destroyed) and launched.
extern "C" __attribute__((visibility("default"))) void devtensor_test_backend_graphs(int64_t out[2]) {
  out[0] = g_graphs_live.load();
  out[1] = static_cast<int64_t>(g_graph_launches.load());
}
// For the tests: the next op or copy queued on a recording stream fails (NOT_SUPPORTED)
// instead of being recorded.
extern "C" __attribute__((visibility("default"))) void devtensor_test_backend_fail_next_recorded_op(void) {
  g_fail_next_recorded_op.store(true);
}
