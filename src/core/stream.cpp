#include "core/stream.h"

#include <chrono>
#include <map>
#include <new>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/error.h"
#include "core/fault_injection.h"
#include "core/graph.h"

namespace dt {
namespace {

double host_now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// p, a fresh allocation (or null when it failed or a fault is injected); throws OUT_OF_MEMORY.
template <typename T>
T* allocated(T* p, const char* what) {
  if (p && fault::allocation_fails()) {
    delete p;
    p = nullptr;
  }
  if (!p) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory allocating a ", what));
  return p;
}

// The calling thread's current streams, one per device it set one for (a handful at most).
struct ThreadStreams {
  std::vector<std::pair<Device, Ref<Stream>>> set;
};
thread_local ThreadStreams t_streams;
thread_local bool t_any_set = false;  // fast path: most threads never set a stream

}  // namespace

// ---------------------------------------------------------------- Stream

Ref<Stream> Stream::create(Device d) {
  check_device(d);
  Backend& b = backend_for(d);
  Stream* s = allocated(new (std::nothrow) Stream(), "stream");
  s->backend_ = &b;
  s->device_ = d;
  if (b.has_streams()) {
    try {
      s->native_ = b.stream_create(d.index);
    } catch (...) {
      delete s;
      throw;
    }
  }
  return Ref<Stream>::adopt(s);
}

Ref<Stream> Stream::default_for(Device d) {
  check_device(d);
  // One object per device, made on first use and kept for the process (never destroyed:
  // tensors and threads may refer to it until exit).
  static std::mutex mu;
  static auto* defaults = new std::map<std::pair<int32_t, int32_t>, Stream*>();
  std::lock_guard<std::mutex> lock(mu);
  Stream*& slot = (*defaults)[{d.type, d.index}];
  if (!slot) {
    Stream* s = allocated(new (std::nothrow) Stream(), "stream");
    s->backend_ = &backend_for(d);
    s->device_ = d;
    s->default_ = true;
    s->ref();  // the map's reference, never dropped
    slot = s;
  }
  slot->ref();
  return Ref<Stream>::adopt(slot);
}

void Stream::destroy(Stream* s) {
  delete s->capture_.load();  // a capture its thread never ended (the thread exited)
  if (s->native_) s->backend_->stream_destroy(s->device_.index, s->native_);
  delete s;
}

void Stream::synchronize() const {
  if (backend_->has_streams()) backend_->stream_synchronize(device_.index, native_);
  else backend_->synchronize(device_);
}

bool Stream::query() const {
  if (backend_->has_streams()) return backend_->stream_query(device_.index, native_);
  backend_->synchronize(device_);  // one queue: finished once synchronised
  return true;
}

void Stream::wait(const Event& e) const {
  if (backend_ == e.backend_ && backend_->has_streams()) {
    // A device may wait on an event of another device of the same backend.
    return backend_->event_wait(device_.index, native_, e.native_);
  }
  // Another backend's event (or no streams at all): the host waits, then queues more.
  e.synchronize();
}

void Stream::wait(const Stream& other) const {
  if (&other == this || (other.device_ == device_ && !backend_->has_streams())) return;  // one queue: ordered
  Ref<Event> marker = Event::create(other.device_);
  marker->record(other);
  wait(*marker);
}

// ---------------------------------------------------------------- Event

Ref<Event> Event::create(Device d) {
  check_device(d);
  Backend& b = backend_for(d);
  Event* e = allocated(new (std::nothrow) Event(), "event");
  e->backend_ = &b;
  e->device_ = d;
  if (b.has_streams()) {
    try {
      e->native_ = b.event_create(d.index);
    } catch (...) {
      delete e;
      throw;
    }
  }
  return Ref<Event>::adopt(e);
}

void Event::destroy(Event* e) {
  if (e->native_) e->backend_->event_destroy(e->device_.index, e->native_);
  delete e;
}

void Event::record(const Stream& s) {
  if (s.device() != device_)
    fail(DT_ERR_DEVICE_MISMATCH, cat("dt_event_record: the event is on ", device_str(device_), " but the stream on ",
                                     device_str(s.device()), " (record an event of the stream's device)"));
  if (backend_->has_streams()) {
    backend_->event_record(device_.index, native_, s.native());
  } else {
    backend_->synchronize(device_);  // one queue: everything before has finished now
  }
  const double now = host_now_ms();
  std::lock_guard<std::mutex> lock(mu_);
  recorded_ = true;
  host_ms_ = now;
}

void Event::synchronize() const {
  if (native_) backend_->event_synchronize(device_.index, native_);
}

bool Event::query() const {
  return native_ ? backend_->event_query(device_.index, native_) : true;
}

float Event::elapsed_ms(const Event& end) const {
  if (end.device_ != device_)
    fail(DT_ERR_INVALID_ARGUMENT, cat("dt_event_elapsed_ms: the events are on different devices (", device_str(device_),
                                      " and ", device_str(end.device_), ")"));
  bool start_recorded, end_recorded;
  double start_ms, end_ms;
  {
    std::lock_guard<std::mutex> lock(mu_);
    start_recorded = recorded_;
    start_ms = host_ms_;
  }
  {
    std::lock_guard<std::mutex> lock(end.mu_);
    end_recorded = end.recorded_;
    end_ms = end.host_ms_;
  }
  if (!start_recorded || !end_recorded)
    fail(DT_ERR_INVALID_ARGUMENT,
         cat("dt_event_elapsed_ms: the ", start_recorded ? "end" : "start", " event was never recorded"));
  if (native_) return backend_->event_elapsed_ms(device_.index, native_, end.native_);
  return static_cast<float>(end_ms - start_ms);
}

// ---------------------------------------------------------------- the thread's streams

Stream* thread_stream(Device d) {
  if (!t_any_set) return nullptr;
  for (auto& [device, stream] : t_streams.set)
    if (device == d) return stream.get();
  return nullptr;
}

void reserve_thread_stream() { t_streams.set.reserve(t_streams.set.size() + 1); }

Ref<Stream> set_thread_stream(const Ref<Stream>& s) {
  const Device d = s->device();
  auto& set = t_streams.set;
  for (size_t i = 0; i < set.size(); ++i) {
    if (set[i].first != d) continue;
    Ref<Stream> previous = std::move(set[i].second);
    if (s->is_default()) set.erase(set.begin() + static_cast<std::ptrdiff_t>(i));
    else set[i].second = s;
    t_any_set = !set.empty();
    return previous;
  }
  if (!s->is_default()) {
    set.emplace_back(d, s);
    t_any_set = true;
  }
  return Ref<Stream>();
}

void order_after_native(Device d, void* waiter, void* producer) {
  Backend& b = backend_for(d);
  if (!b.has_streams()) return;
  void* marker = b.event_create(d.index);
  try {
    b.event_record(d.index, marker, producer);
    b.event_wait(d.index, waiter, marker);
  } catch (...) {
    b.event_destroy(d.index, marker);
    throw;
  }
  b.event_destroy(d.index, marker);  // the wait already queued stays valid (as cudaEventDestroy)
}

}  // namespace dt
