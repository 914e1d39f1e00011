// fuzz_autograd.cpp — libFuzzer target for reverse-mode autograd: the gradients of random
// compositions of differentiable ops, checked against finite differences.
//
// The other targets run backward only to see that it does not crash (fuzz_nn, through
// the sum of one call's result); the reference tests compare each op's gradient with
// PyTorch on fixed cases. This target checks the VALUES of gradients through programs no
// test wrote: broadcasting, views (reshape, transpose, permute, narrow, squeeze,
// unsqueeze, expand, flatten), joins and splits, indexing (index_select, gather,
// index_add, scatter_add), reductions over any dims with or without keepdim, var/std,
// softmax, matmul of any ranks, where/masked_fill/clamp/triu, convolutions, pooling,
// normalisation, embedding and attention with geometry drawn from the input, a leaf used
// several times, and parts cut from the graph by detach or by grad mode off.
//
// Each input is a program: float64 leaves that require grad (small shapes that often
// broadcast together, values from a generator seeded by the input), then up to kMaxSteps
// ops, each on the leaves and earlier results, some with leaves of their own (a conv's
// weight, a matmul's right operand, index_add's source). The last float64 result that
// requires grad is the output; backward runs through it with a random upstream gradient
// W. The properties checked, a violation aborting with a message (a crash for libFuzzer):
//   - every call succeeds, or fails with a documented status other than DT_ERR_INTERNAL
//     and a message, leaving its out-parameter untouched (as in the other targets);
//   - backward succeeds; each leaf's .grad is NULL or has the leaf's shape and dtype;
//   - replaying the program with grad mode off gives the forward's values;
//   - for up to kMaxChecks leaf elements x, d(sum(out * W))/dx from .grad agrees with the
//     central differences of the replayed program at steps h, 2h and 4h, whenever those
//     three agree with one another (they disagree near a kink of relu, abs, max, a
//     comparison, ..., where the derivative is not defined: those elements are skipped,
//     as are programs whose values leave [-1e4, 1e4] or are not finite);
//   - a second backward through the same graph adds the same gradients again, up to
//     rounding (the graph is kept, as documented), and a backward with a wrongly shaped gradient fails
//     with DT_ERR_SHAPE_MISMATCH and leaves every .grad as it was;
//   - at the end of the input, once everything is released, dt_live_handle_count() is
//     what it was at the start (ASan's leak check runs after each input too).
// FUZZ_AUTOGRAD_TRACE=1 prints the program, each call's outcome and each comparison.
#include <devtensor.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define FUZZ_NAME "fuzz_autograd"
#include "fuzz_require.h"
// fuzz_input.h uses fuzz_require.h's REQUIRE
#include "fuzz_input.h"

namespace {

using fuzz::g_op;
using fuzz::g_trace;
using fuzz::ok;
using fuzz::trace_pair;
using Shape = std::vector<int64_t>;

constexpr int kMaxSteps = 8;
constexpr int kMaxChecks = 6;       // leaf elements checked by finite differences per input
constexpr double kMaxValue = 1e4;   // larger values make finite differences too noisy
constexpr int64_t kMaxNumel = 256;  // results larger than this end the program
const dt_device kCpu{DT_DEVICE_CPU, 0};

// ---------------------------------------------------------------- tensors

Shape shape_of(const dt_tensor* t) {
  size_t nd = 0;
  REQUIRE(dt_tensor_ndim(t, &nd) == DT_OK, "ndim");
  Shape s(nd);
  REQUIRE(dt_tensor_shape(t, s.data(), nd) == DT_OK, "shape");
  return s;
}
int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
dt_dtype dtype_of(const dt_tensor* t) {
  dt_dtype dt = 0;
  REQUIRE(dt_tensor_dtype(t, &dt) == DT_OK, "dtype");
  return dt;
}
// The elements of a float64 tensor.
std::vector<double> values_of(const dt_tensor* t) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape_of(t))));
  REQUIRE(dt_tensor_copy_to_host(t, v.data(), v.size() * sizeof(double)) == DT_OK, "copy_to_host");
  return v;
}
dt_tensor* make_tensor(const Shape& s, const void* data, size_t nbytes, dt_dtype dt) {
  dt_tensor* t = nullptr;
  REQUIRE(dt_tensor_from_data(data, nbytes, s.data(), s.size(), dt, kCpu, &t) == DT_OK, "from_data");
  return t;
}
dt_tensor* make_f64(const Shape& s, const std::vector<double>& v) {
  return make_tensor(s, v.data(), v.size() * sizeof(double), DT_FLOAT64);
}
void release(dt_tensor* t) { REQUIRE(dt_tensor_release(t) == DT_OK, "release"); }

void trace_shape(const char* what, const Shape& s) {
  if (!g_trace) return;
  fprintf(stderr, "  %s [", what);
  for (size_t i = 0; i < s.size(); ++i) fprintf(stderr, i ? ", %lld" : "%lld", (long long)s[i]);
  fprintf(stderr, "]\n");
}

// ---------------------------------------------------------------- the program

// A step computes one tensor from the program's earlier tensors (v: every node so far,
// in order). It runs once with grad mode on, then again, with grad mode off, in every
// replay. The tensors it captures (indices, masks) are constants the program holds.
using StepFn = std::function<dt_status(const std::vector<dt_tensor*>& v, dt_tensor** out)>;

enum class Kind { Leaf, Step, Frozen };  // Frozen: cut from the graph; replays reuse its value
struct Node {
  Kind kind;
  dt_tensor* t;  // the forward tensor (owned)
  StepFn fn;     // Kind::Step
};

class Program {
 public:
  Program(const uint8_t* data, size_t size) : in_(data, size) {}

  void run() {
    rng_ = static_cast<uint64_t>(in_.small(0, INT64_MAX)) | 1;
    make_first_leaves();
    for (int i = 0; i < kMaxSteps && in_.more() && !too_big_; ++i) step();
    check_gradients();
    for (Node& n : nodes_) release(n.t);
    for (dt_tensor* t : consts_) release(t);
    nodes_.clear();
    consts_.clear();
    fuzz::require_no_handle_left();
  }

