#include "cuda/graphs.h"

#include <cuda_runtime.h>

#include <string>

#include "cuda/runtime.h"

namespace dt::cudap {

void graph_begin(int device, void* stream) {
  // Thread-local mode: other threads' work (allocations, queries) goes on meanwhile; a
  // call of this thread that cannot be captured fails the capture, not the process.
  check(cudaStreamBeginCapture(static_cast<cudaStream_t>(stream), cudaStreamCaptureModeThreadLocal), device,
        "cudaStreamBeginCapture");
}

void* graph_end(int device, void* stream) {
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(static_cast<cudaStream_t>(stream), &graph);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    if (graph) (void)cudaGraphDestroy(graph);
    raise(DT_ERR_NOT_SUPPORTED, std::string("the work could not be captured as a CUDA graph (") +
                                    cudaGetErrorString(e) + "); replaying it step by step");
  }
  cudaGraphExec_t exec = nullptr;
  e = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    raise(DT_ERR_NOT_SUPPORTED, std::string("cudaGraphInstantiate failed (") + cudaGetErrorString(e) +
                                    "); replaying the work step by step");
  }
  return exec;
}

void graph_launch(int device, void* exec, void* s) {
  cudaStream_t st = s ? static_cast<cudaStream_t>(s) : default_stream(device);
  check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec), st), device, "cudaGraphLaunch");
}

void graph_destroy(int device, void* exec) noexcept {
  int previous = -1;
  if (cudaGetDevice(&previous) != cudaSuccess) previous = -1;
  if (previous != device) (void)cudaSetDevice(device);
  (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec));
  if (previous >= 0 && previous != device) (void)cudaSetDevice(previous);
}

}  // namespace dt::cudap
