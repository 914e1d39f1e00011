// Autograd against PyTorch: every case in tests/reference/grad_cases.json (made by
// tests/reference/gen_grad_reference.py) runs an op on leaves that require grad, reduces
// its result(s) with fixed weights to a scalar loss, runs dt_backward and compares each
// leaf's gradient with PyTorch's, and the result's grad_fn name. Float64 cases are also
// checked against a central finite difference of the loss (on the CPU). Each case runs
// on every device (cuda:0 SKIPPED with the reason where CUDA is unusable): leaves are
// made on the CPU and moved, so on a GPU the gradient also flows back across devices.
// Below the reference cases: the autograd behaviours of the C API (errors, accumulation,
// grad mode, detach, in-place refusal).
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"
#include "support/reference_io.h"

namespace {

const json& GradCases() {
  static const json cases = [] {
    std::ifstream in(std::string(DT_TEST_DATA_DIR) + "/reference/grad_cases.json");
    if (!in) return json::array();
    return json::parse(in).at("cases");
  }();
  return cases;
}

// The loss of a case: its op on inputs built from `inputs` (leaves in *leaves when given),
// each result times its weights, summed. Returns an undefined Ref on failure.
Ref Loss(const json& c, const json& inputs, const dt_device& device, std::vector<Ref>* leaves, std::string* out_grad_fn) {
  const std::string op = c.at("op").get<std::string>();
  const json& params = c.at("params");
  std::vector<Ref> in;
  for (const auto& spec : inputs) {
    Ref r, leaf;
    const bool wants = spec.value("requires_grad", false) && leaves;
    if (!MakeInput(spec, device, &r, wants ? &leaf : nullptr)) return Ref();
    if (leaves) leaves->push_back(std::move(leaf));
    in.push_back(std::move(r));
  }
  if (params.value("reuse", false)) {
    dt_tensor_retain(in[0].get());
    in.push_back(Ref(in[0].get()));
  }
  std::vector<Ref> outs;
  if (op == "dt_chunk" || op == "dt_split") {
    const int64_t dim = params.at("dim").get<int64_t>();
    dt_tensor* raw[16];
    size_t count = 0;
    dt_status st = op == "dt_chunk" ? dt_chunk(in[0].get(), params.at("chunks").get<int64_t>(), dim, raw, 16, &count)
                                    : dt_split(in[0].get(), params.at("split_size").get<int64_t>(), dim, raw, 16, &count);
    EXPECT_EQ(st, DT_OK) << Err(st);
    if (st != DT_OK) return Ref();
    for (size_t i = 0; i < count; ++i) outs.emplace_back(raw[i]);
  } else {
    dt_tensor* out = nullptr;
    bool known = true;
    dt_status st = CallSingle(op, params, in, &out, &known);
    EXPECT_TRUE(known) << "unknown op " << op;
    EXPECT_EQ(st, DT_OK) << Err(st);
    if (st != DT_OK || !known) return Ref();
    outs.emplace_back(out);
  }
  if (out_grad_fn) {
    char name[64] = "";
    size_t need = 0;
    EXPECT_EQ(dt_tensor_grad_fn_name(outs[0].get(), name, sizeof name, &need), DT_OK);
    *out_grad_fn = name;
  }
  Ref loss;
  const json& weights = c.at("weights");
  for (size_t k = 0; k < outs.size(); ++k) {
    Ref w, prod, s, total;
    if (!MakeInput(weights.at(k), device, &w)) return Ref();
    dt_tensor* raw = nullptr;
    if (dt_mul(outs[k].get(), w.get(), &raw) != DT_OK) { ADD_FAILURE() << "dt_mul: " << dt_last_error_message(); return Ref(); }
    prod = Ref(raw);
    if (dt_sum(prod.get(), nullptr, 0, 0, &raw) != DT_OK) { ADD_FAILURE() << "dt_sum: " << dt_last_error_message(); return Ref(); }
    s = Ref(raw);
    if (!loss.get()) {
      loss = std::move(s);
      continue;
    }
    if (dt_add(loss.get(), s.get(), &raw) != DT_OK) { ADD_FAILURE() << "dt_add: " << dt_last_error_message(); return Ref(); }
    loss = Ref(raw);
  }
  return loss;
}

double Item(const Ref& t) {
  double v = NAN;
  EXPECT_EQ(dt_tensor_item(t.get(), &v), DT_OK) << dt_last_error_message();
  return v;
}

void CheckFiniteDifference(const json& c, const std::vector<Ref>& leaves) {
  const dt_device cpu0{DT_DEVICE_CPU, 0};
  const json& inputs = c.at("inputs");
  ASSERT_EQ(dt_set_grad_enabled(0), DT_OK);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].value("requires_grad", false)) continue;
    dt_tensor* graw = nullptr;
    ASSERT_EQ(dt_tensor_grad(leaves[i].get(), &graw), DT_OK);
    ASSERT_NE(graw, nullptr);
    Ref grad(graw);
    std::vector<double> analytic = values<double>(grad.get());
    const size_t n = inputs[i].at("data").size();
    ASSERT_EQ(analytic.size(), n);
    for (size_t j = 0; j < n; ++j) {
      const double h = 1e-6;
      json plus = inputs, minus = inputs;
      const double x = JsonNumber(inputs[i]["data"][j]);
      plus[i]["data"][j] = x + h;
      minus[i]["data"][j] = x - h;
      Ref lp = Loss(c, plus, cpu0, nullptr, nullptr), lm = Loss(c, minus, cpu0, nullptr, nullptr);
      ASSERT_TRUE(lp.get() && lm.get());
      const double numeric = (Item(lp) - Item(lm)) / (2 * h);
      EXPECT_NEAR(analytic[j], numeric, 1e-6 * (1 + std::fabs(numeric)))
          << "input " << i << " element " << j << ": autograd vs finite difference";
    }
  }
  ASSERT_EQ(dt_set_grad_enabled(1), DT_OK);
}

