// DLPack in and out through the C ABI: the fields an export carries, imports of every
// dtype and layout, ownership (each deleter runs exactly once, whichever side lets go
// last; a refused import never calls it), and every refusal's status. The zero-copy
// round trips with PyTorch and NumPy are tests/dlpack/test_dlpack_torch.py.
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "support/dt_test.h"

namespace {

// A producer's tensor: float data owned by the test, a counted deleter.
struct Producer {
  DLManagedTensor managed{};
  std::vector<float> data;
  int64_t shape[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  int deleted = 0;

  Producer(std::vector<float> values, std::vector<int64_t> dims, std::vector<int64_t> steps = {})
      : data(std::move(values)) {
    DLTensor& d = managed.dl_tensor;
    d.data = data.data();
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = static_cast<int32_t>(dims.size());
    d.dtype = DLDataType{kDLFloat, 32, 1};
    for (size_t i = 0; i < dims.size(); ++i) shape[i] = dims[i];
    d.shape = shape;
    if (!steps.empty()) {
      for (size_t i = 0; i < steps.size(); ++i) strides[i] = steps[i];
      d.strides = strides;
    }
    d.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

std::vector<float> read_floats(dt_tensor* t) {
  size_t n = 0;
  EXPECT_EQ(dt_tensor_numel(t, &n), DT_OK);
  std::vector<float> v(n);
  EXPECT_EQ(dt_tensor_copy_to_host(t, v.data(), n * sizeof(float)), DT_OK) << dt_last_error_message();
  return v;
}

class Dlpack : public ::testing::Test {
 protected:
  void SetUp() override { live_ = dt_live_handle_count(); }
  void TearDown() override { EXPECT_EQ(dt_live_handle_count(), live_) << "leaked handles"; }
  size_t live_ = 0;
};

TEST_F(Dlpack, ExportCarriesTheTensorsMemoryShapeStridesAndDtype) {
  const int64_t shape[] = {2, 3};
  T a, at;
  DT_ASSERT_OK(dt_tensor_arange(0, 6, 1, DT_FLOAT32, cpu(), a.out()));
  T a23;
  DT_ASSERT_OK(dt_reshape(a, shape, 2, a23.out()));
  DT_ASSERT_OK(dt_transpose(a23, 0, 1, at.out()));  // [3, 2], strides {1, 3}
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(at, &m));
  ASSERT_NE(m, nullptr);
  void* ptr = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(at, &ptr));
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.data, ptr);
  EXPECT_EQ(d.byte_offset, 0u);
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 3);
  EXPECT_EQ(d.shape[1], 2);
  EXPECT_EQ(d.strides[0], 1);
  EXPECT_EQ(d.strides[1], 3);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 32);
  EXPECT_EQ(d.dtype.lanes, 1);
  // The export keeps the memory alive after every handle is gone (ASan would see a
  // use after free otherwise).
  a = T();
  a23 = T();
  at = T();
  const float* f = static_cast<const float*>(d.data);
  EXPECT_EQ(f[d.strides[0] * 2 + d.strides[1] * 1], 5.0f);  // element [2][1] of the transpose
  m->deleter(m);
}

