/* custom_module_shim.h: the cgo helpers of the modules the caller defines (custom_module.go),
 * with the same rule as shim.h: one devtensor call per helper, its error message fetched
 * in the same cgo call; those that make a module or a tensor take the release slot first
 * (gdt_take_slot). Handles cross into Go as uintptr_t (C memory; no cgo pointer check).
 * Arrays passed in are Go memory holding integers (handles) or C pointers (the names,
 * C strings the Go side frees after the call), read during the call only. */
#ifndef DEVTENSOR_GO_CUSTOM_MODULE_SHIM_H
#define DEVTENSOR_GO_CUSTOM_MODULE_SHIM_H
#include "nn_shim.h" /* gdt_hres (new handle), gdt_tres (new tensor) */

/* The Go side (custom_module_export.go). key is a runtime/cgo.Handle value (an integer
 * key to the Go function, never a Go pointer). hs holds 1 + n handles, each a reference
 * of its own: self's module, then the inputs (0 for a NULL input); the Go side hands each
 * to a Go wrapper for the call, and when the function has returned writes back what is
 * left to release (0 for a reference the user closed or returned). *out: the output's
 * reference (0: none); *msg: NULL, or a malloc'd message for dt_set_error_message. */
extern int32_t gdtModuleForwardCall(uintptr_t key, uintptr_t* hs, size_t n, uintptr_t* out, char** msg);
extern void gdtModuleForwardFree(uintptr_t key);

/* At most this many inputs (the header's limit on max_inputs). */
enum { GDT_MODULE_MAX_INPUTS = 16 };

/* The dt_module_forward_fn of every module NewModule makes. The library's handles are
 * borrowed for the call: the Go wrappers get references of their own (taken here, in C,
 * before the Go function runs), and what they still hold when it returns is released
 * here. The message of a failure is set last, on this thread, so that nothing after it
 * (a release) replaces it. */
static inline dt_status gdt_module_forward_call(dt_module* self, dt_tensor* const* inputs, size_t n, void* user_data,
                                                dt_tensor** out) {
  uintptr_t hs[1 + GDT_MODULE_MAX_INPUTS];
  if (n > GDT_MODULE_MAX_INPUTS) {
    dt_set_error_message("the Go binding takes at most 16 inputs");
    return DT_ERR_INTERNAL;
  }
  dt_status st = dt_module_retain(self);
  if (st != DT_OK) return st;
  hs[0] = (uintptr_t)self;
  for (size_t i = 0; i < n; ++i) {
    hs[1 + i] = 0;
    if (!inputs[i]) continue;
    st = dt_tensor_retain(inputs[i]);
    if (st != DT_OK) {
      for (size_t j = 0; j < i; ++j) gdt_release_counted(hs[1 + j]);
      dt_module_release(self);
      return st;
    }
    hs[1 + i] = (uintptr_t)inputs[i];
  }
  uintptr_t o = 0;
  char* msg = NULL;
  st = (dt_status)gdtModuleForwardCall((uintptr_t)user_data, hs, n, &o, &msg);
  for (size_t i = 0; i < n; ++i) gdt_release_counted(hs[1 + i]); /* 0 (NULL) is a no-op */
  if (hs[0]) dt_module_release((dt_module*)hs[0]);
  if (msg) {
    dt_set_error_message(msg);
    free(msg);
  }
  *out = (dt_tensor*)o;
  return st;
}
static inline void gdt_module_forward_free(void* user_data) { gdtModuleForwardFree((uintptr_t)user_data); }

/* A NEW module (dt_module_new) of kind with the given lists, each of n names (C strings)
 * and n handles, NULL when empty; key as above. On failure the key is not freed (the
 * library leaves user_data to its caller). */
static inline gdt_hres gdt_module_new(const char* kind, size_t nc, char* const* cnames, const uintptr_t* children,
                                      size_t np, char* const* pnames, const uintptr_t* params, size_t nb,
                                      char* const* bnames, const uintptr_t* buffers, size_t min_inputs,
                                      size_t max_inputs, uintptr_t key) {
  gdt_take_slot();
  dt_module_spec s;
  memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.kind = kind;
  s.n_children = nc;
  s.child_names = (const char* const*)cnames;
  s.children = (dt_module* const*)children;
  s.n_parameters = np;
  s.parameter_names = (const char* const*)pnames;
  s.parameters = (const dt_tensor* const*)params;
  s.n_buffers = nb;
  s.buffer_names = (const char* const*)bnames;
  s.buffers = (const dt_tensor* const*)buffers;
  s.min_inputs = min_inputs;
  s.max_inputs = max_inputs;
  s.forward = gdt_module_forward_call;
  s.user_data = (void*)key;
  s.free_user_data = gdt_module_forward_free;
  dt_module* m = NULL;
  dt_status st = dt_module_new(&s, &m);
  return gdt_hr(st, m); }

/* A NEW reference to the parameter (buffers 0) or buffer (buffers 1) at a dotted path (a
 * C string the caller frees after the call). */
static inline gdt_tres gdt_module_get_tensor(uintptr_t m, const char* path, int buffers) {
  gdt_take_slot();
  dt_tensor* t = NULL;
  dt_status st = buffers ? dt_module_get_buffer((const dt_module*)m, path, &t)
                         : dt_module_get_parameter((const dt_module*)m, path, &t);
  return gdt_tr(st, t); }

#endif