void RunGradCase(const json& c, const dt_device& device) {
  std::vector<Ref> leaves;
  std::string grad_fn;
  Ref loss = Loss(c, c.at("inputs"), device, &leaves, &grad_fn);
  ASSERT_TRUE(loss.get()) << "the forward pass failed";
  if (c.contains("grad_fn")) EXPECT_EQ(grad_fn, c.at("grad_fn").get<std::string>()) << "grad_fn name";
  ASSERT_EQ(dt_backward(loss.get(), nullptr), DT_OK) << dt_last_error_message();
  const json& grads = c.at("grads");
  const dt_device cpu0{DT_DEVICE_CPU, 0};
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].is_null()) continue;
    dt_tensor* raw = nullptr;
    ASSERT_EQ(dt_tensor_grad(leaves.at(i).get(), &raw), DT_OK);
    ASSERT_NE(raw, nullptr) << "input " << i << " got no gradient";
    Ref g(raw);
    // leaves live on the CPU (see the file comment); accumulation adds O(n) terms
    Compare(grads[i], g.get(), 8.0, cpu0, "gradient of input " + std::to_string(i));
  }
  if (c.value("fd", false) && device.type == DT_DEVICE_CPU) CheckFiniteDifference(c, leaves);
}

struct GradParam {
  size_t index;
  int64_t device_type;
};

void PrintTo(const GradParam& p, std::ostream* os) {
  *os << "case " << GradCases().at(p.index).at("id").get<std::string>() << " on "
      << (p.device_type == DT_DEVICE_CPU ? "cpu:0" : "cuda:0");
}

std::vector<GradParam> AllGradParams() {
  std::vector<GradParam> v;
  for (size_t i = 0; i < GradCases().size(); ++i) {
    v.push_back({i, DT_DEVICE_CPU});
    v.push_back({i, DT_DEVICE_CUDA});
  }
  return v;
}

std::string GradParamName(const ::testing::TestParamInfo<GradParam>& info) {
  return GradCases().at(info.param.index).at("id").get<std::string>() +
         (info.param.device_type == DT_DEVICE_CPU ? "_cpu0" : "_cuda0");
}

class Grad : public ::testing::TestWithParam<GradParam> {};

TEST_P(Grad, MatchesPyTorch) {
  const GradParam p = GetParam();
  const json& c = GradCases().at(p.index);
  const dt_device device{static_cast<int32_t>(p.device_type), 0};
  if (p.device_type == DT_DEVICE_CUDA && !dt_cuda_is_available()) {
    int32_t state = -1;
    char buf[512] = {0};
    size_t needed = 0;
    dt_cuda_status(&state, buf, sizeof buf, &needed);
    GTEST_SKIP() << "CUDA unavailable: " << buf;
  }
  SCOPED_TRACE("case " + c.at("id").get<std::string>());
  const size_t live = dt_live_handle_count();
  RunGradCase(c, device);
  EXPECT_EQ(dt_live_handle_count(), live) << "the case leaked handles";
}

