// CUDA behaviours beyond the op-by-op reference (test_reference_ops runs every op on
// cuda:0 too): device identity, memory statistics and the stream-ordered pool, pinned
// memory and non-blocking copies, bit-identical random numbers, strided and cross-dtype
// copies, cuBLAS products in every float dtype, large reductions, out-of-memory
// recovery. Every test is SKIPPED, with dt_cuda_status's reason, where CUDA is unusable.
#include <dlpack/dlpack.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

const dt_device kCuda{DT_DEVICE_CUDA, 0};

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dt_cuda_is_available()) {
      int32_t state = 0;
      char buf[512] = "";
      size_t need = 0;
      dt_cuda_status(&state, buf, sizeof buf, &need);
      GTEST_SKIP() << "CUDA is not available: " << buf;
    }
    live_ = dt_live_handle_count();
  }
  void TearDown() override {
    if (dt_cuda_is_available()) EXPECT_EQ(dt_live_handle_count(), live_) << "leaked handles";
  }
  size_t live_ = 0;
};

T host_tensor(const std::vector<float>& v, std::vector<int64_t> shape) {
  T t;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * sizeof(float), shape.data(), shape.size(), DT_FLOAT32, cpu(),
                                t.out()),
            DT_OK)
      << dt_last_error_message();
  return t;
}

T moved(dt_tensor* t, dt_device d, dt_dtype dtype = DT_DTYPE_DEFAULT, uint32_t flags = 0) {
  T r;
  EXPECT_EQ(dt_tensor_to(t, d, dtype, flags, r.out()), DT_OK) << dt_last_error_message();
  return r;
}

std::vector<float> iota(size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * scale;
  return v;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * static_cast<double>(a[i] - b[i]);
    den += b[i] * static_cast<double>(b[i]);
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

TEST_F(Cuda, PropertiesIdentifyTheDevice) {
  dt_device_props p;
  p.struct_size = sizeof p;
  DT_ASSERT_OK(dt_device_properties(kCuda, &p));
  EXPECT_GT(std::strlen(p.name), 0u);
  EXPECT_GE(p.compute_capability_major, 7);
  EXPECT_GT(p.multiprocessor_count, 0);
  EXPECT_EQ(std::string(p.uuid).rfind("GPU-", 0), 0u) << p.uuid;
  EXPECT_GT(std::strlen(p.pci_bus_id), 0u);
  EXPECT_GT(p.total_memory, 0u);
  EXPECT_LE(p.free_memory, p.total_memory);
  char name[256];
  size_t need = 0;
  DT_ASSERT_OK(dt_device_name(kCuda, name, sizeof name, &need));
  EXPECT_STREQ(name, p.name);
  size_t n = 0;
  DT_ASSERT_OK(dt_device_count(DT_DEVICE_CUDA, &n));
  ASSERT_GE(n, 1u);
  dt_device beyond{DT_DEVICE_CUDA, static_cast<int32_t>(n)};
  DT_EXPECT_STATUS(dt_device_properties(beyond, &p), DT_ERR_INVALID_DEVICE);
  std::string want = "invalid device ordinal: cuda:" + std::to_string(n) + " requested, " + std::to_string(n) +
                     " CUDA device" + (n == 1 ? "" : "s") + " visible";
  EXPECT_NE(std::string(dt_last_error_message()).find(want), std::string::npos) << dt_last_error_message();
  dt_device d;
  DT_ASSERT_OK(dt_try_gpu(0, &d));
  EXPECT_EQ(d.type, DT_DEVICE_CUDA);
}

TEST_F(Cuda, SteadyStateLoopMakesNoDriverAllocation) {
  const int64_t shape[] = {1 << 20};
  dt_mem_stats before, after;
  before.struct_size = after.struct_size = sizeof before;
  {
    T warm;
    DT_ASSERT_OK(dt_tensor_empty(shape, 1, DT_FLOAT32, kCuda, warm.out()));
  }
  DT_ASSERT_OK(dt_memory_stats(kCuda, &before));
  for (int i = 0; i < 100; ++i) {
    T t;
    DT_ASSERT_OK(dt_tensor_empty(shape, 1, DT_FLOAT32, kCuda, t.out()));
  }
  DT_ASSERT_OK(dt_memory_stats(kCuda, &after));
  EXPECT_EQ(after.allocation_count, before.allocation_count + 100);
  EXPECT_EQ(after.system_allocation_count, before.system_allocation_count);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  T held;
  DT_ASSERT_OK(dt_tensor_empty(shape, 1, DT_FLOAT32, kCuda, held.out()));
  DT_ASSERT_OK(dt_memory_stats(kCuda, &after));
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes + (4u << 20));
  EXPECT_GE(after.peak_allocated_bytes, after.allocated_bytes);
  EXPECT_GE(after.reserved_bytes, after.allocated_bytes);
  DT_ASSERT_OK(dt_empty_cache(kCuda));
}

