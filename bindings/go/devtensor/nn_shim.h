/* nn_shim.h: the cgo helpers for autograd, modules and optimizers, with the same rule as
 * shim.h: one devtensor call per helper, its error message fetched in the same cgo call;
 * those that can allocate release the release slot's tensor first (gdt_take_slot).
 * Handle arrays passed in are Go memory holding integers only, read during the call. */
#ifndef DEVTENSOR_GO_NN_SHIM_H
#define DEVTENSOR_GO_NN_SHIM_H
#include "shim.h"

/* status + message + new module / optimizer reference */
typedef struct { dt_status st; char* msg; uintptr_t h; } gdt_hres;
/* status + message + count */
typedef struct { dt_status st; char* msg; size_t n; } gdt_nres;
/* status + message + tensor + malloc'd name */
typedef struct { dt_status st; char* msg; uintptr_t t; char* name; } gdt_pres;

/* Callers sequence the call before reading its out-parameter: C leaves the order in
 * which function arguments are evaluated unspecified. */
static inline gdt_hres gdt_hr(dt_status st, void* h) {
  gdt_hres r; r.st = st; r.msg = gdt_errmsg(st); r.h = st == DT_OK ? (uintptr_t)h : 0; return r;
}

/* ---- autograd */
static inline gdt_res gdt_set_requires_grad(uintptr_t t, int32_t on) {
  return gdt_r(dt_tensor_set_requires_grad((dt_tensor*)t, on)); }
static inline gdt_res gdt_backward(uintptr_t t, uintptr_t g) {
  gdt_take_slot();
  return gdt_r(dt_backward((const dt_tensor*)t, (const dt_tensor*)g)); }
/* r.t is 0 with DT_OK when the tensor has no gradient */
static inline gdt_tres gdt_grad(uintptr_t t) {
  gdt_take_slot();
  dt_tensor* g = NULL;
  dt_status st = dt_tensor_grad((const dt_tensor*)t, &g);
  return gdt_tr(st, g); }
static inline gdt_res gdt_clear_grad(uintptr_t t) { return gdt_r(dt_tensor_clear_grad((dt_tensor*)t)); }
static inline gdt_tres gdt_detach(uintptr_t t) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_tensor_detach((const dt_tensor*)t, &o);
  return gdt_tr(st, o); }
static inline gdt_res gdt_requires_grad(uintptr_t t, int32_t* out) {
  return gdt_r(dt_tensor_requires_grad((const dt_tensor*)t, out)); }
static inline gdt_res gdt_is_leaf(uintptr_t t, int32_t* out) { return gdt_r(dt_tensor_is_leaf((const dt_tensor*)t, out)); }
static inline gdt_res gdt_set_grad_enabled(int32_t on) { return gdt_r(dt_set_grad_enabled(on)); }
static inline gdt_res gdt_grad_enabled(int32_t* out) { return gdt_r(dt_grad_enabled(out)); }
/* NoGrad (autograd.go), on the OS thread its goroutine is locked to: enter sets the
 * thread's own mode to 0 and returns the one it had; leave checks that the thread still
 * has NoGrad's 0 (another mode means the goroutine left the thread NoGrad locked: f
 * called runtime.UnlockOSThread without a matching LockOSThread, so this is another
 * thread, whose mode is left alone) and sets the previous mode back. */
static inline gdt_res gdt_no_grad_enter(int32_t* previous) { return gdt_r(dt_set_thread_grad_mode(0, previous)); }
static inline gdt_res gdt_no_grad_leave(int32_t previous) {
  int32_t now = 0;
  dt_status st = dt_thread_grad_mode(&now);
  if (st != DT_OK) return gdt_r(st);
  if (now != 0)
    return gdt_fail(DT_ERR_INVALID_ARGUMENT,
                    "the goroutine left the OS thread NoGrad locked it to (an unbalanced runtime.UnlockOSThread "
                    "in f?): that thread may keep grad mode off");
  return gdt_r(dt_set_thread_grad_mode(previous, NULL));
}
static inline gdt_sres gdt_grad_fn_name(uintptr_t t) {
  gdt_sres r = {DT_OK, NULL, NULL};
  char* buf = (char*)malloc(128);
  size_t need = 0;
  if (!buf) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
  r.st = dt_tensor_grad_fn_name((const dt_tensor*)t, buf, 128, &need);
  if (r.st != DT_OK) { free(buf); r.msg = gdt_errmsg(r.st); return r; }
  r.s = buf;
  return r;
}

