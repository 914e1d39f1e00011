// Modules the caller defines (dt_module_new, PyTorch's nn.Module subclass) through the C
// API: state-dict names as PyTorch's, parameters that train (gradients checked by hand),
// copies that are the module's own, dt_module_to, train/eval and DataParallel reaching
// them, the forward function's failures reported with its status and message, every bad
// spec refused with nothing leaked and user_data left to the caller, and user_data freed
// once when the module and its replicas are gone. tests c.resnet18 (bindings/c) builds
// torchvision's ResNet-18 this way and checks PyTorch's logits.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

// Two logical CPU devices, before the library reads the variable.
const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "2", 1) == 0; }();

class CustomModule : public LeakChecked {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kDevicesSet);
    LeakChecked::SetUp();
  }
};

T tensor(const std::vector<double>& v, std::vector<int64_t> shape, dt_device d = cpu()) {
  T out;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, shape.data(), shape.size(), DT_FLOAT64, d, out.out()), DT_OK);
  return out;
}

// What the test's forward functions count and are told to do.
struct Probe {
  std::atomic<int> calls{0};
  std::atomic<int> freed{0};
  dt_status fail_with = DT_OK;  // a status to return (with message "no way"), or DT_OK
  bool no_output = false;       // return DT_OK without writing *out
  bool move_self = false;       // call dt_module_to on self (refused inside a forward)
  bool write_then_fail = false; // write a tensor to *out, then fail (the library drops it)
};
void free_probe(void* p) { ++static_cast<Probe*>(p)->freed; }

// Runs self's child `name` on x: a new tensor, or NULL with the status in *st.
dt_tensor* run_child(dt_module* self, const char* name, dt_tensor* x, dt_status* st) {
  dt_module* c = nullptr;
  dt_tensor* y = nullptr;
  if (*st == DT_OK) *st = dt_module_child(self, name, &c);
  if (*st == DT_OK) *st = dt_module_forward(c, &x, 1, &y);
  dt_module_release(c);
  return *st == DT_OK ? y : nullptr;
}

// relu(bn(conv(x)) * scale + x): children "conv" and "bn", parameter "scale".
dt_status block_forward(dt_module* self, dt_tensor* const* in, size_t, void* user, dt_tensor** out) {
  Probe* probe = static_cast<Probe*>(user);
  if (probe) {
    ++probe->calls;
    if (probe->move_self) return dt_module_to(self, cpu(1));
    if (probe->fail_with != DT_OK) {
      dt_set_error_message("no way");
      return probe->fail_with;
    }
    if (probe->no_output) return DT_OK;
    if (probe->write_then_fail) {
      const int64_t one = 1;
      return dt_tensor_zeros(&one, 1, DT_FLOAT32, cpu(), out) == DT_OK ? DT_ERR_BACKEND : DT_ERR_INTERNAL;
    }
  }
  dt_status st = DT_OK;
  dt_tensor* c = run_child(self, "conv", in[0], &st);
  dt_tensor* b = c ? run_child(self, "bn", c, &st) : nullptr;
  dt_tensor *scale = nullptr, *scaled = nullptr, *sum = nullptr, *y = nullptr;
  if (st == DT_OK) st = dt_module_get_parameter(self, "scale", &scale);
  if (st == DT_OK) st = dt_mul(b, scale, &scaled);
  if (st == DT_OK) st = dt_add(scaled, in[0], &sum);
  if (st == DT_OK) st = dt_relu(sum, &y);
  for (dt_tensor* t : {c, b, scale, scaled, sum}) dt_tensor_release(t);
  if (st == DT_OK) *out = y;
  return st;
}

