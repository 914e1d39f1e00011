#include "core/cuda_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "devtensor.h"

namespace dt::cuda {
namespace {

[[maybe_unused]] std::string version_string(uint32_t v) {
  return cat(v / 1000000, ".", v / 1000 % 1000, ".", v % 1000);
}

// The plugin file: DEVTENSOR_CUDA_PLUGIN, else libdevtensor-cuda.so in the directory of
// the library this code is part of (found through dladdr on one of its own symbols).
std::string plugin_path() {
  const char* env = std::getenv("DEVTENSOR_CUDA_PLUGIN");
  if (env && *env) return env;
  Dl_info info;
  std::string dir;
  if (dladdr(reinterpret_cast<void*>(&plugin_path), &info) && info.dli_fname) {
    // the canonical path ("lib/", not "bin/../lib/"), for messages users can act on
    char* real = realpath(info.dli_fname, nullptr);
    dir = real ? real : info.dli_fname;
    std::free(real);
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string() : dir.substr(0, slash + 1);
  }
  return dir + "libdevtensor-cuda.so";
}

struct Loaded {
  Status status;
  const dtp_api* api = nullptr;
  size_t devices = 0;
};

Loaded load() {
  Loaded l;
#if !defined(DT_HAVE_CUDA_PLUGIN)
  l.status = {DT_CUDA_NOT_BUILT, "devtensor was built without the CUDA backend (DEVTENSOR_CUDA=" DT_CUDA_OPTION
                                 ", or no nvcc when it was configured)"};
  return l;
#else
  const std::string path = plugin_path();
  // RTLD_LOCAL: the plugin's CUDA libraries stay out of the global namespace.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    l.status = {DT_CUDA_PLUGIN_MISSING,
                cat("the CUDA plugin could not be loaded from ", path, ": ", why ? why : "unknown error")};
    return l;
  }
  // The handle is kept for the life of the process: tensors on the GPU may outlive any
  // point where unloading would be safe.
  auto entry = reinterpret_cast<dtp_entry_fn>(dlsym(handle, DTP_ENTRY_SYMBOL));
  if (!entry) {
    l.status = {DT_CUDA_PLUGIN_MISMATCH,
                cat(path, " is not a devtensor CUDA plugin (it has no ", DTP_ENTRY_SYMBOL, " symbol)")};
    return l;
  }
  const dtp_api* api = entry(DTP_ABI_VERSION);
  if (!api || api->struct_size < sizeof(dtp_api) || api->abi_version != DTP_ABI_VERSION) {
    l.status = {DT_CUDA_PLUGIN_MISMATCH,
                cat("the CUDA plugin ", path, " does not speak plugin ABI version ", DTP_ABI_VERSION,
                    " (it is from another devtensor release)")};
    return l;
  }
  if (api->devtensor_version != DT_VERSION_NUMBER) {
    l.status = {DT_CUDA_PLUGIN_MISMATCH, cat("the CUDA plugin ", path, " is from devtensor ",
                                             version_string(api->devtensor_version), " but this library is ",
                                             version_string(DT_VERSION_NUMBER))};
    return l;
  }
  dtp_probe probe;
  std::memset(&probe, 0, sizeof probe);
  api->probe(&probe);
  probe.reason[sizeof probe.reason - 1] = '\0';
  l.status = {probe.state, probe.reason};
  if (probe.state == DT_CUDA_AVAILABLE && probe.device_count > 0) {
    l.api = api;
    l.devices = static_cast<size_t>(probe.device_count);
  }
  return l;
#endif
}

const Loaded& loaded() {
  static const Loaded l = load();  // thread-safe, once
  return l;
}

}  // namespace

const Status& status() { return loaded().status; }

size_t device_count() { return loaded().devices; }

void require_available(const char* requested) {
  const Loaded& l = loaded();
  if (l.api) return;
  if (requested) fail(DT_ERR_DEVICE_UNAVAILABLE, cat(requested, " requested, but CUDA is not available: ", l.status.reason));
  fail(DT_ERR_DEVICE_UNAVAILABLE, "CUDA is not available: " + l.status.reason);
}

const dtp_api& api() {
  require_available();
  return *loaded().api;
}

void check(int32_t code, const dtp_error& err) {
  if (code == DT_OK) return;
  const char* msg = err.message[0] ? err.message : "CUDA backend error";
  fail(static_cast<dt_status>(code), std::string(msg, strnlen(msg, sizeof err.message)));
}

}  // namespace dt::cuda
