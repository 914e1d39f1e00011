// Operation entry points: elementwise, reductions, softmax, matmul, joins, indexing.
#include <string>
#include <type_traits>
#include <vector>

#include "api/shim.h"
#include "nn/functions.h"
#include "ops/counting.h"
#include "ops/logical.h"
#include "ops/nonzero.h"
#include "ops/sampling.h"
#include "ops/structured.h"
#include "ops/ops.h"

using namespace dt;
using namespace dt::api;

namespace {

dt_status binary_entry(const char* fn, BinaryOp op, const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(a, fn, "a");
    const Tensor& x = x_ref;
    Borrowed y_ref = tensor_arg(b, fn, "b");
    const Tensor& y = y_ref;
    *out = new_handle(ag::binary(op, x, y));
  });
}
dt_status scalar_entry(const char* fn, BinaryOp op, const dt_tensor* a, double b, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    *out = new_handle(ag::binary_scalar(op, tensor_arg(a, fn, "a"), b));
  });
}
dt_status inplace_entry(const char* fn, BinaryOp op, dt_tensor* self, const dt_tensor* other) {
  return guard([&] {
    Borrowed s_ref = tensor_arg(self, fn, "self");
    const Tensor& s = s_ref;
    ag::binary_(op, s, tensor_arg(other, fn, "other"));
  });
}
dt_status inplace_scalar_entry(const char* fn, BinaryOp op, dt_tensor* self, double other) {
  return guard([&] { ag::binary_scalar_(op, tensor_arg(self, fn, "self"), other); });
}
dt_status unary_entry(const char* fn, UnaryOp op, const dt_tensor* a, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    *out = new_handle(ag::unary(op, tensor_arg(a, fn, "a")));
  });
}
dt_status reduce_entry(const char* fn, ReduceOp op, const dt_tensor* a, const int64_t* dims, size_t ndims,
                       int32_t keepdim, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(a, fn, "a");
    const Tensor& x = x_ref;
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::reduce(op, x, dims, ndims, flag_arg(keepdim, fn, "keepdim")));
  });
}
dt_status var_std_entry(const char* fn, bool take_sqrt, const dt_tensor* a, const int64_t* dims, size_t ndims,
                        double correction, int32_t keepdim, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(a, fn, "a");
    const Tensor& x = x_ref;
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::var_std(x, dims, ndims, correction, flag_arg(keepdim, fn, "keepdim"), take_sqrt));
  });
}
dt_status triangle_entry(const char* fn, bool upper, const dt_tensor* a, int64_t diagonal, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x_ref = tensor_arg(a, fn, "a");
    const Tensor& x = x_ref;
    *out = new_handle(upper ? ag::triu(x, diagonal) : ag::tril(x, diagonal));
  });
}
std::vector<Tensor> tensor_list(const char* fn, const dt_tensor* const* tensors, size_t n) {
  if (n == 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": expected at least one tensor"));
  require(tensors, fn, "tensors");
  std::vector<Tensor> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) v.push_back(tensor_arg(tensors[i], fn, "tensors[i]"));
  return v;
}
// Writes pieces as new handles into outs when they fit (all or nothing).
void write_pieces(std::vector<Tensor> pieces, dt_tensor** outs, size_t cap, size_t* count) {
  if (pieces.size() <= cap) {
    std::vector<dt_tensor*> handles;
    handles.reserve(pieces.size());
    try {
      for (Tensor& p : pieces) handles.push_back(new_handle(std::move(p)));
    } catch (...) {
      for (dt_tensor* h : handles) dt_tensor_release(h);
      throw;
    }
    for (size_t i = 0; i < handles.size(); ++i) outs[i] = handles[i];
  }
  *count = pieces.size();
}

// dt_chunk and dt_split: the pieces are counted first, so that a sizing call (or too
// small a cap) makes none; count_pieces(x) counts them, pieces(x) makes them.
template <class CountPieces, class Pieces>
void pieces_entry(const char* fn, const dt_tensor* t, dt_tensor** outs, size_t cap, size_t* count,
                  CountPieces count_pieces, Pieces pieces) {
  require(count, fn, "count");
  if (!outs && cap > 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": outs is NULL but cap is ", cap));
  Borrowed x = tensor_arg(t, fn, "t");
  const auto n = static_cast<uint64_t>(count_pieces(x));
  if (n > cap) {
    *count = n;
    return;
  }
  write_pieces(pieces(x), outs, cap, count);
}

