/* graph_shim.h: the cgo helpers of graphs (graph.go), with the same rule as shim.h: one
 * devtensor call per helper (CaptureGraph's begin and end make the few calls of one step
 * together), its error message fetched in the same cgo call. Graph and stream handles
 * cross into Go as uintptr_t, as tensor handles do (C memory; no cgo pointer check).
 * None of these helpers takes the release slot: replay allocates nothing, and a capture
 * records the calls made inside it, whichever release they make first. */
#ifndef DEVTENSOR_GO_GRAPH_SHIM_H
#define DEVTENSOR_GO_GRAPH_SHIM_H
#include "nn_shim.h" /* gdt_hres, gdt_hr: status + message + new handle */

/* CaptureGraph (graph.go), on the OS thread its goroutine is locked to. The library's
 * capture holds a reference of its own to the handle s until it ends, so the capture can
 * always be ended through s, even when fn closed the caller's Stream. */
static inline gdt_res gdt_graph_capture_begin(uintptr_t s) {
  return gdt_r(dt_graph_capture_begin((dt_stream*)s)); }
/* Ends the capture; r.h is the NEW graph. On failure the capture goes on. */
static inline gdt_hres gdt_graph_capture_end(uintptr_t s) {
  dt_graph* g = NULL;
  dt_status st = dt_graph_capture_end((dt_stream*)s, &g);
  return gdt_hr(st, g);
}
static inline gdt_res gdt_stream_is_capturing(uintptr_t s, int32_t* out) {
  return gdt_r(dt_stream_is_capturing((const dt_stream*)s, out)); }

/* ---- graphs */
static inline void gdt_graph_release_quiet(uintptr_t g) { dt_graph_release((dt_graph*)g); }
static inline gdt_res gdt_graph_release(uintptr_t g) { return gdt_r(dt_graph_release((dt_graph*)g)); }
static inline gdt_res gdt_graph_replay(uintptr_t g) { return gdt_r(dt_graph_replay((dt_graph*)g)); }
static inline gdt_res gdt_graph_num_steps(uintptr_t g, size_t* out) {
  return gdt_r(dt_graph_num_steps((const dt_graph*)g, out)); }
static inline gdt_res gdt_graph_device(uintptr_t g, dt_device* out) {
  return gdt_r(dt_graph_device((const dt_graph*)g, out)); }

#endif