INSTANTIATE_TEST_SUITE_P(Torch, Grad, ::testing::ValuesIn(AllGradParams()), GradParamName);

TEST(GradFile, Loads) {
  EXPECT_GT(GradCases().size(), 50u) << "regenerate: /usr/bin/python3 tests/reference/gen_grad_reference.py";
}

// ------------------------------------------------------------------ C API behaviours

class Autograd : public ::testing::Test {
 protected:
  void SetUp() override { live_ = dt_live_handle_count(); }
  void TearDown() override { EXPECT_EQ(dt_live_handle_count(), live_) << "leaked handles"; }
  size_t live_ = 0;
};

T vec(std::vector<float> v) {
  T t;
  const int64_t n = static_cast<int64_t>(v.size());
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 4, &n, 1, DT_FLOAT32, cpu(), t.out()), DT_OK);
  return t;
}

// roll takes any int64 shift modulo the dim's size, INT64_MIN included (INT64_MIN mod 3
// is 1: [0, 1, 2] -> [2, 0, 1]), and its gradient rolls back by the same amount. (PyTorch
// computes size - shift, which overflows there; the reference cases stop at -2^62.)
TEST_F(Autograd, RollTakesAnyShiftModuloTheSize) {
  T x = vec({0, 1, 2}), w = vec({10, 20, 30});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  for (int64_t shift : {INT64_MIN, INT64_MAX, int64_t{-2}, int64_t{4}}) {
    const int64_t dim = 0;
    T y, prod, s, g;
    DT_ASSERT_OK(dt_roll(x, &shift, 1, &dim, 1, y.out()));
    int64_t r = shift % 3;
    if (r < 0) r += 3;
    std::vector<float> want(3), want_grad(3);
    for (int k = 0; k < 3; ++k) want[static_cast<size_t>((k + r) % 3)] = static_cast<float>(k);
    // d sum(roll(x) * w) / dx[k] = w at k's new place
    for (int k = 0; k < 3; ++k) want_grad[static_cast<size_t>(k)] = 10.0f * static_cast<float>((k + r) % 3 + 1);
    EXPECT_EQ(values<float>(y), want) << shift;
    DT_ASSERT_OK(dt_mul(y, w, prod.out()));
    DT_ASSERT_OK(dt_sum(prod, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_backward(s, nullptr));
    DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
    EXPECT_EQ(values<float>(g), want_grad) << shift;
    DT_ASSERT_OK(dt_tensor_clear_grad(x));
  }
}

TEST_F(Autograd, GradientsAccumulateAcrossBackwardCalls) {
  T x = vec({1, 2, 3});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  for (int i = 0; i < 2; ++i) {
    T y, s;
    DT_ASSERT_OK(dt_mul(x, x, y.out()));
    DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_backward(s, nullptr));
  }
  T g;
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{4, 8, 12}));  // 2 * (2x)
  DT_ASSERT_OK(dt_tensor_clear_grad(x));
  dt_tensor* none = reinterpret_cast<dt_tensor*>(1);
  DT_ASSERT_OK(dt_tensor_grad(x, &none));
  EXPECT_EQ(none, nullptr);
}

