#include "dist/rendezvous.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/error.h"
#include "dist/file_store.h"
#include "dist/tcp_store.h"

namespace dt::dist {

namespace {

// A whole decimal number in [lo, hi], or fail naming `what`.
int parse_int(const std::string& s, int lo, int hi, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    fail(DT_ERR_INVALID_ARGUMENT, cat(what, " is \"", s, "\"; expected a whole number in [", lo, ", ", hi, "]"));
  return static_cast<int>(v);
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// rank/world from the arguments, else from the environment.
void take_rank_and_size(Rendezvous& r, int rank, int world_size, const std::string& method) {
  if (world_size < 0) {
    std::string w = env_or_empty("WORLD_SIZE");
    if (w.empty())
      fail(DT_ERR_INVALID_ARGUMENT, cat(method, ": the world size is neither given nor in WORLD_SIZE (devtensor run sets it)"));
    world_size = parse_int(w, 1, 1 << 20, "WORLD_SIZE");
  }
  if (rank < 0) {
    std::string v = env_or_empty("RANK");
    if (v.empty()) fail(DT_ERR_INVALID_ARGUMENT, cat(method, ": the rank is neither given nor in RANK (devtensor run sets it)"));
    rank = parse_int(v, 0, 1 << 20, "RANK");
  }
  if (world_size < 1) fail(DT_ERR_INVALID_ARGUMENT, cat("world size ", world_size, " must be at least 1"));
  if (rank >= world_size) fail(DT_ERR_INVALID_ARGUMENT, cat("rank ", rank, " is not below the world size ", world_size));
  r.rank = rank;
  r.world_size = world_size;
}

struct Shared {
  std::weak_ptr<KeyValueStore> store;
  int groups = 0;
};
std::mutex g_mu;
std::map<std::string, Shared> g_stores;  // by store_url

}  // namespace

Rendezvous resolve_rendezvous(const char* init_method, int rank, int world_size) {
  std::string m = (init_method && *init_method) ? init_method : "env://";
  Rendezvous r;
  if (m == "env://") {
    take_rank_and_size(r, rank, world_size, m);
    r.host = env_or_empty("MASTER_ADDR");
    std::string port = env_or_empty("MASTER_PORT");
    if (r.host.empty() || port.empty())
      fail(DT_ERR_INVALID_ARGUMENT, cat("env://: MASTER_ADDR and MASTER_PORT must both be set (rank 0's address and "
                                        "a free port; devtensor run sets them)"));
    r.port = parse_int(port, 1, 65535, "MASTER_PORT");
  } else if (m.rfind("tcp://", 0) == 0) {
    take_rank_and_size(r, rank, world_size, m);
    std::string hp = m.substr(6);
    size_t colon = hp.rfind(':');
    if (colon == std::string::npos || colon == 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat("init method \"", m, "\": expected tcp://host:port"));
    r.host = hp.substr(0, colon);
    r.port = parse_int(hp.substr(colon + 1), 1, 65535, cat("the port of \"", m, "\""));
  } else if (m.rfind("file://", 0) == 0) {
    take_rank_and_size(r, rank, world_size, m);
    r.path = m.substr(7);
    if (r.path.empty() || r.path[0] != '/')
      fail(DT_ERR_INVALID_ARGUMENT, cat("init method \"", m, "\": expected file:///absolute/path"));
  } else {
    fail(DT_ERR_INVALID_ARGUMENT, cat("init method \"", m, "\" is not one of env://, tcp://host:port, file:///path"));
  }
  r.store_url = r.path.empty() ? cat("tcp://", r.host, ":", r.port) : "file://" + r.path;
  return r;
}

std::shared_ptr<KeyValueStore> open_store(const Rendezvous& r, std::chrono::milliseconds timeout, int* group_index) {
  std::lock_guard<std::mutex> lock(g_mu);
  Shared& shared = g_stores[r.store_url];
  std::shared_ptr<KeyValueStore> store = shared.store.lock();
  if (!store) {
    if (r.path.empty()) store = std::make_shared<TcpStore>(r.host, r.port, r.rank, r.rank == 0, timeout);
    else store = std::make_shared<FileStore>(r.path, r.rank, timeout);
    shared.store = store;
  }
  *group_index = shared.groups++;
  return store;
}

}  // namespace dt::dist