// include/devtensor.h must declare every entry point the table makes, with the
// signature made here: a row without its declaration fails to compile on this line.
#define DT_CHECK(fn, ...) static_assert(std::is_same<decltype(&::fn), dt_status (*)(__VA_ARGS__)>::value, #fn);
#define DT_X(Name, code, c_name, rule, ...)                                                  \
  DT_CHECK(dt_##c_name, const dt_tensor*, const dt_tensor*, dt_tensor**)                   \
  DT_CHECK(dt_##c_name##_scalar, const dt_tensor*, double, dt_tensor**)                    \
  DT_IF_ARITH_##rule(DT_CHECK(dt_##c_name##_, dt_tensor*, const dt_tensor*)                \
                     DT_CHECK(dt_##c_name##_scalar_, dt_tensor*, double))
DT_BINARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, c_name, rule, cost, visibility, ...) \
  DT_IF_PUBLIC_##visibility(DT_CHECK(dt_##c_name, const dt_tensor*, dt_tensor**))
DT_UNARY_OPS(DT_X)
#undef DT_X
#define DT_X(Name, code, c_name, rule, ...) \
  DT_CHECK(dt_##c_name, const dt_tensor*, const int64_t*, size_t, int32_t, dt_tensor**)
DT_REDUCE_OPS(DT_X)
#undef DT_X
#undef DT_CHECK

}  // namespace

extern "C" {

// The regular entry points, one per row of the op table (core/op_table.h): dt_<op>,
// dt_<op>_scalar, and for the arithmetic ops dt_<op>_ and dt_<op>_scalar_.
#define DT_X(Name, code, c_name, rule, ...)                                                      \
  DT_API dt_status dt_##c_name(const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {        \
    return binary_entry("dt_" #c_name, BinaryOp::Name, a, b, out);                              \
  }                                                                                             \
  DT_API dt_status dt_##c_name##_scalar(const dt_tensor* a, double b, dt_tensor** out) {         \
    return scalar_entry("dt_" #c_name "_scalar", BinaryOp::Name, a, b, out);                    \
  }                                                                                             \
  DT_IF_ARITH_##rule(                                                                            \
  DT_API dt_status dt_##c_name##_(dt_tensor* self, const dt_tensor* other) {                     \
    return inplace_entry("dt_" #c_name "_", BinaryOp::Name, self, other);                       \
  }                                                                                             \
  DT_API dt_status dt_##c_name##_scalar_(dt_tensor* self, double other) {                        \
    return inplace_scalar_entry("dt_" #c_name "_scalar_", BinaryOp::Name, self, other);         \
  })
DT_BINARY_OPS(DT_X)
#undef DT_X

DT_API dt_status dt_where(const dt_tensor* cond, const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_where", "out");
    Borrowed c_ref = tensor_arg(cond, "dt_where", "cond");
    const Tensor& c = c_ref;
    Borrowed x_ref = tensor_arg(a, "dt_where", "a");
    const Tensor& x = x_ref;
    Borrowed y_ref = tensor_arg(b, "dt_where", "b");
    const Tensor& y = y_ref;
    *out = new_handle(ag::where(c, x, y));
  });
}

DT_API dt_status dt_masked_fill(const dt_tensor* a, const dt_tensor* mask, double value, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_masked_fill", "out");
    Borrowed x_ref = tensor_arg(a, "dt_masked_fill", "a");
    const Tensor& x = x_ref;
    Borrowed m_ref = tensor_arg(mask, "dt_masked_fill", "mask");
    const Tensor& m = m_ref;
    *out = new_handle(ag::masked_fill(x, m, value));
  });
}

