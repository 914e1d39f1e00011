// Graph entry points (core/graph.h): capture on a stream, replay, handles.
#include "api/objects.h"
#include "api/shim.h"
#include "core/graph.h"
#include "core/stream.h"

using namespace dt;
using namespace dt::api;

namespace {

Stream* stream_arg(const dt_stream* s, const char* fn) {
  return object_arg<Stream, HandleKind::Stream>(s, fn, "s");
}
Graph* graph_arg(const dt_graph* g, const char* fn) { return object_arg<Graph, HandleKind::Graph>(g, fn, "g"); }

}  // namespace

extern "C" {

DT_API dt_status dt_graph_capture_begin(dt_stream* s) {
  return guard([&] {
    Stream* x = stream_arg(s, "dt_graph_capture_begin");
    // The capture holds a reference to the handle, so that s stays a valid handle for
    // dt_graph_capture_end even if the caller releases its own meanwhile.
    handle_retain(s, HandleKind::Stream);
    try {
      x->ref();
      begin_capture(Ref<Stream>::adopt(x));
    } catch (...) {
      handle_release(s, HandleKind::Stream);
      throw;
    }
  });
}

DT_API dt_status dt_graph_capture_end(dt_stream* s, dt_graph** out) {
  return guard([&] {
    require(out, "dt_graph_capture_end", "out");
    Stream* x = stream_arg(s, "dt_graph_capture_end");
    // The handle first (it can fail; the capture then goes on), then the end.
    Graph& g = capture_graph(*x);
    g.ref();
    void* handle = new_object_handle<Graph, HandleKind::Graph>(&g);
    try {
      end_capture(*x);
    } catch (...) {
      handle_release(handle, HandleKind::Graph);
      throw;
    }
    handle_release(s, HandleKind::Stream);  // the capture's reference (dt_graph_capture_begin)
    *out = static_cast<dt_graph*>(handle);
  });
}

DT_API dt_status dt_stream_is_capturing(const dt_stream* s, int32_t* out) {
  return guard([&] {
    require(out, "dt_stream_is_capturing", "out");
    *out = stream_arg(s, "dt_stream_is_capturing")->capture() ? 1 : 0;
  });
}

DT_API dt_status dt_graph_replay(dt_graph* g) {
  return guard([&] { graph_arg(g, "dt_graph_replay")->replay(); });
}

DT_API dt_status dt_graph_num_steps(const dt_graph* g, size_t* out) {
  return guard([&] {
    require(out, "dt_graph_num_steps", "out");
    *out = graph_arg(g, "dt_graph_num_steps")->steps();
  });
}

DT_API dt_status dt_graph_device(const dt_graph* g, dt_device* out) {
  return guard([&] {
    require(out, "dt_graph_device", "out");
    *out = graph_arg(g, "dt_graph_device")->device().to_c();
  });
}

DT_API dt_status dt_graph_retain(dt_graph* g) {
  return guard([&] {
    require(g, "dt_graph_retain", "g");
    handle_retain(g, HandleKind::Graph);
  });
}

DT_API dt_status dt_graph_release(dt_graph* g) {
  return guard([&] {
    if (g) handle_release(g, HandleKind::Graph);
  });
}

}  // extern "C"
