/* shim.h: small C helpers for the cgo binding. Each helper makes ONE devtensor call and,
 * when it fails, copies dt_last_error_message() before returning, so the call and the
 * fetch of its thread-local message happen inside a single cgo call (a goroutine may move
 * to another OS thread between two cgo calls). The message copy is malloc'd; the Go side
 * frees it. Nothing here keeps a Go pointer past the call. The helpers that can allocate
 * (every one that makes a tensor, module or optimizer, and backward, step, load, to)
 * start with gdt_take_slot(): they release the tensor whose Close is waiting in the
 * release slot (lifetime.go) before their own call, in the same cgo call. */
#ifndef DEVTENSOR_GO_SHIM_H
#define DEVTENSOR_GO_SHIM_H
#include <stdlib.h>
#include <string.h>
#include <devtensor.h>

/* status + message */
typedef struct { dt_status st; char* msg; } gdt_res;
/* status + message + new tensor reference */
/* Tensor handles cross into Go as uintptr_t: they are C memory, and an integer needs no
 * cgo pointer check. */
typedef struct { dt_status st; char* msg; uintptr_t t; } gdt_tres;
/* status + message + malloc'd string */
typedef struct { dt_status st; char* msg; char* s; } gdt_sres;

static inline char* gdt_errmsg(dt_status st) {
  if (st == DT_OK) return NULL;
  const char* m = dt_last_error_message();
  return strdup(m ? m : "");
}
static inline gdt_res gdt_r(dt_status st) { gdt_res r; r.st = st; r.msg = gdt_errmsg(st); return r; }
static inline gdt_tres gdt_tr(dt_status st, dt_tensor* t) {
  gdt_tres r; r.st = st; r.msg = gdt_errmsg(st); r.t = st == DT_OK ? (uintptr_t)t : 0; return r;
}
static inline gdt_res gdt_fail(dt_status st, const char* m) { gdt_res r; r.st = st; r.msg = strdup(m); return r; }

/* ---- library */
/* Every release of the binding (Close's deferred ones, Scope.Close, the finalizer) goes
 * through here. Releases whose status was not DT_OK (a double release would be one) have
 * no caller to report to and no message to fetch, so the tests check this count instead.
 * Defined in lifetime.go's preamble (one definition for every cgo file). */
extern uint64_t gdt_release_errors;
static inline void gdt_release_counted(uintptr_t t) {
  if (dt_tensor_release((dt_tensor*)t) != DT_OK) __atomic_fetch_add(&gdt_release_errors, 1, __ATOMIC_RELAXED);
}
/* The same, for ReleasePending, which has a caller: the failure is counted too, and its
 * status and message returned. */
static inline gdt_res gdt_release_counted_res(uintptr_t t) {
  dt_status st = dt_tensor_release((dt_tensor*)t);
  if (st != DT_OK) __atomic_fetch_add(&gdt_release_errors, 1, __ATOMIC_RELAXED);
  return gdt_r(st);
}
/* Scope.Close: hs is Go memory holding no Go pointer, read only during the call. */
static inline void gdt_release_many(const uintptr_t* hs, size_t n) {
  for (size_t i = 0; i < n; ++i) gdt_release_counted(hs[i]);
}
/* The release slot of Tensor.Close (lifetime.go): the handle of the last tensor closed,
 * or 0. Close swaps its handle in from Go (C memory: no cgo call, no pointer check); the
 * next helper that can allocate swaps it out here and releases it before its own call, so
 * the memory it frees is reused hot by that call's result. (A small CPU tensor of the fast
 * path never waits here: its Close releases it with a fast call.) Defined in lifetime.go. */
extern uintptr_t gdt_release_slot;
/* The fast path's trampolines (fastcall.c, which defines GDT_FASTCALL_TU) leave the slot
 * alone: it may hold a tensor whose release takes long (an autograd graph, a large or
 * device buffer), which waits for the next cgo call. */
static inline void gdt_take_slot(void) {
#ifndef GDT_FASTCALL_TU
  if (__atomic_load_n(&gdt_release_slot, __ATOMIC_RELAXED) == 0) return; /* no locked op when empty */
  uintptr_t h = __atomic_exchange_n(&gdt_release_slot, 0, __ATOMIC_ACQ_REL);
  if (h) gdt_release_counted(h);
#endif
}

