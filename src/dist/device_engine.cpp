#include "dist/device_engine.h"

#include <cstring>

#include "core/error.h"
#include "core/plugin_backend.h"
#include "core/stream.h"
#include "dist/store.h"

namespace dt::dist {

namespace {

class DeviceEngine final : public Collectives {
 public:
  DeviceEngine(PluginBackend& backend, Device d, void* comm, std::chrono::milliseconds timeout)
      : backend_(backend), device_(d), comm_(comm), timeout_(timeout), name_(backend.collectives_name()) {}
  ~DeviceEngine() override { backend_.coll_comm_destroy(comm_, false); }

  const char* name() const override { return name_.c_str(); }

  void all_reduce(void* data, size_t count, DType dtype, Reduction op) override {
    queue(DTP_COLL_ALL_REDUCE, data, data, count, dtype, op, 0);
  }
  bool reduce_scatter(const void* in, void* out, size_t count, DType dtype, Reduction op) override {
    queue(DTP_COLL_REDUCE_SCATTER, in, out, count, dtype, op, 0);
    return true;
  }
  void broadcast(void* data, size_t bytes, int root) override {
    queue(DTP_COLL_BROADCAST, data, data, bytes, DType::UInt8, Reduction::Sum, root);
  }
  void all_gather(const void* in, void* out, size_t bytes) override {
    queue(DTP_COLL_ALL_GATHER, in, out, bytes, DType::UInt8, Reduction::Sum, 0);
  }
  // The group runs its barrier on its host engine.
  void barrier() override { fail(DT_ERR_INTERNAL, cat(name_, ": barrier reaches a device engine")); }
  // NCCL has no tags: a rank's sends to one peer arrive in the order they were made.
  void send(const void* data, size_t bytes, int dst, uint32_t) override {
    queue(DTP_COLL_SEND, data, nullptr, bytes, DType::UInt8, Reduction::Sum, dst);
  }
  void recv(void* data, size_t bytes, int src, uint32_t) override {
    queue(DTP_COLL_RECV, nullptr, data, bytes, DType::UInt8, Reduction::Sum, src);
  }
  void abort() noexcept override {
    backend_.coll_comm_destroy(comm_, true);
    comm_ = nullptr;
  }

 private:
  void queue(int32_t kind, const void* send, void* recv, size_t count, DType dtype, Reduction op, int peer) {
    if (!comm_) fail(DT_ERR_DISTRIBUTED, cat("the ", name_, " communicator on ", device_str(device_), " is closed"));
    dtp_coll_args a;
    std::memset(&a, 0, sizeof a);
    a.comm = comm_;
    a.send = send;
    a.recv = recv;
    a.count = count;
    a.dtype = static_cast<int32_t>(dtype);
    a.op = static_cast<int32_t>(op);
    a.peer = peer;
    a.device = device_.index;
    a.stream = thread_native_stream(device_);
    backend_.coll_run(kind, a);
    backend_.coll_wait(comm_, device_.index, a.stream, timeout_.count());
  }

  PluginBackend& backend_;
  Device device_;
  void* comm_;
  std::chrono::milliseconds timeout_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Collectives> connect_device(PluginBackend& backend, Device d, KeyValueStore& store, const std::string& key,
                                            int rank, int size, std::chrono::milliseconds timeout) {
  std::vector<char> id(DTP_COLL_ID_BYTES);
  if (rank == 0) {
    backend.coll_unique_id(reinterpret_cast<uint8_t*>(id.data()));
    store.set(key, id);
  } else {
    id = store.get(key);  // waits up to the store's timeout
    if (id.size() != DTP_COLL_ID_BYTES)
      fail(DT_ERR_DISTRIBUTED, cat("rank ", rank, " read a ", id.size(), "-byte communicator id from the store (key ", key,
                                   "); expected ", DTP_COLL_ID_BYTES));
  }
  void* comm = backend.coll_comm_init(d.index, size, rank, reinterpret_cast<const uint8_t*>(id.data()), timeout.count());
  try {
    return std::make_unique<DeviceEngine>(backend, d, comm, timeout);
  } catch (...) {
    backend.coll_comm_destroy(comm, true);
    throw;
  }
}

}  // namespace dt::dist
