// Modules, losses and optimizers through the C API: PyTorch's initialisation bounds and
// state_dict names, in-place dt_module_to (handles keep seeing the moved data, a loss's
// weight buffer moves too), the device- and shape-mismatch messages, every loss against
// PyTorch (values and input gradients, tests/reference/module_cases.json from
// gen_module_reference.py), and 100-step training curves of SGD, Adam, AdamW, RMSprop and Adagrad that
// must follow PyTorch's within 1e-4 relative from the same initial weights and data.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/dt_test.h"
#include "support/module_cases.h"

namespace {

using json = nlohmann::json;

// Two logical CPU devices, before the library reads the variable.
const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "2", 1) == 0; }();

class Modules : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kDevicesSet);
    live_ = dt_live_handle_count();
  }
  void TearDown() override { EXPECT_EQ(dt_live_handle_count(), live_) << "leaked handles"; }
  size_t live_ = 0;
};

T tensor(const std::vector<double>& v, std::vector<int64_t> shape, dt_dtype dtype = DT_FLOAT64, dt_device d = cpu()) {
  T f64, out;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * 8, shape.data(), shape.size(), DT_FLOAT64, d, f64.out()), DT_OK);
  EXPECT_EQ(dt_tensor_to(f64, d, dtype, DT_TO_COPY, out.out()), DT_OK);
  return out;
}

std::vector<double> doubles(const json& a) { return a.get<std::vector<double>>(); }
std::vector<int64_t> ints(const json& a) { return a.get<std::vector<int64_t>>(); }

std::string param_name(dt_module* m, size_t i, dt_tensor** t = nullptr) {
  char buf[64];
  size_t need = 0;
  EXPECT_EQ(dt_module_parameter(m, i, buf, sizeof buf, &need, t), DT_OK) << dt_last_error_message();
  return buf;
}

