// torch.flip, torch.roll and Tensor.repeat (functions.h): each is index_select along the
// dims it touches, with an index made on the tensor's device from aranges (no copy from
// the host, so a GPU stream does not wait and a graph capture takes them), and one
// autograd node with PyTorch's name: flip and roll are permutations, so their gradients
// are the inverse permutation of g; repeat's adds the copies back with index_add.
#include <set>

#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"
#include "ops/window.h"  // check_numel_fits

namespace dt::ag {
namespace {

using G = std::vector<Tensor>;

Tensor range(int64_t start, int64_t end, int64_t step, Device device) {
  return ops::arange(static_cast<double>(start), static_cast<double>(end), static_cast<double>(step), DT_INT64, device);
}

// Each dim once, wrapped; INVALID_ARGUMENT naming op otherwise.
std::vector<int> distinct_dims(const int64_t* dims, size_t ndims, int ndim, const char* op) {
  std::vector<int> out;
  std::set<int> seen;
  for (size_t i = 0; i < ndims; ++i) {
    const int d = wrap_dim(dims[i], ndim, op);
    if (!seen.insert(d).second)
      fail(DT_ERR_INVALID_ARGUMENT, cat(op, ": dim ", d, " appears multiple times in the list of dims"));
    out.push_back(d);
  }
  return out;
}

// flip along each of dims (distinct, wrapped); a 0-d tensor is its own flip.
Tensor flip_raw(const Tensor& t, const std::vector<int>& dims) {
  Tensor out = t;
  for (int d : dims) {
    if (t.ndim() == 0) break;
    const int64_t n = t.size(d);
    out = ops::index_select(out, d, range(n - 1, -1, -1, t.device()));
  }
  return out.impl() == t.impl() ? ops::to(t, t.device(), t.dtype(), true) : out;  // always a new tensor
}

// roll by shifts[i] (in [0, n)) along dims[i]: element k goes to (k + shift) mod n.
Tensor roll_raw(const Tensor& t, const std::vector<int64_t>& shifts, const std::vector<int>& dims) {
  Tensor out = t;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int d = dims[i];
    const int64_t n = t.size(d);
    if (n == 0) continue;
    const int64_t s = shifts[i];  // in [0, n)
    if (s == 0) continue;
    // out[k] = in[(k - s) mod n]: first the last s elements, then the others
    const Tensor index = ops::cat_tensors({range(n - s, n, 1, t.device()), range(0, n - s, 1, t.device())}, 0);
    out = ops::index_select(out, d, index);
  }
  return out.impl() == t.impl() ? ops::to(t, t.device(), t.dtype(), true) : out;
}

}  // namespace

Tensor flip(const Tensor& t, const int64_t* dims, size_t ndims) {
  const std::vector<int> ds = distinct_dims(dims, ndims, t.ndim(), "flip");
  Tensor out = flip_raw(t, ds);
  if (!should_record({&t})) return out;
  record(out, make_node("FlipBackward0", [ds](const Tensor& g) { return G{flip_raw(g, ds)}; }), {&t});
  return out;
}

Tensor roll(const Tensor& t, const int64_t* shifts, size_t nshifts, const int64_t* dims, size_t ndims) {
  if (nshifts == 0) fail(DT_ERR_INVALID_ARGUMENT, "roll: shifts required (at least one)");
  if (ndims != 0 && nshifts != ndims)
    fail(DT_ERR_INVALID_ARGUMENT, cat("roll: shifts and dims must align: ", nshifts, " shifts, ", ndims, " dims"));
  if (ndims == 0 && nshifts != 1)
    fail(DT_ERR_INVALID_ARGUMENT, cat("roll: without dims the tensor is rolled flattened, by one shift; got ", nshifts,
                                      " shifts"));
  const bool flat = ndims == 0;
  std::vector<int> ds;
  for (size_t i = 0; i < ndims; ++i) ds.push_back(wrap_dim(dims[i], t.ndim(), "roll"));  // a dim may repeat (rolls twice)
  if (flat) ds.push_back(0);
  // Shifts taken mod the dim's size, into [0, n) (any int64, INT64_MIN included), and
  // the shifts that undo them.
  std::vector<int64_t> fwd, back;
  for (size_t i = 0; i < nshifts; ++i) {
    const int64_t n = flat ? t.numel() : t.size(ds[i]);
    int64_t s = n == 0 ? 0 : shifts[i] % n;
    if (s < 0) s += n;
    fwd.push_back(s);
    back.push_back(s == 0 ? 0 : n - s);
  }
  const Dims shape = t.shape();
  auto run = [shape, flat, ds](const Tensor& x, const std::vector<int64_t>& s) {
    if (!flat) return roll_raw(x, s, ds);
    return ops::reshape(roll_raw(ops::reshape(x, Dims{x.numel()}, false), s, ds), shape, false);
  };
  Tensor out = run(t, fwd);
  if (!should_record({&t})) return out;
  record(out, make_node("RollBackward0", [run, back](const Tensor& g) { return G{run(g, back)}; }), {&t});
  return out;
}

