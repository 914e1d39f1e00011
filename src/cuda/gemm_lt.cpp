// cuBLASLt's bias epilogue (gemm_lt.h). A plan (the operation descriptor, the three
// matrix layouts and the algorithm cuBLASLt's heuristic ranks first) is made once per
// device, shape, layout, dtype and operand alignment and kept, so a call is one attribute
// set (the bias pointer) and one cublasLtMatmul: the heuristic's query costs more than
// the small products of an MLP themselves.
//
// The workspace (1 MiB, what cuBLASLt's split-K algorithms for these sizes want) is
// allocated per call from the stream-ordered pool, where blocks of this size come from
// the small-block free list: so two streams never share one, and a graph capture records
// its allocation like any other.
#include "cuda/gemm_lt.h"

#include <cublasLt.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "core/error.h"
#include "cuda/memory.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

constexpr size_t kWorkspaceBytes = size_t(1) << 20;


// The largest power of two (up to 256) that divides the address: the alignment the
// heuristic must assume (its default, 16 bytes for every operand, would pick kernels a
// view at an odd offset cannot use).
uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool usable = false;  // false: cuBLASLt has no algorithm for this problem
  ~Plan() {
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int, uint32_t, uint32_t,
                       uint32_t>;

struct PerDevice {
  std::mutex mu;  // the handle, the plans and each plan's bias attribute are used under it
  cublasLtHandle_t handle = nullptr;
  std::map<Key, std::unique_ptr<Plan>> plans;
};
PerDevice g_lt[kMaxDevices];

std::unique_ptr<Plan> make_plan(int device, cublasLtHandle_t handle, const LtGemm& g) {
  auto plan = std::make_unique<Plan>();
  const cudaDataType_t scale = g.type == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F;
  check_blas(cublasLtMatmulDescCreate(&plan->op, g.compute, scale), device, "addmm (cublasLtMatmulDescCreate)");
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n) {
    check_blas(cublasLtMatmulDescSetAttribute(plan->op, attr, v, n), device, "addmm (cublasLtMatmulDescSetAttribute)");
  };
  set(CUBLASLT_MATMUL_DESC_TRANSA, &g.op_a, sizeof g.op_a);
  set(CUBLASLT_MATMUL_DESC_TRANSB, &g.op_b, sizeof g.op_b);
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias);  // the heuristic sees a real one
  const bool ta = g.op_a != CUBLAS_OP_N, tb = g.op_b != CUBLAS_OP_N;
  check_blas(cublasLtMatrixLayoutCreate(&plan->la, g.type, ta ? g.k : g.m, ta ? g.m : g.k, g.lda), device,
           "addmm (cublasLtMatrixLayoutCreate)");
  check_blas(cublasLtMatrixLayoutCreate(&plan->lb, g.type, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb), device,
           "addmm (cublasLtMatrixLayoutCreate)");
  check_blas(cublasLtMatrixLayoutCreate(&plan->ld, g.type, g.m, g.n, g.ldd), device,
             "addmm (cublasLtMatrixLayoutCreate)");

  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), device, "addmm (cublasLtMatmulPreferenceCreate)");
  std::unique_ptr<std::remove_pointer_t<cublasLtMatmulPreference_t>, decltype(&cublasLtMatmulPreferenceDestroy)> owned(
      pref, &cublasLtMatmulPreferenceDestroy);
  auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attr, const void* v, size_t n) {
    check_blas(cublasLtMatmulPreferenceSetAttribute(pref, attr, v, n), device,
               "addmm (cublasLtMatmulPreferenceSetAttribute)");
  };
  const uint64_t workspace = kWorkspaceBytes;
  prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
  const uint32_t align_a = alignment_of(g.a), align_b = alignment_of(g.b), align_d = alignment_of(g.d);
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof align_a);
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof align_b);
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d, sizeof align_d);
  prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d, sizeof align_d);

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, plan->op, plan->la, plan->lb, plan->ld, plan->ld,
                                                          pref, 1, &result, &found);
  // No algorithm: the plan stays unusable.
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && found == 0)) return plan;
  check_blas(s, device, "addmm (cublasLtMatmulAlgoGetHeuristic)");
  plan->algo = result.algo;
  plan->usable = true;
  return plan;
}

}  // namespace

bool gemm_bias_lt(int device, const LtGemm& g) {
  // The heuristic takes no alignment for the bias vector: one that is not 16-byte aligned
  // (a view into other memory; a module's own bias always is) takes the other path.
  if (alignment_of(g.bias) < 16) return false;
  PerDevice& lt = g_lt[device];
  std::lock_guard<std::mutex> lock(lt.mu);
  if (!lt.handle) check_blas(cublasLtCreate(&lt.handle), device, "addmm (cublasLtCreate)");
  const Key key{static_cast<int>(g.op_a), static_cast<int>(g.op_b), g.m, g.n, g.k, g.lda, g.ldb, g.ldd,
                static_cast<int>(g.type), static_cast<int>(g.compute), alignment_of(g.a), alignment_of(g.b),
                alignment_of(g.d)};
  auto it = lt.plans.find(key);
  if (it == lt.plans.end()) it = lt.plans.emplace(key, make_plan(device, lt.handle, g)).first;
  Plan& plan = *it->second;
  if (!plan.usable) return false;
  check_blas(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias), device,
           "addmm (cublasLtMatmulDescSetAttribute)");
  Scratch workspace(device, kWorkspaceBytes);
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool wide = g.type == CUDA_R_64F;
  const cublasStatus_t s =
      cublasLtMatmul(lt.handle, plan.op, wide ? static_cast<const void*>(&one_d) : &one_f, g.a, plan.la, g.b, plan.lb,
                     wide ? static_cast<const void*>(&zero_d) : &zero_f, g.d, plan.ld, g.d, plan.ld, &plan.algo,
                     workspace.get(), kWorkspaceBytes, stream(device));
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) {  // refused at run time after all: remember, take the other path
    plan.usable = false;
    return false;
  }
  check_blas(s, device, "addmm (cublasLtMatmul)");
  return true;
}

}  // namespace dt::cudap
