// fuzz_modules.cpp — libFuzzer target for the module API: every constructor (Linear, the
// activations, Conv1d/2d, ConvTranspose2d, the pools, BatchNorm1d/2d, LayerNorm,
// GroupNorm, Embedding, MultiheadAttention, TransformerEncoderLayer/Encoder, Sequential,
// the losses, DataParallel, modules of the caller's over any of these) with arguments drawn from small values and int64's extremes,
// then what a program does with modules, in any order: forward (inputs mostly of the
// shape the module expects, sometimes not), backward and an optimizer step, dt_module_to
// between cpu:0 and cpu:1 (and to devices that do not exist), train/eval, enumerating
// parameters, buffers and children, state dicts and safetensors files (well formed,
// truncated, or another module's) loaded back, releases in any order.
//
// The properties checked, a violation aborting with a message (a crash for libFuzzer):
//   - a call succeeds, or fails with a documented status other than DT_ERR_INTERNAL and a
//     non-empty message, leaving its out-parameter untouched;
//   - a forward's result is self-consistent and readable (fuzz_input.h), and so are the
//     gradients a backward pass leaves;
//   - the all-or-nothing calls leave the module as it was when they fail: dt_module_to,
//     dt_module_load, dt_module_load_state_dict (every parameter and buffer: name, device,
//     dtype, shape and bytes), and a successful dt_module_to puts every one on the device;
//   - at the end of the input, once everything is released, dt_live_handle_count() is
//     what it was at the start (ASan's leak check runs after each input too).
// FUZZ_MODULES_TRACE=1 prints each call and its outcome.
#include <devtensor.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define FUZZ_NAME "fuzz_modules"
#include "fuzz_require.h"
#include "fuzz_input.h"

namespace {

using fuzz::check_tensor;
using fuzz::g_op;
using fuzz::g_trace;
using fuzz::ok;

constexpr int kMaxSteps = 10;
constexpr size_t kMaxModules = 8;

std::string g_path;  // this process's safetensors file

// The forward of the custom modules this target makes (dt_module_new); user_data picks
// what it does: 0 runs its children in order on its first input (a Sequential written
// by hand, reaching them through self), 1 returns its first input, 2 fails with its own
// status and message, 3 returns DT_OK without an output (the library must refuse that).
dt_status custom_forward(dt_module* self, dt_tensor* const* in, size_t n, void* what, dt_tensor** out) {
  const intptr_t behaviour = reinterpret_cast<intptr_t>(what);
  if (behaviour == 2) {
    dt_set_error_message("the fuzzer's forward refuses");
    return DT_ERR_BACKEND;
  }
  if (behaviour == 3) return DT_OK;
  if (n == 0 || !in[0]) {
    dt_set_error_message("no first input");
    return DT_ERR_INVALID_ARGUMENT;
  }
  dt_tensor* x = in[0];
  dt_status st = dt_tensor_retain(x);
  size_t count = 0;
  if (behaviour == 0 && st == DT_OK) st = dt_module_child_count(self, &count);
  for (size_t i = 0; i < count && st == DT_OK; ++i) {
    dt_module* c = nullptr;
    dt_tensor* y = nullptr;
    st = dt_module_child_at(self, i, nullptr, 0, nullptr, &c);
    if (st == DT_OK) st = dt_module_forward(c, &x, 1, &y);
    dt_module_release(c);
    if (st == DT_OK) {
      dt_tensor_release(x);
      x = y;
    }
  }
  if (st == DT_OK) {
    *out = x;
  } else {
    dt_tensor_release(x);
  }
  return st;
}

// What a module's forward expects, so that most inputs fit: the kind of input, the size
// of its feature (or channel) dim, and for losses and attention their extra inputs.
enum class Expects { kAny, kFeatures, kChannels1d, kChannels2d, kIndices, kSequence, kLoss, kMseLoss };
struct Mod {
  dt_module* m;
  Expects expects;
  int64_t features;  // the last dim (kFeatures, kSequence), dim 1 (kChannels*), classes (kLoss)
  int64_t classes_or_rows;  // Embedding: rows; losses: classes
  bool batch_first;
  bool random = false;  // it may draw random numbers in forward (dropout in training mode)
};

// A module's parameters and buffers as they are: what a failed all-or-nothing call must
// leave unchanged.
struct Entry {
  std::string name;
  dt_device device;
  dt_dtype dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  bool operator==(const Entry& o) const {
    return name == o.name && device.type == o.device.type && device.index == o.device.index &&
           dtype == o.dtype && shape == o.shape && bytes == o.bytes;
  }
};

std::vector<Entry> snapshot(const dt_module* m) {
  std::vector<Entry> out;
  for (int buffers = 0; buffers < 2; ++buffers) {
    size_t n = 0;
    REQUIRE((buffers ? dt_module_buffer_count(m, &n) : dt_module_parameter_count(m, &n)) == DT_OK, "count");
    for (size_t i = 0; i < n; ++i) {
      char name[256];
      size_t needed = 0;
      dt_tensor* t = nullptr;
      REQUIRE((buffers ? dt_module_buffer(m, i, name, sizeof name, &needed, &t)
                       : dt_module_parameter(m, i, name, sizeof name, &needed, &t)) == DT_OK,
              "entry %zu", i);
      REQUIRE(needed <= sizeof name, "a name of %zu bytes", needed);
      Entry e;
      e.name = name;
      size_t ndim = 0;
      REQUIRE(dt_tensor_device(t, &e.device) == DT_OK && dt_tensor_dtype(t, &e.dtype) == DT_OK &&
                  dt_tensor_ndim(t, &ndim) == DT_OK,
              "metadata of %s", name);
      e.shape.resize(ndim);
      REQUIRE(dt_tensor_shape(t, e.shape.data(), ndim) == DT_OK, "shape of %s", name);
      e.bytes = check_tensor(t);
      REQUIRE(dt_tensor_release(t) == DT_OK, "release");
      out.push_back(std::move(e));
    }
  }
  return out;
}

class Program {
 public:
  Program(const uint8_t* data, size_t size) : in_(data, size) {}

  void run() {
    REQUIRE(dt_manual_seed(0) == DT_OK, "seed");
    for (int step = 0; step < kMaxSteps && in_.more(); ++step) this->step();
    for (dt_tensor* t : tensors_) REQUIRE(dt_tensor_release(t) == DT_OK, "release a tensor at the end");
    for (const Mod& m : mods_) REQUIRE(dt_module_release(m.m) == DT_OK, "release a module at the end");
    tensors_.clear();
    mods_.clear();
    fuzz::require_no_handle_left();
  }

