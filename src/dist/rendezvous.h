// Where the ranks of a process group meet: the init method (env://, tcp://host:port,
// file:///path, as torch.distributed spells them), resolved against the environment, and
// the store it names, shared by every group of this process that names the same one.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "dist/store.h"

namespace dt::dist {

struct Rendezvous {
  std::string store_url;  // "tcp://host:port" or "file:///path": the store's identity
  std::string host;       // tcp: the master's address
  int port = 0;           // tcp
  std::string path;       // file
  int rank = -1;
  int world_size = -1;
};

// init_method NULL or "" means "env://", which reads MASTER_ADDR and MASTER_PORT.
// rank / world_size < 0 are read from RANK / WORLD_SIZE. Throws DT_ERR_INVALID_ARGUMENT
// naming what is missing or malformed.
Rendezvous resolve_rendezvous(const char* init_method, int rank, int world_size);

// The store of r, opened (rank 0 serves a tcp store) or shared with a live group of this
// process; *group_index receives how many groups this process made with that init
// method before, which every rank running the same program counts alike, so
// "g<index>/" keeps the groups' keys apart.
std::shared_ptr<KeyValueStore> open_store(const Rendezvous& r, std::chrono::milliseconds timeout, int* group_index);

}  // namespace dt::dist
