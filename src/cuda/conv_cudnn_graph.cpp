#include "cuda/conv_cudnn_graph.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/plugin_abi.h"
#include "cuda/cudnn_library.h"
#include "cuda/runtime.h"

namespace dt::cudap {

BackendDesc::BackendDesc(const CudnnLibrary& l, cudnnBackendDescriptorType_t type, int device) : l_(&l) {
  check_dnn(l, l.BackendCreateDescriptor(type, &d_), device, "cudnnBackendCreateDescriptor");
}

BackendDesc::~BackendDesc() {
  if (d_) l_->BackendDestroyDescriptor(d_);
}

BackendDesc& BackendDesc::operator=(BackendDesc&& o) noexcept {
  if (this != &o) {
    if (d_) l_->BackendDestroyDescriptor(d_);
    l_ = o.l_;
    d_ = o.d_;
    o.d_ = nullptr;
  }
  return *this;
}

namespace {

// Tensor unique ids in the variant pack, by role.
constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

// A refused attribute or descriptor (bad shapes, a pattern no engine takes) hands the
// pass back to the classic calls (NOT_SUPPORTED, with check_dnn's message); only running
// out of memory stays what it is.
void refuse_unless_ok(const CudnnLibrary& l, cudnnStatus_t s, int device, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  try {
    check_dnn(l, s, device, what);
  } catch (Failure& f) {
    raise(f.code == DT_ERR_OUT_OF_MEMORY ? f.code : DT_ERR_NOT_SUPPORTED, f.message);
  }
}

void set(const CudnnLibrary& l, BackendDesc& d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
         int64_t count, const void* values, int device, const char* what) {
  refuse_unless_ok(l, l.BackendSetAttribute(d.get(), name, type, count, values), device, what);
}

void finalize(const CudnnLibrary& l, BackendDesc& d, int device, const char* what) {
  refuse_unless_ok(l, l.BackendFinalize(d.get()), device, what);
}

// A dense NCHW tensor descriptor.
BackendDesc tensor(const CudnnLibrary& l, const ConvProblem& p, const int64_t (&sizes)[4], int64_t uid, int device) {
  BackendDesc d(l, CUDNN_BACKEND_TENSOR_DESCRIPTOR, device);
  const int64_t strides[4] = {sizes[1] * sizes[2] * sizes[3], sizes[2] * sizes[3], sizes[3], 1};
  set(l, d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &p.data, device, "tensor data type");
  set(l, d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, sizes, device, "tensor dimensions");
  set(l, d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, device, "tensor strides");
  set(l, d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, device, "tensor unique id");
  set(l, d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &p.alignment, device, "tensor alignment");
  finalize(l, d, device, "tensor descriptor");
  return d;
}

// The operation's attribute names for its three operands and settings, by pass.
struct OpAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
OpAttributes attributes_of(int32_t hook) {
  switch (hook) {
    case DTP_HOOK_CONV2D_FORWARD:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case DTP_HOOK_CONV2D_INPUT_GRAD:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case DTP_HOOK_CONV2D_WEIGHT_GRAD:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
    default: raise(DT_ERR_NOT_SUPPORTED, "cuDNN graph API: not a convolution pass");
  }
}

// Whether an engine configuration keeps to the problem's math: strict float32 refuses
// TF32 tensor cores and inputs converted down, as the classic path's FMA math type does.
bool keeps_math(const CudnnLibrary& l, const BackendDesc& config, const ConvProblem& p, int device) {
  if (!p.strict_float32) return true;
  BackendDesc engine(l, CUDNN_BACKEND_ENGINE_DESCRIPTOR, device);
  int64_t n = 0;
  if (l.BackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                            engine.addr()) != CUDNN_STATUS_SUCCESS ||
      n != 1)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  int64_t count = 0;
  if (l.BackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                            CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t k = 0; k < std::min<int64_t>(count, CUDNN_NUMERICAL_NOTE_TYPE_COUNT); ++k)
    if (notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
      return false;
  return true;
}

// The engine configurations heuristics `mode` ranks for the graph, best first (at most 16).
std::vector<BackendDesc> ranked_configs(const CudnnLibrary& l, BackendDesc& graph, cudnnBackendHeurMode_t mode,
                                        int device) {
  BackendDesc heur(l, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, device);
  set(l, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph.addr(), device,
      "heuristics graph");
  set(l, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, device, "heuristics mode");
  finalize(l, heur, device, "engine heuristics");
  int64_t available = 0;
  check_dnn(l, l.BackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                     &available, nullptr),
            device, "engine heuristics' result count");
  const int64_t want = std::min<int64_t>(available, 16);
  std::vector<BackendDesc> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t k = 0; k < want; ++k) {
    configs.emplace_back(l, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, device);
    raw.push_back(configs.back().get());
  }
  int64_t got = 0;
  if (want > 0)
    check_dnn(l, l.BackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                       want, &got, raw.data()),
              device, "engine heuristics' results");
  configs.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, want)));
  return configs;
}

}  // namespace