// pow with a bool or integer operand that needs no gradient (found by fuzz_autograd: a
// bool exponent made backward fail, "sub: the operation with a bool tensor is not
// supported", as PyTorch's does). The other operand's gradient is computed in its dtype:
// d(x^b)/dx = b x^(b - 1) is 1 for b true and 0 for b false; d(n^x)/dx = n^x ln n, in
// float64 (an integer base's log used to be taken in float32, 1e-8 off).
TEST_F(Autograd, PowWithABoolOrIntegerOperandDifferentiatesTheOther) {
  const int64_t two = 2;
  const double xs[2] = {1.3, 0.7};
  const unsigned char bs[2] = {1, 0};
  const int64_t ns[2] = {2, 3};
  T x, b, n, y, s, g;
  DT_ASSERT_OK(dt_tensor_from_data(xs, sizeof xs, &two, 1, DT_FLOAT64, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_from_data(bs, sizeof bs, &two, 1, DT_BOOL, cpu(), b.out()));
  DT_ASSERT_OK(dt_tensor_from_data(ns, sizeof ns, &two, 1, DT_INT64, cpu(), n.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  DT_ASSERT_OK(dt_pow(x, b, y.out()));
  EXPECT_EQ(values<double>(y), (std::vector<double>{1.3, 1.0}));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  EXPECT_EQ(values<double>(g), (std::vector<double>{1.0, 0.0}));
  DT_ASSERT_OK(dt_tensor_clear_grad(x));
  DT_ASSERT_OK(dt_pow(n, x, y.out()));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  const std::vector<double> got = values<double>(g);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NEAR(got[0], std::pow(2.0, 1.3) * std::log(2.0), 1e-14);
  EXPECT_NEAR(got[1], std::pow(3.0, 0.7) * std::log(3.0), 1e-14);
}

// A tensor a node saved and that is written in place before backward (through a tensor
// autograd does not track, or a detached alias) makes backward fail naming the node, as
// PyTorch's version check does, instead of a silently wrong gradient. A tensor no formula
// saves may change: add's gradient does not read its operands.
TEST_F(Autograd, BackwardRefusesATensorItsGraphSavedThatChangedSince) {
  T x = vec({1, -2, 3}), a = vec({1, 1, 1});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  {
    T y, s;
    DT_ASSERT_OK(dt_mul(x, a, y.out()));  // MulBackward0 saves a for x's gradient
    DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_add_scalar_(a, 10.0));
    DT_EXPECT_STATUS(dt_backward(s, nullptr), DT_ERR_INVALID_ARGUMENT);
    const std::string msg = dt_last_error_message();
    EXPECT_NE(msg.find("MulBackward0 saved (float32 [3]) has been modified by an in-place operation"), std::string::npos)
        << msg;
    dt_tensor* none = reinterpret_cast<dt_tensor*>(1);
    DT_ASSERT_OK(dt_tensor_grad(x, &none));
    EXPECT_EQ(none, nullptr) << "a failed backward leaves .grad alone";
  }
  {
    T e, d, s;
    DT_ASSERT_OK(dt_exp(x, e.out()));  // ExpBackward0 saves its output
    DT_ASSERT_OK(dt_sum(e, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_tensor_detach(e, d.out()));
    DT_ASSERT_OK(dt_mul_scalar_(d, 0.0));
    DT_EXPECT_STATUS(dt_backward(s, nullptr), DT_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(dt_last_error_message()).find("ExpBackward0"), std::string::npos) << dt_last_error_message();
  }
  {
    T y, s, g;
    DT_ASSERT_OK(dt_add(x, a, y.out()));  // AddBackward0 saves nothing
    DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_add_scalar_(a, 1.0));
    DT_ASSERT_OK(dt_backward(s, nullptr));
    DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
    EXPECT_EQ(values<float>(g), (std::vector<float>{1, 1, 1}));
  }
}

// A leaf whose requires_grad is cleared after the graph was built gets no gradient from
// it, as in PyTorch; the other leaf of the same graph still does.
TEST_F(Autograd, ALeafThatNoLongerRequiresGradGetsNoGradient) {
  T x = vec({1, -2, 3}), w = vec({2, 2, 2});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(w, 1));
  T y, s, gw;
  DT_ASSERT_OK(dt_mul(x, w, y.out()));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 0));
  DT_ASSERT_OK(dt_backward(s, nullptr));
  dt_tensor* none = reinterpret_cast<dt_tensor*>(1);
  DT_ASSERT_OK(dt_tensor_grad(x, &none));
  EXPECT_EQ(none, nullptr);
  DT_ASSERT_OK(dt_tensor_grad(w, gw.out()));
  EXPECT_EQ(values<float>(gw), (std::vector<float>{1, -2, 3}));
}

