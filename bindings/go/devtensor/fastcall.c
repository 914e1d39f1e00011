/* The fast path's trampolines: see fastcall.h. Defining GDT_FASTCALL_TU makes the helpers
 * of shim.h leave the release slot alone (shim.h, gdt_take_slot). */
#define GDT_FASTCALL_TU 1
#include "fastcall.h"

void gdt_fast_binary(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_binary(x->code, x->a, x->b);
}
void gdt_fast_scalar(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_scalar(x->code, x->a, x->v);
}
void gdt_fast_unary(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = gdt_op_unary(x->code, x->a);
}
/* An in-place op's status and message, with no result tensor. */
static gdt_tres no_tensor(gdt_res r) {
  gdt_tres t = {r.st, r.msg, 0};
  return t;
}
void gdt_fast_inplace(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = no_tensor(gdt_op_inplace(x->code, x->a, x->b));
}
void gdt_fast_inplace_scalar(void* args) {
  gdt_fast_args* x = (gdt_fast_args*)args;
  x->r = no_tensor(gdt_op_inplace_scalar(x->code, x->a, x->v));
}
void gdt_fast_reduce(void* args) {
  gdt_fast_reduce_args* x = (gdt_fast_reduce_args*)args;
  x->r = gdt_op_reduce(x->code, x->a, x->dims, x->ndims, x->keep);
}
void gdt_fast_make(void* args) {
  gdt_fast_make_args* x = (gdt_fast_make_args*)args;
  switch (x->kind) {
    case GDT_FAST_MAKE_FULL: x->r = gdt_full(x->shape, x->ndim, x->v, x->dtype, x->device); break;
    case GDT_FAST_MAKE_FROM_DATA:
      x->r = gdt_from_data(x->data, x->nbytes, x->shape, x->ndim, x->dtype, x->device);
      break;
    default: x->r = gdt_construct(x->kind, x->shape, x->ndim, x->dtype, x->device);
  }
}
void gdt_fast_item(void* args) {
  gdt_fast_read_args* x = (gdt_fast_read_args*)args;
  x->r = gdt_item(x->a, &x->v);
}
void gdt_fast_to_host(void* args) {
  gdt_fast_read_args* x = (gdt_fast_read_args*)args;
  dt_dtype got = 0;
  x->r = gdt_dtype(x->a, &got);
  x->got = (int32_t)got;
  if (x->r.st == DT_OK && x->got == x->want) x->r = gdt_copy_to_host(x->a, x->dst, x->n);
}
void gdt_fast_release(void* args) { gdt_release_counted(((gdt_fast_args*)args)->a); }
void gdt_fast_noop(void* args) { (void)args; }