 private:
  fuzz::Input in_;
  std::vector<Mod> mods_;           // every module this input holds, released at its end
  std::vector<dt_tensor*> tensors_;  // every tensor this input holds, released at its end
  dt_tensor* last_out_ = nullptr;    // the last forward's result (held in tensors_)

  // cpu:0, sometimes cpu:1, rarely cuda:0 (unavailable here: the call must say so).
  dt_device device() {
    if (in_.rarely(32)) return dt_device{DT_DEVICE_CUDA, 0};
    return dt_device{DT_DEVICE_CPU, in_.rarely(8) ? 1 : 0};
  }
  // A size for a constructor: small, rarely an extreme.
  int64_t size(int64_t lo = 1, int64_t hi = 4) { return in_.rarely(10) ? in_.geometry(lo, hi) : in_.small(lo, hi); }
  // A multiple of base (groups, heads) when base is small, else any size.
  int64_t multiple_of(int64_t base) { return base >= 1 && base <= 4 ? base * in_.small(1, 3) : size(); }
  double eps() { return in_.rarely(8) ? in_.real() : 1e-5; }
  double probability() { return in_.rarely(8) ? in_.real() : (in_.rarely(2) ? 0.0 : 0.5); }

  dt_tensor* hold(dt_tensor* t) {
    tensors_.push_back(t);
    return t;
  }
  static std::string pair_str(const int64_t* p) {
    return p == nullptr ? "NULL" : "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")";
  }
  static void trace_tensor(const char* what, const std::vector<int64_t>& s, dt_dtype dt, dt_device dev) {
    if (!g_trace) return;
    fprintf(stderr, "  %s [", what);
    for (size_t i = 0; i < s.size(); ++i) fprintf(stderr, i ? ", %lld" : "%lld", (long long)s[i]);
    fprintf(stderr, "] %s on %d:%d\n", dt_dtype_name(dt), dev.type, dev.index);
  }
  // A tensor of random values (zeros for a dtype randn does not make).
  dt_tensor* tensor(const std::vector<int64_t>& s, dt_dtype dt, dt_device dev) {
    trace_tensor("tensor", s, dt, dev);
    dt_tensor* t = nullptr;
    if (dt_tensor_randn(s.data(), s.size(), dt, dev, &t) == DT_OK) return hold(t);
    g_op = "dt_tensor_zeros";
    if (ok(dt_tensor_zeros(s.data(), s.size(), dt, dev, &t))) return hold(t);
    REQUIRE(dev.type == DT_DEVICE_CUDA, "no tensor made on cpu:%d", dev.index);
    return nullptr;  // cuda:0, which is not here: the call it is for gets NULL
  }
  // int64 indices in [0, below).
  dt_tensor* indices(const std::vector<int64_t>& s, int64_t below, dt_device dev) {
    trace_tensor("indices", s, DT_INT64, dev);
    dt_tensor *u = nullptr, *scaled = nullptr, *idx = nullptr;
    REQUIRE(dt_tensor_rand(s.data(), s.size(), DT_FLOAT64, dev, &u) == DT_OK, "rand");
    REQUIRE(dt_mul_scalar(u, static_cast<double>(below), &scaled) == DT_OK, "mul_scalar");
    REQUIRE(dt_tensor_to(scaled, dt_device{DT_DEVICE_DEFAULT, 0}, DT_INT64, 0, &idx) == DT_OK, "to int64");
    REQUIRE(dt_tensor_release(u) == DT_OK && dt_tensor_release(scaled) == DT_OK, "release");
    return hold(idx);
  }

  // Registers a constructor's result (on success) as a module of this input.
  void made(dt_status st, dt_module* m, Mod rec) {
    if (!ok(st)) {
      REQUIRE(m == fuzz::kUntouched, "%s failed but wrote *out (%p)", g_op, (void*)m);
      return;
    }
    REQUIRE(m != nullptr && m != fuzz::kUntouched, "%s: success without a module", g_op);
    rec.m = m;
    if (mods_.size() < kMaxModules) {
      mods_.push_back(rec);
    } else {
      REQUIRE(dt_module_release(m) == DT_OK, "release");
    }
  }
  static dt_module* untouched() { return static_cast<dt_module*>(fuzz::kUntouched); }
  Mod* any_module() { return mods_.empty() ? nullptr : &mods_[static_cast<size_t>(in_.pick(static_cast<int>(mods_.size())))]; }
  // 0 to 3 of the modules this input holds (maybe one twice) for a container: what it
  // expects is its first child's, and it is random when any child is.
  Mod pick_children(std::vector<dt_module*>* children) {
    Mod first{nullptr, Expects::kAny, 0, 0, false};
    const int n = in_.pick(4);
    for (int i = 0; i < n && !mods_.empty(); ++i) {
      Mod* c = any_module();
      if (i == 0) first = *c;
      first.random = first.random || c->random;
      children->push_back(c->m);
    }
    return first;
  }

  // ---------------------------------------------------------------- constructors

