/* norm_shim.h: the cgo helpers of normalisation, embedding (norm.go) and the module tree
 * (tree.go), with the same rule as shim.h: one devtensor call per helper (a child's name
 * and handle are read together), its error message fetched in the same cgo call; those
 * that can allocate take the release slot first (gdt_take_slot). Handles cross into Go as
 * uintptr_t (C memory; no cgo pointer check). Shapes passed in are Go memory holding
 * integers only, read during the call. */
#ifndef DEVTENSOR_GO_NORM_SHIM_H
#define DEVTENSOR_GO_NORM_SHIM_H
#include "nn_shim.h" /* gdt_hres (new handle), gdt_nres (count) */

/* status + message + malloc'd name + new module reference */
typedef struct { dt_status st; char* msg; char* name; uintptr_t h; } gdt_cres;

/* ---- functional forms */
static inline gdt_tres gdt_batch_norm(uintptr_t in, uintptr_t rm, uintptr_t rv, uintptr_t w, uintptr_t b,
                                      int32_t training, double momentum, double eps) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_batch_norm((const dt_tensor*)in, (dt_tensor*)rm, (dt_tensor*)rv, (const dt_tensor*)w,
                               (const dt_tensor*)b, training, momentum, eps, &o);
  return gdt_tr(st, o); }
static inline gdt_tres gdt_layer_norm(uintptr_t in, const int64_t* shape, size_t n, uintptr_t w, uintptr_t b,
                                      double eps) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_layer_norm((const dt_tensor*)in, shape, n, (const dt_tensor*)w, (const dt_tensor*)b, eps, &o);
  return gdt_tr(st, o); }
static inline gdt_tres gdt_group_norm(uintptr_t in, int64_t groups, uintptr_t w, uintptr_t b, double eps) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_group_norm((const dt_tensor*)in, groups, (const dt_tensor*)w, (const dt_tensor*)b, eps, &o);
  return gdt_tr(st, o); }
static inline gdt_tres gdt_embedding(uintptr_t in, uintptr_t w, int64_t padding_idx) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_embedding((const dt_tensor*)in, (const dt_tensor*)w, padding_idx, &o);
  return gdt_tr(st, o); }

/* ---- modules */
static inline gdt_hres gdt_batch_norm_new(int two_d, int64_t features, double eps, double momentum, int32_t affine,
                                          int32_t track, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = two_d ? dt_batch_norm2d_new(features, eps, momentum, affine, track, dt, d, &m)
                       : dt_batch_norm1d_new(features, eps, momentum, affine, track, dt, d, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_layer_norm_new(const int64_t* shape, size_t n, double eps, int32_t affine, int32_t bias,
                                          dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_layer_norm_new(shape, n, eps, affine, bias, dt, d, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_group_norm_new(int64_t groups, int64_t channels, double eps, int32_t affine, dt_dtype dt,
                                          dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_group_norm_new(groups, channels, eps, affine, dt, d, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_embedding_new(int64_t num, int64_t dim, int64_t padding_idx, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_embedding_new(num, dim, padding_idx, dt, d, &m);
  return gdt_hr(st, m); }

/* ---- the module tree */
static inline gdt_sres gdt_module_kind(uintptr_t m) {
  gdt_sres r = {DT_OK, NULL, NULL};
  size_t need = 0;
  r.st = dt_module_kind((const dt_module*)m, NULL, 0, &need);
  if (r.st == DT_OK) {
    r.s = (char*)malloc(need);
    if (!r.s) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
    r.st = dt_module_kind((const dt_module*)m, r.s, need, &need);
  }
  if (r.st != DT_OK) { free(r.s); r.s = NULL; r.msg = gdt_errmsg(r.st); }
  return r; }
static inline gdt_nres gdt_module_child_count(uintptr_t m) {
  gdt_nres r; r.n = 0;
  r.st = dt_module_child_count((const dt_module*)m, &r.n);
  r.msg = gdt_errmsg(r.st);
  return r; }
/* Child i: its malloc'd name and a NEW reference to it. */
static inline gdt_cres gdt_module_child_at(uintptr_t h, size_t i) {
  const dt_module* m = (const dt_module*)h;
  gdt_cres r = {DT_OK, NULL, NULL, 0};
  size_t need = 0;
  gdt_take_slot();
  r.st = dt_module_child_at(m, i, NULL, 0, &need, NULL);
  if (r.st != DT_OK) { r.msg = gdt_errmsg(r.st); return r; }
  r.name = (char*)malloc(need);
  if (!r.name) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
  dt_module* c = NULL;
  r.st = dt_module_child_at(m, i, r.name, need, &need, &c);
  if (r.st != DT_OK) { free(r.name); r.name = NULL; r.msg = gdt_errmsg(r.st); return r; }
  r.h = (uintptr_t)c;
  return r; }
static inline gdt_hres gdt_module_child(uintptr_t m, const char* path) {
  gdt_take_slot();
  dt_module* c = NULL;
  dt_status st = dt_module_child((const dt_module*)m, path, &c);
  return gdt_hr(st, c); }

#endif