Tensor repeat(const Tensor& t, const int64_t* repeats, size_t n) {
  if (n < static_cast<size_t>(t.ndim()))
    fail(DT_ERR_INVALID_ARGUMENT, cat("repeat: the number of repeats (", n,
                                      ") can not be smaller than the tensor's number of dims (", t.ndim(), ")"));
  if (n > static_cast<size_t>(kMaxDims))
    fail(DT_ERR_INVALID_ARGUMENT, cat("repeat: ", n, " repeats, but a tensor has at most ", kMaxDims, " dims"));
  // t seen with leading dims of 1 up to n dims (a view)
  Dims lifted;
  for (size_t i = 0; i < n - static_cast<size_t>(t.ndim()); ++i) lifted.push(1);
  for (int d = 0; d < t.ndim(); ++d) lifted.push(t.size(d));
  Dims result;
  for (size_t i = 0; i < n; ++i) {
    if (repeats[i] < 0)
      fail(DT_ERR_INVALID_ARGUMENT, cat("repeat: repeats[", i, "] is ", repeats[i], "; repeats must be >= 0"));
    const int64_t s = lifted[static_cast<int>(i)];
    if (s != 0 && repeats[i] > INT64_MAX / s)
      fail(DT_ERR_INVALID_ARGUMENT, cat("repeat: ", repeats[i], " x ", s, " elements along dim ", i, " overflow int64"));
    result.push(repeats[i] * s);
  }
  ops::check_numel_fits("repeat", "the result", result);
  // The index of dim i: 0, 1, ..., s-1 repeated r times (an arange expanded, made contiguous).
  auto index_of = [](int64_t r, int64_t s, Device device) {
    return ops::contiguous(ops::reshape(ops::expand(ops::reshape(range(0, s, 1, device), Dims{1, s}, false), Dims{r, s}),
                                        Dims{r * s}, false));
  };
  Tensor out = ops::reshape(t, lifted, false);
  std::vector<int> touched;
  for (size_t i = 0; i < n; ++i) {
    if (repeats[i] == 1) continue;
    touched.push_back(static_cast<int>(i));
    out = ops::index_select(out, static_cast<int64_t>(i), index_of(repeats[i], lifted[static_cast<int>(i)], t.device()));
  }
  if (touched.empty()) out = ops::to(out, out.device(), out.dtype(), true);  // always a new tensor
  if (!should_record({&t})) return out;
  const std::vector<int64_t> reps(repeats, repeats + n);
  const Dims original = t.shape();
  record(out,
         make_node("RepeatBackward0",
                   [reps, lifted, touched, original, index_of](const Tensor& g) {
                     // Undo the dims in reverse: the copies of each element summed into it.
                     Tensor acc = g;
                     for (size_t k = touched.size(); k-- > 0;) {
                       const int d = touched[k];
                       Dims shape = acc.shape();
                       shape[d] = lifted[d];
                       acc = ops::index_add(ops::full(shape, 0.0, acc.dtype(), acc.device()), d,
                                            index_of(reps[static_cast<size_t>(d)], lifted[d], acc.device()), acc);
                     }
                     return G{ops::reshape(acc, original, false)};
                   }),
         {&t});
  return out;
}

}  // namespace dt::ag