/* ---- strings: kind selects the function. */
enum { GDT_S_DEVICE_FORMAT, GDT_S_DEVICE_NAME, GDT_S_TENSOR, GDT_S_CUDA_STATUS, GDT_S_BUILD_INFO };
static inline dt_status gdt_str_call(int kind, dt_device d, const dt_tensor* t, int32_t* state,
                                     char* buf, size_t cap, size_t* need) {
  switch (kind) {
    case GDT_S_DEVICE_FORMAT: return dt_device_format(d, buf, cap, need);
    case GDT_S_DEVICE_NAME: return dt_device_name(d, buf, cap, need);
    case GDT_S_TENSOR: return dt_tensor_to_string(t, buf, cap, need);
    case GDT_S_CUDA_STATUS: return dt_cuda_status(state, buf, cap, need);
    case GDT_S_BUILD_INFO: return dt_build_info(buf, cap, need);
  }
  return DT_ERR_INVALID_ARGUMENT;
}
static inline gdt_sres gdt_string(int kind, dt_device d, uintptr_t t_h, int32_t* state) {
  const dt_tensor* t = (const dt_tensor*)t_h;
  gdt_sres r = {DT_OK, NULL, NULL};
  size_t cap = 256, need = 0;
  for (int tries = 0; tries < 4; ++tries) {
    char* buf = (char*)malloc(cap);
    if (!buf) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
    r.st = gdt_str_call(kind, d, t, state, buf, cap, &need);
    if (r.st != DT_OK) { free(buf); r.msg = gdt_errmsg(r.st); return r; }
    if (need <= cap) { r.s = buf; return r; }
    free(buf);
    cap = need;
  }
  r.st = DT_ERR_INTERNAL; r.msg = strdup("string kept growing");
  return r;
}

/* ---- devices */
static inline gdt_res gdt_device_parse(const char* s, dt_device* out) { return gdt_r(dt_device_parse(s, out)); }
static inline gdt_res gdt_device_count(int32_t type, size_t* out) { return gdt_r(dt_device_count(type, out)); }
static inline gdt_res gdt_device_memory(dt_device d, uint64_t* f, uint64_t* t) { return gdt_r(dt_device_memory(d, f, t)); }
static inline gdt_res gdt_device_properties(dt_device d, dt_device_props* p) {
  p->struct_size = sizeof(dt_device_props);
  return gdt_r(dt_device_properties(d, p));
}
static inline gdt_res gdt_try_gpu(int32_t i, dt_device* out) { return gdt_r(dt_try_gpu(i, out)); }
static inline gdt_res gdt_devlist(int by_free, dt_device* out, size_t cap, size_t* count) {
  return gdt_r(by_free ? dt_devices_by_free_memory(out, cap, count) : dt_all_gpus(out, cap, count));
}
static inline gdt_res gdt_synchronize(dt_device d) { return gdt_r(dt_synchronize(d)); }
static inline gdt_res gdt_manual_seed(uint64_t s) { return gdt_r(dt_manual_seed(s)); }
static inline gdt_res gdt_set_default_device(dt_device d) { return gdt_r(dt_set_default_device(d)); }
static inline gdt_res gdt_default_device(dt_device* d) { return gdt_r(dt_default_device(d)); }

static inline gdt_res gdt_device_manual_seed(dt_device d, uint64_t s) { return gdt_r(dt_device_manual_seed(d, s)); }
static inline gdt_res gdt_set_default_dtype(dt_dtype t) { return gdt_r(dt_set_default_dtype(t)); }
static inline gdt_res gdt_default_dtype(dt_dtype* t) { return gdt_r(dt_default_dtype(t)); }
static inline gdt_res gdt_set_num_threads(int32_t n) { return gdt_r(dt_set_num_threads(n)); }
static inline gdt_res gdt_num_threads(int32_t* n) { return gdt_r(dt_num_threads(n)); }
static inline gdt_res gdt_empty_cache(dt_device d) { return gdt_r(dt_empty_cache(d)); }
static inline gdt_res gdt_memory_stats(dt_device d, dt_mem_stats* s) {
  s->struct_size = sizeof(dt_mem_stats);
  return gdt_r(dt_memory_stats(d, s));
}
static inline gdt_res gdt_set_allow_tf32(int32_t allow) { return gdt_r(dt_set_allow_tf32(allow)); }
static inline gdt_res gdt_allow_tf32(int32_t* out) { return gdt_r(dt_allow_tf32(out)); }

