/* The fast path's trampolines (fastcall.go): the op-table helpers of ops_table.h called
 * through runtime.asmcgocall, without cgo's hand-over to the Go scheduler. Each takes
 * ONE pointer to its arguments on the calling goroutine's stack (which cannot move
 * during the call), reads its inputs and writes its outputs there, and never calls back
 * into Go. The Go side calls them only for small CPU tensors outside autograd (see
 * fastcall.go for the rule and why), so every call is short. */
#ifndef DEVTENSOR_GO_FASTCALL_H
#define DEVTENSOR_GO_FASTCALL_H
#include <stdint.h>
#include "shim.h"

typedef struct {
  uintptr_t a, b; /* in: the operands' handles (b: binary and in-place ops only) */
  double v;       /* in: the scalar of the *_scalar ops */
  int32_t code;   /* in: the op code (ops_table.h) */
  gdt_tres r;     /* out: status, message, result handle (0 for in-place ops) */
} gdt_fast_args;

/* A reduction's arguments (gdt_op_reduce): dims is Go memory holding no Go pointer, read
 * during the call only. */
typedef struct {
  uintptr_t a;         /* in: the operand's handle */
  const int64_t* dims; /* in: the dims to reduce (NULL with ndims 0: every dim) */
  size_t ndims;
  int32_t code, keep; /* in: the op code, keepdim */
  gdt_tres r;         /* out */
} gdt_fast_reduce_args;

/* A constructor's arguments: shape (and data) are Go memory holding no Go pointer, read
 * during the call only. kind: GDT_C_EMPTY, GDT_C_ZEROS or GDT_C_ONES (gdt_construct), or
 * one of the two below. Rand and Randn stay cgo calls: they take the device's generator,
 * which a large draw in another thread may hold for long. */
enum { GDT_FAST_MAKE_FULL = -1, GDT_FAST_MAKE_FROM_DATA = -2 };
typedef struct {
  const int64_t* shape; /* in */
  size_t ndim;
  const void* data; /* in: GDT_FAST_MAKE_FROM_DATA's elements, nbytes of them */
  size_t nbytes;
  double v;         /* in: GDT_FAST_MAKE_FULL's value */
  int32_t kind;     /* in */
  dt_dtype dtype;   /* in */
  dt_device device; /* in: a CPU device */
  gdt_tres r;       /* out */
} gdt_fast_make_args;

/* Reading a small tensor's elements: Item's value, or a copy of all of them into dst (Go
 * memory, n bytes) when the tensor's dtype is want. got is its dtype either way; when it
 * is not want nothing is copied, and the status is DT_OK (the Go side words the error). */
typedef struct {
  uintptr_t a;   /* in: the tensor's handle */
  void* dst;     /* in: gdt_fast_to_host's destination */
  size_t n;      /* in: its size in bytes */
  int32_t want;  /* in: the dtype the destination holds */
  int32_t got;   /* out: the tensor's dtype (gdt_fast_to_host) */
  double v;      /* out: the value (gdt_fast_item) */
  gdt_res r;     /* out */
} gdt_fast_read_args;

void gdt_fast_make(void* args);
void gdt_fast_item(void* args);
void gdt_fast_to_host(void* args);
void gdt_fast_binary(void* args);
void gdt_fast_scalar(void* args);
void gdt_fast_unary(void* args);
void gdt_fast_inplace(void* args);
void gdt_fast_inplace_scalar(void* args);
void gdt_fast_reduce(void* args);
/* Releases args->a (a small tensor's handle, counted as gdt_release_counted does). */
void gdt_fast_release(void* args);
/* Does nothing: the floor under a fast call, for the benchmarks. */
void gdt_fast_noop(void* args);
/* fn(args) as an ordinary cgo call, for builds without the fast path (fastcall_off.go). */
static inline void gdt_fast_call(void* fn, void* args) { ((void (*)(void*))fn)(args); }

#endif
