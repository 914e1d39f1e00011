#include "cuda/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "cuda/dl_bind.h"

namespace dt::cudap {

std::string nccl_version_string(int code) {
  if (code >= 10000)
    return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  return std::to_string(code / 1000) + "." + std::to_string(code / 100 % 10) + "." + std::to_string(code % 100);
}

namespace {

constexpr int kMinimumVersion = 21400;  // 2.14: ncclConfig_t's blocking = 0

struct Loaded {
  NcclLibrary lib;
  bool ok = false;
  std::string why;   // when not ok
  std::string what;  // when ok: "NCCL 2.28.9 (libnccl.so.2)"
};

Loaded load() {
  Loaded r;
  const char* env = std::getenv("DEVTENSOR_NCCL_LIBRARY");
  const std::string file = env && *env ? env : "libnccl.so.2";
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    r.why = "NCCL is not installed: " + file + " cannot be loaded (" + (e ? e : "dlopen failed") +
            "); install NCCL (libnccl2) or set DEVTENSOR_NCCL_LIBRARY to its path";
    return r;
  }
  NcclLibrary& l = r.lib;
  std::string missing;
  bind(h, "ncclGetVersion", &l.GetVersion, &missing);
  bind(h, "ncclGetErrorString", &l.GetErrorString, &missing);
  bind(h, "ncclGetUniqueId", &l.GetUniqueId, &missing);
  bind(h, "ncclCommInitRankConfig", &l.CommInitRankConfig, &missing);
  bind(h, "ncclCommInitAll", &l.CommInitAll, &missing);
  bind(h, "ncclCommDestroy", &l.CommDestroy, &missing);
  bind(h, "ncclCommAbort", &l.CommAbort, &missing);
  bind(h, "ncclCommGetAsyncError", &l.CommGetAsyncError, &missing);
  bind(h, "ncclAllReduce", &l.AllReduce, &missing);
  bind(h, "ncclBroadcast", &l.Broadcast, &missing);
  bind(h, "ncclAllGather", &l.AllGather, &missing);
  bind(h, "ncclReduceScatter", &l.ReduceScatter, &missing);
  bind(h, "ncclSend", &l.Send, &missing);
  bind(h, "ncclRecv", &l.Recv, &missing);
  bind(h, "ncclGroupStart", &l.GroupStart, &missing);
  bind(h, "ncclGroupEnd", &l.GroupEnd, &missing);
  l.GetLastError = reinterpret_cast<decltype(l.GetLastError)>(dlsym(h, "ncclGetLastError"));  // optional
  if (!l.GetVersion || l.GetVersion(&l.version) != ncclSuccess) {
    r.why = file + " is not a usable NCCL library" + (missing.empty() ? "" : " (no " + missing + ")");
    return r;  // the handle stays open: dlclose of a half-bound library gains nothing
  }
  if (l.version < kMinimumVersion) {
    r.why = "NCCL " + nccl_version_string(l.version) + " (" + file + ") is older than " +
            nccl_version_string(kMinimumVersion) + ", the oldest devtensor uses";
    return r;
  }
  if (!missing.empty()) {
    r.why = "NCCL " + nccl_version_string(l.version) + " (" + file + ") lacks " + missing;
    return r;
  }
  r.ok = true;
  r.what = "NCCL " + nccl_version_string(l.version) + " (" + file + ")";
  return r;
}

}  // namespace

const NcclLibrary* nccl_library(std::string* why) {
  static const Loaded loaded = load();  // never unloaded: NCCL's threads may outlive users
  if (why) *why = loaded.ok ? loaded.what : loaded.why;
  return loaded.ok ? &loaded.lib : nullptr;
}

}  // namespace dt::cudap
