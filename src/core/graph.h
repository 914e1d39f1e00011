// Graphs (the public dt_graph_*): CUDA graphs' model, for every backend. While a stream
// captures, the work queued on it (ops, copies) is recorded into a graph instead of
// running; replaying the graph runs that work again, in the same order, on the same
// memory, with none of the front end's checks, autograd bookkeeping or allocation.
//
// Every tensor recorded work touches is kept by the graph (a snapshot of its storage
// and geometry), so its memory stays valid for replays: inputs are static (copy new
// values into them before a replay) and so are outputs (read them after). A capture
// records, it does not compute: a call that needs the values during capture (a read on
// the host, a synchronisation, random numbers that replay would repeat, a collective)
// is refused with NOT_SUPPORTED before it does anything, and the capture goes on.
//
// Capture is per stream: a thread's work is recorded when its current stream for the
// tensor's device is capturing; work on other devices or streams runs as usual.
#pragma once
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/refcounted.h"
#include "core/stream.h"
#include "core/tensor.h"

namespace dt {

class Backend;

class Graph : public RefCounted {
 public:
  static void destroy(Graph* g) noexcept;

  Device device() const { return device_; }
  size_t steps() const { return steps_.size(); }

  // Runs the recorded work again, queued on the calling thread's current stream (finished
  // on return for a backend without streams). INVALID_ARGUMENT when a module the work uses was
  // moved since capture. One replay at a time per graph; others wait.
  void replay();

  // A snapshot of t for recorded work: same storage, geometry and dtype, unaffected by a
  // later in-place move of a module's parameter (which replay then reports).
  Tensor keep(const Tensor& t);
  // A parameter or buffer (pinned by the entry point that reads it) that captured work
  // may use: replay checks that no module move replaced its storage. Capture's lock held.
  void note_movable(TensorImpl* t);
  // Appends a step. Called with the capture's lock held (record_step).
  void append(std::function<void()> step) { steps_.push_back(std::move(step)); }

 private:
  friend Ref<Graph> end_capture(Stream& s);
  friend void begin_capture(const Ref<Stream>& s);
  Graph() = default;
  ~Graph() = default;

  // The steps recorded once more as the backend's native graph (Backend::graph_begin),
  // without running them; null when the backend has none or the work could not be recorded.
  void* record_native(Backend& b);

  Device device_;
  std::vector<std::function<void()>> steps_;
  // The native graph, made at the first replay (replay_mu_ held): one launch per replay.
  void* native_ = nullptr;
  bool native_tried_ = false;
  // Parameters and buffers (movable tensors) the work touches, with the storage they had
  // at capture: replay refuses when a module move replaced it.
  std::vector<std::pair<Ref<TensorImpl>, Storage*>> movable_;
  std::mutex replay_mu_;
};

// The capture on a stream (Stream::capture): its graph, the thread that began it, and
// the thread's stream before (restored at the end).
struct Capture {
  Ref<Graph> graph;
  std::thread::id owner;
  Ref<Stream> previous;  // the thread's stream before (a default stream included)
  std::mutex mu;         // appends from several threads sharing the stream
};

// Starts capturing on s (not a default stream, not already capturing) and makes s the
// calling thread's current stream for its device. INVALID_ARGUMENT otherwise.
void begin_capture(const Ref<Stream>& s);
// The graph s is capturing into, when this thread may end the capture; INVALID_ARGUMENT
// when s is not capturing or another thread began it.
Graph& capture_graph(Stream& s);
// Ends s's capture (checked as capture_graph), restores the thread's previous stream and
// returns the graph. Throws only what capture_graph does, or OUT_OF_MEMORY before any change.
Ref<Graph> end_capture(Stream& s);

// The capture the calling thread's work on d is recorded into, or null (one
// thread-local read when the thread never set a stream).
Capture* capturing(Device d);

// Throws NOT_SUPPORTED when work on d is being captured: `what` (the call) cannot be
// recorded, `why` says what it needs. Nothing is recorded and the capture goes on.
void refuse_while_capturing(Device d, const char* what, const char* why);

// The same for calls naming a stream: refused when s is capturing.
void refuse_on_capturing_stream(const Stream& s, const char* what, const char* why);

// Records a step into c: `make` receives the graph (for keep()) and returns the step.
template <typename Make>
void record_step(Capture& c, Make&& make) {
  std::lock_guard<std::mutex> lock(c.mu);
  c.graph->append(make(*c.graph));
}

}  // namespace dt
