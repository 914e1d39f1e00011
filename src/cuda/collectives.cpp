#include "cuda/collectives.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "cuda/nccl_library.h"
#include "cuda/runtime.h"

namespace dt::cudap {

namespace {

using Clock = std::chrono::steady_clock;

struct Comm {
  ncclComm_t nccl = nullptr;
  int device = 0;
  bool nonblocking = false;  // a process group's: every call may return ncclInProgress
  int64_t timeout_ms = 0;
  // Recorded after each collective queued outside a group: coll_wait waits for it, not
  // for everything the stream holds by then (DDP's backward keeps queuing work there).
  cudaEvent_t done = nullptr;
  bool recorded = false;
};

// ncclGroupStart depth of this thread: inside a group, collectives launch at the end.
thread_local int t_group_depth = 0;

const NcclLibrary& lib() {
  std::string why;
  const NcclLibrary* l = nccl_library(&why);
  if (!l) raise(DT_ERR_NOT_SUPPORTED, why);
  return *l;
}

std::string describe(const NcclLibrary& l, ncclResult_t r, ncclComm_t comm) {
  std::string s = l.GetErrorString(r);
  if (l.GetLastError) {
    const char* last = l.GetLastError(comm);
    if (last && *last) s += std::string(" (") + last + ")";
  }
  return s;
}

// Throws for anything but success or (a non-blocking communicator's) "in progress".
void nccl_check(const NcclLibrary& l, ncclResult_t r, ncclComm_t comm, const char* what) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  raise(DT_ERR_DISTRIBUTED, std::string(what) + " failed: " + describe(l, r, comm));
}

// A non-blocking communicator's last call may still be in progress: NCCL's rule is to
// poll ncclCommGetAsyncError until it is not before the next call. Gives up (aborting
// the communicator) when it fails or the deadline passes.
void settle(const NcclLibrary& l, Comm& c, const char* what) {
  if (!c.nonblocking) return;
  const auto deadline = Clock::now() + std::chrono::milliseconds(c.timeout_ms);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = l.CommGetAsyncError(c.nccl, &state);
    if (r != ncclSuccess) state = r;
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      std::string message = std::string(what) + " failed: " + describe(l, state, c.nccl);
      l.CommAbort(c.nccl);
      c.nccl = nullptr;
      raise(DT_ERR_DISTRIBUTED, message);
    }
    if (Clock::now() >= deadline) {
      l.CommAbort(c.nccl);
      c.nccl = nullptr;
      raise(DT_ERR_DISTRIBUTED, std::string(what) + " did not complete within " + std::to_string(c.timeout_ms) +
                                    " ms (a peer may have exited or be stuck)");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

Comm& comm_of(void* handle) {
  auto* c = static_cast<Comm*>(handle);
  if (!c || !c->nccl) raise(DT_ERR_DISTRIBUTED, "the NCCL communicator was aborted after an earlier failure");
  return *c;
}

size_t itemsize(int32_t dtype) {
  switch (dtype) {
    case DT_FLOAT64: case DT_INT64: return 8;
    case DT_FLOAT32: case DT_INT32: return 4;
    case DT_FLOAT16: case DT_BFLOAT16: case DT_INT16: return 2;
    case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
  }
  raise(DT_ERR_INTERNAL, "NCCL: unknown dtype code " + std::to_string(dtype));
}

// The NCCL type a reduction runs in. bool reduces as uint8 with or = max and and = min
// (what torch's NCCL backend does); NCCL has no int16.
ncclDataType_t reduce_type(int32_t dtype) {
  switch (dtype) {
    case DT_FLOAT32: return ncclFloat32;
    case DT_FLOAT64: return ncclFloat64;
    case DT_FLOAT16: return ncclFloat16;
    case DT_BFLOAT16: return ncclBfloat16;
    case DT_INT8: return ncclInt8;
    case DT_INT32: return ncclInt32;
    case DT_INT64: return ncclInt64;
    case DT_UINT8: case DT_BOOL: return ncclUint8;
  }
  raise(DT_ERR_DTYPE_MISMATCH, "NCCL cannot reduce int16 tensors (it has no 16-bit integer type): "
                               "convert to int32 first, or reduce on the CPU with gloo");
}

ncclRedOp_t reduce_op(int32_t op, int32_t dtype) {
  const bool logical = dtype == DT_BOOL;
  switch (op) {
    case DT_REDUCE_SUM: return logical ? ncclMax : ncclSum;
    case DT_REDUCE_PRODUCT: return logical ? ncclMin : ncclProd;
    case DT_REDUCE_MIN: return ncclMin;
    case DT_REDUCE_MAX: return ncclMax;
  }
  raise(DT_ERR_INTERNAL, "NCCL: reduction " + std::to_string(op) + " reaches the plugin");
}

cudaStream_t stream_of(int device, void* s) { return s ? static_cast<cudaStream_t>(s) : default_stream(device); }

}  // namespace

int32_t coll_probe(int32_t* version, char* why, size_t cap) {
  std::string reason;
  const NcclLibrary* l = nccl_library(&reason);
  if (version) *version = l ? l->version : 0;
  if (why && cap > 0) std::snprintf(why, cap, "%s", reason.c_str());
  return l ? 1 : 0;
}

void coll_unique_id(uint8_t* out) {
  const NcclLibrary& l = lib();
  static_assert(sizeof(ncclUniqueId) == DTP_COLL_ID_BYTES, "NCCL's unique id is 128 bytes");
  ncclUniqueId id;
  nccl_check(l, l.GetUniqueId(&id), nullptr, "ncclGetUniqueId");
  std::memcpy(out, &id, sizeof id);
}

void* coll_comm_init(int device, int nranks, int rank, const uint8_t* id_bytes, int64_t timeout_ms) {
  const NcclLibrary& l = lib();
  require_alive(device);
  DeviceGuard guard(device);  // NCCL binds the communicator to the current device
  ncclUniqueId id;
  std::memcpy(&id, id_bytes, sizeof id);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; settle() waits with a deadline
  auto c = std::make_unique<Comm>();
  c->device = device;
  c->nonblocking = true;
  c->timeout_ms = timeout_ms;
  ncclResult_t r = l.CommInitRankConfig(&c->nccl, nranks, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    std::string message = "ncclCommInitRankConfig (rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                          " on cuda:" + std::to_string(device) + ") failed: " + describe(l, r, c->nccl);
    if (c->nccl) l.CommAbort(c->nccl);
    raise(DT_ERR_DISTRIBUTED, message);
  }
  settle(l, *c, "ncclCommInitRankConfig");  // aborts and throws on failure or timeout
  return c.release();
}

