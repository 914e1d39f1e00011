/* The boundary between the core (libdevtensor.so) and a backend plugin: the CUDA backend
 * (libdevtensor-cuda.so) and any other (a ROCm or Metal backend, the test backend of
 * tests/plugin). Plain C types only: no C++ object, exception or allocation crosses it,
 * so the two libraries share nothing but this table and plain memory.
 *
 * The core dlopens a plugin and calls its one exported symbol, DTP_ENTRY_SYMBOL, with the
 * ABI version it speaks; the plugin returns its table (or NULL if it cannot speak that
 * version). The core checks abi_version and devtensor_version (a plugin is built from the
 * same sources as the core and must come from the same release), then registers the
 * table's device type under its name (core/registry.h): "cuda" devices are cuda:0,
 * cuda:1, ...
 *
 * Growth without breaking: ops are codes (DTP_OP_*, from the op table core/op_table.h),
 * run through one entry point with one argument record, so a new op family adds codes,
 * not slots; a plugin says which codes it runs (supports_op) and the core reports the
 * others as DT_ERR_NOT_SUPPORTED. Slots marked OPTIONAL may be NULL, and slots added at
 * the end of dtp_backend in later releases are absent when struct_size says so.
 *
 * Conventions for every function returning int32_t: DT_OK (0) or a dt_status code, with
 * a sentence in err->message (the op name first, then the backend library's message).
 * Tensors are described by dtp_tensor; `data` is the address of element 0 and strides
 * are in elements. A dtp_tensor with device == DTP_HOST lies in host memory (pageable or
 * pinned). Device ordinals are the backend's logical ones. Thread-safe. */
#ifndef DEVTENSOR_PLUGIN_ABI_H
#define DEVTENSOR_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "core/op_table.h"
#include "devtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DTP_ABI_VERSION 2
#define DTP_ENTRY_SYMBOL "devtensor_backend_entry"
#define DTP_HOST (-1)
#define DTP_MESSAGE_CAP 1024
#define DTP_MAX_OPERANDS 6

typedef struct dtp_error {
  int32_t code;
  char message[DTP_MESSAGE_CAP];
} dtp_error;

typedef struct dtp_tensor {
  void* data;
  int32_t dtype;   /* dt_dtype code */
  int32_t device;  /* the backend's ordinal, or DTP_HOST */
  int32_t ndim;
  int32_t pinned;  /* host memory that is page-locked */
  int64_t numel;
  int64_t sizes[DT_MAX_DIMS];
  int64_t strides[DT_MAX_DIMS];
} dtp_tensor;

/* What the plugin found when it looked for its driver and devices. state: the DT_CUDA_*
 * codes, whose reasons apply to any backend (available, no driver, driver too old, no
 * device, all hidden). */
typedef struct dtp_probe {
  int32_t state;
  int32_t device_count; /* usable devices (0 unless state == DT_CUDA_AVAILABLE) */
  int32_t driver_version;
  int32_t runtime_version;
  char reason[512];     /* a sentence for users */
} dtp_probe;

typedef struct dtp_mem_stats {
  uint64_t allocated_bytes, reserved_bytes, peak_allocated_bytes, allocation_count,
      system_allocation_count;
} dtp_mem_stats;

/* Op codes: every row of the op table (core/op_table.h), DTP_OP_<Name> = its code. */
#define DTP_X_OP_CODE(Name, code, ...) DTP_OP_##Name = code,
enum dtp_op_code {
  DT_KERNEL_OPS(DTP_X_OP_CODE)
  DT_UNARY_OPS(DTP_X_OP_CODE)
  DT_BINARY_OPS(DTP_X_OP_CODE)
  DT_REDUCE_OPS(DTP_X_OP_CODE)
};
#undef DTP_X_OP_CODE