TEST_F(Cuda, OutOfMemoryIsAnErrorAndTheDeviceStaysUsable) {
  const int64_t huge[] = {int64_t{1} << 46};  // 256 TiB of float32
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_tensor_empty(huge, 1, DT_FLOAT32, kCuda, &out), DT_ERR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(dt_last_error_message()).find("out of memory"), std::string::npos) << dt_last_error_message();
  EXPECT_EQ(out, nullptr);
  T a = moved(host_tensor({1, 2, 3}, {3}), kCuda);
  T b;
  DT_ASSERT_OK(dt_add(a, a, b.out()));
  EXPECT_EQ(values<float>(b), (std::vector<float>{2, 4, 6}));
}

TEST_F(Cuda, RandIsBitIdenticalToTheCpuAndRandnWithinOneUlp) {
  const int64_t shape[] = {1000, 3};
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64, DT_FLOAT16, DT_BFLOAT16}) {
    T on_cpu, on_gpu, back;
    DT_ASSERT_OK(dt_manual_seed(1234));
    DT_ASSERT_OK(dt_tensor_rand(shape, 2, dtype, cpu(), on_cpu.out()));
    DT_ASSERT_OK(dt_tensor_rand(shape, 2, dtype, kCuda, on_gpu.out()));
    back = moved(on_gpu, cpu());
    size_t nbytes = 0;
    DT_ASSERT_OK(dt_tensor_nbytes(on_cpu, &nbytes));
    std::vector<unsigned char> x(nbytes), y(nbytes);
    DT_ASSERT_OK(dt_tensor_copy_to_host(on_cpu, x.data(), nbytes));
    DT_ASSERT_OK(dt_tensor_copy_to_host(back, y.data(), nbytes));
    EXPECT_EQ(x, y) << "rand differs between cpu and cuda:0 for dtype " << dt_dtype_name(dtype);
  }
  // randn: float32 within 1 ulp (the libraries' log/cos differ in double's last bits),
  // float64 within 4 ulp of double.
  const int64_t many[] = {100000};
  T n_cpu, n_gpu, d_cpu, d_gpu;
  DT_ASSERT_OK(dt_manual_seed(99));
  DT_ASSERT_OK(dt_tensor_randn(many, 1, DT_FLOAT32, cpu(), n_cpu.out()));
  DT_ASSERT_OK(dt_tensor_randn(many, 1, DT_FLOAT32, kCuda, n_gpu.out()));
  DT_ASSERT_OK(dt_tensor_randn(many, 1, DT_FLOAT64, cpu(), d_cpu.out()));
  DT_ASSERT_OK(dt_tensor_randn(many, 1, DT_FLOAT64, kCuda, d_gpu.out()));
  std::vector<float> a = values<float>(n_cpu), b = values<float>(n_gpu);
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int32_t ia, ib;
    std::memcpy(&ia, &a[i], 4);
    std::memcpy(&ib, &b[i], 4);
    differing += ia != ib;
    ASSERT_LE(std::abs(static_cast<int64_t>(ia) - ib), 1) << "element " << i << ": " << a[i] << " vs " << b[i];
  }
  EXPECT_LT(differing, a.size() / 1000) << "float32 randn elements not bit-identical to the CPU's";
  std::vector<double> c = values<double>(d_cpu), d = values<double>(d_gpu);
  for (size_t i = 0; i < c.size(); ++i) {
    int64_t ic, id;
    std::memcpy(&ic, &c[i], 8);
    std::memcpy(&id, &d[i], 8);
    ASSERT_LE(ic > id ? ic - id : id - ic, 4) << "element " << i << ": " << c[i] << " vs " << d[i];
  }
}

