// Streams and events on the CPU, where every call has finished when it returns: the API
// works as on a GPU (handles, the thread's current stream, record/wait/synchronize/query,
// elapsed time from the host clock, record_stream, DLPack imports after a producer's
// stream), orders work, and refuses bad input with a clear error. The same calls on a
// backend with streams of its own are checked in test_plugin_backend.cpp (the test
// plugin counts what was queued on each stream) and on a GPU in test_cuda.cpp.
#include <dlpack/dlpack.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"

namespace {

using S = Handle<dt_stream, dt_stream_release>;
using E = Handle<dt_event, dt_event_release>;

class Streams : public LeakChecked {};

TEST_F(Streams, ANewStreamAndTheDefaultStreamKnowTheirDevice) {
  S s, d, d2;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_stream_default(cpu(), d.out()));
  DT_ASSERT_OK(dt_stream_default(dt_device{DT_DEVICE_DEFAULT, 0}, d2.out()));
  dt_device dev{};
  DT_ASSERT_OK(dt_stream_device(s, &dev));
  EXPECT_EQ(dev.type, DT_DEVICE_CPU);
  EXPECT_EQ(dev.index, 0);
  int32_t is_default = -1;
  DT_ASSERT_OK(dt_stream_is_default(s, &is_default));
  EXPECT_EQ(is_default, 0);
  DT_ASSERT_OK(dt_stream_is_default(d, &is_default));
  EXPECT_EQ(is_default, 1);
  // The CPU has no streams of its own: no native handle.
  void* native = reinterpret_cast<void*>(0x1);
  DT_ASSERT_OK(dt_stream_native_handle(s, &native));
  EXPECT_EQ(native, nullptr);
  // Work on it has always finished.
  int32_t done = 0;
  DT_ASSERT_OK(dt_stream_query(s, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_stream_synchronize(s));
  DT_ASSERT_OK(dt_stream_synchronize(d));
}

TEST_F(Streams, TheThreadStreamIsSetRestoredAndOwnedByTheThread) {
  S s, before, current, restored, other_thread;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_set_thread_stream(s, before.out()));
  int32_t is_default = 0;
  DT_ASSERT_OK(dt_stream_is_default(before, &is_default));
  EXPECT_EQ(is_default, 1) << "a thread starts on the default stream";
  DT_ASSERT_OK(dt_thread_stream(cpu(), current.out()));
  DT_ASSERT_OK(dt_stream_is_default(current, &is_default));
  EXPECT_EQ(is_default, 0);
  // Another thread still has the default stream.
  std::thread([&] {
    EXPECT_EQ(dt_thread_stream(cpu(), other_thread.out()), DT_OK);
  }).join();
  DT_ASSERT_OK(dt_stream_is_default(other_thread, &is_default));
  EXPECT_EQ(is_default, 1) << "one thread's stream leaked into another";
  // Only the device of the stream is affected.
  if (dt_device_count(DT_DEVICE_CPU, nullptr) == DT_OK) {
    size_t n = 0;
    DT_ASSERT_OK(dt_device_count(DT_DEVICE_CPU, &n));
    if (n > 1) {
      S on1;
      DT_ASSERT_OK(dt_thread_stream(cpu(1), on1.out()));
      DT_ASSERT_OK(dt_stream_is_default(on1, &is_default));
      EXPECT_EQ(is_default, 1);
    }
  }
  // Releasing the caller's handle does not end the thread's use of it.
  dt_stream* raw = nullptr;
  DT_ASSERT_OK(dt_stream_create(cpu(), &raw));
  S ignored;
  DT_ASSERT_OK(dt_set_thread_stream(raw, ignored.out()));
  DT_ASSERT_OK(dt_stream_release(raw));
  T x, y;
  const int64_t shape[] = {3};
  DT_ASSERT_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_add(x, x, y.out()));
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 2, 2}));
  // Back to the default; previous may be NULL.
  DT_ASSERT_OK(dt_set_thread_stream(before, nullptr));
  DT_ASSERT_OK(dt_thread_stream(cpu(), restored.out()));
  DT_ASSERT_OK(dt_stream_is_default(restored, &is_default));
  EXPECT_EQ(is_default, 1);
}

