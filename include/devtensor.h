/*
 * devtensor.h — the one public header of devtensor, an embeddable tensor runtime.
 *
 * devtensor allocates tensors, moves them between the CPU and GPUs, converts dtypes and
 * runs tensor operations, behind this C99 ABI. Bindings for Rust and Go are built on it.
 *
 * ---------------------------------------------------------------------------------------
 * CONVENTIONS (read once; every function below follows them)
 *
 * Status codes.  Every fallible function returns a dt_status; DT_OK (0) is success.
 *   On failure, dt_last_error_message() describes what went wrong, on the calling thread.
 *
 * Out-parameters come last.  On failure they are left untouched and nothing is leaked:
 *   a function either succeeds completely or has no effect (training calls too: a
 *   failed dt_backward or dt_optimizer_step leaves every gradient, parameter and
 *   optimizer state as it was). The one exception is a device lost
 *   (DT_ERR_DEVICE_LOST) while an in-place write runs on it: that write may be partly
 *   done, and the device is unusable anyway.
 *
 * References.  Handles (dt_tensor*) are opaque and reference-counted. A function that
 *   returns a NEW reference gives the caller one reference, to be released with
 *   dt_tensor_release(). A BORROWED result is valid only as long as the caller keeps the
 *   handle it came from. Releasing NULL is a no-op. Using a handle after its last
 *   release, releasing it twice, or passing a handle of another kind yields
 *   DT_ERR_INVALID_HANDLE; it never crashes. A NULL handle where a tensor is required
 *   is DT_ERR_INVALID_ARGUMENT (a NULL pointer like any other).
 *
 * Devices are values (dt_device), never hidden per-thread state. A device whose type is
 *   DT_DEVICE_DEFAULT means "the process default device" (dt_set_default_device) in
 *   constructors, and "unchanged" in dt_tensor_to. A dtype of DT_DTYPE_DEFAULT likewise
 *   means the process default dtype (constructors) or "unchanged" (dt_tensor_to).
 *
 * Strings are UTF-8. A function that writes a string takes (char* buf, size_t cap,
 *   size_t* needed): it writes at most cap bytes including the terminating NUL
 *   (truncating if needed, like snprintf), and stores in *needed the size a buffer must
 *   have to hold the whole string, NUL included. buf may be NULL when cap is 0, to ask
 *   for the size. needed may be NULL.
 *
 * Counts are size_t, dimensions and indices int64_t. Negative dimensions count from the
 *   end, as in PyTorch (-1 is the last dimension).
 *
 * THREADING.  Every function is safe to call from any thread at any time. Distinct
 *   tensors may be used concurrently from different threads; one tensor may be read
 *   concurrently from many threads. Concurrent in-place writes to the same tensor's
 *   data (dt_add_ and friends, an optimizer step, loading a module, or writes through
 *   dt_tensor_data_ptr) race on the data like any shared memory: a concurrent reader
 *   sees each element's old or new value. They never corrupt devtensor's own state:
 *   reference counts and handle checks are atomic. A module's parameters and buffers
 *   may be read, through their handles or by another call, while the module moves
 *   (dt_module_to): a reader sees the tensor before the move or after it, whole, never
 *   freed memory, because the move replaces each tensor's memory only once the calls
 *   reading it have returned. The error message is per thread. A handle must stay
 *   referenced while any call uses it: releasing its last reference on one thread while
 *   another thread is inside a call with it is a use-after-free in the caller (stale
 *   handles are detected when the calls do not overlap; a handle value is never given
 *   out twice in a process, so a stale handle stays detected forever).
 *
 * No C++ exception, abort() or exit() ever crosses this ABI.
 * ---------------------------------------------------------------------------------------
 */
#ifndef DEVTENSOR_H
#define DEVTENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ export & version */

#if defined(DT_BUILDING_LIBRARY)
#define DT_API __attribute__((visibility("default")))
#else
#define DT_API
#endif

/** Version of this header. Compare with dt_version() at run time. */
#define DT_VERSION_MAJOR 0
#define DT_VERSION_MINOR 1
#define DT_VERSION_PATCH 0
/** MAJOR*1000000 + MINOR*1000 + PATCH, the value dt_version() returns. */
#define DT_VERSION_NUMBER (DT_VERSION_MAJOR * 1000000 + DT_VERSION_MINOR * 1000 + DT_VERSION_PATCH)

/* ---------------------------------------------------------------------- status codes */

/** Result of every fallible function. Values are stable across releases. */
typedef int32_t dt_status;

#define DT_OK                       0  /**< success */
#define DT_ERR_INVALID_ARGUMENT     1  /**< a NULL pointer, an out-of-range value, bad text */
#define DT_ERR_INVALID_HANDLE       2  /**< a released, doubly released or wrong-kind handle */
#define DT_ERR_INVALID_DEVICE       3  /**< a device ordinal that does not exist (an unknown device type is DT_ERR_INVALID_ARGUMENT) */
#define DT_ERR_DEVICE_UNAVAILABLE   4  /**< the device type cannot be used here (no CUDA, ...) */
#define DT_ERR_DEVICE_MISMATCH      5  /**< operands live on different devices */
#define DT_ERR_SHAPE_MISMATCH       6  /**< shapes that cannot be combined or viewed */
#define DT_ERR_DTYPE_MISMATCH       7  /**< a dtype the operation does not accept */
#define DT_ERR_OUT_OF_MEMORY        8  /**< an allocation failed, on any device */
#define DT_ERR_DEVICE_LOST          9  /**< a sticky device error; the device is unusable */
#define DT_ERR_BACKEND             10  /**< a backend library (BLAS, CUDA, ...) reported an error */
#define DT_ERR_NOT_SUPPORTED       11  /**< valid, but not implemented for these arguments */
#define DT_ERR_IO                  12  /**< reading or writing a file failed */
#define DT_ERR_FORMAT              13  /**< a file or buffer is malformed */
#define DT_ERR_INTERNAL            14  /**< a bug in devtensor; please report it */
#define DT_ERR_DISTRIBUTED         15  /**< a process group failed: a peer exited, did not join
                                            or answer within the timeout; the group is unusable */

/* ------------------------------------------------------------------------- handles */

/** A tensor: a typed, strided view of storage on one device. Opaque, reference-counted. */
typedef struct dt_tensor dt_tensor;
/** A neural-network module (layer, container or loss). Opaque, reference-counted. */
typedef struct dt_module dt_module;
/** An optimizer over a set of parameter tensors. Opaque, reference-counted. */
typedef struct dt_optimizer dt_optimizer;
/** An ordered map from names to tensors (a PyTorch state_dict). Opaque, reference-counted. */
typedef struct dt_state_dict dt_state_dict;
/** A learning-rate scheduler bound to one optimizer. Opaque, reference-counted. */
typedef struct dt_lr_scheduler dt_lr_scheduler;

/* -------------------------------------------------------------------- devices, dtypes */

/** Device types use DLPack's codes. */
#define DT_DEVICE_DEFAULT 0 /**< sentinel: process default (constructors) / unchanged (to) */
#define DT_DEVICE_CPU     1 /**< kDLCPU */
#define DT_DEVICE_CUDA    2 /**< kDLCUDA */

/** A device, passed by value: {DT_DEVICE_CUDA, 1} is cuda:1. */
typedef struct dt_device {
  int32_t type;  /**< DT_DEVICE_* */
  int32_t index; /**< ordinal within the type, >= 0 */
} dt_device;

/** Element types. DT_DTYPE_DEFAULT is a sentinel, never the dtype of a tensor. */
typedef int32_t dt_dtype;
#define DT_DTYPE_DEFAULT 0
#define DT_FLOAT32       1
#define DT_FLOAT64       2
#define DT_FLOAT16       3
#define DT_BFLOAT16      4
#define DT_INT8          5
#define DT_INT16         6
#define DT_INT32         7
#define DT_INT64         8
#define DT_UINT8         9
#define DT_BOOL         10

/** Why CUDA is or is not usable; see dt_cuda_status(). */
#define DT_CUDA_AVAILABLE       0 /**< at least one CUDA device can be used */
#define DT_CUDA_NOT_BUILT       1 /**< this build of devtensor has no CUDA backend */
#define DT_CUDA_PLUGIN_MISSING  2 /**< libdevtensor-cuda.so could not be loaded */
#define DT_CUDA_PLUGIN_MISMATCH 3 /**< the plugin is from another devtensor version */
#define DT_CUDA_NO_DRIVER       4 /**< no NVIDIA driver is installed or it failed to load */
#define DT_CUDA_DRIVER_TOO_OLD  5 /**< the driver is older than the CUDA runtime needs */
#define DT_CUDA_NO_DEVICE       6 /**< the driver sees no device */
#define DT_CUDA_ALL_HIDDEN      7 /**< CUDA_VISIBLE_DEVICES hides every device */

/** Flags of dt_tensor_to(). */
#define DT_TO_NON_BLOCKING 1u /**< allow an asynchronous copy (GPU, pinned memory) */
#define DT_TO_COPY         2u /**< always return a fresh copy, never an alias */

/* ----------------------------------------------------------------- library & errors */

/** The library's version, DT_VERSION_NUMBER of the header it was built from.
 *  Bindings compare it with the header they were generated from. Thread-safe. */
DT_API uint32_t dt_version(void);

/** The library's version as "MAJOR.MINOR.PATCH". Static storage; never NULL. */
DT_API const char* dt_version_string(void);

/** A short English name for a status code ("invalid argument"); "unknown status" for a
 *  code this version does not know. Static storage; never NULL. */
DT_API const char* dt_status_string(dt_status code);

/** The detail of the last failure on the calling thread, e.g.
 *  "add: expected device cpu:0 but got device cpu:1". Borrowed: valid until the next
 *  failing call on this thread. "" if no call on this thread has failed. Never NULL.
 *  Successful calls do not clear it. */
DT_API const char* dt_last_error_message(void);
/** Sets the calling thread's last error message (copied; NULL is ""), for a function the
 *  library calls back (a module's forward, dt_module_forward_fn) that fails for a reason
 *  of its own: the error the library then reports quotes it, as sqlite3_result_error.
 *  Never fails; returns DT_OK. */
DT_API dt_status dt_set_error_message(const char* message);

/** Writes a description of the build: version, backends compiled in, the BLAS library
 *  and its threading, compiler. One "key: value" per line.
 *  Errors: DT_ERR_INVALID_ARGUMENT (buf NULL with cap > 0). */
DT_API dt_status dt_build_info(char* buf, size_t cap, size_t* needed);

/** Number of live handles of every kind in the process: a test that ends with the count
 *  it started with has leaked no handle. Thread-safe (a snapshot). */
DT_API size_t dt_live_handle_count(void);

/** Sets the number of CPU threads used by large operations (>= 1). Overrides the
 *  environment variable DEVTENSOR_NUM_THREADS, which overrides the default (the number
 *  of cores). Results never depend on the thread count.
 *  Errors: DT_ERR_INVALID_ARGUMENT (n < 1 or n > 1024). */
DT_API dt_status dt_set_num_threads(int32_t n);

/** The number of CPU threads large operations use. Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_num_threads(int32_t* out);

/* ------------------------------------------------------------------------- devices
 *
 * A device type is DLPack's code (DT_DEVICE_CPU 1, DT_DEVICE_CUDA 2, ...) served by one
 * backend. The CPU backend is built in; CUDA is a plugin (libdevtensor-cuda.so next to
 * libdevtensor.so, or the file DEVTENSOR_CUDA_PLUGIN names) loaded at first use; more
 * backend plugins (ROCm, Metal, a test device) are named in DEVTENSOR_PLUGINS, paths
 * separated by ':', and loaded at the library's first device lookup: their devices parse
 * and print by the plugin's name ("name:N") and work with every function below. A plugin
 * that cannot be loaded is reported by dt_build_info.
 */

/** Parses "cpu", "cpu:N", "cuda", "cuda:N" and a backend plugin's "name", "name:N" (no
 *  spaces; "cuda" means cuda:0). Does not check that the device exists (see
 *  dt_device_count).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, unknown type such as "gpu", a negative or
 *  non-numeric or overflowing ordinal such as "cuda:-1" or "cuda:x"). */
DT_API dt_status dt_device_parse(const char* text, dt_device* out);

/** Formats a device as "cpu:0", "cuda:1" or "name:N" (see the string convention above).
 *  Errors: DT_ERR_INVALID_ARGUMENT (unknown type, negative index, buf NULL with cap > 0). */
DT_API dt_status dt_device_format(dt_device device, char* buf, size_t cap, size_t* needed);

/** Number of devices of a type: CPU devices are 1, or DEVTENSOR_CPU_DEVICES=N logical
 *  ones (read once, at first use); CUDA devices are those visible (0 without CUDA); a
 *  backend plugin's are those it reports.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, unknown type). */
DT_API dt_status dt_device_count(int32_t device_type, size_t* out);

/** 1 if at least one CUDA device can be used, else 0. Never fails. */
DT_API int32_t dt_cuda_is_available(void);

/** Why CUDA is or is not usable: *state gets a DT_CUDA_* code and buf a sentence such as
 *  "devtensor was built without the CUDA backend (DEVTENSOR_CUDA=OFF)".
 *  Errors: DT_ERR_INVALID_ARGUMENT (state NULL, buf NULL with cap > 0). */
DT_API dt_status dt_cuda_status(int32_t* state, char* buf, size_t cap, size_t* needed);

/** The device's name: the CPU model for CPU devices, the GPU's name for CUDA devices.
 *  Errors: DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_DEVICE (no such ordinal),
 *  DT_ERR_DEVICE_UNAVAILABLE (CUDA asked for where none is usable). */
DT_API dt_status dt_device_name(dt_device device, char* buf, size_t cap, size_t* needed);

/** Free and total memory of a device in bytes (for CPU devices, the system's available
 *  and total memory). Never allocates on the device.
 *  Errors: as dt_device_name. */
DT_API dt_status dt_device_memory(dt_device device, uint64_t* free_bytes, uint64_t* total_bytes);

/** Properties of a device, filled by dt_device_properties(). (The struct is named
 *  dt_device_props because C gives types and functions one namespace.) Fill struct_size
 *  with sizeof(dt_device_props) before the call; fields past a smaller struct_size are
 *  not written, so callers built against an older header stay valid. */
typedef struct dt_device_props {
  size_t struct_size;          /**< set by the caller */
  dt_device device;            /**< the device described (logical ordinal) */
  char name[256];              /**< CPU model or GPU name */
  uint64_t total_memory;       /**< bytes */
  uint64_t free_memory;        /**< bytes, at the time of the call */
  int32_t compute_capability_major; /**< CUDA only, else 0 */
  int32_t compute_capability_minor; /**< CUDA only, else 0 */
  int32_t multiprocessor_count;     /**< CUDA: SMs; CPU: logical cores */
  int32_t physical_index;      /**< CUDA: ordinal before CUDA_VISIBLE_DEVICES; CPU: index */
  char uuid[48];               /**< CUDA: "GPU-xxxxxxxx-..."; CPU: "" */
  char pci_bus_id[32];         /**< CUDA: "0000:3b:00.0"; CPU: "" */
} dt_device_props;

/** Fills *props (see dt_device_props). Errors: DT_ERR_INVALID_ARGUMENT (NULL props,
 *  struct_size smaller than offsetof(dt_device_props, name)), DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE. */
DT_API dt_status dt_device_properties(dt_device device, dt_device_props* props);

/** cuda:i if that GPU exists, else cpu:0 (as d2l's try_gpu). Errors: DT_ERR_INVALID_ARGUMENT
 *  (NULL out, i < 0). */
DT_API dt_status dt_try_gpu(int32_t i, dt_device* out);

/** Every usable GPU (cuda:0 ... cuda:N-1), or [cpu:0] when there is none. Writes at most
 *  cap devices into out and the full count into *count (call with cap 0 to size).
 *  Errors: DT_ERR_INVALID_ARGUMENT (count NULL, out NULL with cap > 0). */
DT_API dt_status dt_all_gpus(dt_device* out, size_t cap, size_t* count);

/** Every usable GPU ordered by free memory, most free first (ties by ordinal), or
 *  [cpu:0] when there is none. Same buffer protocol and errors as dt_all_gpus. */
DT_API dt_status dt_devices_by_free_memory(dt_device* out, size_t cap, size_t* count);

/** Sets the process-wide default device, used where DT_DEVICE_DEFAULT is passed.
 *  Initially cpu:0. Errors: DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE. */
DT_API dt_status dt_set_default_device(dt_device device);

/** The process-wide default device. Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_default_device(dt_device* out);

/** Sets the process-wide default dtype (a floating dtype, as in PyTorch), used where
 *  DT_DTYPE_DEFAULT is passed and for integer-to-float results. Initially DT_FLOAT32.
 *  Errors: DT_ERR_INVALID_ARGUMENT (unknown dtype), DT_ERR_DTYPE_MISMATCH (not floating). */
DT_API dt_status dt_set_default_dtype(dt_dtype dtype);

/** The process-wide default dtype. Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_default_dtype(dt_dtype* out);

/** Waits until all work queued on the device has finished (a no-op on the CPU, where
 *  every call completes before it returns). Errors: as dt_device_name. */
DT_API dt_status dt_synchronize(dt_device device);

/** Seeds the random generator of every device and resets its offset. Thread-safe. */
DT_API dt_status dt_manual_seed(uint64_t seed);

/** Seeds one device's random generator and resets its offset.
 *  Errors: DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE. */
DT_API dt_status dt_device_manual_seed(dt_device device, uint64_t seed);

/** Whether float32 matrix products on CUDA may use TensorFloat-32 tensor cores (faster,
 *  about 10 bits of mantissa), as torch.backends.cuda.matmul.allow_tf32. Off by default,
 *  as in PyTorch. Process-wide; takes effect for products started after the call. The
 *  CPU ignores it. Never fails for 0 or 1; other values are DT_ERR_INVALID_ARGUMENT. */
DT_API dt_status dt_set_allow_tf32(int32_t allow);

/** *out = 1 if TF32 is allowed (see dt_set_allow_tf32), else 0.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_allow_tf32(int32_t* out);

/** Allocator statistics of a device, filled by dt_memory_stats() (struct named apart from
 *  the function, as dt_device_props). Fill struct_size before the call. */
typedef struct dt_mem_stats {
  size_t struct_size;          /**< set by the caller */
  uint64_t allocated_bytes;    /**< bytes in live tensor storage */
  uint64_t reserved_bytes;     /**< bytes held by the allocator (live + cached) */
  uint64_t peak_allocated_bytes; /**< maximum of allocated_bytes since start */
  uint64_t allocation_count;   /**< number of storage allocations served since start */
  uint64_t system_allocation_count; /**< allocations that went to the OS / driver */
} dt_mem_stats;

/** Fills *stats for a device. Errors: DT_ERR_INVALID_ARGUMENT (NULL, struct_size smaller
 *  than offsetof(dt_mem_stats, allocated_bytes) + 8), DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE. */
DT_API dt_status dt_memory_stats(dt_device device, dt_mem_stats* stats);

/** Returns cached, unused blocks of a device's allocator to the system.
 *  Errors: as dt_device_name. */
DT_API dt_status dt_empty_cache(dt_device device);

/* --------------------------------------------------------------- streams and events
 *
 * A stream is a queue of work on one device; work on different streams may run at the
 * same time (a copy beside a kernel) and is ordered only through events. As
 * torch.cuda.Stream / Event. Every device has a default stream, the one devtensor uses
 * unless told otherwise.
 *
 * THE THREAD'S STREAM.  Each thread has a current stream per device, initially the
 * default (as PyTorch's torch.cuda.stream() context). Ops, copies and allocations for a
 * tensor on that device are queued on it; it never chooses the device, which still
 * comes from the tensors. dt_set_thread_stream sets it and hands back the one it
 * replaced, to restore when the scope ends. A binding whose tasks move between OS
 * threads (Go's goroutines) must keep the task on one thread while it is set.
 *
 * MEMORY.  A tensor's memory belongs to the stream that was current when it was
 * allocated: freeing it is queued there, so later work on that stream reuses it at once.
 * Work on another stream reading or writing it must be made known with
 * dt_tensor_record_stream (as torch's Tensor.record_stream), or the memory may be reused
 * while that work still runs.
 *
 * THE CPU, and any device without streams of its own, has one in-order queue on which
 * every call has finished when it returns. Its streams and events work all the same:
 * all its streams are that queue (already ordered), an event completes when it is
 * recorded, and elapsed times come from the host clock. Code written for a GPU runs
 * unchanged on the CPU.
 *
 * Handles (dt_stream*, dt_event*) are reference-counted as tensors are: *_retain,
 * *_release (NULL is a no-op); a released handle is DT_ERR_INVALID_HANDLE. Streams and
 * events are thread-safe. Recording or waiting from several threads at once on the
 * same event orders them in some order, as CUDA does. */

/** A queue of work on one device. Opaque, reference-counted. */
typedef struct dt_stream dt_stream;
/** A marker in a stream's work, which streams and the host can wait for. Opaque,
 *  reference-counted. */
typedef struct dt_event dt_event;

/** A NEW stream on device (the process default device when its type is
 *  DT_DEVICE_DEFAULT). On a GPU it is a hardware queue of its own that does not wait for
 *  the default stream. Errors: DT_ERR_INVALID_ARGUMENT (NULL out),
 *  DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_OUT_OF_MEMORY, DT_ERR_BACKEND. */
DT_API dt_status dt_stream_create(dt_device device, dt_stream** out);
/** A NEW reference to the device's default stream. Errors: as dt_stream_create. */
DT_API dt_status dt_stream_default(dt_device device, dt_stream** out);
/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_stream_retain(dt_stream* s);
/** Drops a reference; NULL is a no-op. The stream itself lives on while tensors
 *  allocated on it or the thread's current stream refer to it; work queued on it
 *  finishes. Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_stream_release(dt_stream* s);
/** *out = the stream's device. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_stream_device(const dt_stream* s, dt_device* out);
/** *out = 1 for a default stream, else 0. Errors: as dt_stream_device. */
DT_API dt_status dt_stream_is_default(const dt_stream* s, int32_t* out);
/** Waits until the work queued on s has finished. Errors: DT_ERR_INVALID_ARGUMENT,
 *  DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_LOST (a kernel on it failed), DT_ERR_BACKEND. */
DT_API dt_status dt_stream_synchronize(const dt_stream* s);
/** *done = 1 when the work queued on s has finished, else 0; does not wait on a GPU.
 *  Errors: as dt_stream_synchronize. */
DT_API dt_status dt_stream_query(const dt_stream* s, int32_t* done);
/** Work queued on s after this call waits until e's recorded work has finished; the
 *  caller does not wait. e may be of another device (of another device type the
 *  calling thread waits for e instead). An event never recorded is no wait.
 *  Errors: as dt_stream_synchronize. */
DT_API dt_status dt_stream_wait_event(const dt_stream* s, const dt_event* e);
/** Work queued on s after this call waits for the work queued on other so far (an event
 *  recorded on other, waited for by s). Errors: as dt_stream_wait_event. */
DT_API dt_status dt_stream_wait_stream(const dt_stream* s, const dt_stream* other);
/** *out = the backend's own handle of s, for mixing libraries on one queue: a
 *  cudaStream_t for a CUDA stream (the default stream's too); NULL for a device without
 *  streams (the CPU). BORROWED: valid while s lives; never destroy it.
 *  Errors: as dt_stream_device. */
DT_API dt_status dt_stream_native_handle(const dt_stream* s, void** out);

