// Normalisation, embedding and attention modules (BatchNorm1d/2d, LayerNorm, GroupNorm,
// Embedding, MultiheadAttention, TransformerEncoderLayer, TransformerEncoder) through the
// C ABI. The reference cases (tests/reference/norm_module_cases.json, from
// gen_norm_module_reference.py and PyTorch) load PyTorch's whole state_dict by its key
// names, run training and eval steps, and compare outputs, input and parameter gradients
// and the state after (running statistics, num_batches_tracked), on the CPU and on
// cuda:0 when it is usable. The functional forms' values and gradients (with finite
// differences) are in cases.json / grad_cases.json (test_reference_ops, test_autograd).
// Below them: PyTorch's initial values, moving buffers with the module, and errors that
// name the module and the shapes.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "support/dt_test.h"
#include "support/reference_io.h"

namespace {

const bool kDevicesSet = [] { return setenv("DEVTENSOR_CPU_DEVICES", "2", 1) == 0; }();

const json& NormCases() {
  static const json cases = [] {
    std::ifstream in(std::string(DT_TEST_DATA_DIR) + "/reference/norm_module_cases.json");
    if (!in) return json::array();
    return json::parse(in).at("cases");
  }();
  return cases;
}

class Norm : public LeakChecked {};

// The module a case names, with PyTorch's defaults for the arguments it leaves out.
dt_status MakeModule(const json& c, dt_module** out) {
  const std::string kind = c.at("module").get<std::string>();
  const json& a = c.at("args");
  const dt_dtype dt = DtypeOf(c.at("dtype").get<std::string>());
  const dt_device cpu0{DT_DEVICE_CPU, 0};
  const double eps = a.value("eps", 1e-5);
  if (kind == "BatchNorm1d" || kind == "BatchNorm2d") {
    const double momentum = a.contains("momentum") && a.at("momentum").is_null() ? -1.0 : a.value("momentum", 0.1);
    const int32_t affine = a.value("affine", true) ? 1 : 0, track = a.value("track_running_stats", true) ? 1 : 0;
    return (kind == "BatchNorm1d" ? dt_batch_norm1d_new : dt_batch_norm2d_new)(
        a.at("num_features").get<int64_t>(), eps, momentum, affine, track, dt, cpu0, out);
  }
  if (kind == "LayerNorm") {
    std::vector<int64_t> shape = Ints(a.at("normalized_shape"));
    return dt_layer_norm_new(shape.data(), shape.size(), eps, a.value("elementwise_affine", true) ? 1 : 0, 1, dt, cpu0,
                             out);
  }
  if (kind == "GroupNorm")
    return dt_group_norm_new(a.at("num_groups").get<int64_t>(), a.at("num_channels").get<int64_t>(), eps,
                             a.value("affine", true) ? 1 : 0, dt, cpu0, out);
  if (kind == "Embedding") {
    const int64_t pad = a.contains("padding_idx") && !a.at("padding_idx").is_null() ? a.at("padding_idx").get<int64_t>()
                                                                                     : DT_PADDING_IDX_NONE;
    return dt_embedding_new(a.at("num_embeddings").get<int64_t>(), a.at("embedding_dim").get<int64_t>(), pad, dt, cpu0,
                            out);
  }
  if (kind == "MultiheadAttention")
    return dt_multihead_attention_new(a.at("embed_dim").get<int64_t>(), a.at("num_heads").get<int64_t>(), 0.0,
                                      a.value("bias", true) ? 1 : 0, a.value("batch_first", false) ? 1 : 0, dt, cpu0,
                                      out);
  auto encoder_layer = [&](const json& e, dt_module** layer) {
    const std::string act = e.value("activation", std::string("relu"));
    return dt_transformer_encoder_layer_new(e.at("d_model").get<int64_t>(), e.at("nhead").get<int64_t>(),
                                            e.value("dim_feedforward", int64_t{2048}), e.value("dropout", 0.1),
                                            act.c_str(), e.value("layer_norm_eps", 1e-5),
                                            e.value("batch_first", false) ? 1 : 0, e.value("norm_first", false) ? 1 : 0,
                                            dt, cpu0, layer);
  };
  if (kind == "TransformerEncoderLayer") return encoder_layer(a, out);
  if (kind == "TransformerEncoder") {
    std::vector<dt_module*> layers(a.at("num_layers").get<size_t>(), nullptr);
    dt_status st = DT_OK;
    for (auto& l : layers)
      if (st == DT_OK) st = encoder_layer(a.at("layer"), &l);
    if (st == DT_OK) st = dt_transformer_encoder_new(layers.data(), layers.size(), nullptr, out);
    for (dt_module* l : layers) dt_module_release(l);
    return st;
  }
  ADD_FAILURE() << "unknown module " << kind;
  return DT_ERR_INVALID_ARGUMENT;
}

void ExpectClose(const std::vector<double>& got, const json& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = want.at(i).get<double>();
    EXPECT_NEAR(got[i], e, tol * (1 + std::fabs(e))) << what << " element " << i;
  }
}