// A "Block" on `d`: Conv2d(2, 2, 3, padding 1, no bias) and BatchNorm2d(2), float64,
// "scale" [2, 1, 1] = {2, -1}, buffer "steps" (int64, 0-d, 7).
M make_block(Probe* probe, dt_device d = cpu(), dt_module_free_fn free_fn = nullptr) {
  M conv, bn, out;
  const int64_t k[2] = {3, 3}, p[2] = {1, 1};
  EXPECT_EQ(dt_conv2d_new(2, 2, k, nullptr, p, nullptr, 1, 0, DT_FLOAT64, d, conv.out()), DT_OK);
  EXPECT_EQ(dt_batch_norm2d_new(2, 1e-5, 0.1, 1, 1, DT_FLOAT64, d, bn.out()), DT_OK);
  T scale = tensor({2, -1}, {2, 1, 1}, d);
  const int64_t seven = 7;
  T steps;
  EXPECT_EQ(dt_tensor_from_data(&seven, 8, nullptr, 0, DT_INT64, d, steps.out()), DT_OK);
  const char* child_names[] = {"conv", "bn"};
  dt_module* children[] = {conv, bn};
  const char* param_names[] = {"scale"};
  const dt_tensor* params[] = {scale};
  const char* buffer_names[] = {"steps"};
  const dt_tensor* buffers[] = {steps};
  dt_module_spec spec{};
  spec.struct_size = sizeof spec;
  spec.kind = "Block";
  spec.n_children = 2;
  spec.child_names = child_names;
  spec.children = children;
  spec.n_parameters = 1;
  spec.parameter_names = param_names;
  spec.parameters = params;
  spec.n_buffers = 1;
  spec.buffer_names = buffer_names;
  spec.buffers = buffers;
  spec.forward = block_forward;
  spec.user_data = probe;
  spec.free_user_data = free_fn;
  EXPECT_EQ(dt_module_new(&spec, out.out()), DT_OK) << dt_last_error_message();
  return out;
}

std::vector<std::string> names(dt_module* m, bool params) {
  size_t n = 0;
  EXPECT_EQ((params ? dt_module_parameter_count : dt_module_buffer_count)(m, &n), DT_OK);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    char buf[64];
    EXPECT_EQ((params ? dt_module_parameter : dt_module_buffer)(m, i, buf, sizeof buf, nullptr, nullptr), DT_OK);
    out.emplace_back(buf);
  }
  return out;
}

std::string kind_of(dt_module* m) {
  char buf[64];
  EXPECT_EQ(dt_module_kind(m, buf, sizeof buf, nullptr), DT_OK);
  return buf;
}

T forward(dt_module* m, dt_tensor* x) {
  T y;
  EXPECT_EQ(dt_module_forward(m, &x, 1, y.out()), DT_OK) << dt_last_error_message();
  return y;
}

// The block's output computed with the same children called one by one.
std::vector<double> by_hand(dt_module* block, dt_tensor* x) {
  M conv, bn;
  T scale;
  EXPECT_EQ(dt_module_child(block, "conv", conv.out()), DT_OK);
  EXPECT_EQ(dt_module_child(block, "bn", bn.out()), DT_OK);
  EXPECT_EQ(dt_module_get_parameter(block, "scale", scale.out()), DT_OK);
  T c = forward(conv, x), b = forward(bn, c), scaled, sum, y;
  EXPECT_EQ(dt_mul(b, scale, scaled.out()), DT_OK);
  EXPECT_EQ(dt_add(scaled, x, sum.out()), DT_OK);
  EXPECT_EQ(dt_relu(sum, y.out()), DT_OK);
  return values<double>(y);
}

T input(dt_device d = cpu()) {
  std::vector<double> v(2 * 2 * 4 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7) % 11) - 5.0;
  return tensor(v, {2, 2, 4, 5}, d);
}