/** Makes s the calling thread's current stream for s's device (see above; a default
 *  stream sets it back to the default). *previous (may be NULL) receives a NEW reference
 *  to the stream it replaces, to restore with another call and then release.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL s), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY;
 *  on failure the current stream is unchanged. */
DT_API dt_status dt_set_thread_stream(const dt_stream* s, dt_stream** previous);
/** A NEW reference to the calling thread's current stream for device.
 *  Errors: as dt_stream_create. */
DT_API dt_status dt_thread_stream(dt_device device, dt_stream** out);

/** A NEW event on device, never recorded, that times what it marks.
 *  Errors: as dt_stream_create. */
DT_API dt_status dt_event_create(dt_device device, dt_event** out);
/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_event_retain(dt_event* e);
/** Drops a reference; NULL is a no-op. Waits already queued on it stay valid.
 *  Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_event_release(dt_event* e);
/** *out = the event's device. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_event_device(const dt_event* e, dt_device* out);
/** Marks the end of the work queued on s so far (s NULL: the calling thread's current
 *  stream of e's device); recording again moves the mark. Errors: DT_ERR_INVALID_ARGUMENT,
 *  DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_MISMATCH (s on another device than e),
 *  DT_ERR_DEVICE_LOST, DT_ERR_BACKEND. */
DT_API dt_status dt_event_record(const dt_event* e, const dt_stream* s);
/** Waits until the recorded work has finished (at once for an event never recorded).
 *  Errors: DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_LOST, DT_ERR_BACKEND. */
DT_API dt_status dt_event_synchronize(const dt_event* e);
/** *done = 1 when the recorded work has finished (or the event was never recorded),
 *  else 0; does not wait. Errors: as dt_event_synchronize. */
DT_API dt_status dt_event_query(const dt_event* e, int32_t* done);
/** *ms = milliseconds from start's mark to end's, both recorded on one device; waits
 *  for their work to finish first (on a GPU about 0.5 us resolution, from the device's
 *  clock; on the CPU the host's steady clock). Errors: DT_ERR_INVALID_ARGUMENT (NULL, an
 *  event never recorded, events of different devices), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_DEVICE_LOST, DT_ERR_BACKEND; *ms is untouched on failure. */
DT_API dt_status dt_event_elapsed_ms(const dt_event* start, const dt_event* end, float* ms);

/** Tells the allocator that t's memory is used by work queued on s, a stream of t's
 *  device other than the one it was allocated on: when t's memory is freed, the free
 *  waits for the work queued on s until then. As torch's Tensor.record_stream. Nothing
 *  to do (and no error) on devices without streams. Errors: DT_ERR_INVALID_ARGUMENT
 *  (NULL), DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_MISMATCH (s on another device),
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_tensor_record_stream(const dt_tensor* t, const dt_stream* s);

/* ---------------------------------------------------------------- graphs
 *
 * CUDA graphs' model (torch.cuda.CUDAGraph), on every device: while a stream captures,
 * the work queued on it (ops, copies, a module's forward, backward, an SGD step) is
 * RECORDED into a graph instead of running; dt_graph_replay runs that work again, in the
 * same order and on the same memory, without the per-call checks, autograd bookkeeping
 * and allocations of eager calls. On the CPU the replay runs the recorded kernels; on a
 * GPU it queues them on the calling thread's current stream, after its earlier work (as
 * torch.cuda.CUDAGraph.replay).
 *
 * STATIC TENSORS. A graph keeps every tensor its work touches, so the memory stays
 * valid for replays (and is freed with the graph). Inputs are the tensors captured work
 * read: copy new values into them (dt_tensor_copy_from_host, or any in-place op) between
 * replays. Outputs are the tensors it wrote, including a loss, the gradients backward
 * set, and the parameters a step updated: read them after a replay. Right after
 * capture, outputs hold no meaningful values: capture computes nothing.
 *
 * WHAT CANNOT BE CAPTURED fails with DT_ERR_NOT_SUPPORTED before doing anything, and
 * the capture goes on (end it normally): reading values on the host (dt_tensor_item,
 * dt_tensor_copy_to_host, dt_tensor_to_string, saving, DLPack export), writing host
 * memory into a tensor (dt_tensor_copy_from_host), copies between the host and a GPU,
 * synchronising or querying the capturing stream or device, events and waits on it,
 * random numbers (a replay would repeat them), collectives and DataParallel, an Adam
 * step, and an SGD momentum step before its buffers exist (step once first, as
 * PyTorch's warm-up does). Index and class-target checks move into the kernels: a
 * replay with an index out of range fails with DT_ERR_INVALID_ARGUMENT, having run the
 * steps before it. Convolutions are recorded as im2col and matrix products.
 *
 * THREADS. Capture records the work of threads whose current stream is the capturing
 * one; it begins and ends on one thread. Replays of one graph run one at a time.
 * Handles (dt_graph*) are reference-counted as tensors are.
 */

/** A recorded sequence of work on one device. Opaque; create with dt_graph_capture_end. */
typedef struct dt_graph dt_graph;

/** Starts capturing on s, which must be a stream of its own (dt_stream_create), not a
 *  default stream, not already capturing; s becomes the calling thread's current stream
 *  for its device until dt_graph_capture_end, so the thread's work on that device is
 *  recorded. The capture holds a reference to the handle s until it ends, so s stays
 *  valid for dt_graph_capture_end even if the caller released its own.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, a default stream, a stream already capturing,
 *  the thread already capturing on that device), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY; on failure nothing changed. */
DT_API dt_status dt_graph_capture_begin(dt_stream* s);
/** Ends s's capture and *out receives a NEW graph of the recorded work (possibly none);
 *  the calling thread's current stream goes back to the one before dt_graph_capture_begin.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, s not capturing, the capture begun by another
 *  thread), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY; on failure the capture goes on. */
DT_API dt_status dt_graph_capture_end(dt_stream* s, dt_graph** out);
/** *out = 1 while s is capturing, else 0. Errors: DT_ERR_INVALID_ARGUMENT (NULL),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_stream_is_capturing(const dt_stream* s, int32_t* out);
/** Runs the graph's work again (see above): finished on return on the CPU; queued on the
 *  calling thread's current stream of the graph's device for a GPU (wait with
 *  dt_stream_synchronize or an event).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL g; a module whose parameters the graph uses was
 *  moved since capture: capture again; an index out of range at replay),
 *  DT_ERR_INVALID_HANDLE, and any error of the recorded work (DT_ERR_OUT_OF_MEMORY,
 *  DT_ERR_DEVICE_LOST, DT_ERR_BACKEND), after which the steps before the failing one
 *  have run. */
DT_API dt_status dt_graph_replay(dt_graph* g);
/** *out = the number of recorded steps (kernels and copies). Errors: DT_ERR_INVALID_ARGUMENT
 *  (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_graph_num_steps(const dt_graph* g, size_t* out);
/** *out = the device the graph's work runs on. Errors: as dt_graph_num_steps. */
DT_API dt_status dt_graph_device(const dt_graph* g, dt_device* out);
/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_graph_retain(dt_graph* g);
/** Drops a reference; NULL is a no-op. The last one waits for the device's queued work
 *  (a GPU's replays may still run) and frees the graph and the memory only it still
 *  holds. Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_graph_release(dt_graph* g);

/* ---------------------------------------------------------------- tensor constructors
 *
 * Common to all constructors: shape points to ndim dimensions (each >= 0; NULL allowed
 * when ndim is 0, which makes a 0-d tensor); ndim <= DT_MAX_DIMS. dtype and device may
 * be the DEFAULT sentinels. *out receives a NEW reference.
 * Errors: DT_ERR_INVALID_ARGUMENT (NULL out, negative dimension, too many dimensions,
 * unknown dtype, element count overflow), DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE,
 * DT_ERR_OUT_OF_MEMORY.
 */

/** Most dimensions a tensor may have. */
#define DT_MAX_DIMS 16

/** Uninitialised contents. */
DT_API dt_status dt_tensor_empty(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                 dt_device device, dt_tensor** out);
/** All zeros. */
DT_API dt_status dt_tensor_zeros(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                 dt_device device, dt_tensor** out);
/** All ones. */
DT_API dt_status dt_tensor_ones(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                dt_device device, dt_tensor** out);
/** Every element is value, converted to dtype as a cast would (true for bool if nonzero). */
DT_API dt_status dt_tensor_full(const int64_t* shape, size_t ndim, double value,
                                dt_dtype dtype, dt_device device, dt_tensor** out);

/** The 1-d tensor [start, start+step, ...) below end (above end for a negative step),
 *  with ceil((end-start)/step) elements, as torch.arange. With DT_DTYPE_DEFAULT the
 *  dtype is int64 when start, end and step are all integral, else the default dtype.
 *  Errors: as above, plus DT_ERR_INVALID_ARGUMENT for step 0, a step of the wrong sign,
 *  or a non-finite bound. */
DT_API dt_status dt_tensor_arange(double start, double end, double step, dt_dtype dtype,
                                  dt_device device, dt_tensor** out);
/** steps values from start to end, evenly spaced, both ends included, as
 *  torch.linspace: value i is start + i * step below the middle and end - (steps - 1 - i)
 *  * step from it, with step = (end - start) / (steps - 1), so both ends are exact.
 *  Floating dtypes compute in their own precision (float16 and bfloat16 in float32)
 *  as PyTorch's CPU kernel does; integer dtypes compute in float64 and truncate toward
 *  zero. steps 1 gives [start], 0 an empty tensor. DT_DTYPE_DEFAULT: the default dtype.
 *  A non-finite bound gives what the formula gives (NaN), as PyTorch's.
 *  Errors: DT_ERR_INVALID_ARGUMENT (steps < 0, out NULL),
 *  DT_ERR_DTYPE_MISMATCH (bool), the device errors of dt_tensor_empty. */
DT_API dt_status dt_tensor_linspace(double start, double end, int64_t steps, dt_dtype dtype,
                                    dt_device device, dt_tensor** out);
/** The n x m matrix with ones on the diagonal and zeros elsewhere, as torch.eye(n, m);
 *  any dtype (DT_DTYPE_DEFAULT: the default dtype).
 *  Errors: DT_ERR_INVALID_ARGUMENT (n or m negative, out NULL), the device errors of
 *  dt_tensor_empty. */
DT_API dt_status dt_tensor_eye(int64_t n, int64_t m, dt_dtype dtype, dt_device device, dt_tensor** out);

/** Uniform values in [0, 1) from the device's Philox4x32-10 generator. The value of each
 *  element depends only on the seed, the generator offset and the element's index, so
 *  it is the same for any thread count and on every backend. Advances the offset.
 *  Errors: as above, plus DT_ERR_DTYPE_MISMATCH for a non-floating dtype. */
DT_API dt_status dt_tensor_rand(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                dt_device device, dt_tensor** out);
/** Standard normal values (Box-Muller over the same Philox stream, computed in double
 *  and rounded once). As dt_tensor_rand, except that backends may differ in the last bit
 *  where their log and cos do (at most 1 ulp, seen in under 1 element in 1000). */
DT_API dt_status dt_tensor_randn(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                 dt_device device, dt_tensor** out);
/** Integers drawn uniformly from [low, high), as torch.randint: element i is
 *  low + floor(u_i * (high - low)) for the float64 uniform u_i that dt_tensor_rand gives
 *  element i, so the values are the same on every backend for the same seed. dtype
 *  DT_DTYPE_DEFAULT is int64; any integer or floating dtype (and bool for [0, 2)) may be
 *  asked for. Advances the generator's offset as a float64 dt_tensor_rand of the shape.
 *  Errors: as dt_tensor_rand, plus DT_ERR_INVALID_ARGUMENT (low >= high; a range wider
 *  than 2^53, which float64 draws cannot cover evenly; a bound the dtype cannot hold,
 *  such as 300 for uint8 or 2^24 + 1 for float32). */
DT_API dt_status dt_tensor_randint(int64_t low, int64_t high, const int64_t* shape, size_t ndim,
                                   dt_dtype dtype, dt_device device, dt_tensor** out);
/** A random permutation of 0 .. n-1 as a 1-d tensor, as torch.randperm: a stable sort of
 *  n float64 uniforms from the device's generator, so the permutation is the same on
 *  every backend for the same seed. dtype DT_DTYPE_DEFAULT is int64; integer and
 *  floating dtypes that hold n - 1 exactly may be asked for. Advances the offset as a
 *  float64 dt_tensor_rand of n elements.
 *  Errors: as dt_tensor_rand, plus DT_ERR_INVALID_ARGUMENT (n < 0, n - 1 out of the
 *  dtype's exact range, bool). */
DT_API dt_status dt_tensor_randperm(int64_t n, dt_dtype dtype, dt_device device, dt_tensor** out);
/** torch.multinomial: num_samples category indices (int64) per row of probs, a 1-d
 *  [categories] or 2-d [rows, categories] floating tensor of non-negative weights (they
 *  need not sum to 1), on probs's device; the result is [num_samples] or
 *  [rows, num_samples]. With replacement 1 each draw is independent (the inverse of the
 *  row's cumulative weights, summed in float64, at a float64 uniform), and a category
 *  of weight 0 is never drawn; with 0 no index is drawn twice in a row: the num_samples
 *  largest of weight / E for exponential draws E (PyTorch's method), largest first, so
 *  categories of weight 0 come only after all the others, in index order (as PyTorch's).
 *  The weights are checked on the host, so the call waits for probs's device. Not
 *  differentiable. Advances the generator's offset.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, probs not 1-d or 2-d, num_samples < 1,
 *  replacement not 0/1, more samples than categories without replacement, a negative,
 *  NaN or infinite weight, a row whose weights sum to 0), DT_ERR_DTYPE_MISMATCH (probs
 *  not floating), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_multinomial(const dt_tensor* probs, int64_t num_samples, int32_t replacement,
                                dt_tensor** out);

/** A tensor holding a COPY of nbytes of host memory at data, read as contiguous
 *  row-major elements of dtype; nbytes must equal numel * element size. For DT_BOOL
 *  each byte is one element and any nonzero byte is true (stored as 1).
 *  Errors: as above, plus DT_ERR_INVALID_ARGUMENT for NULL data with nbytes > 0 or a
 *  size mismatch (DT_DTYPE_DEFAULT is resolved to the default dtype first). */
DT_API dt_status dt_tensor_from_data(const void* data, size_t nbytes, const int64_t* shape,
                                     size_t ndim, dt_dtype dtype, dt_device device,
                                     dt_tensor** out);

/** Called once when devtensor no longer needs memory given to dt_tensor_from_blob. */
typedef void (*dt_deleter)(void* data, void* context);

/** A CPU tensor that BORROWS host memory the caller owns (as torch.from_numpy): writes
 *  through either side are seen by the other. strides (in elements; NULL for contiguous
 *  row-major) may describe any layout inside the buffer. When the last tensor using the
 *  memory is released, deleter(data, context) runs once (deleter may be NULL). On
 *  failure the deleter is NOT called and the caller keeps ownership. A DT_BOOL tensor's
 *  bytes must each be 0 or 1 (they are checked here, and must stay so: devtensor reads
 *  them as C bools, for which other bytes are undefined).
 *  Errors: as above, plus DT_ERR_INVALID_ARGUMENT (NULL data with elements, negative
 *  strides, a bool byte other than 0 or 1), DT_ERR_NOT_SUPPORTED (a device that exists but is not a CPU device; a
 *  device that does not exist is DT_ERR_INVALID_DEVICE / DT_ERR_DEVICE_UNAVAILABLE; data
 *  not aligned to the element size). */
DT_API dt_status dt_tensor_from_blob(void* data, const int64_t* shape, size_t ndim,
                                     const int64_t* strides, dt_dtype dtype, dt_device device,
                                     dt_deleter deleter, void* context, dt_tensor** out);

/** An uninitialised CPU tensor (cpu:0) in page-locked ("pinned") host memory, which
 *  CUDA copies can read and write asynchronously (see DT_TO_NON_BLOCKING). Pinned memory
 *  comes from the CUDA driver, so it needs a usable CUDA backend.
 *  Errors: as dt_tensor_empty, plus DT_ERR_DEVICE_UNAVAILABLE (no usable CUDA, with the
 *  reason). */
DT_API dt_status dt_tensor_empty_pinned(const int64_t* shape, size_t ndim, dt_dtype dtype,
                                        dt_tensor** out);

/** A CPU tensor with t's values in pinned memory, as torch.Tensor.pin_memory(): a NEW
 *  reference to t itself when t is already pinned, else a contiguous copy.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_NOT_SUPPORTED
 *  (t is not a CPU tensor), DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_tensor_pin_memory(const dt_tensor* t, dt_tensor** out);

/** *out = 1 if t's memory is pinned host memory, else 0. Errors: DT_ERR_INVALID_HANDLE,
 *  DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_tensor_is_pinned(const dt_tensor* t, int32_t* out);

/** Adds a reference to t. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_tensor_retain(dt_tensor* t);

/** Drops a reference; the tensor is freed with the last one. NULL is a no-op (DT_OK).
 *  Errors: DT_ERR_INVALID_HANDLE (already released, or not a tensor). */
DT_API dt_status dt_tensor_release(dt_tensor* t);

/** Like-constructors: same shape, dtype and device as src; NEW reference.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY; rand/randn_like also DT_ERR_DTYPE_MISMATCH. */
DT_API dt_status dt_empty_like(const dt_tensor* src, dt_tensor** out);
DT_API dt_status dt_zeros_like(const dt_tensor* src, dt_tensor** out);
DT_API dt_status dt_ones_like(const dt_tensor* src, dt_tensor** out);
DT_API dt_status dt_full_like(const dt_tensor* src, double value, dt_tensor** out);
DT_API dt_status dt_rand_like(const dt_tensor* src, dt_tensor** out);
DT_API dt_status dt_randn_like(const dt_tensor* src, dt_tensor** out);

/** new_* constructors: the given shape, with src's dtype and device; NEW reference.
 *  Errors: as the constructors above, plus DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_tensor_new_empty(const dt_tensor* src, const int64_t* shape, size_t ndim,
                                     dt_tensor** out);
DT_API dt_status dt_tensor_new_zeros(const dt_tensor* src, const int64_t* shape, size_t ndim,
                                     dt_tensor** out);
DT_API dt_status dt_tensor_new_ones(const dt_tensor* src, const int64_t* shape, size_t ndim,
                                    dt_tensor** out);
DT_API dt_status dt_tensor_new_full(const dt_tensor* src, const int64_t* shape, size_t ndim,
                                    double value, dt_tensor** out);

/* ------------------------------------------------------------------- tensor queries
 * Errors for all: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out).
 */

/** Number of dimensions. */
DT_API dt_status dt_tensor_ndim(const dt_tensor* t, size_t* out);
/** Writes the ndim dimensions into out[0..ndim); cap must be >= ndim
 *  (else DT_ERR_INVALID_ARGUMENT). out may be NULL for a 0-d tensor. */
DT_API dt_status dt_tensor_shape(const dt_tensor* t, int64_t* out, size_t cap);
/** Writes the strides, in elements, like dt_tensor_shape. */
DT_API dt_status dt_tensor_strides(const dt_tensor* t, int64_t* out, size_t cap);
/** The element type. */
DT_API dt_status dt_tensor_dtype(const dt_tensor* t, dt_dtype* out);
/** The device the tensor's memory is on. */
DT_API dt_status dt_tensor_device(const dt_tensor* t, dt_device* out);
/** Number of elements (1 for a 0-d tensor). */
DT_API dt_status dt_tensor_numel(const dt_tensor* t, size_t* out);
/** numel * element size: the bytes dt_tensor_copy_to_host writes. */
DT_API dt_status dt_tensor_nbytes(const dt_tensor* t, size_t* out);
/** 1 if the elements are contiguous in row-major order, else 0. */
DT_API dt_status dt_tensor_is_contiguous(const dt_tensor* t, int32_t* out);
/** 1 if a and b share storage (one is a view of the other, or both of a third). */
DT_API dt_status dt_tensor_shares_storage(const dt_tensor* a, const dt_tensor* b, int32_t* out);
/** Size in bytes of one element of dtype. Errors: DT_ERR_INVALID_ARGUMENT (unknown dtype). */
DT_API dt_status dt_dtype_size(dt_dtype dtype, size_t* out);
/** PyTorch's name of a dtype ("float32", "bfloat16", "bool"); NULL for an unknown one. */
DT_API const char* dt_dtype_name(dt_dtype dtype);

/* ---------------------------------------------------------------- moving and reading */

/** Returns t on device with dtype (DT_DEVICE_DEFAULT / DT_DTYPE_DEFAULT: unchanged), as
 *  PyTorch's Tensor.to: a NEW reference to a new tensor, leaving t alone; when neither
 *  changes and DT_TO_COPY is not set, the result is another reference to t itself
 *  (*out == t). Casts follow PyTorch (float to int truncates toward zero; nonzero is
 *  true). DT_TO_NON_BLOCKING lets a copy from pinned host memory to a GPU return before
 *  it ends (later work on that device is ordered after it; the source must not be
 *  modified until then, as in PyTorch); a copy to the host always waits for the device,
 *  so reading the result is always safe.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out, unknown dtype or
 *  flags), DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_tensor_to(const dt_tensor* t, dt_device device, dt_dtype dtype,
                              uint32_t flags, dt_tensor** out);

/** Copies the elements, in row-major order, to host memory at dst; nbytes must equal
 *  dt_tensor_nbytes. Works for any layout and device (waits for the device).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL dst with bytes to copy,
 *  nbytes mismatch). */
DT_API dt_status dt_tensor_copy_to_host(const dt_tensor* t, void* dst, size_t nbytes);

/** Copies host memory (row-major elements of t's dtype, nbytes == dt_tensor_nbytes) INTO
 *  t, in place, whatever t's layout. For DT_BOOL any nonzero byte is true (stored as 1).
 *  Errors: as dt_tensor_copy_to_host. */
DT_API dt_status dt_tensor_copy_from_host(dt_tensor* t, const void* src, size_t nbytes);

/** PyTorch's self.copy_(src): writes src's values INTO self, in place, keeping self's
 *  storage, shape, dtype and device (its views see the new values). src broadcasts to
 *  self's shape, converts to self's dtype as dt_tensor_to does, and may be on any device.
 *  How a graph's static input gets new values from a tensor already on the device
 *  (dt_tensor_copy_from_host takes host memory); inside a capture the copy is recorded
 *  as other work is. flags: 0 or DT_TO_NON_BLOCKING (as dt_tensor_to). Not recorded by
 *  autograd: refused while grad mode is on if self or src requires grad (copy under
 *  dt_set_grad_enabled(0), as PyTorch's parameter copies run under torch.no_grad()).
 *  src may overlap self (it is read apart first). On failure self is unchanged.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (unknown flags; a self that is
 *  read-only, or whose elements share memory, as an expanded tensor's),
 *  DT_ERR_SHAPE_MISMATCH (src does not broadcast to self's shape), DT_ERR_NOT_SUPPORTED
 *  (grad mode and requires grad; a copy a capture cannot record), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_copy_(dt_tensor* self, const dt_tensor* src, uint32_t flags);

/** *out = the address of t's first element, which for a CPU tensor is the LIVE memory:
 *  writes through it are seen by the tensor and its views, and the reverse. BORROWED:
 *  valid while a reference to t (or a view of its storage) is held, and, for a module's
 *  parameter or buffer, until the module moves (dt_module_to gives it new memory).
 *  Strides apply.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL; a read-only tensor,
 *  see DLPack below: read it with dt_tensor_copy_to_host),
 *  DT_ERR_NOT_SUPPORTED (a device tensor cannot be viewed as host memory; copy it). */
