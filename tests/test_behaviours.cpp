// The seed behaviours of DESIGN §1 on the CPU: to() returns a new tensor and aliases when
// nothing changes, host memory shared both ways, *_like/new_* keep device and dtype,
// logical CPU devices and their mismatch error, defaults, seeds, threads, the allocator.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "support/dt_test.h"

// Two logical CPU devices for this program (read once, at first use of the library).
static const int kSetEnv = (setenv("DEVTENSOR_CPU_DEVICES", "2", 1), 0);

class Behaviours : public LeakChecked {};

TEST_F(Behaviours, ToReturnsANewTensorAndLeavesTheSource) {
  float data[3] = {1.5f, -2.0f, 3.25f};
  int64_t n = 3;
  T a;
  DT_ASSERT_OK(dt_tensor_from_data(data, sizeof data, &n, 1, DT_FLOAT32, cpu(), a.out()));
  T b;
  DT_ASSERT_OK(dt_tensor_to(a, cpu(), DT_FLOAT64, 0, b.out()));
  EXPECT_NE(a.get(), b.get());
  dt_dtype da, db;
  DT_ASSERT_OK(dt_tensor_dtype(a, &da));
  DT_ASSERT_OK(dt_tensor_dtype(b, &db));
  EXPECT_EQ(da, DT_FLOAT32);
  EXPECT_EQ(db, DT_FLOAT64);
  EXPECT_EQ(values<double>(b), (std::vector<double>{1.5, -2.0, 3.25}));
  // Writing the copy leaves the source alone.
  DT_ASSERT_OK(dt_add_scalar_(b, 1.0));
  EXPECT_EQ(values<float>(a), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  // to another logical CPU device is a copy on that device.
  T c;
  DT_ASSERT_OK(dt_tensor_to(a, cpu(1), DT_DTYPE_DEFAULT, 0, c.out()));
  dt_device dc;
  DT_ASSERT_OK(dt_tensor_device(c, &dc));
  EXPECT_EQ(dc.type, DT_DEVICE_CPU);
  EXPECT_EQ(dc.index, 1);
  int32_t shares = 1;
  DT_ASSERT_OK(dt_tensor_shares_storage(a, c, &shares));
  EXPECT_EQ(shares, 0);
}

TEST_F(Behaviours, ToAliasesWhenNothingChangesUnlessCopyIsForced) {
  int64_t n = 4;
  T a;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(), a.out()));
  T same;
  DT_ASSERT_OK(dt_tensor_to(a, cpu(), DT_FLOAT32, 0, same.out()));
  EXPECT_EQ(same.get(), a.get()) << "to() with nothing to change returns the tensor itself";
  T same2;
  DT_ASSERT_OK(dt_tensor_to(a, dt_device{DT_DEVICE_DEFAULT, 0}, DT_DTYPE_DEFAULT, 0, same2.out()));
  EXPECT_EQ(same2.get(), a.get());
  T copy;
  DT_ASSERT_OK(dt_tensor_to(a, cpu(), DT_FLOAT32, DT_TO_COPY, copy.out()));
  EXPECT_NE(copy.get(), a.get());
  int32_t shares = 1;
  DT_ASSERT_OK(dt_tensor_shares_storage(a, copy, &shares));
  EXPECT_EQ(shares, 0);
}

static int g_deleted = 0;
static void count_delete(void* data, void* ctx) {
  EXPECT_EQ(ctx, &g_deleted);
  (void)data;
  ++g_deleted;
}

TEST_F(Behaviours, FromBlobSharesHostMemoryBothWays) {
  float host[4] = {1, 2, 3, 4};
  int64_t shape[2] = {2, 2};
  g_deleted = 0;
  {
    T t;
    DT_ASSERT_OK(dt_tensor_from_blob(host, shape, 2, nullptr, DT_FLOAT32, cpu(), count_delete, &g_deleted, t.out()));
    // A write through the tensor is seen in the caller's array (t.add_(2) on a from_numpy tensor).
    DT_ASSERT_OK(dt_add_scalar_(t, 2.0));
    EXPECT_EQ(host[0], 3.0f);
    EXPECT_EQ(host[3], 6.0f);
    // A write to the array is seen by the tensor and its views.
    host[1] = 100.0f;
    T tt;
    DT_ASSERT_OK(dt_transpose(t, 0, 1, tt.out()));
    EXPECT_EQ(values<float>(tt), (std::vector<float>{3, 5, 100, 6}));
    void* p = nullptr;
    DT_ASSERT_OK(dt_tensor_data_ptr(t, &p));
    EXPECT_EQ(p, static_cast<void*>(host));
    EXPECT_EQ(g_deleted, 0);
  }
  EXPECT_EQ(g_deleted, 1) << "the deleter runs once, when the last view is released";
}