/* The arguments of one op. t[0] is the output (or the tensor written in place), the
 * inputs follow; f and i carry the op's numbers. Per op (the front end in src/ops
 * checked every device, shape and dtype; a backend only computes):
 *   unary codes            t = {out, a}                out = f(a)
 *   binary codes           t = {out, a, b}             out = f(a, b), a and b broadcast to out
 *   reduce codes           t = {out, in}               i[0] = mask of reduced dims of in
 *   DTP_OP_Fill            t = {dst}                   f[0] = value
 *   DTP_OP_Arange          t = {dst}                   f[0] = start, f[1] = step
 *   DTP_OP_Random          t = {dst}                   i[0] = 0 uniform / 1 normal, i[1] = seed,
 *                                                      i[2] = offset (Philox, uint64 bits)
 *   DTP_OP_Where           t = {out, cond, a, b}
 *   DTP_OP_Softmax         t = {out, in}               i[0] = dim, i[1] = 1 for log-softmax
 *   DTP_OP_Cumsum          t = {out, in}, contiguous,  i[0] = dim, i[1] = 1 to sum from the end
 *                          one dtype (not bool)        (out[k] = in[k] + ... + in[n-1])
 *   DTP_OP_Sort            t = {values, indices, in},  i[0] = 1 for descending; each row of
 *                          contiguous: in [rows, n],   the last dim sorted, stable (ties keep
 *                          values and indices (int64)  their order), NaN largest, -0.0 == 0.0;
 *                          [rows, k], 0 <= k <= n      the first k kept (topk), indices[j] =
 *                                                      the row position of values[j]
 *   DTP_OP_Matmul          t = {out, a, b}, all 3-d    i[0] = 1 to allow TF32
 *   DTP_OP_IndexSelect     t = {out, in, index}        i[0] = dim
 *   DTP_OP_Gather          t = {out, in, index}        i[0] = dim
 *   DTP_OP_ScatterAdd      t = {self, index, src}      i[0] = dim; self[.. index ..] += src
 *   DTP_OP_IndexAdd        t = {self, index, src}      i[0] = dim; self.index_add_(dim, index, src)
 *   DTP_OP_SgdStep         t = {param, grad[, buf]}    f[0] = lr, f[1] = momentum; i[0] = 1 when buf is
 *                                                      new, i[1] = 1 for Nesterov. In place, element by
 *                                                      element, rounding each operation to the dtype as
 *                                                      the unfused ops would: buf = new ? grad : buf *
 *                                                      momentum + grad; d = Nesterov ? grad + buf *
 *                                                      momentum : buf (no buf: d = grad); param -= d * lr.
 *                                                      float32 or float64, all contiguous, one shape.
 *   DTP_OP_BatchNormEval   t = {out, x, mean, var[, weight][, bias]}
 *                                                      f[0] = eps; i[0] = 1 with weight, i[1] = 1 with bias
 *                                                      (each present one follows var in that order). x and
 *                                                      out contiguous [N, C, ...], the others contiguous
 *                                                      [C], float32 or float64. Per channel c, each operation
 *                                                      rounded to the dtype: rstd = 1 / sqrt(var + eps),
 *                                                      scale = weight * rstd (rstd without weight), shift =
 *                                                      bias - mean * scale (-(mean * scale) without bias);
 *                                                      out = x * scale + shift, not contracted to an FMA.
 *   DTP_OP_ReluBackward    t = {gx, o, g}              gx = o > 0 ? g : 0 elementwise (o: ReLU's output;
 *                                                      NaN gives 0), all contiguous, one shape, float32
 *                                                      or float64.
 *   DTP_OP_Addmm           t = {out, a, b, bias}       i[0] = 1 to allow TF32. out = a b + bias, bias
 *                                                      added to every row: out, a, b as DTP_OP_Matmul's
 *                                                      (3-d, any strides that Matmul takes), bias
 *                                                      contiguous [N] (out's last dim), all float32 or
 *                                                      float64. Each element rounded as the product,
 *                                                      then the bias added and rounded again, as
 *                                                      Matmul followed by an add (cuBLASLt's bias
 *                                                      epilogue does exactly this in float32 and
 *                                                      float64).
 *   DTP_OP_CrossEntropy    t = {out, lse, count, x, target}   i[0] = ignore_index, i[1] = reduction (0 none,
 *                                                      1 mean, 2 sum). x contiguous [N, C] float32 or
 *                                                      float64; target contiguous int64 [N], each in
 *                                                      [0, C) or ignore_index; lse [N] and count (0-d) of
 *                                                      x's dtype. Per row n: lse[n] = logsumexp(x[n, :]),
 *                                                      loss[n] = lse[n] - x[n, target[n]] (0 where target[n]
 *                                                      is ignore_index); count = the rows not ignored. out:
 *                                                      loss [N] (none), their sum (0-d, sum) or the sum
 *                                                      over count (0-d, mean). Sums in a fixed order.
 *   DTP_OP_CrossEntropyBackward  t = {gx, g, x, lse, count, target}   i[0], i[1] as the forward's. gx
 *                                                      [N, C] contiguous: gx[n, c] = s * (exp(x[n, c] -
 *                                                      lse[n]) - (c == target[n])) with s = g[n] (none), g
 *                                                      (sum) or g / count (mean); 0 on ignored rows.
 *   DTP_OP_SgdStepMulti    t = {param0, table}         f[0] = lr, f[1] = momentum, i[0] = 1 for Nesterov.
 *                                                      DTP_OP_SgdStep for each row of table, a host int64
 *                                                      contiguous [n, 5]: the addresses of a parameter, its
 *                                                      gradient and its momentum buffer (0: none), its
 *                                                      element count, 1 when the buffer is new. Every
 *                                                      tensor is contiguous, of param0's dtype (float32 or
 *                                                      float64) and device, and distinct; param0 is row 0's
 *                                                      parameter. Rows may run in any order or together.
 *   DTP_OP_AdaptiveStep    t = {param, grad, scalars,  i[0] = kind (0 Adam, 1 RMSprop, 2 Adagrad), i[1] =
 *                               state...}              flags: 1 an L2 weight decay (g = grad + param * wd),
 *                                                      2 AdamW's decoupled decay, 4 RMSprop centered, 8
 *                                                      RMSprop momentum. scalars: a host float64 contiguous
 *                                                      [k] of the step's constants, each converted to the
 *                                                      dtype before use; state, updated in place: Adam (m,
 *                                                      v), RMSprop (square_avg[, buf][, grad_avg]) in
 *                                                      that order, Adagrad (sum). Element by element, each
 *                                                      operation rounded to the dtype as the unfused ops
 *                                                      would (no FMA), with g as above:
 *                                                      Adam [wd, b1, 1-b1, b2, 1-b2, sqrt(bc2), eps,
 *                                                      lr/bc1, 1-lr*wd]: m = m*b1 + g*(1-b1); v = v*b2 +
 *                                                      (g*g)*(1-b2); param = (decoupled ? param*(1-lr*wd) :
 *                                                      param) - (m / (sqrt(v) / sqrt(bc2) + eps)) * (lr/bc1).
 *                                                      RMSprop [wd, alpha, 1-alpha, eps, momentum, lr]: sq =
 *                                                      sq*alpha + (g*g)*(1-alpha); centered: ga = ga*alpha +
 *                                                      g*(1-alpha), avg = sqrt(sq - ga*ga), else avg =
 *                                                      sqrt(sq); avg = avg + eps; momentum: buf = buf*momentum
 *                                                      + g/avg, param -= buf*lr, else param -= (g/avg)*lr.
 *                                                      Adagrad [wd, eps, clr]: sum = sum + g*g; param -= (g /
 *                                                      (sqrt(sum) + eps)) * clr. float32 or float64, all
 *                                                      contiguous, one shape, distinct.
 * Index tensors are int64 and in range. stream: the backend's stream to queue the op on
 * (NULL: the device's default stream).
 *
 * Library passes (DTP_HOOK_*): the optional hooks of core/backend.h (a convolution
 * library, a pooling kernel), run through the same slot and announced by supports_op, so a
 * plugin without the library (or whose library fails to load) simply says no and the core
 * computes the pass itself (im2col and matmul; pooling over a windows view). Operands are contiguous NCHW of one device, the output
 * freshly allocated; the geometry is packed, each field under 2^16 (the core offers only
 * such passes): i[0] = stride_h | stride_w << 16 | dilation_h << 32 | dilation_w << 48,
 * i[1] = pad_top | pad_left << 16 | pad_bottom << 32 | pad_right << 48, i[2] = groups,
 * i[3] = 1 to allow TF32 (dt_set_allow_tf32). DT_ERR_NOT_SUPPORTED from run, with nothing
 * written, also hands the pass back to the core.
 *   DTP_HOOK_CONV2D_FORWARD       t = {out, x, w[, bias]}   out = conv(x, w) + bias
 *   DTP_HOOK_CONV2D_INPUT_GRAD    t = {gx, gout, w}
 *   DTP_HOOK_CONV2D_WEIGHT_GRAD   t = {gw, x, gout}
 *   DTP_HOOK_MAX_POOL2D_FORWARD   t = {out, indices, x}     Backend::max_pool2d_forward: out and
 *                                 indices (int64) [N, C, OH, OW], each window's largest element
 *                                 of x and its h * W + w in the plane (a NaN takes over, equal
 *                                 values keep the first; padding never counts). Its geometry is
 *                                 packed by dtp_pool_geometry_pack, not the convolutions'.
 *   DTP_HOOK_ATTENTION_FORWARD    t = {out, q, k, v}        Backend::attention_forward: fused
 *                                 scaled dot-product attention without autograd, q [N, L, E],
 *                                 k [N, S, E], v [N, S, Ev], out [N, L, Ev], contiguous, one
 *                                 floating dtype, every size positive: out = softmax(q k^T *
 *                                 f[0] + mask) v per n, the mask -inf above the diagonal when
 *                                 i[0] = 1 (query l sees keys 0..l, as is_causal), none when 0. */