  void construct() {
    const dt_dtype dt = in_.rarely(12) ? in_.dtype() : (in_.rarely(4) ? DT_FLOAT64 : DT_FLOAT32);
    const dt_device dev = device();
    dt_module* m = untouched();
    int64_t a[2], b[2], c[2], d[2], k[2];
    switch (in_.pick(18)) {
      case 0: {
        g_op = "dt_linear_new";
        const int64_t in = size(0), out = size(0);
        made(dt_linear_new(in, out, in_.flag(), dt, dev, &m), m, {nullptr, Expects::kFeatures, in, 0, false});
        break;
      }
      case 1: {
        g_op = "dt_<activation>_new";
        const int64_t dim = in_.geometry(-3, 3);
        double p = 0;
        dt_status st;
        switch (in_.pick(8)) {
          case 0: st = dt_relu_new(&m); break;
          case 1: st = dt_sigmoid_new(&m); break;
          case 2: st = dt_tanh_new(&m); break;
          case 3: st = dt_gelu_new(&m); break;
          case 4: st = dt_softmax_new(dim, &m); break;
          case 5: st = dt_log_softmax_new(dim, &m); break;
          case 6: st = dt_dropout_new(p = probability(), &m); break;
          default: st = dt_flatten_new(dim, in_.geometry(-3, 3), &m); break;
        }
        made(st, m, {nullptr, Expects::kAny, 0, 0, false, p != 0});
        break;
      }
      case 2: {
        g_op = "dt_conv2d_new";
        const int64_t groups = in_.rarely(4) ? size(1, 3) : 1;
        const int64_t in = multiple_of(groups), out = multiple_of(groups);
        const int64_t* kernel = in_.rarely(32) ? nullptr : in_.pair(k, 1, 3);
        const int64_t* pad = in_.rarely(6) ? (b[0] = DT_PADDING_SAME, b[1] = 0, b) : in_.pair(b, 0, 2);
        made(dt_conv2d_new(in, out, kernel ? kernel : (k[0] = k[1] = 1, k), in_.pair(a, 1, 2), pad, in_.pair(c, 1, 2),
                           groups, in_.flag(), dt, dev, &m),
             m, {nullptr, Expects::kChannels2d, in, 0, false});
        break;
      }
      case 3: {
        g_op = "dt_conv1d_new";
        const int64_t groups = in_.rarely(4) ? size(1, 3) : 1;
        const int64_t in = multiple_of(groups), out = multiple_of(groups);
        const int64_t pad = in_.rarely(6) ? DT_PADDING_SAME : in_.geometry(0, 2);
        made(dt_conv1d_new(in, out, size(1, 3), size(1, 2), pad, size(1, 2), groups, in_.flag(), dt, dev, &m), m,
             {nullptr, Expects::kChannels1d, in, 0, false});
        break;
      }
      case 4: {
        g_op = "dt_conv_transpose2d_new";
        const int64_t in = size(), out = size();
        made(dt_conv_transpose2d_new(in, out, in_.pair(k, 1, 3), in_.pair(a, 1, 2), in_.pair(b, 0, 2),
                                     in_.pair(c, 0, 1), in_.rarely(8) ? size(1, 2) : 1, in_.flag(), in_.pair(d, 1, 2),
                                     dt, dev, &m),
             m, {nullptr, Expects::kChannels2d, in, 0, false});
        break;
      }
      case 5: {
        g_op = "dt_<pool>_new";
        dt_status st;
        const int which = in_.pick(3);
        const int64_t* kernel = in_.pair(k, 1, which == 2 ? 4 : 3);
        const int64_t *stride = in_.pair(a, 1, 2), *pad = in_.pair(b, 0, 1), *dil = in_.pair(c, 1, 2);
        const int32_t flag1 = in_.flag(), flag2 = in_.flag();
        if (g_trace)
          fprintf(stderr, "  pool %d: kernel %s, stride %s, padding %s, dilation %s, flags %d %d\n", which,
                  pair_str(kernel).c_str(), pair_str(stride).c_str(), pair_str(pad).c_str(), pair_str(dil).c_str(),
                  flag1, flag2);
        switch (which) {
          case 0: st = dt_max_pool2d_new(kernel, stride, pad, dil, flag1, &m); break;
          case 1: st = dt_avg_pool2d_new(kernel, stride, pad, flag1, flag2, &m); break;
          default: st = dt_adaptive_avg_pool2d_new(kernel, &m); break;
        }
        made(st, m, {nullptr, Expects::kChannels2d, -1, 0, false});  // -1: any channel count
        break;
      }
      case 6: {
        const bool two_d = in_.rarely(2);
        g_op = two_d ? "dt_batch_norm2d_new" : "dt_batch_norm1d_new";
        const int64_t nf = size();
        const double e = eps(), momentum = in_.rarely(6) ? in_.real() : 0.1;
        const int32_t affine = in_.flag(), track = in_.flag();
        made(two_d ? dt_batch_norm2d_new(nf, e, momentum, affine, track, dt, dev, &m)
                   : dt_batch_norm1d_new(nf, e, momentum, affine, track, dt, dev, &m),
             m, {nullptr, two_d ? Expects::kChannels2d : Expects::kChannels1d, nf, 0, false});
        break;
      }
      case 7: {
        g_op = "dt_layer_norm_new";
        std::vector<int64_t> shape(static_cast<size_t>(in_.small(0, 2)));
        for (auto& s : shape) s = size();
        made(dt_layer_norm_new(shape.data(), shape.size(), eps(), in_.flag(), in_.flag(), dt, dev, &m), m,
             {nullptr, Expects::kFeatures, shape.empty() ? 1 : shape.back(), 0, false});
        break;
      }
      case 8: {
        g_op = "dt_group_norm_new";
        const int64_t groups = size(1, 3), channels = in_.rarely(6) ? size() : multiple_of(groups);
        made(dt_group_norm_new(groups, channels, eps(), in_.flag(), dt, dev, &m), m,
             {nullptr, Expects::kChannels2d, channels, 0, false});
        break;
      }
      case 9: {
        g_op = "dt_embedding_new";
        const int64_t rows = size(), dim = size();
        const int64_t pad = in_.rarely(2) ? DT_PADDING_IDX_NONE : in_.geometry(-4, 4);
        made(dt_embedding_new(rows, dim, pad, dt, dev, &m), m, {nullptr, Expects::kIndices, dim, rows, false});
        break;
      }
      case 10: {
        g_op = "dt_multihead_attention_new";
        const int64_t heads = size(1, 2), embed = in_.rarely(8) ? size() : multiple_of(heads);
        const int32_t batch_first = in_.flag();
        const double p = probability();
        made(dt_multihead_attention_new(embed, heads, p, in_.flag(), batch_first, dt, dev, &m), m,
             {nullptr, Expects::kSequence, embed, 0, batch_first == 1, p != 0});
        break;
      }
      case 11: {
        g_op = "dt_transformer_encoder_layer_new";
        const int64_t heads = size(1, 2), d_model = in_.rarely(8) ? size() : multiple_of(heads);
        const char* activations[] = {"relu", "gelu", nullptr, "tanh", ""};
        const int32_t batch_first = in_.flag();
        const double p = probability();
        made(dt_transformer_encoder_layer_new(d_model, heads, size(1, 6), p,
                                              activations[in_.rarely(4) ? in_.pick(5) : 0], eps(), batch_first,
                                              in_.flag(), dt, dev, &m),
             m, {nullptr, Expects::kSequence, d_model, 0, batch_first == 1, p != 0});
        break;
      }
      case 12: {  // Sequential of modules this input holds (maybe none, maybe one twice)
        g_op = "dt_sequential_new";
        std::vector<dt_module*> children;
        const Mod first = pick_children(&children);
        made(dt_sequential_new(children.empty() && in_.rarely(2) ? nullptr : children.data(), children.size(), &m),
             m, first);
        break;
      }
      case 13: {  // TransformerEncoder of modules this input holds (layers, or not)
        g_op = "dt_transformer_encoder_new";
        std::vector<dt_module*> layers;
        Mod first{nullptr, Expects::kAny, 0, 0, false};
        for (int i = 0, n = in_.pick(3) + 1; i < n && !mods_.empty(); ++i) {
          Mod* c = any_module();
          if (i == 0) first = *c;
          first.random = first.random || c->random;
          layers.push_back(c->m);
        }
        Mod* norm = in_.rarely(2) ? any_module() : nullptr;
        made(dt_transformer_encoder_new(layers.data(), layers.size(), norm ? norm->m : nullptr, &m), m, first);
        break;
      }
      case 14: {  // the losses, CrossEntropyLoss's and NLLLoss's class weights maybe
        const int64_t classes = in_.small(1, 4);
        dt_tensor* weight = nullptr;
        if (in_.rarely(2)) weight = tensor({in_.rarely(8) ? classes + 1 : classes}, in_.rarely(8) ? in_.dtype() : dt, dev);
        const int32_t reduction = in_.rarely(12) ? static_cast<int32_t>(in_.small(-1, 5)) : static_cast<int32_t>(in_.small(0, 2));
        const int64_t ignore = in_.rarely(2) ? -100 : in_.geometry(-2, 3);
        dt_status st;
        Expects e = Expects::kLoss;
        // The pointwise losses take (input, target) of one shape, as MSELoss; their weights
        // may not broadcast, BCE's inputs are mostly outside [0, 1]: error paths too.
        const double setting = in_.rarely(8) ? in_.real() : in_.small(0, 3) * 0.5;
        switch (in_.pick(9)) {
          case 0: g_op = "dt_cross_entropy_loss_new";
                  st = dt_cross_entropy_loss_new(weight, reduction, ignore, in_.rarely(2) ? 0.0 : probability(), &m); break;
          case 1: g_op = "dt_nll_loss_new"; st = dt_nll_loss_new(weight, reduction, ignore, &m); break;
          case 2: g_op = "dt_mse_loss_new"; st = dt_mse_loss_new(reduction, &m); e = Expects::kMseLoss; break;
          case 3: g_op = "dt_l1_loss_new"; st = dt_l1_loss_new(reduction, &m); e = Expects::kMseLoss; break;
          case 4: g_op = "dt_smooth_l1_loss_new"; st = dt_smooth_l1_loss_new(reduction, setting, &m); e = Expects::kMseLoss; break;
          case 5: g_op = "dt_huber_loss_new"; st = dt_huber_loss_new(reduction, setting, &m); e = Expects::kMseLoss; break;
          case 6: g_op = "dt_bce_loss_new"; st = dt_bce_loss_new(weight, reduction, &m); e = Expects::kMseLoss; break;
          case 7: {
            g_op = "dt_bce_with_logits_loss_new";
            dt_tensor* pos = in_.rarely(2) ? tensor({classes}, in_.rarely(8) ? in_.dtype() : dt, dev) : nullptr;
            st = dt_bce_with_logits_loss_new(weight, pos, reduction, &m);
            e = Expects::kMseLoss;
            break;
          }
          default: g_op = "dt_kl_div_loss_new"; st = dt_kl_div_loss_new(reduction, in_.flag(), &m); e = Expects::kMseLoss; break;
        }
        made(st, m, {nullptr, e, classes, classes, false});
        break;
      }
      case 15: {  // RNN, LSTM, GRU: a sequence like attention's; extra inputs are states
        const int64_t input = size(1, 4), hidden = size(1, 4), layers = size(1, 2);
        const int32_t batch_first = in_.flag(), bidirectional = in_.flag(), bias = in_.flag();
        const double p = probability();
        dt_status st;
        switch (in_.pick(3)) {
          case 0: g_op = "dt_lstm_new"; st = dt_lstm_new(input, hidden, layers, bias, batch_first, p, bidirectional, dt, dev, &m); break;
          case 1: g_op = "dt_gru_new"; st = dt_gru_new(input, hidden, layers, bias, batch_first, p, bidirectional, dt, dev, &m); break;
          default:
            g_op = "dt_rnn_new";
            st = dt_rnn_new(input, hidden, layers, in_.rarely(8) ? "sigmoid" : (in_.flag() ? "relu" : "tanh"), bias,
                            batch_first, p, bidirectional, dt, dev, &m);
            break;
        }
        made(st, m, {nullptr, Expects::kSequence, input, 0, batch_first == 1, p != 0 && layers > 1});
        break;
      }
      case 16: {  // a module of the caller's (dt_module_new) over modules this input holds
        g_op = "dt_module_new";
        std::vector<dt_module*> children;
        const Mod first = pick_children(&children);
        std::vector<std::string> names;
        for (size_t i = 0; i < children.size(); ++i)
          names.push_back(in_.rarely(8) ? (in_.rarely(2) ? "a.b" : "c0") : "c" + std::to_string(i));
        std::vector<const char*> cnames;
        for (const std::string& name : names) cnames.push_back(name.c_str());
        const int64_t one = 1;
        dt_tensor* param = in_.rarely(3) ? tensor({in_.rarely(4) ? 0 : one}, dt, dev) : nullptr;
        const char* pname = in_.rarely(8) ? "c0" : "scale";
        dt_module_spec spec{};
        spec.struct_size = in_.rarely(16) ? 8 : sizeof spec;
        spec.kind = in_.rarely(16) ? "" : "Custom";
        spec.n_children = children.size();
        spec.child_names = cnames.data();
        spec.children = children.data();
        spec.n_parameters = param ? 1 : 0;
        spec.parameter_names = &pname;
        spec.parameters = const_cast<const dt_tensor* const*>(&param);
        spec.min_inputs = static_cast<size_t>(in_.pick(2));
        spec.max_inputs = static_cast<size_t>(in_.rarely(8) ? in_.small(0, 20) : 1 + in_.pick(2));
        spec.forward = custom_forward;
        spec.user_data = reinterpret_cast<void*>(static_cast<intptr_t>(in_.rarely(4) ? 1 + in_.pick(3) : 0));
        made(dt_module_new(&spec, &m), m, first);
        break;
      }
      default: {  // DataParallel over cpu:0 and cpu:1 (or a device that does not exist)
        Mod* inner = any_module();
        if (inner == nullptr) return;
        g_op = "dt_data_parallel_new";
        dt_device ids[3] = {{DT_DEVICE_CPU, in_.rarely(4) ? 1 : 0}, {DT_DEVICE_CPU, 1}, {DT_DEVICE_CPU, 0}};
        if (in_.rarely(8)) ids[1].index = static_cast<int32_t>(in_.small(-1, 3));
        const size_t n = static_cast<size_t>(in_.pick(3));
        const dt_device output = in_.rarely(3) ? device() : dt_device{DT_DEVICE_DEFAULT, 0};
        Mod rec = *inner;
        made(dt_data_parallel_new(inner->m, ids, n, output, &m), m, rec);
        break;
      }
    }
  }

