// Convolution passes on cuDNN's graph (backend) API, the API PyTorch 2's cuDNN path uses:
// a pass's operation graph, engine and execution plan are built once per shape and kept,
// so a pass costs one cudnnBackendExecute (and its variant pack of three pointers). The
// classic cudnnConvolution* calls of conv_cudnn.cpp rebuild that engine inside cuDNN 9 on
// every call. conv_cudnn.cpp chooses between the two (DEVTENSOR_CUDNN_API=graph) and keeps
// the plans; this file only builds and runs them.
#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>

namespace dt::cudap {

struct CudnnLibrary;

// One convolution pass, as far as its plan depends on it. Operands are dense NCHW: x
// [N, C, H, W], w [OC, C / groups, kH, kW] (cuDNN infers the groups from C and w's second
// size), y [N, OC, OH, OW]. The pass computes y from x and w (forward), x from y and w
// (input gradient) or w from x and y (weight gradient).
struct ConvProblem {
  int32_t hook = 0;  // DTP_HOOK_CONV2D_FORWARD, _INPUT_GRAD or _WEIGHT_GRAD
  cudnnDataType_t data = CUDNN_DATA_FLOAT;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int64_t x[4] = {}, w[4] = {}, y[4] = {};
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t alignment = 16;       // bytes: every operand's address is a multiple of it
  bool strict_float32 = false;  // float32 on FMA units: engines with TF32 tensor cores refused
};

// A cuDNN backend descriptor of one type, destroyed with the object (movable, not copyable).
class BackendDesc {
 public:
  BackendDesc() = default;
  BackendDesc(const CudnnLibrary& l, cudnnBackendDescriptorType_t type, int device);
  ~BackendDesc();
  BackendDesc(BackendDesc&& o) noexcept : l_(o.l_), d_(o.d_) { o.d_ = nullptr; }
  BackendDesc& operator=(BackendDesc&& o) noexcept;
  BackendDesc(const BackendDesc&) = delete;
  BackendDesc& operator=(const BackendDesc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  // The descriptor itself, for attributes that take descriptors (an array of one).
  cudnnBackendDescriptor_t* addr() { return &d_; }

 private:
  const CudnnLibrary* l_ = nullptr;
  cudnnBackendDescriptor_t d_ = nullptr;
};

// The pass's operation node, finalized, with the descriptors it refers to (tensor unique
// ids: 1 x, 2 w, 3 y). Host work only: cuDNN checks the shapes without a GPU. Throws
// Failure: DT_ERR_NOT_SUPPORTED with cuDNN's message for a problem it refuses.
struct ConvOperation {
  BackendDesc x, w, y, conv, op;
};
std::unique_ptr<ConvOperation> describe_conv(const CudnnLibrary& l, const ConvProblem& p, int device);

// A kept plan: the operation graph and the execution plan of the first engine cuDNN's
// heuristics rank that keeps to the problem's math and builds on this device, with the
// workspace it needs.
struct ConvGraphPlan {
  std::unique_ptr<ConvOperation> op;
  BackendDesc graph, plan;
  int64_t workspace = 0;
};
// Needs the device (handle h is bound to it). Throws Failure: DT_ERR_NOT_SUPPORTED when
// no engine takes the problem (the caller then uses the classic API).
std::unique_ptr<ConvGraphPlan> plan_conv(const CudnnLibrary& l, cudnnHandle_t h, const ConvProblem& p, int device);

// Runs the plan on h's stream: x, w, y are the operands' device addresses (the pass writes
// the one its hook computes), workspace at least plan.workspace bytes.
void run_conv(const CudnnLibrary& l, cudnnHandle_t h, const ConvGraphPlan& plan, void* x, void* w, void* y,
              void* workspace, int device);

}  // namespace dt::cudap
