#include "core/registry.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "core/error.h"
#include "core/graph.h"
#include "core/plugin_backend.h"
#include "core/stream.h"

namespace dt {
namespace {

// The CUDA plugin file: DEVTENSOR_CUDA_PLUGIN, else libdevtensor-cuda.so in the directory
// of the library this code is part of (found through dladdr on one of its own symbols).
std::string cuda_plugin_path() {
  const char* env = std::getenv("DEVTENSOR_CUDA_PLUGIN");
  if (env && *env) return env;
  Dl_info info;
  std::string dir;
  if (dladdr(reinterpret_cast<void*>(&cuda_plugin_path), &info) && info.dli_fname) {
    // the canonical path ("lib/", not "bin/../lib/"), for messages users can act on
    char* real = realpath(info.dli_fname, nullptr);
    dir = real ? real : info.dli_fname;
    std::free(real);
    size_t slash = dir.rfind('/');
    dir = slash == std::string::npos ? std::string() : dir.substr(0, slash + 1);
  }
  return dir + "libdevtensor-cuda.so";
}

// DLPack's device types are small numbers: a backend's type below this is found without
// the lock (every op looks its backend up).
constexpr int32_t kFastTypes = 64;

struct Registry {
  std::mutex mu;
  std::map<int32_t, Backend*> by_type;
  std::atomic<Backend*> fast[kFastTypes] = {};
  std::vector<std::string> problems;  // DEVTENSOR_PLUGINS entries that could not be registered
  PluginBackend* cuda = nullptr;
  std::once_flag plugins_loaded;
};

// Made on first use (the CPU backend registers while the library loads), never destroyed:
// tensors may be released during exit.
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();
#if defined(DT_HAVE_CUDA_PLUGIN)
    reg->cuda = new PluginBackend(cuda_plugin_path(), DT_DEVICE_CUDA, "cuda", "CUDA", true);
#else
    reg->cuda = new PluginBackend("", DT_DEVICE_CUDA, "cuda", "CUDA", false);
#endif
    reg->by_type[DT_DEVICE_CUDA] = reg->cuda;
    reg->fast[DT_DEVICE_CUDA].store(reg->cuda, std::memory_order_release);
    return reg;
  }();
  return *r;
}

// Adds b under r.mu.
void add(Registry& r, Backend* b) {
  r.by_type[b->device_type()] = b;
  if (b->device_type() >= 0 && b->device_type() < kFastTypes) r.fast[b->device_type()].store(b, std::memory_order_release);
}

// Opens the plugins named in DEVTENSOR_PLUGINS, once, at the first lookup (not while the
// library loads: dlopen then would run inside the loader).
Registry& loaded_registry() {
  Registry& r = registry();
  std::call_once(r.plugins_loaded, [&] {
    const char* env = std::getenv("DEVTENSOR_PLUGINS");
    std::string list = env ? env : "";
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      const std::string path = list.substr(start, end - start);
      start = end + 1;
      if (path.empty()) continue;
      std::string why;
      PluginBackend* p = PluginBackend::open_now(path, &why);
      std::lock_guard<std::mutex> lock(r.mu);
      if (!p) {
        r.problems.push_back(cat(path, ": ", why));
      } else if (r.by_type.count(p->device_type())) {
        r.problems.push_back(cat(path, ": device type ", p->device_type(), " ('", p->name(), "') has a backend already"));
        delete p;
      } else {
        add(r, p);
      }
    }
  });
  return r;
}

}  // namespace

void register_backend(Backend* b) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.by_type.count(b->device_type()))
    fail(DT_ERR_INVALID_ARGUMENT, cat("device type ", b->device_type(), " ('", b->name(), "') has a backend already"));
  add(r, b);
}

Backend* find_backend(int32_t device_type) {
  Registry& r = loaded_registry();
  if (device_type >= 0 && device_type < kFastTypes) return r.fast[device_type].load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_type.find(device_type);
  return it == r.by_type.end() ? nullptr : it->second;
}

Backend* find_backend(const std::string& name) {
  Registry& r = loaded_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& [type, b] : r.by_type)
    if (name == b->name()) return b;
  return nullptr;
}

std::vector<Backend*> all_backends() {
  Registry& r = loaded_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<Backend*> out;
  for (const auto& [type, b] : r.by_type) out.push_back(b);  // by type: CPU (1) comes first
  return out;
}

std::vector<std::string> plugin_problems() {
  Registry& r = loaded_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.problems;
}

CudaStatus cuda_status() {
  PluginBackend* cuda = registry().cuda;
  return CudaStatus{cuda->state(), cuda->reason()};
}

Backend& backend_for(Device d) {
  Backend* b = find_backend(d.type);
  if (!b) fail(DT_ERR_INVALID_ARGUMENT, cat("no backend runs device type ", d.type, " (", device_str(d), ")"));
  return *b;
}

Allocator& allocator_for(Device d) { return backend_for(d).allocator(d.index); }

Allocator& pinned_host_allocator() {
  std::string why;
  for (Backend* b : all_backends()) {
    if (Allocator* a = b->pinned_allocator()) return *a;
    if (b->accelerator() && b->device_count() == 0) {
      auto* p = dynamic_cast<PluginBackend*>(b);
      why += cat(why.empty() ? "" : "; ", b->name(), ": ", p ? p->reason() : "no device");
    }
  }
  fail(DT_ERR_DEVICE_UNAVAILABLE,
       cat("pinned host memory comes from a GPU backend, and none is usable", why.empty() ? "" : ": ", why));
}

namespace {
// Records op into a capture (core/graph.h): the step owns snapshots of its tensors.
void record_op(Capture& c, Backend& b, int32_t op, const OpArgs& args) {
  record_step(c, [&](Graph& g) {
    struct Step {
      Backend* b;
      int32_t op;
      OpArgs args;  // t[] rebuilt from tensors at each run (the step may be moved)
      Tensor tensors[OpArgs::kMaxTensors];
      void operator()() const {
        OpArgs a = args;
        for (int i = 0; i < a.nt; ++i) a.t[i] = tensors[i].defined() ? &tensors[i] : nullptr;
        a.stream = thread_native_stream(tensors[0].device());  // replay's stream, not capture's
        b->run(op, a);
      }
    } step{&b, op, args, {}};
    for (int i = 0; i < args.nt; ++i)
      if (args.t[i]) step.tensors[i] = g.keep(*args.t[i]);
    return std::function<void()>(std::move(step));
  });
}
}  // namespace

void run_op(int32_t op, const OpArgs& args) {
  Backend& b = backend_for(args.t[0]->device());
  if (!b.supports(op))
    fail(DT_ERR_NOT_SUPPORTED, cat(op_code_name(op), ": not supported by the ", b.name(), " backend (",
                                   device_str(args.t[0]->device()), ")"));
  Stream* s = thread_stream(args.t[0]->device());
  if (!s) return b.run(op, args);
  OpArgs on_stream = args;
  on_stream.stream = s->native();
  if (Capture* c = s->capture()) return record_op(*c, b, op, on_stream);
  b.run(op, on_stream);
}

void* Backend::stream_create(int32_t) {
  fail(DT_ERR_INTERNAL, cat("the ", name(), " backend has no streams of its own"));
}
void* Backend::event_create(int32_t) {
  fail(DT_ERR_INTERNAL, cat("the ", name(), " backend has no events of its own"));
}

}  // namespace dt
