#include "core/graph.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "core/backend.h"
#include "core/error.h"
#include "core/move_lock.h"

namespace dt {
namespace {
std::mutex g_capture_mu;  // begin and end of captures (rare; never on an op's path)
}  // namespace

Tensor Graph::keep(const Tensor& t) {
  return t.defined() ? t.view_as(t.shape(), t.strides(), t.offset()) : t;
}

void Graph::note_movable(TensorImpl* t) {
  for (const auto& m : movable_)
    if (m.first.get() == t) return;
  t->ref();
  movable_.emplace_back(Ref<TensorImpl>::adopt(t), t->storage.get());
}

void Graph::replay() {
  // A replay runs its steps at once: inside a capture they would not be recorded.
  if (capturing(device_))
    fail(DT_ERR_NOT_SUPPORTED, cat("dt_graph_replay: cannot be captured into a graph (graphs do not nest); the capture on ",
                                   device_str(device_), " goes on without it"));
  std::lock_guard<std::mutex> lock(replay_mu_);
  for (const auto& [impl, storage] : movable_) {
    MovePin pin{Tensor(impl)};
    if (impl->storage.get() != storage)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat("dt_graph_replay: a parameter or buffer the graph uses was moved (dt_module_to) after capture, "
               "to ", device_str(impl->storage->device()), "; the graph still holds the memory it was captured with: "
               "capture it again"));
  }
  // On the calling thread's current stream (the steps ask for it as they run), as
  // torch.cuda.CUDAGraph.replay does: ordered after the thread's earlier work. Where the
  // backend has native graphs, the steps are recorded as one at the first replay and each
  // replay is then a single launch (the same kernels on the same memory).
  Backend& b = backend_for(device_);
  if (!native_tried_) {
    native_tried_ = true;
    native_ = record_native(b);
  }
  if (native_) return b.graph_launch(device_.index, native_, thread_native_stream(device_));
  for (const auto& step : steps_) step();
}

void* Graph::record_native(Backend& b) {
  const char* off = std::getenv("DEVTENSOR_NATIVE_GRAPHS");
  if (steps_.empty() || !b.native_graphs() || (off && std::strcmp(off, "0") == 0)) return nullptr;
  // The steps queue on the thread's current stream: make it a stream of the graph's own
  // for the recording, so that no other work joins it, then give the thread its own back
  // however the recording ends (an Error, or anything else a step throws).
  Ref<Stream> recording = Stream::create(device_);
  reserve_thread_stream();
  Ref<Stream> before = thread_stream(device_) ? Ref<Stream>() : Stream::default_for(device_);
  struct GiveBack {
    Ref<Stream> previous;
    ~GiveBack() {
      try {
        reserve_thread_stream();  // room even if a step dropped the recording's entry
        set_thread_stream(previous);
      } catch (...) {  // out of memory for one entry: the thread keeps the recording stream
      }
    }
  } give_back{set_thread_stream(recording)};
  if (!give_back.previous) give_back.previous = std::move(before);
  try {
    b.graph_begin(device_.index, recording->native());
  } catch (const Error&) {
    return nullptr;  // replay step by step, as without native graphs
  }
  try {
    for (const auto& step : steps_) step();
  } catch (...) {
    // End the recording; whatever the backend made of the unfinished work is discarded.
    try {
      if (void* partial = b.graph_end(device_.index, recording->native())) b.graph_destroy(device_.index, partial);
    } catch (const Error&) {
    }
    try {
      throw;
    } catch (const Error&) {
      return nullptr;  // a step the backend cannot record: replay step by step
    }
  }
  try {
    return b.graph_end(device_.index, recording->native());
  } catch (const Error&) {
    return nullptr;
  }
}

void Graph::destroy(Graph* g) noexcept {
  // On a GPU, replays may still be running on any stream (each runs on its caller's):
  // let the device finish before the memory only the graph holds goes back to the allocator.
  try {
    Backend& b = backend_for(g->device_);
    if (b.has_streams()) b.synchronize(g->device_);
    if (g->native_) b.graph_destroy(g->device_.index, g->native_);
  } catch (...) {
  }
  delete g;
}

