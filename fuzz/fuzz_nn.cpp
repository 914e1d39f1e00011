// fuzz_nn.cpp — libFuzzer target for the functional forms of the neural-network ops
// (issue 19): convolutions (conv1d, conv2d, conv_transpose2d), pooling (max, average,
// adaptive), normalisation (batch_norm, layer_norm, group_norm), embedding, scaled dot
// product attention, and the tensor ops they brought (triu/tril, clamp, masked_fill,
// var/std). fuzz_ops covers the op table; these take geometry arguments (kernel sizes,
// strides, paddings, dilations, groups, output sizes, diagonals, corrections, epsilons)
// whose arithmetic can overflow, so the input draws them from small values and extremes
// (0, -1, 2^32, 2^62 + 1, INT64_MAX, INT64_MIN, NaN, infinities) alike.
//
// Each input is up to kMaxSteps calls on small tensors made for the call (1 to 5 dims of
// 0 to 6 elements, float32 or float64, rarely another dtype; cpu:0 or, rarely, cpu:1 for a
// device mismatch), some with requires_grad; a successful call is sometimes followed by a
// backward pass through the sum of its result. The properties checked, a violation
// aborting with a message (a crash for libFuzzer):
//   - a call succeeds, or fails with a documented status other than DT_ERR_INTERNAL and a
//     non-empty message, leaving its out-parameter untouched;
//   - a result is self-consistent (ndim, shape, numel, nbytes) and every element can be
//     read (dt_tensor_copy_to_host; ASan sees a read outside the storage), and so are the
//     gradients a backward pass leaves;
//   - at the end of the input, once everything is released, dt_live_handle_count() is
//     what it was at the start (ASan's leak check runs after each input too).
// UBSan reports the undefined behaviour (an overflowing product of sizes) that the
// extremes provoke. FUZZ_NN_TRACE=1 prints each call and its outcome.
#include <devtensor.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define FUZZ_NAME "fuzz_nn"
#include "fuzz_require.h"
#include "fuzz_input.h"

namespace {

using fuzz::g_op;
using fuzz::g_trace;
using fuzz::ok;
using fuzz::trace_pair;

constexpr int kMaxSteps = 8;

class Program {
 public:
  Program(const uint8_t* data, size_t size) : in_(data, size) {}

  void run() {
    REQUIRE(dt_manual_seed(0) == DT_OK, "seed");
    for (int step = 0; step < kMaxSteps && in_.more(); ++step) this->step();
    for (dt_tensor* t : held_) REQUIRE(dt_tensor_release(t) == DT_OK, "release at the end");
    held_.clear();
    fuzz::require_no_handle_left();
  }

 private:
  fuzz::Input in_;
  std::vector<dt_tensor*> held_;  // every tensor this input made, released at its end
  std::vector<dt_tensor*> grad_leaves_;  // those of them that require grad, this step

  // ---------------------------------------------------------------- tensors

  dt_device device() { return dt_device{DT_DEVICE_CPU, in_.rarely(24) ? 1 : 0}; }