TEST_F(Modules, LinearFollowsPyTorchInitAndNames) {
  M lin, relu, lin2, seq;
  DT_ASSERT_OK(dt_manual_seed(5));
  DT_ASSERT_OK(dt_linear_new(16, 4, 1, DT_FLOAT32, cpu(), lin.out()));
  DT_ASSERT_OK(dt_relu_new(relu.out()));
  DT_ASSERT_OK(dt_linear_new(4, 2, 0, DT_FLOAT32, cpu(), lin2.out()));
  dt_module* parts[] = {lin, relu, lin2};
  DT_ASSERT_OK(dt_sequential_new(parts, 3, seq.out()));
  size_t n = 0;
  DT_ASSERT_OK(dt_module_parameter_count(seq, &n));
  ASSERT_EQ(n, 3u);
  dt_tensor* w = nullptr;
  EXPECT_EQ(param_name(seq, 0, &w), "0.weight");
  EXPECT_EQ(param_name(seq, 1), "0.bias");
  EXPECT_EQ(param_name(seq, 2), "2.weight");
  T weight(w);
  EXPECT_EQ(shape_of(weight), (std::vector<int64_t>{4, 16}));
  std::vector<float> v = values<float>(weight);
  float lo = 1, hi = -1;
  for (float x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_GE(lo, -0.25f);  // 1/sqrt(16)
  EXPECT_LT(hi, 0.25f);
  EXPECT_LT(lo, -0.15f);  // and it spreads over the range
  EXPECT_GT(hi, 0.15f);
  int32_t rg = 0;
  DT_ASSERT_OK(dt_tensor_requires_grad(weight, &rg));
  EXPECT_EQ(rg, 1);
  DT_EXPECT_STATUS(dt_module_parameter(seq, 3, nullptr, 0, nullptr, nullptr), DT_ERR_INVALID_ARGUMENT);
}

std::string kind_of(dt_module* m) {
  char buf[32] = {};
  EXPECT_EQ(dt_module_kind(m, buf, sizeof buf, nullptr), DT_OK) << dt_last_error_message();
  return buf;
}

// net = Sequential(Linear(4, 3), ReLU(), Sequential(Linear(3, 2), BatchNorm1d(2))): its
// children by index and by path, as net[2][1] in PyTorch, are the parent's own modules.
TEST_F(Modules, ChildrenAreReachableByNameAndAreTheParentsOwn) {
  M l1, act, l2, bn, inner, net;
  DT_ASSERT_OK(dt_linear_new(4, 3, 1, DT_FLOAT32, cpu(), l1.out()));
  DT_ASSERT_OK(dt_relu_new(act.out()));
  DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(), l2.out()));
  DT_ASSERT_OK(dt_batch_norm1d_new(2, 1e-5, 0.1, 1, 1, DT_FLOAT32, cpu(), bn.out()));
  dt_module* in2[2] = {l2, bn};
  DT_ASSERT_OK(dt_sequential_new(in2, 2, inner.out()));
  dt_module* in3[3] = {l1, act, inner};
  DT_ASSERT_OK(dt_sequential_new(in3, 3, net.out()));

  EXPECT_EQ(kind_of(net), "Sequential");
  size_t n = 0;
  DT_ASSERT_OK(dt_module_child_count(net, &n));
  EXPECT_EQ(n, 3u);
  const char* kinds[3] = {"Linear", "ReLU", "Sequential"};
  for (size_t i = 0; i < 3; ++i) {
    char name[8] = {};
    M c;
    DT_ASSERT_OK(dt_module_child_at(net, i, name, sizeof name, nullptr, c.out()));
    EXPECT_EQ(std::string(name), std::to_string(i));
    EXPECT_EQ(kind_of(c), kinds[i]);
  }
  DT_ASSERT_OK(dt_module_child_count(l1, &n));
  EXPECT_EQ(n, 0u) << "a Linear has no children";

  // net[2][1] is the BatchNorm1d: its buffer is the parent's "2.1.running_mean".
  M child;
  DT_ASSERT_OK(dt_module_child(net, "2.1", child.out()));
  EXPECT_EQ(kind_of(child), "BatchNorm1d");
  T mine, parents;
  DT_ASSERT_OK(dt_module_buffer(child, 0, nullptr, 0, nullptr, mine.out()));
  dt_state_dict* sd = nullptr;
  DT_ASSERT_OK(dt_module_state_dict(net, &sd));
  DT_ASSERT_OK(dt_state_dict_find(sd, "2.1.running_mean", parents.out()));
  dt_state_dict_release(sd);
  const float seven[2] = {7, 7};
  DT_ASSERT_OK(dt_tensor_copy_from_host(mine, seven, sizeof seven));
  EXPECT_EQ(values<float>(parents), (std::vector<float>{7, 7})) << "the child is the parent's module, not a copy";

  // Moving the child moves that part of the parent only.
  DT_ASSERT_OK(dt_module_to(child, cpu(1)));
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(parents, &d));
  EXPECT_EQ(d.index, 1);
  T first;
  DT_ASSERT_OK(dt_module_parameter(net, 0, nullptr, 0, nullptr, first.out()));
  DT_ASSERT_OK(dt_tensor_device(first, &d));
  EXPECT_EQ(d.index, 0);

  // A child outlives its parent.
  net = M();
  inner = M();
  bn = M();
  EXPECT_EQ(kind_of(child), "BatchNorm1d");

  // Paths that lead nowhere name the missing part and the children there are.
  M none;
  dt_module* two[2] = {l1, act};
  DT_ASSERT_OK(dt_sequential_new(two, 2, net.out()));
  EXPECT_EQ(dt_module_child(net, "2.5", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("no child \"2\" on the path \"2.5\" (Sequential's children: 0, 1)"),
            std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(dt_module_child(net, "0.weight", none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("(Linear has no children)"), std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(dt_module_child(net, nullptr, none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dt_module_child_at(net, 2, nullptr, 0, nullptr, none.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(*none.out(), nullptr) << "nothing made on failure";
}

TEST_F(Modules, ModuleToMovesParametersAndBuffersInPlace) {
  M lin, loss;
  DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(0), lin.out()));
  T w0;
  param_name(lin, 0, w0.out());
  std::vector<float> before = values<float>(w0);
  DT_ASSERT_OK(dt_module_to(lin, cpu(1)));
  dt_device d;
  DT_ASSERT_OK(dt_tensor_device(w0, &d));  // the handle taken before the move
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(values<float>(w0), before);
  DT_ASSERT_OK(dt_module_device(lin, &d));
  EXPECT_EQ(d.index, 1);
  T weight = tensor({1, 2, 3}, {3}, DT_FLOAT32);
  DT_ASSERT_OK(dt_cross_entropy_loss_new(weight, DT_REDUCTION_MEAN, -100, 0, loss.out()));
  DT_ASSERT_OK(dt_module_to(loss, cpu(1)));
  size_t nb = 0;
  DT_ASSERT_OK(dt_module_buffer_count(loss, &nb));
  ASSERT_EQ(nb, 1u);
  T buf;
  char name[32];
  size_t need = 0;
  DT_ASSERT_OK(dt_module_buffer(loss, 0, name, sizeof name, &need, buf.out()));
  EXPECT_STREQ(name, "weight");
  DT_ASSERT_OK(dt_tensor_device(buf, &d));
  EXPECT_EQ(d.index, 1);
  DT_ASSERT_OK(dt_tensor_device(weight, &d));
  EXPECT_EQ(d.index, 0) << "the caller's weight tensor was copied, not moved";
}

// An optimizer's state follows its parameters: after dt_module_to(cpu:1) the next steps
// run on cpu:1 (the momentum buffers and Adam's moments move with the first of them), and
// their results equal those of a twin that stayed on cpu:0.
TEST_F(Modules, OptimizerStateFollowsAModuleThatMoved) {
  for (int adam = 0; adam < 2; ++adam) {
    M moved, stayed;
    DT_ASSERT_OK(dt_manual_seed(7));
    DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(0), moved.out()));
    DT_ASSERT_OK(dt_manual_seed(7));
    DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(0), stayed.out()));
    auto make_opt = [&](dt_module* m, dt_optimizer** o) {
      T w, b;
      DT_ASSERT_OK(dt_module_parameter(m, 0, nullptr, 0, nullptr, w.out()));
      DT_ASSERT_OK(dt_module_parameter(m, 1, nullptr, 0, nullptr, b.out()));
      const dt_tensor* ps[2] = {w, b};
      if (adam) DT_ASSERT_OK(dt_adam_new(ps, 2, 0.05, 0.9, 0.999, 1e-8, 0.0, 0, o));
      else DT_ASSERT_OK(dt_sgd_new(ps, 2, 0.05, 0.9, 0.0, 0.0, 0, o));
    };
    dt_optimizer *om = nullptr, *os = nullptr;
    make_opt(moved, &om);
    make_opt(stayed, &os);
    auto step = [&](dt_module* m, dt_optimizer* o, dt_device d) {
      T x = tensor({0.5, -1.0, 2.0, 1.5, 0.25, -0.75}, {2, 3}, DT_FLOAT32, d), y, s;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_optimizer_zero_grad(o));
      DT_ASSERT_OK(dt_module_forward(m, in, 1, y.out()));
      T sq;
      DT_ASSERT_OK(dt_mul(y, y, sq.out()));
      DT_ASSERT_OK(dt_sum(sq, nullptr, 0, 0, s.out()));
      DT_ASSERT_OK(dt_backward(s, nullptr));
      DT_ASSERT_OK(dt_optimizer_step(o));
    };
    for (int i = 0; i < 2; ++i) {
      step(moved, om, cpu(0));
      step(stayed, os, cpu(0));
    }
    DT_ASSERT_OK(dt_module_to(moved, cpu(1)));
    for (int i = 0; i < 2; ++i) {
      step(moved, om, cpu(1));
      step(stayed, os, cpu(0));
    }
    for (size_t k = 0; k < 2; ++k) {
      T a, b;
      DT_ASSERT_OK(dt_module_parameter(moved, k, nullptr, 0, nullptr, a.out()));
      DT_ASSERT_OK(dt_module_parameter(stayed, k, nullptr, 0, nullptr, b.out()));
      dt_device d;
      DT_ASSERT_OK(dt_tensor_device(a, &d));
      EXPECT_EQ(d.index, 1);
      EXPECT_EQ(values<float>(a), values<float>(b)) << (adam ? "Adam" : "SGD") << " parameter " << k;
    }
    dt_optimizer_release(om);
    dt_optimizer_release(os);
  }
}