  // ---------------------------------------------------------------- forward

  // The inputs for m: of the shape it expects unless the input says otherwise.
  std::vector<const dt_tensor*> inputs_for(const Mod& rec, dt_dtype dt, dt_device dev) {
    const bool wrong = in_.rarely(10);
    auto feat = [&](int64_t f) { return wrong || f < 0 || f > 8 ? in_.small(0, 5) : f; };
    const int64_t n = in_.small(in_.rarely(10) ? 0 : 1, 4);
    std::vector<const dt_tensor*> in;
    switch (rec.expects) {
      case Expects::kFeatures: {
        auto s = in_.shape(0, 2, 4);
        s.push_back(feat(rec.features));
        in.push_back(tensor(s, dt, dev));
        break;
      }
      case Expects::kChannels1d:
        in.push_back(tensor(in_.rarely(4) ? std::vector<int64_t>{n, feat(rec.features)}
                                          : std::vector<int64_t>{n, feat(rec.features), in_.small(1, 6)},
                            dt, dev));
        break;
      case Expects::kChannels2d: {
        std::vector<int64_t> s{feat(rec.features), in_.small(1, 6), in_.small(1, 6)};
        if (!in_.rarely(6)) s.insert(s.begin(), n);
        in.push_back(tensor(s, dt, dev));
        break;
      }
      case Expects::kIndices:
        in.push_back(wrong ? tensor(in_.shape(0, 3, 4), dt, dev)
                           : indices(in_.shape(0, 3, 4), rec.classes_or_rows + (in_.rarely(8) ? 1 : 0), dev));
        break;
      case Expects::kSequence: {  // query [L, N, E] ([N, L, E] batch first, or [L, E]), then maybe masks
        const int64_t L = in_.small(1, 4), E = feat(rec.features);
        const bool batched = !in_.rarely(6);
        std::vector<int64_t> s = batched ? (rec.batch_first ? std::vector<int64_t>{n, L, E} : std::vector<int64_t>{L, n, E})
                                         : std::vector<int64_t>{L, E};
        in.push_back(tensor(s, dt, dev));
        for (int extra = in_.pick(3); extra > 0; --extra) {
          if (in_.rarely(3)) {
            in.push_back(nullptr);
          } else {
            // a mask: [L, L] (attn_mask) or [N, L] (key padding), bool or float
            std::vector<int64_t> ms = in_.rarely(2) ? std::vector<int64_t>{L, L} : std::vector<int64_t>{n, L};
            if (in_.rarely(8)) ms.back() += 1;
            in.push_back(in_.rarely(2) ? tensor(ms, dt, dev) : indices(ms, 2, dev));
            if (in_.rarely(2)) {  // a bool mask, as PyTorch's
              dt_tensor* b = nullptr;
              if (dt_tensor_to(in.back(), dt_device{DT_DEVICE_DEFAULT, 0}, DT_BOOL, 0, &b) == DT_OK) in.back() = hold(b);
            }
          }
        }
        break;
      }
      case Expects::kLoss:  // input [N, C], target [N] class indices
        in.push_back(tensor({n, feat(rec.features)}, dt, dev));
        in.push_back(wrong ? tensor({n}, dt, dev) : indices({in_.rarely(8) ? n + 1 : n}, rec.classes_or_rows, dev));
        break;
      case Expects::kMseLoss: {
        auto s = in_.shape(0, 3, 4);
        in.push_back(tensor(s, dt, dev));
        if (wrong && !s.empty()) s.back() += 1;
        in.push_back(tensor(s, dt, dev));
        break;
      }
      default:
        in.push_back(tensor(in_.shape(0, 4, 4), dt, dev));
        break;
    }
    if (in_.rarely(16)) in.push_back(tensor({1}, dt, dev));  // one input too many
    if (in_.rarely(32)) in[0] = nullptr;
    return in;
  }