TEST_F(Behaviours, FromBlobHonoursStridesAndDoesNotCallTheDeleterOnFailure) {
  double host[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {3, 2}, strides[2] = {1, 3};  // the transpose of a 2x3 row-major array
  T t;
  DT_ASSERT_OK(dt_tensor_from_blob(host, shape, 2, strides, DT_FLOAT64, cpu(), nullptr, nullptr, t.out()));
  EXPECT_EQ(values<double>(t), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  g_deleted = 0;
  dt_tensor* out = reinterpret_cast<dt_tensor*>(0x1234);
  int64_t bad[2] = {-1, 3};
  DT_EXPECT_STATUS(dt_tensor_from_blob(host, bad, 2, nullptr, DT_FLOAT64, cpu(), count_delete, &g_deleted, &out),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, reinterpret_cast<dt_tensor*>(0x1234));
  EXPECT_EQ(g_deleted, 0);
}

TEST_F(Behaviours, BoolBytesAreNormalisedOnCopyInAndRefusedWhenBorrowed) {
  // Issue 16.5: a bool byte other than 0 or 1 was kept and read as a C bool, which is
  // undefined: sum([0, 1, 2, 255]) was 258 in release and 2 under UBSan. Copies in
  // normalise (nonzero is true, as NumPy's astype(bool)): the sum is 3.
  unsigned char bytes[4] = {0, 1, 2, 255};
  int64_t n = 4;
  T t, s;
  DT_ASSERT_OK(dt_tensor_from_data(bytes, sizeof bytes, &n, 1, DT_BOOL, cpu(), t.out()));
  EXPECT_EQ(values<unsigned char>(t), (std::vector<unsigned char>{0, 1, 1, 1}));
  DT_ASSERT_OK(dt_sum(t, nullptr, 0, 0, s.out()));
  EXPECT_EQ(values<int64_t>(s), (std::vector<int64_t>{3}));
  const unsigned char more[4] = {7, 0, 0, 128};
  DT_ASSERT_OK(dt_tensor_copy_from_host(t, more, sizeof more));
  EXPECT_EQ(values<unsigned char>(t), (std::vector<unsigned char>{1, 0, 0, 1}));
  EXPECT_EQ(bytes[2], 2) << "the caller's buffer is left alone";
  // Borrowed memory cannot be normalised without writing the caller's bytes: refused,
  // naming the element (and the deleter is not called).
  g_deleted = 0;
  dt_tensor* out = reinterpret_cast<dt_tensor*>(0x1234);
  DT_EXPECT_STATUS(dt_tensor_from_blob(bytes, &n, 1, nullptr, DT_BOOL, cpu(), count_delete, &g_deleted, &out),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("element 2"), std::string::npos) << dt_last_error_message();
  EXPECT_EQ(out, reinterpret_cast<dt_tensor*>(0x1234));
  EXPECT_EQ(g_deleted, 0);
  // Strides decide which bytes are elements: every other byte here, all 0 or 1.
  unsigned char strided[4] = {1, 9, 0, 9};
  int64_t two = 2, step = 2;
  T v;
  DT_ASSERT_OK(dt_tensor_from_blob(strided, &two, 1, &step, DT_BOOL, cpu(), nullptr, nullptr, v.out()));
  EXPECT_EQ(values<unsigned char>(v), (std::vector<unsigned char>{1, 0}));
}

TEST_F(Behaviours, BorrowedBoolChecksCostTheMemoryNotTheElementCount) {
  // Found by fuzzing DLPack imports: an expanded bool tensor (stride 0) of 2^62 elements
  // over one byte was checked element by element, for ever. A stride-0 dimension is now
  // read once, so the check is instant, and a bad byte is still named by its element.
  unsigned char one[3] = {1, 0, 1};
  int64_t huge[2] = {int64_t{1} << 40, 3}, expanded[2] = {0, 1};
  T big;
  DT_ASSERT_OK(dt_tensor_from_blob(one, huge, 2, expanded, DT_BOOL, cpu(), nullptr, nullptr, big.out()));
  unsigned char bad[3] = {1, 0, 2};
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_tensor_from_blob(bad, huge, 2, expanded, DT_BOOL, cpu(), nullptr, nullptr, &out),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("element 2 (in row-major order) of the bool tensor holds the byte 2"),
            std::string::npos)
      << dt_last_error_message();
  // Inner dimension expanded: [3, 2^40] with strides [1, 0] -> row 2 starts at element 2 * 2^40.
  int64_t tall[2] = {3, int64_t{1} << 40}, rows[2] = {1, 0};
  DT_EXPECT_STATUS(dt_tensor_from_blob(bad, tall, 2, rows, DT_BOOL, cpu(), nullptr, nullptr, &out),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("element " + std::to_string(int64_t{2} << 40) + " "),
            std::string::npos)
      << dt_last_error_message();
  // Elements that overlap ([3, 2] with strides [1, 1]: 6 elements over 4 bytes): every
  // byte they span is checked, once.
  unsigned char span[4] = {1, 0, 1, 7};
  int64_t sq[2] = {3, 2}, diag[2] = {1, 1};
  DT_EXPECT_STATUS(dt_tensor_from_blob(span, sq, 2, diag, DT_BOOL, cpu(), nullptr, nullptr, &out),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("elements overlap, and byte 3 of the memory they span holds 7"),
            std::string::npos)
      << dt_last_error_message();
  span[3] = 1;
  T overlapping;
  DT_ASSERT_OK(dt_tensor_from_blob(span, sq, 2, diag, DT_BOOL, cpu(), nullptr, nullptr, overlapping.out()));
  EXPECT_EQ(out, nullptr);
}

TEST_F(Behaviours, DataPtrIsLiveMemory) {
  int64_t n = 3;
  T t;
  DT_ASSERT_OK(dt_tensor_zeros(&n, 1, DT_INT32, cpu(), t.out()));
  int32_t* p = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(t, reinterpret_cast<void**>(&p)));
  p[1] = 42;
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{0, 42, 0}));
  DT_ASSERT_OK(dt_mul_scalar_(t, 2.0));
  EXPECT_EQ(p[1], 84);
}

TEST_F(Behaviours, LikeAndNewConstructorsKeepDeviceAndDtype) {
  int64_t shape[2] = {2, 3};
  T src;
  DT_ASSERT_OK(dt_tensor_full(shape, 2, 7.0, DT_FLOAT64, cpu(1), src.out()));
  auto check = [&](dt_tensor* t, std::vector<int64_t> want_shape) {
    dt_dtype d;
    dt_device dev;
    ASSERT_EQ(dt_tensor_dtype(t, &d), DT_OK);
    ASSERT_EQ(dt_tensor_device(t, &dev), DT_OK);
    EXPECT_EQ(d, DT_FLOAT64);
    EXPECT_EQ(dev.type, DT_DEVICE_CPU);
    EXPECT_EQ(dev.index, 1);
    EXPECT_EQ(shape_of(t), want_shape);
  };
  T z, o, e, f, r, rn;
  DT_ASSERT_OK(dt_zeros_like(src, z.out()));
  DT_ASSERT_OK(dt_ones_like(src, o.out()));
  DT_ASSERT_OK(dt_empty_like(src, e.out()));
  DT_ASSERT_OK(dt_full_like(src, 2.5, f.out()));
  DT_ASSERT_OK(dt_rand_like(src, r.out()));
  DT_ASSERT_OK(dt_randn_like(src, rn.out()));
  for (dt_tensor* t : {z.get(), o.get(), e.get(), f.get(), r.get(), rn.get()}) check(t, {2, 3});
  EXPECT_EQ(values<double>(f), std::vector<double>(6, 2.5));
  EXPECT_EQ(values<double>(o), std::vector<double>(6, 1.0));
  int64_t ns[1] = {4};
  T nz, no, ne, nf;
  DT_ASSERT_OK(dt_tensor_new_zeros(src, ns, 1, nz.out()));
  DT_ASSERT_OK(dt_tensor_new_ones(src, ns, 1, no.out()));
  DT_ASSERT_OK(dt_tensor_new_empty(src, ns, 1, ne.out()));
  DT_ASSERT_OK(dt_tensor_new_full(src, ns, 1, -1.0, nf.out()));
  for (dt_tensor* t : {nz.get(), no.get(), ne.get(), nf.get()}) check(t, {4});
  EXPECT_EQ(values<double>(nf), std::vector<double>(4, -1.0));
}

