#include "nn/replica_broadcast.h"

#include <cstring>

#include "core/error.h"
#include "core/plugin_backend.h"
#include "core/registry.h"
#include "core/stream.h"

namespace dt::nn {

namespace {

std::vector<Tensor> tensors_of(const Module& m) {
  std::vector<Tensor> out;
  for (const auto& [name, t] : m.parameters()) out.push_back(t);
  for (const auto& [name, t] : m.buffers()) out.push_back(t);
  return out;
}

}  // namespace

std::unique_ptr<ReplicaBroadcast> ReplicaBroadcast::make(const std::vector<Device>& devices) {
  if (devices.size() < 2 || devices[0].is_cpu()) return nullptr;
  for (const Device& d : devices)
    if (d.type != devices[0].type) return nullptr;
  auto* plugin = dynamic_cast<PluginBackend*>(find_backend(devices[0].type));
  if (!plugin || !plugin->collectives_usable(nullptr, nullptr)) return nullptr;
  return std::unique_ptr<ReplicaBroadcast>(new ReplicaBroadcast(*plugin, devices));
}

ReplicaBroadcast::~ReplicaBroadcast() {
  for (void* c : comms_) backend_.coll_comm_destroy(c, false);
}

bool ReplicaBroadcast::refresh(const Module& module, const std::vector<Ref<Module>>& replicas) {
  if (failed_ || replicas.size() + 1 != devices_.size()) return false;
  const std::vector<Tensor> source = tensors_of(module);
  std::vector<std::vector<Tensor>> targets;
  for (const Ref<Module>& r : replicas) {
    targets.push_back(tensors_of(*r));
    if (targets.back().size() != source.size()) return false;
  }
  for (size_t i = 0; i < source.size(); ++i) {
    if (!source[i].is_contiguous()) return false;
    for (const auto& t : targets)
      if (!t[i].is_contiguous() || t[i].shape() != source[i].shape() || t[i].dtype() != source[i].dtype()) return false;
  }
  if (comms_.empty()) {
    std::vector<int32_t> indices;
    for (const Device& d : devices_) indices.push_back(d.index);
    try {
      comms_ = backend_.coll_comm_init_all(indices);
    } catch (const Error&) {
      failed_ = true;  // copies serve as before
      return false;
    }
  }
  for (const auto& t : targets)
    for (const Tensor& x : t) x.storage()->begin_write("DataParallel refresh");
  // One group: every parameter and buffer to every device, queued on each device's
  // current stream, where the replicas' forward will read them.
  backend_.coll_group(true);
  try {
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i].nbytes() == 0) continue;
      for (size_t k = 0; k < devices_.size(); ++k) {
        dtp_coll_args a;
        std::memset(&a, 0, sizeof a);
        a.comm = comms_[k];
        a.send = source[i].data();
        a.recv = k == 0 ? source[i].data() : targets[k - 1][i].data();
        a.count = source[i].nbytes();
        a.dtype = static_cast<int32_t>(DType::UInt8);
        a.peer = 0;
        a.device = devices_[k].index;
        a.stream = thread_native_stream(devices_[k]);
        backend_.coll_run(DTP_COLL_BROADCAST, a);
      }
    }
  } catch (...) {
    try {
      backend_.coll_group(false);
    } catch (...) {
    }
    throw;
  }
  backend_.coll_group(false);
  return true;
}

}  // namespace dt::nn