  void forward() {
    Mod* rec = any_module();
    if (rec == nullptr) return;
    dt_device dev{DT_DEVICE_CPU, 0};
    if (!in_.rarely(8)) REQUIRE(dt_module_device(rec->m, &dev) == DT_OK, "module device");
    const dt_dtype dt = in_.rarely(8) ? in_.dtype() : (in_.rarely(4) ? DT_FLOAT64 : DT_FLOAT32);
    auto inputs = inputs_for(*rec, dt, dev);
    g_op = "dt_module_forward";
    dt_tensor* out = static_cast<dt_tensor*>(fuzz::kUntouched);
    const int32_t no_grad = in_.rarely(6);
    if (no_grad) REQUIRE(dt_set_grad_enabled(0) == DT_OK, "no_grad");
    const dt_status st = dt_module_forward(rec->m, inputs.data(), inputs.size(), &out);
    if (no_grad) REQUIRE(dt_set_grad_enabled(1) == DT_OK, "grad");
    if (!ok(st)) {
      REQUIRE(out == fuzz::kUntouched, "forward failed but wrote *out (%p)", (void*)out);
      return;
    }
    REQUIRE(out != nullptr && out != fuzz::kUntouched, "forward: success without a result");
    last_out_ = hold(out);
    const auto bytes = check_tensor(out);
    // Without random draws a module is a function of its input: a second forward gives
    // the same bytes (a read of memory never written would show here).
    if (rec->random || !in_.rarely(3)) return;
    dt_tensor* again = nullptr;
    g_op = "dt_module_forward (again)";
    REQUIRE(ok(dt_module_forward(rec->m, inputs.data(), inputs.size(), &again)), "the same forward failed");
    hold(again);
    REQUIRE(check_tensor(again) == bytes, "a second forward on the same input gave other bytes");
  }

