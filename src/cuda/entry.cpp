// The plugin's one exported symbol and its dtp_backend table (core/plugin_abi.h). Every function catches
// everything: a Failure becomes its code and message, anything else DT_ERR_INTERNAL.
// Each sets the device it works on (DeviceGuard) and restores the caller's.
#include <cstdio>
#include <exception>
#include <new>

#include "core/plugin_abi.h"
#include "cuda/collectives.h"
#include "cuda/conv_cudnn.h"
#include "cuda/cudnn_library.h"
#include "cuda/graphs.h"
#include "cuda/kernels.h"
#include "cuda/memory.h"
#include "cuda/probe.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

void set_error(dtp_error* err, int32_t code, const char* message) {
  if (!err) return;
  err->code = code;
  std::snprintf(err->message, sizeof err->message, "%s", message);
}

template <typename F>
int32_t guarded(dtp_error* err, F&& f) {
  try {
    f();
    return DT_OK;
  } catch (const Failure& e) {
    set_error(err, e.code, e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    set_error(err, DT_ERR_OUT_OF_MEMORY, "out of host memory in the CUDA plugin");
    return DT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(err, DT_ERR_INTERNAL, e.what());
    return DT_ERR_INTERNAL;
  } catch (...) {
    set_error(err, DT_ERR_INTERNAL, "unknown exception in the CUDA plugin");
    return DT_ERR_INTERNAL;
  }
}

// Work on a tensor's device: alive, current for the call.
template <typename F>
int32_t on_device(int device, dtp_error* err, F&& f) {
  return guarded(err, [&] {
    require_alive(device);
    DeviceGuard guard(device);
    f();
  });
}

int32_t device_properties(int32_t device, dt_device_props* out, dtp_error* err) {
  return guarded(err, [&] { cudap::device_properties(device, out); });
}
int32_t memory_info(int32_t device, uint64_t* f, uint64_t* t, dtp_error* err) {
  return guarded(err, [&] { cudap::memory_info(device, f, t); });
}
// Allocations, frees, copies and ops go to the stream the core passes (the thread's
// current devtensor stream; NULL: the device's default stream), through StreamScope.
int32_t allocate(int32_t device, size_t n, void* s, void** out, dtp_error* err) {
  return guarded(err, [&] {
    StreamScope scope(device, s);
    *out = device_allocate(device, n);
  });
}
void deallocate(int32_t device, void* p, size_t n, void* s) {
  StreamScope scope(device, s);
  device_deallocate(device, p, n);
}
int32_t stats(int32_t device, dtp_mem_stats* out, dtp_error* err) {
  return guarded(err, [&] { memory_stats(device, out); });
}
int32_t trim(int32_t device, dtp_error* err) {
  return guarded(err, [&] { empty_cache(device); });
}
int32_t host_alloc(size_t n, void** out, dtp_error* err) {
  return guarded(err, [&] { *out = host_allocate(n); });
}
void host_free(void* p) { host_deallocate(p); }

// The device a copy runs on: the GPU side (the destination's when both are GPUs).
int copy_device(const dtp_tensor* dst, const dtp_tensor* src) {
  return dst->device != DTP_HOST ? dst->device : src->device;
}
int32_t copy_fn(const dtp_tensor* dst, const dtp_tensor* src, int32_t non_blocking, void* s, dtp_error* err) {
  return guarded(err, [&] {
    if (src->device != DTP_HOST) require_alive(src->device);
    int dev = copy_device(dst, src);
    require_alive(dev);
    DeviceGuard guard(dev);
    StreamScope scope(dev, s);
    copy(*dst, *src, non_blocking != 0);
  });
}

// Every op of the table the kernels cover.
int32_t supports_op(int32_t op) {
  if (op == DTP_OP_CrossEntropy || op == DTP_OP_CrossEntropyBackward) return fused_loss_offered() ? 1 : 0;
  // No kernel yet: Adam, RMSprop and Adagrad step with their unfused ops here.
  if (op == DTP_OP_AdaptiveStep) return 0;
  switch (op) {
#define DT_X(Name, code, ...) case code:
    DT_KERNEL_OPS(DT_X)
    DT_UNARY_OPS(DT_X)
    DT_BINARY_OPS(DT_X)
    DT_REDUCE_OPS(DT_X)
#undef DT_X
    return 1;
    case DTP_HOOK_CONV2D_FORWARD:
    case DTP_HOOK_CONV2D_INPUT_GRAD:
    case DTP_HOOK_CONV2D_WEIGHT_GRAD:
      return cudnn_convolutions_usable() ? 1 : 0;
    case DTP_HOOK_MAX_POOL2D_FORWARD:
      return 1;  // our own kernel (pool.cu): no library to load
    case DTP_HOOK_ATTENTION_FORWARD:
      return fused_attention_offered() ? 1 : 0;  // attention.cu, opt-in until checked on a GPU
  }
  return 0;
}

// One op on the output's device (dtp_op_args lists what each code takes).
void run_op(int32_t op, const dtp_op_args& a) {
  const dtp_tensor& out = *a.t[0];
  switch (op) {
    case DTP_OP_Fill: return fill(out, a.f[0]);
    case DTP_OP_Arange: return arange(out, a.f[0], a.f[1]);
    case DTP_OP_Random:
      return random(out, static_cast<int32_t>(a.i[0]), static_cast<uint64_t>(a.i[1]), static_cast<uint64_t>(a.i[2]));
    case DTP_OP_Where: return where(out, *a.t[1], *a.t[2], *a.t[3]);
    case DTP_OP_Softmax: return softmax(out, *a.t[1], static_cast<int32_t>(a.i[0]), a.i[1] != 0);
    case DTP_OP_Cumsum: return cumsum(out, *a.t[1], static_cast<int32_t>(a.i[0]), a.i[1] != 0);
    case DTP_OP_Sort: return sort(out, *a.t[1], *a.t[2], a.i[0] != 0);
    case DTP_OP_Matmul: return matmul(out, *a.t[1], *a.t[2], a.i[0] != 0);
    case DTP_OP_Addmm: return addmm(out, *a.t[1], *a.t[2], *a.t[3], a.i[0] != 0);
    case DTP_OP_CrossEntropy:
      return cross_entropy(out, *a.t[1], *a.t[2], *a.t[3], *a.t[4], a.i[0], static_cast<int>(a.i[1]));
    case DTP_OP_CrossEntropyBackward:
      return cross_entropy_backward(out, *a.t[1], *a.t[2], *a.t[3], *a.t[4], *a.t[5], a.i[0], static_cast<int>(a.i[1]));
    case DTP_OP_IndexSelect: return index_select(out, *a.t[1], static_cast<int32_t>(a.i[0]), *a.t[2]);
    case DTP_OP_Gather: return gather(out, *a.t[1], static_cast<int32_t>(a.i[0]), *a.t[2]);
    case DTP_OP_ScatterAdd: return scatter_add(out, static_cast<int32_t>(a.i[0]), *a.t[1], *a.t[2]);
    case DTP_OP_IndexAdd: return index_add(out, static_cast<int32_t>(a.i[0]), *a.t[1], *a.t[2]);
    case DTP_OP_SgdStep:
      return sgd_step(out, *a.t[1], a.nt > 2 ? a.t[2] : nullptr, a.f[0], a.f[1], a.i[0] != 0, a.i[1] != 0);
    case DTP_OP_ReluBackward: return relu_backward(out, *a.t[1], *a.t[2]);
    case DTP_OP_SgdStepMulti: return sgd_step_multi(out, *a.t[1], a.f[0], a.f[1], a.i[0] != 0);
    case DTP_OP_BatchNormEval:
      return batch_norm_eval(out, *a.t[1], *a.t[2], *a.t[3], a.i[0] ? a.t[4] : nullptr,
                             a.i[1] ? a.t[a.i[0] ? 5 : 4] : nullptr, a.f[0]);
    case DTP_HOOK_CONV2D_FORWARD:
    case DTP_HOOK_CONV2D_INPUT_GRAD:
    case DTP_HOOK_CONV2D_WEIGHT_GRAD:
      return conv2d_cudnn(op, a);
    case DTP_HOOK_MAX_POOL2D_FORWARD:
      return max_pool2d(a);
    case DTP_HOOK_ATTENTION_FORWARD:
      return attention_forward(a);
#define DT_X(Name, code, ...) case code: return unary(op, out, *a.t[1]);
    DT_UNARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, ...) case code: return binary(op, out, *a.t[1], *a.t[2]);
    DT_BINARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, ...) case code: return reduce(op, out, *a.t[1], static_cast<uint32_t>(a.i[0]));
    DT_REDUCE_OPS(DT_X)
#undef DT_X
  }
  throw Failure{DT_ERR_NOT_SUPPORTED, "the CUDA plugin has no kernel for this op"};
}
int32_t run_fn(int32_t op, const dtp_op_args* args, dtp_error* err) {
  const int device = args->t[0]->device;
  return on_device(device, err, [&] {
    StreamScope scope(device, args->stream);
    run_op(op, *args);
  });
}
// Every stream of the device, devtensor's and the caller's (as torch.cuda.synchronize).
int32_t synchronize_fn(int32_t device, dtp_error* err) {
  return on_device(device, err, [&] { check(cudaDeviceSynchronize(), device, "synchronize"); });
}