TEST_F(Modules, MismatchesAreNamed) {
  M lin;
  DT_ASSERT_OK(dt_linear_new(4, 3, 1, DT_FLOAT32, cpu(1), lin.out()));
  T x = tensor(std::vector<double>(8, 0.5), {2, 4}, DT_FLOAT32, cpu(0));
  dt_tensor* out = nullptr;
  const dt_tensor* in[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(lin, in, 1, &out), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("module parameters are on cpu:1 but the input is on cpu:0"),
            std::string::npos)
      << dt_last_error_message();
  DT_ASSERT_OK(dt_module_to(lin, cpu(0)));
  T bad = tensor(std::vector<double>(10, 0.5), {2, 5}, DT_FLOAT32);
  const dt_tensor* in2[] = {bad};
  DT_EXPECT_STATUS(dt_module_forward(lin, in2, 1, &out), DT_ERR_SHAPE_MISMATCH);
  std::string msg = dt_last_error_message();
  EXPECT_NE(msg.find("[2, 5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3, 4]"), std::string::npos) << msg;
  EXPECT_EQ(out, nullptr);
  DT_EXPECT_STATUS(dt_module_forward(lin, in, 2, &out), DT_ERR_INVALID_ARGUMENT);
}

TEST_F(Modules, LossesMatchPyTorch) {
  ASSERT_TRUE(Cases().contains("losses")) << "regenerate tests/reference/module_cases.json";
  for (const json& c : Cases().at("losses")) {
    SCOPED_TRACE(c.at("id").get<std::string>());
    const std::string kind = c.at("loss").get<std::string>();
    M loss;
    T weight;
    if (!c.at("weight").is_null()) weight = tensor(doubles(c.at("weight")), {static_cast<int64_t>(c.at("weight").size())});
    const int32_t red = c.at("reduction").get<int32_t>();
    const int64_t ignore = c.at("ignore_index").get<int64_t>();
    if (kind == "cross_entropy")
      DT_ASSERT_OK(dt_cross_entropy_loss_new(weight.get(), red, ignore, c.at("label_smoothing").get<double>(), loss.out()));
    else if (kind == "nll")
      DT_ASSERT_OK(dt_nll_loss_new(weight.get(), red, ignore, loss.out()));
    else
      DT_ASSERT_OK(dt_mse_loss_new(red, loss.out()));
    T x = tensor(doubles(c.at("input").at("data")), ints(c.at("input").at("shape")));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
    T input;
    if (c.at("log_softmax_input").get<bool>()) {
      DT_ASSERT_OK(dt_log_softmax(x, 1, input.out()));
    } else {
      DT_ASSERT_OK(dt_tensor_retain(x));
      input = T(x.get());
    }
    const json& tg = c.at("target");
    T target;
    if (tg.at("dtype") == "int64") {
      std::vector<int64_t> t = ints(tg.at("data"));
      std::vector<int64_t> shape = ints(tg.at("shape"));
      DT_ASSERT_OK(dt_tensor_from_data(t.data(), t.size() * 8, shape.data(), shape.size(), DT_INT64, cpu(), target.out()));
    } else {  // float64, or float32 (class probabilities of another dtype than the input's)
      target = tensor(doubles(tg.at("data")), ints(tg.at("shape")));
      if (tg.at("dtype") == "float32") {
        T narrowed;
        DT_ASSERT_OK(dt_tensor_to(target, cpu(), DT_FLOAT32, 0, narrowed.out()));
        target = std::move(narrowed);
      }
    }
    const dt_tensor* args[] = {input, target};
    T out, total;
    DT_ASSERT_OK(dt_module_forward(loss, args, 2, out.out()));
    std::vector<double> got = values<double>(out), want = doubles(c.at("expected"));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-10 * (1 + std::fabs(want[i]))) << i;
    char name[64] = "";
    DT_ASSERT_OK(dt_tensor_grad_fn_name(out, name, sizeof name, nullptr));
    EXPECT_EQ(std::string(name), c.at("grad_fn").get<std::string>()) << "PyTorch's name of the loss's backward function";
    DT_ASSERT_OK(dt_sum(out, nullptr, 0, 0, total.out()));
    DT_ASSERT_OK(dt_backward(total, nullptr));
    T g;
    DT_ASSERT_OK(dt_tensor_grad(x, g.out()));
    std::vector<double> gg = values<double>(g), gw = doubles(c.at("input_grad"));
    for (size_t i = 0; i < gg.size(); ++i) EXPECT_NEAR(gg[i], gw[i], 1e-10 * (1 + std::fabs(gw[i]))) << "grad " << i;
  }
}