  // backward through the sum of the last forward's result, then an optimizer step over
  // some module's parameters.
  void train_step() {
    if (last_out_ != nullptr) {
      dt_tensor* total = nullptr;
      g_op = "dt_sum";
      if (ok(dt_sum(last_out_, nullptr, 0, 0, &total))) {
        hold(total);
        g_op = "dt_backward";
        ok(dt_backward(total, nullptr));
      }
      last_out_ = nullptr;
    }
    Mod* rec = any_module();
    if (rec == nullptr) return;
    std::vector<dt_tensor*> params;
    size_t n = 0;
    REQUIRE(dt_module_parameter_count(rec->m, &n) == DT_OK, "parameter count");
    for (size_t i = 0; i < n; ++i) {
      dt_tensor* p = nullptr;
      REQUIRE(dt_module_parameter(rec->m, i, nullptr, 0, nullptr, &p) == DT_OK, "parameter %zu", i);
      params.push_back(hold(p));
      dt_tensor* g = nullptr;
      g_op = "dt_tensor_grad";
      if (ok(dt_tensor_grad(p, &g)) && g != nullptr) {
        hold(g);
        check_tensor(g);
      }
    }
    if (in_.rarely(8) && !params.empty()) params.push_back(params[0]);  // listed twice
    dt_optimizer* opt = reinterpret_cast<dt_optimizer*>(fuzz::kUntouched);
    const double lr = in_.rarely(8) ? in_.real() : 0.01;
    dt_status st;
    if (in_.rarely(2)) {
      g_op = "dt_sgd_new";
      const double momentum = in_.rarely(2) ? 0.0 : 0.9;
      st = dt_sgd_new(params.data(), params.size(), lr, momentum, 0.0, in_.rarely(4) ? 0.01 : 0.0,
                      momentum > 0 ? in_.flag() : 0, &opt);
    } else if (const int kind = in_.pick(3); kind == 0) {
      g_op = "dt_adam_new";
      st = dt_adam_new(params.data(), params.size(), lr, 0.9, in_.rarely(8) ? in_.real() : 0.999, 1e-8,
                       in_.rarely(4) ? 0.01 : 0.0, in_.flag(), &opt);
    } else if (kind == 1) {
      g_op = "dt_rmsprop_new";
      st = dt_rmsprop_new(params.data(), params.size(), lr, in_.rarely(8) ? in_.real() : 0.99,
                          in_.rarely(8) ? in_.real() : 1e-8, in_.rarely(4) ? 0.01 : 0.0,
                          in_.rarely(2) ? 0.9 : 0.0, in_.flag(), &opt);
    } else {
      g_op = "dt_adagrad_new";
      st = dt_adagrad_new(params.data(), params.size(), lr, in_.rarely(4) ? 0.01 : 0.0, in_.rarely(4) ? 0.01 : 0.0,
                          in_.rarely(8) ? in_.real() : 0.0, in_.rarely(8) ? in_.real() : 1e-10, &opt);
    }
    if (!ok(st)) {
      REQUIRE(opt == fuzz::kUntouched, "%s failed but wrote *out", g_op);
      return;
    }
    // Sometimes a learning-rate scheduler over it, with fuzzed settings (made, or refused
    // with *out untouched and the rate as it was), stepped between the optimizer's steps.
    dt_lr_scheduler* sched = in_.rarely(2) ? make_scheduler(opt) : nullptr;
    static const char* const kSettings[] = {"lr",       "momentum", "dampening", "weight_decay",
                                            "nesterov", "beta1",    "beta2",     "eps",
                                            "amsgrad",  "alpha",    "centered",  "lr_decay",
                                            "maximize", "initial_accumulator_value", "bogus"};
    for (int i = 0, steps = in_.pick(3) + 1; i < steps; ++i) {
      if (in_.rarely(2)) {  // a setting changed between steps, as a schedule does: accepted, or refused unchanged
        const char* name = kSettings[in_.pick(static_cast<int>(sizeof kSettings / sizeof *kSettings))];
        const double value = in_.rarely(2) ? static_cast<double>(in_.flag()) : in_.real();
        double old = 0, now = 0;
        const bool known = dt_optimizer_option(opt, name, &old) == DT_OK;
        g_op = "dt_optimizer_set_option";
        const bool set = ok(dt_optimizer_set_option(opt, name, value));
        REQUIRE(!set || known, "dt_optimizer_set_option took '%s', which dt_optimizer_option does not know", name);
        if (known) {
          REQUIRE(dt_optimizer_option(opt, name, &now) == DT_OK, "dt_optimizer_option(%s)", name);
          REQUIRE(set ? (now == value || (value != value && now != now)) : (now == old || (old != old && now != now)),
                  "'%s' is %g after setting %g (%s; it was %g)", name, now, value, set ? "accepted" : "refused", old);
        }
      }
      const auto before = snapshot(rec->m);
      g_op = "dt_optimizer_step";
      if (!ok(dt_optimizer_step(opt))) REQUIRE(snapshot(rec->m) == before, "a failed step changed the module");
      if (sched) step_scheduler(sched, opt);
    }
    if (sched) {
      g_op = "dt_lr_scheduler_state_dict";
      dt_state_dict* sd = nullptr;
      if (ok(dt_lr_scheduler_state_dict(sched, &sd))) {
        g_op = "dt_lr_scheduler_load_state_dict";
        REQUIRE(ok(dt_lr_scheduler_load_state_dict(sched, sd)), "a scheduler refused its own state dict");
        dt_state_dict_release(sd);
      }
      REQUIRE(dt_lr_scheduler_release(sched) == DT_OK, "release the scheduler");
    }
    g_op = "dt_optimizer_zero_grad";
    REQUIRE(ok(dt_optimizer_zero_grad(opt)), "zero_grad");
    REQUIRE(dt_optimizer_release(opt) == DT_OK, "release the optimizer");
  }

  // The user data of a fuzzed LambdaLR or MultiplicativeLR: its factor at epoch e is
  // values[e % 4]. (ASan reports it leaked or freed twice.)
  struct LambdaFactors {
    double values[4];
    static double call(int64_t epoch, void* self) { return static_cast<LambdaFactors*>(self)->values[epoch % 4]; }
    static void release(void* self) { delete static_cast<LambdaFactors*>(self); }
  };