enum dtp_hook_code {
  DTP_HOOK_CONV2D_FORWARD = 1001,
  DTP_HOOK_CONV2D_INPUT_GRAD = 1002,
  DTP_HOOK_CONV2D_WEIGHT_GRAD = 1003,
  DTP_HOOK_MAX_POOL2D_FORWARD = 1004,
  DTP_HOOK_ATTENTION_FORWARD = 1005
};

/* The geometry of a DTP_HOOK_MAX_POOL2D_FORWARD pass: (height, width) pairs, each under
 * 2^16, packed as i[0] = stride_h | stride_w << 16 | dilation_h << 32 | dilation_w << 48,
 * i[1] = pad_top | pad_left << 16, i[2] = kernel_h | kernel_w << 16. The output's size is
 * the tensor's (ceil_mode's overhang needs no field). dtp_pool_geometry_pack returns 0
 * (and packs nothing) when a field does not fit or a kernel, stride or dilation is not
 * positive. */
typedef struct dtp_pool_geometry {
  int64_t kernel[2], stride[2], dilation[2], pad_begin[2];
} dtp_pool_geometry;

static inline int dtp_pool_geometry_pack(const dtp_pool_geometry* g, int64_t i[3]) {
  const int64_t f[8] = {g->stride[0], g->stride[1], g->dilation[0],  g->dilation[1],
                        g->kernel[0], g->kernel[1], g->pad_begin[0], g->pad_begin[1]};
  for (int k = 0; k < 8; ++k)
    if (f[k] < (k < 6 ? 1 : 0) || f[k] >= ((int64_t)1 << 16)) return 0;
  i[0] = f[0] | f[1] << 16 | f[2] << 32 | f[3] << 48;
  i[1] = f[6] | f[7] << 16;
  i[2] = f[4] | f[5] << 16;
  return 1;
}

