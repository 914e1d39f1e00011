// The Gloo engine (Debian's libgloo, the library torch.distributed's "gloo" backend is):
// a full mesh of TCP connections made through the store, and Gloo's own algorithms for
// every collective on host memory. Only the element-wise reduction functions are ours,
// because Gloo's cover neither bfloat16 nor bool.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include <gloo/rendezvous/store.h>

#include "dist/collectives.h"

namespace dt::dist {

// Connects rank to every other rank through store (keys of this group only). host is
// the address other ranks reach this one at: GLOO_SOCKET_IFNAME's, else 127.0.0.1 when
// the master is on this machine's loopback, else this host's name.
std::unique_ptr<Collectives> connect_gloo(gloo::rendezvous::Store& store, int rank, int size,
                                          std::chrono::milliseconds timeout, const std::string& master_host);

}  // namespace dt::dist
