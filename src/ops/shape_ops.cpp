// Views (sharing storage) and joins/splits/indexing, with PyTorch's shape rules.
#include <algorithm>

#include "core/backend.h"
#include "core/error.h"
#include "core/graph.h"
#include "ops/ops.h"

namespace dt::ops {
namespace {

// Strides that view `t` with `shape` without copying, or false (ATen's computeStride).
bool view_strides(const Tensor& t, const Dims& shape, Dims* out) {
  out->n = shape.n;
  if (t.numel() == 0 || t.ndim() == 0) {
    *out = contiguous_strides(shape);
    return true;
  }
  const Dims& os = t.shape();
  const Dims& st = t.strides();
  int view_d = shape.n - 1;
  int64_t chunk_base = st.v[os.n - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = os.n - 1; d >= 0; --d) {
    tensor_numel *= os.v[d];
    if (d == 0 || (os.v[d - 1] != 1 && st.v[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape.v[view_d] == 1)) {
        out->v[view_d] = view_numel * chunk_base;
        view_numel *= shape.v[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base = st.v[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Dims infer_shape(const char* op, const Dims& shape, int64_t numel) {
  Dims s = shape;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < s.n; ++i) {
    if (s.v[i] == -1) {
      if (infer >= 0) fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": only one dimension can be inferred (-1)"));
      infer = i;
    } else if (s.v[i] < 0) {
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": invalid shape dimension ", s.v[i]));
    } else if (__builtin_mul_overflow(known, s.v[i], &known)) {
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": shape ", dims_str(shape), " is invalid for input of size ", numel));
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": shape ", dims_str(shape), " is invalid for input of size ", numel));
    s.v[infer] = numel / known;
  } else if (known != numel) {
    fail(DT_ERR_SHAPE_MISMATCH, cat(op, ": shape ", dims_str(shape), " is invalid for input of size ", numel));
  }
  return s;
}

}  // namespace

Tensor reshape(const Tensor& t, const Dims& shape, bool must_view) {
  const char* op = must_view ? "view" : "reshape";
  Dims s = infer_shape(op, shape, t.numel());
  Dims strides;
  if (view_strides(t, s, &strides)) return t.view_as(s, strides, t.offset());
  if (must_view)
    fail(DT_ERR_SHAPE_MISMATCH, cat("view: size ", dims_str(s), " is not compatible with the input's size ",
                                    dims_str(t.shape()), " and strides ", dims_str(t.strides()),
                                    " (at least one dimension spans two contiguous subspaces); use reshape"));
  Tensor c = to(t, t.device(), t.dtype(), true);
  return c.view_as(s, contiguous_strides(s), 0);
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  int a = wrap_dim(d0, t.ndim(), "transpose"), b = wrap_dim(d1, t.ndim(), "transpose");
  if (t.ndim() == 0) return t.view_as(t.shape(), t.strides(), t.offset());
  Dims sh = t.shape(), st = t.strides();
  std::swap(sh.v[a], sh.v[b]);
  std::swap(st.v[a], st.v[b]);
  return t.view_as(sh, st, t.offset());
}

Tensor permute(const Tensor& t, const Dims& dims) {
  if (dims.n != t.ndim())
    fail(DT_ERR_INVALID_ARGUMENT, cat("permute: the number of dims (", dims.n, ") does not match the tensor's ndim (",
                                      t.ndim(), ")"));
  Dims sh, st;
  bool seen[kMaxDims] = {};
  for (int i = 0; i < dims.n; ++i) {
    int d = wrap_dim(dims.v[i], t.ndim(), "permute");
    if (seen[d]) fail(DT_ERR_INVALID_ARGUMENT, cat("permute: dimension ", dims.v[i], " repeats"));
    seen[d] = true;
    sh.push(t.size(d));
    st.push(t.stride(d));
  }
  return t.view_as(sh, st, t.offset());
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  if (t.ndim() == 0) fail(DT_ERR_INVALID_ARGUMENT, "narrow: cannot be applied to a 0-d tensor");
  int d = wrap_dim(dim, t.ndim(), "narrow");
  int64_t size = t.size(d);
  if (start < -size || start > size)
    fail(DT_ERR_INVALID_ARGUMENT, cat("narrow: start ", start, " is out of range for dimension ", d, " of size ", size));
  if (start < 0) start += size;
  if (length < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("narrow: length must be non-negative, got ", length));
  if (length > size - start)
    fail(DT_ERR_INVALID_ARGUMENT, cat("narrow: start (", start, ") + length (", length, ") exceeds dimension size (",
                                      size, ")"));
  Dims sh = t.shape();
  sh.v[d] = length;
  // On an empty tensor (another dim is 0) a size, and so start * stride, may be as large
  // as int64 allows: an offset past it is refused, as view_as refuses byte offsets past it.
  int64_t offset = 0;
  if (__builtin_mul_overflow(start, t.stride(d), &offset) || __builtin_add_overflow(offset, t.offset(), &offset))
    fail(DT_ERR_INVALID_ARGUMENT, cat("narrow: start ", start, " along dimension ", d, " (stride ", t.stride(d),
                                      ") puts the view's offset past int64, and so its byte offsets"));
  return t.view_as(sh, t.strides(), offset);
}

