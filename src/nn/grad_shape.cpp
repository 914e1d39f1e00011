// Differentiable views, moves and joins. A view's gradient is the inverse view of the
// output's gradient; a narrowed piece's is zeros with the gradient copied in.
#include <numeric>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

// Records the gradient rule "reshape the gradient back to the input's shape".
Tensor reshape_like(Tensor out, const Tensor& a, const char* name) {
  if (!should_record({&a})) return out;
  const Dims as = a.shape();
  record(out, make_node(name, [as](const Tensor& g) { return G{ops::reshape(g, as, false)}; }), {&a});
  return out;
}

// zeros of `shape` with g written into narrow(dim, start, g.size(dim)).
Tensor embed(const Tensor& g, const Dims& shape, int dim, int64_t start) {
  Tensor z = ops::full(shape, 0.0, g.dtype(), g.device());
  if (g.numel() > 0) ops::copy_(ops::narrow(z, dim, start, g.size(dim)), g);
  return z;
}

Tensor narrow_node(Tensor out, const Tensor& a, int dim, int64_t start, const char* name) {
  if (!should_record({&a})) return out;
  const Dims as = a.shape();
  record(out, make_node(name, [as, dim, start](const Tensor& g) { return G{embed(g, as, dim, start)}; }), {&a});
  return out;
}

// Each piece of a chunk/split, recorded as the slice it is.
std::vector<Tensor> pieces_node(std::vector<Tensor> pieces, const Tensor& t, int64_t dim) {
  if (!should_record({&t})) return pieces;
  const int d = wrap_dim(dim, t.ndim(), "split");
  int64_t start = 0;
  for (Tensor& p : pieces) {
    const int64_t len = p.size(d);
    p = narrow_node(p, t, d, start, "SplitBackward0");
    start += len;
  }
  return pieces;
}

}  // namespace

Tensor to(const Tensor& t, Device device, DType dtype, bool force_copy, bool non_blocking) {
  Tensor out = ops::to(t, device, dtype, force_copy, non_blocking);
  if (out.impl() == t.impl() || !should_record({&t}) || !is_floating(dtype)) return out;
  const Device d = t.device();
  const DType ty = t.dtype();
  record(out, make_node("ToCopyBackward0", [d, ty](const Tensor& g) { return G{ops::to(g, d, ty, false)}; }), {&t});
  return out;
}

Tensor contiguous(const Tensor& t) {
  Tensor out = ops::contiguous(t);
  if (out.impl() == t.impl() || !should_record({&t})) return out;
  record(out, make_node("CloneBackward0", [](const Tensor& g) { return G{g}; }), {&t});
  return out;
}

Tensor reshape(const Tensor& t, const Dims& shape, bool must_view) {
  // torch 1.13 names a reshape that is a view "ReshapeAliasBackward0"
  return reshape_like(ops::reshape(t, shape, must_view), t, must_view ? "ViewBackward0" : "ReshapeAliasBackward0");
}

Tensor flatten(const Tensor& t, int64_t start, int64_t end) {
  return reshape_like(ops::flatten(t, start, end), t, "ReshapeAliasBackward0");
}

Tensor squeeze(const Tensor& t, const int64_t* dims, size_t ndims) {
  return reshape_like(ops::squeeze(t, dims, ndims), t, ndims == 0 ? "SqueezeBackward0" : "SqueezeBackward1");
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  return reshape_like(ops::unsqueeze(t, dim), t, "UnsqueezeBackward0");
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  Tensor out = ops::transpose(t, d0, d1);
  if (!should_record({&t})) return out;
  record(out, make_node("TransposeBackward0", [d0, d1](const Tensor& g) { return G{ops::transpose(g, d0, d1)}; }),
         {&t});
  return out;
}

Tensor permute(const Tensor& t, const Dims& dims) {
  Tensor out = ops::permute(t, dims);
  if (!should_record({&t})) return out;
  Dims inverse = dims;
  for (int i = 0; i < dims.size(); ++i) inverse[wrap_dim(dims[i], t.ndim(), "permute")] = i;
  record(out, make_node("PermuteBackward0", [inverse](const Tensor& g) { return G{ops::permute(g, inverse)}; }), {&t});
  return out;
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  Tensor out = ops::narrow(t, dim, start, length);
  const int d = wrap_dim(dim, t.ndim(), "narrow");
  return narrow_node(out, t, d, start < 0 ? start + t.size(d) : start, "SliceBackward0");
}

Tensor expand(const Tensor& t, const Dims& shape) {
  Tensor out = ops::expand(t, shape);
  if (!should_record({&t})) return out;
  const Dims ts = t.shape();
  record(out, make_node("ExpandBackward0", [ts](const Tensor& g) { return G{sum_to(g, ts)}; }), {&t});
  return out;
}