/* ---- modules */
static inline void gdt_module_release_quiet(uintptr_t m) { dt_module_release((dt_module*)m); }
static inline gdt_res gdt_module_release(uintptr_t m) { return gdt_r(dt_module_release((dt_module*)m)); }
static inline gdt_hres gdt_linear(int64_t in, int64_t out, int32_t bias, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_linear_new(in, out, bias, dt, d, &m);
  return gdt_hr(st, m); }
enum { GDT_M_RELU, GDT_M_SIGMOID, GDT_M_TANH, GDT_M_GELU, GDT_M_SOFTMAX, GDT_M_LOG_SOFTMAX, GDT_M_FLATTEN,
       GDT_M_DROPOUT, GDT_M_MSE, GDT_M_GELU_TANH, GDT_M_SILU, GDT_M_LEAKY_RELU, GDT_M_L1, GDT_M_SMOOTH_L1,
       GDT_M_HUBER, GDT_M_KL_DIV };
static inline gdt_hres gdt_simple_module(int kind, int64_t a, int64_t b, double p) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = DT_ERR_INVALID_ARGUMENT;
  switch (kind) {
    case GDT_M_RELU: st = dt_relu_new(&m); break;
    case GDT_M_SIGMOID: st = dt_sigmoid_new(&m); break;
    case GDT_M_TANH: st = dt_tanh_new(&m); break;
    case GDT_M_GELU: st = dt_gelu_new(&m); break;
    case GDT_M_SOFTMAX: st = dt_softmax_new(a, &m); break;
    case GDT_M_LOG_SOFTMAX: st = dt_log_softmax_new(a, &m); break;
    case GDT_M_FLATTEN: st = dt_flatten_new(a, b, &m); break;
    case GDT_M_DROPOUT: st = dt_dropout_new(p, &m); break;
    case GDT_M_MSE: st = dt_mse_loss_new((int32_t)a, &m); break;
    case GDT_M_GELU_TANH: st = dt_gelu_tanh_new(&m); break;
    case GDT_M_SILU: st = dt_silu_new(&m); break;
    case GDT_M_LEAKY_RELU: st = dt_leaky_relu_new(p, &m); break;
    /* the pointwise losses: a is the DT_REDUCTION_*, p beta / delta, b log_target */
    case GDT_M_L1: st = dt_l1_loss_new((int32_t)a, &m); break;
    case GDT_M_SMOOTH_L1: st = dt_smooth_l1_loss_new((int32_t)a, p, &m); break;
    case GDT_M_HUBER: st = dt_huber_loss_new((int32_t)a, p, &m); break;
    case GDT_M_KL_DIV: st = dt_kl_div_loss_new((int32_t)a, (int32_t)b, &m); break;
  }
  return gdt_hr(st, m);
}
/* Upsample: arguments as gdt_interpolate's (shim.h): mode a GDT_INTERP_*, size / scale Go
 * memory holding numbers only, NULL where not given, read (copied) during the call */
static inline gdt_hres gdt_upsample_new(const int64_t* size, const double* scale, size_t n, int mode,
                                        int32_t align_corners) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_upsample_new(size, scale, n, gdt_interp_mode_name(mode), align_corners, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_sequential(const uintptr_t* ms, size_t n) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_sequential_new((dt_module* const*)ms, n, &m);
  return gdt_hr(st, m); }
/* ids: Go memory holding n dt_device values (integers only), read during the call */
static inline gdt_hres gdt_data_parallel(uintptr_t mod, const dt_device* ids, size_t n, dt_device out) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_data_parallel_new((dt_module*)mod, ids, n, out, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_cross_entropy(uintptr_t w, int32_t red, int64_t ignore, double smoothing) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_cross_entropy_loss_new((const dt_tensor*)w, red, ignore, smoothing, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_nll(uintptr_t w, int32_t red, int64_t ignore) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_nll_loss_new((const dt_tensor*)w, red, ignore, &m);
  return gdt_hr(st, m); }
/* BCELoss and BCEWithLogitsLoss: w and pw are tensor handles, 0 for none (NULL) */
static inline gdt_hres gdt_bce(uintptr_t w, int32_t red) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_bce_loss_new((const dt_tensor*)w, red, &m);
  return gdt_hr(st, m); }