// ---- streams and events: CUDA's own. A NULL stream is the device's default devtensor
// stream; other handles are cudaStream_t values, ours or a DLPack producer's.
cudaStream_t chosen(int device, void* s) { return s ? static_cast<cudaStream_t>(s) : default_stream(device); }

int32_t stream_create(int32_t device, void** out, dtp_error* err) {
  return on_device(device, err, [&] {
    cudaStream_t s = nullptr;
    // Non-blocking: it does not wait for the legacy default stream (nor it for s).
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), device, "cudaStreamCreateWithFlags");
    *out = s;
  });
}
void stream_destroy(int32_t device, void* s) {
  DeviceGuard guard(device);
  if (cudaStreamDestroy(static_cast<cudaStream_t>(s)) != cudaSuccess) (void)cudaGetLastError();
}
int32_t stream_synchronize(int32_t device, void* s, dtp_error* err) {
  return on_device(device, err, [&] { check(cudaStreamSynchronize(chosen(device, s)), device, "cudaStreamSynchronize"); });
}
int32_t stream_query(int32_t device, void* s, int32_t* done, dtp_error* err) {
  return on_device(device, err, [&] {
    cudaError_t e = cudaStreamQuery(chosen(device, s));
    if (e == cudaErrorNotReady) {
      (void)cudaGetLastError();
      *done = 0;
      return;
    }
    check(e, device, "cudaStreamQuery");
    *done = 1;
  });
}
int32_t stream_default(int32_t device, void** out, dtp_error* err) {
  return on_device(device, err, [&] { *out = default_stream(device); });
}
int32_t event_create(int32_t device, void** out, dtp_error* err) {
  return on_device(device, err, [&] {
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), device, "cudaEventCreate");  // with timing
    *out = e;
  });
}
void event_destroy(int32_t device, void* e) {
  DeviceGuard guard(device);
  if (cudaEventDestroy(static_cast<cudaEvent_t>(e)) != cudaSuccess) (void)cudaGetLastError();
}
int32_t event_record(int32_t device, void* e, void* s, dtp_error* err) {
  return on_device(device, err, [&] {
    check(cudaEventRecord(static_cast<cudaEvent_t>(e), chosen(device, s)), device, "cudaEventRecord");
  });
}
int32_t event_wait(int32_t device, void* s, void* e, dtp_error* err) {
  return on_device(device, err, [&] {
    check(cudaStreamWaitEvent(chosen(device, s), static_cast<cudaEvent_t>(e), 0), device, "cudaStreamWaitEvent");
  });
}
int32_t event_synchronize(int32_t device, void* e, dtp_error* err) {
  return on_device(device, err, [&] { check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), device, "cudaEventSynchronize"); });
}
int32_t event_query(int32_t device, void* e, int32_t* done, dtp_error* err) {
  return on_device(device, err, [&] {
    cudaError_t r = cudaEventQuery(static_cast<cudaEvent_t>(e));
    if (r == cudaErrorNotReady) {
      (void)cudaGetLastError();
      *done = 0;
      return;
    }
    check(r, device, "cudaEventQuery");
    *done = 1;
  });
}
int32_t event_elapsed(int32_t device, void* a, void* b, float* out, dtp_error* err) {
  return on_device(device, err, [&] {
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(a)), device, "cudaEventSynchronize");
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(b)), device, "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(a), static_cast<cudaEvent_t>(b)), device,
          "cudaEventElapsedTime");
    *out = ms;
  });
}