DT_API dt_status dt_clamp(const dt_tensor* a, const double* min, const double* max, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_clamp", "out");
    Borrowed x_ref = tensor_arg(a, "dt_clamp", "a");
    const Tensor& x = x_ref;
    *out = new_handle(ag::clamp(x, min, max));
  });
}

DT_API dt_status dt_pad(const dt_tensor* a, const int64_t* pad, size_t npad, const char* mode, double value,
                        dt_tensor** out) {
  const char* fn = "dt_pad";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (npad > 0 && !pad) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": pad is NULL but npad is ", npad));
    if (npad > 2 * static_cast<size_t>(kMaxDims))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", npad, " padding values, but a tensor has at most ", kMaxDims, " dims"));
    ag::PadMode m = ag::PadMode::Constant;
    const std::string name = mode ? mode : "constant";
    if (name == "reflect") m = ag::PadMode::Reflect;
    else if (name == "replicate") m = ag::PadMode::Replicate;
    else if (name == "circular") m = ag::PadMode::Circular;
    else if (name != "constant")
      fail(DT_ERR_INVALID_ARGUMENT,
           cat(fn, ": unknown mode \"", name, "\" (\"constant\", \"reflect\", \"replicate\" or \"circular\")"));
    *out = new_handle(ag::pad(x, std::vector<int64_t>(pad, pad + npad), m, value));
  });
}

DT_API dt_status dt_leaky_relu(const dt_tensor* a, double negative_slope, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_leaky_relu", "out");
    *out = new_handle(ag::leaky_relu(tensor_arg(a, "dt_leaky_relu", "a"), negative_slope));
  });
}

DT_API dt_status dt_triu(const dt_tensor* a, int64_t diagonal, dt_tensor** out) {
  return triangle_entry("dt_triu", true, a, diagonal, out);
}
DT_API dt_status dt_tril(const dt_tensor* a, int64_t diagonal, dt_tensor** out) {
  return triangle_entry("dt_tril", false, a, diagonal, out);
}

DT_API dt_status dt_var(const dt_tensor* a, const int64_t* dims, size_t ndims, double correction, int32_t keepdim,
                        dt_tensor** out) {
  return var_std_entry("dt_var", false, a, dims, ndims, correction, keepdim, out);
}
DT_API dt_status dt_std(const dt_tensor* a, const int64_t* dims, size_t ndims, double correction, int32_t keepdim,
                        dt_tensor** out) {
  return var_std_entry("dt_std", true, a, dims, ndims, correction, keepdim, out);
}

#define DT_X(Name, code, c_name, rule, cost, visibility, ...) \
  DT_IF_PUBLIC_##visibility(DT_API dt_status dt_##c_name(const dt_tensor* a, dt_tensor** out) { \
    return unary_entry("dt_" #c_name, UnaryOp::Name, a, out);                                    \
  })
DT_UNARY_OPS(DT_X)
#undef DT_X

#define DT_X(Name, code, c_name, rule, ...)                                                                   \
  DT_API dt_status dt_##c_name(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,   \
                               dt_tensor** out) {                                                        \
    return reduce_entry("dt_" #c_name, ReduceOp::Name, a, dims, ndims, keepdim, out);                    \
  }
DT_REDUCE_OPS(DT_X)
#undef DT_X

namespace {
dt_status predicate_entry(const char* fn, ops::Predicate p, const dt_tensor* a, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    *out = new_handle(ops::predicate(p, x));
  });
}
dt_status logical_entry(const char* fn, ops::LogicalOp op, const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a"), y = tensor_arg(b, fn, "b");
    *out = new_handle(ops::logical(op, x, y));
  });
}
dt_status any_all_entry(const char* fn, bool all, const dt_tensor* a, const int64_t* dims, size_t ndims,
                        int32_t keepdim, dt_tensor** out) {
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ops::any_all(all, x, dims, ndims, flag_arg(keepdim, fn, "keepdim")));
  });
}
}  // namespace