Tensor squeeze(const Tensor& t, const int64_t* dims, size_t ndims) {
  if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, "squeeze: dims is NULL");
  uint32_t mask = 0;
  if (ndims == 0) {
    mask = 0xffffffffu;
  } else {
    for (size_t i = 0; i < ndims; ++i) {
      int d = wrap_dim(dims[i], t.ndim(), "squeeze");
      if (t.ndim() > 0) mask |= 1u << d;
    }
  }
  Dims sh, st;
  for (int d = 0; d < t.ndim(); ++d) {
    if ((mask & (1u << d)) && t.size(d) == 1) continue;
    sh.push(t.size(d));
    st.push(t.stride(d));
  }
  return t.view_as(sh, st, t.offset());
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  int nd = t.ndim();
  if (nd >= kMaxDims) fail(DT_ERR_INVALID_ARGUMENT, cat("unsqueeze: a tensor has at most ", kMaxDims, " dimensions"));
  int d = wrap_dim(dim, nd + 1, "unsqueeze");
  Dims sh, st;
  for (int i = 0; i < nd; ++i) {
    if (i == d) {
      sh.push(1);
      st.push(i < nd ? t.size(i) * t.stride(i) : 1);
    }
    sh.push(t.size(i));
    st.push(t.stride(i));
  }
  if (d == nd) {
    sh.push(1);
    st.push(1);
  }
  return t.view_as(sh, st, t.offset());
}

Tensor expand(const Tensor& t, const Dims& shape) {
  if (shape.n < t.ndim())
    fail(DT_ERR_SHAPE_MISMATCH, cat("expand: the number of sizes (", shape.n, ") must be at least the tensor's ndim (",
                                    t.ndim(), ")"));
  Dims sh, st;
  sh.n = st.n = shape.n;
  int shift = shape.n - t.ndim();
  for (int i = shape.n - 1; i >= 0; --i) {
    int td = i - shift;
    int64_t want = shape.v[i];
    if (td < 0) {
      if (want < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("expand: -1 is not allowed in a new leading dimension"));
      sh.v[i] = want;
      st.v[i] = 0;
      continue;
    }
    int64_t have = t.size(td);
    if (want == -1) want = have;
    if (want < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("expand: invalid size ", shape.v[i]));
    if (have == want) {
      sh.v[i] = have;
      st.v[i] = t.stride(td);
    } else if (have == 1) {
      sh.v[i] = want;
      st.v[i] = 0;
    } else {
      fail(DT_ERR_SHAPE_MISMATCH, cat("expand: the expanded size ", want, " must match the existing size ", have,
                                      " at non-singleton dimension ", i, " (shape ", dims_str(t.shape()), " to ",
                                      dims_str(shape), ")"));
    }
  }
  return t.view_as(sh, st, t.offset());
}

Tensor flatten(const Tensor& t, int64_t start, int64_t end) {
  if (t.ndim() == 0) {
    wrap_dim(start, 0, "flatten");
    wrap_dim(end, 0, "flatten");
    return reshape(t, Dims{1}, false);
  }
  int s = wrap_dim(start, t.ndim(), "flatten"), e = wrap_dim(end, t.ndim(), "flatten");
  if (s > e) fail(DT_ERR_INVALID_ARGUMENT, "flatten: start_dim cannot come after end_dim");
  Dims sh;
  for (int d = 0; d < s; ++d) sh.push(t.size(d));
  int64_t m = 1;
  for (int d = s; d <= e; ++d) m *= t.size(d);
  sh.push(m);
  for (int d = e + 1; d < t.ndim(); ++d) sh.push(t.size(d));
  return reshape(t, sh, false);
}

