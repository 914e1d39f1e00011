// A backend plugin (core/plugin_abi.h) as the core sees it: a Backend whose every call
// goes through the plugin's dtp_backend table. Tensors cross as plain dtp_tensor records,
// errors come back as the plugin's code and message, and nothing of the plugin's own
// libraries (CUDA, ROCm, ...) is linked into the core: the plugin is dlopened, and only
// when it is first used. A plugin that cannot be used (missing, from another release, no
// driver or device) still answers for its device type, with the reason.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/plugin_abi.h"

namespace dt {

class PluginBackend final : public Backend {
 public:
  // A plugin expected to serve device type `type` under `name` (`display` in messages),
  // opened at its first use: the CUDA plugin, which the core knows of before loading it.
  // `built` false: this build has no such plugin (the reason says so).
  PluginBackend(std::string path, int32_t type, std::string name, std::string display, bool built);
  // Opens the plugin at `path` now to learn its device type and name (DEVTENSOR_PLUGINS);
  // null, with *why set, when it is not a usable plugin file.
  static PluginBackend* open_now(const std::string& path, std::string* why);

  // The DT_CUDA_* state of the plugin and why it is (not) usable; probes it once.
  int32_t state();
  const std::string& reason();

  int32_t device_type() const override { return type_; }
  const char* name() const override { return name_.c_str(); }
  bool accelerator() const override { return accelerator_; }
  size_t device_count() override;
  void check_device(Device d) override;
  void properties(int32_t index, dt_device_props* out) override;
  void memory(int32_t index, uint64_t* free_bytes, uint64_t* total_bytes) override;
  Allocator& allocator(int32_t index) override;
  Allocator* pinned_allocator() override;
  void synchronize(Device d) override;
  void copy(const Tensor& dst, const Tensor& src, bool non_blocking) override;
  bool supports(int32_t op) override;
  void run(int32_t op, const OpArgs& args) override;
  // The plugin's convolution library (DTP_HOOK_*), where it announces one.
  bool conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                      const ConvGeometry& g) override;
  bool conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) override;
  bool conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) override;
  // The plugin's max pooling kernel (DTP_HOOK_MAX_POOL2D_FORWARD), where it announces one.
  bool max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) override;
  bool attention_forward(const Tensor& out, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                         bool causal) override;
  bool native_graphs() override;
  void graph_begin(int32_t index, void* stream) override;
  void* graph_end(int32_t index, void* stream) override;
  void graph_launch(int32_t index, void* exec, void* stream) override;
  void graph_destroy(int32_t index, void* exec) noexcept override;
  std::string hook_library() override;
  bool has_streams() override;
  void* stream_create(int32_t index) override;
  void stream_destroy(int32_t index, void* stream) noexcept override;
  void stream_synchronize(int32_t index, void* stream) override;
  bool stream_query(int32_t index, void* stream) override;
  void* stream_default_native(int32_t index) override;
  void* event_create(int32_t index) override;
  void event_destroy(int32_t index, void* event) noexcept override;
  void event_record(int32_t index, void* event, void* stream) override;
  void event_wait(int32_t index, void* stream, void* event) override;
  void event_synchronize(int32_t index, void* event) override;
  bool event_query(int32_t index, void* event) override;
  float event_elapsed_ms(int32_t index, void* start, void* end) override;

  // Runs a DTP_HOOK_* pass; false (nothing written) when the plugin has no such pass or
  // hands it back (DT_ERR_NOT_SUPPORTED), or its geometry does not pack.
  bool run_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const ConvGeometry& g);
  bool run_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const PoolGeometry& g);
  // The common part: the geometry already packed into i[0..3], f[0] the pass's number.
  bool run_packed_hook(int32_t hook, std::initializer_list<const Tensor*> operands, const int64_t i[4],
                       const char* what, double f0 = 0.0);

  // Collectives (the coll_* slots, for process groups and DataParallel): the library's
  // name ("nccl"), or "" when the plugin has none.
  std::string collectives_name();
  // Whether they can run: the plugin's devices are usable and its library loads. *why:
  // what the library is ("NCCL 2.28.9 (libnccl.so.2)"), or why they cannot run.
  // *version: the library's version code.
  bool collectives_usable(std::string* why, int32_t* version);
  // The slots, throwing what the plugin reports (prefixed with `what`). Comm handles are
  // the plugin's; indices are device indices of this backend.
  void coll_unique_id(uint8_t out[DTP_COLL_ID_BYTES]);
  void* coll_comm_init(int32_t index, int32_t nranks, int32_t rank, const uint8_t id[DTP_COLL_ID_BYTES],
                       int64_t timeout_ms);
  std::vector<void*> coll_comm_init_all(const std::vector<int32_t>& indices);
  void coll_comm_destroy(void* comm, bool abort) noexcept;
  void coll_group(bool begin);
  void coll_run(int32_t kind, const dtp_coll_args& args);
  void coll_wait(void* comm, int32_t index, void* stream, int64_t timeout_ms);

 private:
  PluginBackend() = default;
  void open();       // dlopen, entry symbol, ABI and release checks (sets table_ or the state)
  void probe_once();
  const dtp_backend& table();  // the usable table; throws DEVICE_UNAVAILABLE saying why
  const dtp_backend& coll_table(bool probe);  // table() with every coll_* slot (and usable, when probe); else NOT_SUPPORTED

  std::string path_;
  int32_t type_ = 0;
  std::string name_;
  std::string display_;  // in messages: "CUDA" (the name when none is given)
  bool accelerator_ = true;
  bool built_ = true;
  std::once_flag probed_;
  const dtp_backend* table_ = nullptr;  // set by open(); usable once probed with devices
  bool usable_ = false;
  bool streams_ = false;  // the table has every stream and event slot
  bool collectives_ = false;  // the table has every coll_* slot
  int32_t state_ = DT_CUDA_PLUGIN_MISSING;
  std::string reason_;
  size_t devices_ = 0;
  class DeviceAllocators;
  DeviceAllocators* allocators_ = nullptr;  // made once, never freed (outlives static destructors)
  Allocator* pinned_ = nullptr;
  std::mutex mu_;
};

}  // namespace dt
