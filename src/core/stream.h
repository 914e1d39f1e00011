// Streams and events (the public dt_stream_* and dt_event_*): queues of work on one
// device, and markers in them that other queues and the host can wait for.
//
// A backend with streams (Backend::has_streams: the CUDA plugin) gives every stream its
// own hardware queue; the device's default stream is the one devtensor always used. A
// backend without them (the CPU, where every op has finished when its call returns) has
// one in-order queue per device: all its streams are that queue, already ordered, and an
// event completes when it is recorded (after Backend::synchronize), timed by the host
// clock. Either way the same calls work, so code written for a GPU runs unchanged on the
// CPU.
//
// Each thread has a current stream per device (set_thread_stream; initially the
// default): ops, copies and allocations for a tensor on that device are queued on it. It
// never chooses the device: that still comes from the tensors.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>

#include "core/device.h"
#include "core/refcounted.h"

namespace dt {

class Backend;
class Event;
struct Capture;

class Stream : public RefCounted {
 public:
  // A new stream on d (checked): a hardware queue of its own where the backend has them.
  static Ref<Stream> create(Device d);
  // The default stream of d (checked): one object per device for the process.
  static Ref<Stream> default_for(Device d);
  static void destroy(Stream* s);

  Device device() const { return device_; }
  bool is_default() const { return default_; }
  // The backend's handle, as passed in dtp_op_args.stream; null for the default stream.
  void* native() const { return native_; }

  void synchronize() const;  // waits for the work queued on it
  bool query() const;        // whether that work has finished (never blocks on a GPU)
  void wait(const Event& e) const;      // later work on this stream waits for e
  void wait(const Stream& other) const; // later work on this stream waits for other's work so far

  // The graph capture under way on this stream (core/graph.h), or null.
  Capture* capture() const { return capture_.load(std::memory_order_acquire); }

 private:
  friend void begin_capture(const Ref<Stream>& s);
  friend Ref<class Graph> end_capture(Stream& s);
  Stream() = default;
  std::atomic<Capture*> capture_{nullptr};  // owned; set and cleared by core/graph.cpp
  Backend* backend_ = nullptr;
  Device device_;
  void* native_ = nullptr;
  bool default_ = false;
};

class Event : public RefCounted {
 public:
  static Ref<Event> create(Device d);
  static void destroy(Event* e);

  Device device() const { return device_; }
  // Marks the end of the work queued on s so far (s on this event's device, else
  // DEVICE_MISMATCH). Recording again moves the mark.
  void record(const Stream& s);
  void synchronize() const;  // waits for the recorded work; returns at once if never recorded
  bool query() const;        // whether the recorded work has finished (true if never recorded)
  // Milliseconds from this event to `end`, both recorded and finished (INVALID_ARGUMENT
  // otherwise, or for events of different devices).
  float elapsed_ms(const Event& end) const;

 private:
  friend class Stream;
  Event() = default;
  Backend* backend_ = nullptr;
  Device device_;
  void* native_ = nullptr;     // the backend's event, when it has streams
  mutable std::mutex mu_;      // recorded_ and host_ms_
  bool recorded_ = false;
  double host_ms_ = 0;         // host clock at recording, for backends without events
};

// The calling thread's current stream for d: null for the default stream. Borrowed:
// valid while the thread does not change it. Costs one thread-local read when the thread
// never set a stream.
Stream* thread_stream(Device d);
inline void* thread_native_stream(Device d) {
  Stream* s = thread_stream(d);
  return s ? s->native() : nullptr;
}
// Makes s the calling thread's current stream for s's device (the default stream: back
// to the default) and returns the one it replaces (null: the default). Throws only
// OUT_OF_MEMORY (bad_alloc), and only when reserve_thread_stream() was not called first.
Ref<Stream> set_thread_stream(const Ref<Stream>& s);
// Makes room for one more device in the thread's list, so that the next
// set_thread_stream cannot fail (an entry point that must not half-succeed calls it first).
void reserve_thread_stream();

// Later work on `waiter` (a backend handle of device d, null: the default stream) waits
// for the work queued so far on `producer`, a handle of the same backend that devtensor
// may not own (a DLPack producer's stream). A no-op for backends without streams.
void order_after_native(Device d, void* waiter, void* producer);

}  // namespace dt