DT_API dt_status dt_tensor_data_ptr(const dt_tensor* t, void** out);

/** The value of a one-element tensor as a double.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL, numel != 1). */
DT_API dt_status dt_tensor_item(const dt_tensor* t, double* out);

/** PyTorch's printed form, e.g. "tensor([1., 2.], device='cuda:0', dtype=torch.float64)",
 *  with PyTorch's precision, scientific mode and summarisation (more than 1000 elements).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (buf NULL with cap > 0). */
DT_API dt_status dt_tensor_to_string(const dt_tensor* t, char* buf, size_t cap, size_t* needed);

/* ------------------------------------------------------------------------- views
 * A view shares t's storage: writes through one are seen by the other. *out is a NEW
 * reference. Errors for all: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out,
 * a dimension out of range), DT_ERR_SHAPE_MISMATCH (a shape that does not fit).
 */

/** t with a new shape of the same numel (one entry may be -1, inferred). A view when the
 *  strides allow it, else a contiguous copy (as torch.reshape). */
DT_API dt_status dt_reshape(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out);
/** Like dt_reshape but always a view; DT_ERR_SHAPE_MISMATCH when the strides do not allow it. */
DT_API dt_status dt_view(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out);
/** Swaps two dimensions. */
DT_API dt_status dt_transpose(const dt_tensor* t, int64_t dim0, int64_t dim1, dt_tensor** out);
/** Reorders the dimensions; dims is a permutation of 0..ndim-1 (negatives allowed). */
DT_API dt_status dt_permute(const dt_tensor* t, const int64_t* dims, size_t ndim, dt_tensor** out);
/** Elements start .. start+length-1 along dim (start may be negative). */
DT_API dt_status dt_narrow(const dt_tensor* t, int64_t dim, int64_t start, int64_t length,
                           dt_tensor** out);
/** Removes the listed size-1 dimensions (ndims == 0: every size-1 dimension); listed
 *  dimensions whose size is not 1 are kept, as in PyTorch. */
DT_API dt_status dt_squeeze(const dt_tensor* t, const int64_t* dims, size_t ndims, dt_tensor** out);
/** Inserts a size-1 dimension at dim (in [-ndim-1, ndim]). */
DT_API dt_status dt_unsqueeze(const dt_tensor* t, int64_t dim, dt_tensor** out);
/** Broadcasts to shape (size-1 dimensions repeat with stride 0; -1 keeps a size). */
DT_API dt_status dt_expand(const dt_tensor* t, const int64_t* shape, size_t ndim, dt_tensor** out);
/** t itself (another reference) if contiguous, else a contiguous copy. */
DT_API dt_status dt_contiguous(const dt_tensor* t, dt_tensor** out);
/** Flattens dims start_dim..end_dim into one (a view when possible, as dt_reshape). */
DT_API dt_status dt_flatten(const dt_tensor* t, int64_t start_dim, int64_t end_dim, dt_tensor** out);

/* ---------------------------------------------------------------- elementwise ops
 * Binary ops broadcast as NumPy/PyTorch do and promote dtypes by PyTorch's rules. Both
 * operands must be on one device. *out is a NEW tensor.
 * Errors for all: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out),
 * DT_ERR_DEVICE_MISMATCH ("expected device cpu:0 but got device cpu:1"),
 * DT_ERR_SHAPE_MISMATCH (shapes that do not broadcast), DT_ERR_DTYPE_MISMATCH (a dtype
 * the op does not accept, e.g. sub on bool), DT_ERR_OUT_OF_MEMORY.
 *
 * Scalars (the *_scalar functions) are doubles. An integral value behaves like a Python
 * int and a non-integral one like a Python float: int_tensor + 2 keeps int_tensor's
 * dtype; int_tensor + 2.5 becomes the default float dtype. The maximum / minimum scalar
 * functions (PyTorch's clamp_min / clamp_max) refuse, with DT_ERR_INVALID_ARGUMENT, an
 * integral bound that an integer result dtype cannot hold (int8 and 300), as PyTorch does.
 *
 * In-place variants (trailing underscore) write into self, whose dtype and shape must
 * hold the result: the broadcast shape must equal self's shape and the promoted dtype
 * must cast to self's dtype as PyTorch allows (no float result into an int tensor).
 */