TEST_F(Streams, WorkOnTwoStreamsOrderedByAnEventGivesTheSameValues) {
  // The pattern of a GPU pipeline: produce on one stream, record, the consumer's stream
  // waits, consume. On the CPU it is already ordered; the values must be right.
  S producer, consumer, previous, ignored;
  E ready;
  DT_ASSERT_OK(dt_stream_create(cpu(), producer.out()));
  DT_ASSERT_OK(dt_stream_create(cpu(), consumer.out()));
  DT_ASSERT_OK(dt_event_create(cpu(), ready.out()));
  const float host[4] = {1, 2, 3, 4};
  const int64_t shape[] = {4};
  T a, b, c;
  DT_ASSERT_OK(dt_set_thread_stream(producer, previous.out()));
  DT_ASSERT_OK(dt_tensor_from_data(host, sizeof host, shape, 1, DT_FLOAT32, cpu(), a.out()));
  DT_ASSERT_OK(dt_mul(a, a, b.out()));
  DT_ASSERT_OK(dt_event_record(ready, nullptr));  // NULL: the thread's stream, the producer
  DT_ASSERT_OK(dt_stream_wait_event(consumer, ready));
  DT_ASSERT_OK(dt_tensor_record_stream(b, consumer));
  DT_ASSERT_OK(dt_set_thread_stream(consumer, ignored.out()));
  DT_ASSERT_OK(dt_add(b, a, c.out()));
  DT_ASSERT_OK(dt_stream_wait_stream(producer, consumer));
  DT_ASSERT_OK(dt_set_thread_stream(previous, nullptr));
  DT_ASSERT_OK(dt_stream_synchronize(consumer));
  EXPECT_EQ(values<float>(c), (std::vector<float>{2, 6, 12, 20}));
  int32_t done = 0;
  DT_ASSERT_OK(dt_event_query(ready, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_event_synchronize(ready));
}

TEST_F(Streams, ElapsedTimeIsTheHostTimeBetweenTheRecords) {
  E start, end, never;
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_event_create(cpu(), start.out()));
  DT_ASSERT_OK(dt_event_create(cpu(), end.out()));
  DT_ASSERT_OK(dt_event_create(cpu(), never.out()));
  const auto t0 = std::chrono::steady_clock::now();
  DT_ASSERT_OK(dt_event_record(start, s));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  DT_ASSERT_OK(dt_event_record(end, s));
  const double outer =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float ms = -1;
  DT_ASSERT_OK(dt_event_elapsed_ms(start, end, &ms));
  EXPECT_GE(ms, 30.0f);
  EXPECT_LE(ms, outer + 0.01);
  // An event never recorded has nothing to time; *ms stays untouched.
  ms = -1;
  DT_EXPECT_STATUS(dt_event_elapsed_ms(start, never, &ms), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "the end event was never recorded")) << dt_last_error_message();
  EXPECT_EQ(ms, -1);
  DT_EXPECT_STATUS(dt_event_elapsed_ms(never, end, &ms), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "the start event was never recorded")) << dt_last_error_message();
  // A never-recorded event is complete and waits for nothing.
  int32_t done = 0;
  DT_ASSERT_OK(dt_event_query(never, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_event_synchronize(never));
  DT_ASSERT_OK(dt_stream_wait_event(s, never));
}

