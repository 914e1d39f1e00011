// The convolution library passes (DTP_HOOK_CONV2D_*, core/plugin_abi.h) on cuDNN's classic
// convolution API: forward (with the bias added by cudnnAddTensor), the input gradient
// (backward data) and the weight gradient (backward filter), for float32, float64,
// float16 and bfloat16 NCHW operands. The algorithm is cuDNN's own heuristic choice
// (the _v7 queries, as PyTorch with benchmark mode off), remembered per shape, the first
// one that keeps to the requested math: float32 stays on FMA units unless TF32 is allowed
// (dt_set_allow_tf32, as PyTorch's cudnn.allow_tf32 but one switch for matmul and
// convolution, off by default). What cuDNN cannot take (asymmetric padding, more than
// 2^31 elements, a configuration it reports NOT_SUPPORTED for) is handed back to the core
// with DT_ERR_NOT_SUPPORTED before anything is written, and the core computes it.
// DEVTENSOR_CUDNN_API=graph runs the passes on cuDNN's graph API instead, with an
// execution plan kept per shape (conv_cudnn_graph.cpp); a shape the graph API refuses
// stays on the classic calls.
#include "cuda/conv_cudnn.h"

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/dtype.h"
#include "cuda/conv_cudnn_graph.h"
#include "cuda/cudnn_library.h"
#include "cuda/memory.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

const CudnnLibrary& lib() {
  if (const CudnnLibrary* l = cudnn_library(nullptr)) return *l;
  std::string why;
  cudnn_library(&why);
  raise(DT_ERR_NOT_SUPPORTED, why);
}

void check_dnn(cudnnStatus_t s, int device, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) dt::cudap::check_dnn(lib(), s, device, what);
}

// Descriptors, destroyed with the scope.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  explicit TensorDesc(int device) { check_dnn(lib().CreateTensorDescriptor(&d), device, "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { lib().DestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  explicit FilterDesc(int device) { check_dnn(lib().CreateFilterDescriptor(&d), device, "cudnnCreateFilterDescriptor"); }
  ~FilterDesc() { lib().DestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  explicit ConvDesc(int device) {
    check_dnn(lib().CreateConvolutionDescriptor(&d), device, "cudnnCreateConvolutionDescriptor");
  }
  ~ConvDesc() { lib().DestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

struct Types {
  cudnnDataType_t data, compute;
};
Types types_of(int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::Float32: return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT};
    case DType::Float64: return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE};
    case DType::Float16: return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    case DType::BFloat16: return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    default: raise(DT_ERR_NOT_SUPPORTED, "cuDNN convolution: not a floating dtype");
  }
}

int as_int(int64_t v) {
  if (v < 0 || v > INT_MAX) raise(DT_ERR_NOT_SUPPORTED, "cuDNN convolution: a size past 2^31");
  return static_cast<int>(v);
}

// The chosen algorithm and math for one pass and shape.
struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
using Key = std::array<int64_t, 16>;

