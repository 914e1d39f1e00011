/* state_dict_shim.h: the cgo helpers of state dicts and safetensors files (state_dict.go),
 * with the same rule as shim.h: one devtensor call per helper (an entry's name and tensor
 * are read together), its error message fetched in the same cgo call. State-dict handles
 * cross into Go as uintptr_t, as tensor handles do (C memory; no cgo pointer check). The
 * helpers that make a state dict or hand out a tensor, and the load into a module, take
 * the release slot first, as the other allocating helpers do. */
#ifndef DEVTENSOR_GO_STATE_DICT_SHIM_H
#define DEVTENSOR_GO_STATE_DICT_SHIM_H
#include "nn_shim.h" /* gdt_hres (new handle), gdt_nres (count), gdt_pres (name + tensor) */

static inline gdt_hres gdt_state_dict_new(void) {
  gdt_take_slot();
  dt_state_dict* sd = NULL;
  dt_status st = dt_state_dict_new(&sd);
  return gdt_hr(st, sd); }
static inline void gdt_state_dict_release_quiet(uintptr_t sd) { dt_state_dict_release((dt_state_dict*)sd); }
static inline gdt_res gdt_state_dict_release(uintptr_t sd) { return gdt_r(dt_state_dict_release((dt_state_dict*)sd)); }
static inline gdt_nres gdt_state_dict_count(uintptr_t sd) {
  gdt_nres r; r.n = 0;
  r.st = dt_state_dict_count((const dt_state_dict*)sd, &r.n);
  r.msg = gdt_errmsg(r.st);
  return r; }
/* Entry i: its malloc'd name and, when with_tensor, a NEW tensor reference. */
static inline gdt_pres gdt_state_dict_entry(uintptr_t h, size_t i, int with_tensor) {
  const dt_state_dict* sd = (const dt_state_dict*)h;
  gdt_pres r = {DT_OK, NULL, 0, NULL};
  size_t need = 0;
  if (with_tensor) gdt_take_slot();
  r.st = dt_state_dict_name(sd, i, NULL, 0, &need);
  if (r.st != DT_OK) { r.msg = gdt_errmsg(r.st); return r; }
  r.name = (char*)malloc(need);
  if (!r.name) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
  r.st = dt_state_dict_name(sd, i, r.name, need, &need);
  if (r.st == DT_OK && with_tensor) {
    dt_tensor* t = NULL;
    r.st = dt_state_dict_get(sd, i, &t);
    if (r.st == DT_OK) r.t = (uintptr_t)t;
  }
  if (r.st != DT_OK) { free(r.name); r.name = NULL; r.msg = gdt_errmsg(r.st); }
  return r; }
static inline gdt_tres gdt_state_dict_find(uintptr_t sd, const char* name) {
  gdt_take_slot();
  dt_tensor* t = NULL;
  dt_status st = dt_state_dict_find((const dt_state_dict*)sd, name, &t);
  return gdt_tr(st, t); }
static inline gdt_res gdt_state_dict_set(uintptr_t sd, const char* name, uintptr_t t) {
  return gdt_r(dt_state_dict_set((dt_state_dict*)sd, name, (const dt_tensor*)t)); }
static inline gdt_res gdt_safetensors_save(uintptr_t sd, const char* path) {
  return gdt_r(dt_safetensors_save((const dt_state_dict*)sd, path)); }
static inline gdt_hres gdt_safetensors_load(const char* path, dt_device d) {
  gdt_take_slot();
  dt_state_dict* sd = NULL;
  dt_status st = dt_safetensors_load(path, d, &sd);
  return gdt_hr(st, sd); }
static inline gdt_hres gdt_module_state_dict(uintptr_t m) {
  gdt_take_slot();
  dt_state_dict* sd = NULL;
  dt_status st = dt_module_state_dict((const dt_module*)m, &sd);
  return gdt_hr(st, sd); }
static inline gdt_res gdt_module_load_state_dict(uintptr_t m, uintptr_t sd) {
  gdt_take_slot();
  return gdt_r(dt_module_load_state_dict((dt_module*)m, (const dt_state_dict*)sd)); }

#endif