TEST_F(Behaviours, MixingLogicalCpuDevicesFailsNamingBoth) {
  size_t count = 0;
  DT_ASSERT_OK(dt_device_count(DT_DEVICE_CPU, &count));
  ASSERT_EQ(count, 2u) << "DEVTENSOR_CPU_DEVICES=2 gives two logical CPU devices";
  int64_t n = 3;
  T a, b;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(0), a.out()));
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(1), b.out()));
  dt_tensor* out = reinterpret_cast<dt_tensor*>(0x5678);
  DT_EXPECT_STATUS(dt_add(a, b, &out), DT_ERR_DEVICE_MISMATCH);
  EXPECT_EQ(out, reinterpret_cast<dt_tensor*>(0x5678));
  std::string msg = dt_last_error_message();
  EXPECT_NE(msg.find("cpu:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cpu:1"), std::string::npos) << msg;
  DT_EXPECT_STATUS(dt_matmul(a, b, &out), DT_ERR_DEVICE_MISMATCH);
  DT_EXPECT_STATUS(dt_add_(a, b), DT_ERR_DEVICE_MISMATCH);
  // A third logical CPU device does not exist.
  dt_device d2 = cpu(2);
  DT_EXPECT_STATUS(dt_tensor_ones(&n, 1, DT_FLOAT32, d2, &out), DT_ERR_INVALID_DEVICE);
  EXPECT_NE(std::string(dt_last_error_message()).find("cpu:2 requested"), std::string::npos);
}

TEST_F(Behaviours, DeviceHandlesParseFormatAndSelect) {
  dt_device d;
  DT_ASSERT_OK(dt_device_parse("cuda:2", &d));
  EXPECT_EQ(d.type, DT_DEVICE_CUDA);
  EXPECT_EQ(d.index, 2);
  DT_ASSERT_OK(dt_device_parse("cuda", &d));
  EXPECT_EQ(d.index, 0);
  DT_ASSERT_OK(dt_device_parse("cpu:1", &d));
  EXPECT_EQ(d.type, DT_DEVICE_CPU);
  EXPECT_EQ(d.index, 1);
  for (const char* bad : {"gpu", "cuda:-1", "cuda:x", "", "cpu:", "cuda:1x", "CUDA", "cuda:99999999999"}) {
    dt_device keep{77, 77};
    DT_EXPECT_STATUS(dt_device_parse(bad, &keep), DT_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(keep.type, 77) << bad;
    EXPECT_NE(std::string(dt_last_error_message()), "") << bad;
  }
  char buf[16];
  size_t need = 0;
  DT_ASSERT_OK(dt_device_format(dt_device{DT_DEVICE_CUDA, 12}, buf, sizeof buf, &need));
  EXPECT_STREQ(buf, "cuda:12");
  EXPECT_EQ(need, 8u);
  // Without a GPU: try_gpu falls back to the CPU and all_gpus is [cpu].
  if (!dt_cuda_is_available()) {
    DT_ASSERT_OK(dt_try_gpu(0, &d));
    EXPECT_EQ(d.type, DT_DEVICE_CPU);
    dt_device all[4];
    size_t count = 0;
    DT_ASSERT_OK(dt_all_gpus(all, 4, &count));
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(all[0].type, DT_DEVICE_CPU);
    DT_ASSERT_OK(dt_devices_by_free_memory(all, 4, &count));
    ASSERT_EQ(count, 1u);
    EXPECT_EQ(all[0].type, DT_DEVICE_CPU);
    int32_t state = -1;
    DT_ASSERT_OK(dt_cuda_status(&state, buf, sizeof buf, &need));
    EXPECT_NE(state, DT_CUDA_AVAILABLE);
    int64_t n = 2;
    dt_tensor* out = nullptr;
    DT_EXPECT_STATUS(dt_tensor_zeros(&n, 1, DT_FLOAT32, dt_device{DT_DEVICE_CUDA, 0}, &out), DT_ERR_DEVICE_UNAVAILABLE);
    EXPECT_NE(std::string(dt_last_error_message()).find("CUDA"), std::string::npos);
  }
}

TEST_F(Behaviours, CpuNameAndMemoryComeFromTheSystem) {
  char name[256];
  size_t need = 0;
  DT_ASSERT_OK(dt_device_name(cpu(), name, sizeof name, &need));
  EXPECT_GT(std::strlen(name), 0u);
  uint64_t free_b = 0, total_b = 0;
  DT_ASSERT_OK(dt_device_memory(cpu(), &free_b, &total_b));
  EXPECT_GT(total_b, uint64_t{1} << 28);
  EXPECT_LE(free_b, total_b);
  dt_device_props p;
  p.struct_size = sizeof p;
  DT_ASSERT_OK(dt_device_properties(cpu(1), &p));
  EXPECT_EQ(p.device.index, 1);
  EXPECT_STREQ(p.name, name);
  EXPECT_GE(p.multiprocessor_count, 1);
}

TEST_F(Behaviours, DefaultDeviceAndDtypeApplyOnlyToTheSentinel) {
  int64_t n = 2;
  DT_ASSERT_OK(dt_set_default_dtype(DT_FLOAT64));
  DT_ASSERT_OK(dt_set_default_device(cpu(1)));
  T a, b;
  DT_ASSERT_OK(dt_tensor_zeros(&n, 1, DT_DTYPE_DEFAULT, dt_device{DT_DEVICE_DEFAULT, 0}, a.out()));
  DT_ASSERT_OK(dt_tensor_zeros(&n, 1, DT_FLOAT32, cpu(0), b.out()));
  dt_dtype d;
  dt_device dev;
  DT_ASSERT_OK(dt_tensor_dtype(a, &d));
  DT_ASSERT_OK(dt_tensor_device(a, &dev));
  EXPECT_EQ(d, DT_FLOAT64);
  EXPECT_EQ(dev.index, 1);
  DT_ASSERT_OK(dt_tensor_dtype(b, &d));
  EXPECT_EQ(d, DT_FLOAT32);
  DT_EXPECT_STATUS(dt_set_default_dtype(DT_INT32), DT_ERR_DTYPE_MISMATCH);
  DT_ASSERT_OK(dt_set_default_dtype(DT_FLOAT32));
  DT_ASSERT_OK(dt_set_default_device(cpu(0)));
}

// Philox4x32-10 known-answer vectors (Random123's kat_vectors): with seed 0 and a fresh
// offset, the first four float32 uniforms are the first block's words >> 8 over 2^24.
TEST_F(Behaviours, RandIsPhiloxIndexedByElement) {
  DT_ASSERT_OK(dt_manual_seed(0));
  int64_t n = 4;
  T r;
  DT_ASSERT_OK(dt_tensor_rand(&n, 1, DT_FLOAT32, cpu(), r.out()));
  const uint32_t kat[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  std::vector<float> v = values<float>(r);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[i], static_cast<float>(kat[i] >> 8) / 16777216.0f) << i;
  // Key (0xa4093822, 0x299f31d0) at counter 0: seed = k0 | k1 << 32.
  DT_ASSERT_OK(dt_manual_seed(0x299f31d0a4093822ull));
  // Counter (0x243f6a88, 0x85a308d3, ...) is not reachable from offset 0; check instead
  // that the same seed reproduces the stream and a new call continues it.
  T r1, r2, r3;
  int64_t big = 100003;
  DT_ASSERT_OK(dt_tensor_rand(&big, 1, DT_FLOAT32, cpu(), r1.out()));
  DT_ASSERT_OK(dt_tensor_rand(&big, 1, DT_FLOAT32, cpu(), r2.out()));
  DT_ASSERT_OK(dt_manual_seed(0x299f31d0a4093822ull));
  DT_ASSERT_OK(dt_set_num_threads(1));
  DT_ASSERT_OK(dt_tensor_rand(&big, 1, DT_FLOAT32, cpu(), r3.out()));
  DT_ASSERT_OK(dt_set_num_threads(2));
  std::vector<float> a = values<float>(r1), b = values<float>(r2), c = values<float>(r3);
  EXPECT_EQ(a, c) << "same seed, same values, whatever the thread count";
  EXPECT_NE(a, b) << "the second call continues the stream";
  double mean = 0;
  for (float x : a) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    mean += x;
  }
  EXPECT_NEAR(mean / big, 0.5, 0.01);
}

