// cuDNN, loaded at run time: the plugin dlopens libcudnn.so.9 (DEVTENSOR_CUDNN_LIBRARY
// names another file) the first time a convolution could use it, as it loads NCCL, so a
// machine without cuDNN still runs every convolution (the core's im2col and matmul).
// DEVTENSOR_CUDNN=0 keeps cuDNN unused. cudnn.h gives the types; no symbol of cuDNN is
// linked. Only the classic convolution API (cudnnConvolution*, deprecated in cuDNN 9 but
// shipped in its libcudnn_cnn sub-library), the same calls PyTorch's cuDNN path makes;
// and, where the library has them, the graph (backend) API's entry points, which
// conv_cudnn_graph.cpp builds kept execution plans with (DEVTENSOR_CUDNN_API=graph).
#pragma once
#include <cudnn.h>

#include <string>

namespace dt::cudap {

struct CudnnLibrary {
  size_t version = 0;  // cudnnGetVersion(): 91900 for 9.19.0
  decltype(&cudnnGetVersion) GetVersion = nullptr;
  decltype(&cudnnGetErrorString) GetErrorString = nullptr;
  decltype(&cudnnCreate) Create = nullptr;
  decltype(&cudnnSetStream) SetStream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) CreateTensorDescriptor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) SetTensor4dDescriptor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) DestroyTensorDescriptor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) CreateFilterDescriptor = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) SetFilter4dDescriptor = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) DestroyFilterDescriptor = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) CreateConvolutionDescriptor = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) SetConvolution2dDescriptor = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) SetConvolutionGroupCount = nullptr;
  decltype(&cudnnSetConvolutionMathType) SetConvolutionMathType = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) DestroyConvolutionDescriptor = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) GetConvolutionForwardAlgorithm_v7 = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) GetConvolutionForwardWorkspaceSize = nullptr;
  decltype(&cudnnConvolutionForward) ConvolutionForward = nullptr;
  decltype(&cudnnAddTensor) AddTensor = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) GetConvolutionBackwardDataAlgorithm_v7 = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) GetConvolutionBackwardDataWorkspaceSize = nullptr;
  decltype(&cudnnConvolutionBackwardData) ConvolutionBackwardData = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) GetConvolutionBackwardFilterAlgorithm_v7 = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) GetConvolutionBackwardFilterWorkspaceSize = nullptr;
  decltype(&cudnnConvolutionBackwardFilter) ConvolutionBackwardFilter = nullptr;
  // The graph API: all bound, or `graph_api` is false (and these are not used).
  bool graph_api = false;
  decltype(&cudnnBackendCreateDescriptor) BackendCreateDescriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) BackendDestroyDescriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) BackendSetAttribute = nullptr;
  decltype(&cudnnBackendGetAttribute) BackendGetAttribute = nullptr;
  decltype(&cudnnBackendFinalize) BackendFinalize = nullptr;
  decltype(&cudnnBackendExecute) BackendExecute = nullptr;
  decltype(&cudnnGetLastErrorString) GetLastErrorString = nullptr;  // optional: null when absent
};

// The library, loaded once; null when it cannot (or may not) be used. *why: a sentence
// saying why not, or what was loaded ("cuDNN 9.19.0 (libcudnn.so.9)").
const CudnnLibrary* cudnn_library(std::string* why);

// Throws (Failure, cuda/runtime.h) unless s is CUDNN_STATUS_SUCCESS: the NOT_SUPPORTED
// statuses are DT_ERR_NOT_SUPPORTED (the pass goes back to the core, nothing written),
// allocation failures DT_ERR_OUT_OF_MEMORY, anything else DT_ERR_BACKEND. The message
// names the call, the device and cuDNN's text (with its last error message, when the
// library keeps one).
void check_dnn(const CudnnLibrary& l, cudnnStatus_t s, int device, const char* what);

}  // namespace dt::cudap