TEST_F(Cuda, CopiesEveryWayAndEveryLayout) {
  std::vector<float> v = iota(6 * 5);
  T host = host_tensor(v, {6, 5});
  T transposed;
  DT_ASSERT_OK(dt_transpose(host, 0, 1, transposed.out()));
  // strided host -> device, device -> strided, device -> device with a cast
  T gpu_t = moved(transposed, kCuda);
  std::vector<float> want = values<float>(transposed);
  EXPECT_EQ(values<float>(gpu_t), want);
  T gpu = moved(host, kCuda);
  T gpu_view;
  DT_ASSERT_OK(dt_transpose(gpu, 0, 1, gpu_view.out()));
  EXPECT_EQ(values<float>(gpu_view), want);
  T as_double = moved(gpu_view, kCuda, DT_FLOAT64);
  std::vector<double> d = values<double>(as_double);
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(d[i], static_cast<double>(want[i]));
  T as_int = moved(gpu, cpu(), DT_INT32);
  std::vector<int32_t> ints = values<int32_t>(as_int);
  for (size_t i = 0; i < ints.size(); ++i) EXPECT_EQ(ints[i], static_cast<int32_t>(v[i]));
  // copy_from_host into a strided device view
  std::vector<float> fresh = iota(30, 3.0f);
  DT_ASSERT_OK(dt_tensor_copy_from_host(gpu_view, fresh.data(), fresh.size() * sizeof(float)));
  EXPECT_EQ(values<float>(gpu_view), fresh);
}

TEST_F(Cuda, PinnedMemoryAndNonBlockingCopies) {
  const int64_t shape[] = {1 << 16};
  T pinned;
  DT_ASSERT_OK(dt_tensor_empty_pinned(shape, 1, DT_FLOAT32, pinned.out()));
  int32_t is_pinned = 0;
  DT_ASSERT_OK(dt_tensor_is_pinned(pinned, &is_pinned));
  EXPECT_EQ(is_pinned, 1);
  void* p = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(pinned, &p));
  std::vector<float> v = iota(1 << 16);
  std::memcpy(p, v.data(), v.size() * sizeof(float));
  T again;
  DT_ASSERT_OK(dt_tensor_pin_memory(pinned, again.out()));
  EXPECT_EQ(again.get(), pinned.get());  // already pinned: the same tensor
  T gpu = moved(pinned, kCuda, DT_DTYPE_DEFAULT, DT_TO_NON_BLOCKING);
  T doubled;
  DT_ASSERT_OK(dt_mul(gpu, gpu, doubled.out()));  // ordered after the copy on the stream
  T back = moved(doubled, cpu(), DT_DTYPE_DEFAULT, DT_TO_NON_BLOCKING);  // waits: safe to read
  std::vector<float> got = values<float>(back);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(got[i], v[i] * v[i]) << i;
  T pageable = host_tensor(v, {1 << 16});
  T pinned_copy;
  DT_ASSERT_OK(dt_tensor_pin_memory(pageable, pinned_copy.out()));
  DT_ASSERT_OK(dt_tensor_is_pinned(pinned_copy, &is_pinned));
  EXPECT_EQ(is_pinned, 1);
  EXPECT_EQ(values<float>(pinned_copy), v);
}

// ---- streams and events on a GPU (issue 17): real queues of their own.

struct OwnedStream {
  dt_stream* s = nullptr;
  ~OwnedStream() { dt_stream_release(s); }
};
struct OwnedEvent {
  dt_event* e = nullptr;
  ~OwnedEvent() { dt_event_release(e); }
};

