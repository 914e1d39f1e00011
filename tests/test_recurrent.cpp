// RNN, LSTM and GRU through the C API against PyTorch (tests/reference/module_cases.json,
// "recurrent", from gen_module_reference.py): PyTorch's parameter names and order, the
// output and last states, and the gradients of input, initial states and every
// parameter, over multi-layer, bidirectional, batch_first, unbatched and bias-free
// layers; dt_module_forward agreeing with dt_rnn_forward; dropout between layers only
// in training; and the errors for bad settings and bad inputs, with nothing leaked.
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/dt_test.h"
#include "support/module_cases.h"

namespace {

using json = nlohmann::json;
using SD = Handle<dt_state_dict, dt_state_dict_release>;

class Recurrent : public LeakChecked {};

T tensor(const std::vector<double>& v, std::vector<int64_t> shape, dt_dtype dtype = DT_FLOAT64, dt_device d = cpu()) {
  T f64, out;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, shape.data(), shape.size(), DT_FLOAT64, cpu(), f64.out()),
            DT_OK);
  EXPECT_EQ(dt_tensor_to(f64, d, dtype, DT_TO_COPY, out.out()), DT_OK);
  return out;
}
T from_spec(const json& spec, dt_dtype dtype, dt_device d = cpu()) {
  return tensor(spec.at("data").get<std::vector<double>>(), spec.at("shape").get<std::vector<int64_t>>(), dtype, d);
}
std::vector<double> as_doubles(dt_tensor* t) {
  T f64;
  EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, 0, f64.out()), DT_OK);
  return values<double>(f64);
}
void expect_close(dt_tensor* got, const json& want, double tol, const std::string& what) {
  ASSERT_NE(got, nullptr) << what;
  const std::vector<double> g = as_doubles(got), w = want.get<std::vector<double>>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << what << " " << i;
}
// sum(a * b) added to *total (a new 0-d tensor the first time).
void add_dot(dt_tensor* a, dt_tensor* b, T* total) {
  T prod, s;
  ASSERT_EQ(dt_mul(a, b, prod.out()), DT_OK);
  ASSERT_EQ(dt_sum(prod, nullptr, 0, 0, s.out()), DT_OK);
  if (!total->get()) {
    *total = std::move(s);
    return;
  }
  T sum;
  ASSERT_EQ(dt_add(*total, s, sum.out()), DT_OK);
  *total = std::move(sum);
}

void make(const json& c, dt_dtype dtype, dt_device d, M* m) {
  const std::string kind = c.at("kind");
  const int64_t in = c.at("input_size"), h = c.at("hidden_size"), layers = c.at("num_layers");
  const int32_t bias = c.at("bias"), bf = c.at("batch_first"), bi = c.at("bidirectional");
  if (kind == "lstm")
    ASSERT_EQ(dt_lstm_new(in, h, layers, bias, bf, 0.0, bi, dtype, d, m->out()), DT_OK);
  else if (kind == "gru")
    ASSERT_EQ(dt_gru_new(in, h, layers, bias, bf, 0.0, bi, dtype, d, m->out()), DT_OK);
  else
    ASSERT_EQ(dt_rnn_new(in, h, layers, kind == "rnn_relu" ? "relu" : "tanh", bias, bf, 0.0, bi, dtype, d, m->out()),
              DT_OK);
}