  // A tensor of shape s and dtype dt with values from the input's bytes (or, rarely, NULL:
  // the call must then fail). Floating tensors may require grad.
  dt_tensor* make(const std::vector<int64_t>& s, dt_dtype dt, dt_device dev, bool may_grad = true) {
    if (in_.rarely(64)) return nullptr;
    dt_tensor* t = nullptr;
    if (dt == DT_BOOL || dt == DT_INT64 || dt == DT_INT32 || dt == DT_UINT8) {
      REQUIRE(dt_tensor_zeros(s.data(), s.size(), dt, dev, &t) == DT_OK, "zeros");
      if (dt != DT_BOOL) {
        double hi = static_cast<double>(in_.small(0, 5));
        dt_tensor* r = nullptr;
        REQUIRE(dt_add_scalar(t, hi, &r) == DT_OK, "add_scalar");  // every index hi
        REQUIRE(dt_tensor_release(t) == DT_OK, "release");
        t = r;
      }
    } else {
      REQUIRE(dt_tensor_randn(s.data(), s.size(), dt, dev, &t) == DT_OK, "randn");
      if (may_grad && (dt == DT_FLOAT32 || dt == DT_FLOAT64) && in_.rarely(3)) {
        REQUIRE(dt_tensor_set_requires_grad(t, 1) == DT_OK, "requires_grad");
        grad_leaves_.push_back(t);
      }
    }
    held_.push_back(t);
    if (g_trace) {
      fprintf(stderr, "  tensor [");
      for (size_t i = 0; i < s.size(); ++i) fprintf(stderr, i ? ", %lld" : "%lld", (long long)s[i]);
      fprintf(stderr, "] %s\n", dt_dtype_name(dt));
    }
    return t;
  }
  dt_tensor* make(const std::vector<int64_t>& s, dt_dtype dt) { return make(s, dt, device()); }
  // A mask for a tensor of shape xs: some of its trailing dims (each sometimes 1, which
  // broadcasts, or one more, which does not), bool or (rarely) another dtype.
  dt_tensor* make_mask(const std::vector<int64_t>& xs) {
    std::vector<int64_t> ms(xs.end() - static_cast<std::ptrdiff_t>(in_.small(0, static_cast<int64_t>(xs.size()))),
                            xs.end());
    for (auto& m : ms)
      if (in_.rarely(3)) m = in_.rarely(4) ? m + 1 : 1;
    return make(ms, in_.rarely(12) ? in_.dtype() : DT_BOOL);
  }

  // ---------------------------------------------------------------- checks

  static void check(const dt_tensor* t) { fuzz::check_tensor(t); }

  // Runs a call making one tensor; checks it, and sometimes runs backward through it.
  template <typename F>
  void produce(const char* op, F call) {
    g_op = op;
    dt_tensor* out = static_cast<dt_tensor*>(fuzz::kUntouched);
    if (!ok(call(&out))) {
      REQUIRE(out == fuzz::kUntouched, "%s failed but wrote *out (%p)", op, (void*)out);
      return;
    }
    REQUIRE(out != nullptr && out != fuzz::kUntouched, "%s: success without a result", op);
    held_.push_back(out);
    check(out);
    if (grad_leaves_.empty() || !in_.rarely(2)) return;
    int32_t needs = 0;
    REQUIRE(dt_tensor_requires_grad(out, &needs) == DT_OK, "requires_grad");
    if (!needs) return;
    dt_tensor* total = nullptr;
    if (!ok(dt_sum(out, nullptr, 0, 0, &total))) return;
    held_.push_back(total);
    g_op = "backward";
    if (!ok(dt_backward(total, nullptr))) return;
    for (dt_tensor* leaf : grad_leaves_) {
      dt_tensor* g = nullptr;
      if (dt_tensor_grad(leaf, &g) == DT_OK && g != nullptr) {
        held_.push_back(g);
        check(g);
      }
    }
  }

  // ---------------------------------------------------------------- one step