TEST_F(Modules, LossErrors) {
  M ce;
  DT_ASSERT_OK(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0, ce.out()));
  T x = tensor(std::vector<double>(6, 0.1), {2, 3});
  int64_t bad[] = {0, 3};
  const int64_t n = 2;
  T t;
  DT_ASSERT_OK(dt_tensor_from_data(bad, sizeof bad, &n, 1, DT_INT64, cpu(), t.out()));
  const dt_tensor* args[] = {x, t};
  dt_tensor* out = nullptr;
  DT_EXPECT_STATUS(dt_module_forward(ce, args, 2, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("target 3 is out of bounds"), std::string::npos);
  const dt_tensor* one[] = {x};
  DT_EXPECT_STATUS(dt_module_forward(ce, one, 1, &out), DT_ERR_INVALID_ARGUMENT);
  dt_module* m = nullptr;
  DT_EXPECT_STATUS(dt_cross_entropy_loss_new(nullptr, 7, -100, 0, &m), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_cross_entropy_loss_new(nullptr, 1, -100, 1.5, &m), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  // The K-dimensional form wants the target's dims to be the input's without dim 1.
  T x3 = tensor(std::vector<double>(12, 0.1), {2, 3, 2});
  const int64_t t3_shape[] = {2, 3};
  const int64_t t3[6] = {0, 1, 2, 0, 1, 2};
  T target3;
  DT_ASSERT_OK(dt_tensor_from_data(t3, sizeof t3, t3_shape, 2, DT_INT64, cpu(), target3.out()));
  const dt_tensor* k_args[] = {x3, target3};
  DT_EXPECT_STATUS(dt_module_forward(ce, k_args, 2, &out), DT_ERR_SHAPE_MISMATCH);
  const std::string message = dt_last_error_message();
  EXPECT_NE(message.find("input [2, 3, 2] and target [2, 3]"), std::string::npos) << message;
  EXPECT_NE(message.find("CrossEntropyLoss"), std::string::npos) << message;
  EXPECT_EQ(out, nullptr);
}

std::vector<unsigned char> raw_of(dt_tensor* t) {
  size_t n = 0;
  EXPECT_EQ(dt_tensor_nbytes(t, &n), DT_OK);
  std::vector<unsigned char> v(n);
  EXPECT_EQ(dt_tensor_copy_to_host(t, v.data(), n), DT_OK);
  return v;
}

// Every parameter's bytes, in order.
std::vector<std::vector<unsigned char>> snapshot(dt_module* m) {
  size_t n = 0;
  EXPECT_EQ(dt_module_parameter_count(m, &n), DT_OK);
  std::vector<std::vector<unsigned char>> all;
  for (size_t i = 0; i < n; ++i) {
    T p;
    param_name(m, i, p.out());
    all.push_back(raw_of(p));
  }
  return all;
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/dt-modules-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A safetensors file with the given JSON header and `data_bytes` zero bytes of data.
std::string safetensors_bytes(const std::string& header, size_t data_bytes) {
  std::string h = header;
  while (h.size() % 8) h += ' ';
  std::string out(8, '\0');
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + h + std::string(data_bytes, '\0');
}

TEST_F(Modules, SaveLoadRoundTripIsBitExact) {
  TempDir dir;
  M a, b;
  DT_ASSERT_OK(dt_manual_seed(1));
  DT_ASSERT_OK(dt_linear_new(5, 3, 1, DT_FLOAT32, cpu(), a.out()));
  DT_ASSERT_OK(dt_manual_seed(2));
  DT_ASSERT_OK(dt_linear_new(5, 3, 1, DT_FLOAT32, cpu(), b.out()));
  ASSERT_NE(snapshot(a), snapshot(b));
  const std::string f = dir.file("linear.safetensors");
  DT_ASSERT_OK(dt_module_save(a, f.c_str()));
  DT_ASSERT_OK(dt_module_load(b, f.c_str()));
  EXPECT_EQ(snapshot(a), snapshot(b));
  dt_state_dict* sd = nullptr;
  DT_ASSERT_OK(dt_module_state_dict(a, &sd));
  size_t n = 0;
  DT_ASSERT_OK(dt_state_dict_count(sd, &n));
  EXPECT_EQ(n, 2u);
  DT_ASSERT_OK(dt_module_load_state_dict(b, sd));
  DT_ASSERT_OK(dt_state_dict_release(sd));
}

TEST_F(Modules, BadFilesFailWithTheirOwnMessageAndChangeNothing) {
  TempDir dir;
  M lin;
  DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(), lin.out()));
  const auto before = snapshot(lin);
  const std::string good = dir.file("good.safetensors");
  DT_ASSERT_OK(dt_module_save(lin, good.c_str()));
  const std::string bytes = read_file(good);
  M wide, nobias;
  DT_ASSERT_OK(dt_linear_new(3, 4, 1, DT_FLOAT32, cpu(), wide.out()));
  DT_ASSERT_OK(dt_linear_new(3, 2, 0, DT_FLOAT32, cpu(), nobias.out()));
  const std::string wrong_shape = dir.file("wide.safetensors"), missing = dir.file("nobias.safetensors");
  DT_ASSERT_OK(dt_module_save(wide, wrong_shape.c_str()));
  DT_ASSERT_OK(dt_module_save(nobias, missing.c_str()));
  std::string huge = bytes;
  huge[5] = '\x7f';  // a header length far beyond the file
  struct Bad {
    const char* name;
    std::string contents;  // empty: an existing file
    std::string path;
    const char* message;
  };
  const std::vector<Bad> cases = {
      {"truncated", bytes.substr(0, bytes.size() - 4), "", "buffer"},
      {"oversized_header", huge, "", "header"},
      {"overlapping_offsets",
       safetensors_bytes(R"({"weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                         R"("bias":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})",
                         24),
       "", "overlap"},
      {"wrong_shape", "", wrong_shape, "wrong shape for \"weight\""},
      {"missing_key", "", missing, "missing key \"bias\""},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = c.path;
    if (path.empty()) {
      path = dir.file(std::string(c.name) + ".safetensors");
      write_file(path, c.contents);
    }
    DT_EXPECT_STATUS(dt_module_load(lin, path.c_str()), DT_ERR_FORMAT);
    std::string msg = dt_last_error_message();
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
    EXPECT_NE(msg.find(path), std::string::npos) << "the message names the file: " << msg;
    EXPECT_EQ(snapshot(lin), before) << "a failed load changed the module";
  }
}

