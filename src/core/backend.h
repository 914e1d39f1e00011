// A backend: one device type (DLPack's code and a name, "cpu", "cuda") and everything
// devtensor does on its devices: their facts, memory, copies and ops. Backends register
// in the registry (core/registry.h); the rest of the library reaches devices only
// through it, so a new backend (a plugin for ROCm or Metal) edits neither the core nor
// the C shim. The CPU backend is in src/cpu; every other backend is a plugin
// (core/plugin_abi.h) seen through core/plugin_backend.h.
//
// Ops run by code (the op table's, core/op_table.h) through run(); the front end (src/ops)
// has already checked devices, shapes and dtypes, so a backend only computes. For every
// op: the output (or in-place target) is t[0], freshly allocated or checked, on this
// backend's device; inputs broadcast to the output's shape (a missing or size-1 dimension
// is read with stride 0) and may have any strides; binary and unary inputs already have
// the compute dtype; comparison outputs are bool. OpArgs lists what each op takes
// (dtp_op_args in core/plugin_abi.h is the same layout in C).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/allocator.h"
#include "core/op_kinds.h"
#include "core/plugin_abi.h"
#include "core/tensor.h"
#include "devtensor.h"

namespace dt {

struct OpArgs {
  static constexpr int kMaxTensors = 6;
  OpArgs() = default;
  OpArgs(std::initializer_list<const Tensor*> tensors) {
    for (const Tensor* x : tensors) t[nt++] = x;
  }
  const Tensor* t[kMaxTensors] = {};  // t[0]: the output; the inputs follow
  int nt = 0;
  double f[2] = {0, 0};
  int64_t i[4] = {0, 0, 0, 0};
  void* stream = nullptr;  // the backend's stream to queue on (null: the default); run_op sets it
};

// The geometry of a 2-d convolution pass (optional Backend hooks below): (height, width)
// pairs; padding may differ before and after; groups divides both channel counts.
struct ConvGeometry {
  int64_t stride[2] = {1, 1};
  int64_t pad_begin[2] = {0, 0};  // top, left
  int64_t pad_end[2] = {0, 0};    // bottom, right
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};

// The geometry as the plugin ABI carries it for its convolution passes (DTP_HOOK_CONV2D_*,
// packed by dtp_conv_geometry_pack), and back.
inline dtp_conv_geometry to_abi(const ConvGeometry& g) {
  dtp_conv_geometry a;
  for (int k = 0; k < 2; ++k) {
    a.stride[k] = g.stride[k];
    a.dilation[k] = g.dilation[k];
    a.pad_begin[k] = g.pad_begin[k];
    a.pad_end[k] = g.pad_end[k];
  }
  a.groups = g.groups;
  return a;
}
inline ConvGeometry from_abi(const dtp_conv_geometry& a) {
  ConvGeometry g;
  for (int k = 0; k < 2; ++k) {
    g.stride[k] = a.stride[k];
    g.dilation[k] = a.dilation[k];
    g.pad_begin[k] = a.pad_begin[k];
    g.pad_end[k] = a.pad_end[k];
  }
  g.groups = a.groups;
  return g;
}

// The geometry of a 2-d max pooling (Backend::max_pool2d_forward): (height, width) pairs;
// the output's size is the tensor's, so padding past the bottom/right (ceil_mode) needs no field.
struct PoolGeometry {
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t pad_begin[2] = {0, 0};  // top, left
  int64_t dilation[2] = {1, 1};
};

inline dtp_pool_geometry to_abi(const PoolGeometry& g) {
  dtp_pool_geometry a;
  for (int k = 0; k < 2; ++k) {
    a.kernel[k] = g.kernel[k];
    a.stride[k] = g.stride[k];
    a.dilation[k] = g.dilation[k];
    a.pad_begin[k] = g.pad_begin[k];
  }
  return a;
}
inline PoolGeometry from_abi(const dtp_pool_geometry& a) {
  PoolGeometry g;
  for (int k = 0; k < 2; ++k) {
    g.kernel[k] = a.kernel[k];
    g.stride[k] = a.stride[k];
    g.dilation[k] = a.dilation[k];
    g.pad_begin[k] = a.pad_begin[k];
  }
  return g;
}

class Backend {
 public:
  virtual ~Backend() = default;

  // ---- the device type
  virtual int32_t device_type() const = 0;  // DLPack's code: DT_DEVICE_CPU 1, DT_DEVICE_CUDA 2, ...
  virtual const char* name() const = 0;     // "cuda": its devices print and parse as cuda:N
  virtual bool accelerator() const = 0;     // its devices are GPUs for dt_try_gpu / dt_all_gpus
  virtual size_t device_count() = 0;        // usable devices; 0 when the backend is unusable
  // Throws DEVICE_UNAVAILABLE naming d and saying why the backend is unusable, or
  // INVALID_DEVICE when d's ordinal does not exist.
  virtual void check_device(Device d) = 0;
  // Fills every field but struct_size and device (the caller's).
  virtual void properties(int32_t index, dt_device_props* out) = 0;
  virtual void memory(int32_t index, uint64_t* free_bytes, uint64_t* total_bytes) = 0;
  virtual Allocator& allocator(int32_t index) = 0;
  // Page-locked host memory for fast copies to this backend's devices, or null.
  virtual Allocator* pinned_allocator() { return nullptr; }
  virtual void synchronize(Device d) = 0;

