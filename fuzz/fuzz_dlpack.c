/*
 * fuzz_dlpack.c — libFuzzer target for dt_tensor_from_dlpack (DLPack import).
 *
 * The input describes a DLManagedTensor: ndim (0..20, so past DT_MAX_DIMS too), dtype
 * code/bits/lanes, device type and id, byte offset, and per dimension a size and a stride
 * (signed, any magnitude; a flag byte may make strides NULL, meaning row-major). When the
 * layout's extent is small (at most 16 KiB) the data is a heap block of exactly that many
 * bytes, so ASan sees any read past what the producer described; otherwise the data
 * pointer is a tiny block and the tensor is never read (a host bool tensor, which the
 * import reads to check its bytes, then gets no data). Properties:
 *   - an import succeeds or fails with a status and a message, and *out stays untouched
 *     on failure;
 *   - a refused import never calls the deleter; an accepted one calls it exactly once,
 *     when the tensor (and a view of it) are released;
 *   - an accepted tensor whose extent was backed is read to its last byte (a copy to host
 *     and a sum), and a transposed view of it too;
 *   - no handle is left.
 * A flag byte also picks DLPack 1.x's versioned struct (dt_tensor_from_dlpack_versioned),
 * with a major version (only 1 may be accepted) and the read-only and is-copied flags:
 *   - a read-only import reports itself read-only, and an in-place add to it fails and
 *     leaves the producer's bytes as they were.
 * Any violated property aborts with a message naming it (a crash for libFuzzer).
 */
#include <devtensor.h>
#include <dlpack/dlpack.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_NAME "fuzz_dlpack"
#include "fuzz_require.h"

typedef struct {
  const uint8_t* p;
  size_t n;
} Bytes;

static uint64_t take(Bytes* b, size_t k) {
  uint64_t v = 0;
  for (size_t i = 0; i < k; ++i) {
    v |= (uint64_t)(b->n ? *b->p : 0) << (8 * i);
    if (b->n) {
      ++b->p;
      --b->n;
    }
  }
  return v;
}

/* DLPack 1.0's versioned struct as its dlpack.h declares it (Debian's header is 0.6). */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
#define READ_ONLY_FLAG 1u
#define IS_COPIED_FLAG 2u

static int g_deleted;
static void count_delete(DLManagedTensor* self) {
  (void)self;
  ++g_deleted;
}
static void count_delete_versioned(struct DLManagedTensorVersioned* self) {
  (void)self;
  ++g_deleted;
}

/* Small values most of the time, any value sometimes. */
static int64_t dim_value(Bytes* b) {
  uint8_t kind = (uint8_t)take(b, 1);
  if (kind < 200) return (int64_t)(kind % 9) - 1; /* -1..7 */
  return (int64_t)take(b, 8);
}

/* The most bytes an input's tensor is backed by, and read. At -O0 under ASan a strided
 * copy of 16 MiB took up to 27 s (libFuzzer's -timeout is 10 s); and since coverage
 * instrumentation costs most per element read, 16 KiB (4096 floats, enough for every
 * layout's edge cases) runs many times more inputs per second than 256 KiB did. */
enum { kMaxBacked = 16 << 10 };