/* ---- constructors */
enum { GDT_C_EMPTY, GDT_C_ZEROS, GDT_C_ONES, GDT_C_RAND, GDT_C_RANDN };
static inline gdt_tres gdt_construct(int kind, const int64_t* shape, size_t ndim, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (kind) {
    case GDT_C_EMPTY: st = dt_tensor_empty(shape, ndim, dt, d, &t); break;
    case GDT_C_ZEROS: st = dt_tensor_zeros(shape, ndim, dt, d, &t); break;
    case GDT_C_ONES: st = dt_tensor_ones(shape, ndim, dt, d, &t); break;
    case GDT_C_RAND: st = dt_tensor_rand(shape, ndim, dt, d, &t); break;
    case GDT_C_RANDN: st = dt_tensor_randn(shape, ndim, dt, d, &t); break;
  }
  return gdt_tr(st, t);
}
static inline gdt_tres gdt_full(const int64_t* shape, size_t ndim, double v, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_full(shape, ndim, v, dt, d, &t); return gdt_tr(st, t);
}
static inline gdt_tres gdt_arange(double a, double b, double s, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_arange(a, b, s, dt, d, &t); return gdt_tr(st, t);
}
static inline gdt_tres gdt_linspace(double a, double b, int64_t steps, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_linspace(a, b, steps, dt, d, &t); return gdt_tr(st, t);
}
static inline gdt_tres gdt_eye(int64_t n, int64_t m, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_eye(n, m, dt, d, &t); return gdt_tr(st, t);
}
/* randint: shape is Go memory holding ndim int64 values, read during the call. */
static inline gdt_tres gdt_randint(int64_t low, int64_t high, const int64_t* shape, size_t ndim, dt_dtype dt,
                                   dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_randint(low, high, shape, ndim, dt, d, &t);
  return gdt_tr(st, t);
}
static inline gdt_tres gdt_randperm(int64_t n, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_randperm(n, dt, d, &t); return gdt_tr(st, t);
}
/* new_* constructors: the given shape with src's dtype and device (v: NEW_FULL's value) */
enum { GDT_N_EMPTY, GDT_N_ZEROS, GDT_N_ONES, GDT_N_FULL };
static inline gdt_tres gdt_new_as(int kind, uintptr_t src_h, const int64_t* shape, size_t ndim, double v) {
  gdt_take_slot();
  const dt_tensor* src = (const dt_tensor*)src_h;
  dt_tensor* t = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (kind) {
    case GDT_N_EMPTY: st = dt_tensor_new_empty(src, shape, ndim, &t); break;
    case GDT_N_ZEROS: st = dt_tensor_new_zeros(src, shape, ndim, &t); break;
    case GDT_N_ONES: st = dt_tensor_new_ones(src, shape, ndim, &t); break;
    case GDT_N_FULL: st = dt_tensor_new_full(src, shape, ndim, v, &t); break;
  }
  return gdt_tr(st, t);
}
/* pinned host memory (needs a usable CUDA backend) */
static inline gdt_tres gdt_empty_pinned(const int64_t* shape, size_t ndim, dt_dtype dt) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_empty_pinned(shape, ndim, dt, &t); return gdt_tr(st, t);
}
static inline gdt_tres gdt_pin_memory(uintptr_t t_h) {
  gdt_take_slot();
  dt_tensor* o = NULL; dt_status st = dt_tensor_pin_memory((const dt_tensor*)t_h, &o); return gdt_tr(st, o);
}
static inline gdt_res gdt_is_pinned(uintptr_t t_h, int32_t* out) {
  return gdt_r(dt_tensor_is_pinned((const dt_tensor*)t_h, out)); }
static inline gdt_tres gdt_from_data(const void* data, size_t nbytes, const int64_t* shape, size_t ndim,
                                     dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_tensor* t = NULL; dt_status st = dt_tensor_from_data(data, nbytes, shape, ndim, dt, d, &t);
  return gdt_tr(st, t);
}

/* ---- queries: one call returns everything the Go Tensor needs to describe itself */
static inline gdt_res gdt_ndim(uintptr_t t_h, size_t* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_ndim(t, out)); }
static inline gdt_res gdt_shape(uintptr_t t_h, int64_t* out, size_t cap) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_shape(t, out, cap)); }
static inline gdt_res gdt_strides(uintptr_t t_h, int64_t* out, size_t cap) {
  return gdt_r(dt_tensor_strides((const dt_tensor*)t_h, out, cap)); }