  // ---- data
  // dst = cast(src), src broadcast to dst's shape. Both are on this backend's devices,
  // or one is a CPU tensor (host memory) and the other on this backend's device.
  virtual void copy(const Tensor& dst, const Tensor& src, bool non_blocking) = 0;

  // ---- ops, by code
  virtual bool supports(int32_t op) = 0;
  virtual void run(int32_t op, const OpArgs& args) = 0;

  // ---- optional: a convolution library (oneDNN on the CPU). Each hook computes one pass
  // of a 2-d convolution (cross-correlation, as torch's conv2d) on contiguous NCHW
  // operands of one of this backend's devices, the output freshly allocated, and returns
  // true; or returns false, having written nothing, when the backend has no kernel for
  // them (the dtype, a build without the library). The caller then computes the pass with
  // im2col and matmul (nn/grad_conv.cpp), so a backend without these is complete.
  //   forward:      out [N, OC, OH, OW] = conv(x [N, C, H, W], w [OC, C / groups, kH, kW]) + bias [OC] (or null)
  //   input grad:   gx [N, C, H, W] from gout [N, OC, OH, OW] and w
  //   weight grad:  gw [OC, C / groups, kH, kW] from x and gout
  virtual bool conv2d_forward(const Tensor& out, const Tensor& x, const Tensor& w, const Tensor* bias,
                              const ConvGeometry& g) {
    return false;
  }
  virtual bool conv2d_input_grad(const Tensor& gx, const Tensor& gout, const Tensor& w, const ConvGeometry& g) {
    return false;
  }
  virtual bool conv2d_weight_grad(const Tensor& gw, const Tensor& x, const Tensor& gout, const ConvGeometry& g) {
    return false;
  }

  // Optional, as the convolution hooks: max pooling of contiguous NCHW x (floating) into
  // out [N, C, OH, OW], and indices [N, C, OH, OW] (int64), each window's largest element
  // as h * W + w in its input plane (PyTorch's indices; a NaN wins, then the first of equal
  // values); elements outside the input (padding, ceil_mode's overhang) never count.
  // Without it, nn/grad_pool.cpp reduces the windows view.
  virtual bool max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& x, const PoolGeometry& g) {
    return false;
  }

  // Optional: fused scaled dot-product attention for a forward without autograd: out
  // [N, L, Ev] = softmax(q [N, L, E] k [N, S, E]^T * scale (+ -inf above the diagonal when
  // causal: query l sees keys 0..l)) v [N, S, Ev], all contiguous of one floating dtype, the
  // output fresh; false, nothing written, when the backend has no kernel for them (dtype,
  // head size, alignment). Without it, nn/grad_attention.cpp composes matmul and softmax.
  virtual bool attention_forward(const Tensor& out, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                 bool causal) {
    return false;
  }

  // ---- streams and events (core/stream.h). A backend without them keeps these
  // defaults: one in-order queue per device, which the core emulates streams and events
  // on; the others are then never called. Handles are the backend's own; a null stream
  // is the device's default stream.
  // Optional: native graphs (core/graph.h), one launch per replay where the device has
  // them (the CUDA plugin: CUDA graphs). graph_begin records, without running, the work
  // queued from this thread on `stream` (a created one) until graph_end, which returns an
  // executable graph, or null when the work could not be recorded (the graph then
  // replays step by step); graph_launch queues one on `stream` (null: the default).
  virtual bool native_graphs() { return false; }
  virtual void graph_begin(int32_t index, void* stream) {}
  virtual void* graph_end(int32_t index, void* stream) { return nullptr; }
  virtual void graph_launch(int32_t index, void* exec, void* stream) {}
  virtual void graph_destroy(int32_t index, void* exec) noexcept {}
  // Optional: one line on the library of the convolution hooks (the CUDA plugin's cuDNN),
  // or "" when the backend has none; for dt_build_info.
  virtual std::string hook_library() { return std::string(); }

  virtual bool has_streams() { return false; }
  virtual void* stream_create(int32_t index);
  virtual void stream_destroy(int32_t index, void* stream) noexcept {}
  virtual void stream_synchronize(int32_t index, void* stream) {}
  virtual bool stream_query(int32_t index, void* stream) { return true; }
  // The default stream's own handle (for dt_stream_native_handle), or null.
  virtual void* stream_default_native(int32_t index) { return nullptr; }
  virtual void* event_create(int32_t index);
  virtual void event_destroy(int32_t index, void* event) noexcept {}
  virtual void event_record(int32_t index, void* event, void* stream) {}
  virtual void event_wait(int32_t index, void* stream, void* event) {}
  virtual void event_synchronize(int32_t index, void* event) {}
  virtual bool event_query(int32_t index, void* event) { return true; }
  virtual float event_elapsed_ms(int32_t index, void* start, void* end) { return 0; }
};

// The backend of d's device type; INVALID_ARGUMENT for a type no backend registered.
// (allocator_for, in core/allocator.h, is its allocator for d.)
Backend& backend_for(Device d);

// Runs op on the backend of args.t[0]'s device; NOT_SUPPORTED, naming the op and the
// backend, when that backend lacks it.
void run_op(int32_t op, const OpArgs& args);
inline void run_op(KernelOp op, const OpArgs& args) { run_op(code_of(op), args); }
inline void run_op(UnaryOp op, const OpArgs& args) { run_op(code_of(op), args); }
inline void run_op(BinaryOp op, const OpArgs& args) { run_op(code_of(op), args); }
inline void run_op(ReduceOp op, const OpArgs& args) { run_op(code_of(op), args); }

}  // namespace dt
