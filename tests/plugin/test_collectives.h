// testdev's collectives ("testcoll", the coll_* slots of core/plugin_abi.h), so that CI,
// which has no GPU and no NCCL, runs the core's device-collective paths: process groups
// on testdev tensors (groups of one process) and DataParallel's broadcast over both
// testdev devices (a communicator per device in one process, driven in a group, as
// NCCL's ncclCommInitAll ones are). They move host memory with memcpy.
#pragma once
#include "core/plugin_abi.h"

// Fills t's coll_* slots.
void set_test_collectives(dtp_backend& t);