TEST_F(CustomModule, NamesItsStateAsPyTorchAndRunsItsForward) {
  Probe probe;
  M block = make_block(&probe);
  EXPECT_EQ(kind_of(block), "Block");
  // PyTorch: own parameters first, then the children's, in the order given.
  EXPECT_EQ(names(block, true), (std::vector<std::string>{"scale", "conv.weight", "bn.weight", "bn.bias"}));
  EXPECT_EQ(names(block, false),
            (std::vector<std::string>{"steps", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  T x = input();
  DT_ASSERT_OK(dt_module_eval(block));  // so that a forward changes no running statistics
  T y = forward(block, x);
  EXPECT_EQ(probe.calls.load(), 1);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 2, 4, 5}));
  EXPECT_EQ(values<double>(y), by_hand(block, x));

  // In a Sequential, as any module; the Sequential's names prefix the block's.
  M seq;
  dt_module* items[] = {block};
  DT_ASSERT_OK(dt_sequential_new(items, 1, seq.out()));
  EXPECT_EQ(names(seq, true)[0], "0.scale");
  EXPECT_EQ(values<double>(forward(seq, x)), values<double>(y));
  M bn;
  DT_ASSERT_OK(dt_module_child(seq, "0.bn", bn.out()));
  EXPECT_EQ(kind_of(bn), "BatchNorm2d");
}

TEST_F(CustomModule, ParametersAreTheModulesOwnCopiesAndTrain) {
  // forward(x) = x * w, w = {2, -3}: the sum's gradient for w is each column's sum.
  struct Scale {
    static dt_status forward(dt_module* self, dt_tensor* const* in, size_t, void*, dt_tensor** out) {
      dt_tensor* w = nullptr;
      dt_status st = dt_module_get_parameter(self, "w", &w);
      if (st == DT_OK) st = dt_mul(in[0], w, out);
      dt_tensor_release(w);
      return st;
    }
  };
  T w0 = tensor({2, -3}, {2});
  const char* pn[] = {"w"};
  const dt_tensor* ps[] = {w0};
  dt_module_spec spec{};
  spec.struct_size = sizeof spec;
  spec.kind = "Scale";
  spec.n_parameters = 1;
  spec.parameter_names = pn;
  spec.parameters = ps;
  spec.forward = Scale::forward;
  M m;
  DT_ASSERT_OK(dt_module_new(&spec, m.out()));
  T w;
  DT_ASSERT_OK(dt_module_get_parameter(m, "w", w.out()));
  int32_t rg = 0;
  DT_ASSERT_OK(dt_tensor_requires_grad(w, &rg));
  EXPECT_EQ(rg, 1);
  int32_t shares = 1;
  DT_ASSERT_OK(dt_tensor_shares_storage(w, w0, &shares));
  EXPECT_EQ(shares, 0) << "a parameter is the module's own copy";
  DT_ASSERT_OK(dt_mul_scalar_(w0, 10));  // the caller's tensor stays the caller's
  EXPECT_EQ(values<double>(w), (std::vector<double>{2, -3}));

  T x = tensor({1, 2, 3, 4}, {2, 2}), y = forward(m, x), total;
  EXPECT_EQ(values<double>(y), (std::vector<double>{2, -6, 6, -12}));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, total.out()));
  DT_ASSERT_OK(dt_backward(total, nullptr));
  T g;
  DT_ASSERT_OK(dt_tensor_grad(w, g.out()));
  EXPECT_EQ(values<double>(g), (std::vector<double>{4, 6}));

  // An SGD step on the module's parameters changes what forward uses.
  Handle<dt_optimizer, dt_optimizer_release> sgd;
  const dt_tensor* list[] = {w};
  DT_ASSERT_OK(dt_sgd_new(list, 1, 0.5, 0, 0, 0, 0, sgd.out()));
  DT_ASSERT_OK(dt_optimizer_step(sgd));
  EXPECT_EQ(values<double>(forward(m, x)), (std::vector<double>{0, -12, 0, -24}));  // w = {0, -6}
}

