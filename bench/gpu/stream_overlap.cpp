// stream_overlap [DEVICE] [COPY_MIB] [MATMUL_N]: do two streams overlap a copy and a
// kernel? Measured with devtensor's own events, through the C API only.
//
// A host-to-device copy of COPY_MIB MiB from pinned memory (default 256) and a run of
// float32 matmuls of MATMUL_N x MATMUL_N (default 4096; as many as take about as long as
// the copy) are timed four ways, each the median of 5 rounds:
//   copy      the copy alone on stream C
//   compute   the matmuls alone on stream K
//   serial    both on stream C, one after the other
//   overlap   the copy on C and the matmuls on K, both started after one event and
//             joined by another (C waits for K's end)
// overlap_fraction = (serial - overlap) / min(copy, compute): 1 when the shorter part is
// hidden entirely, 0 when nothing overlaps. On the CPU (DEVICE cpu:0) every call finishes
// before it returns, so nothing can overlap: the program then only shows that the same
// stream and event calls run there. Prints a table and one JSON line last. Exit 3 when
// the device is unavailable (with the reason).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "devtensor.h"

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "stream_overlap: %s: %s\n", what, dt_last_error_message());
  std::exit(1);
}
#define CHECK(call) \
  do {              \
    if ((call) != DT_OK) die(#call); \
  } while (0)

struct Streams {
  dt_stream* copy = nullptr;
  dt_stream* compute = nullptr;
};

// Runs fn with s as the thread's stream of its device, then restores the previous one.
template <typename F>
void on(dt_stream* s, F&& fn) {
  dt_stream* previous = nullptr;
  CHECK(dt_set_thread_stream(s, &previous));
  fn();
  CHECK(dt_set_thread_stream(previous, nullptr));
  CHECK(dt_stream_release(previous));
}

struct Work {
  dt_device device;
  dt_tensor* host = nullptr;  // pinned when the device is a GPU
  dt_tensor* a = nullptr;     // [n, n] on the device
  int reps = 1;

  void copy() const {
    dt_tensor* d = nullptr;
    CHECK(dt_tensor_to(host, device, DT_DTYPE_DEFAULT, DT_TO_NON_BLOCKING | DT_TO_COPY, &d));
    CHECK(dt_tensor_release(d));  // freed on the stream it came from, after the copy
  }
  void compute() const {
    for (int i = 0; i < reps; ++i) {
      dt_tensor* c = nullptr;
      CHECK(dt_matmul(a, a, &c));
      CHECK(dt_tensor_release(c));
    }
  }
};

// Milliseconds between two events around fn, recorded on `timing` (fn queues the work).
template <typename F>
float timed(dt_stream* timing, F&& fn) {
  dt_event *start = nullptr, *end = nullptr;
  dt_device d;
  CHECK(dt_stream_device(timing, &d));
  CHECK(dt_event_create(d, &start));
  CHECK(dt_event_create(d, &end));
  CHECK(dt_event_record(start, timing));
  fn(start, end);
  CHECK(dt_event_record(end, timing));
  float ms = 0;
  CHECK(dt_event_elapsed_ms(start, end, &ms));
  CHECK(dt_event_release(start));
  CHECK(dt_event_release(end));
  return ms;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* device_text = argc > 1 ? argv[1] : "cuda:0";
  const int64_t copy_mib = argc > 2 ? std::atoll(argv[2]) : 256;
  const int64_t n = argc > 3 ? std::atoll(argv[3]) : 4096;
  Work w;
  CHECK(dt_device_parse(device_text, &w.device));
  char name[256] = "";
  if (dt_device_name(w.device, name, sizeof name, nullptr) != DT_OK) {
    std::fprintf(stderr, "stream_overlap: %s is unavailable: %s\n", device_text, dt_last_error_message());
    return 3;
  }
  const bool host_device = w.device.type == DT_DEVICE_CPU;
  const int64_t floats = copy_mib * (1 << 20) / 4;
  if (host_device) CHECK(dt_tensor_zeros(&floats, 1, DT_FLOAT32, w.device, &w.host));
  else CHECK(dt_tensor_empty_pinned(&floats, 1, DT_FLOAT32, &w.host));
  const int64_t square[2] = {n, n};
  CHECK(dt_tensor_rand(square, 2, DT_FLOAT32, w.device, &w.a));
  Streams s;
  CHECK(dt_stream_create(w.device, &s.copy));
  CHECK(dt_stream_create(w.device, &s.compute));

  // Warm up (pool, cuBLAS handle), then size the compute part to about the copy's time.
  on(s.copy, [&] { w.copy(); });
  on(s.compute, [&] { w.compute(); });
  CHECK(dt_synchronize(w.device));
  const float one_copy = timed(s.copy, [&](dt_event*, dt_event*) { on(s.copy, [&] { w.copy(); }); });
  const float one_matmul = timed(s.compute, [&](dt_event*, dt_event*) { on(s.compute, [&] { w.compute(); }); });
  w.reps = std::max(1, static_cast<int>(one_copy / std::max(one_matmul, 1e-3f) + 0.5f));

  std::vector<float> copy_ms, compute_ms, serial_ms, overlap_ms;
  for (int round = 0; round < 5; ++round) {
    copy_ms.push_back(timed(s.copy, [&](dt_event*, dt_event*) { on(s.copy, [&] { w.copy(); }); }));
    compute_ms.push_back(timed(s.compute, [&](dt_event*, dt_event*) { on(s.compute, [&] { w.compute(); }); }));
    serial_ms.push_back(timed(s.copy, [&](dt_event*, dt_event*) {
      on(s.copy, [&] {
        w.copy();
        w.compute();
      });
    }));
    overlap_ms.push_back(timed(s.copy, [&](dt_event* start, dt_event*) {
      CHECK(dt_stream_wait_event(s.compute, start));  // both begin at the start mark
      on(s.copy, [&] { w.copy(); });
      on(s.compute, [&] { w.compute(); });
      CHECK(dt_stream_wait_stream(s.copy, s.compute));  // the end mark waits for both
    }));
  }
  CHECK(dt_synchronize(w.device));
  const float c = median(copy_ms), k = median(compute_ms), ser = median(serial_ms), ov = median(overlap_ms);
  const float fraction = (ser - ov) / std::max(std::min(c, k), 1e-6f);
  const double gbps = static_cast<double>(copy_mib) * (1 << 20) / (c * 1e-3) / 1e9;
  std::printf("device        %s (%s)\n", device_text, name);
  std::printf("copy          %8.3f ms  (%lld MiB host-to-device, %.1f GB/s)\n", c, static_cast<long long>(copy_mib), gbps);
  std::printf("compute       %8.3f ms  (%d x matmul %lld^2 float32)\n", k, w.reps, static_cast<long long>(n));
  std::printf("serial        %8.3f ms  (one stream)\n", ser);
  std::printf("overlap       %8.3f ms  (two streams)\n", ov);
  std::printf("overlap_fraction %.3f  (1: the shorter part is hidden, 0: no overlap)\n", fraction);
  std::printf("{\"device\": \"%s\", \"name\": \"%s\", \"copy_mib\": %lld, \"matmul_n\": %lld, \"matmuls\": %d, "
              "\"copy_ms\": %.4f, \"compute_ms\": %.4f, \"serial_ms\": %.4f, \"overlap_ms\": %.4f, "
              "\"overlap_fraction\": %.4f}\n",
              device_text, name, static_cast<long long>(copy_mib), static_cast<long long>(n), w.reps, c, k, ser, ov,
              fraction);
  CHECK(dt_stream_release(s.copy));
  CHECK(dt_stream_release(s.compute));
  CHECK(dt_tensor_release(w.a));
  CHECK(dt_tensor_release(w.host));
  return 0;
}