static inline gdt_hres gdt_bce_with_logits(uintptr_t w, uintptr_t pw, int32_t red) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_bce_with_logits_loss_new((const dt_tensor*)w, (const dt_tensor*)pw, red, &m);
  return gdt_hr(st, m); }
static inline gdt_tres gdt_forward(uintptr_t m, const uintptr_t* in, size_t n) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_module_forward((dt_module*)m, (const dt_tensor* const*)in, n, &o);
  return gdt_tr(st, o); }
static inline gdt_res gdt_module_to(uintptr_t m, dt_device d) {
  gdt_take_slot();
  return gdt_r(dt_module_to((dt_module*)m, d)); }
static inline gdt_res gdt_module_device(uintptr_t m, dt_device* out) {
  return gdt_r(dt_module_device((const dt_module*)m, out)); }
static inline gdt_res gdt_module_mode(uintptr_t m, int train) {
  return gdt_r(train ? dt_module_train((dt_module*)m) : dt_module_eval((dt_module*)m)); }
static inline gdt_res gdt_module_save(uintptr_t m, const char* path) {
  return gdt_r(dt_module_save((const dt_module*)m, path)); }
static inline gdt_res gdt_module_load(uintptr_t m, const char* path) {
  gdt_take_slot();
  return gdt_r(dt_module_load((dt_module*)m, path)); }
static inline gdt_nres gdt_named_count(uintptr_t m, int buffers) {
  gdt_nres r; r.n = 0;
  r.st = buffers ? dt_module_buffer_count((const dt_module*)m, &r.n) : dt_module_parameter_count((const dt_module*)m, &r.n);
  r.msg = gdt_errmsg(r.st);
  return r;
}
static inline gdt_pres gdt_named(uintptr_t m, size_t i, int buffers) {
  gdt_pres r = {DT_OK, NULL, 0, NULL};
  size_t need = 0;
  dt_tensor* t = NULL;
  r.st = buffers ? dt_module_buffer((const dt_module*)m, i, NULL, 0, &need, NULL)
                 : dt_module_parameter((const dt_module*)m, i, NULL, 0, &need, NULL);
  if (r.st != DT_OK) { r.msg = gdt_errmsg(r.st); return r; }
  r.name = (char*)malloc(need);
  if (!r.name) { r.st = DT_ERR_OUT_OF_MEMORY; r.msg = strdup("out of memory"); return r; }
  r.st = buffers ? dt_module_buffer((const dt_module*)m, i, r.name, need, &need, &t)
                 : dt_module_parameter((const dt_module*)m, i, r.name, need, &need, &t);
  if (r.st != DT_OK) { free(r.name); r.name = NULL; r.msg = gdt_errmsg(r.st); return r; }
  r.t = (uintptr_t)t;
  return r;
}

/* ---- optimizers */
static inline void gdt_optimizer_release_quiet(uintptr_t o) { dt_optimizer_release((dt_optimizer*)o); }
static inline gdt_res gdt_optimizer_release(uintptr_t o) { return gdt_r(dt_optimizer_release((dt_optimizer*)o)); }
static inline gdt_hres gdt_sgd(const uintptr_t* p, size_t n, double lr, double momentum, double dampening,
                               double wd, int32_t nesterov) {
  gdt_take_slot();
  dt_optimizer* o = NULL;
  dt_status st = dt_sgd_new((const dt_tensor* const*)p, n, lr, momentum, dampening, wd, nesterov, &o);
  return gdt_hr(st, o); }
static inline gdt_hres gdt_adam(const uintptr_t* p, size_t n, double lr, double b1, double b2, double eps,
                                double wd, int32_t decoupled) {
  gdt_take_slot();
  dt_optimizer* o = NULL;
  dt_status st = dt_adam_new((const dt_tensor* const*)p, n, lr, b1, b2, eps, wd, decoupled, &o);
  return gdt_hr(st, o); }
static inline gdt_hres gdt_rmsprop(const uintptr_t* p, size_t n, double lr, double alpha, double eps, double wd,
                                   double momentum, int32_t centered) {
  gdt_take_slot();
  dt_optimizer* o = NULL;
  dt_status st = dt_rmsprop_new((const dt_tensor* const*)p, n, lr, alpha, eps, wd, momentum, centered, &o);
  return gdt_hr(st, o); }