Tensor cat_tensors(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) fail(DT_ERR_INVALID_ARGUMENT, "cat: expected a non-empty list of tensors");
  // PyTorch skips legacy 1-d empty tensors ([0]) when others have more dims.
  const Tensor* ref = nullptr;
  for (const Tensor& t : ts)
    if (!(t.ndim() == 1 && t.size(0) == 0)) { ref = &t; break; }
  if (!ref) ref = &ts[0];
  if (ref->ndim() == 0) fail(DT_ERR_INVALID_ARGUMENT, "cat: zero-dimensional tensors cannot be concatenated");
  int d = wrap_dim(dim, ref->ndim(), "cat");
  DType dtype = ts[0].dtype();
  int64_t total = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tensor& t = ts[i];
    check_same_device("cat", *ref, t);
    dtype = promote_types(dtype, t.dtype());
    if (t.ndim() == 1 && t.size(0) == 0 && ref->ndim() != 1) continue;
    if (t.ndim() != ref->ndim())
      fail(DT_ERR_SHAPE_MISMATCH, cat("cat: tensors must have the same number of dimensions: got ", ref->ndim(), " and ",
                                      t.ndim(), " (tensor ", i, ")"));
    for (int k = 0; k < t.ndim(); ++k)
      if (k != d && t.size(k) != ref->size(k))
        fail(DT_ERR_SHAPE_MISMATCH, cat("cat: sizes of tensors must match except in dimension ", d, ": expected size ",
                                        ref->size(k), " but got size ", t.size(k), " for tensor ", i, " in dimension ", k));
    if (__builtin_add_overflow(total, t.size(d), &total))
      fail(DT_ERR_INVALID_ARGUMENT, cat("cat: the result would have more than 2^63 - 1 elements along dimension ", d));
  }
  Dims sh = ref->shape();
  sh.v[d] = total;
  Tensor out = Tensor::empty(sh, dtype, ref->device());
  int64_t at = 0;
  for (const Tensor& t : ts) {
    if (t.ndim() == 1 && t.size(0) == 0 && ref->ndim() != 1) continue;
    int64_t n = t.size(d);
    if (n > 0) copy_(narrow(out, d, at, n), t);
    at += n;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  if (ts.empty()) fail(DT_ERR_INVALID_ARGUMENT, "stack: expected a non-empty list of tensors");
  int d = wrap_dim(dim, ts[0].ndim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].shape() != ts[0].shape())
      fail(DT_ERR_SHAPE_MISMATCH, cat("stack: expects each tensor to be equal size, but got ", dims_str(ts[0].shape()),
                                      " at entry 0 and ", dims_str(ts[i].shape()), " at entry ", i));
    parts.push_back(unsqueeze(ts[i], d));
  }
  return cat_tensors(parts, d);
}

// ceil(a / b) for a >= 0 and b >= 1, without the overflow of (a + b - 1) / b when b is
// huge (found by fuzz_ops: split with split_size INT64_MAX).
static int64_t ceil_div(int64_t a, int64_t b) { return a == 0 ? 0 : 1 + (a - 1) / b; }

int64_t split_pieces(const Tensor& t, int64_t split_size, int64_t dim) {
  if (t.ndim() == 0) fail(DT_ERR_INVALID_ARGUMENT, "split: cannot split a 0-d tensor");
  int64_t size = t.size(wrap_dim(dim, t.ndim(), "split"));
  if (split_size < 0 || (split_size == 0 && size != 0))
    fail(DT_ERR_INVALID_ARGUMENT, cat("split: split_size must be positive (or 0 for an empty dimension), got ", split_size));
  return split_size == 0 ? 1 : std::max<int64_t>(1, ceil_div(size, split_size));
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  const int64_t pieces = split_pieces(t, split_size, dim);
  int d = wrap_dim(dim, t.ndim(), "split");
  int64_t size = t.size(d);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < pieces; ++i) {
    int64_t start = i * split_size;
    out.push_back(narrow(t, d, start, std::min(split_size, size - start)));
  }
  return out;
}

// chunk's split size, or 0 for an empty dimension (then `chunks` empty pieces).
static int64_t chunk_split_size(const Tensor& t, int64_t chunks, int64_t dim) {
  if (chunks < 1) fail(DT_ERR_INVALID_ARGUMENT, cat("chunk: chunks must be at least 1, got ", chunks));
  if (t.ndim() == 0) fail(DT_ERR_INVALID_ARGUMENT, "chunk: cannot chunk a 0-d tensor");
  return ceil_div(t.size(wrap_dim(dim, t.ndim(), "chunk")), chunks);
}