DT_API dt_status dt_isnan(const dt_tensor* a, dt_tensor** out) {
  return predicate_entry("dt_isnan", ops::Predicate::IsNan, a, out);
}
DT_API dt_status dt_isinf(const dt_tensor* a, dt_tensor** out) {
  return predicate_entry("dt_isinf", ops::Predicate::IsInf, a, out);
}
DT_API dt_status dt_isfinite(const dt_tensor* a, dt_tensor** out) {
  return predicate_entry("dt_isfinite", ops::Predicate::IsFinite, a, out);
}
DT_API dt_status dt_logical_not(const dt_tensor* a, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_logical_not", "out");
    Borrowed x = tensor_arg(a, "dt_logical_not", "a");
    *out = new_handle(ops::logical_not(x));
  });
}
DT_API dt_status dt_logical_and(const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return logical_entry("dt_logical_and", ops::LogicalOp::And, a, b, out);
}
DT_API dt_status dt_logical_or(const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return logical_entry("dt_logical_or", ops::LogicalOp::Or, a, b, out);
}
DT_API dt_status dt_logical_xor(const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return logical_entry("dt_logical_xor", ops::LogicalOp::Xor, a, b, out);
}
DT_API dt_status dt_any(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim, dt_tensor** out) {
  return any_all_entry("dt_any", false, a, dims, ndims, keepdim, out);
}
DT_API dt_status dt_all(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim, dt_tensor** out) {
  return any_all_entry("dt_all", true, a, dims, ndims, keepdim, out);
}

DT_API dt_status dt_flip(const dt_tensor* a, const int64_t* dims, size_t ndims, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_flip";
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::flip(x, dims, ndims));
  });
}

DT_API dt_status dt_roll(const dt_tensor* a, const int64_t* shifts, size_t nshifts, const int64_t* dims, size_t ndims,
                         dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_roll";
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (nshifts > 0 && !shifts) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": shifts is NULL but nshifts is ", nshifts));
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::roll(x, shifts, nshifts, dims, ndims));
  });
}

DT_API dt_status dt_repeat(const dt_tensor* a, const int64_t* repeats, size_t n, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_repeat";
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (n > 0 && !repeats) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": repeats is NULL but n is ", n));
    *out = new_handle(ag::repeat(x, repeats, n));
  });
}

DT_API dt_status dt_logsumexp(const dt_tensor* a, const int64_t* dims, size_t ndims, int32_t keepdim,
                              dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_logsumexp";
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::logsumexp(x, dims, ndims, flag_arg(keepdim, fn, "keepdim")));
  });
}

DT_API dt_status dt_vector_norm(const dt_tensor* a, double ord, const int64_t* dims, size_t ndims, int32_t keepdim,
                                dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_vector_norm";
    require(out, fn, "out");
    Borrowed x = tensor_arg(a, fn, "a");
    if (ndims > 0 && !dims) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": dims is NULL but ndims is ", ndims));
    *out = new_handle(ag::vector_norm(x, ord, dims, ndims, flag_arg(keepdim, fn, "keepdim")));
  });
}

DT_API dt_status dt_normalize(const dt_tensor* a, double ord, int64_t dim, double eps, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_normalize", "out");
    Borrowed x = tensor_arg(a, "dt_normalize", "a");
    *out = new_handle(ag::normalize(x, ord, dim, eps));
  });
}

DT_API dt_status dt_cosine_similarity(const dt_tensor* x1, const dt_tensor* x2, int64_t dim, double eps,
                                      dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_cosine_similarity";
    require(out, fn, "out");
    Borrowed a = tensor_arg(x1, fn, "x1");
    Borrowed b = tensor_arg(x2, fn, "x2");
    *out = new_handle(ag::cosine_similarity(a, b, dim, eps));
  });
}

DT_API dt_status dt_pairwise_distance(const dt_tensor* x1, const dt_tensor* x2, double ord, double eps,
                                      int32_t keepdim, dt_tensor** out) {
  return guard([&] {
    const char* fn = "dt_pairwise_distance";
    require(out, fn, "out");
    Borrowed a = tensor_arg(x1, fn, "x1");
    Borrowed b = tensor_arg(x2, fn, "x2");
    *out = new_handle(ag::pairwise_distance(a, b, ord, eps, flag_arg(keepdim, fn, "keepdim")));
  });
}