 private:
  fuzz::Input in_;
  uint64_t rng_ = 1;
  std::vector<Node> nodes_;
  std::vector<dt_tensor*> consts_;  // index tensors, masks, W: no grad, released at the end
  // Leaf elements whose gradient is 0 by definition, not by calculus (an embedding's
  // padding_idx row, as in PyTorch): no finite differences for them.
  std::vector<std::pair<size_t, size_t>> no_gradient_;
  bool too_big_ = false;

  // ------------------------------------------------------------ drawing values

  double uniform() {  // splitmix64, in [0, 1)
    uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }
  // A leaf value: in [-1.5, 1.5], away from 0 (where log, sqrt, div and abs are not
  // smooth) by at least 0.1.
  double leaf_value() {
    double x = 0.1 + 1.4 * uniform();
    return uniform() < 0.5 ? -x : x;
  }
  int64_t upto(int64_t hi) { return in_.small(0, hi); }  // in [0, hi]
  int64_t dim_in(size_t nd) { return nd == 0 ? 0 : in_.small(-static_cast<int64_t>(nd), static_cast<int64_t>(nd) - 1); }

  // A node index: usually the latest, else any.
  size_t pick() {
    size_t i = in_.rarely(2) ? nodes_.size() - 1 : static_cast<size_t>(upto(nodes_.size() - 1));
    if (g_trace) fprintf(stderr, "  operand: node %zu\n", i);
    return i;
  }
  // A node of float64 dtype (the differentiable ones), or SIZE_MAX when none.
  size_t pick_float() {
    size_t i = pick();
    for (size_t k = 0; k < nodes_.size(); ++k, i = (i + 1) % nodes_.size())
      if (dtype_of(nodes_[i].t) == DT_FLOAT64) return i;
    return SIZE_MAX;
  }
  Shape shape(size_t i) const { return shape_of(nodes_[i].t); }

  // A new leaf of shape s that requires grad; returns its node index.
  size_t leaf(const Shape& s) {
    std::vector<double> v(static_cast<size_t>(numel_of(s)));
    for (double& x : v) x = leaf_value();
    dt_tensor* t = make_f64(s, v);
    REQUIRE(dt_tensor_set_requires_grad(t, 1) == DT_OK, "set_requires_grad");
    nodes_.push_back(Node{Kind::Leaf, t, nullptr});
    trace_shape("leaf", s);
    return nodes_.size() - 1;
  }
  // Constants the steps capture.
  dt_tensor* constant(dt_tensor* t) {
    consts_.push_back(t);
    return t;
  }
  dt_tensor* random_f64(const Shape& s) {
    std::vector<double> v(static_cast<size_t>(numel_of(s)));
    for (double& x : v) x = 2 * uniform() - 1;
    return constant(make_f64(s, v));
  }
  dt_tensor* random_bool(const Shape& s) {
    std::vector<unsigned char> v(static_cast<size_t>(numel_of(s)));
    for (auto& x : v) x = uniform() < 0.5;
    return constant(make_tensor(s, v.data(), v.size(), DT_BOOL));
  }
  // An int64 tensor of shape s with values in [0, hi) (rarely one out of range).
  dt_tensor* indices(const Shape& s, int64_t hi) {
    std::vector<int64_t> v(static_cast<size_t>(numel_of(s)));
    for (auto& x : v) x = hi > 0 ? static_cast<int64_t>(uniform() * hi) : 0;
    if (!v.empty() && in_.rarely(24)) v[0] = in_.rarely(2) ? hi : -hi - 1;
    return constant(make_tensor(s, v.data(), v.size() * sizeof(int64_t), DT_INT64));
  }

  // The first leaves: up to three, of shapes cut from one base shape (a suffix of it with
  // some sizes set to 1), so that binary ops often broadcast.
  void make_first_leaves() {
    Shape base(static_cast<size_t>(upto(3)) + (in_.rarely(8) ? 0 : 1));
    for (auto& d : base) d = in_.small(in_.rarely(12) ? 0 : 1, 4);
    int n = static_cast<int>(in_.small(1, 3));
    for (int i = 0; i < n; ++i) {
      Shape s(base.begin() + static_cast<std::ptrdiff_t>(upto(base.size())), base.end());
      for (auto& d : s)
        if (in_.rarely(4)) d = 1;
      leaf(s);
    }
  }

  // A shape of nd dims whose product is n (each size a divisor of what is left).
  Shape factor(int64_t n, size_t nd) {
    Shape s(nd, 1);
    if (nd == 0) return s;
    for (size_t i = 0; i + 1 < nd; ++i) {
      std::vector<int64_t> divs;
      for (int64_t d = 1; d <= n; ++d)
        if (n % d == 0) divs.push_back(d);
      s[i] = n == 0 ? in_.small(0, 2) : divs[static_cast<size_t>(upto(static_cast<int64_t>(divs.size()) - 1))];
      if (n != 0) n /= s[i];
    }
    s[nd - 1] = n;
    return s;
  }

  // ------------------------------------------------------------ running a step

  // Runs fn now (grad mode on); on success the result joins the program as a node.
  void add(const char* op, StepFn fn, bool frozen = false) {
    g_op = op;
    dt_tensor* out = static_cast<dt_tensor*>(fuzz::kUntouched);
    std::vector<dt_tensor*> v;
    for (Node& n : nodes_) v.push_back(n.t);
    if (!ok(fn(v, &out))) {
      REQUIRE(out == fuzz::kUntouched, "%s failed but wrote *out (%p)", op, (void*)out);
      return;
    }
    REQUIRE(out != nullptr && out != fuzz::kUntouched, "%s: success without a result", op);
    fuzz::check_tensor(out);
    nodes_.push_back(Node{frozen ? Kind::Frozen : Kind::Step, out, frozen ? nullptr : std::move(fn)});
    const Shape s = shape_of(out);
    trace_shape("->", s);
    if (numel_of(s) > kMaxNumel) too_big_ = true;
  }