// A fresh Sequential(Linear, ReLU, ..., Linear) with a reference run's initial weights.
void build_mlp(const json& run, M* seq) {
  const std::vector<int64_t> layers = ints(run.at("layers"));
  std::vector<M> parts(2 * layers.size() - 3);
  std::vector<dt_module*> raw;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    ASSERT_EQ(dt_linear_new(layers[i], layers[i + 1], 1, DT_FLOAT32, cpu(), parts[2 * i].out()), DT_OK);
    raw.push_back(parts[2 * i]);
    if (i + 2 < layers.size()) {
      ASSERT_EQ(dt_relu_new(parts[2 * i + 1].out()), DT_OK);
      raw.push_back(parts[2 * i + 1]);
    }
  }
  ASSERT_EQ(dt_sequential_new(raw.data(), raw.size(), seq->out()), DT_OK);
  // PyTorch's initial weights, exchanged through a safetensors file
  const std::string weights = std::string(DT_TEST_DATA_DIR) + "/reference/" + run.at("weights").get<std::string>();
  ASSERT_EQ(dt_module_load(*seq, weights.c_str()), DT_OK) << dt_last_error_message();
}

TEST_F(Modules, TrainingCurvesFollowPyTorch) {
  ASSERT_TRUE(Cases().contains("training"));
  for (const json& run : Cases().at("training")) {
    SCOPED_TRACE(run.at("id").get<std::string>());
    M seq, loss;
    build_mlp(run, &seq);
    DT_ASSERT_OK(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0, loss.out()));
    T x = tensor(doubles(run.at("x").at("data")), ints(run.at("x").at("shape")), DT_FLOAT32);
    std::vector<int64_t> yv = ints(run.at("y"));
    const int64_t n = static_cast<int64_t>(yv.size());
    T y;
    DT_ASSERT_OK(dt_tensor_from_data(yv.data(), yv.size() * 8, &n, 1, DT_INT64, cpu(), y.out()));
    size_t np = 0;
    DT_ASSERT_OK(dt_module_parameter_count(seq, &np));
    std::vector<T> params(np);
    std::vector<const dt_tensor*> raw;
    for (size_t i = 0; i < np; ++i) {
      param_name(seq, i, params[i].out());
      raw.push_back(params[i]);
    }
    const json& o = run.at("options");
    dt_optimizer* opt = nullptr;
    const std::string kind = run.at("optimizer").get<std::string>();
    if (kind == "sgd")
      DT_ASSERT_OK(dt_sgd_new(raw.data(), raw.size(), o.at("lr"), o.at("momentum"), o.at("dampening"),
                              o.at("weight_decay"), o.at("nesterov").get<int32_t>(), &opt));
    else if (kind == "rmsprop")
      DT_ASSERT_OK(dt_rmsprop_new(raw.data(), raw.size(), o.at("lr"), o.at("alpha"), o.at("eps"), o.at("weight_decay"),
                                  o.at("momentum"), o.at("centered").get<int32_t>(), &opt));
    else if (kind == "adagrad")
      DT_ASSERT_OK(dt_adagrad_new(raw.data(), raw.size(), o.at("lr"), o.at("lr_decay"), o.at("weight_decay"),
                                  o.at("initial_accumulator_value"), o.at("eps"), &opt));
    else
      DT_ASSERT_OK(dt_adam_new(raw.data(), raw.size(), o.at("lr"), o.at("beta1"), o.at("beta2"), o.at("eps"),
                               o.at("weight_decay"), kind == "adamw" ? 1 : 0, &opt));
    const std::vector<double> want = doubles(run.at("losses"));
    double worst = 0;
    for (size_t step = 0; step < want.size(); ++step) {
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
      T logits, l;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(seq, in, 1, logits.out()));
      const dt_tensor* args[] = {logits, y};
      DT_ASSERT_OK(dt_module_forward(loss, args, 2, l.out()));
      double v = 0;
      DT_ASSERT_OK(dt_tensor_item(l, &v));
      worst = std::max(worst, std::fabs(v - want[step]) / std::fabs(want[step]));
      EXPECT_NEAR(v, want[step], 1e-4 * std::fabs(want[step])) << "step " << step;
      DT_ASSERT_OK(dt_backward(l, nullptr));
      DT_ASSERT_OK(dt_optimizer_step(opt));
    }
    std::printf("%s: %zu steps, loss %.6f -> %.6f, largest relative difference from PyTorch %.2e\n",
                kind.c_str(), want.size(), want.front(), want.back(), worst);
    DT_ASSERT_OK(dt_optimizer_release(opt));
  }
}