static inline gdt_hres gdt_adagrad(const uintptr_t* p, size_t n, double lr, double lr_decay, double wd,
                                   double initial_accumulator_value, double eps) {
  gdt_take_slot();
  dt_optimizer* o = NULL;
  dt_status st = dt_adagrad_new((const dt_tensor* const*)p, n, lr, lr_decay, wd, initial_accumulator_value, eps, &o);
  return gdt_hr(st, o); }
static inline gdt_res gdt_optimizer_step(uintptr_t o) {
  gdt_take_slot();
  return gdt_r(dt_optimizer_step((dt_optimizer*)o)); }
static inline gdt_res gdt_optimizer_zero_grad(uintptr_t o) { return gdt_r(dt_optimizer_zero_grad((dt_optimizer*)o)); }
/* out: Go memory holding a double, written during the call */
static inline gdt_res gdt_optimizer_lr(uintptr_t o, double* out) {
  return gdt_r(dt_optimizer_lr((const dt_optimizer*)o, out)); }
static inline gdt_res gdt_optimizer_set_lr(uintptr_t o, double lr) {
  return gdt_r(dt_optimizer_set_lr((dt_optimizer*)o, lr)); }
/* name: a C string the caller frees after the call; out: Go memory holding a double,
 * written during the call */
static inline gdt_res gdt_optimizer_option(uintptr_t o, const char* name, double* out) {
  return gdt_r(dt_optimizer_option((const dt_optimizer*)o, name, out)); }
static inline gdt_res gdt_optimizer_set_option(uintptr_t o, const char* name, double value) {
  return gdt_r(dt_optimizer_set_option((dt_optimizer*)o, name, value)); }
/* a NEW state dict (copies of the state), as gdt_module_state_dict's */
static inline gdt_hres gdt_optimizer_state_dict(uintptr_t o) {
  gdt_take_slot();
  dt_state_dict* sd = NULL;
  dt_status st = dt_optimizer_state_dict((const dt_optimizer*)o, &sd);
  return gdt_hr(st, sd); }
static inline gdt_res gdt_optimizer_load_state_dict(uintptr_t o, uintptr_t sd) {
  gdt_take_slot();
  return gdt_r(dt_optimizer_load_state_dict((dt_optimizer*)o, (const dt_state_dict*)sd)); }

/* ---- gradient clipping: p is Go memory holding n tensor handles (integers only), read
 * during the call (NULL when n is 0) */
static inline gdt_tres gdt_clip_grad_norm(const uintptr_t* p, size_t n, double max_norm, double norm_type,
                                          int32_t error_if_nonfinite) {
  gdt_take_slot();
  dt_tensor* total = NULL;
  dt_status st = dt_clip_grad_norm_((const dt_tensor* const*)p, n, max_norm, norm_type, error_if_nonfinite, &total);
  return gdt_tr(st, total); }
static inline gdt_res gdt_clip_grad_value(const uintptr_t* p, size_t n, double clip_value) {
  return gdt_r(dt_clip_grad_value_((const dt_tensor* const*)p, n, clip_value)); }

/* ---- convolution, transposed convolution and 2-d pooling: pairs passed as values, NULL
 * where the Go side asks for the default (has_* == 0) */
static inline gdt_tres gdt_conv2d(uintptr_t in, uintptr_t w, uintptr_t b, int64_t sh, int64_t sw, int64_t ph,
                                  int64_t pw, int64_t dh, int64_t dw, int64_t groups) {
  gdt_take_slot();
  int64_t s[2] = {sh, sw}, p[2] = {ph, pw}, d[2] = {dh, dw};
  dt_tensor* o = NULL;
  dt_status st = dt_conv2d((const dt_tensor*)in, (const dt_tensor*)w, (const dt_tensor*)b, s, p, d, groups, &o);
  return gdt_tr(st, o); }
static inline gdt_hres gdt_conv2d_new(int64_t in, int64_t out, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                                      int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t groups, int32_t bias,
                                      dt_dtype dt, dt_device dev) {
  gdt_take_slot();
  int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, p[2] = {ph, pw}, d[2] = {dh, dw};
  dt_module* m = NULL;
  dt_status st = dt_conv2d_new(in, out, k, s, p, d, groups, bias, dt, dev, &m);
  return gdt_hr(st, m); }