  // A scheduler of a fuzzed kind and settings over opt, or nullptr when refused (then
  // *out and the optimizer's rate must be as they were).
  dt_lr_scheduler* make_scheduler(dt_optimizer* opt) {
    double lr_before = 0, lr_after = 0;
    REQUIRE(dt_optimizer_lr(opt, &lr_before) == DT_OK, "dt_optimizer_lr");
    dt_lr_scheduler* s = reinterpret_cast<dt_lr_scheduler*>(fuzz::kUntouched);
    auto real_or = [&](double usual) { return in_.rarely(4) ? in_.real() : usual; };
    auto whole_or = [&](int64_t usual) { return in_.rarely(4) ? in_.geometry(-2, 8) : usual; };
    dt_status st;
    const int kind = in_.pick(13);
    switch (kind) {
      case 0:
        g_op = "dt_step_lr_new";
        st = dt_step_lr_new(opt, whole_or(2), real_or(0.5), &s);
        break;
      case 1: {
        g_op = "dt_multi_step_lr_new";
        const int64_t ms[] = {whole_or(1), whole_or(3), whole_or(3)};
        st = dt_multi_step_lr_new(opt, ms, static_cast<size_t>(in_.pick(4)), real_or(0.1), &s);
        break;
      }
      case 2:
        g_op = "dt_linear_lr_new";
        st = dt_linear_lr_new(opt, real_or(0.25), real_or(1.0), whole_or(3), &s);
        break;
      case 3:
        g_op = "dt_cosine_annealing_lr_new";
        st = dt_cosine_annealing_lr_new(opt, whole_or(3), real_or(0.0), &s);
        break;
      case 4:
        g_op = "dt_cosine_annealing_warm_restarts_new";
        st = dt_cosine_annealing_warm_restarts_new(opt, whole_or(2), whole_or(2), real_or(0.0), &s);
        break;
      case 5:
        g_op = "dt_one_cycle_lr_new";
        st = dt_one_cycle_lr_new(opt, real_or(0.1), whole_or(4), real_or(0.3), in_.rarely(2) ? "cos" : "linear",
                                 in_.flag(), real_or(0.85), real_or(0.95), real_or(25), real_or(1e4), in_.flag(), &s);
        break;
      case 6:
        g_op = "dt_reduce_lr_on_plateau_new";
        st = dt_reduce_lr_on_plateau_new(opt, in_.rarely(2) ? "min" : "max", real_or(0.5), whole_or(0), real_or(1e-4),
                                         in_.rarely(2) ? "rel" : "abs", whole_or(1), real_or(0.0), real_or(1e-8), &s);
        break;
      case 7:
      case 8: {
        // The function's factors, fuzzed (NaN, negative and huge ones included), cycled
        // by epoch; its data is freed by the scheduler, or here when making it failed.
        auto* f = new LambdaFactors;
        for (double& v : f->values) v = in_.rarely(3) ? in_.real() : 0.5 + 0.1 * static_cast<double>(in_.small(0, 10));
        g_op = kind == 7 ? "dt_lambda_lr_new" : "dt_multiplicative_lr_new";
        st = (kind == 7 ? dt_lambda_lr_new : dt_multiplicative_lr_new)(opt, LambdaFactors::call, f,
                                                                        LambdaFactors::release, &s);
        if (!ok(st)) delete f;
        break;
      }
      case 9:
        g_op = "dt_constant_lr_new";
        st = dt_constant_lr_new(opt, real_or(0.5), whole_or(3), &s);
        break;
      case 10:
        g_op = "dt_polynomial_lr_new";
        st = dt_polynomial_lr_new(opt, whole_or(4), real_or(1.0), &s);
        break;
      case 11: {
        static const char* const kModes[] = {"triangular", "triangular2", "exp_range", "sawtooth"};
        g_op = "dt_cyclic_lr_new";
        st = dt_cyclic_lr_new(opt, real_or(0.01), real_or(0.1), whole_or(2), whole_or(0), kModes[in_.pick(4)],
                              real_or(0.9), in_.flag(), real_or(0.8), real_or(0.9), &s);
        break;
      }
      default: {
        g_op = "dt_exponential_lr_new";
        dt_lr_scheduler* first = nullptr;
        if (!ok(dt_exponential_lr_new(opt, real_or(0.9), &first))) {
          st = DT_ERR_INVALID_ARGUMENT;  // refused above, checked there
          break;
        }
        // A SequentialLR of it and a StepLR, or a ChainedScheduler of it and a OneCycleLR,
        // whose refusal past its end the chain must undo whole.
        const bool chain = in_.rarely(2);
        dt_lr_scheduler* second = nullptr;
        g_op = chain ? "dt_one_cycle_lr_new" : "dt_step_lr_new";
        if (!ok(chain ? dt_one_cycle_lr_new(opt, real_or(0.1), whole_or(4), 0.5, "linear", in_.flag(), 0.85, 0.95, 25,
                                            1e4, 0, &second)
                      : dt_step_lr_new(opt, 2, 0.5, &second))) {
          dt_lr_scheduler_release(first);
          return nullptr;
        }
        dt_lr_scheduler* both[] = {first, second};
        const int64_t ms[] = {whole_or(2)};
        g_op = chain ? "dt_chained_scheduler_new" : "dt_sequential_lr_new";
        REQUIRE(dt_optimizer_lr(opt, &lr_before) == DT_OK, "dt_optimizer_lr");
        st = chain ? dt_chained_scheduler_new(both, static_cast<size_t>(in_.pick(3)), &s)
                   : dt_sequential_lr_new(opt, both, 2, ms, &s);
        dt_lr_scheduler_release(first);
        dt_lr_scheduler_release(second);
      }
    }
    REQUIRE(dt_optimizer_lr(opt, &lr_after) == DT_OK, "dt_optimizer_lr");
    if (!ok(st)) {
      REQUIRE(s == fuzz::kUntouched, "%s failed but wrote *out", g_op);
      REQUIRE(lr_after == lr_before, "%s failed but changed the rate from %g to %g", g_op, lr_before, lr_after);
      return nullptr;
    }
    REQUIRE(std::isfinite(lr_after) && lr_after >= 0, "%s set the rate %g", g_op, lr_after);
    return s;
  }

  // One step (or a metric step) of s: a finite rate >= 0 after it, or refused with the
  // rate and the scheduler's epoch as they were.
  void step_scheduler(dt_lr_scheduler* s, dt_optimizer* opt) {
    double before = 0, after = 0;
    int64_t epoch_before = 0, epoch_after = 0;
    REQUIRE(dt_optimizer_lr(opt, &before) == DT_OK && dt_lr_scheduler_last_epoch(s, &epoch_before) == DT_OK,
            "reading the rate and epoch");
    const bool metric = in_.rarely(2);
    g_op = metric ? "dt_lr_scheduler_step_metric" : "dt_lr_scheduler_step";
    const bool stepped = ok(metric ? dt_lr_scheduler_step_metric(s, in_.real()) : dt_lr_scheduler_step(s));
    REQUIRE(dt_optimizer_lr(opt, &after) == DT_OK && dt_lr_scheduler_last_epoch(s, &epoch_after) == DT_OK,
            "reading the rate and epoch");
    if (!stepped) {
      REQUIRE(after == before && epoch_after == epoch_before, "a refused %s changed the rate or the epoch", g_op);
      return;
    }
    REQUIRE(epoch_after == epoch_before + 1, "%s took the epoch from %lld to %lld", g_op,
            static_cast<long long>(epoch_before), static_cast<long long>(epoch_after));
    REQUIRE(std::isfinite(after) && after >= 0, "%s set the rate %g", g_op, after);
  }

  // ---------------------------------------------------------------- the rest

