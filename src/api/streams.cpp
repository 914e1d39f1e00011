// Stream and event entry points (core/stream.h): handles, the thread's current stream,
// record/wait/synchronize/query/elapsed time, and record_stream for the allocator.
#include "api/objects.h"
#include "api/shim.h"
#include "core/backend.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/storage.h"
#include "core/stream.h"

using namespace dt;
using namespace dt::api;

namespace {

// Why stream calls are refused during a capture (core/graph.h).
constexpr const char* kNothingQueued = "a capture records work without running it, so there is nothing to wait for";
constexpr const char* kNoCrossStream = "graphs do not record waits between streams yet";

Stream* stream_arg(const dt_stream* s, const char* fn, const char* param = "s") {
  return object_arg<Stream, HandleKind::Stream>(s, fn, param);
}
Event* event_arg(const dt_event* e, const char* fn, const char* param = "e") {
  return object_arg<Event, HandleKind::Event>(e, fn, param);
}
dt_stream* new_stream_handle(Ref<Stream> s) {
  return static_cast<dt_stream*>(new_object_handle<Stream, HandleKind::Stream>(s.release()));
}

// The device a call names, the process default resolved, checked.
Device device_arg(dt_device device) {
  Device d = resolve_device(device);
  check_device(d);
  return d;
}

}  // namespace