DT_API dt_status dt_softmax(const dt_tensor* a, int64_t dim, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_softmax", "out");
    *out = new_handle(ag::softmax(tensor_arg(a, "dt_softmax", "a"), dim, false));
  });
}
DT_API dt_status dt_log_softmax(const dt_tensor* a, int64_t dim, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_log_softmax", "out");
    *out = new_handle(ag::softmax(tensor_arg(a, "dt_log_softmax", "a"), dim, true));
  });
}

DT_API dt_status dt_cumsum(const dt_tensor* a, int64_t dim, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_cumsum", "out");
    *out = new_handle(ag::cumsum(tensor_arg(a, "dt_cumsum", "a"), dim));
  });
}

namespace {
void write_values_indices(ops::SortResult r, dt_tensor** values, dt_tensor** indices) {
  write_two(std::move(r.values), std::move(r.indices), values, indices);
}
void require_values_indices(const char* fn, dt_tensor** values, dt_tensor** indices) {
  require_two_outs(fn, values, "values", indices, "indices");
}
}  // namespace

DT_API dt_status dt_sort(const dt_tensor* a, int64_t dim, int32_t descending, dt_tensor** values,
                         dt_tensor** indices) {
  return guard([&] {
    require_values_indices("dt_sort", values, indices);
    write_values_indices(ag::sort(tensor_arg(a, "dt_sort", "a"), dim, descending != 0), values, indices);
  });
}

DT_API dt_status dt_argsort(const dt_tensor* a, int64_t dim, int32_t descending, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_argsort", "out");
    *out = new_handle(ops::sort(tensor_arg(a, "dt_argsort", "a"), dim, descending != 0).indices);
  });
}

DT_API dt_status dt_topk(const dt_tensor* a, int64_t k, int64_t dim, int32_t largest, dt_tensor** values,
                         dt_tensor** indices) {
  return guard([&] {
    require_values_indices("dt_topk", values, indices);
    write_values_indices(ag::topk(tensor_arg(a, "dt_topk", "a"), k, dim, largest != 0), values, indices);
  });
}

DT_API dt_status dt_matmul(const dt_tensor* a, const dt_tensor* b, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_matmul", "out");
    Borrowed x_ref = tensor_arg(a, "dt_matmul", "a");
    const Tensor& x = x_ref;
    Borrowed y_ref = tensor_arg(b, "dt_matmul", "b");
    const Tensor& y = y_ref;
    *out = new_handle(ag::matmul(x, y));
  });
}

DT_API dt_status dt_cat(const dt_tensor* const* tensors, size_t n, int64_t dim, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_cat", "out");
    *out = new_handle(ag::cat_tensors(tensor_list("dt_cat", tensors, n), dim));
  });
}
DT_API dt_status dt_stack(const dt_tensor* const* tensors, size_t n, int64_t dim, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_stack", "out");
    *out = new_handle(ag::stack(tensor_list("dt_stack", tensors, n), dim));
  });
}

DT_API dt_status dt_chunk(const dt_tensor* t, int64_t chunks, int64_t dim, dt_tensor** outs, size_t cap,
                          size_t* count) {
  return guard([&] {
    pieces_entry(
        "dt_chunk", t, outs, cap, count, [&](const Tensor& x) { return ops::chunk_pieces(x, chunks, dim); },
        [&](const Tensor& x) { return ag::chunk(x, chunks, dim); });
  });
}
DT_API dt_status dt_split(const dt_tensor* t, int64_t split_size, int64_t dim, dt_tensor** outs, size_t cap,
                          size_t* count) {
  return guard([&] {
    pieces_entry(
        "dt_split", t, outs, cap, count, [&](const Tensor& x) { return ops::split_pieces(x, split_size, dim); },
        [&](const Tensor& x) { return ag::split(x, split_size, dim); });
  });
}