TEST_F(Behaviours, RandnHasUnitVarianceAndDeviceSeedsAreSeparate) {
  DT_ASSERT_OK(dt_manual_seed(7));
  int64_t n = 200000;
  T x;
  DT_ASSERT_OK(dt_tensor_randn(&n, 1, DT_FLOAT64, cpu(), x.out()));
  std::vector<double> v = values<double>(x);
  double m = 0, s = 0;
  for (double e : v) m += e;
  m /= n;
  for (double e : v) s += (e - m) * (e - m);
  s /= n;
  EXPECT_NEAR(m, 0.0, 0.01);
  EXPECT_NEAR(s, 1.0, 0.02);
  // Seeding cpu:1 alone leaves cpu:0's stream where it was.
  int64_t k = 8;
  DT_ASSERT_OK(dt_manual_seed(1));
  T a0, a1;
  DT_ASSERT_OK(dt_tensor_rand(&k, 1, DT_FLOAT32, cpu(0), a0.out()));
  DT_ASSERT_OK(dt_device_manual_seed(cpu(1), 1));
  DT_ASSERT_OK(dt_tensor_rand(&k, 1, DT_FLOAT32, cpu(1), a1.out()));
  EXPECT_EQ(values<float>(a0), values<float>(a1)) << "same seed and offset on two devices";
  DT_EXPECT_STATUS(dt_tensor_rand(&k, 1, DT_INT32, cpu(), a0.out()), DT_ERR_DTYPE_MISMATCH);
}

TEST_F(Behaviours, ResultsDoNotDependOnTheThreadCount) {
  DT_ASSERT_OK(dt_manual_seed(3));
  int64_t n = 1 << 20;
  T x;
  DT_ASSERT_OK(dt_tensor_randn(&n, 1, DT_FLOAT32, cpu(), x.out()));
  std::vector<float> sums;
  for (int threads : {1, 2, 3}) {
    DT_ASSERT_OK(dt_set_num_threads(threads));
    T s;
    DT_ASSERT_OK(dt_sum(x, nullptr, 0, 0, s.out()));
    sums.push_back(values<float>(s)[0]);
  }
  DT_ASSERT_OK(dt_set_num_threads(2));
  EXPECT_EQ(sums[0], sums[1]);
  EXPECT_EQ(sums[0], sums[2]);
  int32_t nt = 0;
  DT_ASSERT_OK(dt_num_threads(&nt));
  EXPECT_EQ(nt, 2);
  DT_EXPECT_STATUS(dt_set_num_threads(0), DT_ERR_INVALID_ARGUMENT);
}

