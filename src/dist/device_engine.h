// The engine of a process group for a device backend's tensors: the collective library
// its plugin brings (NCCL for CUDA, core/plugin_abi.h's coll_* slots), one communicator
// per device. Every call queues the collective on the calling thread's current stream of
// the device and waits for it (the plugin gives up after the group's timeout, naming
// it), so a collective returns complete, as on Gloo, and a dead peer is an error, not a
// hang.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "core/device.h"
#include "dist/collectives.h"

namespace dt {
class PluginBackend;
}

namespace dt::dist {

class KeyValueStore;

// Makes rank's communicator on device d (a collective of every rank): rank 0 makes the
// library's id and publishes it in store under key, the others read it there.
std::unique_ptr<Collectives> connect_device(PluginBackend& backend, Device d, KeyValueStore& store, const std::string& key,
                                            int rank, int size, std::chrono::milliseconds timeout);

}  // namespace dt::dist