// Whether a returned algorithm keeps to the requested math: strict float32 refuses the
// tensor-core (TF32) maths.
bool keeps_math(cudnnMathType_t got, bool strict_float32) {
  return !strict_float32 || (got != CUDNN_TENSOR_OP_MATH && got != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
}

// cuDNN's heuristic choice (tens of microseconds: asked once per shape, when its plan
// is made): the first algorithm that keeps to the requested math.
template <typename Perf, typename Query>
Choice choose(bool strict_float32, int device, const char* what, Query query) {
  Perf perf[16];
  int n = 0;
  check_dnn(query(perf, 16, &n), device, what);
  for (int k = 0; k < n; ++k)
    if (perf[k].status == CUDNN_STATUS_SUCCESS && keeps_math(perf[k].mathType, strict_float32))
      return Choice{static_cast<int>(perf[k].algo), perf[k].mathType};
  raise(DT_ERR_NOT_SUPPORTED, std::string("cuDNN ") + what + ": no algorithm for this convolution");
}

// Everything a pass needs that depends on its shape alone: the four descriptors set up,
// the algorithm and its workspace size. Built at a shape's first pass and kept, so a
// step's pass is one cuDNN call (two with a bias) where it was about fifteen (creating,
// setting and destroying descriptors, the workspace query).
// The forward pass's bias, [OC] seen as [1, OC, 1, 1], added to y [N, OC, OH, OW] by
// cudnnAddTensor; made at a shape's first pass with a bias.
struct BiasDescs {
  TensorDesc y, bias;
  explicit BiasDescs(int device) : y(device), bias(device) {}
};

struct ConvPlan {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc c;
  std::unique_ptr<BiasDescs> bias;
  int algo = 0;
  size_t workspace = 0;
  explicit ConvPlan(int device) : x(device), y(device), w(device), c(device) {}
};

// A shape's plan on the graph API; a null plan marks a shape the graph API refused,
// which the classic calls serve.
struct GraphEntry {
  std::unique_ptr<ConvGraphPlan> plan;
  std::unique_ptr<BiasDescs> bias;
};
using GraphKey = std::array<int64_t, 17>;  // Key and the operands' alignment

// Shapes whose plans are kept per device; past it, a new shape's plan lives for its pass.
constexpr size_t kMaxPlans = 1024;

// One handle per device, used under its mutex (its stream is state), as cuBLAS's, with
// the plans made on it. The map is never freed: plans hold cuDNN descriptors, which must
// not be destroyed after the library is gone at exit.
struct Handle {
  std::mutex mu;
  cudnnHandle_t h = nullptr;
  std::map<Key, std::unique_ptr<ConvPlan>>* plans = nullptr;
  std::map<GraphKey, std::unique_ptr<GraphEntry>>* graph_plans = nullptr;
};
Handle g_handles[kMaxDevices];

// DEVTENSOR_CUDNN_API=graph chooses the graph API (read once); unset or anything else,
// the classic one.
bool graph_api_chosen() {
  static const bool chosen = env_equals("DEVTENSOR_CUDNN_API", "graph");
  return chosen;
}

// The largest power of two, at most 16 bytes, that every operand's address is a multiple
// of: a graph plan is made for (and kept under) that alignment.
int64_t alignment_of(const dtp_op_args& a) {
  uintptr_t bits = 16;
  for (int k = 0; k < a.nt; ++k) bits |= reinterpret_cast<uintptr_t>(a.t[k]->data);
  return static_cast<int64_t>(bits & (~bits + 1));
}

// y += bias for a forward pass (alpha = beta = one), the descriptors made at the first call.
void add_bias(const CudnnLibrary& l, cudnnHandle_t h, std::unique_ptr<BiasDescs>& descs, cudnnDataType_t data,
              const dtp_tensor& y, const dtp_tensor& bias, void* y_data, const void* one, int device) {
  if (!descs) {
    auto d = std::make_unique<BiasDescs>(device);
    check_dnn(l.SetTensor4dDescriptor(d->y.d, CUDNN_TENSOR_NCHW, data, as_int(y.sizes[0]), as_int(y.sizes[1]),
                                      as_int(y.sizes[2]), as_int(y.sizes[3])),
              device, "cudnnSetTensor4dDescriptor");
    check_dnn(l.SetTensor4dDescriptor(d->bias.d, CUDNN_TENSOR_NCHW, data, 1, as_int(y.sizes[1]), 1, 1), device,
              "cudnnSetTensor4dDescriptor");
    descs = std::move(d);
  }
  check_dnn(l.AddTensor(h, one, descs->bias.d, bias.data, one, descs->y.d, y_data), device, "cudnnAddTensor");
}

// The pass on the graph API's kept plan for its shape, made at the shape's first pass.
// False (nothing written) when the graph API refuses the shape: the classic calls take it,
// now and for the shape's later passes.
bool run_on_graph_api(const CudnnLibrary& l, Handle& handle, int32_t hook, const dtp_op_args& a, const Key& key,
                      const ConvProblem& problem, const dtp_tensor& x, const dtp_tensor& w, const dtp_tensor& y,
                      const void* one, int device) {
  if (!handle.graph_plans) handle.graph_plans = new std::map<GraphKey, std::unique_ptr<GraphEntry>>();
  GraphKey gkey;
  std::copy(key.begin(), key.end(), gkey.begin());
  gkey[16] = problem.alignment;
  std::unique_ptr<GraphEntry> fresh;
  GraphEntry* entry = nullptr;
  if (auto it = handle.graph_plans->find(gkey); it != handle.graph_plans->end()) {
    entry = it->second.get();
  } else {
    fresh = std::make_unique<GraphEntry>();
    try {
      fresh->plan = plan_conv(l, handle.h, problem, device);
    } catch (Failure& f) {
      if (f.code != DT_ERR_NOT_SUPPORTED) throw;  // the refusal is kept: a null plan
    }
    entry = fresh.get();
    if (handle.graph_plans->size() < kMaxPlans) handle.graph_plans->emplace(gkey, std::move(fresh));
  }
  if (!entry->plan) return false;
  const ConvGraphPlan& plan = *entry->plan;
  Scratch ws(device, plan.workspace > 0 ? static_cast<size_t>(plan.workspace) : 1);
  try {
    run_conv(l, handle.h, plan, x.data, w.data, y.data, ws.get(), device);
  } catch (Failure& f) {
    if (f.code != DT_ERR_NOT_SUPPORTED) throw;
    entry->plan.reset();  // refused at run time (before writing): the classic calls from now on
    return false;
  }
  if (hook == DTP_HOOK_CONV2D_FORWARD && a.nt > 3)
    add_bias(l, handle.h, entry->bias, problem.data, y, *a.t[3], y.data, one, device);
  return true;
}

}  // namespace