TEST_F(Dlpack, EveryDtypeExportsWithItsDlpackCode) {
  struct Want {
    dt_dtype dtype;
    uint8_t code, bits;
  };
  const Want wants[] = {{DT_BOOL, 6, 8},       {DT_UINT8, kDLUInt, 8},     {DT_INT8, kDLInt, 8},
                        {DT_INT16, kDLInt, 16}, {DT_INT32, kDLInt, 32},     {DT_INT64, kDLInt, 64},
                        {DT_FLOAT16, kDLFloat, 16}, {DT_BFLOAT16, kDLBfloat, 16}, {DT_FLOAT32, kDLFloat, 32},
                        {DT_FLOAT64, kDLFloat, 64}};
  const int64_t shape[] = {3};
  for (const Want& w : wants) {
    T t, back;
    DT_ASSERT_OK(dt_tensor_ones(shape, 1, w.dtype, cpu(), t.out()));
    DLManagedTensor* m = nullptr;
    DT_ASSERT_OK(dt_tensor_to_dlpack(t, &m));
    EXPECT_EQ(m->dl_tensor.dtype.code, w.code) << dt_dtype_name(w.dtype);
    EXPECT_EQ(m->dl_tensor.dtype.bits, w.bits) << dt_dtype_name(w.dtype);
    // and imports back as the same dtype, over the same memory
    DT_ASSERT_OK(dt_tensor_from_dlpack(m, back.out()));
    dt_dtype got;
    DT_ASSERT_OK(dt_tensor_dtype(back, &got));
    EXPECT_EQ(got, w.dtype);
    int32_t shares = 0;
    DT_ASSERT_OK(dt_tensor_shares_storage(t, back, &shares));
    void *p1 = nullptr, *p2 = nullptr;
    DT_ASSERT_OK(dt_tensor_data_ptr(t, &p1));
    DT_ASSERT_OK(dt_tensor_data_ptr(back, &p2));
    EXPECT_EQ(p1, p2) << "the round trip copied";
  }
}

TEST_F(Dlpack, ImportIsZeroCopyAndTheDeleterRunsOnceWhenTheLastViewGoes) {
  Producer p({1, 2, 3, 4, 5, 6}, {2, 3});
  T t;
  DT_ASSERT_OK(dt_tensor_from_dlpack(&p.managed, t.out()));
  void* ptr = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(t, &ptr));
  EXPECT_EQ(ptr, p.data.data());
  EXPECT_EQ(read_floats(t), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Writes are seen by the producer.
  DT_ASSERT_OK(dt_add_scalar_(t, 10));
  EXPECT_EQ(p.data[0], 11.0f);
  // A view outlives the imported handle: the memory stays the view's.
  T view;
  DT_ASSERT_OK(dt_transpose(t, 0, 1, view.out()));
  t = T();
  EXPECT_EQ(p.deleted, 0);
  EXPECT_EQ(read_floats(view), (std::vector<float>{11, 14, 12, 15, 13, 16}));
  view = T();
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(Dlpack, RoundTripReleasesInEitherOrderAndDeletesOnce) {
  for (bool export_side_last : {false, true}) {
    const int64_t shape[] = {4};
    T a, b;
    DT_ASSERT_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, cpu(), a.out()));
    DLManagedTensor* m = nullptr;
    DT_ASSERT_OK(dt_tensor_to_dlpack(a, &m));
    // Count the export's deleter by wrapping it.
    static int calls;
    static void (*original)(DLManagedTensor*);
    calls = 0;
    original = m->deleter;
    m->deleter = [](DLManagedTensor* self) {
      ++calls;
      original(self);
    };
    DT_ASSERT_OK(dt_tensor_from_dlpack(m, b.out()));
    DT_ASSERT_OK(dt_add_scalar_(b, 1));
    EXPECT_EQ(read_floats(a), (std::vector<float>{2, 2, 2, 2})) << "a write through the import is not seen";
    if (export_side_last) {
      b = T();
      EXPECT_EQ(calls, 1);
      EXPECT_EQ(read_floats(a), (std::vector<float>{2, 2, 2, 2}));
      a = T();
    } else {
      a = T();
      EXPECT_EQ(calls, 0);
      EXPECT_EQ(read_floats(b), (std::vector<float>{2, 2, 2, 2}));
      b = T();
    }
    EXPECT_EQ(calls, 1);
  }
}