  // A step on one float node x: fn(x, out).
  template <typename F>
  void unary_step(const char* op, F f) {
    size_t x = pick_float();
    if (x == SIZE_MAX) return;
    add(op, [x, f](const std::vector<dt_tensor*>& v, dt_tensor** out) { return f(v[x], out); });
  }

  void step() {
    switch (in_.pick(22)) {
      case 0: {  // unary ops
        using Fn = dt_status (*)(const dt_tensor*, dt_tensor**);
        static const Fn fns[] = {dt_neg, dt_abs,  dt_exp,     dt_log,  dt_sqrt, dt_rsqrt, dt_sin,
                                 dt_cos, dt_relu, dt_sigmoid, dt_tanh, dt_gelu, dt_silu,  dt_erf};
        Fn fn = fns[in_.pick(14)];
        unary_step("unary", [fn](const dt_tensor* a, dt_tensor** out) { return fn(a, out); });
        break;
      }
      case 1:
      case 2: {  // binary ops, two nodes broadcast together
        using Fn = dt_status (*)(const dt_tensor*, const dt_tensor*, dt_tensor**);
        static const Fn fns[] = {dt_add, dt_sub, dt_mul, dt_div, dt_pow, dt_maximum, dt_minimum};
        static const char* names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum"};
        int k = in_.pick(7);
        size_t a = pick(), b = in_.rarely(4) ? a : pick();
        Fn fn = fns[k];
        add(names[k], [a, b, fn](const std::vector<dt_tensor*>& v, dt_tensor** out) { return fn(v[a], v[b], out); });
        break;
      }
      case 3: {  // scalar forms
        using Fn = dt_status (*)(const dt_tensor*, double, dt_tensor**);
        static const Fn fns[] = {dt_add_scalar, dt_sub_scalar,     dt_mul_scalar,    dt_div_scalar,
                                 dt_pow_scalar, dt_maximum_scalar, dt_minimum_scalar};
        static const double scalars[] = {2.0, -1.0, 0.5, 3.0, 0.0, -0.75, 1.0};
        Fn fn = fns[in_.pick(7)];
        double s = scalars[in_.pick(7)];
        unary_step("scalar op", [fn, s](const dt_tensor* a, dt_tensor** out) { return fn(a, s, out); });
        break;
      }
      case 4: {  // a comparison (a bool node, for where and masked_fill)
        using Fn = dt_status (*)(const dt_tensor*, double, dt_tensor**);
        static const Fn fns[] = {dt_lt_scalar, dt_gt_scalar, dt_ge_scalar};
        Fn fn = fns[in_.pick(3)];
        double s = in_.pick(2) ? 0.0 : 0.5;
        unary_step("compare", [fn, s](const dt_tensor* a, dt_tensor** out) { return fn(a, s, out); });
        break;
      }
      case 5:
        where_or_masked_fill();
        break;
      case 6: {  // clamp
        static const double bounds[] = {-0.5, 0.0, 0.5, 1.0};
        bool has_min = !in_.rarely(3), has_max = !has_min || !in_.rarely(2);
        double lo = bounds[in_.pick(4)], hi = bounds[in_.pick(4)];
        unary_step("clamp", [=](const dt_tensor* a, dt_tensor** out) {
          return dt_clamp(a, has_min ? &lo : nullptr, has_max ? &hi : nullptr, out);
        });
        break;
      }
      case 7:
      case 8:
        reduction();
        break;
      case 9: {  // softmax / log_softmax
        size_t x = pick_float();
        if (x == SIZE_MAX) return;
        int64_t dim = dim_in(shape(x).size());
        bool log = in_.pick(2);
        add(log ? "log_softmax" : "softmax", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return log ? dt_log_softmax(v[x], dim, out) : dt_softmax(v[x], dim, out);
        });
        break;
      }
      case 10:
        matmul();
        break;
      case 11:
      case 12:
        view();
        break;
      case 13:
        join();
        break;
      case 14:
        split();
        break;
      case 15:
        indexing();
        break;
      case 16: {  // triu / tril
        int64_t diag = in_.small(-2, 2);
        bool upper = in_.pick(2);
        unary_step(upper ? "triu" : "tril", [=](const dt_tensor* a, dt_tensor** out) {
          return upper ? dt_triu(a, diag, out) : dt_tril(a, diag, out);
        });
        break;
      }
      case 17:
        convolution();
        break;
      case 18:
        pooling();
        break;
      case 19:
        normalisation();
        break;
      case 20:
        embedding_or_attention();
        break;
      case 21: {  // cut from the graph: detach, or an op under grad mode off
        // Scaled by a factor no other step uses: an exact copy of a value that stays in
        // the graph would tie with it in max, min or maximum, a kink right at the point,
        // where finite differences see the mean of the two one-sided slopes.
        constexpr double kFactor = 1.0625;
        size_t x = pick_float();
        if (x == SIZE_MAX) return;
        if (in_.pick(2)) {
          add(
              "detach",
              [x](const std::vector<dt_tensor*>& v, dt_tensor** out) {
                dt_tensor* d = nullptr;
                dt_status st = dt_tensor_detach(v[x], &d);
                if (st != DT_OK) return st;
                st = dt_mul_scalar(d, kFactor, out);
                release(d);
                return st;
              },
              true);
        } else {
          add(
              "mul_scalar without grad",
              [x](const std::vector<dt_tensor*>& v, dt_tensor** out) {
                REQUIRE(dt_set_grad_enabled(0) == DT_OK, "grad off");
                dt_status st = dt_mul_scalar(v[x], kFactor, out);
                REQUIRE(dt_set_grad_enabled(1) == DT_OK, "grad on");
                return st;
              },
              true);
        }
        break;
      }
    }
  }

  void where_or_masked_fill() {
    size_t a = pick_float();
    if (a == SIZE_MAX) return;
    const Shape sa = shape(a);
    // The condition: a bool node when the program has one, else a random constant.
    dt_tensor* mask = nullptr;
    size_t cond_node = SIZE_MAX;
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (dtype_of(nodes_[i].t) == DT_BOOL && in_.pick(2)) cond_node = i;
    if (cond_node == SIZE_MAX) mask = random_bool(sa);
    if (in_.pick(2)) {
      double value = in_.pick(2) ? 0.0 : -2.0;
      add("masked_fill", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
        return dt_masked_fill(v[a], mask ? mask : v[cond_node], value, out);
      });
    } else {
      size_t b = pick();
      add("where", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
        return dt_where(mask ? mask : v[cond_node], v[a], v[b], out);
      });
    }
  }

  // Dims to reduce: none (all), or a few of them, some counted from the end.
  std::vector<int64_t> some_dims(size_t nd) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < nd; ++d)
      if (in_.pick(2))
        dims.push_back(in_.pick(2) ? static_cast<int64_t>(d) : static_cast<int64_t>(d) - static_cast<int64_t>(nd));
    return dims;
  }

  void reduction() {
    size_t x = pick_float();
    if (x == SIZE_MAX) return;
    std::vector<int64_t> dims = some_dims(shape(x).size());
    int32_t keep = in_.pick(2);
    int kind = in_.pick(9);
    double correction = in_.pick(2);
    static const char* names[] = {"sum", "mean", "max", "min", "var", "std", "logsumexp", "vector_norm", "vector_norm"};
    const double ord = in_.pick(2) ? 2.0 : (in_.pick(2) ? 1.0 : 3.0);
    add(names[kind], [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      const int64_t* d = dims.empty() ? nullptr : dims.data();
      switch (kind) {
        case 0:
          return dt_sum(v[x], d, dims.size(), keep, out);
        case 1:
          return dt_mean(v[x], d, dims.size(), keep, out);
        case 2:
          return dt_max(v[x], d, dims.size(), keep, out);
        case 3:
          return dt_min(v[x], d, dims.size(), keep, out);
        case 4:
          return dt_var(v[x], d, dims.size(), correction, keep, out);
        case 5:
          return dt_std(v[x], d, dims.size(), correction, keep, out);
        case 6:
          return dt_logsumexp(v[x], d, dims.size(), keep, out);
        default:
          return dt_vector_norm(v[x], ord, d, dims.size(), keep, out);
      }
    });
  }

  // matmul of a node with a new leaf of a fitting shape (rarely with another node).
  void matmul() {
    size_t a = pick_float();
    if (a == SIZE_MAX) return;
    const Shape sa = shape(a);
    size_t b;
    if (in_.rarely(6) || sa.empty()) {
      b = pick();
    } else {
      int64_t k = sa.back();
      Shape sb;
      switch (in_.pick(3)) {
        case 0:
          sb = {k};
          break;
        case 1:
          sb = {k, in_.small(1, 3)};
          break;
        default:  // batched: a batch dim that broadcasts against a's
          sb = {in_.pick(2) ? 1 : in_.small(1, 2), k, in_.small(1, 3)};
          if (sa.size() >= 3 && in_.pick(2)) sb[0] = sa[sa.size() - 3];
      }
      b = leaf(sb);
    }
    bool swap = in_.rarely(4);  // b @ a
    add("matmul", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      return swap ? dt_matmul(v[b], v[a], out) : dt_matmul(v[a], v[b], out);
    });
  }

  void view() {
    size_t x = pick_float();
    if (x == SIZE_MAX) return;
    const Shape s = shape(x);
    const size_t nd = s.size();
    switch (in_.pick(10)) {
      case 0: {  // reshape, sometimes with -1
        Shape to = factor(numel_of(s), static_cast<size_t>(in_.small(0, 4)));
        if (!to.empty() && numel_of(s) > 0 && in_.pick(2)) to[static_cast<size_t>(upto(to.size() - 1))] = -1;
        if (numel_of(s) != 1 && to.empty()) return;
        add("reshape", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_reshape(v[x], to.data(), to.size(), out);
        });
        break;
      }
      case 1: {
        int64_t d0 = dim_in(nd), d1 = dim_in(nd);
        add("transpose",
            [=](const std::vector<dt_tensor*>& v, dt_tensor** out) { return dt_transpose(v[x], d0, d1, out); });
        break;
      }
      case 2: {
        std::vector<int64_t> perm(nd);
        for (size_t i = 0; i < nd; ++i) perm[i] = static_cast<int64_t>(i);
        for (size_t i = nd; i > 1; --i) std::swap(perm[i - 1], perm[static_cast<size_t>(upto(i - 1))]);
        add("permute", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_permute(v[x], perm.data(), perm.size(), out);
        });
        break;
      }
      case 3: {
        if (nd == 0) return;
        int64_t dim = dim_in(nd), size = s[static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(nd) : dim)];
        int64_t start = upto(size), length = upto(size - start);
        add("narrow", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_narrow(v[x], dim, start, length, out);
        });
        break;
      }
      case 4: {
        std::vector<int64_t> dims = in_.pick(2) ? some_dims(nd) : std::vector<int64_t>{};
        add("squeeze", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_squeeze(v[x], dims.empty() ? nullptr : dims.data(), dims.size(), out);
        });
        break;
      }
      case 5: {
        int64_t dim = in_.small(-static_cast<int64_t>(nd) - 1, static_cast<int64_t>(nd));
        add("unsqueeze",
            [=](const std::vector<dt_tensor*>& v, dt_tensor** out) { return dt_unsqueeze(v[x], dim, out); });
        break;
      }
      case 6: {  // expand size-1 dims, sometimes under a new leading dim; then maybe a copy
        Shape to = s;
        for (auto& d : to)
          if (d == 1)
            d = in_.small(1, 3);
          else if (in_.rarely(4))
            d = -1;
        if (in_.pick(2)) to.insert(to.begin(), in_.small(1, 3));
        bool copy = in_.pick(2);
        add("expand", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          if (!copy) return dt_expand(v[x], to.data(), to.size(), out);
          dt_tensor* e = nullptr;
          dt_status st = dt_expand(v[x], to.data(), to.size(), &e);
          if (st != DT_OK) return st;
          st = dt_contiguous(e, out);
          release(e);
          return st;
        });
        break;
      }
      case 7: {
        int64_t a = dim_in(nd), b = dim_in(nd);
        add("flatten", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) { return dt_flatten(v[x], a, b, out); });
        break;
      }
      case 8: {  // flip, roll or repeat (copies that reorder or tile)
        const int which = in_.pick(3);
        std::vector<int64_t> dims = some_dims(nd), amounts;
        for (size_t i = 0; i < (which == 2 ? nd + static_cast<size_t>(in_.pick(2)) : dims.size()); ++i)
          amounts.push_back(which == 2 ? in_.small(0, 3) : in_.small(-5, 5));
        if (which == 1 && dims.empty()) amounts = {in_.small(-7, 7)};  // flattened
        add(which == 0 ? "flip" : which == 1 ? "roll" : "repeat", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          const int64_t* d = dims.empty() ? nullptr : dims.data();
          const int64_t* a = amounts.empty() ? nullptr : amounts.data();
          if (which == 0) return dt_flip(v[x], d, dims.size(), out);
          if (which == 1) return dt_roll(v[x], a, amounts.size(), d, dims.size(), out);
          return dt_repeat(v[x], a, amounts.size(), out);
        });
        break;
      }
      default:  // contiguous (of a transposed view: a real copy)
        add("contiguous", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          if (nd < 2) return dt_contiguous(v[x], out);
          dt_tensor* t = nullptr;
          dt_status st = dt_transpose(v[x], 0, -1, &t);
          if (st != DT_OK) return st;
          st = dt_contiguous(t, out);
          release(t);
          return st;
        });
    }
  }

  // cat / stack of 2 or 3 nodes (often one node twice, or nodes of one shape).
  void join() {
    size_t a = pick_float();
    if (a == SIZE_MAX) return;
    std::vector<size_t> parts{a};
    int n = static_cast<int>(in_.small(2, 3));
    for (int i = 1; i < n; ++i) {
      size_t p = a;
      if (in_.pick(2)) {
        for (size_t k = 0; k < nodes_.size(); ++k)
          if (k != a && shape(k) == shape(a) && in_.pick(2)) p = k;
        if (in_.rarely(4)) p = pick();
      }
      parts.push_back(p);
    }
    bool stack = in_.pick(2);
    const size_t nd = shape(a).size();
    int64_t dim = stack ? in_.small(-static_cast<int64_t>(nd) - 1, static_cast<int64_t>(nd)) : dim_in(nd);
    add(stack ? "stack" : "cat", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      std::vector<const dt_tensor*> ts;
      for (size_t p : parts) ts.push_back(v[p]);
      return stack ? dt_stack(ts.data(), ts.size(), dim, out) : dt_cat(ts.data(), ts.size(), dim, out);
    });
  }

  // One piece of chunk / split.
  void split() {
    size_t x = pick_float();
    if (x == SIZE_MAX) return;
    int64_t dim = dim_in(shape(x).size()), n = in_.small(1, 3);
    bool chunk = in_.pick(2);
    size_t piece = static_cast<size_t>(upto(3));
    add(chunk ? "chunk" : "split", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      size_t count = 0;  // the count first (cap 0), then the pieces
      dt_status st = chunk ? dt_chunk(v[x], n, dim, nullptr, 0, &count) : dt_split(v[x], n, dim, nullptr, 0, &count);
      if (st != DT_OK) return st;
      std::vector<dt_tensor*> outs(count);
      size_t again = 0;
      st = chunk ? dt_chunk(v[x], n, dim, outs.data(), count, &again)
                 : dt_split(v[x], n, dim, outs.data(), count, &again);
      REQUIRE(st == DT_OK && again == count, "%s: %zu pieces, then %zu (status %d)", g_op, count, again, (int)st);
      if (count == 0) return dt_narrow(v[x], dim, 0, 0, out);  // no piece: an empty slice
      size_t keep = piece % count;
      for (size_t i = 0; i < count; ++i)
        if (i != keep) release(outs[i]);
      *out = outs[keep];
      return DT_OK;
    });
  }

  void indexing() {
    size_t x = pick_float();
    if (x == SIZE_MAX) return;
    const Shape s = shape(x);
    const size_t nd = s.size();
    if (nd == 0) return;
    const int64_t dim = dim_in(nd);
    const size_t d = static_cast<size_t>(dim < 0 ? dim + static_cast<int64_t>(nd) : dim);
    switch (in_.pick(4)) {
      case 0: {
        dt_tensor* index = indices({in_.small(0, 4)}, s[d]);
        add("index_select",
            [=](const std::vector<dt_tensor*>& v, dt_tensor** out) { return dt_index_select(v[x], dim, index, out); });
        break;
      }
      case 1: {
        Shape is = s;
        for (size_t i = 0; i < nd; ++i) is[i] = i == d ? in_.small(0, 3) : upto(s[i]);
        dt_tensor* index = indices(is, s[d]);
        add("gather",
            [=](const std::vector<dt_tensor*>& v, dt_tensor** out) { return dt_gather(v[x], dim, index, out); });
        break;
      }
      case 2: {  // index_add of a new leaf
        int64_t n = in_.small(0, 3);
        dt_tensor* index = indices({n}, s[d]);
        Shape ss = s;
        ss[d] = n;
        size_t src = leaf(ss);
        add("index_add", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_index_add(v[x], dim, index, v[src], out);
        });
        break;
      }
      default: {  // scatter_add of a new leaf
        Shape ss = s, is = s;
        for (size_t i = 0; i < nd; ++i) {
          ss[i] = i == d ? in_.small(1, 3) : s[i];
          is[i] = upto(ss[i]);
        }
        dt_tensor* index = indices(is, s[d]);
        size_t src = leaf(ss);
        add("scatter_add", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return dt_scatter_add(v[x], dim, index, v[src], out);
        });
      }
    }
  }

  // A node seen as an image batch [N, C, H, W] (or [C, H, W], or [N, C, L] for conv1d):
  // the reshape is part of the step.
  struct Image {
    size_t node;
    Shape shape;
  };
  bool image(size_t nd, Image* img) {
    size_t x = pick_float();
    if (x == SIZE_MAX) return false;
    int64_t n = numel_of(shape(x));
    if (n == 0 || n > 64) return false;
    *img = Image{x, factor(n, nd)};
    return true;
  }
  static dt_status reshaped(const dt_tensor* t, const Shape& s, dt_tensor** out) {
    return dt_reshape(t, s.data(), s.size(), out);
  }
  // f(reshaped x, out), releasing the reshaped view.
  template <typename F>
  static dt_status on_image(const dt_tensor* t, const Shape& s, dt_tensor** out, F f) {
    dt_tensor* r = nullptr;
    dt_status st = reshaped(t, s, &r);
    if (st != DT_OK) return st;
    st = f(r, out);
    release(r);
    return st;
  }

  void convolution() {
    const int kind = in_.pick(3);  // conv2d, conv1d, conv_transpose2d
    Image img;
    if (!image(kind == 1 ? 3 : (in_.rarely(4) ? 3 : 4), &img)) return;
    const size_t nd = img.shape.size();
    const int64_t c = kind == 1 || nd == 4 ? img.shape[1] : img.shape[0];
    const int64_t groups = c % 2 == 0 && in_.rarely(3) ? 2 : 1;
    const int64_t oc = groups * in_.small(1, 2);
    int64_t k[2] = {in_.small(1, 3), kind == 1 ? 1 : in_.small(1, 3)};
    int64_t stride[2] = {in_.small(1, 2), in_.small(1, 2)};
    int64_t pad[2] = {upto(k[0] / 2 + 1), upto(k[1] / 2 + 1)};
    int64_t dil[2] = {in_.small(1, 2), in_.small(1, 2)};
    int64_t opad[2] = {upto(std::max(stride[0], dil[0]) - 1), upto(std::max(stride[1], dil[1]) - 1)};
    Shape ws = kind == 1   ? Shape{oc, c / groups, k[0]}
               : kind == 0 ? Shape{oc, c / groups, k[0], k[1]}
                           : Shape{c, oc / groups, k[0], k[1]};
    size_t w = leaf(ws);
    size_t b = in_.pick(2) ? leaf({oc}) : SIZE_MAX;
    const size_t x = img.node;
    const Shape is = img.shape;
    trace_pair("kernel", k), trace_pair("stride", stride), trace_pair("padding", pad), trace_pair("dilation", dil);
    trace_pair("output_padding", opad);
    if (g_trace) fprintf(stderr, "  groups %lld\n", (long long)groups);
    add(kind == 0   ? "conv2d"
        : kind == 1 ? "conv1d"
                    : "conv_transpose2d",
        [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          const dt_tensor* bias = b == SIZE_MAX ? nullptr : v[b];
          return on_image(v[x], is, out, [&](const dt_tensor* in, dt_tensor** o) {
            if (kind == 0) return dt_conv2d(in, v[w], bias, stride, pad, dil, groups, o);
            if (kind == 1) return dt_conv1d(in, v[w], bias, stride[0], pad[0], dil[0], groups, o);
            return dt_conv_transpose2d(in, v[w], bias, stride, pad, opad, groups, dil, o);
          });
        });
  }

  void pooling() {
    Image img;
    if (!image(in_.rarely(4) ? 3 : 4, &img)) return;
    const int kind = in_.pick(3);  // max, avg, adaptive avg
    int64_t k[2] = {in_.small(1, 3), in_.small(1, 3)};
    int64_t stride[2] = {in_.small(1, 2), in_.small(1, 2)};
    int64_t pad[2] = {upto(k[0] / 2), upto(k[1] / 2)};
    int64_t dil[2] = {in_.small(1, 2), in_.small(1, 2)};
    int64_t size[2] = {in_.small(1, 3), in_.small(1, 3)};
    int32_t ceil = in_.pick(2), count_pad = in_.pick(2);
    const size_t x = img.node;
    const Shape is = img.shape;
    trace_pair("kernel", k), trace_pair("stride", stride), trace_pair("padding", pad), trace_pair("dilation", dil);
    trace_pair("output size", size);
    if (g_trace) fprintf(stderr, "  ceil_mode %d count_include_pad %d\n", ceil, count_pad);
    add(kind == 0   ? "max_pool2d"
        : kind == 1 ? "avg_pool2d"
                    : "adaptive_avg_pool2d",
        [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
          return on_image(v[x], is, out, [&](const dt_tensor* in, dt_tensor** o) {
            if (kind == 0) return dt_max_pool2d(in, k, stride, pad, dil, ceil, o);
            if (kind == 1) return dt_avg_pool2d(in, k, stride, pad, ceil, count_pad, o);
            return dt_adaptive_avg_pool2d(in, size, o);
          });
        });
  }

  void normalisation() {
    const int kind = in_.pick(3);  // layer, group, batch
    if (kind == 0) {
      size_t x = pick_float();
      if (x == SIZE_MAX) return;
      const Shape s = shape(x);
      if (s.empty()) return;
      Shape ns(s.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(s.size(), in_.small(1, 2))), s.end());
      bool affine = in_.pick(2);
      size_t w = affine ? leaf(ns) : SIZE_MAX, b = affine && in_.pick(2) ? leaf(ns) : SIZE_MAX;
      add("layer_norm", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
        return dt_layer_norm(v[x], ns.data(), ns.size(), w == SIZE_MAX ? nullptr : v[w], b == SIZE_MAX ? nullptr : v[b],
                             1e-5, out);
      });
      return;
    }
    Image img;
    if (!image(static_cast<size_t>(in_.small(2, 4)), &img)) return;
    const int64_t c = img.shape[1];
    const int64_t groups = c % 2 == 0 && in_.pick(2) ? 2 : 1;
    bool affine = in_.pick(2);
    size_t w = affine ? leaf({c}) : SIZE_MAX, b = affine ? leaf({c}) : SIZE_MAX;
    const size_t x = img.node;
    const Shape is = img.shape;
    add(kind == 1 ? "group_norm" : "batch_norm", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      const dt_tensor* wt = w == SIZE_MAX ? nullptr : v[w];
      const dt_tensor* bt = b == SIZE_MAX ? nullptr : v[b];
      return on_image(v[x], is, out, [&](const dt_tensor* in, dt_tensor** o) {
        if (kind == 1) return dt_group_norm(in, groups, wt, bt, 1e-5, o);
        return dt_batch_norm(in, nullptr, nullptr, wt, bt, 1, 0.1, 1e-5, o);
      });
    });
  }

  void embedding_or_attention() {
    if (in_.pick(2)) {  // embedding: a new weight leaf, constant indices
      int64_t num = in_.small(1, 4), dim = in_.small(1, 3);
      dt_tensor* index = indices(factor(in_.small(0, 6), static_cast<size_t>(in_.small(1, 2))), num);
      size_t w = leaf({num, dim});
      int64_t padding_idx = in_.pick(2) ? DT_PADDING_IDX_NONE : in_.small(-num, num - 1);
      if (padding_idx != DT_PADDING_IDX_NONE)
        for (int64_t j = 0; j < dim; ++j)
          no_gradient_.push_back({w, static_cast<size_t>(((padding_idx + num) % num) * dim + j)});
      add("embedding", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
        return dt_embedding(index, v[w], padding_idx, out);
      });
      return;
    }
    // attention: the query is a node seen as [L, E] or [B, L, E]; key and value are leaves
    Image q;
    if (!image(static_cast<size_t>(in_.small(2, 3)), &q)) return;
    const int64_t l = q.shape[q.shape.size() - 2], e = q.shape.back(), s = in_.small(1, 3), ev = in_.small(1, 3);
    size_t k = leaf({s, e}), val = leaf({s, ev});
    const int mask_kind = in_.pick(4);  // none, bool, additive, causal
    dt_tensor* mask = mask_kind == 1 ? random_bool({l, s}) : mask_kind == 2 ? random_f64({l, s}) : nullptr;
    const size_t x = q.node;
    const Shape is = q.shape;
    add("scaled_dot_product_attention", [=](const std::vector<dt_tensor*>& v, dt_tensor** out) {
      return on_image(v[x], is, out, [&](const dt_tensor* in, dt_tensor** o) {
        return dt_scaled_dot_product_attention(in, v[k], v[val], mask, mask_kind == 3, o);
      });
    });
  }

  // ------------------------------------------------------------ the checks

  // Replays the program with grad mode off, leaf `which` (a node index; SIZE_MAX: none)
  // replaced by `moved` (its values with one element moved); returns the output's values.
  std::vector<double> replay(size_t out_node, size_t which = SIZE_MAX, const std::vector<double>& moved = {}) {
    REQUIRE(dt_set_grad_enabled(0) == DT_OK, "grad off");
    std::vector<dt_tensor*> v, made;
    for (size_t i = 0; i <= out_node; ++i) {
      Node& n = nodes_[i];
      if (n.kind == Kind::Step) {
        g_op = "replay";
        dt_tensor* t = nullptr;
        dt_status st = n.fn(v, &t);
        REQUIRE(st == DT_OK, "step %zu succeeded with grad mode on and failed in the replay (status %d)", i, (int)st);
        made.push_back(t);
        v.push_back(t);
      } else if (i == which) {
        dt_tensor* t = make_f64(shape_of(n.t), moved);
        made.push_back(t);
        v.push_back(t);
      } else {
        v.push_back(n.t);
      }
    }
    REQUIRE(shape_of(v[out_node]) == shape_of(nodes_[out_node].t), "the replay's output has another shape");
    std::vector<double> out = values_of(v[out_node]);
    for (dt_tensor* t : made) release(t);
    REQUIRE(dt_set_grad_enabled(1) == DT_OK, "grad on");
    return out;
  }

  // The values fit finite differences: float64, finite and within kMaxValue.
  bool tame() const {
    for (const Node& n : nodes_) {
      // A float32 result (the bool / bool division gives the default dtype, and a 0-d
      // float64 operand does not promote it) rounds too coarsely for differences at h.
      if (dtype_of(n.t) == DT_FLOAT32) return false;
      if (dtype_of(n.t) != DT_FLOAT64) continue;
      for (double x : values_of(n.t))
        if (!(std::fabs(x) <= kMaxValue)) return false;
    }
    return true;
  }

  static double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }

  // The gradients of every leaf (empty: NULL .grad), checked for shape and dtype.
  std::vector<std::vector<double>> gradients() {
    std::vector<std::vector<double>> g(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].kind != Kind::Leaf) continue;
      dt_tensor* t = static_cast<dt_tensor*>(fuzz::kUntouched);
      REQUIRE(dt_tensor_grad(nodes_[i].t, &t) == DT_OK, "grad");
      if (t == nullptr) continue;
      REQUIRE(shape_of(t) == shape_of(nodes_[i].t), "leaf %zu: .grad's shape is not the leaf's", i);
      REQUIRE(dtype_of(t) == DT_FLOAT64, "leaf %zu: .grad's dtype %d", i, (int)dtype_of(t));
      g[i] = values_of(t);
      release(t);
    }
    return g;
  }

  void check_gradients() {
    // The output: the last float64 node that requires grad.
    size_t out_node = SIZE_MAX;
    for (size_t i = nodes_.size(); i-- > 0;) {
      int32_t needs = 0;
      REQUIRE(dt_tensor_requires_grad(nodes_[i].t, &needs) == DT_OK, "requires_grad");
      if (needs && nodes_[i].kind == Kind::Step && dtype_of(nodes_[i].t) == DT_FLOAT64) {
        out_node = i;
        break;
      }
    }
    if (out_node == SIZE_MAX) return;
    const Shape os = shape_of(nodes_[out_node].t);
    const bool implicit = numel_of(os) == 1 && in_.pick(2);  // backward(out, NULL)
    dt_tensor* w = random_f64(os);
    std::vector<double> wv = implicit ? std::vector<double>{1.0} : values_of(w);
    g_op = "backward";
    REQUIRE(ok(dt_backward(nodes_[out_node].t, implicit ? nullptr : w)), "backward failed");
    const std::vector<std::vector<double>> grads = gradients();
    for (size_t i = out_node + 1; i < nodes_.size(); ++i)
      REQUIRE(grads[i].empty(), "leaf %zu, made after the output, has a .grad", i);
    if (g_trace) fprintf(stderr, "backward through node %zu\n", out_node);

    // The replay without perturbation gives the forward's values.
    const std::vector<double> base = replay(out_node);
    const std::vector<double> fwd = values_of(nodes_[out_node].t);
    for (size_t i = 0; i < base.size(); ++i)
      REQUIRE(base[i] == fwd[i] || (std::isnan(base[i]) && std::isnan(fwd[i])) ||
                  std::fabs(base[i] - fwd[i]) <= 1e-9 * (1 + std::fabs(fwd[i])),
              "element %zu: %.17g with grad mode on, %.17g off", i, fwd[i], base[i]);

    if (tame()) finite_differences(out_node, wv, grads);

    // A second backward adds the same gradients again.
    g_op = "second backward";
    REQUIRE(ok(dt_backward(nodes_[out_node].t, implicit ? nullptr : w)), "second backward failed");
    const std::vector<std::vector<double>> twice = gradients();
    for (size_t i = 0; i < grads.size(); ++i) {
      REQUIRE(twice[i].size() == grads[i].size(), "leaf %zu: .grad appeared or vanished", i);
      // Not bit for bit: the second pass adds its terms to .grad's value, and when they
      // cancel (a batch norm of equal values) the rounding differs.
      for (size_t j = 0; j < grads[i].size(); ++j)
        REQUIRE(twice[i][j] == 2 * grads[i][j] ||
                    std::fabs(twice[i][j] - 2 * grads[i][j]) <= 1e-6 * (1 + std::fabs(grads[i][j])) ||
                    !std::isfinite(grads[i][j]),
                "leaf %zu element %zu: %.17g after one backward, %.17g after two", i, j, grads[i][j], twice[i][j]);
    }
    // A gradient of the wrong shape fails and changes nothing.
    Shape bad = os;
    bad.push_back(2);
    dt_tensor* wrong = random_f64(bad);
    g_op = "backward with a wrong shape";
    dt_status st = dt_backward(nodes_[out_node].t, wrong);
    REQUIRE(!ok(st) && st == DT_ERR_SHAPE_MISMATCH, "status %d", (int)st);
    const std::vector<std::vector<double>> after = gradients();
    for (size_t i = 0; i < after.size(); ++i)
      REQUIRE(after[i].size() == twice[i].size() &&
                  std::equal(after[i].begin(), after[i].end(), twice[i].begin(),
                             [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }),
              "leaf %zu: a failed backward changed .grad", i);
  }

  void finite_differences(size_t out_node, const std::vector<double>& w,
                          const std::vector<std::vector<double>>& grads) {
    std::vector<std::pair<size_t, size_t>> candidates;  // (leaf node, element)
    for (size_t i = 0; i <= out_node; ++i)
      if (nodes_[i].kind == Kind::Leaf)
        for (size_t j = 0; j < static_cast<size_t>(numel_of(shape_of(nodes_[i].t))); ++j)
          if (std::find(no_gradient_.begin(), no_gradient_.end(), std::make_pair(i, j)) == no_gradient_.end())
            candidates.push_back({i, j});
    double scale = 0;  // the size of the loss's terms, for the rounding noise
    const std::vector<double> base = values_of(nodes_[out_node].t);
    for (size_t i = 0; i < base.size(); ++i) scale += std::fabs(base[i] * w[i]);
    for (int c = 0; c < kMaxChecks && !candidates.empty(); ++c) {
      size_t k = static_cast<size_t>(uniform() * candidates.size());
      auto [leaf_node, elem] = candidates[k];
      candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(k));
      const double a = grads[leaf_node].empty() ? 0.0 : grads[leaf_node][elem];
      if (!std::isfinite(a)) continue;
      std::vector<double> moved = values_of(nodes_[leaf_node].t);  // the leaf's values, one moved
      const double x = moved[elem];
      const double h = 1e-6 * std::max(1.0, std::fabs(x));
      double fd[3];
      bool finite = true;
      for (int s = 0; s < 3; ++s) {
        double step = h * (1 << s);
        moved[elem] = x + step;
        double up = dot(replay(out_node, leaf_node, moved), w);
        moved[elem] = x - step;
        double down = dot(replay(out_node, leaf_node, moved), w);
        fd[s] = (up - down) / (2 * step);
        finite = finite && std::isfinite(fd[s]);
      }
      if (!finite) continue;
      const double noise = 1e-7 * (1 + scale), size = 1 + std::fabs(fd[0]);
      const bool smooth =
          std::fabs(fd[0] - fd[1]) <= 1e-5 * size + noise && std::fabs(fd[1] - fd[2]) <= 1e-5 * size + noise;
      if (g_trace)
        fprintf(stderr, "leaf %zu element %zu: grad %.12g, differences %.12g %.12g %.12g%s\n", leaf_node, elem, a,
                fd[0], fd[1], fd[2], smooth ? "" : " (not smooth: skipped)");
      if (!smooth) continue;
      REQUIRE(std::fabs(a - fd[0]) <= 1e-4 * (1 + std::fabs(a) + std::fabs(fd[0])) + 10 * noise,
              "leaf %zu element %zu (x = %.17g): .grad says %.12g, finite differences %.12g, %.12g, %.12g", leaf_node,
              elem, x, a, fd[0], fd[1], fd[2]);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_trace = getenv("FUZZ_AUTOGRAD_TRACE") != nullptr;
  fuzz::g_live_at_start = dt_live_handle_count();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program(data, size).run();
  return 0;
}