int64_t chunk_pieces(const Tensor& t, int64_t chunks, int64_t dim) {
  const int64_t split_size = chunk_split_size(t, chunks, dim);
  return split_size == 0 ? chunks : split_pieces(t, split_size, dim);
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  const int64_t split_size = chunk_split_size(t, chunks, dim);
  int d = wrap_dim(dim, t.ndim(), "chunk");
  if (split_size == 0) {
    // PyTorch returns `chunks` empty pieces for an empty dimension
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(narrow(t, d, 0, 0));
    return out;
  }
  return split(t, split_size, d);
}

Tensor checked_index(const char* op, const Tensor& index, int64_t size, bool allow_negative) {
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected an int64 or int32 index but got ", dtype_name(index.dtype())));
  Tensor idx = to(index, index.device(), DType::Int64, false);
  idx = contiguous(idx);
  // While a graph captures, the indices have no values yet: the kernels check them when
  // the graph is replayed (the CPU's refuse an index out of range; see core/graph.h).
  if (capturing(idx.device())) return idx;
  Tensor host = idx.device().is_cpu() ? idx : to(idx, Device{DT_DEVICE_CPU, 0}, DType::Int64, false);
  const int64_t* p = host.data_as<int64_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (p[i] >= size || p[i] < (allow_negative ? -size : 0) || (p[i] < 0 && !allow_negative))
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": index ", p[i], " is out of bounds for dimension with size ", size));
  }
  return idx;
}

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  check_same_device("index_select", t, index);
  if (index.ndim() > 1) fail(DT_ERR_SHAPE_MISMATCH, "index_select: index must be a 0-d or 1-d tensor");
  int d = wrap_dim(dim, t.ndim(), "index_select");
  int64_t size = t.ndim() == 0 ? 1 : t.size(d);
  Tensor idx = checked_index("index_select", index, size, false);
  if (t.ndim() == 0) {  // PyTorch: a scalar indexed by its one valid index is itself
    if (idx.numel() != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat("index_select: an index into a 0-d tensor can have only 1 value, got ", idx.numel()));
    return to(t, t.device(), t.dtype(), true);
  }
  Dims sh = t.shape();
  sh.v[d] = idx.numel();
  Tensor out = Tensor::empty(sh, t.dtype(), t.device());
  Tensor idx1 = idx.ndim() == 0 ? reshape(idx, Dims{1}, true) : idx;
  if (out.numel() > 0) {
    OpArgs args{&out, &t, &idx1};
    args.i[0] = d;
    run_op(KernelOp::IndexSelect, args);
  }
  return out;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  check_same_device("gather", t, index);
  if (index.dtype() != DType::Int64)
    fail(DT_ERR_DTYPE_MISMATCH, cat("gather: expected an int64 index but got ", dtype_name(index.dtype())));
  int d = wrap_dim(dim, t.ndim(), "gather");
  int tn = std::max(1, t.ndim()), in_ = std::max(1, index.ndim());
  if (tn != in_)
    fail(DT_ERR_SHAPE_MISMATCH, cat("gather: index ", dims_str(index.shape()), " must have as many dimensions as input ",
                                    dims_str(t.shape())));
  for (int k = 0; k < index.ndim(); ++k)
    if (k != d && t.ndim() > 0 && index.size(k) > t.size(k))
      fail(DT_ERR_SHAPE_MISMATCH, cat("gather: size of index ", dims_str(index.shape()), " exceeds the input ",
                                      dims_str(t.shape()), " at dimension ", k));
  int64_t size = t.ndim() == 0 ? 1 : t.size(d);
  Tensor idx = checked_index("gather", index, size, false);
  Tensor out = Tensor::empty(index.shape(), t.dtype(), t.device());
  if (out.numel() == 0) return out;
  if (t.ndim() == 0 || index.ndim() == 0) {  // loop over 1-d views of the 0-d operands
    Tensor t1 = t.ndim() == 0 ? reshape(t, Dims{1}, false) : t;
    const Tensor out1 = reshape(out, Dims{1}, true), idx1 = reshape(idx, Dims{1}, false);
    OpArgs args{&out1, &t1, &idx1};
    args.i[0] = d;
    run_op(KernelOp::Gather, args);
    return out;
  }
  OpArgs args{&out, &t, &idx};
  args.i[0] = d;
  run_op(KernelOp::Gather, args);
  return out;
}

}  // namespace dt::ops