static inline gdt_res gdt_dtype(uintptr_t t_h, dt_dtype* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_dtype(t, out)); }
static inline gdt_res gdt_device(uintptr_t t_h, dt_device* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_device(t, out)); }
static inline gdt_res gdt_numel(uintptr_t t_h, size_t* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_numel(t, out)); }
static inline gdt_res gdt_nbytes(uintptr_t t_h, size_t* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_nbytes(t, out)); }
static inline gdt_res gdt_is_contiguous(uintptr_t t_h, int32_t* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_is_contiguous(t, out)); }
static inline gdt_res gdt_shares_storage(uintptr_t a_h, uintptr_t b_h, int32_t* out) {
  const dt_tensor* a = (const dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  return gdt_r(dt_tensor_shares_storage(a, b, out));
}
static inline gdt_res gdt_item(uintptr_t t_h, double* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_item(t, out)); }
static inline gdt_res gdt_copy_to_host(uintptr_t t_h, void* dst, size_t n) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_copy_to_host(t, dst, n)); }
static inline gdt_res gdt_copy_from_host(uintptr_t t_h, const void* src, size_t n) {
  dt_tensor* t = (dt_tensor*)t_h; return gdt_r(dt_tensor_copy_from_host(t, src, n)); }
static inline gdt_res gdt_copy_(uintptr_t self_h, uintptr_t src_h) {
  return gdt_r(dt_copy_((dt_tensor*)self_h, (const dt_tensor*)src_h, 0)); }
/* DLPack: DLManagedTensor pointers are C memory, passed as void*. */
typedef struct { dt_status st; char* msg; void* p; } gdt_dlres;
static inline gdt_dlres gdt_to_dlpack(uintptr_t t_h) {
  struct DLManagedTensor* m = NULL;
  dt_status st = dt_tensor_to_dlpack((const dt_tensor*)t_h, &m);
  gdt_dlres r; r.st = st; r.msg = gdt_errmsg(st); r.p = m; return r;
}
static inline gdt_tres gdt_from_dlpack(void* m) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_tensor_from_dlpack((struct DLManagedTensor*)m, &o);
  return gdt_tr(st, o);
}
/* DLPack 1.x: DLManagedTensorVersioned pointers, the same way (opaque here: only the
 * tests read its fields, in internal/dlpacktest). */
static inline gdt_dlres gdt_to_dlpack_versioned(uintptr_t t_h) {
  struct DLManagedTensorVersioned* m = NULL;
  dt_status st = dt_tensor_to_dlpack_versioned((const dt_tensor*)t_h, &m);
  gdt_dlres r; r.st = st; r.msg = gdt_errmsg(st); r.p = m; return r;
}
static inline gdt_tres gdt_from_dlpack_versioned(void* m) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_tensor_from_dlpack_versioned((struct DLManagedTensorVersioned*)m, &o);
  return gdt_tr(st, o);
}
/* The imports ordered after the producer's stream (DLPack's __dlpack__(stream=) value). */
static inline gdt_tres gdt_from_dlpack_stream(void* m, int64_t producer_stream) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_tensor_from_dlpack_stream((struct DLManagedTensor*)m, producer_stream, &o);
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_from_dlpack_versioned_stream(void* m, int64_t producer_stream) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_tensor_from_dlpack_versioned_stream((struct DLManagedTensorVersioned*)m, producer_stream, &o);
  return gdt_tr(st, o);
}
static inline gdt_res gdt_is_read_only(uintptr_t t_h, int32_t* out) {
  const dt_tensor* t = (const dt_tensor*)t_h; return gdt_r(dt_tensor_is_read_only(t, out)); }
static inline gdt_tres gdt_to(uintptr_t t_h, dt_device d, dt_dtype dt, uint32_t flags) {
  gdt_take_slot();
  const dt_tensor* t = (const dt_tensor*)t_h;
  dt_tensor* o = NULL; dt_status st = dt_tensor_to(t, d, dt, flags, &o); return gdt_tr(st, o);
}

/* ---- the op table's ops: ops_table.h (generated by script/gen-op-bindings), keyed by
 * the table's op codes; matmul and contiguous are not table ops */
