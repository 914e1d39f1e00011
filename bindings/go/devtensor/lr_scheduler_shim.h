/* lr_scheduler_shim.h: the cgo helpers of the learning-rate schedulers (lr_scheduler.go),
 * with the same rule as shim.h: one devtensor call per helper (Kind reads the size, then
 * the string, in the same call, as gdt_module_kind does), its error message fetched in
 * the same cgo call. Scheduler and optimizer handles cross into Go as uintptr_t (C
 * memory; no cgo pointer check). The helpers that make a scheduler or a state dict, and
 * the load, take the release slot first, as the optimizer's do. Arrays passed in
 * (milestones, SequentialLR's scheduler handles) are Go memory holding integers only,
 * read (copied) during the call; NULL when empty. */
#ifndef DEVTENSOR_GO_LR_SCHEDULER_SHIM_H
#define DEVTENSOR_GO_LR_SCHEDULER_SHIM_H
#include "nn_shim.h" /* gdt_hres (new handle), gdt_hr */

/* status + message + number (0 on failure) */
typedef struct { dt_status st; char* msg; double v; } gdt_fres;
/* status + message + whole number (0 on failure) */
typedef struct { dt_status st; char* msg; int64_t v; } gdt_i64res;

static inline void gdt_lr_scheduler_release_quiet(uintptr_t s) { dt_lr_scheduler_release((dt_lr_scheduler*)s); }
static inline gdt_res gdt_lr_scheduler_release(uintptr_t s) {
  return gdt_r(dt_lr_scheduler_release((dt_lr_scheduler*)s)); }