static inline gdt_tres gdt_conv1d(uintptr_t in, uintptr_t w, uintptr_t b, int64_t stride, int64_t padding,
                                  int64_t dilation, int64_t groups) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_conv1d((const dt_tensor*)in, (const dt_tensor*)w, (const dt_tensor*)b, stride, padding, dilation,
                           groups, &o);
  return gdt_tr(st, o); }
static inline gdt_hres gdt_conv1d_new(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding,
                                      int64_t dilation, int64_t groups, int32_t bias, dt_dtype dt, dt_device dev) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_conv1d_new(in, out, k, stride, padding, dilation, groups, bias, dt, dev, &m);
  return gdt_hr(st, m); }
static inline gdt_tres gdt_conv_transpose2d(uintptr_t in, uintptr_t w, uintptr_t b, int64_t sh, int64_t sw,
                                            int64_t ph, int64_t pw, int64_t oph, int64_t opw, int64_t groups,
                                            int64_t dh, int64_t dw) {
  gdt_take_slot();
  int64_t s[2] = {sh, sw}, p[2] = {ph, pw}, op[2] = {oph, opw}, d[2] = {dh, dw};
  dt_tensor* o = NULL;
  dt_status st = dt_conv_transpose2d((const dt_tensor*)in, (const dt_tensor*)w, (const dt_tensor*)b, s, p, op, groups,
                                     d, &o);
  return gdt_tr(st, o); }
static inline gdt_hres gdt_conv_transpose2d_new(int64_t in, int64_t out, int64_t kh, int64_t kw, int64_t sh,
                                                int64_t sw, int64_t ph, int64_t pw, int64_t oph, int64_t opw,
                                                int64_t groups, int32_t bias, int64_t dh, int64_t dw, dt_dtype dt,
                                                dt_device dev) {
  gdt_take_slot();
  int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, p[2] = {ph, pw}, op[2] = {oph, opw}, d[2] = {dh, dw};
  dt_module* m = NULL;
  dt_status st = dt_conv_transpose2d_new(in, out, k, s, p, op, groups, bias, d, dt, dev, &m);
  return gdt_hr(st, m); }
/* max: extra = 1 then dh, dw are the dilation; avg: extra = 0 and dh is count_include_pad.
 * has_stride == 0: NULL stride (the kernel size). */
static inline gdt_tres gdt_pool2d(int max, uintptr_t in, int64_t kh, int64_t kw, int has_stride, int64_t sh,
                                  int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t include_pad,
                                  int32_t ceil_mode) {
  gdt_take_slot();
  int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, p[2] = {ph, pw}, d[2] = {dh, dw};
  dt_tensor* o = NULL;
  dt_status st = max ? dt_max_pool2d((const dt_tensor*)in, k, has_stride ? s : NULL, p, d, ceil_mode, &o)
                     : dt_avg_pool2d((const dt_tensor*)in, k, has_stride ? s : NULL, p, ceil_mode, include_pad, &o);
  return gdt_tr(st, o); }
static inline gdt_hres gdt_pool2d_new(int max, int64_t kh, int64_t kw, int has_stride, int64_t sh, int64_t sw,
                                      int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t include_pad,
                                      int32_t ceil_mode) {
  gdt_take_slot();
  int64_t k[2] = {kh, kw}, s[2] = {sh, sw}, p[2] = {ph, pw}, d[2] = {dh, dw};
  dt_module* m = NULL;
  dt_status st = max ? dt_max_pool2d_new(k, has_stride ? s : NULL, p, d, ceil_mode, &m)
                     : dt_avg_pool2d_new(k, has_stride ? s : NULL, p, ceil_mode, include_pad, &m);
  return gdt_hr(st, m); }
static inline gdt_tres gdt_adaptive_avg_pool2d(uintptr_t in, int64_t oh, int64_t ow) {
  gdt_take_slot();
  int64_t sz[2] = {oh, ow};
  dt_tensor* o = NULL;
  dt_status st = dt_adaptive_avg_pool2d((const dt_tensor*)in, sz, &o);
  return gdt_tr(st, o); }
static inline gdt_hres gdt_adaptive_avg_pool2d_new(int64_t oh, int64_t ow) {
  gdt_take_slot();
  int64_t sz[2] = {oh, ow};
  dt_module* m = NULL;
  dt_status st = dt_adaptive_avg_pool2d_new(sz, &m);
  return gdt_hr(st, m); }

#endif
