// A process group: world_size processes that run collectives together, as
// torch.distributed's ProcessGroup. Made through a rendezvous (dist/rendezvous.h), it
// checks every tensor (device, dtype, layout, shape) before any byte moves, runs one
// collective at a time in the caller's order, and after the first failure (a peer gone,
// a timeout) is broken for good: every later call fails with the first failure's message.
//
// Engines: Gloo for host tensors, always connected (it also runs the barrier and DDP's
// checks); a device backend's collective library (NCCL for CUDA, dist/device_engine.h)
// for that backend's tensors, one communicator per device, made at the first collective
// on the device (every rank reaches it in the same order, as with torch's NCCL backend).
// Backend "gloo" takes host tensors only, "nccl" (a plugin's coll_name) that plugin's
// tensors only, "" both.
#pragma once
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/refcounted.h"
#include "core/tensor.h"
#include "dist/collectives.h"

namespace dt::dist {

class KeyValueStore;

class ProcessGroup : public RefCounted {
 public:
  using ms = std::chrono::milliseconds;
  // backend: "gloo", a device plugin's collective library ("nccl"), or "" for both.
  static Ref<ProcessGroup> create(const std::string& backend, const char* init_method, int rank, int world_size,
                                  ms timeout);
  static void destroy(ProcessGroup* g) { delete g; }
  ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const char* backend() const { return backend_.c_str(); }
  ms timeout() const { return timeout_; }

  void all_reduce(const Tensor& t, Reduction op);
  void broadcast(const Tensor& t, int root);
  void all_gather(const Tensor& in, const Tensor& out);
  void reduce_scatter(const Tensor& in, const Tensor& out, Reduction op);
  void barrier();
  void send(const Tensor& t, int dst, int tag);
  void recv(const Tensor& t, int src, int tag);
  // Fails (DEVICE_MISMATCH, NOT_SUPPORTED) unless this group can run collectives on t:
  // "<fn>: <what> is on cuda:0 but ...".
  void check_tensor(const Tensor& t, const char* fn, const std::string& what) const;
  // all_gather of host tensors on the Gloo engine whatever the backend (DDP's checks).
  void host_all_gather(const Tensor& in, const Tensor& out);

 private:
  ProcessGroup() = default;
  // Runs one engine call under the group's lock; on failure breaks the group and throws
  // DT_ERR_DISTRIBUTED naming the rank that exited, when the store knows one.
  template <typename F> void run(const char* what, F&& f);
  // The engine for t's device, connecting it at its first use. Called inside run().
  Collectives& engine(const Tensor& t);
  void check_peer(int peer, const char* fn, const char* param) const;
  void check_same_device(const Tensor& a, const Tensor& b, const char* fn) const;

  int rank_ = 0, size_ = 1;
  ms timeout_{0};
  std::shared_ptr<KeyValueStore> store_;
  std::string prefix_;  // this group's keys in the store: "g<n>/"
  int device_engines_made_ = 0;
  std::string backend_;       // "gloo", "nccl", or "gloo,nccl" for "" where NCCL is usable
  bool host_tensors_ = true;  // Gloo takes host tensors
  std::string device_lib_;    // the one device library taken ("nccl"); "": any plugin's
  bool device_tensors_ = false;
  // The device type whose tensors last passed check_tensor: later calls skip the plugin
  // lookup and the library probe (a collective's hot path). -1 until one passes.
  mutable std::atomic<int32_t> checked_device_type_{-1};
  std::unique_ptr<Collectives> host_;  // Gloo
  std::map<std::pair<int32_t, int32_t>, std::unique_ptr<Collectives>> devices_;  // by (type, index)
  std::mutex mu_;
  std::string broken_;  // the first failure; empty while the group is usable
};

}  // namespace dt::dist