// float32 products are cut into blocks by shape alone (src/cpu/gemm.h): rows, columns
// (a short, wide product), a batch, a transposed operand. Each gives the float64 product
// within float32's rounding, and, on oneDNN's sgemm, the same bits on 1 to 4 threads (a
// build without oneDNN, such as the TSan one, runs OpenBLAS's own threads, whose split
// and so last bits follow the thread count: dt_build_info says which path it is).
TEST_F(Behaviours, MatmulIsExactToRoundingAndDoesNotDependOnTheThreadCount) {
  const bool blocked = build_info_text().find("cpu matrix products (float32): oneDNN") != std::string::npos;
  struct Case {
    std::vector<int64_t> a, b;
    bool transpose_a;
  };
  const Case cases[] = {{{512, 256}, {256, 512}, false},      // 8 blocks of rows
                        {{32, 512}, {512, 2048}, false},      // blocks of columns
                        {{6, 100, 64}, {6, 64, 130}, false},  // a batch
                        {{256, 384}, {256, 200}, true}};      // a^T as a BLAS flag
  DT_ASSERT_OK(dt_manual_seed(11));
  for (const Case& c : cases) {
    T a, b, at;
    DT_ASSERT_OK(dt_tensor_randn(c.a.data(), c.a.size(), DT_FLOAT32, cpu(), a.out()));
    DT_ASSERT_OK(dt_tensor_randn(c.b.data(), c.b.size(), DT_FLOAT32, cpu(), b.out()));
    dt_tensor* lhs = a;
    if (c.transpose_a) {
      DT_ASSERT_OK(dt_transpose(a, 0, 1, at.out()));
      lhs = at;
    }
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 3, 4}) {
      DT_ASSERT_OK(dt_set_num_threads(threads));
      T out;
      DT_ASSERT_OK(dt_matmul(lhs, b, out.out()));
      results.push_back(values<float>(out));
    }
    DT_ASSERT_OK(dt_set_num_threads(2));
    for (size_t i = 1; blocked && i < results.size(); ++i)
      EXPECT_EQ(results[0], results[i]) << "shape case " << (&c - cases) << ", thread count #" << i;
    // The float64 product of the same float32 values.
    const std::vector<float> av = values<float>(lhs), bv = values<float>(b);
    const bool batched = c.a.size() == 3;
    const int64_t B = batched ? c.a[0] : 1, K = c.b[c.b.size() - 2], N = c.b.back();
    const int64_t M = static_cast<int64_t>(av.size()) / (B * K);
    double worst = 0;
    for (int64_t i = 0; i < B; ++i)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += double(av[size_t((i * M + m) * K + k)]) * double(bv[size_t((i * K + k) * N + n)]);
          for (const std::vector<float>& r : results)
            worst = std::max(worst, std::abs(acc - double(r[size_t((i * M + m) * N + n)])));
        }
    EXPECT_LT(worst, 2e-4 * std::sqrt(double(K))) << "shape case " << (&c - cases);
  }
}

// Sums over one strided dim into contiguous outputs (a bias gradient) add whole rows;
// the other layouts reduce each output alone. Integer-valued floats: the sums are exact.
TEST_F(Behaviours, ColumnSumsAndMeansAreExact) {
  const int64_t rows = 300, cols = 70;
  std::vector<float> x(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) x[size_t(i * cols + j)] = float((i * 7 + j * 3) % 23) - 11.0f;
  std::vector<float> col_sum(size_t(cols), 0.0f);
  for (int64_t j = 0; j < cols; ++j) {
    double s = 0;
    for (int64_t i = 0; i < rows; ++i) s += x[size_t(i * cols + j)];
    col_sum[size_t(j)] = float(s);
  }
  const int64_t shape[2] = {rows, cols};
  T t, tt;
  DT_ASSERT_OK(dt_tensor_from_data(x.data(), x.size() * 4, shape, 2, DT_FLOAT32, cpu(), t.out()));
  DT_ASSERT_OK(dt_transpose(t, 0, 1, tt.out()));  // [cols, rows], summed over its dim 1
  const int64_t d0 = 0, d1 = 1;
  T s0, s1, m0;
  DT_ASSERT_OK(dt_sum(t, &d0, 1, 0, s0.out()));
  DT_ASSERT_OK(dt_sum(tt, &d1, 1, 1, s1.out()));
  DT_ASSERT_OK(dt_mean(t, &d0, 1, 0, m0.out()));
  EXPECT_EQ(values<float>(s0), col_sum);
  EXPECT_EQ(values<float>(s1), col_sum);
  EXPECT_EQ(shape_of(s1), (std::vector<int64_t>{cols, 1}));
  std::vector<float> mean = values<float>(m0);
  for (int64_t j = 0; j < cols; ++j) EXPECT_FLOAT_EQ(mean[size_t(j)], float(double(col_sum[size_t(j)]) / rows)) << j;
}

// where(cond, a, 0-d b) on dense rows (autograd's ReLU gradient) takes a vector select
// (8 lanes, then a tail): it must still pick a's NaN and infinity where cond holds, and b
// elsewhere, in every lane.
TEST_F(Behaviours, WhereWithADenseConditionPicksEachSide) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float pattern[7] = {1, nan, -inf, 4, nan, 6, inf};
  const int64_t n = 21;  // two full vectors and a tail of 5
  std::vector<float> a(n), neg_a(n);
  std::vector<uint8_t> c(n);
  for (int64_t i = 0; i < n; ++i) {
    a[size_t(i)] = pattern[i % 7] + float(i % 7 == 0 ? i : 0);
    neg_a[size_t(i)] = -a[size_t(i)];
    c[size_t(i)] = uint8_t((i * 5 + i / 7) % 3 == 0);
  }
  const float fill = -0.5f;
  T at, ct, bt, nt, out, out2;
  DT_ASSERT_OK(dt_tensor_from_data(a.data(), a.size() * 4, &n, 1, DT_FLOAT32, cpu(), at.out()));
  DT_ASSERT_OK(dt_tensor_from_data(c.data(), c.size(), &n, 1, DT_BOOL, cpu(), ct.out()));
  DT_ASSERT_OK(dt_tensor_from_data(&fill, 4, nullptr, 0, DT_FLOAT32, cpu(), bt.out()));
  DT_ASSERT_OK(dt_tensor_from_data(neg_a.data(), neg_a.size() * 4, &n, 1, DT_FLOAT32, cpu(), nt.out()));
  DT_ASSERT_OK(dt_where(ct, at, bt, out.out()));
  DT_ASSERT_OK(dt_where(ct, at, nt, out2.out()));
  const std::vector<float> got = values<float>(out), got2 = values<float>(out2);
  ASSERT_EQ(got.size(), size_t(n));
  ASSERT_EQ(got2.size(), size_t(n));
  auto same = [](float x, float y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  for (int64_t i = 0; i < n; ++i) {
    const float want = c[size_t(i)] ? a[size_t(i)] : fill, want2 = c[size_t(i)] ? a[size_t(i)] : neg_a[size_t(i)];
    EXPECT_TRUE(same(got[size_t(i)], want)) << "element " << i << ": " << got[size_t(i)] << " vs " << want;
    EXPECT_TRUE(same(got2[size_t(i)], want2)) << "element " << i << ": " << got2[size_t(i)] << " vs " << want2;
  }
}

