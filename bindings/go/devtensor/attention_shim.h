/* attention_shim.h: the cgo helpers of attention (attention.go), with the same rule as
 * shim.h: one devtensor call per helper, its error message fetched in the same cgo call;
 * each can allocate, so each takes the release slot first (gdt_take_slot). Handles cross
 * into Go as uintptr_t (C memory; no cgo pointer check); 0 is NULL (an absent key,
 * value, mask or norm). Handle arrays passed in are Go memory holding integers only, read
 * during the call. */
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

/* status + message + two new tensor references: the attention output and its weights */
typedef struct { dt_status st; char* msg; uintptr_t out; uintptr_t weights; } gdt_owres;
/* key, value and the masks: 0 for NULL (PyTorch's None) */
static inline gdt_owres gdt_multihead_attention_forward(uintptr_t m, uintptr_t q, uintptr_t k, uintptr_t v,
                                                        uintptr_t key_padding_mask, uintptr_t attn_mask,
                                                        int32_t average) {
  gdt_take_slot();
  dt_tensor* o = NULL;
  dt_tensor* w = NULL;
  dt_status st = dt_multihead_attention_forward((dt_module*)m, (const dt_tensor*)q, (const dt_tensor*)k,
                                                (const dt_tensor*)v, (const dt_tensor*)key_padding_mask,
                                                (const dt_tensor*)attn_mask, average, &o, &w);
  gdt_owres r;
  r.st = st;
  r.msg = gdt_errmsg(st);
  r.out = st == DT_OK ? (uintptr_t)o : 0;
  r.weights = st == DT_OK ? (uintptr_t)w : 0;
  return r;
}

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