static inline dtp_pool_geometry dtp_pool_geometry_unpack(const int64_t i[3]) {
  dtp_pool_geometry g;
  for (int k = 0; k < 2; ++k) {
    g.stride[k] = (i[0] >> (16 * k)) & 0xFFFF;
    g.dilation[k] = (i[0] >> (32 + 16 * k)) & 0xFFFF;
    g.pad_begin[k] = (i[1] >> (16 * k)) & 0xFFFF;
    g.kernel[k] = (i[2] >> (16 * k)) & 0xFFFF;
  }
  return g;
}

/* The geometry of a DTP_HOOK_CONV2D_* pass, as the core packs it into i[0..2]: (height,
 * width) pairs. dtp_conv_geometry_pack returns 0 (and packs nothing) when a field does
 * not fit its 16 bits or groups is not positive. */
typedef struct dtp_conv_geometry {
  int64_t stride[2], dilation[2], pad_begin[2], pad_end[2], groups;
} dtp_conv_geometry;

static inline int dtp_conv_geometry_pack(const dtp_conv_geometry* g, int64_t i[3]) {
  const int64_t f[8] = {g->stride[0],    g->stride[1],    g->dilation[0], g->dilation[1],
                        g->pad_begin[0], g->pad_begin[1], g->pad_end[0],  g->pad_end[1]};
  for (int k = 0; k < 8; ++k)
    if (f[k] < 0 || f[k] >= ((int64_t)1 << 16)) return 0;
  if (g->groups < 1) return 0;
  i[0] = f[0] | f[1] << 16 | f[2] << 32 | f[3] << 48;
  i[1] = f[4] | f[5] << 16 | f[6] << 32 | f[7] << 48;
  i[2] = g->groups;
  return 1;
}

