/* The fast path's trampolines: see fastcall.h. Defining GDT_FASTCALL_TU makes the helpers
 * of shim.h take only the small release slot (shim.h, gdt_take_slot). */
#define GDT_FASTCALL_TU 1
#include "fastcall.h"

/* A bound on a binary op's result's element count, for the Go side's record: na*nb
 * bounds the broadcast of both (each result dim is the larger of two dims that are equal
 * or 1, and a 0 makes the result empty), exact when either operand has one element. Only
 * a bound above a small tensor's size asks the library for the exact count (a query costs
 * about as much as the cgo hand-over this path saves). */
static uint32_t result_numel(const gdt_fast_args* x, uintptr_t o) {
  uint64_t bound = (uint64_t)x->na * x->nb;
  size_t n = 0;
  if (bound <= GDT_FAST_MAX_NUMEL) return (uint32_t)bound;
  if (dt_tensor_numel((const dt_tensor*)o, &n) != DT_OK || n > UINT32_MAX) return UINT32_MAX;
  return (uint32_t)n;
}

void gdt_fast_binary(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_binary(x->code, x->a, x->b);
  if (x->r.st == DT_OK) x->nout = result_numel(x, x->r.t);
}
void gdt_fast_scalar(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_scalar(x->code, x->a, x->v);
  x->nout = x->na;
}
void gdt_fast_unary(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_unary(x->code, x->a);
  x->nout = x->na;
}
void gdt_fast_inplace(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  gdt_res r = gdt_op_inplace(x->code, x->a, x->b);
  x->r.st = r.st;
  x->r.msg = r.msg;
  x->r.t = 0;
}
void gdt_fast_inplace_scalar(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  gdt_res r = gdt_op_inplace_scalar(x->code, x->a, x->v);
  x->r.st = r.st;
  x->r.msg = r.msg;
  x->r.t = 0;
}
void gdt_fast_reduce(void* args) {
  gdt_fast_reduce_args* x = (gdt_fast_reduce_args*)args;
  x->r = gdt_op_reduce(x->code, x->a, x->dims, x->ndims, x->keep);
  x->nout = x->na; /* a reduction has at most its operand's elements */
}
void gdt_fast_release(void* args) { gdt_release_counted(((gdt_fast_args*)args)->a); }
void gdt_fast_noop(void* args) { (void)args; }