static inline gdt_tres gdt_matmul(uintptr_t a_h, uintptr_t b_h) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  dt_tensor* o = NULL; dt_status st = dt_matmul(a, b, &o); return gdt_tr(st, o);
}
static inline gdt_tres gdt_where(uintptr_t c_h, uintptr_t a_h, uintptr_t b_h) {
  gdt_take_slot();
  const dt_tensor* c = (const dt_tensor*)c_h; const dt_tensor* a = (const dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  dt_tensor* o = NULL; dt_status st = dt_where(c, a, b, &o); return gdt_tr(st, o);
}

/* masked_fill, clamp (has_lo / has_hi: whether the bound is given), pad, interpolate, triu / tril,
 * var / std */
static inline gdt_tres gdt_masked_fill(uintptr_t a_h, uintptr_t m_h, double v) {
  gdt_take_slot();
  dt_tensor* o = NULL; dt_status st = dt_masked_fill((const dt_tensor*)a_h, (const dt_tensor*)m_h, v, &o); return gdt_tr(st, o);
}
static inline gdt_tres gdt_clamp(uintptr_t a_h, int32_t has_lo, double lo, int32_t has_hi, double hi) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_clamp((const dt_tensor*)a_h, has_lo ? &lo : NULL, has_hi ? &hi : NULL, &o);
  return gdt_tr(st, o);
}
/* pad: mode is a GDT_PAD_* (PadMode's values, select.go); the names stay on the C side (no
 * C.CString), and a value outside the enum passes a name the library refuses
 * (DT_ERR_INVALID_ARGUMENT). pad: Go memory holding n int64 values (integers only), read
 * during the call. */
enum { GDT_PAD_CONSTANT, GDT_PAD_REFLECT, GDT_PAD_REPLICATE, GDT_PAD_CIRCULAR };
static inline gdt_tres gdt_pad(uintptr_t a_h, const int64_t* pad, size_t n, int mode, double value) {
  gdt_take_slot();
  static const char* const names[] = {"constant", "reflect", "replicate", "circular"};
  dt_tensor* o = NULL;
  dt_status st = dt_pad((const dt_tensor*)a_h, pad, n, mode >= 0 && mode < 4 ? names[mode] : "unknown", value, &o);
  return gdt_tr(st, o);
}
/* interpolate (and gdt_upsample_new, nn_shim.h): mode is a GDT_INTERP_* (InterpolateMode's
 * values, select.go); the names stay on the C side as pad's, and a value outside the enum
 * passes a name the library refuses (DT_ERR_INVALID_ARGUMENT). size / scale: Go memory
 * holding n int64 / n double values (numbers only), NULL where not given, read during the
 * call. */
enum { GDT_INTERP_NEAREST, GDT_INTERP_LINEAR, GDT_INTERP_BILINEAR, GDT_INTERP_TRILINEAR };
static inline const char* gdt_interp_mode_name(int mode) {
  static const char* const names[] = {"nearest", "linear", "bilinear", "trilinear"};
  return mode >= 0 && mode < 4 ? names[mode] : "unknown";
}
static inline gdt_tres gdt_interpolate(uintptr_t a_h, const int64_t* size, const double* scale, size_t n, int mode,
                                       int32_t align_corners) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_interpolate((const dt_tensor*)a_h, size, scale, n, gdt_interp_mode_name(mode), align_corners, &o);
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_triangle(int32_t upper, uintptr_t a_h, int64_t diagonal) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = upper ? dt_triu((const dt_tensor*)a_h, diagonal, &o) : dt_tril((const dt_tensor*)a_h, diagonal, &o);
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_var_std(int32_t take_sqrt, uintptr_t a_h, const int64_t* dims, size_t n, double correction,
                                   int32_t keep) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = take_sqrt ? dt_std((const dt_tensor*)a_h, dims, n, correction, keep, &o)
                           : dt_var((const dt_tensor*)a_h, dims, n, correction, keep, &o);
  return gdt_tr(st, o);
}
/* logsumexp (norm 0; ord unused) or vector_norm (norm 1): dims is Go memory holding n
 * int64 values, read during the call. */
static inline gdt_tres gdt_logsumexp_norm(int32_t norm, uintptr_t a_h, double ord, const int64_t* dims, size_t n,
                                          int32_t keep) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = norm ? dt_vector_norm((const dt_tensor*)a_h, ord, dims, n, keep, &o)
                      : dt_logsumexp((const dt_tensor*)a_h, dims, n, keep, &o);
  return gdt_tr(st, o);
}
/* The truth-value ops, NEW bool tensors: isnan, isinf, isfinite, logical_not of a (one
 * operand), logical_and, logical_or, logical_xor of a and b (two), any or all of a over
 * dims (Go memory holding n int64 values, read during the call). */