// ---- collectives: NCCL (cuda/collectives.h)

int32_t coll_unique_id_fn(uint8_t* out, dtp_error* err) {
  return guarded(err, [&] { coll_unique_id(out); });
}
int32_t coll_comm_init_fn(int32_t device, int32_t nranks, int32_t rank, const uint8_t* id, int64_t timeout_ms,
                          void** out, dtp_error* err) {
  return guarded(err, [&] { *out = coll_comm_init(device, nranks, rank, id, timeout_ms); });
}
int32_t coll_comm_init_all_fn(int32_t ndev, const int32_t* devices, void** out, dtp_error* err) {
  return guarded(err, [&] { coll_comm_init_all(ndev, devices, out); });
}
void coll_comm_destroy_fn(void* comm, int32_t abort) { coll_comm_destroy(comm, abort != 0); }
int32_t coll_group_fn(int32_t begin, dtp_error* err) {
  return guarded(err, [&] { coll_group(begin != 0); });
}
int32_t coll_run_fn(int32_t kind, const dtp_coll_args* args, dtp_error* err) {
  return guarded(err, [&] { coll_run(kind, *args); });
}
int32_t coll_wait_fn(void* comm, int32_t device, void* stream, int64_t timeout_ms, dtp_error* err) {
  return on_device(device, err, [&] { coll_wait(comm, device, stream, timeout_ms); });
}