bool cudnn_convolutions_usable() { return cudnn_library(nullptr) != nullptr; }

const char* cudnn_convolution_api() {
  const CudnnLibrary* l = cudnn_library(nullptr);
  if (graph_api_chosen() && l && l->graph_api) return "graph API with kept execution plans (DEVTENSOR_CUDNN_API=graph)";
  return "classic convolution API";
}

void conv2d_cudnn(int32_t hook, const dtp_op_args& a) {
  const CudnnLibrary& l = lib();
  const dtp_tensor& out = *a.t[0];
  const int device = out.device;
  const dtp_conv_geometry g = dtp_conv_geometry_unpack(a.i);
  if (g.pad_begin[0] != g.pad_end[0] || g.pad_begin[1] != g.pad_end[1])
    raise(DT_ERR_NOT_SUPPORTED, "cuDNN convolution: asymmetric padding");
  for (int k = 0; k < a.nt; ++k)
    if (a.t[k]->numel > INT_MAX || a.t[k]->numel == 0)
      raise(DT_ERR_NOT_SUPPORTED, "cuDNN convolution: an empty operand or one past 2^31 elements");
  const Types ty = types_of(out.dtype);
  const bool strict_float32 = static_cast<DType>(out.dtype) == DType::Float32 && a.i[3] == 0;
  // The operands by role: x [N, C, H, W], w [OC, C / groups, kH, kW], y [N, OC, OH, OW].
  const dtp_tensor& x = hook == DTP_HOOK_CONV2D_FORWARD ? *a.t[1] : hook == DTP_HOOK_CONV2D_INPUT_GRAD ? out : *a.t[1];
  const dtp_tensor& w = hook == DTP_HOOK_CONV2D_WEIGHT_GRAD ? out : *a.t[2];
  const dtp_tensor& y = hook == DTP_HOOK_CONV2D_FORWARD ? out : hook == DTP_HOOK_CONV2D_INPUT_GRAD ? *a.t[1] : *a.t[2];

  const Key key{hook,          out.dtype,     x.sizes[0],    x.sizes[1], x.sizes[2], x.sizes[3],
                w.sizes[0],    w.sizes[2],    w.sizes[3],    a.i[0],     a.i[1],     g.groups,
                a.i[3],        y.sizes[2],    y.sizes[3],    device};
  Handle& handle = g_handles[device];
  std::lock_guard<std::mutex> lock(handle.mu);
  if (!handle.h) check_dnn(l.Create(&handle.h), device, "cudnnCreate");
  if (!handle.plans) handle.plans = new std::map<Key, std::unique_ptr<ConvPlan>>();
  check_dnn(l.SetStream(handle.h, stream(device)), device, "cudnnSetStream");

  // alpha = 1, beta = 0 (the output is fresh): doubles for double data, floats otherwise.
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool dbl = ty.data == CUDNN_DATA_DOUBLE;
  const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;

  if (graph_api_chosen() && l.graph_api) {
    ConvProblem problem;
    problem.hook = hook;
    problem.data = ty.data;
    problem.compute = ty.compute;
    std::copy(x.sizes, x.sizes + 4, problem.x);
    std::copy(w.sizes, w.sizes + 4, problem.w);
    std::copy(y.sizes, y.sizes + 4, problem.y);
    for (int d = 0; d < 2; ++d) {
      problem.stride[d] = g.stride[d];
      problem.pad[d] = g.pad_begin[d];
      problem.dilation[d] = g.dilation[d];
    }
    problem.alignment = alignment_of(a);
    problem.strict_float32 = strict_float32;
    if (run_on_graph_api(l, handle, hook, a, key, problem, x, w, y, one, device)) return;
  }

  std::unique_ptr<ConvPlan> fresh;
  ConvPlan* plan = nullptr;
  if (auto it = handle.plans->find(key); it != handle.plans->end()) {
    plan = it->second.get();
  } else {
    fresh = std::make_unique<ConvPlan>(device);
    ConvPlan& p = *fresh;
    check_dnn(l.SetTensor4dDescriptor(p.x.d, CUDNN_TENSOR_NCHW, ty.data, as_int(x.sizes[0]), as_int(x.sizes[1]),
                                      as_int(x.sizes[2]), as_int(x.sizes[3])),
              device, "cudnnSetTensor4dDescriptor");
    check_dnn(l.SetTensor4dDescriptor(p.y.d, CUDNN_TENSOR_NCHW, ty.data, as_int(y.sizes[0]), as_int(y.sizes[1]),
                                      as_int(y.sizes[2]), as_int(y.sizes[3])),
              device, "cudnnSetTensor4dDescriptor");
    check_dnn(l.SetFilter4dDescriptor(p.w.d, ty.data, CUDNN_TENSOR_NCHW, as_int(w.sizes[0]), as_int(w.sizes[1]),
                                      as_int(w.sizes[2]), as_int(w.sizes[3])),
              device, "cudnnSetFilter4dDescriptor");
    check_dnn(l.SetConvolution2dDescriptor(p.c.d, as_int(g.pad_begin[0]), as_int(g.pad_begin[1]), as_int(g.stride[0]),
                                           as_int(g.stride[1]), as_int(g.dilation[0]), as_int(g.dilation[1]),
                                           CUDNN_CROSS_CORRELATION, ty.compute),
              device, "cudnnSetConvolution2dDescriptor");
    check_dnn(l.SetConvolutionGroupCount(p.c.d, as_int(g.groups)), device, "cudnnSetConvolutionGroupCount");
    const cudnnMathType_t requested = strict_float32 ? CUDNN_FMA_MATH
                                      : ty.data == CUDNN_DATA_HALF || ty.data == CUDNN_DATA_BFLOAT16
                                          ? CUDNN_TENSOR_OP_MATH
                                          : CUDNN_DEFAULT_MATH;
    check_dnn(l.SetConvolutionMathType(p.c.d, requested), device, "cudnnSetConvolutionMathType");
    Choice c;
    if (hook == DTP_HOOK_CONV2D_FORWARD)
      c = choose<cudnnConvolutionFwdAlgoPerf_t>(strict_float32, device, "forward algorithm",
                                                [&](cudnnConvolutionFwdAlgoPerf_t* q, int cap, int* n) {
        return l.GetConvolutionForwardAlgorithm_v7(handle.h, p.x.d, p.w.d, p.c.d, p.y.d, cap, n, q);
      });
    else if (hook == DTP_HOOK_CONV2D_INPUT_GRAD)
      c = choose<cudnnConvolutionBwdDataAlgoPerf_t>(strict_float32, device, "backward-data algorithm",
                                                    [&](cudnnConvolutionBwdDataAlgoPerf_t* q, int cap, int* n) {
        return l.GetConvolutionBackwardDataAlgorithm_v7(handle.h, p.w.d, p.y.d, p.c.d, p.x.d, cap, n, q);
      });
    else
      c = choose<cudnnConvolutionBwdFilterAlgoPerf_t>(strict_float32, device, "backward-filter algorithm",
                                                      [&](cudnnConvolutionBwdFilterAlgoPerf_t* q, int cap, int* n) {
        return l.GetConvolutionBackwardFilterAlgorithm_v7(handle.h, p.x.d, p.y.d, p.c.d, p.w.d, cap, n, q);
      });
    p.algo = c.algo;
    check_dnn(l.SetConvolutionMathType(p.c.d, c.math), device, "cudnnSetConvolutionMathType");
    if (hook == DTP_HOOK_CONV2D_FORWARD)
      check_dnn(l.GetConvolutionForwardWorkspaceSize(handle.h, p.x.d, p.w.d, p.c.d, p.y.d,
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), &p.workspace),
                device, "cudnnGetConvolutionForwardWorkspaceSize");
    else if (hook == DTP_HOOK_CONV2D_INPUT_GRAD)
      check_dnn(l.GetConvolutionBackwardDataWorkspaceSize(handle.h, p.w.d, p.y.d, p.c.d, p.x.d,
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo),
                                                          &p.workspace),
                device, "cudnnGetConvolutionBackwardDataWorkspaceSize");
    else
      check_dnn(l.GetConvolutionBackwardFilterWorkspaceSize(handle.h, p.x.d, p.y.d, p.c.d, p.w.d,
                                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo),
                                                            &p.workspace),
                device, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    plan = fresh.get();
    // Kept only once complete: a failure above leaves no half-made plan behind.
    if (handle.plans->size() < kMaxPlans) handle.plans->emplace(key, std::move(fresh));
  }

  const size_t bytes = plan->workspace;
  Scratch ws(device, bytes ? bytes : 1);
  if (hook == DTP_HOOK_CONV2D_FORWARD) {
    check_dnn(l.ConvolutionForward(handle.h, one, plan->x.d, x.data, plan->w.d, w.data, plan->c.d,
                                   static_cast<cudnnConvolutionFwdAlgo_t>(plan->algo), ws.get(), bytes, zero, plan->y.d,
                                   out.data),
              device, "cudnnConvolutionForward");
    if (a.nt > 3) add_bias(l, handle.h, plan->bias, ty.data, y, *a.t[3], out.data, one, device);
  } else if (hook == DTP_HOOK_CONV2D_INPUT_GRAD) {
    check_dnn(l.ConvolutionBackwardData(handle.h, one, plan->w.d, w.data, plan->y.d, y.data, plan->c.d,
                                        static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algo), ws.get(), bytes, zero,
                                        plan->x.d, out.data),
              device, "cudnnConvolutionBackwardData");
  } else {
    check_dnn(l.ConvolutionBackwardFilter(handle.h, one, plan->x.d, x.data, plan->y.d, y.data, plan->c.d,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan->algo), ws.get(), bytes,
                                          zero, plan->w.d, out.data),
              device, "cudnnConvolutionBackwardFilter");
  }
}

}  // namespace dt::cudap