void coll_comm_init_all(int ndev, const int32_t* devices, void** out) {
  const NcclLibrary& l = lib();
  for (int i = 0; i < ndev; ++i) require_alive(devices[i]);
  std::vector<ncclComm_t> comms(static_cast<size_t>(ndev));
  nccl_check(l, l.CommInitAll(comms.data(), ndev, devices), nullptr, "ncclCommInitAll");
  for (int i = 0; i < ndev; ++i) {
    auto* c = new Comm();
    c->nccl = comms[static_cast<size_t>(i)];
    c->device = devices[i];
    out[i] = c;
  }
}

void coll_comm_destroy(void* handle, bool abort) noexcept {
  auto* c = static_cast<Comm*>(handle);
  if (!c) return;
  std::string why;
  DeviceGuard guard(c->device);
  if (const NcclLibrary* l = nccl_library(&why); l && c->nccl) {
    // Destroy waits for the peers' part of queued work; abort does not (after a failure).
    if (abort || c->nonblocking) l->CommAbort(c->nccl);
    else l->CommDestroy(c->nccl);
  }
  if (c->done && cudaEventDestroy(c->done) != cudaSuccess) (void)cudaGetLastError();
  delete c;
}

void coll_group(bool begin) {
  const NcclLibrary& l = lib();
  nccl_check(l, begin ? l.GroupStart() : l.GroupEnd(), nullptr, begin ? "ncclGroupStart" : "ncclGroupEnd");
  t_group_depth += begin ? 1 : (t_group_depth > 0 ? -1 : 0);
}