TEST_F(Dlpack, StridesAndByteOffsetAreHonoured) {
  // shape [3, 2] over a column-major 2x3 block, starting 2 floats in.
  Producer p({-1, -2, 1, 2, 3, 4, 5, 6}, {3, 2}, {1, 3});
  p.managed.dl_tensor.byte_offset = 2 * sizeof(float);
  T t;
  DT_ASSERT_OK(dt_tensor_from_dlpack(&p.managed, t.out()));
  EXPECT_EQ(read_floats(t), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  int32_t contiguous = 1;
  DT_ASSERT_OK(dt_tensor_is_contiguous(t, &contiguous));
  EXPECT_EQ(contiguous, 0);
  t = T();
  EXPECT_EQ(p.deleted, 1);
}

// Found by fuzzing: an empty tensor's other dims may be huge; their product must not
// overflow when strides and contiguity are computed.
TEST_F(Dlpack, EmptyImportWithHugeOtherDims) {
  Producer p({}, {INT64_MAX / 2, 5, 0});
  T t;
  DT_ASSERT_OK(dt_tensor_from_dlpack(&p.managed, t.out()));
  size_t n = 1;
  DT_ASSERT_OK(dt_tensor_numel(t, &n));
  EXPECT_EQ(n, 0u);
  int32_t contiguous = 0;
  DT_ASSERT_OK(dt_tensor_is_contiguous(t, &contiguous));
  EXPECT_EQ(contiguous, 1);
  t = T();
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(Dlpack, RefusedImportsLeaveTheProducerAlone) {
  struct Bad {
    const char* what;
    void (*spoil)(Producer&);
    dt_status want;
  };
  const Bad bads[] = {
      {"lanes 2", [](Producer& p) { p.managed.dl_tensor.dtype.lanes = 2; }, DT_ERR_NOT_SUPPORTED},
      {"complex", [](Producer& p) { p.managed.dl_tensor.dtype = DLDataType{kDLComplex, 64, 1}; }, DT_ERR_NOT_SUPPORTED},
      {"float 12 bits", [](Producer& p) { p.managed.dl_tensor.dtype.bits = 12; }, DT_ERR_NOT_SUPPORTED},
      {"uint16", [](Producer& p) { p.managed.dl_tensor.dtype = DLDataType{kDLUInt, 16, 1}; }, DT_ERR_NOT_SUPPORTED},
      {"Vulkan device", [](Producer& p) { p.managed.dl_tensor.device = DLDevice{kDLVulkan, 0}; }, DT_ERR_NOT_SUPPORTED},
      {"negative stride", [](Producer& p) { p.strides[0] = -1; p.strides[1] = 1; p.managed.dl_tensor.strides = p.strides; },
       DT_ERR_NOT_SUPPORTED},
      {"negative size", [](Producer& p) { p.shape[0] = -2; }, DT_ERR_INVALID_ARGUMENT},
      {"ndim 17", [](Producer& p) { p.managed.dl_tensor.ndim = 17; }, DT_ERR_INVALID_ARGUMENT},
      {"ndim -1", [](Producer& p) { p.managed.dl_tensor.ndim = -1; }, DT_ERR_INVALID_ARGUMENT},
      {"NULL shape", [](Producer& p) { p.managed.dl_tensor.shape = nullptr; }, DT_ERR_INVALID_ARGUMENT},
      {"NULL data", [](Producer& p) { p.managed.dl_tensor.data = nullptr; }, DT_ERR_INVALID_ARGUMENT},
      {"byte_offset not a multiple of the element size (found by fuzzing)",
       [](Producer& p) { p.managed.dl_tensor.byte_offset = 2; }, DT_ERR_NOT_SUPPORTED},
      {"bool bytes other than 0 and 1 (the bytes of float 1.0: 0, 0, 0x80, 0x3f, ...)",
       [](Producer& p) { p.managed.dl_tensor.dtype = DLDataType{6 /* kDLBool */, 8, 1}; }, DT_ERR_INVALID_ARGUMENT},
      {"overflowing stride",
       [](Producer& p) { p.strides[0] = INT64_MAX / 2; p.strides[1] = 1; p.managed.dl_tensor.strides = p.strides; },
       DT_ERR_INVALID_ARGUMENT},
  };
  for (const Bad& b : bads) {
    Producer p({1, 2, 3, 4, 5, 6}, {2, 3});
    b.spoil(p);
    dt_tensor* sentinel = reinterpret_cast<dt_tensor*>(0x1234);
    dt_tensor* out = sentinel;
    dt_status st = dt_tensor_from_dlpack(&p.managed, &out);
    EXPECT_EQ(st, b.want) << b.what << ": " << dt_last_error_message();
    EXPECT_STRNE(dt_last_error_message(), "") << b.what;
    EXPECT_EQ(out, sentinel) << b.what << ": out was written";
    EXPECT_EQ(p.deleted, 0) << b.what << ": a refused import called the deleter";
  }
  // A CUDA device that is not there.
  Producer p({1, 2}, {2});
  p.managed.dl_tensor.device = DLDevice{kDLCUDA, 7};
  dt_tensor* out = nullptr;
  dt_status st = dt_tensor_from_dlpack(&p.managed, &out);
  EXPECT_TRUE(st == DT_ERR_INVALID_DEVICE || st == DT_ERR_DEVICE_UNAVAILABLE) << dt_last_error_message();
  EXPECT_EQ(p.deleted, 0);
}

TEST_F(Dlpack, CudaTensorsExportWithTheirDevice) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  const int64_t shape[] = {5};
  T g, back;
  DT_ASSERT_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, dt_device{DT_DEVICE_CUDA, 0}, g.out()));
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(g, &m));
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(m->dl_tensor.device.device_id, 0);
  DT_ASSERT_OK(dt_tensor_from_dlpack(m, back.out()));
  dt_device d;
  DT_ASSERT_OK(dt_tensor_device(back, &d));
  EXPECT_EQ(d.type, DT_DEVICE_CUDA);
  DT_ASSERT_OK(dt_add_scalar_(back, 2));
  EXPECT_EQ(read_floats(g), (std::vector<float>{3, 3, 3, 3, 3}));
}

}  // namespace

