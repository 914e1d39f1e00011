// Native graphs (CUDA graphs) for dt_graph replays: stream capture of a graph's recorded
// steps on a stream of the core's, instantiated once and launched per replay
// (core/plugin_abi.h: graph_begin, graph_end, graph_launch, graph_destroy).
#pragma once

namespace dt::cudap {

void graph_begin(int device, void* stream);
// The executable graph; throws DT_ERR_NOT_SUPPORTED when the capture failed (some step
// made a call that cannot be captured), leaving the stream usable.
void* graph_end(int device, void* stream);
void graph_launch(int device, void* exec, void* stream);
void graph_destroy(int device, void* exec) noexcept;

}  // namespace dt::cudap