Tensor cat_tensors(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor out = ops::cat_tensors(ts, dim);
  bool any = false;
  for (const Tensor& t : ts) any = any || should_record({&t});
  if (!any) return out;
  const int d = wrap_dim(dim, out.ndim(), "cat");
  std::vector<Dims> shapes;
  for (const Tensor& t : ts) shapes.push_back(t.shape());
  const int out_ndim = out.ndim();
  Node* node = make_node("CatBackward0", [shapes, d, out_ndim](const Tensor& g) {
    G grads;
    int64_t start = 0;
    for (const Dims& s : shapes) {
      if (s.size() != out_ndim) {  // a legacy empty [0] tensor cat skipped
        grads.push_back(ops::full(s, 0.0, g.dtype(), g.device()));
        continue;
      }
      grads.push_back(ops::narrow(g, d, start, s[d]));
      start += s[d];
    }
    return grads;
  });
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) inputs.push_back(&t);
  record(out, node, inputs);
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  Tensor out = ops::stack(ts, dim);
  bool any = false;
  for (const Tensor& t : ts) any = any || should_record({&t});
  if (!any) return out;
  const int d = wrap_dim(dim, out.ndim(), "stack");
  const Dims shape = ts[0].shape();
  const size_t n = ts.size();
  Node* node = make_node("StackBackward0", [shape, d, n](const Tensor& g) {
    G grads;
    for (size_t i = 0; i < n; ++i) grads.push_back(ops::reshape(ops::narrow(g, d, static_cast<int64_t>(i), 1), shape, false));
    return grads;
  });
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : ts) inputs.push_back(&t);
  record(out, node, inputs);
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  return pieces_node(ops::chunk(t, chunks, dim), t, dim);
}

std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim) {
  return pieces_node(ops::split(t, split_size, dim), t, dim);
}

namespace {
// g laid into zeros of `shape` from the start of every dim (g is no larger): the
// gradient of an operand that only some positions of a smaller index reached.
Tensor padded(const Tensor& g, const Dims& shape) {
  if (g.shape() == shape) return g;
  Tensor z = ops::full(shape, 0.0, g.dtype(), g.device());
  Tensor view = z;
  for (int i = 0; i < g.ndim(); ++i) view = ops::narrow(view, i, 0, g.size(i));
  ops::copy_(view, g);
  return z;
}
}  // namespace

// The backward of index_select is index_add and that of gather is scatter_add (and the
// reverse): O(index x row) memory, never a one-hot of the indexed dimension.
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  Tensor out = ops::index_select(t, dim, index);
  if (!should_record({&t})) return out;
  if (t.ndim() == 0) {
    record(out, make_node("IndexSelectBackward0", [](const Tensor& g) { return G{g}; }), {&t, nullptr});
    return out;
  }
  const int d = wrap_dim(dim, t.ndim(), "index_select");
  const Dims ts = t.shape();
  Tensor idx = ops::reshape(ops::to(detach(index), index.device(), DType::Int64, false), Dims{-1}, false);
  record(out, saving(make_node("IndexSelectBackward0", [ts, d, idx](const Tensor& g) {
           Tensor grad = ops::full(ts, 0.0, g.dtype(), g.device());
           ops::index_add_(grad, d, idx, g);
           return G{grad, Tensor()};
         }), {&idx}),
         {&t, nullptr});
  return out;
}

Tensor gather_backward(const Tensor& g, const Dims& shape, int dim, const Tensor& index) {
  if (shape.size() == 0) return ops::reshape(g, shape, false);
  Tensor grad = ops::full(shape, 0.0, g.dtype(), g.device());
  ops::scatter_add_(grad, dim, index, g);
  return grad;
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  Tensor out = ops::gather(t, dim, index);
  if (!should_record({&t})) return out;
  const int d = wrap_dim(dim, t.ndim() == 0 ? 1 : t.ndim(), "gather");
  const Dims ts = t.shape();
  Tensor idx = ops::to(detach(index), index.device(), DType::Int64, false);
  record(out, saving(make_node("GatherBackward0", [ts, d, idx](const Tensor& g) {
           return G{gather_backward(g, ts, d, idx), Tensor()};
         }), {&idx}),
         {&t, nullptr});
  return out;
}

Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source) {
  Tensor out = ops::index_add(t, dim, index, source);
  if (!should_record({&t, &source})) return out;
  const int d = wrap_dim(dim, t.ndim(), "index_add");
  Tensor idx = ops::reshape(ops::to(detach(index), index.device(), DType::Int64, false), Dims{-1}, false);
  const Dims ss = source.shape();
  record(out, saving(make_node("IndexAddBackward0", [d, idx, ss](const Tensor& g) {
           if (ss.size() == 0) return G{g, Tensor(), g};
           return G{g, Tensor(), ops::index_select(g, d, idx)};
         }), {&idx}),
         {&t, nullptr, &source});
  return out;
}

Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = ops::scatter_add(t, dim, index, src);
  if (!should_record({&t, &src})) return out;
  const int d = wrap_dim(dim, t.ndim(), "scatter_add");
  Tensor idx = ops::to(detach(index), index.device(), DType::Int64, false);
  const Dims ss = src.shape();
  const bool scalar = t.ndim() == 0;
  record(out, saving(make_node("ScatterAddBackward0", [d, idx, ss, scalar](const Tensor& g) {
           // src's gradient: g at the positions index names, 0 where index does not reach
           Tensor picked = scalar ? ops::gather(ops::reshape(g, Dims{1}, false), 0, ops::reshape(idx, Dims{-1}, false))
                                  : ops::gather(g, d, idx);
           if (scalar) picked = ops::reshape(picked, idx.shape(), false);
           return G{g, Tensor(), padded(picked, ss)};
         }), {&idx}),
         {&t, nullptr, &src});
  return out;
}

}  // namespace dt::ag