enum { GDT_LOGIC_ISNAN, GDT_LOGIC_ISINF, GDT_LOGIC_ISFINITE, GDT_LOGIC_NOT, GDT_LOGIC_NONZERO };
static inline gdt_tres gdt_logical_unary(int op, uintptr_t a_h) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (op) {
    case GDT_LOGIC_ISNAN: st = dt_isnan(a, &o); break;
    case GDT_LOGIC_ISINF: st = dt_isinf(a, &o); break;
    case GDT_LOGIC_ISFINITE: st = dt_isfinite(a, &o); break;
    case GDT_LOGIC_NOT: st = dt_logical_not(a, &o); break;
    case GDT_LOGIC_NONZERO: st = dt_nonzero(a, &o); break;
  }
  return gdt_tr(st, o);
}
enum { GDT_LOGIC_AND, GDT_LOGIC_OR, GDT_LOGIC_XOR, GDT_LOGIC_MASKED_SELECT };
static inline gdt_tres gdt_logical_binary(int op, uintptr_t a_h, uintptr_t b_h) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (op) {
    case GDT_LOGIC_AND: st = dt_logical_and(a, b, &o); break;
    case GDT_LOGIC_OR: st = dt_logical_or(a, b, &o); break;
    case GDT_LOGIC_XOR: st = dt_logical_xor(a, b, &o); break;
    case GDT_LOGIC_MASKED_SELECT: st = dt_masked_select(a, b, &o); break;
  }
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_any_all(int32_t all, uintptr_t a_h, const int64_t* dims, size_t n, int32_t keep) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = all ? dt_all((const dt_tensor*)a_h, dims, n, keep, &o)
                     : dt_any((const dt_tensor*)a_h, dims, n, keep, &o);
  return gdt_tr(st, o);
}

static inline gdt_tres gdt_contiguous(uintptr_t a_h) {
  gdt_take_slot();
  dt_tensor* o = NULL; dt_status st = dt_contiguous((const dt_tensor*)a_h, &o); return gdt_tr(st, o);
}

static inline gdt_tres gdt_softmax(int log, uintptr_t a_h, int64_t dim) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h;
  dt_tensor* o = NULL;
  dt_status st = log ? dt_log_softmax(a, dim, &o) : dt_softmax(a, dim, &o);
  return gdt_tr(st, o);
}

static inline gdt_tres gdt_leaky_relu(uintptr_t a_h, double negative_slope) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_leaky_relu((const dt_tensor*)a_h, negative_slope, &o);
  return gdt_tr(st, o);
}

static inline gdt_tres gdt_cumsum(uintptr_t a_h, int64_t dim) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_cumsum((const dt_tensor*)a_h, dim, &o);
  return gdt_tr(st, o);
}

/* status + message + two new tensor references: values and indices (sort, topk) */
typedef struct { dt_status st; char* msg; uintptr_t values; uintptr_t indices; } gdt_vires;
/* topk 0: dt_sort(a, dim, flag); topk 1: dt_topk(a, k, dim, flag) */
static inline gdt_vires gdt_sort(int topk, uintptr_t a_h, int64_t k, int64_t dim, int32_t flag) {
  gdt_take_slot();
  dt_tensor* v = NULL;
  dt_tensor* i = NULL;
  dt_status st = topk ? dt_topk((const dt_tensor*)a_h, k, dim, flag, &v, &i)
                      : dt_sort((const dt_tensor*)a_h, dim, flag, &v, &i);
  gdt_vires r;
  r.st = st;
  r.msg = gdt_errmsg(st);
  r.values = st == DT_OK ? (uintptr_t)v : 0;
  r.indices = st == DT_OK ? (uintptr_t)i : 0;
  return r;
}
/* status + message + up to three new tensor references (0 for one not made or not
 * wanted), as a call with three out-parameters leaves them: unique, the RNN forward */
