#include "cuda/cudnn_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "cuda/dl_bind.h"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

struct Loaded {
  CudnnLibrary lib;
  bool ok = false;
  std::string why;   // when not ok
  std::string what;  // when ok
};

std::string version_string(size_t v) {  // cuDNN 9: major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

Loaded load() {
  Loaded r;
  const char* off = std::getenv("DEVTENSOR_CUDNN");
  if (off && std::strcmp(off, "0") == 0) {
    r.why = "cuDNN is turned off (DEVTENSOR_CUDNN=0)";
    return r;
  }
  const char* env = std::getenv("DEVTENSOR_CUDNN_LIBRARY");
  const std::string file = env && *env ? env : "libcudnn.so.9";
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    r.why = "cuDNN is not installed: " + file + " cannot be loaded (" + (e ? e : "dlopen failed") +
            "); convolutions use im2col and cuBLAS";
    return r;
  }
  CudnnLibrary& l = r.lib;
  std::string missing;
  bind(h, "cudnnGetVersion", &l.GetVersion, &missing);
  bind(h, "cudnnGetErrorString", &l.GetErrorString, &missing);
  bind(h, "cudnnCreate", &l.Create, &missing);
  bind(h, "cudnnSetStream", &l.SetStream, &missing);
  bind(h, "cudnnCreateTensorDescriptor", &l.CreateTensorDescriptor, &missing);
  bind(h, "cudnnSetTensor4dDescriptor", &l.SetTensor4dDescriptor, &missing);
  bind(h, "cudnnDestroyTensorDescriptor", &l.DestroyTensorDescriptor, &missing);
  bind(h, "cudnnCreateFilterDescriptor", &l.CreateFilterDescriptor, &missing);
  bind(h, "cudnnSetFilter4dDescriptor", &l.SetFilter4dDescriptor, &missing);
  bind(h, "cudnnDestroyFilterDescriptor", &l.DestroyFilterDescriptor, &missing);
  bind(h, "cudnnCreateConvolutionDescriptor", &l.CreateConvolutionDescriptor, &missing);
  bind(h, "cudnnSetConvolution2dDescriptor", &l.SetConvolution2dDescriptor, &missing);
  bind(h, "cudnnSetConvolutionGroupCount", &l.SetConvolutionGroupCount, &missing);
  bind(h, "cudnnSetConvolutionMathType", &l.SetConvolutionMathType, &missing);
  bind(h, "cudnnDestroyConvolutionDescriptor", &l.DestroyConvolutionDescriptor, &missing);
  bind(h, "cudnnGetConvolutionForwardAlgorithm_v7", &l.GetConvolutionForwardAlgorithm_v7, &missing);
  bind(h, "cudnnGetConvolutionForwardWorkspaceSize", &l.GetConvolutionForwardWorkspaceSize, &missing);
  bind(h, "cudnnConvolutionForward", &l.ConvolutionForward, &missing);
  bind(h, "cudnnAddTensor", &l.AddTensor, &missing);
  bind(h, "cudnnGetConvolutionBackwardDataAlgorithm_v7", &l.GetConvolutionBackwardDataAlgorithm_v7, &missing);
  bind(h, "cudnnGetConvolutionBackwardDataWorkspaceSize", &l.GetConvolutionBackwardDataWorkspaceSize, &missing);
  bind(h, "cudnnConvolutionBackwardData", &l.ConvolutionBackwardData, &missing);
  bind(h, "cudnnGetConvolutionBackwardFilterAlgorithm_v7", &l.GetConvolutionBackwardFilterAlgorithm_v7, &missing);
  bind(h, "cudnnGetConvolutionBackwardFilterWorkspaceSize", &l.GetConvolutionBackwardFilterWorkspaceSize, &missing);
  bind(h, "cudnnConvolutionBackwardFilter", &l.ConvolutionBackwardFilter, &missing);
  // The graph API (libcudnn_graph, re-exported by libcudnn.so.9): optional, as a whole.
  std::string graph_missing;
  bind(h, "cudnnBackendCreateDescriptor", &l.BackendCreateDescriptor, &graph_missing);
  bind(h, "cudnnBackendDestroyDescriptor", &l.BackendDestroyDescriptor, &graph_missing);
  bind(h, "cudnnBackendSetAttribute", &l.BackendSetAttribute, &graph_missing);
  bind(h, "cudnnBackendGetAttribute", &l.BackendGetAttribute, &graph_missing);
  bind(h, "cudnnBackendFinalize", &l.BackendFinalize, &graph_missing);
  bind(h, "cudnnBackendExecute", &l.BackendExecute, &graph_missing);
  l.graph_api = graph_missing.empty();
  std::string optional;
  bind(h, "cudnnGetLastErrorString", &l.GetLastErrorString, &optional);
  if (!l.GetVersion) {
    r.why = file + " is not a usable cuDNN library (no cudnnGetVersion)";
    return r;  // the handle stays open: dlclose of a half-bound library gains nothing
  }
  l.version = l.GetVersion();
  if (l.version / 10000 != CUDNN_MAJOR) {
    r.why = "cuDNN " + version_string(l.version) + " (" + file + ") is not the major version " +
            std::to_string(CUDNN_MAJOR) + " devtensor was built for";
    return r;
  }
  if (!missing.empty()) {
    r.why = "cuDNN " + version_string(l.version) + " (" + file + ") lacks " + missing;
    return r;
  }
  r.ok = true;
  r.what = "cuDNN " + version_string(l.version) + " (" + file + ")";
  return r;
}

}  // namespace

void check_dnn(const CudnnLibrary& l, cudnnStatus_t s, int device, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  std::string text = std::string("cuDNN ") + what + " on cuda:" + std::to_string(device) + ": " + l.GetErrorString(s);
  if (l.GetLastErrorString) {
    char detail[512] = {0};
    l.GetLastErrorString(detail, sizeof detail);
    if (detail[0]) text += std::string(" (") + detail + ")";
  }
  if (s / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000) raise(DT_ERR_NOT_SUPPORTED, text);
  if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED || s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    raise(DT_ERR_OUT_OF_MEMORY, text);
  raise(DT_ERR_BACKEND, text);
}

const CudnnLibrary* cudnn_library(std::string* why) {
  static const Loaded loaded = load();  // never unloaded
  if (why) *why = loaded.ok ? loaded.what : loaded.why;
  return loaded.ok ? &loaded.lib : nullptr;
}

}  // namespace dt::cudap