TEST_F(Cuda, WorkOnAUserStreamIsOrderedByEventsAndTimed) {
  OwnedStream side, def, previous, ignored;
  OwnedEvent start, produced, end;
  DT_ASSERT_OK(dt_stream_create(kCuda, &side.s));
  DT_ASSERT_OK(dt_stream_default(kCuda, &def.s));
  void *native = nullptr, *default_native = nullptr;
  DT_ASSERT_OK(dt_stream_native_handle(side.s, &native));
  DT_ASSERT_OK(dt_stream_native_handle(def.s, &default_native));
  EXPECT_NE(native, nullptr);
  EXPECT_NE(default_native, nullptr);
  EXPECT_NE(native, default_native);
  DT_ASSERT_OK(dt_event_create(kCuda, &start.e));
  DT_ASSERT_OK(dt_event_create(kCuda, &produced.e));
  DT_ASSERT_OK(dt_event_create(kCuda, &end.e));
  // Produce on the side stream: a non-blocking copy from pinned memory and a product.
  const int64_t n = 1 << 20;
  std::vector<float> v = iota(n);
  T pinned, gpu, squared, sum;
  DT_ASSERT_OK(dt_tensor_empty_pinned(&n, 1, DT_FLOAT32, pinned.out()));
  void* p = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(pinned, &p));
  std::memcpy(p, v.data(), v.size() * sizeof(float));
  DT_ASSERT_OK(dt_set_thread_stream(side.s, &previous.s));
  DT_ASSERT_OK(dt_event_record(start.e, nullptr));
  DT_ASSERT_OK(dt_tensor_to(pinned, kCuda, DT_DTYPE_DEFAULT, DT_TO_NON_BLOCKING, gpu.out()));
  DT_ASSERT_OK(dt_mul(gpu, gpu, squared.out()));
  DT_ASSERT_OK(dt_event_record(produced.e, nullptr));
  DT_ASSERT_OK(dt_set_thread_stream(previous.s, &ignored.s));
  // Consume on the default stream, after the event; the side stream's tensor is used
  // there, so record it.
  DT_ASSERT_OK(dt_stream_wait_event(def.s, produced.e));
  DT_ASSERT_OK(dt_tensor_record_stream(squared, def.s));
  DT_ASSERT_OK(dt_add(squared, gpu, sum.out()));
  DT_ASSERT_OK(dt_event_record(end.e, def.s));
  std::vector<float> got = values<float>(sum);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_FLOAT_EQ(got[i], v[i] * v[i] + v[i]) << i;
  float ms = -1;
  DT_ASSERT_OK(dt_event_elapsed_ms(start.e, produced.e, &ms));
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
  int32_t done = 0;
  DT_ASSERT_OK(dt_event_synchronize(end.e));
  DT_ASSERT_OK(dt_event_query(end.e, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_stream_synchronize(side.s));
  DT_ASSERT_OK(dt_stream_query(side.s, &done));
  EXPECT_EQ(done, 1);
  // Released while recorded on another stream: the free waits for that stream.
  squared = T();
  DT_ASSERT_OK(dt_synchronize(kCuda));
}

TEST_F(Cuda, ADlpackImportWaitsForTheProducersStream) {
  OwnedStream producer;
  DT_ASSERT_OK(dt_stream_create(kCuda, &producer.s));
  void* native = nullptr;
  DT_ASSERT_OK(dt_stream_native_handle(producer.s, &native));
  T src = moved(host_tensor({1, 2, 3, 4}, {4}), kCuda);
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(src, &m));
  dt_tensor* back = nullptr;
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(m, 0, &back), DT_ERR_INVALID_ARGUMENT);
  DT_ASSERT_OK(dt_tensor_from_dlpack_stream(m, static_cast<int64_t>(reinterpret_cast<intptr_t>(native)), &back));
  T owned(back);
  EXPECT_EQ(values<float>(owned), (std::vector<float>{1, 2, 3, 4}));
  // DLPack's legacy default stream (1) and per-thread default stream (2).
  for (int64_t special : {int64_t{1}, int64_t{2}}) {
    DLManagedTensor* again = nullptr;
    DT_ASSERT_OK(dt_tensor_to_dlpack(src, &again));
    T t;
    DT_ASSERT_OK(dt_tensor_from_dlpack_stream(again, special, t.out()));
    EXPECT_EQ(values<float>(t), (std::vector<float>{1, 2, 3, 4}));
  }
}