DT_API dt_status dt_index_select(const dt_tensor* t, int64_t dim, const dt_tensor* index, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_index_select", "out");
    Borrowed x_ref = tensor_arg(t, "dt_index_select", "t");
    const Tensor& x = x_ref;
    Borrowed i_ref = tensor_arg(index, "dt_index_select", "index");
    const Tensor& i = i_ref;
    *out = new_handle(ag::index_select(x, dim, i));
  });
}
DT_API dt_status dt_index_add(const dt_tensor* t, int64_t dim, const dt_tensor* index, const dt_tensor* source,
                              dt_tensor** out) {
  return guard([&] {
    require(out, "dt_index_add", "out");
    Borrowed x = tensor_arg(t, "dt_index_add", "t");
    Borrowed i = tensor_arg(index, "dt_index_add", "index");
    Borrowed s = tensor_arg(source, "dt_index_add", "source");
    *out = new_handle(ag::index_add(x, dim, i, s));
  });
}

DT_API dt_status dt_scatter_add(const dt_tensor* t, int64_t dim, const dt_tensor* index, const dt_tensor* src,
                                dt_tensor** out) {
  return guard([&] {
    require(out, "dt_scatter_add", "out");
    Borrowed x = tensor_arg(t, "dt_scatter_add", "t");
    Borrowed i = tensor_arg(index, "dt_scatter_add", "index");
    Borrowed s = tensor_arg(src, "dt_scatter_add", "src");
    *out = new_handle(ag::scatter_add(x, dim, i, s));
  });
}

DT_API dt_status dt_one_hot(const dt_tensor* indices, int64_t num_classes, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_one_hot", "out");
    Borrowed i = tensor_arg(indices, "dt_one_hot", "indices");
    *out = new_handle(ops::one_hot(i, num_classes));
  });
}

DT_API dt_status dt_nonzero(const dt_tensor* a, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_nonzero", "out");
    Borrowed x = tensor_arg(a, "dt_nonzero", "a");
    *out = new_handle(ops::nonzero(x));
  });
}

DT_API dt_status dt_masked_select(const dt_tensor* a, const dt_tensor* mask, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_masked_select", "out");
    Borrowed x = tensor_arg(a, "dt_masked_select", "a");
    Borrowed m = tensor_arg(mask, "dt_masked_select", "mask");
    *out = new_handle(ag::masked_select(x, m));
  });
}

DT_API dt_status dt_unique(const dt_tensor* a, dt_tensor** values, dt_tensor** inverse, dt_tensor** counts) {
  return guard([&] {
    const char* fn = "dt_unique";
    require(values, fn, "values");
    if (values == inverse || values == counts || (inverse && inverse == counts))
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": values, inverse and counts must be distinct pointers"));
    ops::UniqueResult r = ops::unique(tensor_arg(a, fn, "a"), inverse != nullptr, counts != nullptr);
    write_outs({{std::move(r.values), values}, {std::move(r.inverse), inverse}, {std::move(r.counts), counts}});
  });
}

DT_API dt_status dt_bincount(const dt_tensor* a, const dt_tensor* weights, int64_t minlength, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_bincount", "out");
    Borrowed x = tensor_arg(a, "dt_bincount", "a");
    if (!weights) {
      *out = new_handle(ops::bincount(x, nullptr, minlength));
      return;
    }
    Borrowed w = tensor_arg(weights, "dt_bincount", "weights");
    const Tensor& wt = w;
    *out = new_handle(ops::bincount(x, &wt, minlength));
  });
}

DT_API dt_status dt_multinomial(const dt_tensor* probs, int64_t num_samples, int32_t replacement, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_multinomial", "out");
    Borrowed p = tensor_arg(probs, "dt_multinomial", "probs");
    bool with = flag_arg(replacement, "dt_multinomial", "replacement");
    *out = new_handle(ops::multinomial(p, num_samples, with));
  });
}

DT_API dt_status dt_gather(const dt_tensor* t, int64_t dim, const dt_tensor* index, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_gather", "out");
    Borrowed x_ref = tensor_arg(t, "dt_gather", "t");
    const Tensor& x = x_ref;
    Borrowed i_ref = tensor_arg(index, "dt_gather", "index");
    const Tensor& i = i_ref;
    *out = new_handle(ag::gather(x, dim, i));
  });
}

}  // extern "C"