/* The layout's extent in bytes, or -1 when it is not small and valid. */
static int64_t small_extent(const DLTensor* d) {
  int64_t elem = (d->dtype.bits + 7) / 8;
  if (elem <= 0) return -1;
  int64_t span = 1;
  for (int i = 0; i < d->ndim; ++i) {
    int64_t size = d->shape[i];
    if (size < 0) return -1;
    if (size == 0) return 0;
  }
  for (int i = 0; i < d->ndim; ++i) {
    int64_t stride = d->strides ? d->strides[i] : 0;
    if (!d->strides) {
      stride = 1;
      for (int j = i + 1; j < d->ndim; ++j) {
        if (__builtin_mul_overflow(stride, d->shape[j], &stride)) return -1;
      }
    }
    if (stride < 0) return -1;
    int64_t reach;
    if (__builtin_mul_overflow(d->shape[i] - 1, stride, &reach) || __builtin_add_overflow(span, reach, &span))
      return -1;
  }
  int64_t bytes;
  if (__builtin_mul_overflow(span, elem, &bytes) || bytes > kMaxBacked) return -1;
  return bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes b = {data, size};
  int64_t shape[20], strides[20];
  DLManagedTensor m;
  struct DLManagedTensorVersioned mv;
  memset(&m, 0, sizeof m);
  memset(&mv, 0, sizeof mv);
  DLTensor dl;
  memset(&dl, 0, sizeof dl);
  DLTensor* d = &dl;
  d->ndim = (int32_t)(take(&b, 1) % 21);
  uint8_t codes[] = {kDLInt, kDLUInt, kDLFloat, kDLBfloat, 6, kDLComplex, kDLOpaqueHandle};
  d->dtype.code = codes[take(&b, 1) % sizeof codes];
  uint8_t bits[] = {8, 16, 32, 64, 1, 12, 128};
  d->dtype.bits = bits[take(&b, 1) % sizeof bits];
  d->dtype.lanes = (uint16_t)(take(&b, 1) < 240 ? 1 : take(&b, 2));
  int32_t devices[] = {kDLCPU, kDLCPU, kDLCUDAHost, kDLCUDA, kDLVulkan, 0, -3};
  d->device.device_type = devices[take(&b, 1) % (sizeof devices / sizeof devices[0])];
  d->device.device_id = (int32_t)((int8_t)take(&b, 1));
  uint8_t flags = (uint8_t)take(&b, 1);
  d->byte_offset = (flags & 1) ? take(&b, 1) * 2 : 0;
  for (int i = 0; i < d->ndim; ++i) {
    shape[i] = dim_value(&b);
    strides[i] = dim_value(&b);
  }
  d->shape = (flags & 2) && d->ndim > 0 ? NULL : shape;
  d->strides = (flags & 4) ? NULL : strides;
  /* Last, so that inputs written before the versioned struct existed mean what they did:
   * the kind of struct, then its version and flags. */
  const uint8_t kind = (uint8_t)take(&b, 1);
  const int versioned = kind & 1;
  const int read_only = versioned && (kind & 2);
  if (versioned) {
    mv.version.major = (kind & 4) ? (uint32_t)take(&b, 1) % 4 : 1;
    mv.version.minor = (uint32_t)take(&b, 1);
    mv.flags = (read_only ? READ_ONLY_FLAG : 0) | ((kind & 8) ? IS_COPIED_FLAG : 0);
    mv.deleter = count_delete_versioned;
    mv.dl_tensor = dl;
    d = &mv.dl_tensor;
  } else {
    m.dl_tensor = dl;
    d = &m.dl_tensor;
  }

  int64_t extent = d->shape ? small_extent(d) : -1;
  size_t block_bytes = extent >= 0 ? (size_t)extent + d->byte_offset : 16;
  unsigned char* block = (unsigned char*)malloc(block_bytes ? block_bytes : 1);
  REQUIRE(block != NULL, "malloc");
  /* Valid values of every dtype: bool elements must hold 0 or 1 (as for any producer). */
  const unsigned char fill = d->dtype.code == 6 ? 0x01 : 0x3c;
  memset(block, fill, block_bytes);
  d->data = (flags & 8) ? NULL : block;
  /* A bool import from host memory reads every byte (each must be 0 or 1), so a layout
   * the tiny block does not back gets no data at all: the import must refuse it. */
  const int host = d->device.device_type == kDLCPU || d->device.device_type == kDLCUDAHost;
  if (extent < 0 && host && d->dtype.code == 6 && d->dtype.bits == 8) d->data = NULL;
  m.deleter = count_delete;
  g_deleted = 0;

  const size_t live = dt_live_handle_count();
  dt_tensor* sentinel = (dt_tensor*)(uintptr_t)0x5a5a;
  dt_tensor* t = sentinel;
  dt_status st = versioned ? dt_tensor_from_dlpack_versioned(&mv, &t) : dt_tensor_from_dlpack(&m, &t);
  if (versioned && mv.version.major != 1)
    REQUIRE(st == DT_ERR_NOT_SUPPORTED, "major version %u accepted (status %d)", mv.version.major, (int)st);
  if (st != DT_OK) {
    REQUIRE(t == sentinel, "*out written on failure (status %d)", (int)st);
    REQUIRE(dt_last_error_message()[0] != '\0', "a failure without a message");
    REQUIRE(g_deleted == 0, "a refused import called the deleter");
  } else {
    REQUIRE(g_deleted == 0, "the deleter ran while the tensor lives");
    size_t nbytes = 0;
    REQUIRE(dt_tensor_nbytes(t, &nbytes) == DT_OK, "nbytes");
    int32_t ro = -1;
    REQUIRE(dt_tensor_is_read_only(t, &ro) == DT_OK && ro == read_only, "read-only is %d, want %d", ro, read_only);
    if (read_only && nbytes > 0) {
      REQUIRE(dt_add_scalar_(t, 1.0) != DT_OK, "an in-place add to a read-only import succeeded");
      for (size_t i = 0; i < block_bytes && d->data; ++i)
        REQUIRE(block[i] == fill, "a refused write changed the producer's byte %zu", i);
    }
    /* Zero strides can make a huge tensor of a tiny extent: read only modest ones. */
    if (extent >= 0 && d->data && nbytes <= kMaxBacked) {
      void* host = malloc(nbytes ? nbytes : 1);
      REQUIRE(host != NULL, "malloc");
      REQUIRE(dt_tensor_copy_to_host(t, host, nbytes) == DT_OK, "copy_to_host of an accepted import");
      free(host);
      size_t ndim = 0;
      REQUIRE(dt_tensor_ndim(t, &ndim) == DT_OK, "ndim");
      if (ndim >= 2) {
        dt_tensor* v = NULL;
        REQUIRE(dt_transpose(t, 0, 1, &v) == DT_OK, "transpose");
        dt_tensor_release(t);
        t = v;
        REQUIRE(g_deleted == 0, "the deleter ran while a view lives");
      }
      dt_tensor* s = NULL;
      dt_dtype dtype;
      REQUIRE(dt_tensor_dtype(t, &dtype) == DT_OK, "dtype");
      if (dtype != DT_BOOL) {
        st = dt_sum(t, NULL, 0, 0, &s);
        REQUIRE(st == DT_OK, "sum of an accepted import: %d", (int)st);
        dt_tensor_release(s);
      }
    }
    dt_tensor_release(t);
    REQUIRE(g_deleted == 1, "the deleter ran %d times after the last release", g_deleted);
  }
  free(block);
  REQUIRE(dt_live_handle_count() == live, "handles leaked");
  return 0;
}