/* ---- constructors: opt is the optimizer's handle; each returns a NEW scheduler */
static inline gdt_hres gdt_step_lr(uintptr_t opt, int64_t step_size, double gamma) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_step_lr_new((dt_optimizer*)opt, step_size, gamma, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_multi_step_lr(uintptr_t opt, const int64_t* milestones, size_t n, double gamma) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_multi_step_lr_new((dt_optimizer*)opt, milestones, n, gamma, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_exponential_lr(uintptr_t opt, double gamma) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_exponential_lr_new((dt_optimizer*)opt, gamma, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_linear_lr(uintptr_t opt, double start_factor, double end_factor, int64_t total_iters) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_linear_lr_new((dt_optimizer*)opt, start_factor, end_factor, total_iters, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_constant_lr(uintptr_t opt, double factor, int64_t total_iters) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_constant_lr_new((dt_optimizer*)opt, factor, total_iters, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_polynomial_lr(uintptr_t opt, int64_t total_iters, double power) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_polynomial_lr_new((dt_optimizer*)opt, total_iters, power, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_cosine_annealing_lr(uintptr_t opt, int64_t t_max, double eta_min) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_cosine_annealing_lr_new((dt_optimizer*)opt, t_max, eta_min, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_cosine_annealing_warm_restarts(uintptr_t opt, int64_t t_0, int64_t t_mult,
                                                          double eta_min) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_cosine_annealing_warm_restarts_new((dt_optimizer*)opt, t_0, t_mult, eta_min, &s);
  return gdt_hr(st, s); }
/* anneal_strategy: a C string the caller frees after the call */
static inline gdt_hres gdt_one_cycle_lr(uintptr_t opt, double max_lr, int64_t total_steps, double pct_start,
                                        const char* anneal_strategy, int32_t cycle_momentum, double base_momentum,
                                        double max_momentum, double div_factor, double final_div_factor,
                                        int32_t three_phase) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_one_cycle_lr_new((dt_optimizer*)opt, max_lr, total_steps, pct_start, anneal_strategy,
                                     cycle_momentum, base_momentum, max_momentum, div_factor, final_div_factor,
                                     three_phase, &s);
  return gdt_hr(st, s); }
/* mode: a C string the caller frees after the call */
static inline gdt_hres gdt_cyclic_lr(uintptr_t opt, double base_lr, double max_lr, int64_t step_size_up,
                                     int64_t step_size_down, const char* mode, double gamma, int32_t cycle_momentum,
                                     double base_momentum, double max_momentum) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_cyclic_lr_new((dt_optimizer*)opt, base_lr, max_lr, step_size_up, step_size_down, mode, gamma,
                                  cycle_momentum, base_momentum, max_momentum, &s);
  return gdt_hr(st, s); }
/* mode, threshold_mode: C strings the caller frees after the call */
static inline gdt_hres gdt_reduce_lr_on_plateau(uintptr_t opt, const char* mode, double factor, int64_t patience,
                                                double threshold, const char* threshold_mode, int64_t cooldown,
                                                double min_lr, double eps) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_reduce_lr_on_plateau_new((dt_optimizer*)opt, mode, factor, patience, threshold, threshold_mode,
                                             cooldown, min_lr, eps, &s);
  return gdt_hr(st, s); }
/* ss: n scheduler handles; milestones: n - 1 of them (the Go side checks the count) */
static inline gdt_hres gdt_sequential_lr(uintptr_t opt, const uintptr_t* ss, size_t n, const int64_t* milestones) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_sequential_lr_new((dt_optimizer*)opt, (dt_lr_scheduler* const*)ss, n, milestones, &s);
  return gdt_hr(st, s); }
static inline gdt_hres gdt_chained_scheduler(const uintptr_t* ss, size_t n) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = dt_chained_scheduler_new((dt_lr_scheduler* const*)ss, n, &s);
  return gdt_hr(st, s); }
/* LambdaLR and MultiplicativeLR with a Go function (lr_lambda.go). user_data is a
 * runtime/cgo.Handle value (an integer key to the Go function, never a Go pointer);
 * the trampolines hand it to the exported Go functions of lr_lambda_export.go. */
extern double gdtLRLambdaCall(int64_t epoch, uintptr_t key);
extern void gdtLRLambdaFree(uintptr_t key);
static inline double gdt_lr_lambda_call(int64_t epoch, void* user_data) {
  return gdtLRLambdaCall(epoch, (uintptr_t)user_data); }
static inline void gdt_lr_lambda_free(void* user_data) { gdtLRLambdaFree((uintptr_t)user_data); }
/* multiplicative 0: LambdaLR, 1: MultiplicativeLR. On failure the key is not freed. */
static inline gdt_hres gdt_lambda_lr(uintptr_t opt, uintptr_t key, int32_t multiplicative) {
  gdt_take_slot();
  dt_lr_scheduler* s = NULL;
  dt_status st = multiplicative
                     ? dt_multiplicative_lr_new((dt_optimizer*)opt, gdt_lr_lambda_call, (void*)key, gdt_lr_lambda_free, &s)
                     : dt_lambda_lr_new((dt_optimizer*)opt, gdt_lr_lambda_call, (void*)key, gdt_lr_lambda_free, &s);
  return gdt_hr(st, s); }

/* ---- stepping and reading */
static inline gdt_res gdt_lr_scheduler_step(uintptr_t s) { return gdt_r(dt_lr_scheduler_step((dt_lr_scheduler*)s)); }
static inline gdt_res gdt_lr_scheduler_step_metric(uintptr_t s, double metric) {
  return gdt_r(dt_lr_scheduler_step_metric((dt_lr_scheduler*)s, metric)); }
static inline gdt_fres gdt_lr_scheduler_last_lr(uintptr_t s) {
  gdt_fres r; r.v = 0;
  r.st = dt_lr_scheduler_last_lr((const dt_lr_scheduler*)s, &r.v);
  r.msg = gdt_errmsg(r.st);
  return r; }
static inline gdt_i64res gdt_lr_scheduler_last_epoch(uintptr_t s) {
  gdt_i64res r; r.v = 0;
  r.st = dt_lr_scheduler_last_epoch((const dt_lr_scheduler*)s, &r.v);
  r.msg = gdt_errmsg(r.st);
  return r; }
/* r.s: the kind, malloc'd (the Go side frees it) */
static inline gdt_sres gdt_lr_scheduler_kind(uintptr_t h) {
  const dt_lr_scheduler* s = (const dt_lr_scheduler*)h;
  gdt_sres r = {DT_OK, NULL, NULL};
  size_t need = 0;
  r.st = dt_lr_scheduler_kind(s, NULL, 0, &need);
  if (r.st == DT_OK) {
    r.s = (char*)malloc(need);
    if (!r.s) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
    r.st = dt_lr_scheduler_kind(s, r.s, need, &need);
  }
  if (r.st != DT_OK) { free(r.s); r.s = NULL; r.msg = gdt_errmsg(r.st); }
  return r; }

/* ---- checkpoints: a NEW state dict, as gdt_optimizer_state_dict's */
static inline gdt_hres gdt_lr_scheduler_state_dict(uintptr_t s) {
  gdt_take_slot();
  dt_state_dict* sd = NULL;
  dt_status st = dt_lr_scheduler_state_dict((const dt_lr_scheduler*)s, &sd);
  return gdt_hr(st, sd); }
static inline gdt_res gdt_lr_scheduler_load_state_dict(uintptr_t s, uintptr_t sd) {
  gdt_take_slot();
  return gdt_r(dt_lr_scheduler_load_state_dict((dt_lr_scheduler*)s, (const dt_state_dict*)sd)); }

#endif