// Every case on d: the module, its loaded weights, the inputs and states all there.
void match_pytorch(dt_device d) {
  ASSERT_TRUE(Cases().contains("recurrent")) << "regenerate tests/reference/module_cases.json";
  for (const json& c : Cases().at("recurrent")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const dt_dtype dtype = c.at("dtype") == "float32" ? DT_FLOAT32 : DT_FLOAT64;
    const double tol = dtype == DT_FLOAT32 ? 1e-5 : 1e-10;
    M m;
    make(c, dtype, d, &m);
    // PyTorch's names in PyTorch's order; its values loaded by name.
    const json& params = c.at("params");
    size_t np = 0;
    DT_ASSERT_OK(dt_module_parameter_count(m, &np));
    ASSERT_EQ(np, params.size());
    SD sd;
    DT_ASSERT_OK(dt_state_dict_new(sd.out()));
    for (size_t i = 0; i < np; ++i) {
      char name[64];
      DT_ASSERT_OK(dt_module_parameter(m, i, name, sizeof name, nullptr, nullptr));
      EXPECT_EQ(std::string(name), params[i].at("name").get<std::string>());
      T v = from_spec(params[i], dtype);  // copied to the module's device by the load
      DT_ASSERT_OK(dt_state_dict_set(sd, params[i].at("name").get<std::string>().c_str(), v));
    }
    DT_ASSERT_OK(dt_module_load_state_dict(m, sd));
    T x = from_spec(c.at("input"), dtype, d), h0, c0;
    DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
    if (!c.at("h0").is_null()) {
      h0 = from_spec(c.at("h0"), dtype, d);
      DT_ASSERT_OK(dt_tensor_set_requires_grad(h0, 1));
    }
    if (!c.at("c0").is_null()) {
      c0 = from_spec(c.at("c0"), dtype, d);
      DT_ASSERT_OK(dt_tensor_set_requires_grad(c0, 1));
    }
    const bool lstm = c.at("kind") == "lstm";
    T out, hn, cn;
    DT_ASSERT_OK(dt_rnn_forward(m, x, h0, c0, out.out(), hn.out(), lstm ? cn.out() : nullptr));
    EXPECT_EQ(shape_of(out), c.at("output").at("shape").get<std::vector<int64_t>>());
    EXPECT_EQ(shape_of(hn), c.at("h_n").at("shape").get<std::vector<int64_t>>());
    expect_close(out, c.at("output").at("data"), tol, "output");
    expect_close(hn, c.at("h_n").at("data"), tol, "h_n");
    if (lstm) expect_close(cn, c.at("c_n").at("data"), tol, "c_n");
    // dt_module_forward gives the same output.
    std::vector<const dt_tensor*> args = {x};
    if (h0.get()) args.push_back(h0);
    if (c0.get()) args.push_back(c0);
    T again;
    DT_ASSERT_OK(dt_module_forward(m, args.data(), args.size(), again.out()));
    EXPECT_EQ(as_doubles(again), as_doubles(out));

    T gout = from_spec(c.at("grad_output"), dtype, d), gh = from_spec(c.at("grad_h_n"), dtype, d), loss;
    add_dot(out, gout, &loss);
    add_dot(hn, gh, &loss);
    T gc;
    if (lstm) {
      gc = from_spec(c.at("grad_c_n"), dtype, d);
      add_dot(cn, gc, &loss);
    }
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    T gx;
    DT_ASSERT_OK(dt_tensor_grad(x, gx.out()));
    expect_close(gx, c.at("input_grad"), tol, "input grad");
    if (h0.get()) {
      T g;
      DT_ASSERT_OK(dt_tensor_grad(h0, g.out()));
      expect_close(g, c.at("h0_grad"), tol, "h0 grad");
    }
    if (c0.get()) {
      T g;
      DT_ASSERT_OK(dt_tensor_grad(c0, g.out()));
      expect_close(g, c.at("c0_grad"), tol, "c0 grad");
    }
    for (size_t i = 0; i < np; ++i) {
      T p, g;
      DT_ASSERT_OK(dt_module_parameter(m, i, nullptr, 0, nullptr, p.out()));
      DT_ASSERT_OK(dt_tensor_grad(p, g.out()));
      expect_close(g, params[i].at("grad"), tol, "grad of " + params[i].at("name").get<std::string>());
    }
  }
}

TEST_F(Recurrent, MatchPyTorch) { match_pytorch(cpu()); }