std::vector<double> Values(dt_tensor* t) {
  Info info;
  Read(t, &info);
  return info.values;
}

void RunCase(const json& c, const dt_device& device) {
  SCOPED_TRACE("case " + c.at("id").get<std::string>());
  const double tol = c.at("dtype") == "float32" ? 2e-5 : 1e-10;
  M m;
  ASSERT_EQ(MakeModule(c, m.out()), DT_OK) << dt_last_error_message();
  {  // PyTorch's state_dict, by its key names
    dt_state_dict* sd = nullptr;
    ASSERT_EQ(dt_state_dict_new(&sd), DT_OK);
    for (const auto& [name, spec] : c.at("state").items()) {
      Ref t;
      ASSERT_TRUE(MakeInput(spec, dt_device{DT_DEVICE_CPU, 0}, &t));
      EXPECT_EQ(dt_state_dict_set(sd, name.c_str(), t.get()), DT_OK) << dt_last_error_message();
    }
    const dt_status st = dt_module_load_state_dict(m, sd);
    dt_state_dict_release(sd);
    ASSERT_EQ(st, DT_OK) << dt_last_error_message();
  }
  DT_ASSERT_OK(dt_module_to(m, device));
  size_t nparams = 0;
  DT_ASSERT_OK(dt_module_parameter_count(m, &nparams));
  for (const auto& step : c.at("steps")) {
    DT_ASSERT_OK(step.at("train").get<bool>() ? dt_module_train(m) : dt_module_eval(m));
    // inputs: null for None; float inputs are leaves whose gradients are compared
    const json& specs = step.at("inputs");
    std::vector<Ref> xs(specs.size()), leaves(specs.size());
    std::vector<const dt_tensor*> in(specs.size(), nullptr);
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].is_null()) continue;
      const bool grad = !step.at("input_grads").at(i).is_null();
      ASSERT_TRUE(MakeInput(specs[i], device, &xs[i], grad ? &leaves[i] : nullptr));
      in[i] = xs[i].get();
    }
    Ref w;
    ASSERT_TRUE(MakeInput(step.at("weights"), device, &w));
    T out, prod, loss;
    const json& attn = step.contains("attn_weights") ? step.at("attn_weights") : json();
    if (attn.is_null()) {
      ASSERT_EQ(dt_module_forward(m, in.data(), in.size(), out.out()), DT_OK) << dt_last_error_message();
    } else {  // need_weights=True: the attention weights are compared and enter the loss too
      in.resize(5, nullptr);
      T weights, aw_prod, aw_loss, output_loss;
      ASSERT_EQ(dt_multihead_attention_forward(m, in[0], in[1], in[2], in[3], in[4], attn.at("average").get<bool>(),
                                               out.out(), weights.out()),
                DT_OK)
          << dt_last_error_message();
      EXPECT_EQ(shape_of(weights), Ints(attn.at("output").at("shape")));
      ExpectClose(Values(weights), attn.at("output").at("values"), tol, "attention weights");
      Ref aw;
      ASSERT_TRUE(MakeInput(attn.at("weights"), device, &aw));
      DT_ASSERT_OK(dt_mul(weights, aw.get(), aw_prod.out()));
      DT_ASSERT_OK(dt_sum(aw_prod, nullptr, 0, 0, aw_loss.out()));
      DT_ASSERT_OK(dt_mul(out, w.get(), prod.out()));
      DT_ASSERT_OK(dt_sum(prod, nullptr, 0, 0, output_loss.out()));
      DT_ASSERT_OK(dt_add(output_loss, aw_loss, loss.out()));
    }
    EXPECT_EQ(shape_of(out), Ints(step.at("output").at("shape")));
    ExpectClose(Values(out), step.at("output").at("values"), tol, "output");
    if (attn.is_null()) {
      DT_ASSERT_OK(dt_mul(out, w.get(), prod.out()));
      DT_ASSERT_OK(dt_sum(prod, nullptr, 0, 0, loss.out()));
    }
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!leaves[i].get()) continue;
      T g;
      DT_ASSERT_OK(dt_tensor_grad(leaves[i].get(), g.out()));
      ExpectClose(Values(g), step.at("input_grads").at(i), tol, "grad of input " + std::to_string(i));
    }
    for (size_t i = 0; i < nparams; ++i) {
      char name[96] = {};
      T p, g;
      DT_ASSERT_OK(dt_module_parameter(m, i, name, sizeof name, nullptr, p.out()));
      DT_ASSERT_OK(dt_tensor_grad(p, g.out()));
      ASSERT_TRUE(step.at("grads").contains(name)) << name;
      ExpectClose(Values(g), step.at("grads").at(name), tol, std::string("grad of ") + name);
    }
  }
  dt_state_dict* after = nullptr;
  DT_ASSERT_OK(dt_module_state_dict(m, &after));
  size_t count = 0;
  dt_state_dict_count(after, &count);
  EXPECT_EQ(count, c.at("final").size()) << "the state_dict has PyTorch's keys";
  for (const auto& [name, want] : c.at("final").items()) {
    T t;
    EXPECT_EQ(dt_state_dict_find(after, name.c_str(), t.out()), DT_OK) << name << ": " << dt_last_error_message();
    if (t.get()) ExpectClose(Values(t), want, tol, "final " + name);
  }
  dt_state_dict_release(after);
}