static inline dtp_conv_geometry dtp_conv_geometry_unpack(const int64_t i[3]) {
  dtp_conv_geometry g;
  for (int k = 0; k < 2; ++k) {
    g.stride[k] = (i[0] >> (16 * k)) & 0xFFFF;
    g.dilation[k] = (i[0] >> (32 + 16 * k)) & 0xFFFF;
    g.pad_begin[k] = (i[1] >> (16 * k)) & 0xFFFF;
    g.pad_end[k] = (i[1] >> (32 + 16 * k)) & 0xFFFF;
  }
  g.groups = i[2];
  return g;
}
typedef struct dtp_op_args {
  const dtp_tensor* t[DTP_MAX_OPERANDS];
  int32_t nt;
  double f[2];
  int64_t i[4];
  void* stream;
} dtp_op_args;

/* Collectives (the optional coll_* slots): the backend's collective library, NCCL for the
 * CUDA plugin. A communicator ("comm") joins one device of this process to the nranks
 * ranks of a process group (coll_comm_init, every rank passing the same id), or to this
 * process's other devices (coll_comm_init_all, for DataParallel). */
#define DTP_COLL_ID_BYTES 128

enum dtp_coll_kind {
  DTP_COLL_ALL_REDUCE = 0,      /* recv = op over the ranks' send (count elements); send may be recv */
  DTP_COLL_BROADCAST = 1,       /* recv = root's send (count elements); peer = root */
  DTP_COLL_ALL_GATHER = 2,      /* recv (nranks x count) = every rank's send (count), in rank order */
  DTP_COLL_REDUCE_SCATTER = 3,  /* recv (count) = this rank's part of op over the ranks' send (nranks x count) */
  DTP_COLL_SEND = 4,            /* send (count) to peer, matched with its RECV in queueing order */
  DTP_COLL_RECV = 5             /* recv (count) from peer */
};

