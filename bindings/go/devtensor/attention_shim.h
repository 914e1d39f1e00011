/* attention_shim.h: the cgo helpers of attention (attention.go), with the same rule as
 * shim.h: one devtensor call per helper, its error message fetched in the same cgo call;
 * each can allocate, so each takes the release slot first (gdt_take_slot). Handles cross
 * into Go as uintptr_t (C memory; no cgo pointer check); 0 is NULL (an absent mask or
 * norm). Handle arrays passed in are Go memory holding integers only, read during the
 * call. */
#ifndef DEVTENSOR_GO_ATTENTION_SHIM_H
#define DEVTENSOR_GO_ATTENTION_SHIM_H
#include "nn_shim.h" /* gdt_hres, gdt_hr */

static inline gdt_tres gdt_scaled_dot_product_attention(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t mask,
                                                        int32_t is_causal) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_status st = dt_scaled_dot_product_attention((const dt_tensor*)q, (const dt_tensor*)k, (const dt_tensor*)v,
                                                 (const dt_tensor*)mask, is_causal, &o);
  return gdt_tr(st, o); }

static inline gdt_hres gdt_multihead_attention_new(int64_t embed_dim, int64_t num_heads, double dropout, int32_t bias,
                                                   int32_t batch_first, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_multihead_attention_new(embed_dim, num_heads, dropout, bias, batch_first, dt, d, &m);
  return gdt_hr(st, m); }

/* gelu: 1 for "gelu", 0 for "relu" (the names stay on the C side: no C.CString). */
static inline gdt_hres gdt_transformer_encoder_layer_new(int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                                         double dropout, int gelu, double layer_norm_eps,
                                                         int32_t batch_first, int32_t norm_first, dt_dtype dt,
                                                         dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_transformer_encoder_layer_new(d_model, nhead, dim_feedforward, dropout, gelu ? "gelu" : "relu",
                                                  layer_norm_eps, batch_first, norm_first, dt, d, &m);
  return gdt_hr(st, m); }

static inline gdt_hres gdt_transformer_encoder_new(const uintptr_t* layers, size_t n, uintptr_t norm) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_transformer_encoder_new((dt_module* const*)layers, n, (dt_module*)norm, &m);
  return gdt_hr(st, m); }

#endif