TEST_F(Cuda, MatmulInEveryFloatDtypeMatchesTheCpu) {
  const int64_t M = 67, K = 129, N = 33;
  T a = host_tensor(iota(M * K), {M, K});
  T b = host_tensor(iota(K * N, 0.5f), {K, N});
  T ref;
  DT_ASSERT_OK(dt_matmul(a, b, ref.out()));
  std::vector<float> want = values<float>(ref);
  struct Case {
    dt_dtype dtype;
    int tf32;
    double tol;
  };
  for (Case c : {Case{DT_FLOAT32, 0, 1e-6}, Case{DT_FLOAT32, 1, 5e-3}, Case{DT_FLOAT64, 0, 1e-6},
                 Case{DT_FLOAT16, 0, 5e-3}, Case{DT_BFLOAT16, 0, 3e-2}}) {
    DT_ASSERT_OK(dt_set_allow_tf32(c.tf32));
    T ga = moved(a, kCuda, c.dtype), gb = moved(b, kCuda, c.dtype), gc, out;
    DT_ASSERT_OK(dt_matmul(ga, gb, gc.out()));
    out = moved(gc, cpu(), DT_FLOAT32);
    EXPECT_LT(max_rel_diff(values<float>(out), want), c.tol) << dt_dtype_name(c.dtype) << " tf32=" << c.tf32;
  }
  DT_ASSERT_OK(dt_set_allow_tf32(0));
  // transposed operands and a batch
  T at, gat, gbt, prod;
  DT_ASSERT_OK(dt_transpose(a, 0, 1, at.out()));
  gat = moved(at, kCuda);
  DT_ASSERT_OK(dt_transpose(gat, 0, 1, gbt.out()));  // a again, read through a transposed view
  T gb = moved(b, kCuda);
  DT_ASSERT_OK(dt_matmul(gbt, gb, prod.out()));
  EXPECT_LT(max_rel_diff(values<float>(prod), want), 1e-6);
}

// Linear's product and bias in one cuBLASLt call (the bias epilogue, gemm_lt.cpp), against
// the CPU's: float32 strict and with TF32, float64, a 3-d input, a transposed input, and
// an input 4 bytes past an aligned address (the plan asks cuBLASLt for kernels that read
// it; where none does, the product and a bias kernel), each shape twice (the second call
// reuses the plan).
TEST_F(Cuda, LinearWithBiasMatchesTheCpu) {
  struct Case {
    dt_dtype dtype;
    int tf32;
    std::vector<int64_t> x_shape;
    int layout;  // 0 contiguous, 1 transposed, 2 narrowed by one column (misaligned)
    double tol;
  };
  const int64_t in = 129, out = 33;
  for (const Case& c : {Case{DT_FLOAT32, 0, {67, in}, 0, 1e-6}, Case{DT_FLOAT32, 1, {67, in}, 0, 5e-3},
                        Case{DT_FLOAT64, 0, {67, in}, 0, 1e-6}, Case{DT_FLOAT32, 0, {2, 5, in}, 0, 1e-6},
                        Case{DT_FLOAT32, 0, {67, in}, 1, 1e-6}, Case{DT_FLOAT32, 0, {67, in}, 2, 1e-6},
                        Case{DT_FLOAT64, 0, {67, in}, 2, 1e-6}}) {
    SCOPED_TRACE(std::string(dt_dtype_name(c.dtype)) + " tf32=" + std::to_string(c.tf32) + " layout " +
                 std::to_string(c.layout) + " ndim " + std::to_string(c.x_shape.size()));
    DT_ASSERT_OK(dt_set_allow_tf32(c.tf32));
    DT_ASSERT_OK(dt_manual_seed(5));
    M lin;
    DT_ASSERT_OK(dt_linear_new(in, out, 1, c.dtype, cpu(), lin.out()));
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < c.x_shape.size(); ++d) rows *= c.x_shape[d];
    T x;  // the input on the CPU, in the case's layout
    if (c.layout == 0) {
      T x32 = host_tensor(iota(static_cast<size_t>(rows * in), 0.7f), c.x_shape);
      x = moved(x32, cpu(), c.dtype);
    } else if (c.layout == 1) {
      T x32 = host_tensor(iota(static_cast<size_t>(rows * in), 0.7f), {in, rows}), xt = moved(x32, cpu(), c.dtype);
      DT_ASSERT_OK(dt_transpose(xt, 0, 1, x.out()));
    } else {
      T x32 = host_tensor(iota(static_cast<size_t>(rows * (in + 1)), 0.7f), {rows, in + 1}),
        wide = moved(x32, cpu(), c.dtype);
      DT_ASSERT_OK(dt_narrow(wide, 1, 1, in, x.out()));
    }
    T want, want32;
    const dt_tensor* cin[] = {x};
    DT_ASSERT_OK(dt_module_forward(lin, cin, 1, want.out()));
    want32 = moved(want, cpu(), DT_FLOAT32);
    DT_ASSERT_OK(dt_module_to(lin, kCuda));
    T gx;  // the same layout on the GPU: move the storage's tensor, then take the same view
    if (c.layout == 0) {
      gx = moved(x, kCuda);
    } else if (c.layout == 1) {
      T xt, gxt;
      DT_ASSERT_OK(dt_transpose(x, 0, 1, xt.out()));
      gxt = moved(xt, kCuda);
      DT_ASSERT_OK(dt_transpose(gxt, 0, 1, gx.out()));
    } else {
      T x32 = host_tensor(iota(static_cast<size_t>(rows * (in + 1)), 0.7f), {rows, in + 1}),
        wide = moved(x32, kCuda, c.dtype);
      DT_ASSERT_OK(dt_narrow(wide, 1, 1, in, gx.out()));
    }
    for (int round = 0; round < 2; ++round) {
      T got, plain;
      const dt_tensor* gin[] = {gx};
      DT_ASSERT_OK(dt_module_forward(lin, gin, 1, got.out()));
      DT_ASSERT_OK(dt_tensor_detach(got, plain.out()));
      T host = moved(plain, cpu(), DT_FLOAT32);
      EXPECT_EQ(shape_of(host), shape_of(want));
      EXPECT_LT(max_rel_diff(values<float>(host), values<float>(want32)), c.tol) << "round " << round;
    }
  }
  DT_ASSERT_OK(dt_set_allow_tf32(0));
}