TEST_F(Streams, BadArgumentsAreRefusedWithAClearError) {
  S s;
  E e;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_event_create(cpu(), e.out()));
  dt_stream* out = nullptr;
  DT_EXPECT_STATUS(dt_stream_create(cpu(), nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_stream_create(dt_device{DT_DEVICE_CPU, 4096}, &out), DT_ERR_INVALID_DEVICE);
  EXPECT_EQ(out, nullptr);
  DT_EXPECT_STATUS(dt_stream_create(dt_device{77, 0}, &out), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_event_create(dt_device{DT_DEVICE_CPU, -1}, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_stream_synchronize(nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_stream_synchronize: s is NULL")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_stream_wait_event(s, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_set_thread_stream(nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_event_record(nullptr, s), DT_ERR_INVALID_ARGUMENT);
  int32_t done = 0;
  DT_EXPECT_STATUS(dt_event_query(e, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_stream_query(s, nullptr), DT_ERR_INVALID_ARGUMENT);
  // A handle of another kind, a released one.
  DT_EXPECT_STATUS(dt_stream_synchronize(reinterpret_cast<const dt_stream*>(static_cast<dt_event*>(e))),
                   DT_ERR_INVALID_HANDLE);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_stream_synchronize: expected a stream handle but got an event handle"))
      << dt_last_error_message();
  dt_stream* gone = nullptr;
  DT_ASSERT_OK(dt_stream_create(cpu(), &gone));
  DT_ASSERT_OK(dt_stream_release(gone));
  DT_EXPECT_STATUS(dt_stream_query(gone, &done), DT_ERR_INVALID_HANDLE);
  DT_EXPECT_STATUS(dt_stream_release(gone), DT_ERR_INVALID_HANDLE);
  DT_EXPECT_STATUS(dt_set_thread_stream(gone, nullptr), DT_ERR_INVALID_HANDLE);
  DT_ASSERT_OK(dt_stream_release(nullptr));
  DT_ASSERT_OK(dt_event_release(nullptr));
  // An event is recorded on a stream of its own device.
  size_t n = 0;
  DT_ASSERT_OK(dt_device_count(DT_DEVICE_CPU, &n));
  if (n > 1) {
    S on1;
    DT_ASSERT_OK(dt_stream_create(cpu(1), on1.out()));
    DT_EXPECT_STATUS(dt_event_record(e, on1), DT_ERR_DEVICE_MISMATCH);
    EXPECT_TRUE(has(dt_last_error_message(), "the event is on cpu:0 but the stream on cpu:1")) << dt_last_error_message();
    T x;
    const int64_t shape[] = {2};
    DT_ASSERT_OK(dt_tensor_zeros(shape, 1, DT_FLOAT32, cpu(), x.out()));
    DT_EXPECT_STATUS(dt_tensor_record_stream(x, on1), DT_ERR_DEVICE_MISMATCH);
    // Streams of different CPU devices still order (one host).
    DT_ASSERT_OK(dt_stream_wait_stream(s, on1));
  }
}

// A DLPack producer's host tensor with nothing to free (the test keeps the data).
struct Producer {
  float data[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  int deleted = 0;
  DLManagedTensor managed{};
  Producer() {
    managed.dl_tensor.data = data;
    managed.dl_tensor.device = DLDevice{kDLCPU, 0};
    managed.dl_tensor.ndim = 1;
    managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    managed.dl_tensor.shape = shape;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* m) { static_cast<Producer*>(m->manager_ctx)->deleted++; };
  }
};

TEST_F(Streams, ADLPackImportOnTheHostTakesNoStreamButMinusOneOrZero) {
  for (int64_t none : {int64_t{-1}, int64_t{0}}) {
    Producer p;
    T t;
    DT_ASSERT_OK(dt_tensor_from_dlpack_stream(&p.managed, none, t.out()));
    EXPECT_EQ(values<float>(t), (std::vector<float>{1, 2, 3}));
    t.out();  // released: the deleter runs once
    EXPECT_EQ(p.deleted, 1);
  }
  Producer p;
  dt_tensor* t = nullptr;
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(&p.managed, 7, &t), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "cpu:0 has no streams, so producer_stream must be -1 or 0, not 7"))
      << dt_last_error_message();
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(p.deleted, 0) << "a failed import must leave the producer's tensor to the caller";
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(nullptr, -1, &t), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(&p.managed, -1, nullptr), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(Streams, TensorsAllocatedOnAStreamOutliveItsHandle) {
  // The storage keeps its stream: releasing the stream handle first is safe.
  dt_stream* s = nullptr;
  DT_ASSERT_OK(dt_stream_create(cpu(), &s));
  S previous;
  DT_ASSERT_OK(dt_set_thread_stream(s, previous.out()));
  T x;
  const int64_t shape[] = {1024};
  DT_ASSERT_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_set_thread_stream(previous, nullptr));
  DT_ASSERT_OK(dt_stream_release(s));
  T y;
  DT_ASSERT_OK(dt_sum(x, nullptr, 0, 0, y.out()));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1024}));
}

}  // namespace