// A leaf's first gradient is adopted when nothing else holds it, copied otherwise (a
// gradient that is a view of another tensor, or one backward's output shared with a
// second leaf). Either way .grad belongs to its leaf alone: writing into it changes no
// operand, and the next backward adds to it out of place.
TEST_F(Autograd, FirstGradientsBelongToTheirLeafAlone) {
  T w = vec({1, 2, 3}), c = vec({4, 5, 6}), b = vec({7, 8, 9});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(w, 1));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(b, 1));
  {
    T y, z, s;
    DT_ASSERT_OK(dt_mul(w, c, y.out()));  // d/dw = c, a fresh product: adopted
    DT_ASSERT_OK(dt_add(y, b, z.out()));  // d/db = the incoming ones, an expanded view: copied
    DT_ASSERT_OK(dt_sum(z, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_backward(s, nullptr));
  }
  T gw, gb;
  DT_ASSERT_OK(dt_tensor_grad(w, gw.out()));
  DT_ASSERT_OK(dt_tensor_grad(b, gb.out()));
  EXPECT_EQ(values<float>(gw), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(values<float>(gb), (std::vector<float>{1, 1, 1}));
  DT_ASSERT_OK(dt_mul_scalar_(gw, 10));
  DT_ASSERT_OK(dt_mul_scalar_(gb, 10));
  EXPECT_EQ(values<float>(c), (std::vector<float>{4, 5, 6})) << "w.grad must not alias an operand";
  EXPECT_EQ(values<float>(w), (std::vector<float>{1, 2, 3}));
  {
    T y, s;
    DT_ASSERT_OK(dt_mul(w, c, y.out()));
    DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, s.out()));
    DT_ASSERT_OK(dt_backward(s, nullptr));
  }
  T gw2, gb2;
  DT_ASSERT_OK(dt_tensor_grad(w, gw2.out()));
  DT_ASSERT_OK(dt_tensor_grad(b, gb2.out()));
  EXPECT_EQ(values<float>(gw2), (std::vector<float>{44, 55, 66}));  // 10c + c
  EXPECT_EQ(values<float>(gw), (std::vector<float>{40, 50, 60})) << "accumulation is out of place";
  EXPECT_EQ(values<float>(gb2), (std::vector<float>{10, 10, 10}));
}

TEST_F(Autograd, LeavesNamesAndDetach) {
  T x = vec({1, 2}), y, d;
  int32_t v = -1;
  DT_ASSERT_OK(dt_tensor_requires_grad(x, &v));
  EXPECT_EQ(v, 0);
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  DT_ASSERT_OK(dt_exp(x, y.out()));
  char name[64];
  size_t need = 0;
  DT_ASSERT_OK(dt_tensor_grad_fn_name(y, name, sizeof name, &need));
  EXPECT_STREQ(name, "ExpBackward0");
  DT_ASSERT_OK(dt_tensor_grad_fn_name(x, name, sizeof name, &need));
  EXPECT_STREQ(name, "");
  DT_ASSERT_OK(dt_tensor_is_leaf(y, &v));
  EXPECT_EQ(v, 0);
  DT_ASSERT_OK(dt_tensor_requires_grad(y, &v));
  EXPECT_EQ(v, 1);
  DT_EXPECT_STATUS(dt_tensor_set_requires_grad(y, 0), DT_ERR_INVALID_ARGUMENT);
  DT_ASSERT_OK(dt_tensor_detach(y, d.out()));
  DT_ASSERT_OK(dt_tensor_requires_grad(d, &v));
  EXPECT_EQ(v, 0);
  int32_t shared = 0;
  DT_ASSERT_OK(dt_tensor_shares_storage(d, y, &shared));
  EXPECT_EQ(shared, 1);
}