TEST_F(Norm, ModulesMatchPyTorchOnTheCpu) {
  ASSERT_FALSE(NormCases().empty()) << "regenerate tests/reference/norm_module_cases.json";
  for (const auto& c : NormCases()) RunCase(c, dt_device{DT_DEVICE_CPU, 0});
}

TEST_F(Norm, ModulesMatchPyTorchOnCuda) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not usable here";
  for (const auto& c : NormCases()) RunCase(c, dt_device{DT_DEVICE_CUDA, 0});
}

std::string NameAt(dt_module* m, size_t i, bool buffer, T* t) {
  char buf[64] = {};
  EXPECT_EQ(buffer ? dt_module_buffer(m, i, buf, sizeof buf, nullptr, t->out())
                   : dt_module_parameter(m, i, buf, sizeof buf, nullptr, t->out()),
            DT_OK)
      << dt_last_error_message();
  return buf;
}

TEST_F(Norm, BatchNormStartsAsPyTorchsAndItsBuffersMoveWithIt) {
  M bn;
  DT_ASSERT_OK(dt_batch_norm2d_new(3, 1e-5, 0.1, 1, 1, DT_FLOAT32, cpu(0), bn.out()));
  T w, b, rm, rv, nbt;
  EXPECT_EQ(NameAt(bn, 0, false, &w), "weight");
  EXPECT_EQ(NameAt(bn, 1, false, &b), "bias");
  EXPECT_EQ(NameAt(bn, 0, true, &rm), "running_mean");
  EXPECT_EQ(NameAt(bn, 1, true, &rv), "running_var");
  EXPECT_EQ(NameAt(bn, 2, true, &nbt), "num_batches_tracked");
  EXPECT_EQ(values<float>(w), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(values<float>(b), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(values<float>(rm), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(values<float>(rv), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(values<int64_t>(nbt), (std::vector<int64_t>{0}));
  EXPECT_TRUE(shape_of(nbt).empty()) << "0-d, as PyTorch's";
  // One training step on cpu:1: the buffers moved in place, and updated there.
  DT_ASSERT_OK(dt_module_to(bn, cpu(1)));
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(rm, &d));
  EXPECT_EQ(d.index, 1) << "the handle the caller holds sees the moved buffer";
  // Channel c holds c, c + 2 (batch of 2, 1 x 1 images): mean c + 1, unbiased var 2.
  const float x[6] = {0, 1, 2, 2, 3, 4};
  const int64_t shape[4] = {2, 3, 1, 1};
  T in, out;
  DT_ASSERT_OK(dt_tensor_from_data(x, sizeof x, shape, 4, DT_FLOAT32, cpu(1), in.out()));
  const dt_tensor* args[1] = {in.get()};
  DT_ASSERT_OK(dt_module_forward(bn, args, 1, out.out()));
  const std::vector<float> mean = values<float>(rm), var = values<float>(rv);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(mean[c], 0.1 * (c + 1), 1e-6);    // 0.9 * 0 + 0.1 * (c + 1)
    EXPECT_NEAR(var[c], 0.9 + 0.1 * 2.0, 1e-6);  // 0.9 * 1 + 0.1 * 2
  }
  EXPECT_EQ(values<int64_t>(nbt), (std::vector<int64_t>{1}));
  // normalised: (x - mean) / sqrt(1 + eps) with the biased variance 1: -1 and +1
  const std::vector<float> y = values<float>(out);
  EXPECT_NEAR(y[0], -1.0, 1e-4);
  EXPECT_NEAR(y[3], 1.0, 1e-4);
}

TEST_F(Norm, EmbeddingStartsNormalWithItsPaddingRowZero) {
  DT_ASSERT_OK(dt_manual_seed(5));
  M e;
  DT_ASSERT_OK(dt_embedding_new(50, 20, -2, DT_FLOAT64, cpu(), e.out()));  // padding_idx 48
  T w;
  EXPECT_EQ(NameAt(e, 0, false, &w), "weight");
  EXPECT_EQ(shape_of(w), (std::vector<int64_t>{50, 20}));
  const std::vector<double> v = values<double>(w);
  double sum = 0, sq = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i / 20 == 48) EXPECT_EQ(v[i], 0.0) << "padding row, element " << i % 20;
    sum += v[i];
    sq += v[i] * v[i];
  }
  const double n = 49 * 20, mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.15);          // 980 draws of N(0, 1): sd of the mean 0.032
  EXPECT_NEAR(sq / n - mean * mean, 1.0, 0.2);
}