std::unique_ptr<ConvOperation> describe_conv(const CudnnLibrary& l, const ConvProblem& p, int device) {
  if (!l.graph_api) raise(DT_ERR_NOT_SUPPORTED, "this cuDNN has no graph API");
  const OpAttributes at = attributes_of(p.hook);
  auto o = std::make_unique<ConvOperation>();
  o->x = tensor(l, p, p.x, kUidX, device);
  o->w = tensor(l, p, p.w, kUidW, device);
  o->y = tensor(l, p, p.y, kUidY, device);

  o->conv = BackendDesc(l, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, device);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;  // PyTorch's convolution
  const int64_t spatial = 2;
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &p.compute, device, "compute type");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, device, "mode");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, device, "spatial dims");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, p.stride, device, "strides");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, p.pad, device, "pre-paddings");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, p.pad, device, "post-paddings");
  set(l, o->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, p.dilation, device, "dilations");
  finalize(l, o->conv, device, "convolution descriptor");

  o->op = BackendDesc(l, at.type, device);
  set(l, o->op, at.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, o->x.addr(), device, "operation x");
  set(l, o->op, at.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, o->w.addr(), device, "operation w");
  set(l, o->op, at.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, o->y.addr(), device, "operation y");
  set(l, o->op, at.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, o->conv.addr(), device, "operation convolution");
  // alpha = 1, beta = 0 (the written operand is fresh): doubles for double data.
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  if (p.data == CUDNN_DATA_DOUBLE) {
    set(l, o->op, at.alpha, CUDNN_TYPE_DOUBLE, 1, &one_d, device, "alpha");
    set(l, o->op, at.beta, CUDNN_TYPE_DOUBLE, 1, &zero_d, device, "beta");
  } else {
    set(l, o->op, at.alpha, CUDNN_TYPE_FLOAT, 1, &one_f, device, "alpha");
    set(l, o->op, at.beta, CUDNN_TYPE_FLOAT, 1, &zero_f, device, "beta");
  }
  finalize(l, o->op, device, "convolution operation");
  return o;
}

std::unique_ptr<ConvGraphPlan> plan_conv(const CudnnLibrary& l, cudnnHandle_t h, const ConvProblem& p, int device) {
  auto plan = std::make_unique<ConvGraphPlan>();
  plan->op = describe_conv(l, p, device);
  plan->graph = BackendDesc(l, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, device);
  set(l, plan->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h, device, "graph handle");
  set(l, plan->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, plan->op->op.addr(), device,
      "graph operations");
  finalize(l, plan->graph, device, "operation graph");

  std::string last_refusal;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<BackendDesc> configs;
    try {
      configs = ranked_configs(l, plan->graph, mode, device);
    } catch (Failure& f) {
      if (f.code == DT_ERR_OUT_OF_MEMORY) throw;
      last_refusal = f.message;
      continue;
    }
    for (BackendDesc& config : configs) {
      if (!keeps_math(l, config, p, device)) continue;
      BackendDesc ep(l, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, device);
      try {
        set(l, ep, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h, device, "plan handle");
        set(l, ep, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, config.addr(), device,
            "plan engine configuration");
        finalize(l, ep, device, "execution plan");  // an engine that cannot build here: try the next
      } catch (Failure& f) {
        if (f.code == DT_ERR_OUT_OF_MEMORY) throw;
        last_refusal = f.message;
        continue;
      }
      int64_t n = 0;
      check_dnn(l, l.BackendGetAttribute(ep.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                         &plan->workspace),
                device, "execution plan's workspace size");
      plan->plan = std::move(ep);
      return plan;
    }
  }
  raise(DT_ERR_NOT_SUPPORTED, "cuDNN graph API: no engine keeps to this convolution's math" +
                                  (last_refusal.empty() ? std::string() : " (last refusal: " + last_refusal + ")"));
}

void run_conv(const CudnnLibrary& l, cudnnHandle_t h, const ConvGraphPlan& plan, void* x, void* w, void* y,
              void* workspace, int device) {
  BackendDesc pack(l, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, device);
  const int64_t uids[3] = {kUidX, kUidW, kUidY};
  void* pointers[3] = {x, w, y};
  set(l, pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids, device, "variant pack ids");
  set(l, pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers, device, "variant pack data");
  set(l, pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, device, "variant pack workspace");
  finalize(l, pack, device, "variant pack");
  check_dnn(l, l.BackendExecute(h, plan.plan.get(), pack.get()), device, "cudnnBackendExecute");
}

}  // namespace dt::cudap