TEST_F(Behaviours, LargeOutputsReuseCachedHostBlocks) {
  int64_t n = 1 << 22;  // 16 MiB of float32
  T a;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(), a.out()));
  { T warm; DT_ASSERT_OK(dt_add(a, a, warm.out())); }
  dt_mem_stats before, after;
  before.struct_size = after.struct_size = sizeof(dt_mem_stats);
  DT_ASSERT_OK(dt_memory_stats(cpu(), &before));
  for (int i = 0; i < 20; ++i) {
    T c;
    DT_ASSERT_OK(dt_add(a, a, c.out()));
  }
  DT_ASSERT_OK(dt_memory_stats(cpu(), &after));
  EXPECT_EQ(after.system_allocation_count, before.system_allocation_count)
      << "a steady loop allocating fresh 16 MiB outputs must be served from the cache";
  EXPECT_EQ(after.allocation_count, before.allocation_count + 20);
  EXPECT_GE(after.peak_allocated_bytes, after.allocated_bytes);
  DT_ASSERT_OK(dt_empty_cache(cpu()));
  dt_mem_stats emptied;
  emptied.struct_size = sizeof emptied;
  DT_ASSERT_OK(dt_memory_stats(cpu(), &emptied));
  EXPECT_LT(emptied.reserved_bytes, after.reserved_bytes);
}

TEST_F(Behaviours, ViewsShareStorageAndWritesShowThrough) {
  T a;
  DT_ASSERT_OK(dt_tensor_arange(0, 12, 1, DT_FLOAT32, cpu(), a.out()));
  int64_t shape[2] = {3, 4};
  T v, t, n;
  DT_ASSERT_OK(dt_view(a, shape, 2, v.out()));
  DT_ASSERT_OK(dt_transpose(v, 0, 1, t.out()));
  DT_ASSERT_OK(dt_narrow(t, 0, 1, 2, n.out()));  // columns 1..2 of v
  int32_t shares = 0, contig = 1;
  DT_ASSERT_OK(dt_tensor_shares_storage(a, n, &shares));
  DT_ASSERT_OK(dt_tensor_is_contiguous(t, &contig));
  EXPECT_EQ(shares, 1);
  EXPECT_EQ(contig, 0);
  DT_ASSERT_OK(dt_mul_scalar_(n, 10.0));
  EXPECT_EQ(values<float>(a), (std::vector<float>{0, 10, 20, 3, 4, 50, 60, 7, 8, 90, 100, 11}));
  int64_t bad[1] = {12};
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_view(t, bad, 1, &out), DT_ERR_SHAPE_MISMATCH);  // not viewable
  T r;
  DT_ASSERT_OK(dt_reshape(t, bad, 1, r.out()));  // reshape copies instead
  DT_ASSERT_OK(dt_tensor_shares_storage(a, r, &shares));
  EXPECT_EQ(shares, 0);
}

TEST_F(Behaviours, ErrorMessagesArePerThread) {
  dt_device d;
  std::string m1, m2;
  std::thread t1([&] {
    dt_device_parse("gpu", &d);
    m1 = dt_last_error_message();
  });
  t1.join();
  std::thread t2([&] {
    dt_set_num_threads(-5);
    m2 = dt_last_error_message();
  });
  t2.join();
  EXPECT_NE(m1.find("gpu"), std::string::npos) << m1;
  EXPECT_NE(m2.find("-5"), std::string::npos) << m2;
}