// Cross entropy on cuda:0 against the CPU's, loss and gradient, for each reduction, with
// ignored samples, rows longer than a warp's 32 lanes and a row holding a NaN: the fused
// kernels (loss.cu) when DEVTENSOR_FUSED_LOSS=1 (script/gpu-session runs this program
// both ways), the composed ops otherwise.
TEST_F(Cuda, CrossEntropyMatchesTheCpu) {
  const int64_t N = 300, C = 1000, xs[] = {N, C}, ts[] = {N};
  std::vector<int64_t> tv(N);
  for (int64_t n = 0; n < N; ++n) tv[n] = n % 7 == 3 ? -100 : (n * 37) % C;
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64}) {
    for (int32_t red : {DT_REDUCTION_NONE, DT_REDUCTION_MEAN, DT_REDUCTION_SUM}) {
      SCOPED_TRACE(std::string(dt_dtype_name(dtype)) + " reduction " + std::to_string(red));
      std::vector<float> xv = iota(static_cast<size_t>(N * C), 4.0f);
      xv[5 * C + 17] = NAN;  // row 5's loss and gradient are NaN on both sides
      T x32 = host_tensor(xv, {N, C}), x = moved(x32, cpu(), dtype), target, gt;
      DT_ASSERT_OK(dt_tensor_from_data(tv.data(), tv.size() * 8, ts, 1, DT_INT64, cpu(), target.out()));
      T gx0 = moved(x, kCuda);
      gt = moved(target, kCuda);
      std::vector<float> loss[2], grad[2];
      for (int side = 0; side < 2; ++side) {
        const dt_tensor* xin = side == 0 ? x.get() : gx0.get();
        T leaf, l, total, g, host, plain;
        DT_ASSERT_OK(dt_tensor_detach(xin, leaf.out()));
        DT_ASSERT_OK(dt_tensor_set_requires_grad(leaf, 1));
        M ce;
        DT_ASSERT_OK(dt_cross_entropy_loss_new(nullptr, red, -100, 0, ce.out()));
        const dt_tensor* in[] = {leaf, side == 0 ? target.get() : gt.get()};
        DT_ASSERT_OK(dt_module_forward(ce, in, 2, l.out()));
        DT_ASSERT_OK(dt_sum(l, nullptr, 0, 0, total.out()));
        DT_ASSERT_OK(dt_backward(total, nullptr));
        DT_ASSERT_OK(dt_tensor_detach(l, plain.out()));
        host = moved(plain, cpu(), DT_FLOAT32);
        loss[side] = values<float>(host);
        DT_ASSERT_OK(dt_tensor_grad(leaf, g.out()));
        T gh = moved(g, cpu(), DT_FLOAT32);
        grad[side] = values<float>(gh);
      }
      ASSERT_EQ(loss[0].size(), loss[1].size());
      ASSERT_EQ(grad[0].size(), grad[1].size());
      const double tol = dtype == DT_FLOAT32 ? 1e-5 : 1e-6;  // compared as float32
      for (size_t i = 0; i < loss[0].size(); ++i) {
        if (std::isnan(loss[0][i])) EXPECT_TRUE(std::isnan(loss[1][i])) << i;
        else EXPECT_NEAR(loss[1][i], loss[0][i], tol * (1 + std::fabs(loss[0][i]))) << i;
      }
      for (size_t i = 0; i < grad[0].size(); ++i) {
        if (std::isnan(grad[0][i])) EXPECT_TRUE(std::isnan(grad[1][i])) << i;
        else EXPECT_NEAR(grad[1][i], grad[0][i], tol) << i;
      }
    }
  }
}