  void move() {
    Mod* rec = any_module();
    if (rec == nullptr) return;
    dt_device to{DT_DEVICE_CPU, static_cast<int32_t>(in_.rarely(8) ? in_.small(-1, 4) : in_.small(0, 1))};
    if (in_.rarely(16)) to = dt_device{static_cast<int32_t>(in_.small(-1, 20)), 0};  // cuda:0, unknown types
    const auto before = snapshot(rec->m);
    g_op = "dt_module_to";
    if (!ok(dt_module_to(rec->m, to))) {
      REQUIRE(snapshot(rec->m) == before, "a failed dt_module_to changed the module");
      return;
    }
    for (const Entry& e : snapshot(rec->m))
      REQUIRE(to.type == DT_DEVICE_DEFAULT || (e.device.type == to.type && e.device.index == to.index),
              "%s on device %d:%d after dt_module_to(%d:%d)", e.name.c_str(), e.device.type, e.device.index, to.type,
              to.index);
  }

  void inspect() {
    Mod* rec = any_module();
    if (rec == nullptr) return;
    char buf[8];  // short: the string protocol reports the size needed
    size_t needed = 0, n = 0;
    g_op = "dt_module_kind";
    REQUIRE(ok(dt_module_kind(rec->m, buf, sizeof buf, &needed)) && needed > 0, "kind");
    REQUIRE(dt_module_child_count(rec->m, &n) == DT_OK, "child count");
    const size_t i = static_cast<size_t>(in_.small(0, static_cast<int64_t>(n)));  // n: out of range
    dt_module* child = untouched();
    g_op = "dt_module_child_at";
    if (ok(dt_module_child_at(rec->m, i, buf, sizeof buf, &needed, &child))) {
      REQUIRE(i < n, "child %zu of %zu", i, n);
      REQUIRE(dt_module_release(child) == DT_OK, "release child");
    } else {
      REQUIRE(i >= n && child == untouched(), "child_at(%zu) of %zu failed", i, n);
    }
    static const char* paths[] = {"0", "1", "0.0", "layers.0", "self_attn.out_proj", "module", "", ".", "0.", "x.y.z",
                                  "99999999999999999999"};
    child = untouched();
    g_op = "dt_module_child";
    if (ok(dt_module_child(rec->m, paths[in_.pick(11)], &child))) {
      REQUIRE(dt_module_release(child) == DT_OK, "release child");
    } else {
      REQUIRE(child == untouched(), "dt_module_child failed but wrote *out");
    }
    const bool train = in_.rarely(2);
    g_op = train ? "dt_module_train" : "dt_module_eval";
    REQUIRE(ok(train ? dt_module_train(rec->m) : dt_module_eval(rec->m)), "train/eval");
  }

  // A state dict or a safetensors file of one module loaded into another (or itself),
  // sometimes with an entry changed or the file cut short.
  void load() {
    Mod* from = any_module();
    Mod* into = any_module();
    if (from == nullptr) return;
    dt_state_dict* sd = nullptr;
    g_op = "dt_module_state_dict";
    REQUIRE(ok(dt_module_state_dict(from->m, &sd)), "state dict");
    size_t count = 0;
    REQUIRE(dt_state_dict_count(sd, &count) == DT_OK, "count");
    if (in_.rarely(3)) {  // one entry replaced by a tensor of another shape, or a new key
      static const char* names[] = {"weight", "bias", "0.weight", "running_mean", "extra"};
      dt_tensor* t = tensor(in_.shape(0, 2, 3), in_.rarely(4) ? in_.dtype() : DT_FLOAT32, device());
      g_op = "dt_state_dict_set";
      ok(dt_state_dict_set(sd, names[in_.pick(5)], t));
    }
    const auto before = snapshot(into->m);
    if (in_.rarely(2)) {
      g_op = "dt_module_load_state_dict";
      if (!ok(dt_module_load_state_dict(into->m, sd)))
        REQUIRE(snapshot(into->m) == before, "a failed dt_module_load_state_dict changed the module");
    } else {
      unlink(g_path.c_str());  // the tensors of a loaded file map it: never write into a mapped file
      g_op = "dt_safetensors_save";
      if (ok(dt_safetensors_save(sd, g_path.c_str())) && in_.rarely(3)) {
        // cut the file short (a fresh file: truncating the mapped one would fault its readers)
        FILE* f = fopen(g_path.c_str(), "rb");
        std::vector<char> bytes;
        if (f != nullptr) {
          char chunk[4096];
          for (size_t got; (got = fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + got);
          fclose(f);
        }
        bytes.resize(static_cast<size_t>(in_.small(0, static_cast<int64_t>(bytes.size()))));
        unlink(g_path.c_str());
        f = fopen(g_path.c_str(), "wb");
        REQUIRE(f != nullptr, "cannot write %s", g_path.c_str());
        fwrite(bytes.data(), 1, bytes.size(), f);
        fclose(f);
      }
      g_op = "dt_module_load";
      if (!ok(dt_module_load(into->m, g_path.c_str())))
        REQUIRE(snapshot(into->m) == before, "a failed dt_module_load changed the module");
    }
    REQUIRE(dt_state_dict_release(sd) == DT_OK, "release the state dict");
  }

  void release_one() {
    if (mods_.empty()) return;
    const size_t i = static_cast<size_t>(in_.pick(static_cast<int>(mods_.size())));
    REQUIRE(dt_module_release(mods_[i].m) == DT_OK, "release");
    // a released handle is refused, never a crash
    size_t n = 0;
    g_op = "dt_module_parameter_count (released)";
    dt_status st = dt_module_parameter_count(mods_[i].m, &n);
    // (OK while a container still holds the module)
    REQUIRE(st == DT_ERR_INVALID_HANDLE || st == DT_OK, "released module: status %d", (int)st);
    mods_.erase(mods_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void step() {
    switch (in_.pick(9)) {
      case 0: case 1: case 2: construct(); break;
      case 3: case 4: forward(); break;
      case 5: train_step(); break;
      case 6: move(); break;
      case 7: inspect(); break;
      default:
        if (in_.rarely(3)) {
          release_one();
        } else {
          load();
        }
        break;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DEVTENSOR_CPU_DEVICES", "2", 1);  // cpu:1 for moves and DataParallel; read at first use
  g_trace = getenv("FUZZ_MODULES_TRACE") != nullptr;
  const char* tmp = getenv("TMPDIR");
  g_path = std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/fuzz_modules." +
           std::to_string(getpid()) + ".safetensors";
  atexit([] { unlink(g_path.c_str()); });
  fuzz::g_live_at_start = dt_live_handle_count();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program(data, size).run();
  return 0;
}