// The same cases on a GPU, where one is (the recurrence's plain ops run there as anywhere).
TEST_F(Recurrent, MatchPyTorchOnCuda) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  match_pytorch(dt_device{DT_DEVICE_CUDA, 0});
}

// Dropout between layers acts in training mode only: in eval mode a layer with dropout
// 0.5 gives the bits of one without; in training two runs differ (different draws).
TEST_F(Recurrent, DropoutActsBetweenLayersInTrainingOnly) {
  M with, without;
  DT_ASSERT_OK(dt_manual_seed(5));
  DT_ASSERT_OK(dt_gru_new(3, 4, 2, 1, 0, 0.5, 0, DT_FLOAT32, cpu(), with.out()));
  DT_ASSERT_OK(dt_manual_seed(5));
  DT_ASSERT_OK(dt_gru_new(3, 4, 2, 1, 0, 0.0, 0, DT_FLOAT32, cpu(), without.out()));
  std::vector<double> xv(5 * 2 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.7 * static_cast<double>(i));
  T x = tensor(xv, {5, 2, 3}, DT_FLOAT32);
  const dt_tensor* in[] = {x};
  T a, b, c, d;
  DT_ASSERT_OK(dt_module_eval(with));
  DT_ASSERT_OK(dt_module_forward(with, in, 1, a.out()));
  DT_ASSERT_OK(dt_module_forward(without, in, 1, b.out()));
  EXPECT_EQ(values<float>(a), values<float>(b));
  DT_ASSERT_OK(dt_module_train(with));
  DT_ASSERT_OK(dt_module_forward(with, in, 1, c.out()));
  DT_ASSERT_OK(dt_module_forward(with, in, 1, d.out()));
  EXPECT_NE(values<float>(c), values<float>(d));
}

// Nested in a Sequential (the output only), moved with dt_module_to, and trained: an
// LSTM and a Linear learn to tell whether a sequence's sum is positive.
TEST_F(Recurrent, AnLstmInASequentialTrains) {
  M lstm, seq, loss;
  DT_ASSERT_OK(dt_manual_seed(3));
  DT_ASSERT_OK(dt_lstm_new(1, 8, 1, 1, 1, 0.0, 0, DT_FLOAT32, cpu(), lstm.out()));
  DT_ASSERT_OK(dt_bce_with_logits_loss_new(nullptr, nullptr, DT_REDUCTION_MEAN, loss.out()));
  M head;
  DT_ASSERT_OK(dt_linear_new(8, 1, 1, DT_FLOAT32, cpu(), head.out()));
  size_t n = 0;
  DT_ASSERT_OK(dt_module_parameter_count(lstm, &n));
  EXPECT_EQ(n, 4u);
  std::vector<T> ps;
  std::vector<const dt_tensor*> raw;
  for (dt_module* part : {static_cast<dt_module*>(lstm), static_cast<dt_module*>(head)}) {
    size_t k = 0;
    DT_ASSERT_OK(dt_module_parameter_count(part, &k));
    for (size_t i = 0; i < k; ++i) {
      T p;
      DT_ASSERT_OK(dt_module_parameter(part, i, nullptr, 0, nullptr, p.out()));
      raw.push_back(p);
      ps.push_back(std::move(p));
    }
  }
  Handle<dt_optimizer, dt_optimizer_release> opt;
  DT_ASSERT_OK(dt_adam_new(raw.data(), raw.size(), 0.02, 0.9, 0.999, 1e-8, 0.0, 0, opt.out()));
  // 32 sequences of 6 values in [-1, 1] (batch_first), label: the sum is positive.
  std::vector<double> xv(32 * 6), yv(32);
  for (size_t s = 0; s < 32; ++s) {
    double sum = 0;
    for (size_t t = 0; t < 6; ++t) sum += xv[s * 6 + t] = std::sin(1.3 * static_cast<double>(s * 6 + t) + 0.4 * s);
    yv[s] = sum > 0 ? 1.0 : 0.0;
  }
  T x = tensor(xv, {32, 6, 1}, DT_FLOAT32), y = tensor(yv, {32, 1}, DT_FLOAT32);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
    T out, hn, h, logits, l;
    DT_ASSERT_OK(dt_rnn_forward(lstm, x, nullptr, nullptr, out.out(), hn.out(), nullptr));
    DT_ASSERT_OK(dt_squeeze(hn, nullptr, 0, h.out()));  // [1, 32, 8] -> [32, 8]
    const dt_tensor* hin[] = {h};
    DT_ASSERT_OK(dt_module_forward(head, hin, 1, logits.out()));
    const dt_tensor* args[] = {logits, y};
    DT_ASSERT_OK(dt_module_forward(loss, args, 2, l.out()));
    DT_ASSERT_OK(dt_tensor_item(l, step == 0 ? &first : &last));
    DT_ASSERT_OK(dt_backward(l, nullptr));
    DT_ASSERT_OK(dt_optimizer_step(opt));
  }
  EXPECT_LT(last, 0.5 * first) << "loss " << first << " -> " << last;
  // In a Sequential the LSTM passes on its output; moved to cpu:0 again it still runs.
  dt_module* parts[] = {lstm};
  DT_ASSERT_OK(dt_sequential_new(parts, 1, seq.out()));
  DT_ASSERT_OK(dt_module_to(seq, cpu(0)));
  const dt_tensor* in[] = {x};
  T out;
  DT_ASSERT_OK(dt_module_forward(seq, in, 1, out.out()));
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{32, 6, 8}));
}

