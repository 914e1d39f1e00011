// NCCL, loaded at run time: the plugin dlopens libnccl.so.2 (DEVTENSOR_NCCL_LIBRARY names
// another file) at the first collective, as it loads the driver, so that a machine
// without NCCL still runs everything else. nccl.h gives the types; no symbol of NCCL is
// linked. Needs NCCL >= 2.14 (ncclCommInitRankConfig with a non-blocking communicator,
// which lets a rank give up on peers that never come; bfloat16).
#pragma once
#include <nccl.h>

#include <string>

namespace dt::cudap {

struct NcclLibrary {
  int version = 0;  // NCCL_VERSION_CODE of the loaded library: 22809 for 2.28.9
  decltype(&ncclGetVersion) GetVersion = nullptr;
  decltype(&ncclGetErrorString) GetErrorString = nullptr;
  decltype(&ncclGetLastError) GetLastError = nullptr;  // null before 2.13
  decltype(&ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&ncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&ncclCommInitAll) CommInitAll = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclCommAbort) CommAbort = nullptr;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&ncclAllReduce) AllReduce = nullptr;
  decltype(&ncclBroadcast) Broadcast = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&ncclSend) Send = nullptr;
  decltype(&ncclRecv) Recv = nullptr;
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
};

// The library, loaded once; null when it cannot be used. *why: a sentence saying why
// not, or what was loaded ("NCCL 2.28.9 (libnccl.so.2)").
const NcclLibrary* nccl_library(std::string* why);

// "2.28.9" for 22809 (NCCL's code since 2.9: major*10000 + minor*100 + patch).
std::string nccl_version_string(int code);

}  // namespace dt::cudap
