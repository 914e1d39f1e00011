// DataParallel's refresh through a device library (NCCL for CUDA, the plugin's coll_*
// slots): when every device of device_ids belongs to one plugin whose collectives load,
// it makes one communicator per device once (ncclCommInitAll), and a refresh writes the
// module's parameters and buffers into the replicas' own tensors with one grouped
// broadcast rooted at device_ids[0], instead of making new replicas by copies. The
// replicas' autograd links (their parameters are tracked copies of the module's) stay as
// they were made, so gradients still flow home through them.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace dt {
class PluginBackend;
}

namespace dt::nn {

class ReplicaBroadcast {
 public:
  // Null when the devices cannot use one: fewer than two, not all of one plugin, or its
  // collectives do not load here (DataParallel then copies).
  static std::unique_ptr<ReplicaBroadcast> make(const std::vector<Device>& devices);
  ~ReplicaBroadcast();

  // replicas[k] serves devices[k + 1]; writes module's parameters and buffers into
  // theirs. False, having written nothing, when a tensor is not contiguous or differs in
  // shape or dtype, or the communicators cannot be made (the caller then copies).
  bool refresh(const Module& module, const std::vector<Ref<Module>>& replicas);

 private:
  ReplicaBroadcast(PluginBackend& backend, std::vector<Device> devices) : backend_(backend), devices_(std::move(devices)) {}
  PluginBackend& backend_;
  std::vector<Device> devices_;
  std::vector<void*> comms_;  // one per device, made at the first refresh
  bool failed_ = false;       // making them failed: copies from then on
};

}  // namespace dt::nn
