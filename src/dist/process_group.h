// A process group: world_size processes that run collectives together, as
// torch.distributed's ProcessGroup. Made through a rendezvous (dist/rendezvous.h), it
// checks every tensor (device, dtype, layout, shape) before any byte moves, runs one
// collective at a time in the caller's order, and after the first failure (a peer gone,
// a timeout) is broken for good: every later call fails with the first failure's message.
#pragma once
#include <chrono>
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
  // backend: "gloo", or "" to choose by device (gloo: the only one built for host tensors).
  static Ref<ProcessGroup> create(const std::string& backend, const char* init_method, int rank, int world_size,
                                  ms timeout);
  static void destroy(ProcessGroup* g) { delete g; }
  ~ProcessGroup();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const char* backend() const { return engine_->name(); }
  ms timeout() const { return timeout_; }

  void all_reduce(const Tensor& t, Reduction op);
  void broadcast(const Tensor& t, int root);
  void all_gather(const Tensor& in, const Tensor& out);
  void reduce_scatter(const Tensor& in, const Tensor& out, Reduction op);
  void barrier();
  void send(const Tensor& t, int dst, int tag);
  void recv(const Tensor& t, int src, int tag);

 private:
  ProcessGroup() = default;
  // Runs one engine call under the group's lock; on failure breaks the group and throws
  // DT_ERR_DISTRIBUTED naming the rank that exited, when the store knows one.
  template <typename F> void run(const char* what, F&& f);
  void check_tensor(const Tensor& t, const char* fn, const char* param) const;
  void check_peer(int peer, const char* fn, const char* param) const;

  int rank_ = 0, size_ = 1;
  ms timeout_{0};
  std::shared_ptr<KeyValueStore> store_;
  std::unique_ptr<Collectives> engine_;
  std::mutex mu_;
  std::string broken_;  // the first failure; empty while the group is usable
};

}  // namespace dt::dist