typedef struct { dt_status st; char* msg; uintptr_t t[3]; } gdt_t3res;
static inline gdt_t3res gdt_t3(dt_status st, dt_tensor* a, dt_tensor* b, dt_tensor* c) {
  gdt_t3res r;
  r.st = st;
  r.msg = gdt_errmsg(st);
  r.t[0] = st == DT_OK ? (uintptr_t)a : 0;
  r.t[1] = st == DT_OK ? (uintptr_t)b : 0;
  r.t[2] = st == DT_OK ? (uintptr_t)c : 0;
  return r;
}
static inline gdt_t3res gdt_unique(uintptr_t a_h, int32_t want_inverse, int32_t want_counts) {
  gdt_take_slot();
  dt_tensor* v = NULL;
  dt_tensor* i = NULL;
  dt_tensor* c = NULL;
  dt_status st = dt_unique((const dt_tensor*)a_h, &v, want_inverse ? &i : NULL, want_counts ? &c : NULL);
  return gdt_t3(st, v, i, c);
}
/* normalize (kind 0: a alone), cosine_similarity (1) or pairwise_distance (2) */
enum { GDT_DIST_NORMALIZE, GDT_DIST_COSINE, GDT_DIST_PAIRWISE };
static inline gdt_tres gdt_distance(int kind, uintptr_t a_h, uintptr_t b_h, double p, int64_t dim, double eps,
                                    int32_t keepdim) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h;
  const dt_tensor* b = (const dt_tensor*)b_h;
  dt_tensor* o = NULL;
  dt_status st = kind == GDT_DIST_NORMALIZE ? dt_normalize(a, p, dim, eps, &o)
                 : kind == GDT_DIST_COSINE  ? dt_cosine_similarity(a, b, dim, eps, &o)
                                            : dt_pairwise_distance(a, b, p, eps, keepdim, &o);
  return gdt_tr(st, o);
}
/* bincount: w_h 0 for no weights */
static inline gdt_tres gdt_bincount(uintptr_t a_h, uintptr_t w_h, int64_t minlength) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_bincount((const dt_tensor*)a_h, (const dt_tensor*)w_h, minlength, &o);
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_argsort(uintptr_t a_h, int64_t dim, int32_t descending) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_argsort((const dt_tensor*)a_h, dim, descending, &o);
  return gdt_tr(st, o);
}

/* ---- views */
enum { GDT_V_RESHAPE, GDT_V_VIEW, GDT_V_PERMUTE, GDT_V_SQUEEZE, GDT_V_EXPAND };
static inline gdt_tres gdt_shapeview(int op, uintptr_t a_h, const int64_t* s, size_t n) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (op) {
    case GDT_V_RESHAPE: st = dt_reshape(a, s, n, &o); break;
    case GDT_V_VIEW: st = dt_view(a, s, n, &o); break;
    case GDT_V_PERMUTE: st = dt_permute(a, s, n, &o); break;
    case GDT_V_SQUEEZE: st = dt_squeeze(a, s, n, &o); break;
    case GDT_V_EXPAND: st = dt_expand(a, s, n, &o); break;
  }
  return gdt_tr(st, o);
}
enum { GDT_V_TRANSPOSE, GDT_V_NARROW, GDT_V_UNSQUEEZE, GDT_V_FLATTEN };
static inline gdt_tres gdt_dimview(int op, uintptr_t a_h, int64_t x, int64_t y, int64_t z) {
  gdt_take_slot();
  const dt_tensor* a = (const dt_tensor*)a_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (op) {
    case GDT_V_TRANSPOSE: st = dt_transpose(a, x, y, &o); break;
    case GDT_V_NARROW: st = dt_narrow(a, x, y, z, &o); break;
    case GDT_V_UNSQUEEZE: st = dt_unsqueeze(a, x, &o); break;
    case GDT_V_FLATTEN: st = dt_flatten(a, x, y, &o); break;
  }
  return gdt_tr(st, o);
}

/* ---- like-constructors */
enum { GDT_L_EMPTY, GDT_L_ZEROS, GDT_L_ONES, GDT_L_RAND, GDT_L_RANDN };
static inline gdt_tres gdt_like(int kind, uintptr_t src_h) {
  gdt_take_slot();
  const dt_tensor* src = (const dt_tensor*)src_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (kind) {
    case GDT_L_EMPTY: st = dt_empty_like(src, &o); break;
    case GDT_L_ZEROS: st = dt_zeros_like(src, &o); break;
    case GDT_L_ONES: st = dt_ones_like(src, &o); break;
    case GDT_L_RAND: st = dt_rand_like(src, &o); break;
    case GDT_L_RANDN: st = dt_randn_like(src, &o); break;
  }
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_full_like(uintptr_t src_h, double v) {
  gdt_take_slot();
  dt_tensor* o = NULL; dt_status st = dt_full_like((const dt_tensor*)src_h, v, &o); return gdt_tr(st, o);
}

/* ---- joining and indexing: hs is an array of n handles (Go memory holding integers,
 * read during the call only). */
static inline gdt_tres gdt_join(int stack, const uintptr_t* hs, size_t n, int64_t dim) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = stack ? dt_stack((const dt_tensor* const*)hs, n, dim, &o)
                       : dt_cat((const dt_tensor* const*)hs, n, dim, &o);
  return gdt_tr(st, o);
}
/* flip (a: the dims, b unused), roll (a: the shifts, b: the dims) or repeat (a: the
 * repeats, b unused): a and b are Go memory holding na and nb int64 values (integers
 * only), NULL where empty, read during the call. */