// Regressions of the bugs fuzzing found (fuzz/regressions/fuzz_ops/ replays the inputs).
namespace {
TEST(FuzzRegressions, SizeArithmeticAndIntegerWrapping) {
  // int16 multiplication wraps as PyTorch's does (it overflowed int before: UB)
  const int16_t v[] = {-3510};
  const int64_t one = 1;
  T a, p;
  DT_ASSERT_OK(dt_tensor_from_data(v, sizeof v, &one, 1, DT_INT16, cpu(), a.out()));
  DT_ASSERT_OK(dt_mul(a, a, p.out()));
  EXPECT_EQ(values<int16_t>(p), std::vector<int16_t>{-668});  // 12320100 mod 2^16
  // an allocation no machine can serve fails instead of looping forever
  const int64_t huge = INT64_MAX;
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_tensor_empty(&huge, 1, DT_INT16, cpu(), &out), DT_ERR_OUT_OF_MEMORY);
  // views whose element count overflows are refused
  const int64_t ones[] = {1, 1}, big[] = {INT64_MAX, 2};
  T small;
  DT_ASSERT_OK(dt_tensor_zeros(ones, 2, DT_FLOAT32, cpu(), small.out()));
  DT_EXPECT_STATUS(dt_expand(small, big, 2, &out), DT_ERR_INVALID_ARGUMENT);
  // cat whose size along the dim overflows is refused
  const int64_t zero = 0, wide[] = {INT64_MAX, 0};
  T empty, x;
  DT_ASSERT_OK(dt_tensor_zeros(&zero, 1, DT_FLOAT32, cpu(), empty.out()));
  DT_ASSERT_OK(dt_reshape(empty, wide, 2, x.out()));
  const dt_tensor* both[] = {x, x};
  DT_EXPECT_STATUS(dt_cat(both, 2, 0, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  // split and chunk with counts near INT64_MAX: torch.split(5 rows, INT64_MAX) gives one
  // piece and torch.chunk(5 rows, 2**62) five of one row, and so does chunk with
  // INT64_MAX here (ceil(5 / INT64_MAX) = 1), where PyTorch's own arithmetic overflows.
  // fuzz_ops found (size + split_size - 1) / split_size overflowing.
  T five;
  const int64_t n5 = 5;
  DT_ASSERT_OK(dt_tensor_zeros(&n5, 1, DT_FLOAT32, cpu(), five.out()));
  size_t count = 0;
  DT_ASSERT_OK(dt_split(five, INT64_MAX, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 1u);
  DT_ASSERT_OK(dt_chunk(five, INT64_MAX, 0, nullptr, 0, &count));
  EXPECT_EQ(count, 5u);
  // A sizing call makes no piece: an empty dim chunked INT64_MAX ways (PyTorch's rule:
  // that many empty pieces) and a split of INT64_MAX expanded int8 rows by 2 are counted,
  // not built (fuzz_ops ran out of memory building them).
  T empty1, one_byte, rows;
  DT_ASSERT_OK(dt_tensor_zeros(&zero, 1, DT_FLOAT32, cpu(), empty1.out()));
  DT_ASSERT_OK(dt_chunk(empty1, INT64_MAX, 0, nullptr, 0, &count));
  EXPECT_EQ(count, static_cast<size_t>(INT64_MAX));
  const int64_t single = 1;
  DT_ASSERT_OK(dt_tensor_zeros(&single, 1, DT_INT8, cpu(), one_byte.out()));
  DT_ASSERT_OK(dt_expand(one_byte, &huge, 1, rows.out()));
  DT_ASSERT_OK(dt_split(rows, 2, 0, nullptr, 0, &count));
  EXPECT_EQ(count, static_cast<size_t>(INT64_MAX / 2 + 1));
  // A view whose byte offset overflows int64 is refused (PyTorch keeps such an offset on
  // an empty view; here Tensor::data() would overflow computing it: found by fuzz_ops).
  const int64_t wide_empty[] = {0, int64_t{1} << 62};
  T e2, deep;
  DT_ASSERT_OK(dt_tensor_zeros(wide_empty, 2, DT_FLOAT32, cpu(), e2.out()));
  DT_EXPECT_STATUS(dt_narrow(e2, 1, int64_t{1} << 61, 1, deep.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("byte offsets"), std::string::npos) << dt_last_error_message();
  DT_ASSERT_OK(dt_narrow(e2, 1, int64_t{1} << 59, 1, deep.out()));  // 2^61 bytes: fine
  // The element offset itself past int64 (start INT64_MAX along a dim of stride 3): refused
  // too, before it is computed (found by fuzz_nn, through a convolution's padded copy of an
  // empty batch).
  const int64_t tall_empty[] = {0, INT64_MAX, 3};
  T e3, none;
  DT_ASSERT_OK(dt_tensor_zeros(tall_empty, 3, DT_FLOAT32, cpu(), e3.out()));
  DT_EXPECT_STATUS(dt_narrow(e3, 1, INT64_MAX, 0, none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("past int64"), std::string::npos) << dt_last_error_message();
}
}  // namespace

// An in-place op whose other operand shares part of self's memory reads it as it was
// before the op (NumPy's answer; PyTorch refuses): a + a^T is symmetric, and a shifted
// add of a narrow view is not a running sum. Hand-computed from a = 0..8 and b = 0..5.
TEST_F(Behaviours, InPlaceOpsReadAnOverlappingOperandAsItWasBefore) {
  const int64_t s33[2] = {3, 3}, n6 = 6;
  T a, at, b, tail, head;
  DT_ASSERT_OK(dt_tensor_arange(0, 9, 1, DT_FLOAT32, cpu(), a.out()));
  T a33;
  DT_ASSERT_OK(dt_reshape(a, s33, 2, a33.out()));
  DT_ASSERT_OK(dt_transpose(a33, 0, 1, at.out()));
  DT_ASSERT_OK(dt_add_(a33, at));
  EXPECT_EQ(values<float>(a33), (std::vector<float>{0, 4, 8, 4, 8, 12, 8, 12, 16}));

  DT_ASSERT_OK(dt_tensor_arange(0, static_cast<double>(n6), 1, DT_FLOAT64, cpu(), b.out()));
  DT_ASSERT_OK(dt_narrow(b, 0, 1, 5, tail.out()));
  DT_ASSERT_OK(dt_narrow(b, 0, 0, 5, head.out()));
  DT_ASSERT_OK(dt_add_(tail, head));  // b[1:] += b[:5]
  EXPECT_EQ(values<double>(b), (std::vector<double>{0, 1, 3, 5, 7, 9}));
  DT_ASSERT_OK(dt_mul_(head, tail));  // b[:5] *= b[1:], the other direction
  EXPECT_EQ(values<double>(b), (std::vector<double>{0, 3, 15, 35, 63, 9}));

  // The identical view is no overlap to work around: x += x doubles every element.
  DT_ASSERT_OK(dt_add_(b, b));
  EXPECT_EQ(values<double>(b), (std::vector<double>{0, 6, 30, 70, 126, 18}));
}

// Writing into a tensor with two elements at one address (an expanded tensor, a stride of
// 0 from dt_tensor_from_blob) is refused, with self untouched, instead of a result that
// depends on the order of the writes (and on the thread count).
TEST_F(Behaviours, InPlaceWritesIntoAnExpandedTensorAreRefused) {
  const int64_t one = 1, big = 100000;
  T y, ey;
  DT_ASSERT_OK(dt_tensor_zeros(&one, 1, DT_FLOAT64, cpu(), y.out()));
  DT_ASSERT_OK(dt_expand(y, &big, 1, ey.out()));
  DT_EXPECT_STATUS(dt_add_scalar_(ey, 1.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "add_: more than one element of the written-to tensor"))
      << dt_last_error_message();
  T ones;
  DT_ASSERT_OK(dt_tensor_ones(&big, 1, DT_FLOAT64, cpu(), ones.out()));
  DT_EXPECT_STATUS(dt_add_(ey, ones), DT_ERR_INVALID_ARGUMENT);
  std::vector<double> host(static_cast<size_t>(big), 2.0);
  DT_EXPECT_STATUS(dt_tensor_copy_from_host(ey, host.data(), host.size() * sizeof(double)), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "copy_from_host")) << dt_last_error_message();
  EXPECT_EQ(values<double>(y), std::vector<double>{0.0});

  float blob[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 4}, strides[2] = {0, 1};
  T rows;
  DT_ASSERT_OK(dt_tensor_from_blob(blob, shape, 2, strides, DT_FLOAT32, cpu(), nullptr, nullptr, rows.out()));
  DT_EXPECT_STATUS(dt_mul_scalar_(rows, 2.0), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(blob[0], 1.0f);
  EXPECT_EQ(blob[3], 4.0f);
  // Reading an expanded tensor stays fine, and so does writing into its source.
  DT_ASSERT_OK(dt_add_scalar_(y, 1.0));
  T sum;
  DT_ASSERT_OK(dt_sum(ey, nullptr, 0, 0, sum.out()));
  EXPECT_EQ(values<double>(sum), std::vector<double>{static_cast<double>(big)});
}

// dt_copy_ is PyTorch's self.copy_(src): values written into self's own memory (a view
// of it sees them), src broadcast to self's shape and cast to its dtype, from another
// device too, and into a strided view. Expectations hand-computed.
TEST_F(Behaviours, CopyIntoATensorBroadcastsCastsAndCrossesDevices) {
  const int64_t s23[2] = {2, 3}, n3 = 3;
  T dst, row, col_view, ints, other, dst_t;
  DT_ASSERT_OK(dt_tensor_zeros(s23, 2, DT_FLOAT64, cpu(), dst.out()));
  const float rv[3] = {1.5f, -2.0f, 4.0f};
  DT_ASSERT_OK(dt_tensor_from_data(rv, sizeof rv, &n3, 1, DT_FLOAT32, cpu(), row.out()));
  DT_ASSERT_OK(dt_narrow(dst, 1, 2, 1, col_view.out()));  // dst[:, 2:3], a view
  DT_ASSERT_OK(dt_copy_(dst, row, 0));                     // [3] float32 -> [2, 3] float64
  EXPECT_EQ(values<double>(dst), (std::vector<double>{1.5, -2, 4, 1.5, -2, 4}));
  EXPECT_EQ(values<double>(col_view), (std::vector<double>{4, 4})) << "the view sees the copied values";

  // Into an int32 tensor: float to int truncates toward zero, as dt_tensor_to.
  DT_ASSERT_OK(dt_tensor_zeros(&n3, 1, DT_INT32, cpu(), ints.out()));
  DT_ASSERT_OK(dt_copy_(ints, row, 0));
  EXPECT_EQ(values<int32_t>(ints), (std::vector<int32_t>{1, -2, 4}));

  // From cpu:1 into a transposed (strided) view on cpu:0.
  const double ov[6] = {10, 20, 30, 40, 50, 60};
  const int64_t s32[2] = {3, 2};
  DT_ASSERT_OK(dt_tensor_from_data(ov, sizeof ov, s32, 2, DT_FLOAT64, cpu(1), other.out()));
  DT_ASSERT_OK(dt_transpose(dst, 0, 1, dst_t.out()));  // [3, 2] view of dst
  DT_ASSERT_OK(dt_copy_(dst_t, other, 0));
  EXPECT_EQ(values<double>(dst), (std::vector<double>{10, 30, 50, 20, 40, 60}));
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(dst, &d));
  EXPECT_EQ(d.index, 0) << "self keeps its device";

  // A source overlapping self is read as it was before: dst[1] = dst[0] via views.
  T r0, r1;
  DT_ASSERT_OK(dt_narrow(dst, 0, 0, 1, r0.out()));
  DT_ASSERT_OK(dt_narrow(dst, 0, 1, 1, r1.out()));
  DT_ASSERT_OK(dt_copy_(r1, r0, 0));
  EXPECT_EQ(values<double>(dst), (std::vector<double>{10, 30, 50, 10, 30, 50}));

  // Failures leave self alone, with a message naming both shapes.
  T four;
  const int64_t n4 = 4;
  DT_ASSERT_OK(dt_tensor_ones(&n4, 1, DT_FLOAT32, cpu(), four.out()));
  DT_EXPECT_STATUS(dt_copy_(dst, four, 0), DT_ERR_SHAPE_MISMATCH);
  EXPECT_TRUE(has(dt_last_error_message(), "[4] does not broadcast to the destination's shape [2, 3]"))
      << dt_last_error_message();
  EXPECT_EQ(values<double>(dst), (std::vector<double>{10, 30, 50, 10, 30, 50}));
}

// An in-place copy is not recorded by autograd: refused in grad mode when either side
// requires grad (the message says what to do), allowed with grad mode off, as PyTorch's
// parameter copies under torch.no_grad().
TEST_F(Behaviours, CopyIntoATensorThatRequiresGradNeedsGradModeOff) {
  const int64_t n2 = 2;
  T w, src;
  DT_ASSERT_OK(dt_tensor_zeros(&n2, 1, DT_FLOAT32, cpu(), w.out()));
  DT_ASSERT_OK(dt_tensor_full(&n2, 1, 3.0, DT_FLOAT32, cpu(), src.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(w, 1));
  DT_EXPECT_STATUS(dt_copy_(w, src, 0), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "the destination requires grad")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_copy_(src, w, 0), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "the source requires grad")) << dt_last_error_message();
  EXPECT_EQ(values<float>(w), (std::vector<float>{0, 0}));
  DT_ASSERT_OK(dt_set_grad_enabled(0));
  const dt_status s = dt_copy_(w, src, 0);
  DT_ASSERT_OK(dt_set_grad_enabled(1));
  DT_ASSERT_OK(s);
  EXPECT_EQ(values<float>(w), (std::vector<float>{3, 3}));
}
