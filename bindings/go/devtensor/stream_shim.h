/* stream_shim.h: the cgo helpers of streams and events (stream.go), with the same rule
 * as shim.h: one devtensor call per helper (WithStream's enter and leave make the few
 * calls of one step together), its error message fetched in the same cgo call. Stream
 * and event handles cross into Go as uintptr_t, as tensor handles do (C memory; no cgo
 * pointer check). None of these helpers takes the release slot: they make no tensor. */
#ifndef DEVTENSOR_GO_STREAM_SHIM_H
#define DEVTENSOR_GO_STREAM_SHIM_H
#include "nn_shim.h" /* gdt_hres, gdt_hr: status + message + new handle */

/* ---- streams */
static inline gdt_hres gdt_stream_create(dt_device d, int default_stream) {
  dt_stream* s = NULL;
  dt_status st = default_stream ? dt_stream_default(d, &s) : dt_stream_create(d, &s);
  return gdt_hr(st, s);
}
static inline void gdt_stream_release_quiet(uintptr_t s) { dt_stream_release((dt_stream*)s); }
static inline gdt_res gdt_stream_release(uintptr_t s) { return gdt_r(dt_stream_release((dt_stream*)s)); }
static inline gdt_res gdt_stream_device(uintptr_t s, dt_device* out) {
  return gdt_r(dt_stream_device((const dt_stream*)s, out)); }
static inline gdt_res gdt_stream_is_default(uintptr_t s, int32_t* out) {
  return gdt_r(dt_stream_is_default((const dt_stream*)s, out)); }
static inline gdt_res gdt_stream_synchronize(uintptr_t s) { return gdt_r(dt_stream_synchronize((const dt_stream*)s)); }
static inline gdt_res gdt_stream_query(uintptr_t s, int32_t* done) {
  return gdt_r(dt_stream_query((const dt_stream*)s, done)); }
static inline gdt_res gdt_stream_wait_event(uintptr_t s, uintptr_t e) {
  return gdt_r(dt_stream_wait_event((const dt_stream*)s, (const dt_event*)e)); }
static inline gdt_res gdt_stream_wait_stream(uintptr_t s, uintptr_t other) {
  return gdt_r(dt_stream_wait_stream((const dt_stream*)s, (const dt_stream*)other)); }
/* *out: the backend's handle (a cudaStream_t), an integer on the Go side. */
static inline gdt_res gdt_stream_native_handle(uintptr_t s, uintptr_t* out) {
  void* p = NULL;
  dt_status st = dt_stream_native_handle((const dt_stream*)s, &p);
  if (st == DT_OK) *out = (uintptr_t)p;
  return gdt_r(st);
}
static inline gdt_hres gdt_thread_stream(dt_device d) {
  dt_stream* s = NULL;
  dt_status st = dt_thread_stream(d, &s);
  return gdt_hr(st, s);
}
/* WithStream (stream.go), on the OS thread its goroutine is locked to: enter makes s the
 * thread's stream for s's device and returns a NEW reference to the one it replaced;
 * leave sets that one back and releases it, in the same cgo call (released even when
 * setting it back failed, so nothing leaks; the status is the first failure's). */
static inline gdt_res gdt_stream_enter(uintptr_t s, uintptr_t* previous) {
  dt_stream* prev = NULL;
  dt_status st = dt_set_thread_stream((const dt_stream*)s, &prev);
  if (st == DT_OK) *previous = (uintptr_t)prev;
  return gdt_r(st);
}
static inline gdt_res gdt_stream_leave(uintptr_t previous) {
  dt_status st = dt_set_thread_stream((const dt_stream*)previous, NULL);
  gdt_res r = gdt_r(st);
  dt_status rel = dt_stream_release((dt_stream*)previous);
  if (st == DT_OK && rel != DT_OK) r = gdt_r(rel);
  return r;
}

/* ---- events */
static inline gdt_hres gdt_event_create(dt_device d) {
  dt_event* e = NULL;
  dt_status st = dt_event_create(d, &e);
  return gdt_hr(st, e);
}
static inline void gdt_event_release_quiet(uintptr_t e) { dt_event_release((dt_event*)e); }
static inline gdt_res gdt_event_release(uintptr_t e) { return gdt_r(dt_event_release((dt_event*)e)); }
static inline gdt_res gdt_event_device(uintptr_t e, dt_device* out) {
  return gdt_r(dt_event_device((const dt_event*)e, out)); }
/* s 0: the calling thread's current stream of e's device */
static inline gdt_res gdt_event_record(uintptr_t e, uintptr_t s) {
  return gdt_r(dt_event_record((const dt_event*)e, (const dt_stream*)s)); }
static inline gdt_res gdt_event_synchronize(uintptr_t e) { return gdt_r(dt_event_synchronize((const dt_event*)e)); }
static inline gdt_res gdt_event_query(uintptr_t e, int32_t* done) {
  return gdt_r(dt_event_query((const dt_event*)e, done)); }
static inline gdt_res gdt_event_elapsed_ms(uintptr_t start, uintptr_t end, float* ms) {
  return gdt_r(dt_event_elapsed_ms((const dt_event*)start, (const dt_event*)end, ms)); }

/* ---- tensors and streams */
static inline gdt_res gdt_tensor_record_stream(uintptr_t t, uintptr_t s) {
  return gdt_r(dt_tensor_record_stream((const dt_tensor*)t, (const dt_stream*)s)); }

#endif