enum { GDT_R_FLIP, GDT_R_ROLL, GDT_R_REPEAT };
static inline gdt_tres gdt_reorder(int op, uintptr_t t_h, const int64_t* a, size_t na, const int64_t* b, size_t nb) {
  gdt_take_slot();
  const dt_tensor* t = (const dt_tensor*)t_h;
  dt_tensor* o = NULL; dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (op) {
    case GDT_R_FLIP: st = dt_flip(t, a, na, &o); break;
    case GDT_R_ROLL: st = dt_roll(t, a, na, b, nb, &o); break;
    case GDT_R_REPEAT: st = dt_repeat(t, a, na, &o); break;
  }
  return gdt_tr(st, o);
}
/* Splits into at most cap pieces written to outs (as handles); *count gets the number. */
static inline gdt_res gdt_split(int by_size, uintptr_t t_h, int64_t k, int64_t dim,
                                uintptr_t* outs, size_t cap, size_t* count) {
  gdt_take_slot();
  const dt_tensor* t = (const dt_tensor*)t_h;
  dt_status st = by_size ? dt_split(t, k, dim, (dt_tensor**)outs, cap, count)
                         : dt_chunk(t, k, dim, (dt_tensor**)outs, cap, count);
  return gdt_r(st);
}
static inline gdt_tres gdt_scatter(int scatter, uintptr_t t_h, int64_t dim, uintptr_t idx_h, uintptr_t src_h) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  const dt_tensor* t = (const dt_tensor*)t_h; const dt_tensor* i = (const dt_tensor*)idx_h;
  const dt_tensor* s = (const dt_tensor*)src_h;
  dt_status st = scatter ? dt_scatter_add(t, dim, i, s, &o) : dt_index_add(t, dim, i, s, &o);
  return gdt_tr(st, o);
}
static inline gdt_tres gdt_index(int gather, uintptr_t t_h, int64_t dim, uintptr_t idx_h) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = gather ? dt_gather((const dt_tensor*)t_h, dim, (const dt_tensor*)idx_h, &o)
                        : dt_index_select((const dt_tensor*)t_h, dim, (const dt_tensor*)idx_h, &o);
  return gdt_tr(st, o);
}
/* multinomial (one_hot 0: n samples of t's weights, replacement 0/1) or one_hot (1: t's
 * indices over n classes; replacement unused) */
static inline gdt_tres gdt_categorical(int32_t one_hot, uintptr_t t_h, int64_t n, int32_t replacement) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = one_hot ? dt_one_hot((const dt_tensor*)t_h, n, &o)
                         : dt_multinomial((const dt_tensor*)t_h, n, replacement, &o);
  return gdt_tr(st, o);
}

/* ---- benchmark helper: the pure-C cost of n tiny adds (dt_add + dt_tensor_release). */
static inline gdt_res gdt_bench_add(uintptr_t a_h, uintptr_t b_h, long n) {
  const dt_tensor* a = (const dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  for (long i = 0; i < n; ++i) {
    dt_tensor* o = NULL;
    dt_status st = dt_add(a, b, &o);
    if (st != DT_OK) return gdt_r(st);
    dt_tensor_release(o);
  }
  return gdt_r(DT_OK);
}
/* ... and of n tiny in-place adds (dt_add_: no tensor made or released). */
static inline gdt_res gdt_bench_add_inplace(uintptr_t a_h, uintptr_t b_h, long n) {
  dt_tensor* a = (dt_tensor*)a_h; const dt_tensor* b = (const dt_tensor*)b_h;
  for (long i = 0; i < n; ++i) {
    dt_status st = dt_add_(a, b);
    if (st != DT_OK) return gdt_r(st);
  }
  return gdt_r(DT_OK);
}

#include "ops_table.h"  /* the op table's helpers, generated */

#endif