  void step() {
    grad_leaves_.clear();
    const dt_dtype dt = in_.dtype();
    int64_t a[2], b[2], c[2], d[2];
    switch (in_.pick(16)) {
      case 0: {  // conv2d: input [N, C, H, W] or [C, H, W], weight [OC, C / g, kH, kW]
        const int64_t groups = in_.rarely(4) ? in_.geometry(1, 3) : 1;
        auto xs = in_.shape(3, 4);
        auto ws = in_.shape(4, 4, 4);
        dt_tensor* x = make(xs, dt);
        dt_tensor* w = make(ws, in_.rarely(16) ? in_.dtype() : dt);
        dt_tensor* bias = in_.rarely(2) ? make({ws[0]}, dt) : nullptr;
        const int64_t* stride = in_.pair(a, 1, 3);
        const int64_t* pad = in_.rarely(6) ? (b[0] = DT_PADDING_SAME, b[1] = 0, b) : in_.pair(b, 0, 3);
        const int64_t* dil = in_.pair(c, 1, 3);
        produce("dt_conv2d", [&](dt_tensor** o) { return dt_conv2d(x, w, bias, stride, pad, dil, groups, o); });
        break;
      }
      case 1: {  // conv1d
        auto xs = in_.shape(2, 3);
        auto ws = in_.shape(3, 3, 4);
        dt_tensor* x = make(xs, dt);
        dt_tensor* w = make(ws, dt);
        dt_tensor* bias = in_.rarely(2) ? make({ws[0]}, dt) : nullptr;
        const int64_t stride = in_.geometry(1, 3), dil = in_.geometry(1, 3);
        const int64_t pad = in_.rarely(6) ? DT_PADDING_SAME : in_.geometry(0, 3);
        const int64_t groups = in_.rarely(4) ? in_.geometry(1, 3) : 1;
        if (g_trace)
          fprintf(stderr, "conv1d x %zu-d, w [%lld, %lld, %lld], stride %lld, padding %lld, dilation %lld, groups %lld\n",
                  xs.size(), (long long)ws[0], (long long)ws[1], (long long)ws[2], (long long)stride, (long long)pad,
                  (long long)dil, (long long)groups);
        produce("dt_conv1d", [&](dt_tensor** o) { return dt_conv1d(x, w, bias, stride, pad, dil, groups, o); });
        break;
      }
      case 2: {  // conv_transpose2d: weight [C, OC / g, kH, kW]
        auto xs = in_.shape(3, 4);
        auto ws = in_.shape(4, 4, 4);
        dt_tensor* x = make(xs, dt);
        dt_tensor* w = make(ws, dt);
        dt_tensor* bias = in_.rarely(2) ? make({ws[1]}, dt) : nullptr;
        const int64_t* stride = in_.pair(a, 1, 3);
        const int64_t* pad = in_.pair(b, 0, 3);
        const int64_t* out_pad = in_.pair(c, 0, 2);
        const int64_t* dil = in_.pair(d, 1, 3);
        const int64_t groups = in_.rarely(4) ? in_.geometry(1, 3) : 1;
        produce("dt_conv_transpose2d", [&](dt_tensor** o) {
          return dt_conv_transpose2d(x, w, bias, stride, pad, out_pad, groups, dil, o);
        });
        break;
      }
      case 3: {  // max_pool2d
        dt_tensor* x = make(in_.shape(3, 4), dt);
        int64_t k_[2];
        const int64_t* k = in_.pair(k_, 1, 4);
        const int64_t* stride = in_.pair(a, 1, 3);
        const int64_t* pad = in_.pair(b, 0, 2);
        const int64_t* dil = in_.pair(c, 1, 3);
        const int32_t ceil = in_.flag();
        trace_pair("kernel", k), trace_pair("stride", stride), trace_pair("padding", pad), trace_pair("dilation", dil);
        produce("dt_max_pool2d", [&](dt_tensor** o) { return dt_max_pool2d(x, k, stride, pad, dil, ceil, o); });
        break;
      }
      case 4: {  // avg_pool2d
        dt_tensor* x = make(in_.shape(3, 4), dt);
        int64_t k_[2];
        const int64_t* k = in_.pair(k_, 1, 4);
        const int64_t* stride = in_.pair(a, 1, 3);
        const int64_t* pad = in_.pair(b, 0, 2);
        const int32_t ceil = in_.flag(), count_pad = in_.flag();
        produce("dt_avg_pool2d", [&](dt_tensor** o) { return dt_avg_pool2d(x, k, stride, pad, ceil, count_pad, o); });
        break;
      }
      case 5: {  // adaptive_avg_pool2d
        dt_tensor* x = make(in_.shape(3, 4), dt);
        const int64_t* size = in_.pair(a, 1, 7);
        produce("dt_adaptive_avg_pool2d", [&](dt_tensor** o) { return dt_adaptive_avg_pool2d(x, size, o); });
        break;
      }
      case 6: {  // batch_norm: input [N, C, ...]; running statistics and affine [C] or NULL
        auto xs = in_.shape(2, 5);
        const int64_t ch = xs.size() > 1 && !in_.rarely(12) ? xs[1] : in_.small(0, 4);
        dt_tensor* x = make(xs, dt);
        const bool track = in_.rarely(2);
        dt_tensor* mean = track ? make({ch}, dt, dt_device{DT_DEVICE_CPU, 0}, false) : nullptr;
        dt_tensor* var = track ? make({ch}, dt, dt_device{DT_DEVICE_CPU, 0}, false) : nullptr;
        dt_tensor* w = in_.rarely(2) ? make({ch}, dt) : nullptr;
        dt_tensor* bias = in_.rarely(2) ? make({ch}, dt) : nullptr;
        const int32_t training = in_.flag();
        const double momentum = in_.real(), eps = in_.real();
        produce("dt_batch_norm", [&](dt_tensor** o) {
          return dt_batch_norm(x, mean, var, w, bias, training, momentum, eps, o);
        });
        break;
      }
      case 7: {  // layer_norm over the last dims (or a shape that is not theirs)
        auto xs = in_.shape(1, 5);
        dt_tensor* x = make(xs, dt);
        std::vector<int64_t> norm(xs.end() - static_cast<std::ptrdiff_t>(in_.small(0, static_cast<int64_t>(xs.size()))),
                                  xs.end());
        dt_tensor* w = in_.rarely(2) ? make(norm, dt) : nullptr;
        dt_tensor* bias = in_.rarely(2) ? make(norm, dt) : nullptr;
        std::vector<int64_t> arg = norm;  // rarely not the input's last dims
        if (in_.rarely(8) && !arg.empty()) arg[0] = in_.geometry(0, 6);
        const double eps = in_.real();
        produce("dt_layer_norm", [&](dt_tensor** o) {
          return dt_layer_norm(x, arg.data(), arg.size(), w, bias, eps, o);
        });
        break;
      }
      case 8: {  // group_norm
        auto xs = in_.shape(2, 5);
        dt_tensor* x = make(xs, dt);
        const int64_t groups = in_.geometry(1, 4);
        const int64_t ch = xs.size() > 1 ? xs[1] : 1;
        dt_tensor* w = in_.rarely(2) ? make({ch}, dt) : nullptr;
        dt_tensor* bias = in_.rarely(2) ? make({ch}, dt) : nullptr;
        const double eps = in_.real();
        produce("dt_group_norm", [&](dt_tensor** o) { return dt_group_norm(x, groups, w, bias, eps, o); });
        break;
      }
      case 9: {  // embedding: indices (int64, rarely another dtype) into weight [num, dim]
        dt_tensor* idx = make(in_.shape(0, 3), in_.rarely(8) ? in_.dtype() : DT_INT64);
        dt_tensor* w = make(in_.shape(2, 2), dt);
        const int64_t padding_idx = in_.rarely(3) ? DT_PADDING_IDX_NONE : in_.geometry(-3, 5);
        produce("dt_embedding", [&](dt_tensor** o) { return dt_embedding(idx, w, padding_idx, o); });
        break;
      }
      case 10: {  // scaled_dot_product_attention: [..., L, E], [..., S, E], [..., S, Ev]
        const int64_t batch = in_.small(1, 2), L = in_.small(0, 4), S = in_.small(0, 4), E = in_.small(1, 4);
        dt_tensor* q = make({batch, L, E}, dt);
        dt_tensor* k = make({batch, in_.rarely(8) ? S + 1 : S, in_.rarely(8) ? E + 1 : E}, dt);
        dt_tensor* v = make({batch, S, in_.small(0, 4)}, dt);
        dt_tensor* mask = nullptr;
        if (in_.rarely(2)) mask = make({in_.rarely(6) ? L + 1 : L, S}, in_.rarely(2) ? DT_BOOL : dt);
        const int32_t causal = in_.flag();
        produce("dt_scaled_dot_product_attention",
                [&](dt_tensor** o) { return dt_scaled_dot_product_attention(q, k, v, mask, causal, o); });
        break;
      }
      case 11: {  // triu / tril
        dt_tensor* x = make(in_.shape(0, 4), dt);
        const int64_t diagonal = in_.geometry(-4, 4);
        const bool upper = in_.rarely(2);
        produce(upper ? "dt_triu" : "dt_tril",
                [&](dt_tensor** o) { return upper ? dt_triu(x, diagonal, o) : dt_tril(x, diagonal, o); });
        break;
      }
      case 12: {  // clamp
        dt_tensor* x = make(in_.shape(0, 4), dt);
        const double lo = in_.real(), hi = in_.real();
        const int which = in_.pick(4);
        produce("dt_clamp", [&](dt_tensor** o) {
          return dt_clamp(x, which & 1 ? &lo : nullptr, which & 2 ? &hi : nullptr, o);
        });
        break;
      }
      case 13: {  // masked_fill with a broadcastable (or not) bool mask
        auto xs = in_.shape(0, 4);
        dt_tensor* x = make(xs, dt);
        dt_tensor* mask = make_mask(xs);
        const double value = in_.real();
        produce("dt_masked_fill", [&](dt_tensor** o) { return dt_masked_fill(x, mask, value, o); });
        break;
      }
      case 14: {  // randint, randperm, multinomial, linspace, eye, one_hot, nonzero, masked_select,
                  // unique, bincount
        const std::vector<int64_t> s = in_.shape(0, 3);
        const dt_dtype want = in_.rarely(3) ? DT_DTYPE_DEFAULT : in_.dtype();
        switch (in_.pick(10)) {
          case 0: {
            const int64_t low = in_.geometry(-4, 4), span = in_.small(0, 300);
            const int64_t high = in_.rarely(4) || low > INT64_MAX - span ? in_.geometry(-4, 8) : low + span;
            produce("dt_tensor_randint",
                    [&](dt_tensor** o) { return dt_tensor_randint(low, high, s.data(), s.size(), want, device(), o); });
            break;
          }
          case 1: {
            const int64_t n = in_.geometry(-1, 40);
            produce("dt_tensor_randperm", [&](dt_tensor** o) { return dt_tensor_randperm(n, want, device(), o); });
            break;
          }
          case 2: {  // weights: |randn| (sometimes not), 1-d or 2-d (sometimes not)
            std::vector<int64_t> ws = in_.rarely(6) ? s : in_.shape(1, 2);
            dt_tensor* w = make(ws, in_.rarely(8) ? in_.dtype() : DT_FLOAT32);
            if (w != nullptr && !in_.rarely(4)) {
              dt_tensor* a_w = nullptr;
              if (dt_abs(w, &a_w) == DT_OK) {
                held_.push_back(a_w);
                w = a_w;
              }
            }
            const int64_t n = in_.geometry(-1, 6);
            const int32_t replacement = in_.flag();
            produce("dt_multinomial", [&](dt_tensor** o) { return dt_multinomial(w, n, replacement, o); });
            break;
          }
          case 3: {
            const double start = in_.real(), end = in_.real();
            const int64_t steps = in_.geometry(-1, 20);
            produce("dt_tensor_linspace",
                    [&](dt_tensor** o) { return dt_tensor_linspace(start, end, steps, want, device(), o); });
            break;
          }
          case 4: {
            const int64_t n = in_.geometry(-1, 6), m = in_.geometry(-1, 6);
            produce("dt_tensor_eye", [&](dt_tensor** o) { return dt_tensor_eye(n, m, want, device(), o); });
            break;
          }
          case 6: {
            dt_tensor* x = make(s, dt);
            produce("dt_nonzero", [&](dt_tensor** o) { return dt_nonzero(x, o); });
            break;
          }
          case 7: {  // a mask of a's trailing dims (sometimes 1 or one more), or another dtype
            dt_tensor* x = make(s, dt);
            dt_tensor* mask = make_mask(s);
            produce("dt_masked_select", [&](dt_tensor** o) { return dt_masked_select(x, mask, o); });
            break;
          }
          case 8: {  // unique, with each of inverse and counts sometimes not wanted
            dt_tensor* x = make(s, dt);
            dt_tensor* values = static_cast<dt_tensor*>(fuzz::kUntouched);
            dt_tensor* inverse = static_cast<dt_tensor*>(fuzz::kUntouched);
            dt_tensor* counts = static_cast<dt_tensor*>(fuzz::kUntouched);
            const bool with_inverse = in_.rarely(2), with_counts = in_.rarely(2);
            g_op = "dt_unique";
            if (!ok(dt_unique(x, &values, with_inverse ? &inverse : nullptr, with_counts ? &counts : nullptr))) {
              REQUIRE(values == fuzz::kUntouched && inverse == fuzz::kUntouched && counts == fuzz::kUntouched,
                      "dt_unique failed but wrote an out-parameter");
              break;
            }
            for (dt_tensor* r : {values, inverse, counts}) {
              if (r == fuzz::kUntouched) continue;
              held_.push_back(r);
              check(r);
            }
            break;
          }
          case 9: {  // bincount of small indices (make's integers are 0 to 5), with or without weights
            dt_tensor* x = make(in_.rarely(6) ? s : std::vector<int64_t>{in_.small(0, 6)},
                                in_.rarely(8) ? in_.dtype() : DT_INT64);
            dt_tensor* w = nullptr;
            if (in_.rarely(2)) w = make(std::vector<int64_t>{in_.small(0, 6)}, in_.dtype());
            const int64_t minlength = in_.geometry(-1, 8);
            produce("dt_bincount", [&](dt_tensor** o) { return dt_bincount(x, w, minlength, o); });
            break;
          }
          default: {
            dt_tensor* idx = make(s, in_.rarely(8) ? in_.dtype() : DT_INT64);
            const int64_t classes = in_.geometry(-2, 8);
            produce("dt_one_hot", [&](dt_tensor** o) { return dt_one_hot(idx, classes, o); });
            break;
          }
        }
        break;
      }
      default: {  // var / std over some dims, with any correction
        dt_tensor* x = make(in_.shape(0, 4), dt);
        std::vector<int64_t> dims(in_.small(0, 3));
        for (auto& v : dims) v = in_.geometry(-4, 3);
        const double correction = in_.real();
        const int32_t keep = in_.flag();
        const bool is_std = in_.rarely(2);
        produce(is_std ? "dt_std" : "dt_var", [&](dt_tensor** o) {
          return is_std ? dt_std(x, dims.data(), dims.size(), correction, keep, o)
                        : dt_var(x, dims.data(), dims.size(), correction, keep, o);
        });
        if (in_.rarely(2)) {  // logsumexp or a vector norm of any order over the same dims
          if (in_.rarely(2)) {
            produce("dt_logsumexp", [&](dt_tensor** o) { return dt_logsumexp(x, dims.data(), dims.size(), keep, o); });
          } else {
            static const double kOrds[] = {2, 1, 0, INFINITY, -INFINITY, 3, 0.5, -1};
            const double ord = in_.rarely(4) ? in_.real() : kOrds[in_.pick(8)];
            produce("dt_vector_norm",
                    [&](dt_tensor** o) { return dt_vector_norm(x, ord, dims.data(), dims.size(), keep, o); });
          }
        }
        break;
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DEVTENSOR_CPU_DEVICES", "2", 1);  // cpu:1 for device mismatches; read at first use
  g_trace = getenv("FUZZ_NN_TRACE") != nullptr;
  fuzz::g_live_at_start = dt_live_handle_count();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program(data, size).run();
  return 0;
}
