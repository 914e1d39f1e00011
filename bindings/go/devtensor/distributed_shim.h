/* distributed_shim.h: the cgo helpers of process groups and collectives (distributed.go),
 * with the same rule as shim.h: one devtensor call per helper, its error message fetched
 * in the same cgo call. Process-group handles cross into Go as uintptr_t, as tensor
 * handles do (C memory; no cgo pointer check). Only gdt_distributed_data_parallel takes
 * the release slot (it makes a module, as the other module constructors do); the others
 * make no tensor. A collective may block in C for as long as the group's timeout; cgo
 * gives the blocked call an OS thread of its own. */
#ifndef DEVTENSOR_GO_DISTRIBUTED_SHIM_H
#define DEVTENSOR_GO_DISTRIBUTED_SHIM_H
#include "nn_shim.h" /* gdt_hres, gdt_hr: status + message + new handle */

/* backend, init_method: NULL for the defaults (C strings the Go side allocates and frees). */
static inline gdt_hres gdt_process_group_new(const char* backend, const char* init_method, int32_t rank,
                                             int32_t world_size, int64_t timeout_ms) {
  dt_process_group* pg = NULL;
  dt_status st = dt_process_group_new(backend, init_method, rank, world_size, timeout_ms, &pg);
  return gdt_hr(st, pg);
}
static inline void gdt_process_group_release_quiet(uintptr_t pg) { dt_process_group_release((dt_process_group*)pg); }
static inline gdt_res gdt_process_group_release(uintptr_t pg) {
  return gdt_r(dt_process_group_release((dt_process_group*)pg)); }
static inline gdt_res gdt_process_group_rank(uintptr_t pg, int32_t* out) {
  return gdt_r(dt_process_group_rank((const dt_process_group*)pg, out)); }
static inline gdt_res gdt_process_group_size(uintptr_t pg, int32_t* out) {
  return gdt_r(dt_process_group_size((const dt_process_group*)pg, out)); }
/* The backend's name, malloc'd (the Go side frees it), with the (buf, cap, needed) protocol. */
static inline gdt_sres gdt_process_group_backend(uintptr_t pg) {
  gdt_sres r = {DT_OK, NULL, NULL};
  size_t cap = 16, need = 0;
  for (int tries = 0; tries < 4; ++tries) {
    char* buf = (char*)malloc(cap);
    if (!buf) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
    r.st = dt_process_group_backend((const dt_process_group*)pg, buf, cap, &need);
    if (r.st != DT_OK) { free(buf); r.msg = gdt_errmsg(r.st); return r; }
    if (need <= cap) { r.s = buf; return r; }
    free(buf);
    cap = need;
  }
  r.st = DT_ERR_INTERNAL; r.msg = strdup("string kept growing");
  return r;
}

/* ---- collectives */
static inline gdt_res gdt_all_reduce(uintptr_t pg, uintptr_t t, int32_t op) {
  return gdt_r(dt_all_reduce_((const dt_process_group*)pg, (const dt_tensor*)t, op)); }
static inline gdt_res gdt_broadcast(uintptr_t pg, uintptr_t t, int32_t root) {
  return gdt_r(dt_broadcast_((const dt_process_group*)pg, (const dt_tensor*)t, root)); }
static inline gdt_res gdt_all_gather(uintptr_t pg, uintptr_t in, uintptr_t out) {
  return gdt_r(dt_all_gather((const dt_process_group*)pg, (const dt_tensor*)in, (const dt_tensor*)out)); }
static inline gdt_res gdt_reduce_scatter(uintptr_t pg, uintptr_t in, uintptr_t out, int32_t op) {
  return gdt_r(dt_reduce_scatter((const dt_process_group*)pg, (const dt_tensor*)in, (const dt_tensor*)out, op)); }
static inline gdt_res gdt_barrier(uintptr_t pg) { return gdt_r(dt_barrier((const dt_process_group*)pg)); }
static inline gdt_res gdt_send(uintptr_t pg, uintptr_t t, int32_t dst, int32_t tag) {
  return gdt_r(dt_send((const dt_process_group*)pg, (const dt_tensor*)t, dst, tag)); }
static inline gdt_res gdt_recv(uintptr_t pg, uintptr_t t, int32_t src, int32_t tag) {
  return gdt_r(dt_recv((const dt_process_group*)pg, (const dt_tensor*)t, src, tag)); }

/* ---- DistributedDataParallel: a collective at construction (every rank calls it) */
static inline gdt_hres gdt_distributed_data_parallel(uintptr_t mod, uintptr_t pg, int64_t bucket_cap_bytes,
                                                     int32_t find_unused) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_distributed_data_parallel_new((dt_module*)mod, (const dt_process_group*)pg, bucket_cap_bytes,
                                                  find_unused, &m);
  return gdt_hr(st, m); }
/* Turns a DistributedDataParallel's gradient synchronisation off (1) or on (0); no collective. */
static inline gdt_res gdt_distributed_data_parallel_no_sync(uintptr_t ddp, int32_t no_sync) {
  return gdt_r(dt_distributed_data_parallel_no_sync((dt_module*)ddp, no_sync)); }

#endif