// ---- DLPack 1.x: the versioned struct and its read-only flag.

// DLPack 1.0's versioned struct as its dlpack.h declares it (Debian's header is 0.6 and
// lacks it): this is what a consumer built against DLPack 1.x hands us.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

namespace {

constexpr uint64_t kReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kIsCopied = 2;  // DLPACK_FLAG_BITMASK_IS_COPIED

// A versioned producer's 2x3 float tensor with a counted deleter.
struct VersionedProducer {
  DLManagedTensorVersioned managed{};
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  int deleted = 0;

  explicit VersionedProducer(uint64_t flags, uint32_t major = 1) {
    managed.version = DLPackVersion{major, 0};
    managed.flags = flags;
    DLTensor& d = managed.dl_tensor;
    d.data = data.data();
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = 2;
    d.dtype = DLDataType{kDLFloat, 32, 1};
    d.shape = shape;
    d.strides = nullptr;
    d.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) {
      ++static_cast<VersionedProducer*>(self->manager_ctx)->deleted;
    };
  }
};

bool message_has(const char* what) { return std::strstr(dt_last_error_message(), what) != nullptr; }

TEST_F(Dlpack, VersionedExportCarriesVersionOneAndNoFlags) {
  T a;
  DT_ASSERT_OK(dt_tensor_arange(0, 6, 1, DT_FLOAT32, cpu(), a.out()));
  DLManagedTensorVersioned* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack_versioned(a, &m));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->version.minor, 0u);
  EXPECT_EQ(m->flags, 0u) << "writable, and not a copy";
  void* ptr = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(a, &ptr));
  EXPECT_EQ(m->dl_tensor.data, ptr);
  EXPECT_EQ(m->dl_tensor.ndim, 1);
  EXPECT_EQ(m->dl_tensor.shape[0], 6);
  a = T();  // the export alone keeps the memory alive (ASan checks the read)
  EXPECT_EQ(static_cast<const float*>(m->dl_tensor.data)[5], 5.0f);
  m->deleter(m);
}