TEST_F(CustomModule, GetParameterAndBufferFollowDottedPathsAndNameWhatIsMissing) {
  Probe probe;
  M block = make_block(&probe);
  T w, steps, mean;
  DT_ASSERT_OK(dt_module_get_parameter(block, "bn.weight", w.out()));
  DT_ASSERT_OK(dt_module_get_buffer(block, "steps", steps.out()));
  DT_ASSERT_OK(dt_module_get_buffer(block, "bn.running_mean", mean.out()));
  EXPECT_EQ(values<int64_t>(steps), (std::vector<int64_t>{7}));
  // The tensor itself: a write through it is the module's.
  const double threes[] = {3, 3};
  DT_ASSERT_OK(dt_tensor_copy_from_host(w, threes, sizeof threes));
  Handle<dt_state_dict, dt_state_dict_release> sd;
  DT_ASSERT_OK(dt_module_state_dict(block, sd.out()));
  T from_sd;
  DT_ASSERT_OK(dt_state_dict_find(sd, "bn.weight", from_sd.out()));
  EXPECT_EQ(values<double>(from_sd), (std::vector<double>{3, 3}));

  T none;
  DT_EXPECT_STATUS(dt_module_get_parameter(block, "bn.gamma", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "no parameter \"bn.gamma\"")) << dt_last_error_message();
  EXPECT_TRUE(has(dt_last_error_message(), "weight, bias")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_module_get_parameter(block, "head.weight", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "no child \"head\"")) << dt_last_error_message();
  EXPECT_TRUE(has(dt_last_error_message(), "the Block there has children conv, bn")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_module_get_buffer(block, "scale", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "buffers steps")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_module_get_buffer(block, "conv.running_mean", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "Conv2d there has no buffers")) << dt_last_error_message();
  EXPECT_EQ(none.get(), nullptr);
}

TEST_F(CustomModule, MovesTrainsAndEvaluatesWithItsChildren) {
  Probe probe;
  M block = make_block(&probe);
  T x0 = input();
  DT_ASSERT_OK(dt_module_eval(block));
  const std::vector<double> on_cpu0 = values<double>(forward(block, x0));
  DT_ASSERT_OK(dt_module_to(block, cpu(1)));
  for (const char* path : {"scale", "conv.weight", "bn.bias"}) {
    T t;
    dt_device d{};
    DT_ASSERT_OK(dt_module_get_parameter(block, path, t.out()));
    DT_ASSERT_OK(dt_tensor_device(t, &d));
    EXPECT_EQ(d.index, 1) << path;
  }
  T steps;
  dt_device d{};
  DT_ASSERT_OK(dt_module_get_buffer(block, "steps", steps.out()));
  DT_ASSERT_OK(dt_tensor_device(steps, &d));
  EXPECT_EQ(d.index, 1);
  T x1 = input(cpu(1));
  EXPECT_EQ(values<double>(forward(block, x1)), on_cpu0);
  // An input on the old device: the child's mismatch, its code kept and the block named.
  T y;
  dt_tensor* old[] = {x0};
  DT_EXPECT_STATUS(dt_module_forward(block, old, 1, y.out()), DT_ERR_DEVICE_MISMATCH);
  EXPECT_TRUE(has(dt_last_error_message(), "Block.forward: ")) << dt_last_error_message();
  EXPECT_TRUE(has(dt_last_error_message(), "cpu:1")) << dt_last_error_message();

  // Training mode reaches the batch norm: the batch statistics count one more batch.
  DT_ASSERT_OK(dt_module_train(block));
  T y1 = forward(block, x1), tracked;
  DT_ASSERT_OK(dt_module_get_buffer(block, "bn.num_batches_tracked", tracked.out()));
  EXPECT_EQ(values<int64_t>(tracked), (std::vector<int64_t>{1}));
  DT_ASSERT_OK(dt_module_eval(block));
  T y2 = forward(block, x1);
  EXPECT_EQ(values<int64_t>(tracked), (std::vector<int64_t>{1}));
}

TEST_F(CustomModule, StateDictRoundTripsThroughSafetensors) {
  Probe a_probe, b_probe;
  DT_ASSERT_OK(dt_manual_seed(1));
  M a = make_block(&a_probe);
  DT_ASSERT_OK(dt_manual_seed(2));
  M b = make_block(&b_probe);
  T wa, wb;
  DT_ASSERT_OK(dt_module_get_parameter(a, "conv.weight", wa.out()));
  DT_ASSERT_OK(dt_module_get_parameter(b, "conv.weight", wb.out()));
  ASSERT_NE(values<double>(wa), values<double>(wb));
  char path[] = "/tmp/dt_custom_module_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  DT_ASSERT_OK(dt_module_save(a, path));
  DT_ASSERT_OK(dt_module_load(b, path));
  unlink(path);
  EXPECT_EQ(values<double>(wb), values<double>(wa));
  T x = input();
  DT_ASSERT_OK(dt_module_eval(a));
  DT_ASSERT_OK(dt_module_eval(b));
  EXPECT_EQ(values<double>(forward(b, x)), values<double>(forward(a, x)));
}