// ---- native graphs (cuda/graphs.h) and the hook library (cuDNN)
int32_t graph_begin_fn(int32_t device, void* stream, dtp_error* err) {
  return on_device(device, err, [&] { graph_begin(device, stream); });
}
int32_t graph_end_fn(int32_t device, void* stream, void** out, dtp_error* err) {
  return on_device(device, err, [&] { *out = graph_end(device, stream); });
}
int32_t graph_launch_fn(int32_t device, void* exec, void* stream, dtp_error* err) {
  return on_device(device, err, [&] { graph_launch(device, exec, stream); });
}
void graph_destroy_fn(int32_t device, void* exec) { graph_destroy(device, exec); }
void hook_library_fn(char* text, size_t cap) {
  std::string what;
  if (cudnn_library(&what)) what += std::string(", ") + cudnn_convolution_api();
  if (cap) std::snprintf(text, cap, "%s", what.c_str());
}

dtp_backend make_table() {
  dtp_backend t{};
  t.struct_size = sizeof(dtp_backend);
  t.abi_version = DTP_ABI_VERSION;
  t.devtensor_version = DT_VERSION_NUMBER;
  t.device_type = DT_DEVICE_CUDA;
  t.name = "cuda";
  t.accelerator = 1;
  t.probe = &probe;
  t.device_properties = &device_properties;
  t.memory_info = &memory_info;
  t.allocate = &allocate;
  t.deallocate = &deallocate;
  t.memory_stats = &stats;
  t.empty_cache = &trim;
  t.copy = &copy_fn;
  t.supports_op = &supports_op;
  t.run = &run_fn;
  t.synchronize = &synchronize_fn;
  t.host_allocate = &host_alloc;
  t.host_deallocate = &host_free;
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
  t.event_elapsed_ms = &event_elapsed;
  t.coll_name = "nccl";
  t.coll_probe = &coll_probe;
  t.coll_unique_id = &coll_unique_id_fn;
  t.coll_comm_init = &coll_comm_init_fn;
  t.coll_comm_init_all = &coll_comm_init_all_fn;
  t.coll_comm_destroy = &coll_comm_destroy_fn;
  t.coll_group = &coll_group_fn;
  t.coll_run = &coll_run_fn;
  t.coll_wait = &coll_wait_fn;
  t.hook_library = &hook_library_fn;
  t.graph_begin = &graph_begin_fn;
  t.graph_end = &graph_end_fn;
  t.graph_launch = &graph_launch_fn;
  t.graph_destroy = &graph_destroy_fn;
  return t;
}
const dtp_backend kTable = make_table();

}  // namespace
}  // namespace dt::cudap

extern "C" __attribute__((visibility("default"))) const dtp_backend* devtensor_backend_entry(uint32_t abi_version) {
  return abi_version == DTP_ABI_VERSION ? &dt::cudap::kTable : nullptr;
}
