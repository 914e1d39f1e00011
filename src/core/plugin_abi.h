/* The boundary between the core (libdevtensor.so) and the CUDA plugin
 * (libdevtensor-cuda.so). Plain C types only: no C++ object, exception or allocation
 * crosses it, so the two libraries share nothing but this table and plain memory.
 *
 * The core dlopens the plugin and calls its one exported symbol, DTP_ENTRY_SYMBOL, with
 * the ABI version it speaks; the plugin returns its table (or NULL if it cannot speak
 * that version). The core then checks abi_version and devtensor_version: the plugin is
 * built from the same sources as the core and must come from the same release.
 *
 * Conventions for every function returning int32_t: DT_OK (0) or a dt_status code, with
 * a sentence in err->message (the op name first, then the CUDA library's own message).
 * Tensors are described by dtp_tensor; `data` is the address of element 0 and strides
 * are in elements. A dtp_tensor with device == DTP_HOST lies in host memory (pageable or
 * pinned). Device ordinals are logical (after CUDA_VISIBLE_DEVICES). Thread-safe. */
#ifndef DEVTENSOR_PLUGIN_ABI_H
#define DEVTENSOR_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "devtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DTP_ABI_VERSION 1
#define DTP_ENTRY_SYMBOL "devtensor_cuda_plugin_entry"
#define DTP_HOST (-1)
#define DTP_MESSAGE_CAP 1024

typedef struct dtp_error {
  int32_t code;
  char message[DTP_MESSAGE_CAP];
} dtp_error;

typedef struct dtp_tensor {
  void* data;
  int32_t dtype;   /* dt_dtype code */
  int32_t device;  /* CUDA ordinal, or DTP_HOST */
  int32_t ndim;
  int32_t pinned;  /* host memory that is page-locked */
  int64_t numel;
  int64_t sizes[DT_MAX_DIMS];
  int64_t strides[DT_MAX_DIMS];
} dtp_tensor;

/* What the plugin found when it looked for the driver and devices. */
typedef struct dtp_probe {
  int32_t state;        /* DT_CUDA_* */
  int32_t device_count; /* usable devices (0 unless state == DT_CUDA_AVAILABLE) */
  int32_t driver_version;
  int32_t runtime_version;
  char reason[512];     /* a sentence for users */
} dtp_probe;

typedef struct dtp_mem_stats {
  uint64_t allocated_bytes, reserved_bytes, peak_allocated_bytes, allocation_count,
      system_allocation_count;
} dtp_mem_stats;

typedef struct dtp_api {
  uint32_t struct_size;
  uint32_t abi_version;        /* DTP_ABI_VERSION */
  uint32_t devtensor_version;  /* DT_VERSION_NUMBER of the sources it was built from */

  /* Once, before anything else. Never fails: the result says what is usable. */
  void (*probe)(dtp_probe* out);

  int32_t (*device_properties)(int32_t device, dt_device_props* out, dtp_error* err);
  int32_t (*memory_info)(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes, dtp_error* err);

  /* Device memory from the device's stream-ordered pool. */
  int32_t (*allocate)(int32_t device, size_t nbytes, void** out, dtp_error* err);
  void (*deallocate)(int32_t device, void* ptr, size_t nbytes);
  int32_t (*memory_stats)(int32_t device, dtp_mem_stats* out, dtp_error* err);
  int32_t (*empty_cache)(int32_t device, dtp_error* err);

  /* Page-locked host memory. */
  int32_t (*host_allocate)(size_t nbytes, void** out, dtp_error* err);
  void (*host_deallocate)(void* ptr);

  /* dst = cast(src), src broadcast to dst's shape; either side may be on the host (not
   * both). non_blocking: a host-to-device copy from pinned memory may return before it
   * ends. */
  int32_t (*copy)(const dtp_tensor* dst, const dtp_tensor* src, int32_t non_blocking, dtp_error* err);
  int32_t (*fill)(const dtp_tensor* dst, double value, dtp_error* err);
  int32_t (*arange)(const dtp_tensor* dst, double start, double step, dtp_error* err);
  int32_t (*random)(const dtp_tensor* dst, int32_t dist, uint64_t seed, uint64_t offset, dtp_error* err);
  int32_t (*binary)(int32_t op, const dtp_tensor* out, const dtp_tensor* a, const dtp_tensor* b, dtp_error* err);
  int32_t (*unary)(int32_t op, const dtp_tensor* out, const dtp_tensor* a, dtp_error* err);
  int32_t (*where)(const dtp_tensor* out, const dtp_tensor* cond, const dtp_tensor* a, const dtp_tensor* b,
                   dtp_error* err);
  int32_t (*reduce)(int32_t op, const dtp_tensor* out, const dtp_tensor* in, uint32_t reduce_mask, dtp_error* err);
  int32_t (*softmax)(const dtp_tensor* out, const dtp_tensor* in, int32_t dim, int32_t log, dtp_error* err);
  int32_t (*matmul)(const dtp_tensor* out, const dtp_tensor* a, const dtp_tensor* b, int32_t allow_tf32,
                    dtp_error* err);
  int32_t (*index_select)(const dtp_tensor* out, const dtp_tensor* in, int32_t dim, const dtp_tensor* index,
                          dtp_error* err);
  int32_t (*gather)(const dtp_tensor* out, const dtp_tensor* in, int32_t dim, const dtp_tensor* index,
                    dtp_error* err);
  int32_t (*synchronize)(int32_t device, dtp_error* err);
} dtp_api;

typedef const dtp_api* (*dtp_entry_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* DEVTENSOR_PLUGIN_ABI_H */