void coll_run(int32_t kind, const dtp_coll_args& a) {
  const NcclLibrary& l = lib();
  Comm& c = comm_of(a.comm);
  require_alive(c.device);
  DeviceGuard guard(c.device);
  cudaStream_t s = stream_of(c.device, a.stream);
  const size_t bytes = a.count * itemsize(a.dtype);
  ncclResult_t r = ncclSuccess;
  const char* what = "";
  switch (kind) {
    case DTP_COLL_ALL_REDUCE:
      what = "ncclAllReduce";
      r = l.AllReduce(a.send, a.recv, a.count, reduce_type(a.dtype), reduce_op(a.op, a.dtype), c.nccl, s);
      break;
    case DTP_COLL_REDUCE_SCATTER:
      what = "ncclReduceScatter";
      r = l.ReduceScatter(a.send, a.recv, a.count, reduce_type(a.dtype), reduce_op(a.op, a.dtype), c.nccl, s);
      break;
    // Moves only: every dtype travels as bytes.
    case DTP_COLL_BROADCAST:
      what = "ncclBroadcast";
      r = l.Broadcast(a.send, a.recv, bytes, ncclUint8, a.peer, c.nccl, s);
      break;
    case DTP_COLL_ALL_GATHER:
      what = "ncclAllGather";
      r = l.AllGather(a.send, a.recv, bytes, ncclUint8, c.nccl, s);
      break;
    case DTP_COLL_SEND:
      what = "ncclSend";
      r = l.Send(a.send, bytes, ncclUint8, a.peer, c.nccl, s);
      break;
    case DTP_COLL_RECV:
      what = "ncclRecv";
      r = l.Recv(a.recv, bytes, ncclUint8, a.peer, c.nccl, s);
      break;
    default: raise(DT_ERR_INTERNAL, "NCCL: unknown collective " + std::to_string(kind));
  }
  nccl_check(l, r, c.nccl, what);
  settle(l, c, what);
  if (t_group_depth == 0) {
    if (!c.done) check(cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming), c.device, "cudaEventCreateWithFlags");
    check(cudaEventRecord(c.done, s), c.device, "cudaEventRecord (after a collective)");
    c.recorded = true;
  }
}

void coll_wait(void* handle, int device, void* stream, int64_t timeout_ms) {
  const NcclLibrary& l = lib();
  Comm& c = comm_of(handle);
  DeviceGuard guard(device);
  cudaStream_t s = stream_of(device, stream);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto pause = std::chrono::microseconds(2);
  for (;;) {
    cudaError_t e = c.recorded ? cudaEventQuery(c.done) : cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check(e, device, "waiting for a collective");
    (void)cudaGetLastError();
    // A peer that exited shows up as the communicator's asynchronous error.
    ncclResult_t state = ncclSuccess;
    if (l.CommGetAsyncError(c.nccl, &state) == ncclSuccess && state != ncclSuccess && state != ncclInProgress) {
      std::string message = "a collective on cuda:" + std::to_string(device) + " failed: " + describe(l, state, c.nccl);
      l.CommAbort(c.nccl);
      c.nccl = nullptr;
      raise(DT_ERR_DISTRIBUTED, message);
    }
    if (Clock::now() >= deadline) {
      l.CommAbort(c.nccl);  // unblocks the kernels waiting for peers
      c.nccl = nullptr;
      raise(DT_ERR_DISTRIBUTED, "a collective on cuda:" + std::to_string(device) + " did not complete within " +
                                    std::to_string(timeout_ms) + " ms (a peer may have exited or be stuck)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
}

}  // namespace dt::cudap