TEST_F(Dlpack, VersionedImportIsZeroCopyAndDeletesOnce) {
  VersionedProducer p(kIsCopied);  // IS_COPIED changes nothing for us
  T t;
  DT_ASSERT_OK(dt_tensor_from_dlpack_versioned(&p.managed, t.out()));
  int32_t ro = -1;
  DT_ASSERT_OK(dt_tensor_is_read_only(t, &ro));
  EXPECT_EQ(ro, 0);
  void* ptr = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(t, &ptr));
  EXPECT_EQ(ptr, p.data.data());
  DT_ASSERT_OK(dt_add_scalar_(t, 10));
  EXPECT_EQ(p.data[5], 16.0f) << "devtensor's write lands in the producer's memory";
  EXPECT_EQ(p.deleted, 0);
  t = T();
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(Dlpack, ReadOnlyImportRefusesEveryWrite) {
  VersionedProducer p(kReadOnly);
  T t;
  DT_ASSERT_OK(dt_tensor_from_dlpack_versioned(&p.managed, t.out()));
  int32_t ro = 0;
  DT_ASSERT_OK(dt_tensor_is_read_only(t, &ro));
  EXPECT_EQ(ro, 1);
  // Every way to write is refused, naming the op, and the producer's data stays as it was.
  DT_EXPECT_STATUS(dt_add_scalar_(t, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(message_has("add_: the tensor is read-only")) << dt_last_error_message();
  T ones;
  const int64_t shape[2] = {2, 3};
  DT_ASSERT_OK(dt_tensor_ones(shape, 2, DT_FLOAT32, cpu(), ones.out()));
  DT_EXPECT_STATUS(dt_mul_(t, ones), DT_ERR_INVALID_ARGUMENT);
  const float src[6] = {0, 0, 0, 0, 0, 0};
  DT_EXPECT_STATUS(dt_tensor_copy_from_host(t, src, sizeof src), DT_ERR_INVALID_ARGUMENT);
  void* ptr = &ro;
  DT_EXPECT_STATUS(dt_tensor_data_ptr(t, &ptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(ptr, static_cast<void*>(&ro)) << "the out-parameter is untouched on failure";
  T view;
  DT_ASSERT_OK(dt_transpose(t, 0, 1, view.out()));
  DT_ASSERT_OK(dt_tensor_is_read_only(view, &ro));
  EXPECT_EQ(ro, 1) << "a view shares the read-only memory";
  DT_EXPECT_STATUS(dt_sub_scalar_(view, 1), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p.data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Reading is free; results and copies are ordinary writable tensors.
  T sum, copy;
  DT_ASSERT_OK(dt_add(t, ones, sum.out()));
  EXPECT_EQ(read_floats(sum), (std::vector<float>{2, 3, 4, 5, 6, 7}));
  DT_ASSERT_OK(dt_tensor_to(t, cpu(), DT_FLOAT32, DT_TO_COPY, copy.out()));
  DT_ASSERT_OK(dt_tensor_is_read_only(copy, &ro));
  EXPECT_EQ(ro, 0);
  DT_ASSERT_OK(dt_add_scalar_(copy, 1));
  // It leaves only as a versioned export that says read-only; the unversioned struct
  // cannot say so (as NumPy refuses a read-only array's unversioned export).
  DLManagedTensor* legacy = nullptr;
  DT_EXPECT_STATUS(dt_tensor_to_dlpack(t, &legacy), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(message_has("dt_tensor_to_dlpack_versioned")) << dt_last_error_message();
  EXPECT_EQ(legacy, nullptr);
  DLManagedTensorVersioned* out = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack_versioned(view, &out));
  EXPECT_EQ(out->flags, kReadOnly);
  T again;
  DT_ASSERT_OK(dt_tensor_from_dlpack_versioned(out, again.out()));  // owns out now
  DT_ASSERT_OK(dt_tensor_is_read_only(again, &ro));
  EXPECT_EQ(ro, 1);
  // The producer's deleter runs once, after the last of them goes.
  t = T();
  view = T();
  EXPECT_EQ(p.deleted, 0);
  again = T();
  EXPECT_EQ(p.deleted, 1);
}

TEST_F(Dlpack, VersionedImportRefusesAnotherMajorVersion) {
  VersionedProducer p(0, /*major=*/2);
  dt_tensor* t = nullptr;
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_versioned(&p.managed, &t), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(message_has("major version 2")) << dt_last_error_message();
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(p.deleted, 0) << "a refused import leaves the producer's deleter alone";
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_versioned(nullptr, &t), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_versioned(&p.managed, nullptr), DT_ERR_INVALID_ARGUMENT);
  int32_t ro = 0;
  DT_EXPECT_STATUS(dt_tensor_is_read_only(nullptr, &ro), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