// SGD without dampening and weight decay runs one fused kernel per parameter
// (ops::sgd_step_); float16 runs the unfused ops. Either way a step must give the bits of
// torch.optim.SGD's formula computed here with public ops, one rounding per operation:
// buf = step 0 ? g : buf * m + g;  d = nesterov ? g + buf * m : buf (no momentum: g);
// p = p - d * lr. The gradient is g exactly: p's grad of sum(p * g).
TEST_F(Modules, AnSgdStepGivesTheBitsOfItsFormulaComputedOpByOp) {
  struct Case {
    dt_dtype dtype;
    double momentum;
    int32_t nesterov;
  };
  const Case cases[] = {{DT_FLOAT32, 0.0, 0}, {DT_FLOAT32, 0.9, 0}, {DT_FLOAT32, 0.9, 1}, {DT_FLOAT64, 0.9, 0},
                        {DT_FLOAT64, 0.7, 1}, {DT_FLOAT16, 0.9, 0}};
  const double lr = 0.1;
  const int64_t shape[] = {37, 5};  // odd: the kernel's loop has a tail
  DT_ASSERT_OK(dt_manual_seed(7));
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype == DT_FLOAT16 ? "float16" : c.dtype == DT_FLOAT32 ? "float32" : "float64") +
                 " momentum " + std::to_string(c.momentum) + (c.nesterov ? " nesterov" : ""));
    T p, want, buf;
    DT_ASSERT_OK(dt_tensor_randn(shape, 2, c.dtype, cpu(), p.out()));
    DT_ASSERT_OK(dt_tensor_to(p, cpu(), c.dtype, DT_TO_COPY, want.out()));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(p, 1));
    Handle<dt_optimizer, dt_optimizer_release> opt;
    const dt_tensor* params[] = {p};
    DT_ASSERT_OK(dt_sgd_new(params, 1, lr, c.momentum, 0.0, 0.0, c.nesterov, opt.out()));
    for (int step = 0; step < 3; ++step) {
      T g, pg, loss;
      DT_ASSERT_OK(dt_tensor_randn(shape, 2, c.dtype, cpu(), g.out()));
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
      DT_ASSERT_OK(dt_mul(p, g, pg.out()));
      DT_ASSERT_OK(dt_sum(pg, nullptr, 0, 0, loss.out()));
      DT_ASSERT_OK(dt_backward(loss, nullptr));
      DT_ASSERT_OK(dt_optimizer_step(opt));

      T d;
      if (c.momentum != 0) {
        if (step == 0) {
          DT_ASSERT_OK(dt_tensor_to(g, cpu(), c.dtype, DT_TO_COPY, buf.out()));
        } else {
          T scaled, next;
          DT_ASSERT_OK(dt_mul_scalar(buf, c.momentum, scaled.out()));
          DT_ASSERT_OK(dt_add(scaled, g, next.out()));
          buf = std::move(next);
        }
        if (c.nesterov) {
          T scaled;
          DT_ASSERT_OK(dt_mul_scalar(buf, c.momentum, scaled.out()));
          DT_ASSERT_OK(dt_add(g, scaled, d.out()));
        } else {
          DT_ASSERT_OK(dt_tensor_to(buf, cpu(), c.dtype, DT_TO_COPY, d.out()));
        }
      } else {
        DT_ASSERT_OK(dt_tensor_to(g, cpu(), c.dtype, DT_TO_COPY, d.out()));
      }
      T delta, next;
      DT_ASSERT_OK(dt_mul_scalar(d, lr, delta.out()));
      DT_ASSERT_OK(dt_sub(want, delta, next.out()));
      want = std::move(next);

      size_t bytes = 0;
      DT_ASSERT_OK(dt_tensor_nbytes(p, &bytes));
      std::vector<unsigned char> got(bytes), expect(bytes);
      DT_ASSERT_OK(dt_tensor_copy_to_host(p, got.data(), bytes));
      DT_ASSERT_OK(dt_tensor_copy_to_host(want, expect.data(), bytes));
      ASSERT_EQ(got, expect) << "step " << step;
    }
  }
}