extern "C" {

DT_API dt_status dt_stream_create(dt_device device, dt_stream** out) {
  return guard([&] {
    require(out, "dt_stream_create", "out");
    *out = new_stream_handle(Stream::create(device_arg(device)));
  });
}

DT_API dt_status dt_stream_default(dt_device device, dt_stream** out) {
  return guard([&] {
    require(out, "dt_stream_default", "out");
    *out = new_stream_handle(Stream::default_for(device_arg(device)));
  });
}

DT_API dt_status dt_stream_retain(dt_stream* s) {
  return guard([&] {
    require(s, "dt_stream_retain", "s");
    handle_retain(s, HandleKind::Stream);
  });
}

DT_API dt_status dt_stream_release(dt_stream* s) {
  return guard([&] {
    if (s) handle_release(s, HandleKind::Stream);
  });
}

DT_API dt_status dt_stream_device(const dt_stream* s, dt_device* out) {
  return guard([&] {
    require(out, "dt_stream_device", "out");
    *out = stream_arg(s, "dt_stream_device")->device().to_c();
  });
}

DT_API dt_status dt_stream_is_default(const dt_stream* s, int32_t* out) {
  return guard([&] {
    require(out, "dt_stream_is_default", "out");
    *out = stream_arg(s, "dt_stream_is_default")->is_default() ? 1 : 0;
  });
}

DT_API dt_status dt_stream_synchronize(const dt_stream* s) {
  return guard([&] {
    Stream* x = stream_arg(s, "dt_stream_synchronize");
    refuse_on_capturing_stream(*x, "dt_stream_synchronize", kNothingQueued);
    x->synchronize();
  });
}

DT_API dt_status dt_stream_query(const dt_stream* s, int32_t* done) {
  return guard([&] {
    require(done, "dt_stream_query", "done");
    Stream* x = stream_arg(s, "dt_stream_query");
    refuse_on_capturing_stream(*x, "dt_stream_query", kNothingQueued);
    *done = x->query() ? 1 : 0;
  });
}

DT_API dt_status dt_stream_wait_event(const dt_stream* s, const dt_event* e) {
  return guard([&] {
    Stream* x = stream_arg(s, "dt_stream_wait_event");
    refuse_on_capturing_stream(*x, "dt_stream_wait_event", kNoCrossStream);
    x->wait(*event_arg(e, "dt_stream_wait_event"));
  });
}

DT_API dt_status dt_stream_wait_stream(const dt_stream* s, const dt_stream* other) {
  return guard([&] {
    Stream* x = stream_arg(s, "dt_stream_wait_stream");
    Stream* y = stream_arg(other, "dt_stream_wait_stream", "other");
    refuse_on_capturing_stream(*x, "dt_stream_wait_stream", kNoCrossStream);
    refuse_on_capturing_stream(*y, "dt_stream_wait_stream", kNoCrossStream);
    x->wait(*y);
  });
}

DT_API dt_status dt_stream_native_handle(const dt_stream* s, void** out) {
  return guard([&] {
    require(out, "dt_stream_native_handle", "out");
    Stream* x = stream_arg(s, "dt_stream_native_handle");
    Backend& b = backend_for(x->device());
    void* native = x->native();
    if (!native && b.has_streams()) native = b.stream_default_native(x->device().index);
    *out = native;
  });
}

DT_API dt_status dt_set_thread_stream(const dt_stream* s, dt_stream** previous) {
  return guard([&] {
    Stream* x = stream_arg(s, "dt_set_thread_stream");
    x->ref();
    Ref<Stream> next = Ref<Stream>::adopt(x);
    // Room in the thread's list and the handle for the one replaced come first, so a
    // failure changes nothing and leaves no handle.
    reserve_thread_stream();
    Ref<Stream> before;
    if (Stream* cur = thread_stream(x->device())) {
      cur->ref();
      before = Ref<Stream>::adopt(cur);
    } else {
      before = Stream::default_for(x->device());
    }
    dt_stream* handle = previous ? new_stream_handle(before) : nullptr;
    set_thread_stream(next);
    if (previous) *previous = handle;
  });
}

DT_API dt_status dt_thread_stream(dt_device device, dt_stream** out) {
  return guard([&] {
    require(out, "dt_thread_stream", "out");
    Device d = device_arg(device);
    Ref<Stream> s;
    if (Stream* cur = thread_stream(d)) {
      cur->ref();
      s = Ref<Stream>::adopt(cur);
    } else {
      s = Stream::default_for(d);
    }
    *out = new_stream_handle(std::move(s));
  });
}

DT_API dt_status dt_event_create(dt_device device, dt_event** out) {
  return guard([&] {
    require(out, "dt_event_create", "out");
    Ref<Event> e = Event::create(device_arg(device));
    *out = static_cast<dt_event*>(new_object_handle<Event, HandleKind::Event>(e.release()));
  });
}

DT_API dt_status dt_event_retain(dt_event* e) {
  return guard([&] {
    require(e, "dt_event_retain", "e");
    handle_retain(e, HandleKind::Event);
  });
}

DT_API dt_status dt_event_release(dt_event* e) {
  return guard([&] {
    if (e) handle_release(e, HandleKind::Event);
  });
}

DT_API dt_status dt_event_device(const dt_event* e, dt_device* out) {
  return guard([&] {
    require(out, "dt_event_device", "out");
    *out = event_arg(e, "dt_event_device")->device().to_c();
  });
}

DT_API dt_status dt_event_record(const dt_event* e, const dt_stream* s) {
  return guard([&] {
    Event* x = event_arg(e, "dt_event_record");
    Stream* on = s ? stream_arg(s, "dt_event_record") : thread_stream(x->device());
    if (on) refuse_on_capturing_stream(*on, "dt_event_record", kNoCrossStream);
    if (on) return x->record(*on);
    x->record(*Stream::default_for(x->device()));
  });
}

DT_API dt_status dt_event_synchronize(const dt_event* e) {
  return guard([&] { event_arg(e, "dt_event_synchronize")->synchronize(); });
}

DT_API dt_status dt_event_query(const dt_event* e, int32_t* done) {
  return guard([&] {
    require(done, "dt_event_query", "done");
    Event* x = event_arg(e, "dt_event_query");
    *done = x->query() ? 1 : 0;
  });
}

DT_API dt_status dt_event_elapsed_ms(const dt_event* start, const dt_event* end, float* ms) {
  return guard([&] {
    require(ms, "dt_event_elapsed_ms", "ms");
    Event* a = event_arg(start, "dt_event_elapsed_ms", "start");
    Event* b = event_arg(end, "dt_event_elapsed_ms", "end");
    *ms = a->elapsed_ms(*b);
  });
}

DT_API dt_status dt_tensor_record_stream(const dt_tensor* t, const dt_stream* s) {
  return guard([&] {
    Borrowed x = tensor_arg(t, "dt_tensor_record_stream", "t");
    x->storage()->record_stream(*stream_arg(s, "dt_tensor_record_stream"));
  });
}

}  // extern "C"