TEST_F(CustomModule, TheForwardFunctionsFailuresKeepTheirStatusAndMessage) {
  Probe probe;
  M block = make_block(&probe);
  T x = input(), y;
  dt_tensor* xs[] = {x};
  probe.fail_with = DT_ERR_NOT_SUPPORTED;
  DT_EXPECT_STATUS(dt_module_forward(block, xs, 1, y.out()), DT_ERR_NOT_SUPPORTED);
  EXPECT_STREQ(dt_last_error_message(), "Block.forward: no way");
  probe.fail_with = 999;  // not a status: the library's "internal"
  DT_EXPECT_STATUS(dt_module_forward(block, xs, 1, y.out()), DT_ERR_INTERNAL);
  EXPECT_TRUE(has(dt_last_error_message(), "Block.forward returned 999, which is not a status: no way"))
      << dt_last_error_message();
  probe.fail_with = DT_OK;
  probe.no_output = true;
  DT_EXPECT_STATUS(dt_module_forward(block, xs, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "returned DT_OK but no output")) << dt_last_error_message();
  probe.no_output = false;
  probe.write_then_fail = true;  // the fixture fails on the tensor if it is not dropped
  DT_EXPECT_STATUS(dt_module_forward(block, xs, 1, y.out()), DT_ERR_BACKEND);
  EXPECT_TRUE(has(dt_last_error_message(), "Block.forward failed (backend error) without a message"))
      << dt_last_error_message();
  probe.write_then_fail = false;
  probe.move_self = true;
  DT_EXPECT_STATUS(dt_module_forward(block, xs, 1, y.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_module_to: called from inside a module's forward function"))
      << dt_last_error_message();
  probe.move_self = false;
  EXPECT_EQ(y.get(), nullptr) << "out is untouched on failure";
  // A wrong input count, checked before the function runs.
  const int before = probe.calls.load();
  dt_tensor* two[] = {x, x};
  DT_EXPECT_STATUS(dt_module_forward(block, two, 2, y.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "Block takes 1 input but 2 were given")) << dt_last_error_message();
  EXPECT_EQ(probe.calls.load(), before);
  // A success leaves the thread's last message as it was.
  dt_set_error_message("earlier");
  T ok = forward(block, x);
  EXPECT_STREQ(dt_last_error_message(), "earlier");
  // After all this the module still runs and frees nothing early.
  EXPECT_EQ(probe.freed.load(), 0);
}

TEST_F(CustomModule, InputsPastMinInputsMayBeNullAndForwardsNestOnlySoDeep) {
  // forward(x, bias = None): x + bias, or x alone; and "Self", whose forward runs itself.
  struct Fns {
    static dt_status add(dt_module*, dt_tensor* const* in, size_t n, void*, dt_tensor** out) {
      if (n < 2 || !in[1]) return dt_tensor_retain(in[0]) == DT_OK ? (*out = in[0], DT_OK) : DT_ERR_INTERNAL;
      return dt_add(in[0], in[1], out);
    }
    static dt_status recurse(dt_module* self, dt_tensor* const* in, size_t, void* depth, dt_tensor** out) {
      ++*static_cast<int*>(depth);
      return dt_module_forward(self, in, 1, out);
    }
  };
  dt_module_spec spec{};
  spec.struct_size = sizeof spec;
  spec.kind = "AddBias";
  spec.min_inputs = 1;
  spec.max_inputs = 2;
  spec.forward = Fns::add;
  M m;
  DT_ASSERT_OK(dt_module_new(&spec, m.out()));
  T x = tensor({1, 2}, {2}), b = tensor({10, 20}, {2}), y, z;
  dt_tensor* with_none[] = {x, nullptr};
  DT_ASSERT_OK(dt_module_forward(m, with_none, 2, y.out()));
  EXPECT_EQ(values<double>(y), (std::vector<double>{1, 2}));
  dt_tensor* with_bias[] = {x, b};
  DT_ASSERT_OK(dt_module_forward(m, with_bias, 2, z.out()));
  EXPECT_EQ(values<double>(z), (std::vector<double>{11, 22}));
  dt_tensor* none_first[] = {nullptr, b};
  DT_EXPECT_STATUS(dt_module_forward(m, none_first, 2, z.out()), DT_ERR_INVALID_ARGUMENT);

  int depth = 0;
  spec.kind = "Self";
  spec.min_inputs = spec.max_inputs = 0;
  spec.forward = Fns::recurse;
  spec.user_data = &depth;
  M self;
  DT_ASSERT_OK(dt_module_new(&spec, self.out()));
  T r;
  dt_tensor* xs[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(self, xs, 1, r.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(depth, 100);
  EXPECT_TRUE(has(dt_last_error_message(), "Self: forwards nested 100 deep")) << dt_last_error_message();
  EXPECT_TRUE(has(dt_last_error_message(), "Self.forward: Self.forward: ")) << dt_last_error_message();
  EXPECT_EQ(r.get(), nullptr);
}

TEST_F(CustomModule, BadSpecsAreRefusedAndLeaveUserDataToTheCaller) {
  M conv;
  const int64_t k[2] = {1, 1};
  DT_ASSERT_OK(dt_conv2d_new(1, 1, k, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, cpu(), conv.out()));
  T f = tensor({1}, {1}), i64;
  DT_ASSERT_OK(dt_tensor_to(f, cpu(), DT_INT64, 0, i64.out()));
  dt_module* stale = nullptr;
  DT_ASSERT_OK(dt_relu_new(&stale));
  DT_ASSERT_OK(dt_module_release(stale));
  Probe probe;
  struct Case {
    const char* what;
    void (*edit)(dt_module_spec*);
    dt_status code;
    const char* message;
  };
  static dt_module* s_conv;
  static dt_module* s_stale;
  static const dt_tensor* s_f;
  static const dt_tensor* s_i64;
  s_conv = conv;
  s_stale = stale;
  s_f = f;
  s_i64 = i64;
  static const char* one_name[] = {"c"};
  static const char* dotted[] = {"a.b"};
  static const char* empty[] = {""};
  static const char* null_name[] = {nullptr};
  static dt_module* null_child[] = {nullptr};
  static dt_module* child_list[1];
  static dt_module* stale_list[1];
  static const dt_tensor* f_list[1];
  static const dt_tensor* i64_list[1];
  child_list[0] = s_conv;
  stale_list[0] = s_stale;
  f_list[0] = s_f;
  i64_list[0] = s_i64;
  const Case cases[] = {
      {"struct_size too small", [](dt_module_spec* s) { s->struct_size = 8; }, DT_ERR_INVALID_ARGUMENT,
       "spec->struct_size is 8"},
      {"no kind", [](dt_module_spec* s) { s->kind = nullptr; }, DT_ERR_INVALID_ARGUMENT, "spec->kind is NULL"},
      {"empty kind", [](dt_module_spec* s) { s->kind = ""; }, DT_ERR_INVALID_ARGUMENT, "kind is empty"},
      {"no forward", [](dt_module_spec* s) { s->forward = nullptr; }, DT_ERR_INVALID_ARGUMENT, "spec->forward is NULL"},
      {"children without names", [](dt_module_spec* s) { s->n_children = 1; s->children = child_list; },
       DT_ERR_INVALID_ARGUMENT, "children has 1 entries but its names or elements are NULL"},
      {"a NULL name", [](dt_module_spec* s) { s->n_children = 1; s->children = child_list; s->child_names = null_name; },
       DT_ERR_INVALID_ARGUMENT, "children name 0 is NULL"},
      {"a NULL child", [](dt_module_spec* s) { s->n_children = 1; s->children = null_child; s->child_names = one_name; },
       DT_ERR_INVALID_ARGUMENT, "children entry 0 (\"c\") is NULL"},
      {"a released child", [](dt_module_spec* s) { s->n_children = 1; s->children = stale_list; s->child_names = one_name; },
       DT_ERR_INVALID_HANDLE, ""},
      {"a dotted name", [](dt_module_spec* s) { s->n_children = 1; s->children = child_list; s->child_names = dotted; },
       DT_ERR_INVALID_ARGUMENT, "Custom: child name \"a.b\" is not allowed"},
      {"an empty name", [](dt_module_spec* s) { s->n_buffers = 1; s->buffers = f_list; s->buffer_names = empty; },
       DT_ERR_INVALID_ARGUMENT, "Custom: buffer name \"\" is not allowed"},
      {"a name used twice",
       [](dt_module_spec* s) {
         s->n_children = 1; s->children = child_list; s->child_names = one_name;
         s->n_parameters = 1; s->parameters = f_list; s->parameter_names = one_name;
       },
       DT_ERR_INVALID_ARGUMENT, "\"c\" names both a child and a parameter"},
      {"an integer parameter", [](dt_module_spec* s) { s->n_parameters = 1; s->parameters = i64_list; s->parameter_names = one_name; },
       DT_ERR_DTYPE_MISMATCH, "parameter \"c\" is int64"},
      {"min over max", [](dt_module_spec* s) { s->min_inputs = 3; s->max_inputs = 2; }, DT_ERR_INVALID_ARGUMENT,
       "takes min_inputs 3 to max_inputs 2"},
      {"max over 16", [](dt_module_spec* s) { s->max_inputs = 17; }, DT_ERR_INVALID_ARGUMENT, "max_inputs 17"},
  };
  for (const Case& c : cases) {
    dt_module_spec spec{};
    spec.struct_size = sizeof spec;
    spec.kind = "Custom";
    spec.forward = block_forward;
    spec.user_data = &probe;
    spec.free_user_data = free_probe;
    c.edit(&spec);
    dt_module* out = reinterpret_cast<dt_module*>(0x1);
    DT_EXPECT_STATUS(dt_module_new(&spec, &out), c.code);
    EXPECT_TRUE(has(dt_last_error_message(), c.message)) << c.what << ": " << dt_last_error_message();
    EXPECT_EQ(out, reinterpret_cast<dt_module*>(0x1)) << c.what << ": out is untouched";
  }
  dt_module* out = nullptr;
  DT_EXPECT_STATUS(dt_module_new(nullptr, &out), DT_ERR_INVALID_ARGUMENT);
  dt_module_spec spec{};
  DT_EXPECT_STATUS(dt_module_new(&spec, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(probe.freed.load(), 0) << "a refused spec leaves user_data to the caller";
}

TEST_F(CustomModule, UserDataIsFreedOnceWhenTheModuleAndItsReplicasAreGone) {
  Probe probe;
  {
    M block = make_block(&probe, cpu(), free_probe);
    DT_ASSERT_OK(dt_module_eval(block));
    T x = input();
    const std::vector<double> plain = values<double>(forward(block, x));
    // DataParallel over cpu:0 and cpu:1: each replica runs the function on its half
    // through its own self, so the result is the plain forward's.
    M dp;
    const dt_device ids[] = {cpu(0), cpu(1)};
    DT_ASSERT_OK(dt_data_parallel_new(block, ids, 2, cpu(0), dp.out()));
    const int before = probe.calls.load();
    EXPECT_EQ(values<double>(forward(dp, x)), plain);
    EXPECT_EQ(probe.calls.load(), before + 2);
    M kept;  // a child outlives the module: user_data is the module's, freed with it
    DT_ASSERT_OK(dt_module_child(block, "bn", kept.out()));
    EXPECT_EQ(probe.freed.load(), 0);
  }
  EXPECT_EQ(probe.freed.load(), 1);
}

}  // namespace