void begin_capture(const Ref<Stream>& s) {
  if (s->is_default())
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("dt_graph_capture_begin: ", device_str(s->device()),
             "'s default stream cannot capture (as in CUDA); capture on a stream of its own (dt_stream_create)"));
  auto* c = new (std::nothrow) Capture();
  if (!c) fail(DT_ERR_OUT_OF_MEMORY, "dt_graph_capture_begin: out of memory");
  std::unique_ptr<Capture> owned(c);
  Graph* g = new (std::nothrow) Graph();
  if (!g) fail(DT_ERR_OUT_OF_MEMORY, "dt_graph_capture_begin: out of memory");
  c->graph = Ref<Graph>::adopt(g);
  g->device_ = s->device();
  c->owner = std::this_thread::get_id();
  reserve_thread_stream();
  std::lock_guard<std::mutex> lock(g_capture_mu);
  if (s->capture_.load())
    fail(DT_ERR_INVALID_ARGUMENT, cat("dt_graph_capture_begin: the stream on ", device_str(s->device()),
                                      " is already capturing; end that capture first (dt_graph_capture_end)"));
  if (capturing(s->device()))
    fail(DT_ERR_INVALID_ARGUMENT, cat("dt_graph_capture_begin: this thread is already capturing on ",
                                      device_str(s->device()), "; end that capture first (dt_graph_capture_end)"));
  Ref<Stream> before = thread_stream(s->device()) ? Ref<Stream>() : Stream::default_for(s->device());
  // Nothing below can fail: reserve_thread_stream made room for the switch.
  c->previous = set_thread_stream(s);
  if (!c->previous) c->previous = std::move(before);
  s->capture_.store(owned.release(), std::memory_order_release);
}

namespace {
Capture& checked_capture(Stream& s) {
  Capture* c = s.capture();
  if (!c)
    fail(DT_ERR_INVALID_ARGUMENT, cat("dt_graph_capture_end: the stream on ", device_str(s.device()),
                                      " is not capturing (dt_graph_capture_begin starts a capture)"));
  if (c->owner != std::this_thread::get_id())
    fail(DT_ERR_INVALID_ARGUMENT,
         "dt_graph_capture_end: the capture was begun on another thread; end it on the thread that began it");
  return *c;
}
}  // namespace

Graph& capture_graph(Stream& s) {
  std::lock_guard<std::mutex> lock(g_capture_mu);
  return *checked_capture(s).graph;
}

Ref<Graph> end_capture(Stream& s) {
  std::lock_guard<std::mutex> lock(g_capture_mu);
  Capture* c = &checked_capture(s);
  reserve_thread_stream();
  // Nothing below can fail.
  s.capture_.store(nullptr, std::memory_order_release);
  std::unique_ptr<Capture> owned(c);
  Ref<Graph> g = std::move(c->graph);
  // Back to the stream the thread had before, if it still has the captured one.
  if (thread_stream(s.device()) == &s) set_thread_stream(c->previous);
  return g;
}

Capture* capturing(Device d) {
  Stream* s = thread_stream(d);
  return s ? s->capture() : nullptr;
}

void refuse_while_capturing(Device d, const char* what, const char* why) {
  if (capturing(d))
    fail(DT_ERR_NOT_SUPPORTED, cat(what, ": cannot be captured into a graph (", why, "); the capture on ",
                                   device_str(d), " goes on without it"));
}

void refuse_on_capturing_stream(const Stream& s, const char* what, const char* why) {
  if (s.capture())
    fail(DT_ERR_NOT_SUPPORTED, cat(what, ": cannot be used on a capturing stream (", why, "); the capture on ",
                                   device_str(s.device()), " goes on"));
}

}  // namespace dt