typedef struct dtp_coll_args {
  void* comm;
  const void* send;
  void* recv;
  uint64_t count;  /* elements (see dtp_coll_kind) */
  int32_t dtype;   /* dt_dtype code; kinds that only move bytes accept every dtype */
  int32_t op;      /* DT_REDUCE_SUM, MIN, MAX or PRODUCT (AVG never reaches a backend) */
  int32_t peer;    /* broadcast's root, send's and recv's peer */
  int32_t device;  /* the comm's device */
  void* stream;    /* the device's stream to queue on (NULL: its default stream) */
} dtp_coll_args;

typedef struct dtp_backend {
  uint32_t struct_size;        /* sizeof(dtp_backend) where the plugin was built */
  uint32_t abi_version;        /* DTP_ABI_VERSION */
  uint32_t devtensor_version;  /* DT_VERSION_NUMBER of the sources it was built from */
  int32_t device_type;         /* DLPack's code of its devices: CUDA 2, ROCm 10, ... */
  const char* name;            /* how its devices print and parse: "cuda" for cuda:0 */
  int32_t accelerator;         /* 1: its devices are GPUs for dt_try_gpu / dt_all_gpus */

  /* Once, before anything else. Never fails: the result says what is usable. */
  void (*probe)(dtp_probe* out);

  int32_t (*device_properties)(int32_t device, dt_device_props* out, dtp_error* err);
  int32_t (*memory_info)(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes, dtp_error* err);

  /* Device memory, ordered on `stream` (NULL: the default stream): a block freed on a
   * stream is reused by later work on that stream without waiting. */
  int32_t (*allocate)(int32_t device, size_t nbytes, void* stream, void** out, dtp_error* err);
  void (*deallocate)(int32_t device, void* ptr, size_t nbytes, void* stream);
  int32_t (*memory_stats)(int32_t device, dtp_mem_stats* out, dtp_error* err);
  int32_t (*empty_cache)(int32_t device, dtp_error* err);

  /* dst = cast(src), src broadcast to dst's shape; either side may be on the host (not
   * both), and both may be on different devices of this backend. A host side is one
   * contiguous block of the device side's shape. non_blocking: a host-to-device copy from
   * pinned memory may return before it ends. stream: of the device the copy runs on (the
 * device side's; the destination's between two devices). */
  int32_t (*copy)(const dtp_tensor* dst, const dtp_tensor* src, int32_t non_blocking, void* stream, dtp_error* err);

  /* 1 if run takes this op code, else 0. */
  int32_t (*supports_op)(int32_t op);
  /* Queues one op (dtp_op_args says what each code takes). */
  int32_t (*run)(int32_t op, const dtp_op_args* args, dtp_error* err);
  /* Waits for all work queued on the device. */
  int32_t (*synchronize)(int32_t device, dtp_error* err);

  /* OPTIONAL: page-locked host memory (pinned tensors). */
  int32_t (*host_allocate)(size_t nbytes, void** out, dtp_error* err);
  void (*host_deallocate)(void* ptr);

  /* OPTIONAL: streams and events (core/stream.h), all or none; NULL: the device has one
   * in-order queue, on which the core emulates them. A stream handle of NULL is the
   * device's default stream; others come from stream_create, or from a DLPack producer
   * (event_record then gets that foreign stream). Events time what they mark. */
  int32_t (*stream_create)(int32_t device, void** out, dtp_error* err);
  void (*stream_destroy)(int32_t device, void* stream);
  int32_t (*stream_synchronize)(int32_t device, void* stream, dtp_error* err);
  /* *done = 1 when the work queued on stream has finished, else 0; never blocks. */
  int32_t (*stream_query)(int32_t device, void* stream, int32_t* done, dtp_error* err);
  /* The default stream's own handle (a cudaStream_t), for callers mixing libraries. */
  int32_t (*stream_default)(int32_t device, void** out, dtp_error* err);
  int32_t (*event_create)(int32_t device, void** out, dtp_error* err);
  void (*event_destroy)(int32_t device, void* event);
  /* The event completes once the work queued on stream before it has. */
  int32_t (*event_record)(int32_t device, void* event, void* stream, dtp_error* err);
  /* Work queued on stream (of `device`) after this waits for the event, which may be of
   * another device of this backend. */
  int32_t (*event_wait)(int32_t device, void* stream, void* event, dtp_error* err);
  int32_t (*event_synchronize)(int32_t device, void* event, dtp_error* err);
  int32_t (*event_query)(int32_t device, void* event, int32_t* done, dtp_error* err);
  /* Milliseconds between two recorded, completed events. */
  int32_t (*event_elapsed_ms)(int32_t device, void* start, void* end, float* out, dtp_error* err);

  /* OPTIONAL: collectives (dtp_coll_args above), all or none; NULL: process groups and
   * DataParallel refuse this backend's tensors (DataParallel then copies). */
  const char* coll_name; /* the library, as process groups name their backend: "nccl" */
  /* 1 when the library is usable, with its version code (NCCL's: 22809 is 2.28.9) in
   * *version and what it is in why ("NCCL 2.28.9 (libnccl.so.2)"); else 0 with a
   * sentence saying why not in why. Loads the library at its first call. */
  int32_t (*coll_probe)(int32_t* version, char* why, size_t cap);
  /* A new id for one communicator, made on rank 0 and handed to the others. */
  int32_t (*coll_unique_id)(uint8_t out[DTP_COLL_ID_BYTES], dtp_error* err);
  /* Rank `rank` of nranks, on `device`: a collective call of every rank with the same id.
   * Waits at most timeout_ms for the others (then fails, leaving nothing behind). */
  int32_t (*coll_comm_init)(int32_t device, int32_t nranks, int32_t rank, const uint8_t id[DTP_COLL_ID_BYTES],
                            int64_t timeout_ms, void** out, dtp_error* err);
  /* One communicator per device of this process (out[i] for devices[i]). */
  int32_t (*coll_comm_init_all)(int32_t ndev, const int32_t* devices, void** out, dtp_error* err);
  /* Frees a communicator; abort: without waiting for its peers (after a failure). */
  void (*coll_comm_destroy)(void* comm, int32_t abort);
  /* Calls between begin (1) and end (0) are queued as one group (every comm of a
   * coll_comm_init_all in one thread must be driven inside a group). */
  int32_t (*coll_group)(int32_t begin, dtp_error* err);
  /* Queues one collective on args->stream. */
  int32_t (*coll_run)(int32_t kind, const dtp_coll_args* args, dtp_error* err);
  /* Waits until comm's last collective queued outside a group has completed (the work
   * queued on stream, when there is none). Fails (DT_ERR_DISTRIBUTED), aborting comm, when
   * comm reports a failure (a peer gone) or timeout_ms pass first. */
  int32_t (*coll_wait)(void* comm, int32_t device, void* stream, int64_t timeout_ms, dtp_error* err);

  /* OPTIONAL: one line for users on the library the DTP_HOOK_* passes use, loading it:
   * what it is ("cuDNN 9.19.0 (libcudnn.so.9)") or why it is not used. */
  void (*hook_library)(char* text, size_t cap);

  /* OPTIONAL, all or none: native graphs, one launch per replay of a dt_graph (CUDA
   * graphs). graph_begin starts recording the work later queued on `stream` (one of
   * stream_create's) from this thread, without running it; graph_end stops and makes an
   * executable graph of it (DT_ERR_NOT_SUPPORTED when the work could not be recorded:
   * the core then replays step by step); graph_launch queues it on `stream` (NULL: the
   * default stream). */
  int32_t (*graph_begin)(int32_t device, void* stream, dtp_error* err);
  int32_t (*graph_end)(int32_t device, void* stream, void** exec, dtp_error* err);
  int32_t (*graph_launch)(int32_t device, void* exec, void* stream, dtp_error* err);
  void (*graph_destroy)(int32_t device, void* exec);
} dtp_backend;

typedef const dtp_backend* (*dtp_entry_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* DEVTENSOR_PLUGIN_ABI_H */