// Linear adds its bias inside the product (one op, KernelOp::Addmm): the CPU adds it to
// each block of the product as the block is finished. The result must be the bits of the
// product followed by an add (dt_matmul, then dt_add), and within rounding of a float64
// loop, for 2-d and 3-d inputs, a transposed (strided) input, a product large enough to
// be cut into blocks, and an empty sum (in_features 0: the bias alone).
TEST_F(Modules, LinearWithBiasGivesTheBitsOfMatmulThenAdd) {
  struct Case {
    std::vector<int64_t> x_shape;
    int64_t in, out;
    bool transposed_input;
  };
  const Case cases[] = {{{5, 7}, 7, 3, false},      {{2, 3, 7}, 7, 5, false},    {{7}, 7, 4, false},
                        {{5, 7}, 7, 3, true},       {{300, 200}, 200, 130, false}, {{4, 0}, 0, 3, false},
                        {{0, 6}, 6, 2, false}};
  DT_ASSERT_OK(dt_manual_seed(11));
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype == DT_FLOAT32 ? "float32 " : "float64 ") + "in " + std::to_string(c.in) +
                   " out " + std::to_string(c.out) + (c.transposed_input ? " transposed" : ""));
      M lin;
      DT_ASSERT_OK(dt_linear_new(c.in, c.out, 1, dtype, cpu(), lin.out()));
      T w, b, wt, x, y, prod, want;
      param_name(lin, 0, w.out());
      param_name(lin, 1, b.out());
      if (c.transposed_input) {
        const int64_t stored[] = {c.x_shape[1], c.x_shape[0]};
        T xs;
        DT_ASSERT_OK(dt_tensor_randn(stored, 2, dtype, cpu(), xs.out()));
        DT_ASSERT_OK(dt_transpose(xs, 0, 1, x.out()));
      } else {
        DT_ASSERT_OK(dt_tensor_randn(c.x_shape.data(), c.x_shape.size(), dtype, cpu(), x.out()));
      }
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(lin, in, 1, y.out()));
      DT_ASSERT_OK(dt_transpose(w, 0, 1, wt.out()));
      DT_ASSERT_OK(dt_matmul(x, wt, prod.out()));
      DT_ASSERT_OK(dt_add(prod, b, want.out()));
      ASSERT_EQ(shape_of(y), shape_of(want));
      size_t bytes = 0;
      DT_ASSERT_OK(dt_tensor_nbytes(want, &bytes));
      std::vector<unsigned char> got_bits(bytes), want_bits(bytes);
      if (bytes > 0) {
        DT_ASSERT_OK(dt_tensor_copy_to_host(y, got_bits.data(), bytes));
        DT_ASSERT_OK(dt_tensor_copy_to_host(want, want_bits.data(), bytes));
      }
      EXPECT_EQ(got_bits, want_bits);

      // Independently: a float64 loop over the same values.
      T x64, w64, b64, y64;
      DT_ASSERT_OK(dt_tensor_to(x, cpu(), DT_FLOAT64, DT_TO_COPY, x64.out()));
      DT_ASSERT_OK(dt_tensor_to(w, cpu(), DT_FLOAT64, DT_TO_COPY, w64.out()));
      DT_ASSERT_OK(dt_tensor_to(b, cpu(), DT_FLOAT64, DT_TO_COPY, b64.out()));
      DT_ASSERT_OK(dt_tensor_to(y, cpu(), DT_FLOAT64, DT_TO_COPY, y64.out()));
      const std::vector<double> xv = values<double>(x64), wv = values<double>(w64), bv = values<double>(b64),
                                yv = values<double>(y64);
      const int64_t rows = c.in > 0 ? static_cast<int64_t>(xv.size()) / c.in : c.x_shape[0];
      ASSERT_EQ(yv.size(), static_cast<size_t>(rows * c.out));
      const double tol = dtype == DT_FLOAT32 ? 1e-5 : 1e-12;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < c.out; ++j) {
          double acc = bv[static_cast<size_t>(j)], mag = std::fabs(acc);
          for (int64_t k = 0; k < c.in; ++k) {
            const double t = xv[static_cast<size_t>(r * c.in + k)] * wv[static_cast<size_t>(j * c.in + k)];
            acc += t;
            mag += std::fabs(t);
          }
          ASSERT_NEAR(yv[static_cast<size_t>(r * c.out + j)], acc, tol * (1 + mag)) << r << ", " << j;
        }
    }
  }
}