TEST_F(Norm, BadInputNamesTheModuleAndTheShapes) {
  M bn, ln, gn, emb;
  DT_ASSERT_OK(dt_batch_norm2d_new(3, 1e-5, 0.1, 1, 1, DT_FLOAT32, cpu(), bn.out()));
  const int64_t ls[1] = {4};
  DT_ASSERT_OK(dt_layer_norm_new(ls, 1, 1e-5, 1, 1, DT_FLOAT32, cpu(), ln.out()));
  DT_ASSERT_OK(dt_group_norm_new(2, 4, 1e-5, 1, DT_FLOAT32, cpu(), gn.out()));
  DT_ASSERT_OK(dt_embedding_new(10, 3, DT_PADDING_IDX_NONE, DT_FLOAT32, cpu(), emb.out()));
  auto forward = [](dt_module* m, dt_tensor* x, dt_status want, const std::vector<std::string>& needles) {
    T out;
    const dt_tensor* in[1] = {x};
    DT_EXPECT_STATUS(dt_module_forward(m, in, 1, out.out()), want);
    const std::string msg = dt_last_error_message();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' in: " << msg;
    EXPECT_EQ(out.get(), nullptr);
  };
  auto zeros = [](std::vector<int64_t> shape, dt_dtype dt) {
    T t;
    EXPECT_EQ(dt_tensor_zeros(shape.data(), shape.size(), dt, cpu(), t.out()), DT_OK);
    return t;
  };
  T four_channels = zeros({2, 4, 5, 5}, DT_FLOAT32);
  forward(bn, four_channels, DT_ERR_SHAPE_MISMATCH, {"BatchNorm2d(3", "3 channels", "[2, 4, 5, 5]"});
  T three_d = zeros({3, 5, 5}, DT_FLOAT32);
  forward(bn, three_d, DT_ERR_SHAPE_MISMATCH, {"BatchNorm2d(3", "expected 4D input (got 3D input", "[3, 5, 5]"});
  M bn1;
  DT_ASSERT_OK(dt_batch_norm1d_new(3, 1e-5, 0.1, 1, 1, DT_FLOAT32, cpu(), bn1.out()));
  T one_row = zeros({1, 3}, DT_FLOAT32);
  forward(bn1, one_row, DT_ERR_SHAPE_MISMATCH, {"BatchNorm1d(3", "more than 1 value per channel", "[1, 3]"});
  T doubles = zeros({2, 3, 4, 4}, DT_FLOAT64);
  forward(bn, doubles, DT_ERR_DTYPE_MISMATCH, {"BatchNorm2d(3", "float32", "float64"});
  T last5 = zeros({2, 5}, DT_FLOAT32);
  forward(ln, last5, DT_ERR_SHAPE_MISMATCH, {"LayerNorm([4]", "[2, 5]"});
  T six = zeros({2, 6, 3}, DT_FLOAT32);
  forward(gn, six, DT_ERR_SHAPE_MISMATCH, {"GroupNorm(2, 4", "[2, 6, 3]"});
  T float_indices = zeros({2, 3}, DT_FLOAT32);
  forward(emb, float_indices, DT_ERR_DTYPE_MISMATCH, {"Embedding(10, 3)", "int64 or int32", "float32", "[2, 3]"});
  const int64_t idx[3] = {1, 10, 2}, n3 = 3;
  T far;
  DT_ASSERT_OK(dt_tensor_from_data(idx, sizeof idx, &n3, 1, DT_INT64, cpu(), far.out()));
  forward(emb, far, DT_ERR_INVALID_ARGUMENT, {"Embedding(10, 3)", "10"});
  // Its own state_dict with running_mean of another shape: the key and both shapes.
  dt_state_dict* sd = nullptr;
  DT_ASSERT_OK(dt_module_state_dict(bn, &sd));
  T four = zeros({4}, DT_FLOAT32);
  DT_ASSERT_OK(dt_state_dict_set(sd, "running_mean", four));
  const dt_status st = dt_module_load_state_dict(bn, sd);
  const std::string msg = dt_last_error_message();
  dt_state_dict_release(sd);
  EXPECT_EQ(st, DT_ERR_INVALID_ARGUMENT) << msg;
  EXPECT_NE(msg.find("running_mean"), std::string::npos) << msg;
  EXPECT_NE(msg.find("BatchNorm2d"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
}

TEST_F(Norm, AttentionNamesTheModuleAndTheShapes) {
  M mha, layer;
  DT_ASSERT_OK(dt_multihead_attention_new(8, 2, 0.0, 1, 0, DT_FLOAT32, cpu(), mha.out()));
  DT_ASSERT_OK(dt_transformer_encoder_layer_new(8, 2, 16, 0.0, "relu", 1e-5, 0, 0, DT_FLOAT32, cpu(), layer.out()));
  const int64_t s6[3] = {4, 2, 6}, s8[3] = {4, 2, 8}, kpm[2] = {3, 4};
  T x6, x8, mask, out;
  DT_ASSERT_OK(dt_tensor_zeros(s6, 3, DT_FLOAT32, cpu(), x6.out()));
  DT_ASSERT_OK(dt_tensor_zeros(s8, 3, DT_FLOAT32, cpu(), x8.out()));
  DT_ASSERT_OK(dt_tensor_zeros(kpm, 2, DT_BOOL, cpu(), mask.out()));
  const dt_tensor* one[1] = {x6.get()};
  DT_EXPECT_STATUS(dt_module_forward(mha, one, 1, out.out()), DT_ERR_SHAPE_MISMATCH);
  std::string msg = dt_last_error_message();
  EXPECT_NE(msg.find("MultiheadAttention(embed_dim=8, num_heads=2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 2, 6]"), std::string::npos) << msg;
  // key_padding_mask [3, 4] for a batch of 2 over 4 keys
  const dt_tensor* masked[4] = {x8.get(), nullptr, nullptr, mask.get()};
  DT_EXPECT_STATUS(dt_module_forward(mha, masked, 4, out.out()), DT_ERR_SHAPE_MISMATCH);
  msg = dt_last_error_message();
  EXPECT_NE(msg.find("key_padding_mask must be [2, 4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[3, 4]"), std::string::npos) << msg;
  // six inputs; a NULL query (only the optional inputs may be NULL)
  const dt_tensor* six[6] = {x8.get(), x8.get(), x8.get(), nullptr, nullptr, nullptr};
  DT_EXPECT_STATUS(dt_module_forward(mha, six, 6, out.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("takes 1 to 5 inputs"), std::string::npos) << dt_last_error_message();
  const dt_tensor* no_query[1] = {nullptr};
  DT_EXPECT_STATUS(dt_module_forward(layer, no_query, 1, out.out()), DT_ERR_INVALID_ARGUMENT);
  // the layer: the shape error of its attention, naming the layer first and the input's shape
  const dt_tensor* src[1] = {x6.get()};
  DT_EXPECT_STATUS(dt_module_forward(layer, src, 1, out.out()), DT_ERR_SHAPE_MISMATCH);
  msg = dt_last_error_message();
  EXPECT_EQ(msg.rfind("TransformerEncoderLayer(d_model=8, nhead=2): ", 0), 0u) << msg;
  EXPECT_NE(msg.find("[4, 2, 6]"), std::string::npos) << msg;
  // a src_mask of the wrong shape: the layer, then its attention's attn_mask rule
  const int64_t bad_mask[2] = {4, 3};
  T src_mask;
  DT_ASSERT_OK(dt_tensor_zeros(bad_mask, 2, DT_BOOL, cpu(), src_mask.out()));
  const dt_tensor* with_mask[2] = {x8.get(), src_mask.get()};
  DT_EXPECT_STATUS(dt_module_forward(layer, with_mask, 2, out.out()), DT_ERR_SHAPE_MISMATCH);
  msg = dt_last_error_message();
  EXPECT_EQ(msg.rfind("TransformerEncoderLayer(d_model=8, nhead=2): ", 0), 0u) << msg;
  EXPECT_NE(msg.find("src_mask is self_attn's attn_mask"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4, 3]"), std::string::npos) << msg;
  EXPECT_EQ(out.get(), nullptr);
}

// scaled_dot_product_attention names itself, the mask and the weights' shape when the
// mask does not fit [..., L, S], not the internal add.
TEST_F(Norm, AttentionMaskOfTheWrongShapeNamesTheFunction) {
  const int64_t qs[3] = {2, 4, 6}, ms[2] = {4, 5};
  T q, mask, out;
  DT_ASSERT_OK(dt_tensor_zeros(qs, 3, DT_FLOAT32, cpu(), q.out()));
  DT_ASSERT_OK(dt_tensor_zeros(ms, 2, DT_FLOAT32, cpu(), mask.out()));
  DT_EXPECT_STATUS(dt_scaled_dot_product_attention(q, q, q, mask, 0, out.out()), DT_ERR_SHAPE_MISMATCH);
  const std::string msg = dt_last_error_message();
  EXPECT_EQ(msg.rfind("scaled_dot_product_attention: attn_mask of shape [4, 5] does not broadcast to the attention "
                      "weights' shape [2, 4, 4]", 0),
            0u)
      << msg;
  EXPECT_EQ(out.get(), nullptr);
}

TEST_F(Norm, ConstructorsAndFunctionalFormsRefuseBadArguments) {
  M m;
  DT_EXPECT_STATUS(dt_batch_norm2d_new(0, 1e-5, 0.1, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm2d_new(3, 0.0, 0.1, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm1d_new(3, 1e-5, 1.5, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm1d_new(3, 1e-5, 0.1, 2, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm1d_new(3, 1e-5, 0.1, 1, 1, DT_INT64, cpu(), m.out()), DT_ERR_DTYPE_MISMATCH);
  DT_EXPECT_STATUS(dt_layer_norm_new(nullptr, 1, 1e-5, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  const int64_t bad[2] = {3, 0};
  DT_EXPECT_STATUS(dt_layer_norm_new(bad, 2, 1e-5, 1, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_group_norm_new(4, 6, 1e-5, 1, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_embedding_new(5, 3, 5, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_embedding_new(5, 0, DT_PADDING_IDX_NONE, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_embedding_new(5, 3, 0, DT_FLOAT32, cpu(), nullptr), DT_ERR_INVALID_ARGUMENT);
  // an attention whose in_proj_weight [3 * E, E] has more elements than int64 holds
  // (found by fuzz_modules: 3 * E overflowed before the weight was sized)
  const int64_t huge = INT64_MAX;
  DT_EXPECT_STATUS(dt_multihead_attention_new(huge, 1, 0.0, 1, 0, DT_FLOAT32, cpu(), m.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("embed_dim (9223372036854775807) is too large"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_multihead_attention_new(int64_t{1} << 32, 1, 0.0, 1, 0, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);  // 3 * 2^32 fits, 3 * 2^64 does not
  DT_EXPECT_STATUS(dt_transformer_encoder_layer_new(huge, 1, 4, 0.0, nullptr, 1e-5, 0, 0, DT_FLOAT32, cpu(), m.out()),
                   DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("TransformerEncoderLayer: embed_dim (9223372036854775807)"),
            std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(*m.out(), nullptr) << "nothing made on failure";

  T x, rm, w64, out;
  const int64_t s[2] = {4, 3}, c[1] = {3};
  DT_ASSERT_OK(dt_tensor_ones(s, 2, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_zeros(c, 1, DT_FLOAT32, cpu(), rm.out()));
  DT_ASSERT_OK(dt_tensor_ones(c, 1, DT_FLOAT64, cpu(), w64.out()));
  // eval needs the running statistics; one without the other is refused
  DT_EXPECT_STATUS(dt_batch_norm(x, nullptr, nullptr, nullptr, nullptr, 0, 0.1, 1e-5, out.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm(x, rm, nullptr, nullptr, nullptr, 1, 0.1, 1e-5, out.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_batch_norm(x, nullptr, nullptr, w64, nullptr, 1, 0.1, 1e-5, out.out()), DT_ERR_DTYPE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("weight is float64 but the input is float32"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_batch_norm(x, nullptr, nullptr, nullptr, nullptr, 3, 0.1, 1e-5, out.out()),
                   DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_layer_norm(x, c, 1, nullptr, nullptr, 1e-5, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_group_norm(nullptr, 1, nullptr, nullptr, 1e-5, out.out()), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_embedding(x, x, DT_PADDING_IDX_NONE, out.out()), DT_ERR_DTYPE_MISMATCH);
  EXPECT_EQ(out.get(), nullptr) << "outputs untouched on failure";
  // the running statistics are untouched by a refused call
  EXPECT_EQ(values<float>(rm), (std::vector<float>{0, 0, 0}));
}

// Eval-mode batch norm runs as one kernel on a contiguous float32 or float64 input
// (KernelOp::BatchNormEval) and as the unfused ops otherwise (here: a transposed view).
// Both must give the bits of the formula computed here one rounding at a time: rstd =
// 1 / sqrt(var + eps), scale = weight * rstd, shift = bias - mean * scale, x * scale +
// shift. On the CPU, and on cuda:0 when it is usable.
template <typename F>
void check_eval_batch_norm_bits(dt_dtype dtype, dt_device device) {
  const int64_t xs[4] = {3, 4, 5, 6}, cs[1] = {4};
  const double eps = 1e-3;
  DT_ASSERT_OK(dt_manual_seed(21));
  T x, mean, var0, var, weight, bias;
  DT_ASSERT_OK(dt_tensor_randn(xs, 4, dtype, device, x.out()));
  DT_ASSERT_OK(dt_tensor_randn(cs, 1, dtype, device, mean.out()));
  DT_ASSERT_OK(dt_tensor_rand(cs, 1, dtype, device, var0.out()));
  DT_ASSERT_OK(dt_add_scalar(var0, 0.25, var.out()));
  DT_ASSERT_OK(dt_tensor_randn(cs, 1, dtype, device, weight.out()));
  DT_ASSERT_OK(dt_tensor_randn(cs, 1, dtype, device, bias.out()));
  T xt, xc;  // the same values, [3, 4, 6, 5], as a transposed view and contiguous
  DT_ASSERT_OK(dt_transpose(x, 2, 3, xt.out()));
  DT_ASSERT_OK(dt_contiguous(xt, xc.out()));
  const std::vector<F> xv = values<F>(xc), mv = values<F>(mean), vv = values<F>(var), wv = values<F>(weight),
                       bv = values<F>(bias);
  for (int affine = 0; affine < 4; ++affine) {
    const bool with_w = affine & 1, with_b = affine & 2;
    T fused, unfused;
    DT_ASSERT_OK(dt_batch_norm(xc, mean, var, with_w ? weight.get() : nullptr, with_b ? bias.get() : nullptr, 0, 0.1,
                               eps, fused.out()));
    DT_ASSERT_OK(dt_batch_norm(xt, mean, var, with_w ? weight.get() : nullptr, with_b ? bias.get() : nullptr, 0, 0.1,
                               eps, unfused.out()));
    std::vector<F> want(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      const size_t c = (i / 30) % 4;
      const volatile F rstd = F(1) / std::sqrt(vv[c] + static_cast<F>(eps));
      const volatile F scale = with_w ? wv[c] * rstd : rstd;
      const volatile F ms = mv[c] * scale;
      const volatile F shift = with_b ? bv[c] - ms : -ms;
      const volatile F prod = xv[i] * scale;
      want[i] = prod + shift;
    }
    const std::vector<F> got_fused = values<F>(fused), got_unfused = values<F>(unfused);
    ASSERT_EQ(got_fused.size(), want.size());
    size_t fused_off = 0, unfused_off = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      fused_off += std::memcmp(&got_fused[i], &want[i], sizeof(F)) != 0;
      unfused_off += std::memcmp(&got_unfused[i], &want[i], sizeof(F)) != 0;
    }
    EXPECT_EQ(fused_off, 0u) << "one pass, weight " << with_w << ", bias " << with_b;
    EXPECT_EQ(unfused_off, 0u) << "unfused ops, weight " << with_w << ", bias " << with_b;
  }
}

TEST_F(Norm, EvalBatchNormInOnePassGivesTheBitsOfTheUnfusedOps) {
  check_eval_batch_norm_bits<float>(DT_FLOAT32, cpu());
  check_eval_batch_norm_bits<double>(DT_FLOAT64, cpu());
}

TEST_F(Norm, EvalBatchNormInOnePassGivesTheBitsOfTheUnfusedOpsOnCuda) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  check_eval_batch_norm_bits<float>(DT_FLOAT32, dt_device{DT_DEVICE_CUDA, 0});
  check_eval_batch_norm_bits<double>(DT_FLOAT64, dt_device{DT_DEVICE_CUDA, 0});
}

// F.embedding's negative padding_idx counts from the end: -1 is the last row, which then
// gets no gradient; -num is row 0, and -num - 1 is refused.
TEST_F(Norm, FunctionalEmbeddingCountsANegativePaddingIdxFromTheEnd) {
  const int64_t ws[2] = {3, 2}, is[1] = {4};
  const int64_t idx[4] = {2, 0, 2, 1};
  T w, ix, y, loss;
  DT_ASSERT_OK(dt_tensor_arange(0, 6, 1, DT_FLOAT32, cpu(), w.out()));
  T w32;
  DT_ASSERT_OK(dt_reshape(w, ws, 2, w32.out()));
  T leaf;
  DT_ASSERT_OK(dt_tensor_to(w32, cpu(), DT_FLOAT32, DT_TO_COPY, leaf.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(leaf, 1));
  DT_ASSERT_OK(dt_tensor_from_data(idx, sizeof idx, is, 1, DT_INT64, cpu(), ix.out()));
  DT_ASSERT_OK(dt_embedding(ix, leaf, -1, y.out()));
  EXPECT_EQ(values<float>(y), (std::vector<float>{4, 5, 0, 1, 4, 5, 2, 3}));
  DT_ASSERT_OK(dt_sum(y, nullptr, 0, 0, loss.out()));
  DT_ASSERT_OK(dt_backward(loss, nullptr));
  T g;
  DT_ASSERT_OK(dt_tensor_grad(leaf, g.out()));
  EXPECT_EQ(values<float>(g), (std::vector<float>{1, 1, 1, 1, 0, 0})) << "row 2 (padding_idx -1) gets no gradient";
  T z;
  DT_EXPECT_STATUS(dt_embedding(ix, leaf, -4, z.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("padding_idx -4 is outside [-3, 3)"), std::string::npos)
      << dt_last_error_message();
}

// An input without channels passes GroupNorm's divisibility check for any num_groups
// (0 % g == 0), as in PyTorch, whose group_norm(zeros(2, 0, 3), 5) is empty [2, 0, 3].
// With num_groups 2^62 + 1 PyTorch fails ("Storage size calculation overflowed"); here
// the result is the same empty tensor, with no N x num_groups statistics made (found by
// fuzz/fuzz_nn.cpp: an overflow, then a 16 GiB allocation).
TEST_F(Norm, GroupNormOfNoChannelsIsEmptyForAnyNumberOfGroups) {
  const int64_t xs[3] = {2, 0, 3};
  T x, y;
  DT_ASSERT_OK(dt_tensor_zeros(xs, 3, DT_FLOAT32, cpu(), x.out()));
  for (int64_t groups : {int64_t{5}, (int64_t{1} << 62) + 1, int64_t{1} << 32}) {
    DT_ASSERT_OK(dt_group_norm(x, groups, nullptr, nullptr, 1e-5, y.out()));
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 0, 3})) << groups;
  }
}

}  // namespace