// An SGD step over several parameters on cuda:0 gives the CPU's bits (both round each
// product and sum on its own): momentum with Nesterov, three steps (the first makes the
// buffers), parameters of odd sizes and one of three 4096-element chunks and a tail, so
// the multi-tensor launch (DEVTENSOR_MULTI_TENSOR_SGD=1; script/gpu-session runs this
// program both ways) maps blocks to parameters and chunks correctly.
TEST_F(Cuda, AnSgdStepOverManyParametersGivesTheCpusBits) {
  const std::vector<int64_t> sizes = {185, 5, 3 * 4096 + 7, 1};
  std::vector<T> cpu_p, gpu_p;
  std::vector<const dt_tensor*> cps, gps;
  for (size_t i = 0; i < sizes.size(); ++i) {
    T p = host_tensor(iota(static_cast<size_t>(sizes[i]), 1.0f + static_cast<float>(i)), {sizes[i]});
    T q = moved(p, kCuda);
    DT_ASSERT_OK(dt_tensor_set_requires_grad(p, 1));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(q, 1));
    cpu_p.push_back(std::move(p));
    gpu_p.push_back(std::move(q));
    cps.push_back(cpu_p.back());
    gps.push_back(gpu_p.back());
  }
  Handle<dt_optimizer, dt_optimizer_release> co, go;
  DT_ASSERT_OK(dt_sgd_new(cps.data(), cps.size(), 0.05, 0.9, 0.0, 0.0, 1, co.out()));
  DT_ASSERT_OK(dt_sgd_new(gps.data(), gps.size(), 0.05, 0.9, 0.0, 0.0, 1, go.out()));
  for (int step = 0; step < 3; ++step) {
    DT_ASSERT_OK(dt_optimizer_zero_grad(co));
    DT_ASSERT_OK(dt_optimizer_zero_grad(go));
    for (size_t i = 0; i < sizes.size(); ++i) {
      T g = host_tensor(iota(static_cast<size_t>(sizes[i]), 0.3f * static_cast<float>(step + 1)), {sizes[i]});
      T gg = moved(g, kCuda), a, b, la, lb;  // loss = sum(p * g): the gradient is g
      DT_ASSERT_OK(dt_mul(cpu_p[i], g, a.out()));
      DT_ASSERT_OK(dt_sum(a, nullptr, 0, 0, la.out()));
      DT_ASSERT_OK(dt_backward(la, nullptr));
      DT_ASSERT_OK(dt_mul(gpu_p[i], gg, b.out()));
      DT_ASSERT_OK(dt_sum(b, nullptr, 0, 0, lb.out()));
      DT_ASSERT_OK(dt_backward(lb, nullptr));
    }
    DT_ASSERT_OK(dt_optimizer_step(co));
    DT_ASSERT_OK(dt_optimizer_step(go));
    for (size_t i = 0; i < sizes.size(); ++i) {
      T back = moved(gpu_p[i], cpu());
      EXPECT_EQ(values<float>(back), values<float>(cpu_p[i])) << "parameter " << i << ", step " << step;
    }
  }
}