DT_API dt_status dt_add(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_sub(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_mul(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
/** True division: integer inputs give the default float dtype. */
DT_API dt_status dt_div(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_pow(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_maximum(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_minimum(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);

DT_API dt_status dt_add_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_sub_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_mul_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_div_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_pow_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_maximum_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_minimum_scalar(const dt_tensor* a, double b, dt_tensor** out);

DT_API dt_status dt_add_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_sub_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_mul_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_div_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_pow_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_maximum_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_minimum_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_add_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_sub_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_mul_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_div_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_pow_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_maximum_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_minimum_scalar_(dt_tensor* self, double other);

/** The integer-division family, as torch.fmod, torch.remainder and torch.floor_divide:
 *  fmod(a, b) = a - trunc(a / b) * b takes a's sign (C's fmod); remainder(a, b) = a -
 *  floor(a / b) * b takes b's sign (Python's %); floor_divide(a, b) = floor(a / b)
 *  (Python's //). Integer operands stay integer; bool operands are DT_ERR_DTYPE_MISMATCH.
 *  An integer divisor of 0 is DT_ERR_INVALID_ARGUMENT (PyTorch's ZeroDivisionError): a
 *  divisor tensor is read for that, which waits for a GPU's queued work. (Inside a CUDA
 *  graph capture nothing can be read, and a 0 divisor gives 0 when the graph replays.)
 *  Floating division by 0 follows IEEE: fmod and remainder give NaN, floor_divide
 *  +-inf or NaN. Differentiable: fmod (FmodBackward1 / FmodBackward0 with a scalar) and
 *  remainder (RemainderBackward1 / RemainderBackward0); floor_divide's result has no
 *  gradient. */
DT_API dt_status dt_fmod(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_remainder(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_floor_divide(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_fmod_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_remainder_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_floor_divide_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_fmod_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_remainder_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_floor_divide_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_fmod_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_remainder_scalar_(dt_tensor* self, double other);
DT_API dt_status dt_floor_divide_scalar_(dt_tensor* self, double other);

/** torch.atan2(a, b): the angle in radians, in [-pi, pi], of the point (x = b, y = a),
 *  with the quadrant from both signs (atan2(0, -1) = pi). Integer and bool operands
 *  compute in the default float dtype, as dt_div. Differentiable (Atan2Backward0: a gets
 *  g b / (a^2 + b^2), b gets -g a / (a^2 + b^2)). dt_atan2_scalar takes b as a number
 *  (PyTorch has only the tensor form). */
DT_API dt_status dt_atan2(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_atan2_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_atan2_(dt_tensor* self, const dt_tensor* other);
DT_API dt_status dt_atan2_scalar_(dt_tensor* self, double other);

/** Comparisons: a bool tensor. */
DT_API dt_status dt_eq(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_ne(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_lt(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_le(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_gt(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_ge(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_eq_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_ne_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_lt_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_le_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_gt_scalar(const dt_tensor* a, double b, dt_tensor** out);
DT_API dt_status dt_ge_scalar(const dt_tensor* a, double b, dt_tensor** out);

/** cond ? a : b elementwise; cond must be bool; all three broadcast together. */
DT_API dt_status dt_where(const dt_tensor* cond, const dt_tensor* a, const dt_tensor* b,
                          dt_tensor** out);

/** torch.masked_fill (out of place): a with value wherever the bool mask is true; mask
 *  and a broadcast together (the result has their broadcast shape) and share a device.
 *  value converts to a's dtype as a cast would (2.5 into int64 is 2); a value an integer
 *  dtype cannot hold (300 into int8, NaN into int64) is refused, as PyTorch does.
 *  Differentiable in a (MaskedFillBackward0: no gradient where the mask is true). Errors:
 *  DT_ERR_INVALID_ARGUMENT (NULL out, a value out of an integer dtype's range), DT_ERR_INVALID_HANDLE, DT_ERR_DTYPE_MISMATCH (a
 *  mask that is not bool), DT_ERR_SHAPE_MISMATCH (shapes that do not broadcast),
 *  DT_ERR_DEVICE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_masked_fill(const dt_tensor* a, const dt_tensor* mask, double value, dt_tensor** out);

/** torch.clamp: every element limited to [*min, *max]; min or max may be NULL (no bound
 *  on that side), not both. NaN stays NaN, and a NaN bound gives NaN (as
 *  dt_maximum_scalar); when *min > *max every element is *max. The
 *  result dtype is promoted over a and both bounds, by dt_maximum_scalar's rules (an
 *  integer tensor clamped to [-7, 1.5] becomes the default float dtype and compares
 *  with -7, as in PyTorch). Differentiable (ClampBackward1: the gradient passes where
 *  min <= a <= max). Errors: DT_ERR_INVALID_ARGUMENT (NULL out, both bounds NULL, an
 *  integral bound outside an integer result dtype: int8 clamped to 200),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_DTYPE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_clamp(const dt_tensor* a, const double* min, const double* max, dt_tensor** out);

/** torch.nn.functional.pad: a padded copy of a. pad holds npad values, pairs (before,
 *  after) starting from the LAST dim and going backwards, as PyTorch's: (1, 2) pads the
 *  last dim by 1 before and 2 after, (1, 2, 3, 4) also the dim before it by 3 and 4; npad
 *  is even and at most 2 * ndim. A negative value removes that many elements instead.
 *  mode (NULL: "constant"):
 *    "constant"  new elements are value (converted to a's dtype as dt_masked_fill's);
 *    "reflect"   mirrored about the edge element, not repeating it ([1, 2, 3] padded by
 *                2 before: [3, 2, 1, 2, 3]); each pad below the dim's size;
 *    "replicate" the edge element repeated; the dim not empty;
 *    "circular"  wrapped around (the other end's elements); each pad at most the size.
 *  The non-constant modes pad any dims of any rank (PyTorch's only the last 1 to 3 of a
 *  batched or unbatched 1-d to 3-d input; where both accept, the results are equal), and
 *  take no value (a nonzero one is refused, as PyTorch's). Any dtype; differentiable
 *  (ConstantPadNdBackward0 for "constant"; the other modes' gradients add up the copies
 *  of each element). The non-constant modes make their index lists on the host and copy
 *  them over, which a graph capture on a device refuses. Errors: DT_ERR_INVALID_ARGUMENT
 *  (NULL out, pad NULL with npad > 0, npad odd or over 2 * ndim, an unknown mode, a pad
 *  its mode does not allow or that leaves a negative size, naming the dim and sizes, a
 *  value a's integer dtype cannot hold, a value for another mode than "constant"),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_pad(const dt_tensor* a, const int64_t* pad, size_t npad, const char* mode, double value,
                        dt_tensor** out);

/** torch.triu / torch.tril: a copy of a (at least 2-d) that keeps the elements of its
 *  last two dims on and above (triu) or on and below (tril) the given diagonal and zeros
 *  the rest: diagonal 0 is the main diagonal, 1 the one above it, -1 the one below.
 *  Batched over leading dims; any dtype. Differentiable (TriuBackward0 / TrilBackward0).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, fewer than 2 dims), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_triu(const dt_tensor* a, int64_t diagonal, dt_tensor** out);
DT_API dt_status dt_tril(const dt_tensor* a, int64_t diagonal, dt_tensor** out);

/** Unary ops, with PyTorch's dtype rules: neg, abs, relu and the rounding ops (floor,
 *  ceil, round, trunc) keep integer dtypes and refuse bool; sign keeps every dtype;
 *  gelu, gelu_tanh, silu and frac accept only floating tensors; the others (exp, log, sqrt, rsqrt,
 *  sin, cos, sigmoid, tanh, erf, reciprocal, the logarithms, exponentials and
 *  trigonometric functions below) turn integer and bool inputs into the default float
 *  dtype. A refused dtype is DT_ERR_DTYPE_MISMATCH. Errors for all:
 *  DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_DTYPE_MISMATCH,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_neg(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_abs(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_exp(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_log(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_sqrt(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_rsqrt(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_sin(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_cos(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_relu(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_sigmoid(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_tanh(const dt_tensor* a, dt_tensor** out);
/** GELU, exact (erf) form, as torch.nn.functional.gelu's default. */
DT_API dt_status dt_gelu(const dt_tensor* a, dt_tensor** out);
/** GELU's tanh approximation, as torch.nn.functional.gelu(a, approximate="tanh") (GPT-2's
 *  "gelu_new"): a / 2 * (1 + tanh(sqrt(2 / pi) * (a + 0.044715 a^3))). Its grad_fn is
 *  "GeluBackward0", as PyTorch's. */
DT_API dt_status dt_gelu_tanh(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_silu(const dt_tensor* a, dt_tensor** out);
/** torch.nn.functional.leaky_relu: a where a > 0, else a * negative_slope (PyTorch's
 *  default 0.01), floating tensors only; its gradient is 1 or negative_slope (at 0 the
 *  slope, as PyTorch's), grad_fn "LeakyReluBackward0". Errors: DT_ERR_INVALID_HANDLE,
 *  DT_ERR_INVALID_ARGUMENT (NULL out, a slope that is not finite), DT_ERR_DTYPE_MISMATCH,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_leaky_relu(const dt_tensor* a, double negative_slope, dt_tensor** out);
/** The error function, as torch.erf (integers and bool compute in the default float
 *  dtype); its gradient is 2/sqrt(pi) exp(-x^2). */
DT_API dt_status dt_erf(const dt_tensor* a, dt_tensor** out);

/** Rounding, as torch.floor, torch.ceil, torch.round (halves to even: 2.5 gives 2, -0.5
 *  gives -0) and torch.trunc (toward zero). Integer inputs come back unchanged in their
 *  dtype; bool is DT_ERR_DTYPE_MISMATCH. NaN, +-inf and -0.0 stay as they are. The
 *  gradient is 0 everywhere (FloorBackward0, ...), as in PyTorch. */
DT_API dt_status dt_floor(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_ceil(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_round(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_trunc(const dt_tensor* a, dt_tensor** out);
/** torch.frac: x - trunc(x), with x's sign (frac(-2.5) = -0.5; +-inf gives NaN). Floating
 *  tensors only (others: DT_ERR_DTYPE_MISMATCH). Gradient: g (FracBackward0). */
DT_API dt_status dt_frac(const dt_tensor* a, dt_tensor** out);
/** torch.sign: -1, 0 or 1 in a's dtype, any dtype (bool unchanged). As PyTorch 1.13's
 *  CPU kernel, NaN and -0.0 give 0. Gradient: 0 (SignBackward0). */
DT_API dt_status dt_sign(const dt_tensor* a, dt_tensor** out);
/** torch.reciprocal: 1 / x (1 / 0 is inf, 1 / -0.0 is -inf). Integer and bool inputs
 *  compute in the default float dtype. Gradient: -g / x^2 (ReciprocalBackward0). */
DT_API dt_status dt_reciprocal(const dt_tensor* a, dt_tensor** out);
/** Logarithms and exponentials beside dt_log and dt_exp, as torch's functions of the same
 *  names: log1p(x) = log(1 + x) and expm1(x) = e^x - 1 (both accurate near 0), log2,
 *  log10, exp2 (2^x). Integer and bool inputs compute in the default float dtype; a
 *  logarithm's argument out of its domain gives NaN (log of 0: -inf), not an error. */
DT_API dt_status dt_log1p(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_expm1(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_log2(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_log10(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_exp2(const dt_tensor* a, dt_tensor** out);
/** Trigonometric and hyperbolic functions and their inverses, in radians, as torch's
 *  functions of the same names. Integer and bool inputs compute in the default float
 *  dtype; an argument outside an inverse's domain (asin(2), acosh(0.5), atanh(1.5))
 *  gives NaN, not an error (atanh(+-1) is +-inf). All differentiable, with PyTorch's
 *  formulas and grad_fn names (TanBackward0, AsinBackward0, ...). */
DT_API dt_status dt_tan(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_asin(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_acos(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_atan(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_sinh(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_cosh(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_asinh(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_acosh(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_atanh(const dt_tensor* a, dt_tensor** out);

/* ---------------------------------------------------------------------- reductions
 * Reduce over the ndims dimensions listed in dims (ndims == 0: all of them); keepdim
 * keeps them as size 1 (keepdim is 0 or 1). Errors: DT_ERR_INVALID_HANDLE,
 * DT_ERR_INVALID_ARGUMENT (NULL out, dims NULL with ndims > 0, a dimension out of range
 * or repeated, keepdim other than 0 or 1), DT_ERR_DTYPE_MISMATCH,
 * DT_ERR_SHAPE_MISMATCH (max/min/argmax/argmin of an empty extent), DT_ERR_OUT_OF_MEMORY.
 */

/** Sum; integer and bool inputs sum to int64 (as PyTorch); an empty sum is 0. */
DT_API dt_status dt_sum(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                        dt_tensor** out);
/** Mean of a floating tensor (an integer input is DT_ERR_DTYPE_MISMATCH, as in PyTorch);
 *  the mean of nothing is NaN. */
DT_API dt_status dt_mean(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                         dt_tensor** out);
/** Largest / smallest value (torch.amax / amin); NaN propagates. */
DT_API dt_status dt_max(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                        dt_tensor** out);
DT_API dt_status dt_min(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                        dt_tensor** out);
/** Index (int64) of the first largest / smallest value along ONE dimension (ndims <= 1;
 *  ndims == 0 means over the flattened tensor, giving a 0-d result, or all-ones dims
 *  with keepdim). NaN counts as the largest. Bool inputs are DT_ERR_DTYPE_MISMATCH. */
DT_API dt_status dt_argmax(const dt_tensor* a, const int64_t* dims, size_t ndims,
                           int32_t keepdim, dt_tensor** out);
DT_API dt_status dt_argmin(const dt_tensor* a, const int64_t* dims, size_t ndims,
                           int32_t keepdim, dt_tensor** out);

/** torch.var / torch.std over dims (ndims == 0: all of them) of a floating tensor: the
 *  sum of squared deviations from the mean divided by n - correction (n: the count of
 *  elements each result reduces; correction 1 is the unbiased estimate, PyTorch's
 *  default, 0 the population one). n - correction <= 0 divides by 0 (inf, or NaN when
 *  the deviations are all 0), as in PyTorch. On the CPU float32, float16 and bfloat16 compute in
 *  float64 (so 1e20-sized values do not overflow), on a GPU the 16-bit ones in float32.
 *  Differentiable (VarBackward0 / StdBackward0). Errors: as the reductions, plus
 *  DT_ERR_DTYPE_MISMATCH for an integer or bool tensor and DT_ERR_INVALID_ARGUMENT for a
 *  correction that is not finite or a keepdim other than 0 or 1. */
DT_API dt_status dt_var(const dt_tensor* a, const int64_t* dims, size_t ndims, double correction,
                        int32_t keepdim, dt_tensor** out);
DT_API dt_status dt_std(const dt_tensor* a, const int64_t* dims, size_t ndims, double correction,
                        int32_t keepdim, dt_tensor** out);

/** torch.isnan / torch.isinf / torch.isfinite: a NEW bool tensor of a's shape, true where
 *  the element is NaN / +-infinity / neither. Integer and bool tensors are never NaN or
 *  infinite. Not differentiable (a bool result). Errors: DT_ERR_INVALID_ARGUMENT (NULL
 *  out), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_isnan(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_isinf(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_isfinite(const dt_tensor* a, dt_tensor** out);
/** torch.logical_not / logical_and / logical_or / logical_xor: NEW bool tensors, the
 *  operands taken as truth values (nonzero is true, NaN included) of any dtypes, a and b
 *  broadcast together. Not differentiable. Errors: as the comparisons
 *  (DT_ERR_SHAPE_MISMATCH for shapes that do not broadcast, DT_ERR_DEVICE_MISMATCH). */
DT_API dt_status dt_logical_not(const dt_tensor* a, dt_tensor** out);
DT_API dt_status dt_logical_and(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_logical_or(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
DT_API dt_status dt_logical_xor(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
/** torch.any / torch.all over dims (ndims == 0: all of them): a NEW bool tensor, whether
 *  any / every element reduced is nonzero (NaN is); over no element false / true. The
 *  result is bool for every input dtype (PyTorch 1.13 returns uint8 for a uint8 input).
 *  Not differentiable. Errors: as the reductions (DT_ERR_INVALID_ARGUMENT for a dim out
 *  of range or repeated, NULL dims with ndims > 0, NULL out, keepdim not 0 or 1),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_any(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim, dt_tensor** out);
DT_API dt_status dt_all(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim, dt_tensor** out);
/** torch.logsumexp over dims (ndims == 0: all of them): log(sum(exp(a))), computed with
 *  the largest value of each reduction subtracted first (and added back), so that large
 *  values do not overflow; a reduction whose largest value is infinite gives that
 *  infinity, one over no element -inf (log 0), NaN propagates. Integer and bool tensors
 *  are taken as the default dtype (dt_default_dtype), as PyTorch's. Differentiable
 *  (LogsumexpBackward0: the gradient times exp(a - result), the softmax over the reduced
 *  dims). Errors: as the reductions (DT_ERR_INVALID_ARGUMENT for a dim out of range or
 *  repeated, NULL dims with ndims > 0, NULL out, keepdim not 0 or 1),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_logsumexp(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                              dt_tensor** out);
/** torch.linalg.vector_norm of a floating tensor over dims (ndims == 0: all of them):
 *  ord 2 sqrt(sum(|a|^2)), 1 sum(|a|), INFINITY max(|a|), -INFINITY min(|a|), 0 the
 *  count of nonzero elements, any other ord (sum(|a|^ord))^(1 / ord). float16 and
 *  bfloat16 compute in float32, the others in their own dtype, as PyTorch's (so float32
 *  squares past 3.4e38 overflow to inf, as there). A reduction over no element is 0,
 *  except for ord +-INFINITY, which has no identity (DT_ERR_INVALID_ARGUMENT, as
 *  PyTorch). Differentiable with PyTorch's formulas (LinalgVectorNormBackward0),
 *  including their choices where the norm is not differentiable: a zero gradient where
 *  the norm is 0, ties of the inf-norms share the gradient evenly, and ord 0 passes no
 *  gradient. Errors: as dt_logsumexp, plus DT_ERR_DTYPE_MISMATCH for an integer or bool
 *  tensor and DT_ERR_INVALID_ARGUMENT for a NaN ord. */
DT_API dt_status dt_vector_norm(const dt_tensor* a, double ord, const int64_t* dims, size_t ndims, int32_t keepdim,
                                dt_tensor** out);
/** torch.nn.functional.normalize: a / max(||a||_ord along dim, eps), the norm as
 *  dt_vector_norm's (any ord), kept to broadcast: a NEW tensor of a's shape. PyTorch's
 *  defaults are ord 2, dim 1, eps 1e-12. Floating tensors. Differentiable (the clamp at
 *  eps passes no gradient where it holds, as PyTorch's clamp_min).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, dim out of range, NaN ord),
 *  DT_ERR_DTYPE_MISMATCH (not floating), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_normalize(const dt_tensor* a, double ord, int64_t dim, double eps, dt_tensor** out);
/** torch.nn.functional.cosine_similarity (PyTorch 1.13's formula): x1 and x2 broadcast
 *  together, each divided by its 2-norm along dim clamped below at eps (the clamp
 *  changes the value only, not the gradient, as PyTorch's no_grad clamp), then summed
 *  products along dim: a NEW tensor of the broadcast shape without dim. PyTorch's
 *  defaults are dim 1, eps 1e-8. Floating tensors. Differentiable in both.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, dim out of range), DT_ERR_SHAPE_MISMATCH (shapes
 *  that do not broadcast), DT_ERR_DTYPE_MISMATCH (not floating),
 *  DT_ERR_DEVICE_MISMATCH, DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_cosine_similarity(const dt_tensor* x1, const dt_tensor* x2, int64_t dim, double eps,
                                      dt_tensor** out);
/** torch.nn.functional.pairwise_distance: ||x1 - x2 + eps||_ord over the last dim of the
 *  broadcast shape (keepdim 1 keeps it as size 1), the norm as dt_vector_norm's: a NEW
 *  tensor. PyTorch's defaults are ord 2, eps 1e-6, keepdim 0. Floating tensors.
 *  Differentiable in both (NormBackward1).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, keepdim not 0/1, NaN ord), DT_ERR_SHAPE_MISMATCH,
 *  DT_ERR_DTYPE_MISMATCH (not floating), DT_ERR_DEVICE_MISMATCH, DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_pairwise_distance(const dt_tensor* x1, const dt_tensor* x2, double ord, double eps,
                                      int32_t keepdim, dt_tensor** out);

/** Numerically stable softmax / log-softmax along dim, of a floating tensor. */
DT_API dt_status dt_softmax(const dt_tensor* a, int64_t dim, dt_tensor** out);
DT_API dt_status dt_log_softmax(const dt_tensor* a, int64_t dim, dt_tensor** out);

/** torch.cumsum: *out (a NEW tensor of a's shape) holds the running sums along dim,
 *  out[..., k, ...] = a[..., 0, ...] + ... + a[..., k, ...]. Floating tensors keep their
 *  dtype; integer and bool tensors sum in int64 (wrapping on overflow), as PyTorch's.
 *  float32 accumulates in float64 on every device (as PyTorch's CPU kernel; its CUDA
 *  kernel uses float32), float16 and bfloat16 in float32. A 0-d tensor is
 *  its own sum (dim 0 or -1). Differentiable (CumsumBackward0: the gradient summed from
 *  the end). Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out, dim out of
 *  range), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_cumsum(const dt_tensor* a, int64_t dim, dt_tensor** out);

/* ----------------------------------------------------------------------------- sorting */

/** torch.sort(stable=True): *values (a NEW tensor of a's shape and dtype) holds a's
 *  elements sorted along dim, ascending, or descending when `descending` is nonzero;
 *  *indices (a NEW int64 tensor of a's shape) holds where each value was along dim.
 *  The sort is stable: equal elements keep their order, descending too. NaN sorts as
 *  the largest value (last ascending, first descending); -0.0 and 0.0 are equal. Every
 *  dtype, bool included (false first). A 0-d tensor sorts to itself, index 0. Both
 *  results are contiguous. Differentiable in a through *values (SortBackward0: the
 *  gradient goes back to the positions *indices names).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (values or indices NULL or the
 *  same pointer, dim out of range), DT_ERR_NOT_SUPPORTED (on CUDA, 2^31 or more elements
 *  along dim), DT_ERR_OUT_OF_MEMORY. On failure *values and *indices are untouched. */
DT_API dt_status dt_sort(const dt_tensor* a, int64_t dim, int32_t descending, dt_tensor** values,
                         dt_tensor** indices);
/** torch.argsort(stable=True): *out (a NEW int64 tensor of a's shape) is dt_sort's
 *  indices alone. Not differentiable. Errors: as dt_sort (NULL out). */
DT_API dt_status dt_argsort(const dt_tensor* a, int64_t dim, int32_t descending, dt_tensor** out);
/** torch.topk: the k largest elements of a along dim, largest first (the k smallest,
 *  smallest first, when `largest` is zero): *values (a NEW tensor of a's dtype and a's
 *  shape with k at dim) and *indices (NEW, int64, where each value was along dim). Equal
 *  elements come in order of position (PyTorch leaves the choice among ties open); NaN
 *  counts as the largest value. k runs from 0 (empty results) to the size of dim (1 for
 *  a 0-d tensor, which comes back whole for k 0 and 1, as in PyTorch). The CPU sorts only
 *  the k of each row (O(n log k)); CUDA sorts whole rows. Differentiable in a through
 *  *values (TopkBackward0).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (values or indices NULL or the
 *  same pointer, dim out of range, k < 0 or k > the size of dim), DT_ERR_DTYPE_MISMATCH
 *  (a bool tensor, as PyTorch), DT_ERR_NOT_SUPPORTED (as dt_sort), DT_ERR_OUT_OF_MEMORY.
 *  On failure *values and *indices are untouched. */
DT_API dt_status dt_topk(const dt_tensor* a, int64_t k, int64_t dim, int32_t largest, dt_tensor** values,
                         dt_tensor** indices);

/* ---------------------------------------------------------------------- linear algebra */

/** torch.matmul: 1-d x 1-d is a dot product, 2-d x 2-d a matrix product, and batched
 *  operands broadcast their batch dimensions. float32/float64 run on BLAS; float16 and
 *  bfloat16 compute in float32; integer dtypes are supported; bool is refused.
 *  Errors: as the binary ops. */
DT_API dt_status dt_matmul(const dt_tensor* a, const dt_tensor* b, dt_tensor** out);
/** torch.nn.functional.conv2d: input [N, C, H, W] or [C, H, W], weight [OC, C / groups,
 *  kH, kW], bias [OC] or NULL; stride, padding, dilation as dt_conv2d_new's (NULL:
 *  defaults; {DT_PADDING_SAME, 0}: "same"). Differentiable in input, weight and bias.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, sizes not positive, groups not dividing the
 *  channels), DT_ERR_INVALID_HANDLE, DT_ERR_SHAPE_MISMATCH (channels, 4-d weight, bias
 *  size, kernel larger than the padded input: the message gives the shapes),
 *  DT_ERR_DTYPE_MISMATCH (dtypes differ, not floating), DT_ERR_DEVICE_MISMATCH,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_conv2d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias,
                           const int64_t* stride, const int64_t* padding, const int64_t* dilation, int64_t groups,
                           dt_tensor** out);
/** torch.nn.functional.conv1d: input [N, C, L] or [C, L], weight [OC, C / groups, K],
 *  bias NULL or [OC]; stride, dilation (PyTorch's default 1), padding (0, or
 *  DT_PADDING_SAME for "same" with stride 1), groups. Output [N, OC, OL], OL = (L + 2 *
 *  padding - dilation * (K - 1) - 1) / stride + 1. Runs as dt_conv2d over a height of 1
 *  (autograd: ConvolutionBackward0). Errors: as dt_conv2d (SHAPE_MISMATCH for a weight
 *  that is not 3-d or an input that is not 2-d or 3-d). */
DT_API dt_status dt_conv1d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias, int64_t stride,
                           int64_t padding, int64_t dilation, int64_t groups, dt_tensor** out);
/** torch.nn.functional.conv_transpose2d (the gradient of conv2d with respect to its input,
 *  sometimes called a deconvolution): input [N, C, H, W] or [C, H, W], weight [C, OC /
 *  groups, kH, kW] (note: in_channels first), bias [OC] or NULL; stride, padding,
 *  output_padding and dilation are (height, width) pairs, NULL for PyTorch's defaults (1,
 *  0, 0, 1). Output [N, OC, OH, OW], OH = (H - 1) * stride - 2 * padding + dilation * (kH
 *  - 1) + output_padding + 1. output_padding must be smaller than stride or dilation.
 *  Differentiable in input, weight and bias (ConvolutionBackward0).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, sizes not positive, negative padding or
 *  output_padding, output_padding not smaller than stride or dilation, groups not
 *  dividing the channels), DT_ERR_INVALID_HANDLE, DT_ERR_SHAPE_MISMATCH (channels, a
 *  weight that is not 4-d, bias size, an output size below 1: the message gives the
 *  shapes), DT_ERR_DTYPE_MISMATCH (dtypes differ, not floating), DT_ERR_DEVICE_MISMATCH,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_conv_transpose2d(const dt_tensor* input, const dt_tensor* weight, const dt_tensor* bias,
                                     const int64_t* stride, const int64_t* padding, const int64_t* output_padding,
                                     int64_t groups, const int64_t* dilation, dt_tensor** out);
/** torch.nn.functional.max_pool2d: the largest value of each kernel_size window of input
 *  [N, C, H, W] or [C, H, W] (floating), windows stride apart (NULL: kernel_size), over
 *  input padded with -inf by padding (NULL: 0; at most kernel_size / 2, rounded down,
 *  whatever the dilation, as PyTorch), spread by
 *  dilation (NULL: 1). Output size (H + 2 * padding - dilation * (k - 1) - 1) / stride + 1,
 *  rounded down; with ceil_mode = 1 rounded up, less one if the last window would start
 *  past the input and its left padding (PyTorch's rule): the last windows may then hang
 *  over the bottom/right edge, and only their elements inside count; so a kernel larger
 *  than the padded input by less than the stride gives one window (3 x 3 input, kernel
 *  4, ceil_mode: one output, the input's maximum), as in PyTorch. The gradient goes to
 *  each window's largest element. A window that a dilation steps over, no tap inside the
 *  input (kernel 2, dilation 2, padding 1 over one row), gives -inf and no gradient, as
 *  in PyTorch. Errors: DT_ERR_INVALID_ARGUMENT (NULL, sizes not
 *  positive, padding over half the kernel, ceil_mode not 0/1), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_SHAPE_MISMATCH (not 3-d or 4-d, a kernel larger than the padded input
 *  that leaves no window), DT_ERR_DTYPE_MISMATCH (not floating), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_max_pool2d(const dt_tensor* input, const int64_t* kernel_size, const int64_t* stride,
                               const int64_t* padding, const int64_t* dilation, int32_t ceil_mode, dt_tensor** out);
/** torch.nn.functional.avg_pool2d: the mean of each window, zero padding counted when
 *  count_include_pad is 1 (PyTorch's default), else only the elements inside the input;
 *  under ceil_mode the part of a window hanging over the padded input never counts.
 *  Arguments and errors as dt_max_pool2d (no dilation). */
DT_API dt_status dt_avg_pool2d(const dt_tensor* input, const int64_t* kernel_size, const int64_t* stride,
                               const int64_t* padding, int32_t ceil_mode, int32_t count_include_pad, dt_tensor** out);
/** torch.nn.functional.adaptive_avg_pool2d: output_size (2 values) [OH, OW]; output (i, j)
 *  averages rows floor(i * H / OH) .. ceil((i + 1) * H / OH) - 1 and the columns alike.
 *  When OH divides H and OW divides W (global pooling included) it is one reduction on
 *  the input's device; otherwise its averaging matrices are made on the host and copied
 *  over, which a GPU stream waits for and a graph capture on a device refuses
 *  (DT_ERR_NOT_SUPPORTED, saying so).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, sizes not positive), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_SHAPE_MISMATCH (not 3-d or 4-d, zero height or width), DT_ERR_DTYPE_MISMATCH. */
DT_API dt_status dt_adaptive_avg_pool2d(const dt_tensor* input, const int64_t* output_size, dt_tensor** out);
/** torch.nn.functional.interpolate: input [N, C, *spatial] (1 to 3 spatial dims, floating)
 *  resized to size (n values, one per spatial dim, or 1 for all) or by scale_factor (n
 *  values or 1: each output size is floor(input size * factor)); exactly one of the two is
 *  non-NULL. mode (NULL: "nearest"): "nearest" (any of the three ranks; output i reads input
 *  floor(i * scale), scale = in / out, or 1 / factor when scale_factor is given, as
 *  PyTorch's), "linear" (3-d input), "bilinear" (4-d) or "trilinear" (5-d), which
 *  interpolate between the two nearest inputs in each dim, with align_corners 1 mapping
 *  the corner elements onto each other (PyTorch's align_corners=True) and 0 mapping pixel
 *  centres (its default). Differentiable, with PyTorch's grad_fn names
 *  ("UpsampleBilinear2DBackward1", ...). The index lists and weights are made on the host
 *  and copied over, which a graph capture on a device refuses.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, both or neither of size and scale_factor, n
 *  neither 1 nor the spatial rank, a size or factor giving an empty output, align_corners
 *  not 0/1 or 1 with "nearest", an unknown mode), DT_ERR_NOT_SUPPORTED (PyTorch's modes
 *  "bicubic", "area" and "nearest-exact"), DT_ERR_SHAPE_MISMATCH (a rank the mode does not
 *  take, naming it), DT_ERR_DTYPE_MISMATCH (not floating), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_interpolate(const dt_tensor* input, const int64_t* size, const double* scale_factor, size_t n,
                                const char* mode, int32_t align_corners, dt_tensor** out);

/* ---------------------------------------------------------------------- normalisation, embedding */
/** torch.nn.functional.batch_norm: input [N, C, ...] normalised per channel c to
 *  (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c. With training = 1 the statistics
 *  are the batch's (over every dim but 1, the variance biased), and running_mean and
 *  running_var, when given, are updated IN PLACE: running = (1 - momentum) * running +
 *  momentum * batch (the variance unbiased), as PyTorch. With training = 0 they are
 *  the statistics used (both required). weight, bias, running_mean, running_var: NULL
 *  or [C] of the input's dtype, on its device; borrowed. Autograd: one node,
 *  NativeBatchNormBackward0, for input, weight and bias.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL input or out, one running tensor without the
 *  other, training = 0 without them, training not 0/1, eps not positive),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_SHAPE_MISMATCH (fewer than 2 dims, a [C] tensor of
 *  another size, one value per channel when training), DT_ERR_DTYPE_MISMATCH (not
 *  floating, dtypes differ), DT_ERR_DEVICE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_batch_norm(const dt_tensor* input, dt_tensor* running_mean, dt_tensor* running_var,
                               const dt_tensor* weight, const dt_tensor* bias, int32_t training, double momentum,
                               double eps, dt_tensor** out);
/** torch.nn.functional.layer_norm: normalises over the last ndims dims, which must be
 *  normalized_shape (ndims values); weight and bias NULL or of that shape. Autograd:
 *  NativeLayerNormBackward0. Errors: as dt_batch_norm (SHAPE_MISMATCH when the input's
 *  last dims are not normalized_shape). */
DT_API dt_status dt_layer_norm(const dt_tensor* input, const int64_t* normalized_shape, size_t ndims,
                               const dt_tensor* weight, const dt_tensor* bias, double eps, dt_tensor** out);
/** torch.nn.functional.group_norm: input [N, C, ...], its C channels split into
 *  num_groups groups, each normalised over its channels and every dim after 1; weight
 *  and bias NULL or [C]. Autograd: NativeGroupNormBackward0. Errors: as dt_batch_norm
 *  (SHAPE_MISMATCH when C is not a multiple of num_groups). */
DT_API dt_status dt_group_norm(const dt_tensor* input, int64_t num_groups, const dt_tensor* weight,
                               const dt_tensor* bias, double eps, dt_tensor** out);
/** padding_idx for none (dt_embedding, dt_embedding_new). */
#define DT_PADDING_IDX_NONE INT64_MIN
/** torch.nn.functional.embedding: the rows of weight [num_embeddings, dim] that the
 *  integer indices (int64 or int32, any shape) name; the result has the indices' shape
 *  plus [dim]. The row padding_idx (in [-num_embeddings, num_embeddings), a negative
 *  one counted from the end as in PyTorch, or DT_PADDING_IDX_NONE) gets no gradient. Autograd: EmbeddingBackward0 (to weight).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, an index outside [0, num_embeddings) naming
 *  it, padding_idx outside), DT_ERR_INVALID_HANDLE, DT_ERR_SHAPE_MISMATCH (weight not
 *  2-d), DT_ERR_DTYPE_MISMATCH (indices not int64/int32), DT_ERR_DEVICE_MISMATCH. */
DT_API dt_status dt_embedding(const dt_tensor* input, const dt_tensor* weight, int64_t padding_idx, dt_tensor** out);
/** torch.nn.functional.scaled_dot_product_attention: softmax(query key^T / sqrt(E) +
 *  mask) value over the last two dims, batched (and broadcast) over the others: query
 *  [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]. attn_mask: NULL, bool
 *  (true: the query may attend to that key, as PyTorch's) or additive of the query's
 *  dtype, broadcast to [..., L, S]; is_causal = 1 lets query i attend to keys 0..i only
 *  (then no attn_mask). A query that may attend to no key gives NaN, as PyTorch's.
 *  Differentiable (matmul, softmax). Errors: DT_ERR_INVALID_ARGUMENT (NULL, is_causal not
 *  0/1, both a mask and is_causal), DT_ERR_INVALID_HANDLE, DT_ERR_SHAPE_MISMATCH,
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_DEVICE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_scaled_dot_product_attention(const dt_tensor* query, const dt_tensor* key, const dt_tensor* value,
                                                 const dt_tensor* attn_mask, int32_t is_causal, dt_tensor** out);


/* ---------------------------------------------------------------------- joining, indexing */

/** Concatenates n tensors along dim; shapes must match elsewhere; dtypes promote.
 *  Errors: as the binary ops, plus DT_ERR_INVALID_ARGUMENT (n == 0, NULL array). */
DT_API dt_status dt_cat(const dt_tensor* const* tensors, size_t n, int64_t dim, dt_tensor** out);
/** Stacks n tensors of one shape along a new dimension dim. Errors: as dt_cat. */
DT_API dt_status dt_stack(const dt_tensor* const* tensors, size_t n, int64_t dim, dt_tensor** out);
/** torch.flip: a NEW tensor with the order of the elements reversed along each of dims
 *  (ndims == 0: an unchanged copy; a 0-d tensor is its own flip). Differentiable
 *  (FlipBackward0). Errors: DT_ERR_INVALID_ARGUMENT (NULL out, NULL dims with ndims > 0,
 *  a dim out of range or repeated), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_flip(const dt_tensor* a, const int64_t* dims, size_t ndims, dt_tensor** out);
/** torch.roll: a NEW tensor with the elements shifted along dims[i] by shifts[i] (any
 *  int64, taken modulo the dim's size; negative shifts move towards the start), those
 *  that leave at one end coming back at the other. With ndims == 0 the tensor is rolled
 *  as if flattened, by the one shift nshifts must then be; else nshifts == ndims, and a
 *  dim may repeat (its shifts add up). Differentiable (RollBackward0). Errors:
 *  DT_ERR_INVALID_ARGUMENT (NULL out or arrays with counts > 0, nshifts 0 or not matching,
 *  a dim out of range), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_roll(const dt_tensor* a, const int64_t* shifts, size_t nshifts, const int64_t* dims, size_t ndims,
                         dt_tensor** out);
/** Tensor.repeat: a NEW tensor holding repeats[i] copies of a along dim i, tiled (not
 *  interleaved: [1, 2] repeated 2 times is [1, 2, 1, 2]); n >= a's ndim, and when n is
 *  larger a gains leading dims of size 1 first. A repeat of 0 gives an empty dim.
 *  Differentiable (RepeatBackward0: the copies' gradients added). Errors:
 *  DT_ERR_INVALID_ARGUMENT (NULL out, NULL repeats with n > 0, n < ndim or > DT_MAX_DIMS,
 *  a negative repeat, a result past int64 elements), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_repeat(const dt_tensor* a, const int64_t* repeats, size_t n, dt_tensor** out);

/** Splits t into ceil(size/ceil(size/chunks)) views along dim, as torch.chunk. Writes at
 *  most cap NEW references into outs and the number of pieces into *count; when cap is
 *  too small, nothing is written to outs and no piece is made (call with cap 0 to size).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (chunks < 1, NULL count, outs
 *  NULL with cap > 0, bad dim). */
DT_API dt_status dt_chunk(const dt_tensor* t, int64_t chunks, int64_t dim, dt_tensor** outs,
                          size_t cap, size_t* count);
/** Splits t into views of split_size along dim (the last may be smaller), as
 *  torch.split. Buffer protocol and errors as dt_chunk (split_size < 1 is invalid,
 *  except 0 for an empty dimension). */
DT_API dt_status dt_split(const dt_tensor* t, int64_t split_size, int64_t dim, dt_tensor** outs,
                          size_t cap, size_t* count);

/** Elements of t at the int64 (or int32) indices of the 1-d tensor index along dim.
 *  Errors: as the binary ops, plus DT_ERR_INVALID_ARGUMENT for an index out of range. */
DT_API dt_status dt_index_select(const dt_tensor* t, int64_t dim, const dt_tensor* index,
                                 dt_tensor** out);
/** out[i][j] = t[index[i][j]][j] for dim 0 (and likewise for other dims), as torch.gather;
 *  index has t's ndim and dtype int64 (as PyTorch; another dtype is
 *  DT_ERR_DTYPE_MISMATCH). Errors: as dt_index_select. */
DT_API dt_status dt_gather(const dt_tensor* t, int64_t dim, const dt_tensor* index,
                           dt_tensor** out);
/** A NEW tensor: t with source's slices added at the positions index names along dim,
 *  as torch.index_add (alpha 1): out = t, then out[..., index[j], ...] += source[..., j, ...]
 *  for every j. index is 0-d or 1-d, int64 or int32, with values in [0, t's size at
 *  dim); source has t's dtype and t's shape except index's length at dim. Repeated
 *  indices add up. Differentiable in t and source (index_select of the gradient).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out, dim out of range, an
 *  index out of bounds), DT_ERR_SHAPE_MISMATCH, DT_ERR_DTYPE_MISMATCH, DT_ERR_DEVICE_MISMATCH,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_index_add(const dt_tensor* t, int64_t dim, const dt_tensor* index,
                              const dt_tensor* source, dt_tensor** out);
/** A NEW tensor: t with src's elements added where index points along dim, as
 *  torch.scatter_add: out = t, then out[index[i][j]][j] += src[i][j] for dim 0 (likewise
 *  for other dims) at every position of index. index (int64, or int32, which PyTorch
 *  refuses), src and t have one ndim; index is no larger than src in any dim nor than t
 *  off dim; src has t's dtype. Repeated indices add up. Differentiable in t and src
 *  (gather of the gradient).
 *  Errors: as dt_index_add. */
DT_API dt_status dt_scatter_add(const dt_tensor* t, int64_t dim, const dt_tensor* index,
                                const dt_tensor* src, dt_tensor** out);
/** torch.nn.functional.one_hot: for int64 class indices of any shape, the int64 tensor
 *  of shape [..., num_classes] that is 1 at each index's class and 0 elsewhere, on the
 *  indices' device. num_classes -1 takes the largest index + 1. The indices are checked
 *  on the host (the call waits for their device). Not differentiable.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, num_classes < -1, a negative index, an index
 *  >= num_classes, num_classes -1 with no index to infer it from), DT_ERR_DTYPE_MISMATCH
 *  (indices not int64), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_one_hot(const dt_tensor* indices, int64_t num_classes, dt_tensor** out);
/** torch.nonzero: the int64 [count, ndim] indices of a's nonzero elements (NaN is nonzero;
 *  any dtype), one row per element in row-major order, on a's device ([count, 0] for a
 *  0-d a). The count is read back to the host, so the call waits for a's device. Not
 *  differentiable.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_nonzero(const dt_tensor* a, dt_tensor** out);
/** torch.masked_select: a NEW 1-d tensor of a's elements where the bool mask is true,
 *  a and mask broadcast together, in row-major order of the broadcast shape, a's dtype
 *  and device. Waits for the device (the count is read back). Differentiable in a
 *  (MaskedSelectBackward0: the gradient goes back to the selected positions, summed
 *  over broadcast dims).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_DTYPE_MISMATCH (mask not bool),
 *  DT_ERR_SHAPE_MISMATCH (shapes that do not broadcast), DT_ERR_DEVICE_MISMATCH,
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_masked_select(const dt_tensor* a, const dt_tensor* mask, dt_tensor** out);
/** torch.unique(a, sorted=True, return_inverse, return_counts) over the flattened a:
 *  *values (a NEW 1-d tensor of a's dtype and device) holds a's distinct elements in
 *  ascending order (NaN last, each NaN its own value since NaN != NaN; -0.0 and 0.0 are
 *  one value, the first in a's order); *inverse (NULL: not wanted) a NEW int64 tensor of
 *  a's shape, the index into *values of each element; *counts (NULL: not wanted) a NEW
 *  int64 [values] tensor, how often each value occurs. Any dtype. The number of values
 *  is read back to the host, so the call waits for a's device. Not differentiable. On
 *  failure no out-parameter is written.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL a or values, two out-parameters the same
 *  pointer), DT_ERR_INVALID_HANDLE, DT_ERR_NOT_SUPPORTED (on CUDA, 2^31 or more
 *  elements, as dt_sort), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_unique(const dt_tensor* a, dt_tensor** values, dt_tensor** inverse, dt_tensor** counts);
/** torch.bincount: for a 1-d tensor a of non-negative integers (any integer dtype), a NEW
 *  1-d tensor of max(max(a) + 1, minlength) bins on a's device: bin v counts the elements
 *  equal to v (int64), or with weights (a 1-d tensor of a's length on a's device; NULL:
 *  none) sums their weights, in the weights' dtype when floating, else float64 (as
 *  PyTorch's). The largest value is read back to the host, so the call waits for the
 *  device. Not differentiable.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL a or out, a not 1-d, a negative value,
 *  minlength < 0, weights not 1-d or of another length), DT_ERR_DTYPE_MISMATCH (a
 *  floating or bool), DT_ERR_DEVICE_MISMATCH, DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY (a value too large to have a bin for each value up to it). */
DT_API dt_status dt_bincount(const dt_tensor* a, const dt_tensor* weights, int64_t minlength, dt_tensor** out);

/* ------------------------------------------------------------------------ autograd
 *
 * Reverse-mode differentiation, as PyTorch's. A floating tensor marked with
 * dt_tensor_set_requires_grad is a leaf; every differentiable op on it (while grad mode
 * is on) records how to differentiate its result, whose grad_fn names the backward
 * function as PyTorch does ("MulBackward0"). dt_backward runs the recorded graph on the
 * tensors' own device and ADDS each leaf's gradient into its .grad. Saved values are
 * held by the graph until its last result is released. In-place ops on a tensor that
 * requires grad are DT_ERR_NOT_SUPPORTED while grad mode is on.
 * THREADING: grad mode has a process-wide setting (dt_set_grad_enabled), which a thread
 * may override for itself (dt_set_thread_grad_mode, PyTorch's per-thread no_grad): an
 * inference thread can stop recording without stopping a training thread. Graphs may be
 * built and run from several threads at once, and gradients accumulate into a shared
 * leaf under a lock.
 */

/** Marks t (a leaf of a floating dtype) as requiring grad (1) or not (0).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (flag not 0/1; clearing the
 *  flag of a non-leaf), DT_ERR_DTYPE_MISMATCH (an integer or bool tensor). */
DT_API dt_status dt_tensor_set_requires_grad(dt_tensor* t, int32_t requires_grad);
/** *out = 1 if t requires grad (a marked leaf or the result of an op on one), else 0.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_tensor_requires_grad(const dt_tensor* t, int32_t* out);
/** *out = 1 if t has no grad_fn (created by the user, not recorded by an op), else 0.
 *  Errors: as dt_tensor_requires_grad. */
DT_API dt_status dt_tensor_is_leaf(const dt_tensor* t, int32_t* out);
/** *out = a NEW reference to t's accumulated gradient, or NULL (with DT_OK) when there
 *  is none yet. Errors: as dt_tensor_requires_grad. */
DT_API dt_status dt_tensor_grad(const dt_tensor* t, dt_tensor** out);
/** Drops t's accumulated gradient (as `t.grad = None`). Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_tensor_clear_grad(dt_tensor* t);
/** The name of the backward function that produced t, PyTorch's name for the same
 *  computation ("AddmmBackward0" for a Linear layer, "NllLossBackward0" for cross
 *  entropy and NLL losses, "MseLossBackward0"), or "" for a leaf. String protocol as
 *  dt_tensor_to_string. Errors: DT_ERR_INVALID_HANDLE,
 *  DT_ERR_INVALID_ARGUMENT. */
DT_API dt_status dt_tensor_grad_fn_name(const dt_tensor* t, char* buf, size_t cap, size_t* needed);
/** A NEW tensor sharing t's memory, outside any graph (requires_grad 0).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_tensor_detach(const dt_tensor* t, dt_tensor** out);
/** Computes the gradient of t with respect to every leaf in its graph and adds it to
 *  their .grad. grad is the gradient of t (its shape; NULL for a one-element t, meaning
 *  1). Nothing the backward pass computes is recorded. All or nothing: every leaf's new
 *  .grad is computed before any is stored, so on failure every .grad is as it was and
 *  the call may be retried (the graph is kept). Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT
 *  (t does not require grad; NULL grad for a t of more than one element),
 *  DT_ERR_SHAPE_MISMATCH, DT_ERR_DEVICE_MISMATCH (grad's shape or device is not t's),
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_backward(const dt_tensor* t, const dt_tensor* grad);
/** Turns grad mode on (1, the initial state) or off (0, for inference: nothing is
 *  recorded), process-wide: for every thread that has no setting of its own
 *  (dt_set_thread_grad_mode). Errors: DT_ERR_INVALID_ARGUMENT (not 0/1). */
DT_API dt_status dt_set_grad_enabled(int32_t enabled);
/** *out = 1 when grad mode is on for the calling thread: its own setting if it has one,
 *  else the process-wide one. Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_grad_enabled(int32_t* out);

/** A thread mode of dt_set_thread_grad_mode: no setting of its own, follow the process. */
#define DT_GRAD_MODE_PROCESS (-1)
/** Sets grad mode for the calling thread only, as PyTorch's torch.no_grad() /
 *  NoGradGuard: 1 records, 0 does not, DT_GRAD_MODE_PROCESS follows the process-wide
 *  setting (every thread's initial state). *previous (may be NULL) receives the thread's
 *  mode before the call, to restore it when the scope ends. DataParallel's worker threads
 *  take the calling thread's mode. A binding whose tasks move between OS threads (Go's
 *  goroutines) must keep the task on one thread while its setting is in force.
 *  Errors: DT_ERR_INVALID_ARGUMENT (mode not 1, 0 or DT_GRAD_MODE_PROCESS). */
DT_API dt_status dt_set_thread_grad_mode(int32_t mode, int32_t* previous);
/** *out = the calling thread's own mode: 1, 0 or DT_GRAD_MODE_PROCESS.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_thread_grad_mode(int32_t* out);

/* ------------------------------------------------------------------------- modules
 *
 * Layers, containers and losses as torch.nn, behind dt_module handles (reference-counted:
 * dt_module_retain / dt_module_release). Constructors return a NEW reference. Parameters
 * are leaves that require grad, initialised as PyTorch does (Linear: uniform in
 * +-1/sqrt(in_features) for weight and bias) from the device's Philox generator, so
 * dt_manual_seed makes them reproducible. Parameters and buffers carry PyTorch's
 * state_dict names ("0.weight", "2.bias", "weight" for a loss's class weights).
 * THREADING: a module may run forward from several threads at once, and every module
 * call is safe against every other: dt_module_to waits until the calls reading the
 * module's tensors have returned and replaces their memory whole, so a forward that
 * overlaps a move sees each tensor on the old device or the new (it may then fail with
 * DT_ERR_DEVICE_MISMATCH, as an input on the wrong device would). Loading writes the
 * values in place: a forward that overlaps it may see some old values and some new.
 */

/** Loss reductions, as PyTorch's reduction="none" | "mean" | "sum". */
#define DT_REDUCTION_NONE 0
#define DT_REDUCTION_MEAN 1
#define DT_REDUCTION_SUM  2
/** KLDivLoss's reduction="batchmean": the sum divided by the input's first dim (the sum
 *  itself for a 0-d input), KL divergence's mathematical mean. Only dt_kl_div_loss_new
 *  takes it. */
#define DT_REDUCTION_BATCHMEAN 3

/** Linear(in_features, out_features, bias): y = x @ weight^T + bias, weight
 *  [out_features, in_features], created with dtype (floating) on device.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, negative sizes, bias not 0/1),
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_linear_new(int64_t in_features, int64_t out_features, int32_t bias, dt_dtype dtype,
                               dt_device device, dt_module** out);
/** Sequential(modules...): applies them in order; child i is named "i". Takes its own
 *  reference to each module (the caller keeps and releases its own).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, modules NULL with n > 0),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_sequential_new(dt_module* const* modules, size_t n, dt_module** out);
/** Activations without parameters. Errors: DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_relu_new(dt_module** out);
DT_API dt_status dt_sigmoid_new(dt_module** out);
DT_API dt_status dt_tanh_new(dt_module** out);
DT_API dt_status dt_gelu_new(dt_module** out);
/** GELU(approximate="tanh"), as torch.nn.GELU: forward as dt_gelu_tanh. */
DT_API dt_status dt_gelu_tanh_new(dt_module** out);
/** SiLU, as torch.nn.SiLU: forward as dt_silu. */
DT_API dt_status dt_silu_new(dt_module** out);
/** LeakyReLU(negative_slope), as torch.nn.LeakyReLU (PyTorch's default 0.01): forward as
 *  dt_leaky_relu. Errors: DT_ERR_INVALID_ARGUMENT (NULL out, a slope that is not finite). */
DT_API dt_status dt_leaky_relu_new(double negative_slope, dt_module** out);
/** Softmax / LogSoftmax along dim. Errors: as dt_relu_new. */
DT_API dt_status dt_softmax_new(int64_t dim, dt_module** out);
DT_API dt_status dt_log_softmax_new(int64_t dim, dt_module** out);
/** Dropout(p): in training mode zeroes each element with probability p (Philox) and
 *  scales the rest by 1/(1-p); the identity in eval mode. Errors: DT_ERR_INVALID_ARGUMENT
 *  (NULL out, p outside [0, 1]). */
DT_API dt_status dt_dropout_new(double p, dt_module** out);
/** Flatten(start_dim, end_dim), as torch.nn.Flatten (PyTorch's defaults are 1 and -1).
 *  Errors: as dt_relu_new. */
DT_API dt_status dt_flatten_new(int64_t start_dim, int64_t end_dim, dt_module** out);
/** padding[0] == DT_PADDING_SAME asks for padding="same" (the output has the input's
 *  height and width; stride must be 1): PyTorch's split, the odd one extra at the end. */
#define DT_PADDING_SAME (-1)
/** Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias),
 *  as torch.nn.Conv2d: parameters "weight" [out_channels, in_channels / groups, kH, kW]
 *  and "bias" [out_channels] (so PyTorch's state_dict loads unchanged), initialised as
 *  PyTorch does (uniform in +-1/sqrt(in_channels / groups * kH * kW)), with dtype
 *  (floating) on device. kernel_size, stride, padding, dilation: 2 values each (height,
 *  width); NULL means PyTorch's default: stride (1, 1), padding (0, 0), dilation (1, 1);
 *  padding {DT_PADDING_SAME, 0} for "same". forward(input [N, in_channels, H, W] or
 *  [in_channels, H, W]) gives [N, out_channels, OH, OW] (or 3-d), OH = (H + 2 * padding -
 *  dilation * (kH - 1) - 1) / stride + 1. Runs on every device (im2col and a matrix
 *  product).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out or kernel_size, sizes not positive,
 *  channels not divisible by groups, bias not 0/1, "same" with a stride),
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE,
 *  DT_ERR_OUT_OF_MEMORY; forward: DT_ERR_SHAPE_MISMATCH naming the module and the shapes
 *  (wrong channel count, a kernel larger than the padded input), DT_ERR_DTYPE_MISMATCH,
 *  DT_ERR_DEVICE_MISMATCH. */
DT_API dt_status dt_conv2d_new(int64_t in_channels, int64_t out_channels, const int64_t* kernel_size,
                               const int64_t* stride, const int64_t* padding, const int64_t* dilation, int64_t groups,
                               int32_t bias, dt_dtype dtype, dt_device device, dt_module** out);
/** Conv1d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
 *  bias), as torch.nn.Conv1d (PyTorch's defaults: 1, 0, 1, 1, 1; padding DT_PADDING_SAME
 *  for "same"): "weight" [out_channels, in_channels / groups, kernel_size] and "bias"
 *  [out_channels], initialised as PyTorch does. forward as dt_conv1d. Errors: as
 *  dt_conv2d_new. */
DT_API dt_status dt_conv1d_new(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
                               int64_t padding, int64_t dilation, int64_t groups, int32_t bias, dt_dtype dtype,
                               dt_device device, dt_module** out);
/** ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
 *  output_padding, groups, bias, dilation), as torch.nn.ConvTranspose2d (pairs of 2
 *  values, NULL for PyTorch's defaults 1, 0, 0, 1; groups 1; bias 1): "weight"
 *  [in_channels, out_channels / groups, kH, kW] and "bias" [out_channels], initialised as
 *  PyTorch does (uniform in +-1/sqrt(out_channels / groups * kH * kW)). forward(input [N,
 *  in_channels, H, W] or [in_channels, H, W]) as dt_conv_transpose2d. padding "same" is
 *  not accepted (nor by PyTorch). Errors: DT_ERR_INVALID_ARGUMENT (NULL out or
 *  kernel_size, sizes not positive, negative padding, output_padding not smaller than
 *  stride or dilation, channels not divisible by groups, bias not 0/1),
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_INVALID_DEVICE, DT_ERR_DEVICE_UNAVAILABLE,
 *  DT_ERR_OUT_OF_MEMORY; forward: DT_ERR_SHAPE_MISMATCH naming the module and the shapes,
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_DEVICE_MISMATCH. */
DT_API dt_status dt_conv_transpose2d_new(int64_t in_channels, int64_t out_channels, const int64_t* kernel_size,
                                         const int64_t* stride, const int64_t* padding, const int64_t* output_padding,
                                         int64_t groups, int32_t bias, const int64_t* dilation, dt_dtype dtype,
                                         dt_device device, dt_module** out);
/** MaxPool2d(kernel_size, stride, padding, dilation, ceil_mode), AvgPool2d(kernel_size,
 *  stride, padding, ceil_mode, count_include_pad) and AdaptiveAvgPool2d(output_size), as
 *  torch.nn's, with no parameters; forward as dt_max_pool2d, dt_avg_pool2d,
 *  dt_adaptive_avg_pool2d. Pairs of 2 values (height, width); NULL stride means the
 *  kernel size, NULL padding (0, 0), NULL dilation (1, 1); ceil_mode as dt_max_pool2d's.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, kernel_size or output_size, sizes not
 *  positive, negative padding, flags not 0/1); forward: as the functional forms, the
 *  message naming the module. */
DT_API dt_status dt_max_pool2d_new(const int64_t* kernel_size, const int64_t* stride, const int64_t* padding,
                                   const int64_t* dilation, int32_t ceil_mode, dt_module** out);
DT_API dt_status dt_avg_pool2d_new(const int64_t* kernel_size, const int64_t* stride, const int64_t* padding,
                                   int32_t ceil_mode, int32_t count_include_pad, dt_module** out);
DT_API dt_status dt_adaptive_avg_pool2d_new(const int64_t* output_size, dt_module** out);
/** Upsample(size, scale_factor, mode, align_corners), as torch.nn.Upsample, with no
 *  parameters: forward as dt_interpolate with these arguments (copied). Errors:
 *  DT_ERR_INVALID_ARGUMENT (NULL out, and the argument errors of dt_interpolate that need
 *  no input); forward: as dt_interpolate, the message naming the module. */
DT_API dt_status dt_upsample_new(const int64_t* size, const double* scale_factor, size_t n, const char* mode,
                                 int32_t align_corners, dt_module** out);
/** BatchNorm1d / BatchNorm2d(num_features, eps, momentum, affine, track_running_stats),
 *  as torch.nn's (PyTorch's defaults: 1e-5, 0.1, 1, 1; a negative momentum is PyTorch's
 *  None, the cumulative moving average). Parameters "weight" (ones) and "bias" (zeros)
 *  [num_features] when affine; buffers "running_mean" (zeros), "running_var" (ones)
 *  [num_features] and "num_batches_tracked" (int64, 0-d) when tracking: PyTorch's
 *  state_dict loads unchanged, and dt_module_to moves the buffers too. forward(input):
 *  [N, C] or [N, C, L] (1d), [N, C, H, W] (2d). In training mode batch statistics,
 *  updating the buffers (num_batches_tracked += 1); in eval mode the running ones
 *  (batch statistics when not tracking).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, num_features not positive, eps not
 *  positive, momentum over 1, flags not 0/1), DT_ERR_DTYPE_MISMATCH, DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_OUT_OF_MEMORY; forward: DT_ERR_SHAPE_MISMATCH
 *  naming the module and the input's size (wrong rank, wrong channel count), the
 *  errors of dt_batch_norm. */
DT_API dt_status dt_batch_norm1d_new(int64_t num_features, double eps, double momentum, int32_t affine,
                                     int32_t track_running_stats, dt_dtype dtype, dt_device device, dt_module** out);
DT_API dt_status dt_batch_norm2d_new(int64_t num_features, double eps, double momentum, int32_t affine,
                                     int32_t track_running_stats, dt_dtype dtype, dt_device device, dt_module** out);
/** LayerNorm(normalized_shape, eps, elementwise_affine, bias), as torch.nn.LayerNorm
 *  (ndims values; PyTorch's defaults 1e-5, 1, 1): "weight" (ones) and "bias" (zeros) of
 *  normalized_shape. forward as dt_layer_norm. Errors: as dt_batch_norm1d_new (an empty
 *  or non-positive normalized_shape is INVALID_ARGUMENT). */
DT_API dt_status dt_layer_norm_new(const int64_t* normalized_shape, size_t ndims, double eps,
                                   int32_t elementwise_affine, int32_t bias, dt_dtype dtype, dt_device device,
                                   dt_module** out);
/** GroupNorm(num_groups, num_channels, eps, affine), as torch.nn.GroupNorm: "weight"
 *  (ones) and "bias" (zeros) [num_channels]. forward as dt_group_norm. Errors: as
 *  dt_batch_norm1d_new (num_channels not a positive multiple of num_groups). */
DT_API dt_status dt_group_norm_new(int64_t num_groups, int64_t num_channels, double eps, int32_t affine,
                                   dt_dtype dtype, dt_device device, dt_module** out);
/** Embedding(num_embeddings, embedding_dim, padding_idx), as torch.nn.Embedding: "weight"
 *  [num_embeddings, embedding_dim] drawn from N(0, 1) (the device's Philox stream), the
 *  row padding_idx zeroed; padding_idx DT_PADDING_IDX_NONE for none, negative counting
 *  from the end. forward(indices) as dt_embedding. Errors: DT_ERR_INVALID_ARGUMENT
 *  (sizes not positive, padding_idx outside), as dt_batch_norm1d_new; forward: as
 *  dt_embedding, naming the module. */
DT_API dt_status dt_embedding_new(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, dt_dtype dtype,
                                  dt_device device, dt_module** out);
/** MultiheadAttention(embed_dim, num_heads, dropout, bias, batch_first), as
 *  torch.nn.MultiheadAttention (PyTorch's defaults: 0.0, 1, 0; kdim = vdim = embed_dim):
 *  "in_proj_weight" [3 * embed_dim, embed_dim] (xavier-uniform), "in_proj_bias" (zeros)
 *  and child "out_proj" (a Linear, bias zeros), so PyTorch's state_dict loads unchanged.
 *  dt_module_forward takes 1 to 5 inputs: query [L, N, E] ([N, L, E] with batch_first;
 *  unbatched [L, E]), key and value [S, N, E] (NULL or absent: the query, self-attention),
 *  key_padding_mask [N, S] and attn_mask [L, S] or [N * num_heads, L, S] (NULL or absent:
 *  none; bool masks are true where attention is NOT allowed, float masks are added), and
 *  gives the attention output only (need_weights=False; dt_multihead_attention_forward
 *  also gives the weights). dropout applies to the attention weights in training mode.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, embed_dim not a positive multiple of
 *  num_heads, dropout outside [0, 1], flags not 0/1), DT_ERR_DTYPE_MISMATCH and the
 *  device errors of dt_linear_new; forward: DT_ERR_SHAPE_MISMATCH naming the module and
 *  the shapes, DT_ERR_DTYPE_MISMATCH (a float mask of another dtype). */
DT_API dt_status dt_multihead_attention_new(int64_t embed_dim, int64_t num_heads, double dropout, int32_t bias,
                                            int32_t batch_first, dt_dtype dtype, dt_device device, dt_module** out);
/** MultiheadAttention's forward with need_weights=True, as PyTorch's: *out gets the
 *  attention output as dt_module_forward's, *out_weights the attention weights (after
 *  dropout in training mode, as PyTorch returns them): averaged over the heads, [N, L, S]
 *  (unbatched [L, S]) when average_attn_weights is 1 (PyTorch's default), else per head,
 *  [N, num_heads, L, S] (unbatched [num_heads, L, S]), whatever batch_first says. key,
 *  value and the masks may be NULL, as in dt_module_forward. The weights are part of the
 *  autograd graph. Both outputs are NEW references, written only on success.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL m, query, out or out_weights, out and
 *  out_weights the same pointer, a module that is not a MultiheadAttention, naming its
 *  kind; average_attn_weights not 0/1), DT_ERR_INVALID_HANDLE, and the forward errors
 *  of dt_multihead_attention_new. */
DT_API dt_status dt_multihead_attention_forward(dt_module* m, const dt_tensor* query, const dt_tensor* key,
                                                const dt_tensor* value, const dt_tensor* key_padding_mask,
                                                const dt_tensor* attn_mask, int32_t average_attn_weights,
                                                dt_tensor** out, dt_tensor** out_weights);
/** TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
 *  layer_norm_eps, batch_first, norm_first), as torch.nn's (PyTorch's defaults: 2048,
 *  0.1, "relu", 1e-5, 0, 0; activation "relu" or "gelu", NULL for "relu"): children
 *  self_attn (MultiheadAttention), linear1, dropout, linear2, norm1, norm2, dropout1,
 *  dropout2 with PyTorch's state_dict keys. dt_module_forward takes 1 to 3 inputs: src,
 *  src_mask and src_key_padding_mask (NULL or absent: none), masks as
 *  dt_multihead_attention_new's. Errors: as dt_multihead_attention_new (d_model not a
 *  positive multiple of nhead, unknown activation). */
DT_API dt_status dt_transformer_encoder_layer_new(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                  double dropout, const char* activation, double layer_norm_eps,
                                                  int32_t batch_first, int32_t norm_first, dt_dtype dtype,
                                                  dt_device device, dt_module** out);
/** TransformerEncoder: num_layers distinct TransformerEncoderLayers (borrowed; the
 *  encoder takes references, as dt_sequential_new) run in order, then norm (NULL for
 *  none), as torch.nn.TransformerEncoder: state_dict keys "layers.<i>.…" and "norm.…".
 *  dt_module_forward takes 1 to 3 inputs as the layer's (src, mask,
 *  src_key_padding_mask). Errors: DT_ERR_INVALID_ARGUMENT (NULL, no layers, a module that
 *  is not a TransformerEncoderLayer, one layer given twice), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_transformer_encoder_new(dt_module* const* layers, size_t num_layers, dt_module* norm,
                                            dt_module** out);
/** LSTM(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional),
 *  as torch.nn.LSTM (PyTorch's defaults: 1, 1, 0, 0.0, 0; proj_size 0). Parameters, per
 *  layer k and direction (the backward one suffixed "_reverse"), under PyTorch's names so
 *  its state_dict loads unchanged: "weight_ih_l<k>" [4 * hidden_size, in] (in:
 *  input_size for layer 0, else hidden_size * D, D = 2 when bidirectional),
 *  "weight_hh_l<k>" [4 * hidden_size, hidden_size], and with bias "bias_ih_l<k>" and
 *  "bias_hh_l<k>" [4 * hidden_size], all uniform in +-1/sqrt(hidden_size); gates in
 *  PyTorch's order (input, forget, cell, output). dt_module_forward takes 1 to 3 inputs
 *  (input, h0, c0) and gives the output only (dt_rnn_forward gives the states too):
 *  input [L, N, input_size] ([N, L, input_size] with batch_first; unbatched [L,
 *  input_size]), h0 and c0 [num_layers * D, N, hidden_size] (unbatched [num_layers * D,
 *  hidden_size]; both, or neither for zeros), output [L, N, D * hidden_size] (the
 *  input's layout), each direction's hidden states side by side. dropout (in [0, 1])
 *  applies to every layer's output but the last, in training mode. Padded batches of
 *  unequal lengths (PackedSequence) are not supported: run them one length at a time.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, sizes not positive or too large: at most
 *  65,536 layers, and each weight's element count must fit in int64; dropout outside [0, 1], flags
 *  not 0/1), DT_ERR_DTYPE_MISMATCH (a non-floating dtype) and the
 *  device errors of dt_linear_new; forward: DT_ERR_SHAPE_MISMATCH (an input of other
 *  than 2 or 3 dims, a last dim other than input_size, an empty sequence, a state of
 *  the wrong shape: the message names the module and the shapes), DT_ERR_DTYPE_MISMATCH
 *  (an input or state of another dtype than the parameters), DT_ERR_DEVICE_MISMATCH,
 *  DT_ERR_INVALID_ARGUMENT (h0 without c0 or the reverse). */
DT_API dt_status dt_lstm_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, int32_t bias,
                             int32_t batch_first, double dropout, int32_t bidirectional, dt_dtype dtype,
                             dt_device device, dt_module** out);
/** GRU(...), as torch.nn.GRU: as dt_lstm_new with 3 gates (reset, update, new; weights
 *  [3 * hidden_size, ...]) and no cell state: dt_module_forward takes 1 or 2 inputs
 *  (input, h0). */
DT_API dt_status dt_gru_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, int32_t bias,
                            int32_t batch_first, double dropout, int32_t bidirectional, dt_dtype dtype,
                            dt_device device, dt_module** out);
/** RNN(..., nonlinearity), as torch.nn.RNN: h' = nonlinearity(x W_ih^T + b_ih + h W_hh^T
 *  + b_hh), nonlinearity "tanh" (PyTorch's default) or "relu"; otherwise as dt_gru_new
 *  with 1 gate ([hidden_size, ...] weights). Errors: as dt_lstm_new, plus an unknown or
 *  NULL nonlinearity. */
DT_API dt_status dt_rnn_new(int64_t input_size, int64_t hidden_size, int64_t num_layers, const char* nonlinearity,
                            int32_t bias, int32_t batch_first, double dropout, int32_t bidirectional,
                            dt_dtype dtype, dt_device device, dt_module** out);
/** The whole result of an RNN, LSTM or GRU m, as PyTorch's (output, h_n) or (output,
 *  (h_n, c_n)): *output as dt_module_forward's; *h_n [num_layers * D, N, hidden_size]
 *  (unbatched [num_layers * D, hidden_size]) the last hidden state of each layer and
 *  direction (layer 0 forward, layer 0 backward, layer 1 ...; the backward direction's
 *  last state is the one at time 0); *c_n the same of LSTM's cell state. h0 and c0 may
 *  be NULL (zeros); h_n and c_n may be NULL when not wanted; all results are NEW
 *  references, in the autograd graph, written only on success.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL m, input or output, two outputs the same
 *  pointer, a module of another kind (named), c0 or c_n with a module other than an
 *  LSTM), DT_ERR_INVALID_HANDLE, and the forward errors of dt_lstm_new. */
DT_API dt_status dt_rnn_forward(dt_module* m, const dt_tensor* input, const dt_tensor* h0, const dt_tensor* c0,
                                dt_tensor** output, dt_tensor** h_n, dt_tensor** c_n);
/** CrossEntropyLoss: forward(input [N, C] logits, target [N] class indices; or input [C]
 *  with a 0-d target; or PyTorch's K-dimensional form, input [N, C, d1, ...] with target
 *  [N, d1, ...], a class per position, where reduction none gives [N, d1, ...]). weight
 *  (NULL, or a 1-d floating tensor of C class weights, COPIED into the buffer "weight"),
 *  reduction DT_REDUCTION_*, targets equal to ignore_index are skipped (PyTorch's
 *  default is -100), label_smoothing in [0, 1].
 *  A floating target of the input's shape holds class probabilities instead (PyTorch's
 *  soft targets, for distillation or mixup; converted to the input's dtype): the loss of
 *  a position is -sum_c weight_c * target_c * log_softmax(input)_c, label smoothing first
 *  mixing the target with the uniform distribution (target * (1 - e) + e / C); mean
 *  divides by the number of positions (N * d1 * ...), not by the weights; ignore_index
 *  does not apply. Errors: DT_ERR_INVALID_ARGUMENT (a class index out of range),
 *  DT_ERR_SHAPE_MISMATCH (shapes that fit neither form), DT_ERR_DTYPE_MISMATCH,
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_cross_entropy_loss_new(const dt_tensor* weight, int32_t reduction, int64_t ignore_index,
                                           double label_smoothing, dt_module** out);
/** NLLLoss: forward(input [N, C] log-probabilities, target [N], or the other shapes
 *  CrossEntropyLoss takes); arguments as above. */
DT_API dt_status dt_nll_loss_new(const dt_tensor* weight, int32_t reduction, int64_t ignore_index, dt_module** out);
/** MSELoss: forward(input, target of the same shape). Errors: as dt_relu_new, plus an
 *  unknown reduction. */
DT_API dt_status dt_mse_loss_new(int32_t reduction, dt_module** out);
/** The pointwise losses below take forward(input, target) of the same shape (PyTorch
 *  broadcasts some of them with a warning; devtensor refuses, DT_ERR_SHAPE_MISMATCH
 *  naming both shapes). The input is floating; the target may be of any dtype and is
 *  converted to the input's (so 0/1 labels may be int64); both may require grad, and
 *  backward follows PyTorch's formulas (grad_fn names as PyTorch's). Errors of every
 *  constructor: DT_ERR_INVALID_ARGUMENT (NULL out, an unknown reduction, a setting out
 *  of range), DT_ERR_INVALID_HANDLE, DT_ERR_DTYPE_MISMATCH (a weight that is not
 *  floating); of forward: DT_ERR_SHAPE_MISMATCH, DT_ERR_DTYPE_MISMATCH (an integer
 *  input), DT_ERR_DEVICE_MISMATCH (input, target or weights on different devices).
 *
 *  L1Loss: |input - target|. */
DT_API dt_status dt_l1_loss_new(int32_t reduction, dt_module** out);
/** SmoothL1Loss(beta): with d = input - target, 0.5 d^2 / beta where |d| < beta, else
 *  |d| - 0.5 beta; beta >= 0 and finite (0 is L1Loss). */
DT_API dt_status dt_smooth_l1_loss_new(int32_t reduction, double beta, dt_module** out);
/** HuberLoss(delta): 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta); delta > 0
 *  and finite. */
DT_API dt_status dt_huber_loss_new(int32_t reduction, double delta, dt_module** out);
/** BCELoss(weight): -weight (target log(input) + (1 - target) log(1 - input)) for input
 *  probabilities, each log clamped at -100 as PyTorch's (so input 0 or 1 gives a finite
 *  loss). weight (NULL, or floating, broadcastable to the input's shape; COPIED into the
 *  buffer "weight") rescales each element's loss. forward also fails with
 *  DT_ERR_INVALID_ARGUMENT when an input element lies outside [0, 1] or is NaN (PyTorch's
 *  "all elements of input should be between 0 and 1"; a graph being captured skips that
 *  check). Prefer dt_bce_with_logits_loss_new on logits: it is exact where sigmoid
 *  would round to 0 or 1. */
DT_API dt_status dt_bce_loss_new(const dt_tensor* weight, int32_t reduction, dt_module** out);
/** BCEWithLogitsLoss(weight, pos_weight): sigmoid and binary cross entropy in one stable
 *  formula, -weight (pos_weight target log sigmoid(input) + (1 - target)
 *  log(1 - sigmoid(input))). weight as dt_bce_loss_new's; pos_weight (NULL, or floating,
 *  broadcastable to the input's shape: typically one weight per class, the last dim,
 *  > 1 raising recall) weighs the positive term. Both are COPIED into the buffers
 *  "weight" and "pos_weight" (only those given, as PyTorch's state_dict). */
DT_API dt_status dt_bce_with_logits_loss_new(const dt_tensor* weight, const dt_tensor* pos_weight, int32_t reduction,
                                             dt_module** out);
/** KLDivLoss(reduction, log_target): the input holds log-probabilities; the target
 *  probabilities (log_target 0: target (log target - input), 0 where target is 0) or
 *  log-probabilities (log_target 1: exp(target) (target - input)). reduction may also be
 *  DT_REDUCTION_BATCHMEAN, the mathematical KL divergence per sample (DT_REDUCTION_MEAN
 *  divides by every element, as PyTorch's "mean"). log_target is 0 or 1. */
DT_API dt_status dt_kl_div_loss_new(int32_t reduction, int32_t log_target, dt_module** out);
/** DataParallel(module, device_ids, output_device), as torch.nn.DataParallel. forward
 *  splits every input along dim 0 into torch.chunk's pieces (ceil(N / n) rows each, the
 *  last one smaller; a batch of fewer than n rows uses fewer devices), runs a replica of
 *  the module on each device_ids[k] concurrently (one thread per device), and gathers
 *  the outputs along dim 0 on output_device (0-d outputs, such as losses, become a
 *  vector of one value per piece). The module itself serves device_ids[0], where its
 *  parameters and buffers must be when forward runs: otherwise DT_ERR_DEVICE_MISMATCH,
 *  "module must have its parameters and buffers on device cpu:1 (device_ids[0]) but
 *  found one of them on device: cpu:0". backward sums the replicas' gradients into the
 *  module's parameters. The replicas are copied again only after the module's
 *  parameters, buffers or training mode changed through devtensor (an optimizer step,
 *  an in-place op, loading, dt_module_to, dt_tensor_data_ptr handing out a pointer),
 *  not on every forward; writes through a data pointer obtained before the last forward
 *  are not seen. When device_ids are two or more GPUs and NCCL loads, that refresh is
 *  one grouped NCCL broadcast from device_ids[0] into the replicas' own tensors
 *  (communicators made once, with ncclCommInitAll); otherwise copies.
 *  The parameters and buffers are the module's, named "module." + their names (as
 *  PyTorch's); dt_module_to, train and eval act on the module. Nesting is refused.
 *  device_ids: n distinct devices, CPU, CUDA or a mix; n = 0 (device_ids may then be
 *  NULL) means every device of the type the module is on. output_device:
 *  {DT_DEVICE_DEFAULT, 0} for device_ids[0]. Takes its own reference to module.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, device_ids NULL with n > 0, a device
 *  listed twice, a DataParallel as module), DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_DEVICE
 *  (an ordinal that does not exist; the message names device_ids[i]),
 *  DT_ERR_DEVICE_UNAVAILABLE. Threading: as any module. */
DT_API dt_status dt_data_parallel_new(dt_module* module, const dt_device* device_ids, size_t n,
                                      dt_device output_device, dt_module** out);

/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_module_retain(dt_module* m);
/** Drops a reference (NULL is a no-op). Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_module_release(dt_module* m);
/** Runs the module: n inputs (1, or 2 for losses: input and target; attention modules
 *  take optional ones, which may be NULL or left out: see their constructors; a module
 *  of dt_module_new its min_inputs to max_inputs); *out is a
 *  NEW reference, recorded by autograd when grad mode is on.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out or inputs, wrong
 *  count, a target class out of range), DT_ERR_DEVICE_MISMATCH ("module parameters are
 *  on cuda:0 but the input is on cpu"), DT_ERR_SHAPE_MISMATCH (naming both shapes),
 *  DT_ERR_DTYPE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_module_forward(dt_module* m, const dt_tensor* const* inputs, size_t n, dt_tensor** out);
/** Moves every parameter, gradient and buffer to device IN PLACE: tensor handles the
 *  caller holds stay valid and see the moved data (their old memory is freed once no
 *  call uses it: pointers from dt_tensor_data_ptr go stale; DLPack exports and views
 *  made before keep the old memory). All or nothing: on failure nothing moved. Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_module_to(dt_module* m, dt_device device);
/** The device of the module's first parameter or buffer (cpu:0 when it has none).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_module_device(const dt_module* m, dt_device* out);
/** Training (dropout active) or evaluation mode, for the module and its children.
 *  Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_module_train(dt_module* m);
DT_API dt_status dt_module_eval(dt_module* m);
/** Number of parameters (recursively), as PyTorch's named_parameters(): a parameter of a
 *  module placed twice (the same dt_module in two slots of a Sequential) counts once,
 *  under its first name, so the list can go to dt_sgd_new as it is. (dt_module_save
 *  writes every key, "0.weight" and "2.weight" alike, as PyTorch's state_dict.) Errors:
 *  DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_module_parameter_count(const dt_module* m, size_t* out);
/** Parameter i: its state_dict name (string protocol, buf may be NULL with cap 0) and,
 *  when tensor is not NULL, a NEW reference to the parameter itself (writes through it
 *  change the module). Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (i out of
 *  range, buf NULL with cap > 0). */
DT_API dt_status dt_module_parameter(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                     dt_tensor** tensor);
/** The same for buffers (a loss's class weights). */
DT_API dt_status dt_module_buffer_count(const dt_module* m, size_t* out);
DT_API dt_status dt_module_buffer(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                  dt_tensor** tensor);

/** The module's kind, PyTorch's class name ("Linear", "Sequential", "BatchNorm2d"), by
 *  the string protocol. Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (buf NULL
 *  with cap > 0). */
DT_API dt_status dt_module_kind(const dt_module* m, char* buf, size_t cap, size_t* needed);
/** Children: the modules a container holds, named as the middle parts of state_dict keys
 *  (a Sequential's are "0", "1", ...; "features.0.weight" is parameter "weight" of child
 *  "0" of child "features"), as PyTorch's named_children(). A child handle is a NEW
 *  reference to the SAME module, not a copy: its parameters are the parent's, so moving,
 *  loading or training it changes the parent, and it stays valid after the parent is
 *  released. dt_module_child_count: the direct children. Errors: DT_ERR_INVALID_HANDLE,
 *  DT_ERR_INVALID_ARGUMENT (NULL). */
DT_API dt_status dt_module_child_count(const dt_module* m, size_t* out);
/** Direct child i: its name (string protocol, buf may be NULL with cap 0) and, when child
 *  is not NULL, a NEW reference to it. Errors: DT_ERR_INVALID_HANDLE,
 *  DT_ERR_INVALID_ARGUMENT (i out of range, buf NULL with cap > 0). */
DT_API dt_status dt_module_child_at(const dt_module* m, size_t i, char* buf, size_t cap, size_t* needed,
                                    dt_module** child);
/** The descendant at a dotted path ("2", "features.0"), as net[2] or net.features[0] in
 *  PyTorch: a NEW reference to it. Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT
 *  (NULL, no such child: the message names the missing part and the children there are). */
DT_API dt_status dt_module_child(const dt_module* m, const char* path, dt_module** out);
/** A module the caller defines, as a subclass of torch.nn.Module in PyTorch: named
 *  children, parameters and buffers, and a forward function written with devtensor's
 *  ops (a ResNet block with its residual sum, a transformer with a custom head).
 *  The module behaves as every other: its state dict names are PyTorch's
 *  ("layer1.0.conv1.weight"), so a state_dict PyTorch saved loads unchanged into a tree
 *  built of such modules; dt_module_to moves it, dt_module_train/eval reach its children,
 *  it may sit in a Sequential, an optimizer takes its parameters, and DataParallel and
 *  DistributedDataParallel wrap it.
 *
 *  The forward function. self is a BORROWED handle to the module being run (valid
 *  during the call): reach the module's children, parameters and buffers through it
 *  (dt_module_child, dt_module_get_parameter, dt_module_get_buffer), not through handles
 *  kept in user_data, because DataParallel runs it on replicas whose tensors live on
 *  other devices. inputs are BORROWED handles (n of them, between min_inputs and
 *  max_inputs; those past min_inputs may be NULL, PyTorch's None). On success it writes a NEW reference to *out and returns DT_OK (it may
 *  return an input, retained). On failure it returns a status (usually that of the
 *  devtensor call that failed, whose message is then kept; or its own, with a message
 *  set by dt_set_error_message), and dt_module_forward fails with that status and a
 *  message naming the module's kind and quoting the function's. It may be called from
 *  several threads at once (DataParallel's replicas, or the caller's own threads), runs
 *  on the calling thread, must not release self (borrowed) and cannot move a module
 *  (dt_module_to fails inside it). Forwards nest at most 100 deep (a function that runs
 *  its own module fails there instead of exhausting the stack). */
typedef dt_status (*dt_module_forward_fn)(dt_module* self, dt_tensor* const* inputs, size_t n, void* user_data,
                                          dt_tensor** out);
/** Frees a custom module's user_data: called once, when the module and every replica
 *  DataParallel made of it are gone, on the thread that releases the last of them. */
typedef void (*dt_module_free_fn)(void* user_data);

/** What dt_module_new makes. Fill struct_size with sizeof(dt_module_spec) and zero what
 *  you do not use (a later version may add fields at the end). Names are UTF-8, not
 *  empty, without '.', and unique across children, parameters and buffers. */
typedef struct dt_module_spec {
  size_t struct_size;
  /** The class name ("BasicBlock"): dt_module_kind and error messages. Required. */
  const char* kind;
  /** n_children modules held under their names (each gets a reference of its own; the
   *  same module may appear twice, as in PyTorch, and then shares its parameters). */
  size_t n_children;
  const char* const* child_names;
  dt_module* const* children;
  /** n_parameters tensors whose VALUES become the module's own parameters (copies with
   *  the same shape, dtype and device, requiring grad; floating dtypes only), as
   *  nn.Parameter(t): get them back with dt_module_get_parameter. */
  size_t n_parameters;
  const char* const* parameter_names;
  const dt_tensor* const* parameters;
  /** n_buffers tensors whose values become the module's own buffers (copies, not
   *  requiring grad; any dtype), as register_buffer. */
  size_t n_buffers;
  const char* const* buffer_names;
  const dt_tensor* const* buffers;
  /** The number of inputs forward takes: min_inputs (0 allowed) to max_inputs (at most
   *  16); both 0 means exactly 1. Inputs past min_inputs may be NULL (PyTorch's None). */
  size_t min_inputs;
  size_t max_inputs;
  /** Required. user_data goes to every call; free_user_data (NULL: nothing to free) is
   *  called when the module is gone. When dt_module_new fails it is not called, and
   *  user_data stays the caller's. */
  dt_module_forward_fn forward;
  void* user_data;
  dt_module_free_fn free_user_data;
} dt_module_spec;

/** A new module as spec describes (see dt_module_forward_fn), in training mode. The
 *  children, names and tensors are read during this call only.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL spec or out, struct_size too small, no kind or
 *  forward, a NULL or bad name or entry, a name used twice, min_inputs over max_inputs,
 *  max_inputs over 16), DT_ERR_INVALID_HANDLE, DT_ERR_DTYPE_MISMATCH (a parameter that is
 *  not floating), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_module_new(const dt_module_spec* spec, dt_module** out);
/** The parameter (buffer) at a dotted path ("weight", "layer1.0.bn1.weight"), as
 *  PyTorch's get_parameter / get_buffer: a NEW reference to the tensor itself (writes
 *  through it change the module). Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT
 *  (NULL, no such child or tensor: the message names what is missing and what there
 *  is). */
DT_API dt_status dt_module_get_parameter(const dt_module* m, const char* path, dt_tensor** out);
DT_API dt_status dt_module_get_buffer(const dt_module* m, const char* path, dt_tensor** out);
/** A NEW state dict whose entries are the module's parameters then buffers, by their
 *  state_dict names, SHARED with the module (writes through them change it).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_module_state_dict(const dt_module* m, dt_state_dict** out);
/** Copies every tensor of sd into the module's parameter or buffer of the same name
 *  (converting dtype and device), as load_state_dict(strict=True). All or nothing.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (a missing or unexpected key, a
 *  wrong shape: the message names the key), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_module_load_state_dict(dt_module* m, const dt_state_dict* sd);
/** Saves the module's state dict as a safetensors file (dt_safetensors_save).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL or empty path),
 *  DT_ERR_IO. */
DT_API dt_status dt_module_save(const dt_module* m, const char* path);
/** Loads a safetensors file into the module: every check of dt_safetensors_load, then
 *  every key as dt_module_load_state_dict. A bad file is DT_ERR_FORMAT naming what is
 *  wrong (a missing key, a wrong shape, ...), and the module is left unchanged.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT, DT_ERR_IO, DT_ERR_FORMAT,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_module_load(dt_module* m, const char* path);

/* ---------------------------------------------------------------------- optimizers */

/** SGD over n parameter tensors (each retained), as torch.optim.SGD. The state
 *  (momentum buffers, Adam's moments) lives with the parameters: after dt_module_to the
 *  next step moves it to the parameters' new device.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out or params, no parameters (n == 0), a
 *  parameter that is not a leaf (an op's result or view), a negative lr / momentum /
 *  weight_decay, nesterov without momentum or with dampening, a tensor listed twice),
 *  DT_ERR_INVALID_HANDLE,
 *  DT_ERR_DTYPE_MISMATCH (a non-floating parameter). */
DT_API dt_status dt_sgd_new(const dt_tensor* const* params, size_t n, double lr, double momentum, double dampening,
                            double weight_decay, int32_t nesterov, dt_optimizer** out);
/** Adam (decoupled 0) or AdamW (decoupled 1), as torch.optim.Adam / AdamW.
 *  Errors: as dt_sgd_new (betas in [0, 1), eps >= 0). */
DT_API dt_status dt_adam_new(const dt_tensor* const* params, size_t n, double lr, double beta1, double beta2,
                             double eps, double weight_decay, int32_t decoupled, dt_optimizer** out);
/** RMSprop, as torch.optim.RMSprop (PyTorch's defaults: lr 0.01, alpha 0.99, eps 1e-8,
 *  weight_decay 0, momentum 0, centered 0): square_avg = alpha * square_avg + (1 - alpha)
 *  * g^2, with centered also grad_avg = alpha * grad_avg + (1 - alpha) * g and the
 *  variance square_avg - grad_avg^2 in place of square_avg; avg = sqrt(that) + eps; then
 *  p -= lr * g / avg, or with momentum buf = momentum * buf + g / avg and p -= lr * buf
 *  (g: the gradient plus weight_decay * p). State per parameter: "square_avg",
 *  "momentum_buffer" (momentum > 0) and "grad_avg" (centered), and a step count. The
 *  step count lives on the host, so a step cannot be captured into a graph
 *  (DT_ERR_NOT_SUPPORTED during a capture, as Adam's).
 *  Errors: as dt_sgd_new (lr, alpha, eps, weight_decay and momentum >= 0; centered 0/1). */
DT_API dt_status dt_rmsprop_new(const dt_tensor* const* params, size_t n, double lr, double alpha, double eps,
                                double weight_decay, double momentum, int32_t centered, dt_optimizer** out);
/** Adagrad, as torch.optim.Adagrad (PyTorch's defaults: lr 0.01, lr_decay 0,
 *  weight_decay 0, initial_accumulator_value 0, eps 1e-10): at a parameter's step t
 *  (from 1), sum += g^2 and p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)
 *  (g: the gradient plus weight_decay * p). Each parameter's "sum" is made here, filled
 *  with initial_accumulator_value on the parameter's device (so a state dict taken
 *  before the first step holds it, with step 0, as PyTorch's). Not capturable, as
 *  dt_rmsprop_new. Errors: as dt_sgd_new (every setting >= 0), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_adagrad_new(const dt_tensor* const* params, size_t n, double lr, double lr_decay,
                                double weight_decay, double initial_accumulator_value, double eps,
                                dt_optimizer** out);
/** One update of every parameter that has a gradient, in place on its device. All or
 *  nothing: the new values and state (momentum buffers, Adam's moments and step count)
 *  are all computed before the first parameter is written, and those writes allocate
 *  nothing, so a failed step leaves the parameters and the optimizer's state as they
 *  were and may simply be retried (only a device lost while the writes run can leave
 *  them partly done). Steps of one optimizer run one at a time (a concurrent call waits).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_MISMATCH, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_optimizer_step(dt_optimizer* opt);
/** Drops every parameter's gradient (PyTorch's zero_grad(set_to_none=True)).
 *  Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_optimizer_zero_grad(dt_optimizer* opt);
/** The learning rate the next step uses, in *out (untouched on failure).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_optimizer_lr(const dt_optimizer* opt, double* out);
/** Sets the learning rate of the steps that follow, as assigning
 *  param_groups[...]["lr"] in PyTorch: what a schedule (warm-up, step or cosine decay)
 *  calls between steps. The other settings and the state are kept. A step captured into
 *  a graph replays the rate it was captured with: capture again after changing it.
 *  Safe against a concurrent step (which uses the old rate or the new).
 *  Errors: DT_ERR_INVALID_ARGUMENT (a negative, infinite or NaN lr),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_optimizer_set_lr(dt_optimizer* opt, double lr);
/** Reads the optimizer's setting `name` into *out (untouched on failure), as
 *  param_groups[0][name] in PyTorch. Names are PyTorch's, Adam's betas as "beta1" and
 *  "beta2", flags as 0 or 1:
 *    SGD:         lr, momentum, dampening, weight_decay, nesterov, maximize
 *    Adam, AdamW: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize
 *    RMSprop:     lr, alpha, eps, weight_decay, momentum, centered, maximize
 *    Adagrad:     lr, lr_decay, weight_decay, eps, initial_accumulator_value, maximize
 *  maximize (every optimizer, default 0) steps up the gradient instead of down (the
 *  gradient is negated first, as torch's maximize=True); amsgrad (Adam and AdamW,
 *  default 0) divides by the running maximum of exp_avg_sq, kept as the state
 *  "max_exp_avg_sq" (the fused CPU step does not take it: such steps run as plain ops).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL name or out, a name this optimizer does not
 *  have: the message lists those it has), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_optimizer_option(const dt_optimizer* opt, const char* name, double* out);
/** Sets the setting `name` (see dt_optimizer_option) for the steps that follow, as
 *  assigning param_groups[0][name] in PyTorch (what a schedule of momentum or betas, such
 *  as OneCycleLR's, does between steps). The value is checked as the constructor checks
 *  it, together with the others (nesterov needs a momentum and no dampening); on failure
 *  nothing changes. State a new setting needs (amsgrad's max_exp_avg_sq, a momentum
 *  buffer, centered RMSprop's grad_avg) starts from zeros at the next step, and a
 *  checkpoint holds it from then on; initial_accumulator_value only fills sums made
 *  later. Safe against a concurrent step (which sees the old value or the new). A step
 *  captured into a graph replays the settings it was captured with.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL name, an unknown name, a value the constructor
 *  would refuse, a flag not 0 or 1), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_optimizer_set_option(dt_optimizer* opt, const char* name, double value);
/** The optimizer's state as a new state dict in *out (release it), for checkpoints
 *  (save it with dt_safetensors_save): the settings (below) and, per parameter i
 *  (its position in the list the optimizer was made with) that has state,
 *  "state.<i>.momentum_buffer" (SGD with momentum) or "state.<i>.step",
 *  "state.<i>.exp_avg", "state.<i>.exp_avg_sq" and with amsgrad "state.<i>.max_exp_avg_sq"
 *  (Adam; the step a 0-d float32 tensor on the CPU, as PyTorch's), "state.<i>.step", "square_avg", "momentum_buffer",
 *  "grad_avg" (RMSprop, the last two as its settings keep them), "state.<i>.step" and
 *  "sum" (Adagrad), PyTorch's names for optimizer.state_dict()'s entries, in that order. The tensors are copies: later steps do not change them.
 *  Every setting dt_optimizer_option reads comes first, lr included, each under its
 *  own name as a 0-d float64 tensor on the CPU (flags 0 or 1): PyTorch's param_groups,
 *  so a schedule of momentum or betas resumes where it was.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_optimizer_state_dict(const dt_optimizer* opt, dt_state_dict** out);
/** Restores a state saved by dt_optimizer_state_dict, from an optimizer of the same kind
 *  over parameters of the same shapes: the tensors are copied to each parameter's device
 *  and dtype, the learning rate restored, and parameters without an entry start with no
 *  state (as before their first step). All or nothing: every key, shape and value is
 *  checked before anything changes. The settings are optional (absent, as in
 *  checkpoints written before they were saved: the setting stays) and are checked
 *  together as dt_optimizer_set_option checks one. Tensors
 *  that already hold a parameter's state are written in place, so a graph that captured
 *  a step goes on with the loaded state. Errors: DT_ERR_INVALID_ARGUMENT (a key this
 *  optimizer does not have, such as another optimizer's, a parameter index out of
 *  range, a shape that is not the parameter's, a missing piece of a parameter's state,
 *  a negative or fractional step, a setting the constructor would refuse: the message
 *  names the key), DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_optimizer_load_state_dict(dt_optimizer* opt, const dt_state_dict* sd);

/* --------------------------------------------------------- learning-rate schedulers */

/* Schedulers of torch.optim.lr_scheduler (PyTorch 1.13's formulas). Each retains its
 * optimizer and sets its learning rate (dt_optimizer_set_lr): call dt_lr_scheduler_step
 * once per epoch (or per batch, as the schedule is meant), after dt_optimizer_step, as
 * in PyTorch. Constructing one makes its first step at once: the optimizer's rate
 * becomes the schedule's rate for epoch 0 (LinearLR's start_factor * lr, OneCycleLR's
 * max_lr / div_factor; the others leave it as it is).
 *
 * The rate each starts from (PyTorch's base_lrs, the optimizer's "initial_lr") is the
 * optimizer's rate when its first scheduler is made; later schedulers of the same
 * optimizer start from that value too, as in PyTorch. Steps use PyTorch's chained
 * formulas: each scales the optimizer's current rate, so several schedulers stacked on
 * one optimizer, or a rate set by hand between steps, combine as they do in PyTorch.
 *
 * A step is all or nothing (a failed one changes neither the optimizer nor the
 * scheduler). Calls on one scheduler are serialised; stepping two schedulers of one
 * optimizer from two threads at once interleaves their updates of its rate.
 * Whole-number settings (step sizes, periods, milestones, patience, cooldown) are at
 * most 2^53, what a checkpoint's float64 holds exactly.
 * Errors of every constructor: DT_ERR_INVALID_ARGUMENT (NULL opt or out, a setting
 * PyTorch refuses, that would make a negative rate, or a whole number past 2^53: the
 * message names it), DT_ERR_INVALID_HANDLE. On failure the optimizer is unchanged. */

/** StepLR: the rate is multiplied by gamma every step_size epochs (step_size >= 1,
 *  gamma >= 0). */
DT_API dt_status dt_step_lr_new(dt_optimizer* opt, int64_t step_size, double gamma, dt_lr_scheduler** out);
/** MultiStepLR: the rate is multiplied by gamma at each of the n epochs in milestones
 *  (any order; one listed twice multiplies twice, as PyTorch's Counter). milestones may
 *  be NULL when n is 0. */
DT_API dt_status dt_multi_step_lr_new(dt_optimizer* opt, const int64_t* milestones, size_t n, double gamma,
                                      dt_lr_scheduler** out);
/** ExponentialLR: the rate is multiplied by gamma every epoch (gamma >= 0). */
DT_API dt_status dt_exponential_lr_new(dt_optimizer* opt, double gamma, dt_lr_scheduler** out);
/** LinearLR (warm-up): the factor goes linearly from start_factor (epoch 0, in (0, 1])
 *  to end_factor (epoch total_iters and after, in [0, 1]) times the initial rate
 *  (total_iters >= 1). PyTorch 1.13 takes a start_factor of 0 and divides by zero at the
 *  second step; later versions and this one refuse it. */
DT_API dt_status dt_linear_lr_new(dt_optimizer* opt, double start_factor, double end_factor, int64_t total_iters,
                                  dt_lr_scheduler** out);
/** ConstantLR (a warm-up at one lower rate): the rate is factor times the initial rate
 *  for epochs 0 to total_iters - 1, then the initial rate (PyTorch's defaults: factor
 *  1/3, total_iters 5; factor in (0, 1], total_iters >= 1). PyTorch 1.13 takes a factor
 *  of 0 and divides by zero at total_iters, and a total_iters of 0 that never gives the
 *  rate back; this one refuses both. */
DT_API dt_status dt_constant_lr_new(dt_optimizer* opt, double factor, int64_t total_iters, dt_lr_scheduler** out);
/** PolynomialLR: the rate is the initial rate times (1 - min(epoch, total_iters) /
 *  total_iters)^power, down to 0 at total_iters (power 0: unchanged). PyTorch's
 *  defaults: total_iters 5, power 1. total_iters >= 1 and a finite power >= 0: PyTorch
 *  1.13 checks neither, divides by zero at total_iters 0, and raises 0 to a negative
 *  power at epoch total_iters. */
DT_API dt_status dt_polynomial_lr_new(dt_optimizer* opt, int64_t total_iters, double power, dt_lr_scheduler** out);
/** CosineAnnealingLR: eta_min + (initial - eta_min) * (1 + cos(pi * epoch / t_max)) / 2,
 *  by PyTorch's chained form (past t_max it rises again, a cosine of period 2 t_max;
 *  t_max >= 1, eta_min >= 0). */
DT_API dt_status dt_cosine_annealing_lr_new(dt_optimizer* opt, int64_t t_max, double eta_min,
                                            dt_lr_scheduler** out);
/** CosineAnnealingWarmRestarts (SGDR): a cosine from the initial rate to eta_min over
 *  t_0 epochs, then again from the top over t_0 * t_mult, t_0 * t_mult^2, ... epochs
 *  (t_0 >= 1, t_mult >= 1, eta_min >= 0). Its state dict holds T_cur and T_i. */
DT_API dt_status dt_cosine_annealing_warm_restarts_new(dt_optimizer* opt, int64_t t_0, int64_t t_mult,
                                                       double eta_min, dt_lr_scheduler** out);
/** OneCycleLR (one step per batch): the rate rises from max_lr / div_factor to max_lr
 *  over the first pct_start of total_steps, then falls to max_lr / div_factor /
 *  final_div_factor (three_phase 1: back to max_lr / div_factor first, then down), by
 *  anneal_strategy "cos" or "linear". With cycle_momentum 1 the momentum (Adam's beta1)
 *  moves the other way, between max_momentum and base_momentum, through
 *  dt_optimizer_set_option; an optimizer without one (Adagrad) is refused. Stepping
 *  past total_steps + 1 steps is DT_ERR_INVALID_ARGUMENT, as PyTorch's ValueError; at
 *  the one step past the last that PyTorch allows, its linear anneal overshoots: there
 *  the rate stops at 0 and the momentum within [base_momentum, max_momentum], where
 *  PyTorch sets a negative rate or a momentum beyond them.
 *  PyTorch's defaults: pct_start 0.3, "cos", cycle_momentum 1, base_momentum 0.85,
 *  max_momentum 0.95, div_factor 25, final_div_factor 1e4, three_phase 0. A pct_start
 *  that leaves a phase without steps (pct_start * total_steps <= 1, or pct_start 1) is
 *  refused: PyTorch divides by zero there. */
DT_API dt_status dt_one_cycle_lr_new(dt_optimizer* opt, double max_lr, int64_t total_steps, double pct_start,
                                     const char* anneal_strategy, int32_t cycle_momentum, double base_momentum,
                                     double max_momentum, double div_factor, double final_div_factor,
                                     int32_t three_phase, dt_lr_scheduler** out);
/** CyclicLR (one step per batch): the rate goes from base_lr up to max_lr over
 *  step_size_up steps and back down over step_size_down (0: as many as step_size_up,
 *  PyTorch's None), then again, each cycle's height scaled by mode: "triangular" (not
 *  scaled), "triangular2" (halved each cycle) or "exp_range" (gamma^step). Making it
 *  sets the rate to base_lr (to the optimizer's initial rate when an earlier scheduler
 *  set one, as PyTorch). With cycle_momentum 1 the momentum (Adam's beta1, as PyTorch
 *  2's use_beta1; PyTorch 1.13 refuses Adam) moves the other way, from max_momentum at
 *  the bottom to base_momentum at the top, through dt_optimizer_set_option; an
 *  optimizer without one (Adagrad) is refused. PyTorch's defaults: step_size_up 2000,
 *  step_size_down 0, "triangular", gamma 1, cycle_momentum 1, base_momentum 0.8,
 *  max_momentum 0.9. base_lr, max_lr, gamma and the momenta finite and >= 0,
 *  step_size_up >= 1. A step whose rate would not be finite and >= 0 (exp_range with
 *  gamma > 1, or max_lr below base_lr, can get there) fails and changes nothing.
 *  PyTorch's custom scale_fn is not offered. The state dict holds max_lr, total_size,
 *  step_ratio, mode (0, 1, 2 in the order above), gamma, cycle_momentum, base_momentum
 *  and max_momentum. */
DT_API dt_status dt_cyclic_lr_new(dt_optimizer* opt, double base_lr, double max_lr, int64_t step_size_up,
                                  int64_t step_size_down, const char* mode, double gamma, int32_t cycle_momentum,
                                  double base_momentum, double max_momentum, dt_lr_scheduler** out);
/** ReduceLROnPlateau: steps with a metric (dt_lr_scheduler_step_metric), not by epoch.
 *  After more than `patience` steps in a row without improvement (mode "min": the metric
 *  below best * (1 - threshold) with threshold_mode "rel", below best - threshold with
 *  "abs"; mode "max" the other way), the rate becomes max(rate * factor, min_lr) (when
 *  that changes it by more than eps), and the next `cooldown` steps are not counted.
 *  Making it leaves the rate as it is. PyTorch's defaults: "min", factor 0.1, patience
 *  10, threshold 1e-4, "rel", cooldown 0, min_lr 0, eps 1e-8. factor in [0, 1); the
 *  others >= 0. */
DT_API dt_status dt_reduce_lr_on_plateau_new(dt_optimizer* opt, const char* mode, double factor, int64_t patience,
                                             double threshold, const char* threshold_mode, int64_t cooldown,
                                             double min_lr, double eps, dt_lr_scheduler** out);
/** SequentialLR: schedulers[0] until epoch milestones[0], then schedulers[1] (restarted
 *  from its epoch 0, by its closed form) until milestones[1], and so on: n schedulers,
 *  n - 1 increasing milestones >= 1, all of opt. As PyTorch's constructor, it sets the
 *  rate back to the initial one and starts schedulers[0] again. Each of the schedulers
 *  is retained. Errors also: DT_ERR_INVALID_ARGUMENT (a scheduler of another optimizer,
 *  one listed twice, a ReduceLROnPlateau, SequentialLR or ChainedScheduler among them,
 *  n - 1 milestones not given). */
DT_API dt_status dt_sequential_lr_new(dt_optimizer* opt, dt_lr_scheduler* const* schedulers, size_t n,
                                      const int64_t* milestones, dt_lr_scheduler** out);
/** ChainedScheduler: each step steps every one of the n schedulers, in order, as
 *  PyTorch's (their rates combine by the chained formulas, so ConstantLR then
 *  ExponentialLR holds a lower rate for a while under the decay). Making it steps
 *  nothing; its epoch counts its own steps, and last_lr is the optimizer's rate. A step
 *  is all or nothing: when one of them refuses (a OneCycleLR past its end, a LambdaLR's
 *  function), those stepped before it, and the optimizer's rate and momentum, are put
 *  back (the functions already called are not undone). Each of the schedulers is
 *  retained. The state dict holds theirs under "schedulers.<k>.".
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out, schedulers NULL with n > 0, n 0, a
 *  scheduler of another optimizer than schedulers[0]'s, one listed twice, a
 *  ReduceLROnPlateau, SequentialLR or ChainedScheduler among them: the message names
 *  it), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_chained_scheduler_new(dt_lr_scheduler* const* schedulers, size_t n, dt_lr_scheduler** out);
/** The function of a LambdaLR or MultiplicativeLR: the factor for `epoch` (>= 0), given
 *  the user_data passed to its constructor. It is called on the thread that makes or
 *  steps the scheduler (a SequentialLR's step included), one call at a time per
 *  scheduler. It must return a finite number, and one that leaves the rate >= 0;
 *  anything else fails that step (or the constructor) with DT_ERR_INVALID_ARGUMENT and
 *  changes nothing. It may call devtensor, but not the scheduler functions: the
 *  constructors and dt_lr_scheduler_step, _step_metric, _last_lr, _last_epoch,
 *  _state_dict and _load_state_dict fail there with DT_ERR_INVALID_ARGUMENT, since they
 *  could wait on the scheduler being stepped; nor may it release the scheduler's last
 *  reference. */
typedef double (*dt_lr_lambda_fn)(int64_t epoch, void* user_data);
/** Frees a LambdaLR's or MultiplicativeLR's user_data: called once, when the scheduler
 *  is released for the last time, on the thread that releases it. */
typedef void (*dt_lr_lambda_free_fn)(void* user_data);
/** LambdaLR: the rate at each epoch is the initial rate times fn(epoch, user_data)
 *  (PyTorch's lr_lambda; Hugging Face's warm-up schedules are LambdaLRs). fn is called
 *  for epoch 0 before this returns. free_user_data (NULL: nothing to free) is called
 *  when the scheduler is released for the last time; when this fails it is not, and
 *  user_data stays the caller's. The state dict holds base_lr, last_epoch and last_lr,
 *  not the function, as PyTorch leaves a plain function out of its own.
 *  Errors also: DT_ERR_INVALID_ARGUMENT (NULL fn, or what fn returned for epoch 0). */
DT_API dt_status dt_lambda_lr_new(dt_optimizer* opt, dt_lr_lambda_fn fn, void* user_data,
                                  dt_lr_lambda_free_fn free_user_data, dt_lr_scheduler** out);
/** MultiplicativeLR: each step from epoch 1 on multiplies the rate by fn(epoch,
 *  user_data); making it leaves the rate as it is, without calling fn. Otherwise as
 *  dt_lambda_lr_new. */
DT_API dt_status dt_multiplicative_lr_new(dt_optimizer* opt, dt_lr_lambda_fn fn, void* user_data,
                                          dt_lr_lambda_free_fn free_user_data, dt_lr_scheduler** out);
/** One epoch (or batch) on: the optimizer's rate is set for it.
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (a ReduceLROnPlateau, which
 *  steps with a metric; a OneCycleLR stepped past its total_steps; a LambdaLR's or
 *  MultiplicativeLR's function returning what dt_lr_lambda_fn does not allow). */
DT_API dt_status dt_lr_scheduler_step(dt_lr_scheduler* s);
/** ReduceLROnPlateau's step with the metric it watches (a validation loss, say).
 *  Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (any other scheduler). */
DT_API dt_status dt_lr_scheduler_step_metric(dt_lr_scheduler* s, double metric);
/** The rate the scheduler last set (get_last_lr()), in *out (untouched on failure).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_lr_scheduler_last_lr(const dt_lr_scheduler* s, double* out);
/** The epoch of the last step (last_epoch: 0 right after construction, +1 per step),
 *  in *out (untouched on failure). Errors: DT_ERR_INVALID_ARGUMENT (NULL out),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_lr_scheduler_last_epoch(const dt_lr_scheduler* s, int64_t* out);
/** The scheduler's kind, PyTorch's class name ("StepLR", "OneCycleLR", ...), by the
 *  string protocol. Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (buf NULL
 *  with cap > 0). */
DT_API dt_status dt_lr_scheduler_kind(const dt_lr_scheduler* s, char* buf, size_t cap, size_t* needed);
/** The scheduler's settings and state as a new state dict (release it), for
 *  checkpoints: each number a 0-d float64 tensor on the CPU under PyTorch's attribute
 *  name (base_lr, last_epoch, last_lr, then its own: gamma, step_size, T_max, T_cur,
 *  best, num_bad_epochs, ...; flags 0 or 1), MultiStepLR's and SequentialLR's
 *  "milestones" a 1-d int64 tensor, and SequentialLR's schedulers' entries under
 *  "schedulers.<k>.". Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_lr_scheduler_state_dict(const dt_lr_scheduler* s, dt_state_dict** out);
/** Restores a state from dt_lr_scheduler_state_dict of a scheduler of the same kind; a
 *  key absent keeps its value. All or nothing: every key and value is checked, then the
 *  settings together as the constructor checks them. As PyTorch's, the optimizer is not
 *  touched: restore its rate with dt_optimizer_load_state_dict.
 *  Errors: DT_ERR_INVALID_ARGUMENT (an unknown key, a value not one number, a fraction
 *  where a whole number belongs, a setting the constructor refuses: the message names
 *  the key), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_lr_scheduler_load_state_dict(dt_lr_scheduler* s, const dt_state_dict* sd);
/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_lr_scheduler_retain(dt_lr_scheduler* s);
/** Drops a reference (NULL is a no-op); the last one releases the scheduler and its
 *  hold on the optimizer. Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_lr_scheduler_release(dt_lr_scheduler* s);

/* -------------------------------------------------------------- gradient clipping */

/** torch.nn.utils.clip_grad_norm_: the norm_type norm of all n parameters' gradients
 *  together (as if concatenated; norm_type may be INFINITY, the largest magnitude) is
 *  computed, and every gradient is multiplied IN PLACE by min(1, max_norm / (norm +
 *  1e-6)), as PyTorch's: scaled down when the norm exceeds max_norm (by a hair already
 *  within 1e-6 of it), unchanged otherwise. Parameters without a gradient are skipped
 *  (none at all: the norm is a float32 0 on the CPU, nothing else happens). Gradients may lie on several devices (DataParallel's do not): each one's
 *  norm is taken where it is and the total on the first gradient's device. The norm is
 *  written to *total_norm (NULL: not wanted) as a new 0-d tensor on that device, in the
 *  first gradient's dtype (half and bfloat16 accumulate in float32), without waiting
 *  for the device unless error_if_nonfinite is 1: so a step stays asynchronous and can
 *  be captured into a graph. With error_if_nonfinite 1, a NaN or infinite norm is
 *  DT_ERR_INVALID_ARGUMENT and no gradient is changed; with 0 (PyTorch's default) the
 *  gradients are multiplied all the same, as PyTorch's: by NaN for a NaN norm, by 0 for
 *  an infinite one (so an infinite element becomes NaN).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL params with n > 0, a negative or NaN max_norm,
 *  norm_type not positive, error_if_nonfinite not 0/1), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_clip_grad_norm_(const dt_tensor* const* params, size_t n, double max_norm, double norm_type,
                                    int32_t error_if_nonfinite, dt_tensor** total_norm);
/** torch.nn.utils.clip_grad_value_: clamps every gradient IN PLACE to [-clip_value,
 *  clip_value]; parameters without a gradient are skipped.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL params with n > 0, a negative or NaN
 *  clip_value), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_clip_grad_value_(const dt_tensor* const* params, size_t n, double clip_value);
/** Reference counting, as for modules. */
DT_API dt_status dt_optimizer_retain(dt_optimizer* opt);
DT_API dt_status dt_optimizer_release(dt_optimizer* opt);

/* ---------------------------------------------------------------- state dicts, safetensors
 * A dt_state_dict is an ordered map from UTF-8 names to tensors, as PyTorch's state_dict:
 * names are unique and keep the order in which they were first set. It holds references
 * to its tensors (they are shared, not copied). It is released with
 * dt_state_dict_release; the handle rules of dt_tensor apply (a released, foreign or
 * wrong-kind handle is DT_ERR_INVALID_HANDLE). A state dict may be used from several
 * threads at once: each call sees it before or after a concurrent dt_state_dict_set,
 * never in between.
 */

/** Creates an empty state dict. *out is a NEW reference.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL out), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_state_dict_new(dt_state_dict** out);

/** Adds a reference to sd. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_state_dict_retain(dt_state_dict* sd);

/** Drops a reference; the last one releases the state dict's references to its tensors.
 *  NULL is a no-op. Errors: DT_ERR_INVALID_HANDLE (already released, or not a state dict). */
DT_API dt_status dt_state_dict_release(dt_state_dict* sd);

/** The number of entries. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_state_dict_count(const dt_state_dict* sd, size_t* out);

/** The name of entry i (0 <= i < count), with the string protocol (buf, cap, needed).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL sd, buf NULL with cap > 0, i out of range),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_state_dict_name(const dt_state_dict* sd, size_t i, char* buf, size_t cap,
                                    size_t* needed);

/** The tensor of entry i: *out is a NEW reference to the tensor the state dict holds (the
 *  same data, not a copy). Errors: DT_ERR_INVALID_ARGUMENT (NULL, i out of range),
 *  DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_state_dict_get(const dt_state_dict* sd, size_t i, dt_tensor** out);

/** The tensor named name (NUL-terminated UTF-8): *out is a NEW reference.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, or no entry has that name; the message names
 *  it), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_state_dict_find(const dt_state_dict* sd, const char* name, dt_tensor** out);

/** Maps name to t: the state dict takes its own reference to t (the caller keeps its
 *  own). A new name is appended; an existing name keeps its position and its old tensor
 *  reference is dropped. Errors: DT_ERR_INVALID_ARGUMENT (NULL, a name that is not valid
 *  UTF-8), DT_ERR_INVALID_HANDLE (sd or t), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_state_dict_set(dt_state_dict* sd, const char* name, const dt_tensor* t);

/** Writes sd to path in the safetensors format (https://github.com/huggingface/safetensors):
 *  the tensors in the state dict's order, each as contiguous row-major little-endian
 *  bytes whatever its device and strides (a device tensor is copied to the host first),
 *  no __metadata__. The file is written beside path under a temporary name and renamed
 *  onto path at the end, so a failed save leaves no partial file (and an existing file
 *  at path is replaced only by a complete one).
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, empty path, an entry named "__metadata__",
 *  which the format reserves), DT_ERR_INVALID_HANDLE, DT_ERR_IO (the file cannot be
 *  created or written; the message has the path and the system's reason),
 *  DT_ERR_NOT_SUPPORTED (a big-endian host), DT_ERR_OUT_OF_MEMORY, and the errors of
 *  copying a device tensor to the host. */
DT_API dt_status dt_safetensors_save(const dt_state_dict* sd, const char* path);

/** Reads the safetensors file at path into a NEW state dict (*out) whose tensors are on
 *  device (DT_DEVICE_DEFAULT: the process default device), named in the order of their
 *  data offsets (for a file dt_safetensors_save wrote, the order of the saved dict).
 *  The whole file is validated before any tensor is made: the header length (at most
 *  100,000,000 bytes, as the reference implementation), the JSON (valid UTF-8, an
 *  object, no duplicate key; "__metadata__", if present, an object of strings, ignored),
 *  every entry (exactly dtype, shape, data_offsets; a known dtype; a shape of
 *  non-negative integers whose element count does not overflow; offsets inside the data
 *  buffer whose byte count matches shape and dtype), the offsets tiling the data buffer
 *  exactly (no overlap, no hole, nothing after the last tensor) and BOOL bytes being 0
 *  or 1. A failure creates nothing.
 *  On a CPU device the tensors share a private memory mapping of the file instead of
 *  copying it (a tensor whose offset is not a multiple of its element size is copied);
 *  writing to them changes the tensors, never the file. The mapping lives until the last
 *  of those tensors is released; as with any mapping, truncating the file while it is
 *  mapped makes later reads of the tensors fault. For another device the data is copied
 *  to it.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, empty path), DT_ERR_INVALID_DEVICE,
 *  DT_ERR_DEVICE_UNAVAILABLE, DT_ERR_IO (cannot open, read or map the file, or it is not
 *  a regular file), DT_ERR_FORMAT (the file breaks the format; the message names the file
 *  and what is wrong), DT_ERR_NOT_SUPPORTED (a valid file holding a dtype devtensor lacks
 *  - U16, U32, U64, F8_E4M3, F8_E5M2 - or more than DT_MAX_DIMS dimensions; a big-endian
 *  host), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_safetensors_load(const char* path, dt_device device, dt_state_dict** out);

/* ---------------------------------------------------------------------- DLPack
 * Zero-copy exchange with PyTorch, NumPy, CuPy, JAX... through DLPack's DLManagedTensor
 * (include <dlpack/dlpack.h>, DLPack 0.6 or later, to read its fields) and DLPack 1.x's
 * DLManagedTensorVersioned (dlpack.h 1.0 or later declares it; its flags say whether the
 * data is read-only). Devices: CPU (kDLCPU, and kDLCUDAHost on import) and CUDA
 * (kDLCUDA). Dtypes: every devtensor dtype; bool travels as DLPack 0.8's code 6, as
 * PyTorch writes it. Strides are in elements.
 * READ-ONLY TENSORS: a versioned import flagged DLPACK_FLAG_BITMASK_READ_ONLY gives a
 * tensor whose memory devtensor never writes: in-place ops (dt_add_ and friends, an
 * optimizer step), dt_tensor_copy_from_host and dt_tensor_data_ptr on it or on any view
 * of it fail with DT_ERR_INVALID_ARGUMENT ("the tensor is read-only");
 * out-of-place ops and dt_tensor_to read it freely, and dt_tensor_to with DT_TO_COPY
 * makes a writable copy. */
struct DLManagedTensor;
struct DLManagedTensorVersioned;

/** A NEW DLManagedTensor viewing t: the same memory (data is t's first element,
 *  byte_offset 0), shape, strides and device (a logical CPU device cpu:N exports as
 *  DLPack's one CPU, device_id 0, and imports back as cpu:0, as PyTorch's CPU tensors
 *  do). It holds a reference to t's storage until
 *  its deleter is called; the caller (or the framework it is handed to) calls
 *  (*out)->deleter(*out) exactly once. A CUDA tensor's pending work is finished first, so
 *  a consumer on another stream reads complete data. Writes through either side are seen
 *  by the other. Thread-safe. Errors: DT_ERR_INVALID_ARGUMENT (NULL out),
 *  DT_ERR_INVALID_HANDLE, DT_ERR_OUT_OF_MEMORY; *out is untouched on failure. */
DT_API dt_status dt_tensor_to_dlpack(const dt_tensor* t, struct DLManagedTensor** out);

/** A NEW tensor over managed's memory, without copying. On success devtensor owns
 *  managed: its deleter is called exactly once, when the last tensor or view using that
 *  memory is released (the producer's memory stays alive until then). CUDA memory:
 *  devtensor's stream does not wait for the producer's, so the producer's pending writes
 *  must be finished first (for example torch.cuda.synchronize(), or a __dlpack__ call
 *  given a stream the producer then synchronises). Bool elements must be bytes 0 or 1
 *  (checked for host memory; for CUDA memory that is the producer's promise, which
 *  PyTorch, NumPy and CuPy keep). On failure
 *  managed is untouched and its deleter is NOT called: it stays the caller's.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL managed or out, ndim outside 0..DT_MAX_DIMS, a
 *  NULL shape or data, a negative size, a layout whose extent overflows, a host bool
 *  byte other than 0 or 1),
 *  DT_ERR_NOT_SUPPORTED (a dtype devtensor lacks, lanes != 1, a device type other than
 *  CPU, CUDA host or CUDA, a negative stride, data + byte_offset not aligned to the
 *  element size), DT_ERR_INVALID_DEVICE or
 *  DT_ERR_DEVICE_UNAVAILABLE (a CUDA device that is not there), DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_tensor_from_dlpack(struct DLManagedTensor* managed, dt_tensor** out);

/** dt_tensor_to_dlpack as a DLPack 1.0 DLManagedTensorVersioned: version {1, 0}, flags
 *  DLPACK_FLAG_BITMASK_READ_ONLY when t is read-only (else 0; never IS_COPIED, as nothing
 *  is copied). dt_tensor_to_dlpack refuses a read-only tensor (DT_ERR_NOT_SUPPORTED),
 *  since its struct cannot carry the flag; this one carries it. Errors: as
 *  dt_tensor_to_dlpack. */
DT_API dt_status dt_tensor_to_dlpack_versioned(const dt_tensor* t, struct DLManagedTensorVersioned** out);

/** dt_tensor_from_dlpack for a DLManagedTensorVersioned, with the same ownership rules.
 *  Only major version 1 is accepted (DT_ERR_NOT_SUPPORTED naming the version otherwise;
 *  nothing past the version field is read). DLPACK_FLAG_BITMASK_READ_ONLY makes the
 *  tensor read-only (see above); IS_COPIED changes nothing. Errors: as
 *  dt_tensor_from_dlpack, plus the major version. */
DT_API dt_status dt_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned* managed, dt_tensor** out);

/** dt_tensor_from_dlpack, ordered after the producer's stream: work queued afterwards
 *  on the calling thread's current stream of the tensor's device waits for the work
 *  queued on producer_stream so far, without the caller waiting (an event recorded on
 *  the producer's stream). producer_stream is encoded as DLPack's __dlpack__(stream=):
 *  for CUDA memory 1 is the legacy default stream, 2 the per-thread default stream,
 *  other values a cudaStream_t, and 0 is refused as ambiguous; for host memory (and
 *  devices without streams) only -1 or 0 (no stream). -1 always means no ordering, as
 *  dt_tensor_from_dlpack. Ownership and errors: as dt_tensor_from_dlpack, plus
 *  DT_ERR_INVALID_ARGUMENT for a stream value the device cannot have, DT_ERR_BACKEND; on
 *  failure managed stays the caller's. */
DT_API dt_status dt_tensor_from_dlpack_stream(struct DLManagedTensor* managed, int64_t producer_stream,
                                              dt_tensor** out);
/** dt_tensor_from_dlpack_stream for a DLManagedTensorVersioned. */
DT_API dt_status dt_tensor_from_dlpack_versioned_stream(struct DLManagedTensorVersioned* managed,
                                                        int64_t producer_stream, dt_tensor** out);

/** *out = 1 when t's memory is read-only (a versioned DLPack import flagged so, or a view
 *  of one), else 0. Errors: DT_ERR_INVALID_HANDLE, DT_ERR_INVALID_ARGUMENT (NULL out). */
DT_API dt_status dt_tensor_is_read_only(const dt_tensor* t, int32_t* out);

/* ---------------------------------------------------------------- distributed
 *
 * Process groups: world_size processes (ranks 0 .. world_size-1, on one machine or
 * several) that run collectives together, as torch.distributed. The transport and the
 * algorithms are Gloo's (the library torch.distributed's "gloo" backend is) for tensors in
 * host memory, and NCCL's for CUDA tensors (libnccl.so.2, loaded by the CUDA plugin at
 * first use; DEVTENSOR_NCCL_LIBRARY names another file); nothing here is a collective of
 * devtensor's own. Backends: "gloo" takes CPU tensors, "nccl" CUDA tensors, and "" both
 * (each on its own library, as torch's default "cpu:gloo,cuda:nccl"). A CUDA device's
 * communicator is made at the group's first collective on it: every rank must reach it,
 * as with any collective (use one GPU per rank, e.g. cuda:LOCAL_RANK).
 *
 * Rendezvous (init_method, torch.distributed's spellings):
 *   "env://" (or NULL): rank 0's address and a free port from MASTER_ADDR / MASTER_PORT;
 *       the rank and world size from the arguments, or from RANK / WORLD_SIZE when those
 *       are negative. `devtensor run` sets all four, as torchrun does.
 *   "tcp://host:port": the same with the address in the text.
 *   "file:///path": a file every rank can open (a local or shared file system); the last
 *       rank to release its group deletes it. A run that crashed leaves it behind: delete
 *       it before reusing the path.
 * For env:// and tcp://, rank 0 serves a small key-value store on the port (every group of
 * the process made with the same init method shares it: keep the first group alive while
 * you make more). Ranks exchange their Gloo addresses through it, then talk directly.
 * Set GLOO_SOCKET_IFNAME to choose the network interface between machines.
 *
 * Collectives are blocking, must be called by every rank of the group in the same order
 * (send/recv by the two ranks named), and run one at a time per group (calls from several
 * threads are serialised). Tensors must be on a device the backend takes
 * (DT_ERR_DEVICE_MISMATCH otherwise); any dtype (NCCL cannot reduce int16:
 * DT_ERR_DTYPE_MISMATCH); any layout (a non-contiguous tensor goes through a contiguous
 * copy). A CUDA collective is queued on the thread's current stream and waited for
 * before the call returns. send/recv on NCCL ignore the tag: a rank's messages to one
 * peer arrive in order. The in-place ones (trailing underscore) write the caller's
 * tensor, which must not be read-only.
 *
 * Failures: a peer that exits, or that does not join or answer within the timeout, makes
 * the call fail on every other rank with DT_ERR_DISTRIBUTED within about the timeout,
 * with a message naming the rank that exited when devtensor can tell (always for a
 * process that died, through the store's connections or its process id), never a hang.
 * The group is then unusable: each later call fails at once with DT_ERR_DISTRIBUTED and
 * the first failure's message; release it (nothing leaks) and, if the job goes on, make a
 * new one. A failed call leaves its output tensors' contents unspecified.
 *
 * Threading: a group handle may be used from any thread. */

/** A group of processes that run collectives together. Opaque, reference-counted. */
typedef struct dt_process_group dt_process_group;

/** Reductions of dt_all_reduce_ and dt_reduce_scatter. AVG (sum, then divide by the world
 *  size) needs a floating dtype. For bool, SUM and MAX are "or", PRODUCT and MIN "and". */
#define DT_REDUCE_SUM     0
#define DT_REDUCE_AVG     1
#define DT_REDUCE_MIN     2
#define DT_REDUCE_MAX     3
#define DT_REDUCE_PRODUCT 4

/** Joins a NEW process group and returns when every rank has joined and connected.
 *  backend: "gloo" (CPU tensors), "nccl" (CUDA tensors; DT_ERR_NOT_SUPPORTED, saying
 *  why, where CUDA or NCCL cannot be used), or NULL / "" for both, by device (NCCL
 *  where it can be used). init_method: see above. rank, world_size: this
 *  process's rank and the number of ranks; negative reads RANK / WORLD_SIZE.
 *  timeout_ms: how long any one step (joining, a collective) may wait for peers; 0 means
 *  torch's default, 30 minutes. Errors: DT_ERR_INVALID_ARGUMENT (NULL out, bad init method
 *  or backend, missing or malformed RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT, rank
 *  not below world_size, ranks started with different world sizes, negative timeout),
 *  DT_ERR_NOT_SUPPORTED, DT_ERR_IO (the file of file:// cannot be opened), DT_ERR_DISTRIBUTED
 *  (the port is taken, rank 0 unreachable, ranks that did not join in time: named),
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_process_group_new(const char* backend, const char* init_method, int32_t rank,
                                      int32_t world_size, int64_t timeout_ms, dt_process_group** out);
/** Adds a reference. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_process_group_retain(dt_process_group* pg);
/** Drops a reference; NULL is a no-op. The last one closes the group's connections (peers
 *  still in a collective with this rank then fail). Errors: DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_process_group_release(dt_process_group* pg);
/** *out = this process's rank in pg. Errors: DT_ERR_INVALID_ARGUMENT (NULL), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_process_group_rank(const dt_process_group* pg, int32_t* out);
/** *out = the number of ranks in pg. Errors: as dt_process_group_rank. */
DT_API dt_status dt_process_group_size(const dt_process_group* pg, int32_t* out);
/** Writes the backend's name with the (buf, cap, needed) string protocol: "gloo",
 *  "nccl", or for a group made with "" "gloo" followed by ",nccl" where NCCL is usable.
 *  Errors: DT_ERR_INVALID_ARGUMENT (buf NULL with cap > 0), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_process_group_backend(const dt_process_group* pg, char* buf, size_t cap, size_t* needed);

/** In place: every rank's t becomes the reduction (DT_REDUCE_*) of all ranks' t, element by
 *  element. t must have the same shape and dtype on every rank. Errors:
 *  DT_ERR_INVALID_ARGUMENT (NULL, unknown op, read-only t), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_DEVICE_MISMATCH, DT_ERR_DTYPE_MISMATCH (AVG of a non-floating dtype),
 *  DT_ERR_DISTRIBUTED, DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_all_reduce_(const dt_process_group* pg, const dt_tensor* t, int32_t op);
/** In place: every rank's t becomes root's t. Errors: as dt_all_reduce_ (root not a rank
 *  is DT_ERR_INVALID_ARGUMENT). */
DT_API dt_status dt_broadcast_(const dt_process_group* pg, const dt_tensor* t, int32_t root);
/** output (world_size x numel(input) elements, input's dtype, any shape, e.g. [world_size,
 *  ...input's shape]) receives every rank's input in rank order, on every rank (as
 *  torch's all_gather_into_tensor). Errors: as dt_all_reduce_, plus DT_ERR_SHAPE_MISMATCH
 *  (output's element count), DT_ERR_DTYPE_MISMATCH (dtypes differ). */
DT_API dt_status dt_all_gather(const dt_process_group* pg, const dt_tensor* input, const dt_tensor* output);
/** Reduces input (world_size x numel(output) elements) over the ranks and gives rank r the
 *  r-th of its world_size equal parts, in output (as torch's reduce_scatter_tensor).
 *  Errors: as dt_all_gather, plus DT_ERR_DTYPE_MISMATCH for AVG of a non-floating dtype. */
DT_API dt_status dt_reduce_scatter(const dt_process_group* pg, const dt_tensor* input, const dt_tensor* output,
                                   int32_t op);
/** Returns when every rank has called it. Errors: DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_HANDLE,
 *  DT_ERR_DISTRIBUTED. */
DT_API dt_status dt_barrier(const dt_process_group* pg);
/** A NEW module that wraps module for data-parallel training over pg's processes, as
 *  torch.nn.parallel.DistributedDataParallel: every rank runs its own copy on its own part
 *  of the batch, and backward averages the gradients over the group, so that after
 *  dt_optimizer_step every rank holds the same parameters.
 *  Construction (a collective: every rank must call it) checks that every rank wraps the
 *  same parameters and buffers (an error naming the first one that differs, on every
 *  rank) and broadcasts them from rank 0. Forward is module's forward; parameters and
 *  buffers are module's, named "module." + module's names (as PyTorch's state_dict).
 *  During dt_backward, gradients are all-reduced in buckets of about bucket_cap_bytes
 *  (0: 25 MiB, torch's default) in reverse order of registration, each bucket as soon as
 *  its gradients are computed, on a thread of its own, overlapping the rest of backward;
 *  .grad receives the averages when backward returns (all or nothing). Every rank must
 *  run the same backward passes. find_unused_parameters (0 or 1): a parameter that gets
 *  no gradient in a pass counts as 0; with 0 such a pass fails with
 *  DT_ERR_INVALID_ARGUMENT naming it. Parameters that do not require grad are neither
 *  reduced nor checked for gradients. A parameter belongs to at most one of these.
 *  Errors: DT_ERR_INVALID_ARGUMENT (NULL, a parameter already wrapped, negative
 *  bucket_cap_bytes, different parameter counts), DT_ERR_INVALID_HANDLE,
 *  DT_ERR_DEVICE_MISMATCH (a tensor on a device the group does not take), DT_ERR_SHAPE_MISMATCH
 *  (a parameter or buffer of another shape or dtype on some rank), DT_ERR_DISTRIBUTED,
 *  DT_ERR_OUT_OF_MEMORY. */
DT_API dt_status dt_distributed_data_parallel_new(dt_module* module, const dt_process_group* pg,
                                                  int64_t bucket_cap_bytes, int32_t find_unused_parameters,
                                                  dt_module** out);
/** Turns ddp's gradient synchronisation off (no_sync = 1) or back on (0), as torch's
 *  `with ddp.no_sync():`, for gradient accumulation over micro-batches at one all-reduce
 *  per optimizer step. A backward pass that starts while it is off accumulates this rank's
 *  own gradients into .grad and communicates nothing (so ranks may run different numbers
 *  of such passes, and an unused parameter is not an error then). The next pass that
 *  starts with it on averages over the group each parameter's whole gradient, the .grad
 *  the local passes accumulated plus its own, and .grad becomes that average on every
 *  rank; as torch's, that pass must run on every rank. The setting applies to whole
 *  passes: changing it while a backward of ddp runs takes effect at the next one.
 *  Threading: any thread; the setting belongs to ddp, not to the calling thread.
 *  Errors: DT_ERR_INVALID_ARGUMENT (ddp NULL or not made by
 *  dt_distributed_data_parallel_new, no_sync not 0 or 1), DT_ERR_INVALID_HANDLE. */
DT_API dt_status dt_distributed_data_parallel_no_sync(dt_module* ddp, int32_t no_sync);
/** Sends t's elements to rank dst, which must call dt_recv with this rank, the same tag
 *  (>= 0) and as many bytes; returns once the data has left (the receiver may not have
 *  it yet). Errors: DT_ERR_INVALID_ARGUMENT (NULL, dst not a rank or this rank, negative
 *  tag), DT_ERR_INVALID_HANDLE, DT_ERR_DEVICE_MISMATCH, DT_ERR_DISTRIBUTED. */
DT_API dt_status dt_send(const dt_process_group* pg, const dt_tensor* t, int32_t dst, int32_t tag);
/** Receives into t what rank src sent with this tag. Errors: as dt_send. */
DT_API dt_status dt_recv(const dt_process_group* pg, const dt_tensor* t, int32_t src, int32_t tag);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVTENSOR_H */