// An optimizer's step over many parameters is one call (KernelOp::SgdStepMulti, a table
// of their addresses): each parameter must get the bits that stepping it alone gives (a
// one-parameter optimizer takes the per-parameter kernel), with and without momentum,
// Nesterov, over three steps (the first makes the buffers), for parameters of odd sizes
// and one of no elements.
TEST_F(Modules, AStepOverManyParametersGivesTheBitsOfOneAtATime) {
  struct Case {
    dt_dtype dtype;
    double momentum;
    int32_t nesterov;
  };
  const std::vector<std::vector<int64_t>> shapes = {{37, 5}, {5}, {0}, {129, 3}, {1}};
  DT_ASSERT_OK(dt_manual_seed(9));
  for (const Case& c : {Case{DT_FLOAT32, 0.0, 0}, Case{DT_FLOAT32, 0.9, 0}, Case{DT_FLOAT32, 0.9, 1},
                        Case{DT_FLOAT64, 0.7, 0}}) {
    SCOPED_TRACE(std::string(c.dtype == DT_FLOAT32 ? "float32" : "float64") + " momentum " +
                 std::to_string(c.momentum) + (c.nesterov ? " nesterov" : ""));
    std::vector<T> together, alone;
    std::vector<Handle<dt_optimizer, dt_optimizer_release>> singles(shapes.size());
    std::vector<const dt_tensor*> all;
    for (size_t i = 0; i < shapes.size(); ++i) {
      T p, q;
      DT_ASSERT_OK(dt_tensor_randn(shapes[i].data(), shapes[i].size(), c.dtype, cpu(), p.out()));
      DT_ASSERT_OK(dt_tensor_to(p, cpu(), c.dtype, DT_TO_COPY, q.out()));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(p, 1));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(q, 1));
      together.push_back(std::move(p));
      alone.push_back(std::move(q));
      all.push_back(together.back());
      const dt_tensor* one[] = {alone.back()};
      DT_ASSERT_OK(dt_sgd_new(one, 1, 0.1, c.momentum, 0.0, 0.0, c.nesterov, singles[i].out()));
    }
    Handle<dt_optimizer, dt_optimizer_release> opt;
    DT_ASSERT_OK(dt_sgd_new(all.data(), all.size(), 0.1, c.momentum, 0.0, 0.0, c.nesterov, opt.out()));
    for (int step = 0; step < 3; ++step) {
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
      for (size_t i = 0; i < shapes.size(); ++i) {
        DT_ASSERT_OK(dt_optimizer_zero_grad(singles[i]));
        T g, pg, qg, lp, lq;  // loss = sum(p * g): the gradient is g, the same on both sides
        DT_ASSERT_OK(dt_tensor_randn(shapes[i].data(), shapes[i].size(), c.dtype, cpu(), g.out()));
        DT_ASSERT_OK(dt_mul(together[i], g, pg.out()));
        DT_ASSERT_OK(dt_sum(pg, nullptr, 0, 0, lp.out()));
        DT_ASSERT_OK(dt_backward(lp, nullptr));
        DT_ASSERT_OK(dt_mul(alone[i], g, qg.out()));
        DT_ASSERT_OK(dt_sum(qg, nullptr, 0, 0, lq.out()));
        DT_ASSERT_OK(dt_backward(lq, nullptr));
      }
      DT_ASSERT_OK(dt_optimizer_step(opt));
      for (auto& single : singles) DT_ASSERT_OK(dt_optimizer_step(single));
      for (size_t i = 0; i < shapes.size(); ++i) {
        size_t bytes = 0;
        DT_ASSERT_OK(dt_tensor_nbytes(together[i], &bytes));
        std::vector<unsigned char> a(bytes), b(bytes);
        if (bytes > 0) {
          DT_ASSERT_OK(dt_tensor_copy_to_host(together[i], a.data(), bytes));
          DT_ASSERT_OK(dt_tensor_copy_to_host(alone[i], b.data(), bytes));
        }
        ASSERT_EQ(a, b) << "parameter " << i << ", step " << step;
      }
    }
  }
}

}  // namespace