TEST_F(Recurrent, BadSettingsAreRefused) {
  dt_module* m = nullptr;
  DT_EXPECT_STATUS(dt_lstm_new(3, 0, 1, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "LSTM") && has(dt_last_error_message(), "hidden_size (0)"))
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_gru_new(3, 4, 0, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_gru_new(-1, 4, 1, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_lstm_new(3, 4, 1, 1, 0, 1.5, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_lstm_new(3, 4, 1, 2, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_lstm_new(3, int64_t{1} << 40, 1, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "too large")) << dt_last_error_message();
  // Found by fuzz_modules: a billion layers of one unit each only spun making them.
  DT_EXPECT_STATUS(dt_gru_new(1, 1, int64_t{1} << 30, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "num_layers (1073741824) is too large")) << dt_last_error_message();
  // Found by fuzz_modules: 2 * hidden_size itself overflowed before the check.
  DT_EXPECT_STATUS(dt_lstm_new(3, INT64_MAX, 1, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_rnn_new(INT64_MAX, INT64_MAX, INT64_MAX, "relu", 1, 0, 0, 0, DT_FLOAT32, cpu(), &m),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "too large")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_lstm_new(3, 4, 1, 1, 0, 0, 0, DT_INT32, cpu(), &m), DT_ERR_DTYPE_MISMATCH);
  DT_EXPECT_STATUS(dt_rnn_new(3, 4, 1, "sigmoid", 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "\"sigmoid\"")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_rnn_new(3, 4, 1, nullptr, 1, 0, 0, 0, DT_FLOAT32, cpu(), &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_rnn_new(3, 4, 1, "tanh", 1, 0, 0, 0, DT_FLOAT32, cpu(), nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
}

TEST_F(Recurrent, BadInputsAreRefusedNamingTheModuleAndShapes) {
  M lstm, gru, lin;
  DT_ASSERT_OK(dt_lstm_new(3, 4, 2, 1, 0, 0, 0, DT_FLOAT64, cpu(), lstm.out()));
  DT_ASSERT_OK(dt_gru_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT64, cpu(), gru.out()));
  DT_ASSERT_OK(dt_linear_new(3, 4, 1, DT_FLOAT64, cpu(), lin.out()));
  T x = tensor(std::vector<double>(5 * 2 * 3, 0.1), {5, 2, 3});
  dt_tensor *out = nullptr, *hn = nullptr, *cn = nullptr;
  auto expect = [&](dt_module* m, dt_tensor* in, dt_tensor* h0, dt_tensor* c0, bool want_c, dt_status code,
                    std::vector<const char*> parts) {
    DT_EXPECT_STATUS(dt_rnn_forward(m, in, h0, c0, &out, &hn, want_c ? &cn : nullptr), code);
    const std::string msg = dt_last_error_message();
    for (const char* p : parts) EXPECT_TRUE(has(msg, p)) << msg << " (wanted " << p << ")";
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(hn, nullptr);
    EXPECT_EQ(cn, nullptr);
  };
  T x4 = tensor(std::vector<double>(5 * 2 * 4, 0.1), {5, 2, 4});
  expect(lstm, x4, nullptr, nullptr, true, DT_ERR_SHAPE_MISMATCH, {"LSTM", "input_size (3)", "[5, 2, 4]"});
  T x1 = tensor(std::vector<double>(3, 0.1), {3});
  expect(lstm, x1, nullptr, nullptr, true, DT_ERR_SHAPE_MISMATCH, {"LSTM", "[3]"});
  T empty = tensor({}, {0, 2, 3});
  expect(lstm, empty, nullptr, nullptr, true, DT_ERR_SHAPE_MISMATCH, {"empty"});
  T xf = tensor(std::vector<double>(5 * 2 * 3, 0.1), {5, 2, 3}, DT_FLOAT32);
  expect(lstm, xf, nullptr, nullptr, true, DT_ERR_DTYPE_MISMATCH, {"float32", "float64"});
  T h_bad = tensor(std::vector<double>(1 * 2 * 4, 0.0), {1, 2, 4}),
    c_bad = tensor(std::vector<double>(8, 0.0), {1, 2, 4});
  expect(lstm, x, h_bad, c_bad, true, DT_ERR_SHAPE_MISMATCH, {"h0", "[2, 2, 4]", "[1, 2, 4]"});
  T h0 = tensor(std::vector<double>(2 * 2 * 4, 0.0), {2, 2, 4});
  expect(lstm, x, h0, nullptr, true, DT_ERR_INVALID_ARGUMENT, {"without c0"});
  expect(lstm, x, nullptr, h0, true, DT_ERR_INVALID_ARGUMENT, {"without h0"});
  T g0 = tensor(std::vector<double>(8, 0.0), {1, 2, 4});
  expect(gru, x, g0, g0, false, DT_ERR_INVALID_ARGUMENT, {"c0"});
  expect(gru, x, nullptr, nullptr, true, DT_ERR_INVALID_ARGUMENT, {"c_n"});
  expect(lin, x, nullptr, nullptr, false, DT_ERR_INVALID_ARGUMENT, {"Linear", "not an RNN"});
  expect(nullptr, x, nullptr, nullptr, false, DT_ERR_INVALID_ARGUMENT, {"m"});
  DT_EXPECT_STATUS(dt_rnn_forward(gru, x, nullptr, nullptr, nullptr, &hn, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_rnn_forward(gru, x, nullptr, nullptr, &out, &out, nullptr), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(out, nullptr);
  // Too many inputs through dt_module_forward.
  const dt_tensor* four[] = {x, g0, g0, g0};
  DT_EXPECT_STATUS(dt_module_forward(gru, four, 3, &out), DT_ERR_INVALID_ARGUMENT);
  // Only the states wanted: h_n and c_n may be NULL.
  T o;
  DT_ASSERT_OK(dt_rnn_forward(lstm, x, nullptr, nullptr, o.out(), nullptr, nullptr));
  EXPECT_EQ(shape_of(o), (std::vector<int64_t>{5, 2, 4}));
}

}  // namespace
