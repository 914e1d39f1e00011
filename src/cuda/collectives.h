// The plugin's collectives (core/plugin_abi.h, the coll_* slots) on NCCL
// (cuda/nccl_library.h). A communicator handle is a Comm*: NCCL's communicator, its
// device, and for the communicators of a process group (non-blocking, so that a rank can
// give up on its peers) the timeout every call waits at most. Functions throw Failure.
#pragma once
#include <cstdint>

#include "core/plugin_abi.h"

namespace dt::cudap {

int32_t coll_probe(int32_t* version, char* why, size_t cap);  // never throws
void coll_unique_id(uint8_t* out);
void* coll_comm_init(int device, int nranks, int rank, const uint8_t* id, int64_t timeout_ms);
void coll_comm_init_all(int ndev, const int32_t* devices, void** out);
void coll_comm_destroy(void* comm, bool abort) noexcept;
void coll_group(bool begin);
void coll_run(int32_t kind, const dtp_coll_args& a);
void coll_wait(void* comm, int device, void* stream, int64_t timeout_ms);

}  // namespace dt::cudap