// Attention with a head size of 64, the shapes the fused kernel takes (attention.cu, run
// when DEVTENSOR_FUSED_ATTENTION=1: script/gpu-session runs this program both ways): query
// and key counts that leave partial tiles of 64, fewer and more keys than queries, causal
// or not, a transposed (strided) query, and a recorded forward (composed, for autograd),
// each against the CPU's composed ops (which the reference suite checks against PyTorch).
TEST_F(Cuda, AttentionWithHeadSize64MatchesTheCpu) {
  struct Case {
    int64_t L, S;
    int32_t causal;
    bool strided_q, grad;
  };
  for (Case c : {Case{100, 77, 0, false, false}, Case{100, 77, 1, false, false}, Case{130, 200, 1, false, false},
                 Case{64, 256, 0, false, false}, Case{1, 5, 0, false, false}, Case{100, 77, 1, true, false},
                 Case{100, 77, 0, false, true}}) {
    SCOPED_TRACE("L " + std::to_string(c.L) + ", S " + std::to_string(c.S) + (c.causal ? ", causal" : "") +
                 (c.strided_q ? ", strided q" : "") + (c.grad ? ", q requires grad" : ""));
    const int64_t B = 2, H = 3, E = 64;
    T q = c.strided_q ? host_tensor(iota(B * H * c.L * E, 0.8f), {B, c.L, H, E})
                      : host_tensor(iota(B * H * c.L * E, 0.8f), {B, H, c.L, E});
    std::vector<float> kv = iota(B * H * c.S * E + 3, 1.1f);
    T k = host_tensor(std::vector<float>(kv.begin(), kv.end() - 3), {B, H, c.S, E});
    T v = host_tensor(std::vector<float>(kv.begin() + 3, kv.end()), {B, H, c.S, E});
    T qv;  // q as [B, H, L, E]: a view of [B, L, H, E] when strided
    if (c.strided_q)
      DT_ASSERT_OK(dt_transpose(q, 1, 2, qv.out()));
    else
      DT_ASSERT_OK(dt_tensor_detach(q, qv.out()));
    T want;
    DT_ASSERT_OK(dt_scaled_dot_product_attention(qv, k, v, nullptr, c.causal, want.out()));
    T gq0 = moved(q, kCuda), gk = moved(k, kCuda), gv = moved(v, kCuda), gq, got, plain;
    if (c.strided_q)
      DT_ASSERT_OK(dt_transpose(gq0, 1, 2, gq.out()));
    else
      DT_ASSERT_OK(dt_tensor_detach(gq0, gq.out()));
    if (c.grad) DT_ASSERT_OK(dt_tensor_set_requires_grad(gq, 1));
    DT_ASSERT_OK(dt_scaled_dot_product_attention(gq, gk, gv, nullptr, c.causal, got.out()));
    DT_ASSERT_OK(dt_tensor_detach(got, plain.out()));
    T host = moved(plain, cpu());
    EXPECT_EQ(shape_of(host), (std::vector<int64_t>{B, H, c.L, E}));
    EXPECT_LT(max_rel_diff(values<float>(host), values<float>(want)), 2e-6);
  }
}

TEST_F(Cuda, LargeReductionsAndSoftmaxMatchTheCpu) {
  std::vector<float> v = iota(3 * 100003);
  v[12345] = 7.5f;  // the max, once
  T host = host_tensor(v, {3, 100003});
  T gpu = moved(host, kCuda);
  T s_cpu, s_gpu, m_gpu;
  DT_ASSERT_OK(dt_sum(host, nullptr, 0, 0, s_cpu.out()));
  DT_ASSERT_OK(dt_sum(gpu, nullptr, 0, 0, s_gpu.out()));
  double a = 0, b = 0;
  DT_ASSERT_OK(dt_tensor_item(s_cpu, &a));
  DT_ASSERT_OK(dt_tensor_item(s_gpu, &b));
  EXPECT_NEAR(a, b, 1e-3 * (1 + std::fabs(a)));
  DT_ASSERT_OK(dt_argmax(gpu, nullptr, 0, 0, m_gpu.out()));
  DT_ASSERT_OK(dt_tensor_item(m_gpu, &b));
  EXPECT_EQ(b, 12345.0);
  for (int64_t dim : {0, 1}) {
    T sm_cpu, sm_gpu;
    DT_ASSERT_OK(dt_softmax(host, dim, sm_cpu.out()));
    DT_ASSERT_OK(dt_softmax(gpu, dim, sm_gpu.out()));
    EXPECT_LT(max_rel_diff(values<float>(sm_gpu), values<float>(sm_cpu)), 1e-5) << "dim " << dim;
  }
}

}  // namespace