TEST_F(Autograd, BackwardErrorsSayWhy) {
  T x = vec({1, 2}), y;
  DT_EXPECT_STATUS(dt_backward(x, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("does not require grad"), std::string::npos);
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  DT_ASSERT_OK(dt_mul_scalar(x, 3, y.out()));
  DT_EXPECT_STATUS(dt_backward(y, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("scalar outputs"), std::string::npos);
  T wrong = vec({1, 1, 1});
  DT_EXPECT_STATUS(dt_backward(y, wrong), DT_ERR_SHAPE_MISMATCH);
  T ones = vec({1, 1});
  DT_ASSERT_OK(dt_backward(y, ones));
  T g;
  DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{3, 3}));
  int64_t n = 2;
  T ints;
  DT_ASSERT_OK(dt_tensor_zeros(&n, 1, DT_INT64, cpu(), ints.out()));
  DT_EXPECT_STATUS(dt_tensor_set_requires_grad(ints, 1), DT_ERR_DTYPE_MISMATCH);
  DT_EXPECT_STATUS(dt_tensor_set_requires_grad(x, 2), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(Autograd, NoGradModeRecordsNothingAndInPlaceIsRefusedWhileTracking) {
  T x = vec({1, 2}), y, z;
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  DT_EXPECT_STATUS(dt_add_scalar_(x, 1), DT_ERR_NOT_SUPPORTED);
  DT_ASSERT_OK(dt_set_grad_enabled(0));
  int32_t on = 1;
  DT_ASSERT_OK(dt_grad_enabled(&on));
  EXPECT_EQ(on, 0);
  DT_ASSERT_OK(dt_mul(x, x, y.out()));
  int32_t v = 1;
  DT_ASSERT_OK(dt_tensor_requires_grad(y, &v));
  EXPECT_EQ(v, 0);
  DT_ASSERT_OK(dt_add_scalar_(x, 1));  // an optimizer's update, in no-grad mode
  DT_ASSERT_OK(dt_set_grad_enabled(1));
  EXPECT_EQ(values<float>(x), (std::vector<float>{2, 3}));
  DT_EXPECT_STATUS(dt_set_grad_enabled(5), DT_ERR_INVALID_ARGUMENT);
}

// Issue 17: the backward of index_select is an index_add (of gather, a scatter_add), so an
// embedding-style lookup of 4096 rows of a [50000, 256] table needs memory for the
// table-sized gradient, not for a one-hot [4096, 50000] (819 MB in float32) as before.
TEST_F(Autograd, EmbeddingBackwardAllocatesForTheIndexNotTheVocabulary) {
  const int64_t vocab = 50000, dim = 256, n = 4096;
  const int64_t table_shape[] = {vocab, dim};
  T table, idx, rows, loss;
  DT_ASSERT_OK(dt_tensor_zeros(table_shape, 2, DT_FLOAT32, cpu(), table.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(table, 1));
  std::vector<int64_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[static_cast<size_t>(i)] = (i * 7919) % vocab;
  ids[1] = ids[0];  // a repeated row: its gradient is the sum of both uses
  DT_ASSERT_OK(dt_tensor_from_data(ids.data(), ids.size() * sizeof(int64_t), &n, 1, DT_INT64, cpu(), idx.out()));
  DT_ASSERT_OK(dt_index_select(table, 0, idx, rows.out()));
  DT_ASSERT_OK(dt_sum(rows, nullptr, 0, 0, loss.out()));
  dt_mem_stats before, after;
  before.struct_size = after.struct_size = sizeof(dt_mem_stats);
  DT_ASSERT_OK(dt_memory_stats(cpu(), &before));
  DT_ASSERT_OK(dt_backward(loss, nullptr));
  DT_ASSERT_OK(dt_memory_stats(cpu(), &after));
  const uint64_t table_bytes = static_cast<uint64_t>(vocab * dim) * sizeof(float);
  const uint64_t onehot_bytes = static_cast<uint64_t>(n * vocab) * sizeof(float);
  const uint64_t rise = after.peak_allocated_bytes - before.allocated_bytes;
  std::printf("[ memory   ] backward's peak rise %.1f MB (the table %.1f MB, a one-hot %.1f MB)\n", rise / 1e6,
              table_bytes / 1e6, onehot_bytes / 1e6);
  EXPECT_LT(rise, 3 * table_bytes) << "backward allocated for the vocabulary x index";
  T g;
  DT_ASSERT_OK(dt_tensor_grad(table, g.out()));
  std::vector<float> gv = values<float>(g);
  EXPECT_EQ(gv[static_cast<size_t>(ids[0] * dim)], 2.0f);   // used twice
  EXPECT_EQ(gv[static_cast<size_t>(ids[2] * dim)], 1.0f);   // once
  EXPECT_EQ(gv[static_cast<size_t>(1 * dim)], 0.0f);        // row 1 is never looked up (7919 i % 50000 != 1 for i < 4096)
}

TEST_F(Autograd, ScatterAddGradientOfALargerSrcIsZeroWhereTheIndexDoesNotReach) {
  // src [1, 3] and index [1, 2] along dim 1: only src[0][0] and src[0][1] are added, so
  // their gradient is the output's gradient where they land, and src[0][2]'s is 0.
  // (torch 1.13 fails on this backward, so the expectation is by hand.)
  const int64_t ts[] = {1, 4}, ss[] = {1, 3}, is[] = {1, 2};
  const float tv[4] = {0, 0, 0, 0}, sv[3] = {1, 2, 3};
  const int64_t iv[2] = {3, 0};
  T t, src, index, out, w, weighted, loss, g;
  DT_ASSERT_OK(dt_tensor_from_data(tv, sizeof tv, ts, 2, DT_FLOAT32, cpu(), t.out()));
  DT_ASSERT_OK(dt_tensor_from_data(sv, sizeof sv, ss, 2, DT_FLOAT32, cpu(), src.out()));
  DT_ASSERT_OK(dt_tensor_from_data(iv, sizeof iv, is, 2, DT_INT64, cpu(), index.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(src, 1));
  DT_ASSERT_OK(dt_scatter_add(t, 1, index, src, out.out()));
  EXPECT_EQ(values<float>(out), (std::vector<float>{2, 0, 0, 1}));
  const float wv[4] = {10, 20, 30, 40};  // loss = sum(out * w): d loss / d out = w
  DT_ASSERT_OK(dt_tensor_from_data(wv, sizeof wv, ts, 2, DT_FLOAT32, cpu(), w.out()));
  DT_ASSERT_OK(dt_mul(out, w, weighted.out()));
  DT_ASSERT_OK(dt_sum(weighted, nullptr, 0, 0, loss.out()));
  DT_ASSERT_OK(dt_backward(loss, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(src, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{40, 10, 0}));
}

// Issue 17: grad mode per thread, as PyTorch's. An inference thread that turns recording
// off for itself must not stop a training thread from recording, while both run at once;
// the process-wide setting still applies to threads with no setting of their own.
TEST_F(Autograd, AThreadsGradModeIsItsOwn) {
  T x = vec({1, 2});
  DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
  std::atomic<int> ready{0};
  std::atomic<int> wrong_training{0}, wrong_inference{0};
  auto records = [&](bool& ok) {
    T y;
    ok = dt_mul_scalar(x, 2.0, y.out()) == DT_OK;
    int32_t r = -1;
    ok = ok && dt_tensor_requires_grad(y, &r) == DT_OK;
    return r == 1;
  };
  std::thread inference([&] {
    int32_t previous = 7;
    ASSERT_EQ(dt_set_thread_grad_mode(0, &previous), DT_OK);
    EXPECT_EQ(previous, DT_GRAD_MODE_PROCESS);
    ++ready;
    while (ready.load() < 2) {
    }
    for (int i = 0; i < 2000; ++i) {
      bool ok = false;
      if (records(ok) || !ok) ++wrong_inference;
    }
    int32_t mine = 9;
    EXPECT_EQ(dt_thread_grad_mode(&mine), DT_OK);
    EXPECT_EQ(mine, 0);
    ASSERT_EQ(dt_set_thread_grad_mode(previous, nullptr), DT_OK);
  });
  std::thread training([&] {
    ++ready;
    while (ready.load() < 2) {
    }
    for (int i = 0; i < 2000; ++i) {
      bool ok = false;
      if (!records(ok) || !ok) ++wrong_training;
    }
  });
  inference.join();
  training.join();
  EXPECT_EQ(wrong_training.load(), 0) << "the inference thread's setting stopped the training thread's recording";
  EXPECT_EQ(wrong_inference.load(), 0) << "the inference thread recorded with its grad mode off";

  // The process-wide setting governs threads without their own; a thread's own wins.
  DT_ASSERT_OK(dt_set_grad_enabled(0));
  bool ok = false;
  EXPECT_FALSE(records(ok));
  DT_ASSERT_OK(dt_set_thread_grad_mode(1, nullptr));
  int32_t on = 0;
  DT_ASSERT_OK(dt_grad_enabled(&on));
  EXPECT_EQ(on, 1);
  EXPECT_TRUE(records(ok));
  DT_ASSERT_OK(dt_set_thread_grad_mode(DT_GRAD_MODE_PROCESS, nullptr));
  DT_ASSERT_OK(dt_set_grad_enabled(1));
  EXPECT_TRUE(records(ok));
  DT_EXPECT_STATUS(dt_set_thread_grad_mode(3, nullptr), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
