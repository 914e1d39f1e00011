// A backend added as a plugin (tests/plugin/test_backend.cpp, device type 12, "testdev",
// two devices), registered through DEVTENSOR_PLUGINS: its devices parse, print, count and
// describe themselves; tensors move to and from it and between its devices; ops, autograd
// and a training step run there (the plugin's op counter proves the work ran in it);
// mixing it with another device is the usual mismatch; what it lacks is NOT_SUPPORTED.
// ctest sets DEVTENSOR_PLUGINS; run alone, the tests are skipped. (The PyTorch reference
// suite runs on testdev:0 too: ctest's test_reference_ops_plugin.)
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/dt_test.h"

namespace {

constexpr int32_t kTestDev = 12;
const dt_device kDev0{kTestDev, 0}, kDev1{kTestDev, 1};

// A symbol of the plugin, from the same loaded copy the library uses.
void* plugin_symbol(const char* name) {
  const char* path = std::getenv("DEVTENSOR_PLUGINS");
  void* h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  return h ? dlsym(h, name) : nullptr;
}

// The plugin's op counter.
uint64_t plugin_ops() {
  auto count = reinterpret_cast<uint64_t (*)()>(plugin_symbol("devtensor_test_backend_ops"));
  return count ? count() : 0;
}

// What the plugin saw queued on a stream.
struct Queued {
  uint64_t ops, allocations, frees, copies, waits, records;
};
Queued queued_on(const dt_stream* s) {
  void* native = nullptr;
  EXPECT_EQ(dt_stream_native_handle(s, &native), DT_OK) << dt_last_error_message();
  auto counts = reinterpret_cast<void (*)(void*, uint64_t*)>(plugin_symbol("devtensor_test_backend_stream_counts"));
  uint64_t c[6] = {};
  if (counts && native) counts(native, c);
  return Queued{c[0], c[1], c[2], c[3], c[4], c[5]};
}

// Owns a stream or event reference.
struct Stream {
  dt_stream* s = nullptr;
  ~Stream() { dt_stream_release(s); }
  operator dt_stream*() const { return s; }
};
struct Event {
  dt_event* e = nullptr;
  ~Event() { dt_event_release(e); }
  operator dt_event*() const { return e; }
};

class PluginBackend : public LeakChecked {
 protected:
  void SetUp() override {
    if (!std::getenv("DEVTENSOR_PLUGINS")) GTEST_SKIP() << "DEVTENSOR_PLUGINS is not set (ctest sets it)";
    LeakChecked::SetUp();
  }
};

TEST_F(PluginBackend, ItsDevicesParsePrintCountAndDescribeThemselves) {
  dt_device d{};
  DT_ASSERT_OK(dt_device_parse("testdev:1", &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
  char buf[64];
  DT_ASSERT_OK(dt_device_format(kDev1, buf, sizeof buf, nullptr));
  EXPECT_STREQ(buf, "testdev:1");
  size_t n = 0;
  DT_ASSERT_OK(dt_device_count(kTestDev, &n));
  EXPECT_EQ(n, 2u);
  DT_ASSERT_OK(dt_device_name(kDev1, buf, sizeof buf, nullptr));
  EXPECT_STREQ(buf, "devtensor test device 1");
  DT_EXPECT_STATUS(dt_device_name(dt_device{kTestDev, 2}, buf, sizeof buf, nullptr), DT_ERR_INVALID_DEVICE);
  EXPECT_NE(std::string(dt_last_error_message()).find("testdev:2 requested, 2 testdev devices visible"),
            std::string::npos)
      << dt_last_error_message();
  // Not a GPU: the GPU helpers do not offer it.
  dt_device g{};
  DT_ASSERT_OK(dt_try_gpu(0, &g));
  EXPECT_NE(g.type, kTestDev);
  // dt_build_info names it.
  const std::string info = build_info_text();
  EXPECT_NE(info.find("testdev (plugin)"), std::string::npos) << info;
}

TEST_F(PluginBackend, TensorsMoveToItAndBackAndOpsRunInIt) {
  const float host[6] = {1, -2, 3, -4, 5, -6};
  const int64_t shape[] = {2, 3};
  T x, on0, on1, y, z, back;
  DT_ASSERT_OK(dt_tensor_from_data(host, sizeof host, shape, 2, DT_FLOAT32, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_to(x, kDev0, DT_DTYPE_DEFAULT, 0, on0.out()));
  DT_ASSERT_OK(dt_tensor_to(on0, kDev1, DT_DTYPE_DEFAULT, 0, on1.out()));  // between its devices
  const uint64_t before = plugin_ops();
  DT_ASSERT_OK(dt_relu(on1, y.out()));
  DT_ASSERT_OK(dt_mul(y, on1, z.out()));
  EXPECT_EQ(plugin_ops(), before + 2) << "the ops did not run in the plugin";
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(z, &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(values<float>(z), (std::vector<float>{1, 0, 9, 0, 25, 0}));  // relu(x) * x
  EXPECT_EQ(str(y), "tensor([[1., 0., 3.],\n        [0., 5., 0.]], device='testdev:1')");
  // Mixing it with another device is the usual mismatch, naming both.
  T bad;
  DT_EXPECT_STATUS(dt_add(on0, x, bad.out()), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("testdev:0"), std::string::npos) << dt_last_error_message();
  // Its memory is counted by its own allocator.
  dt_mem_stats m;
  m.struct_size = sizeof m;
  DT_ASSERT_OK(dt_memory_stats(kDev1, &m));
  EXPECT_GE(m.allocated_bytes, 3 * 6 * sizeof(float));
}

// dt_copy_ across devices: a host row broadcast into a tensor on testdev:0, host values
// into a transposed (strided) view of it, then back into a host tensor, cast on the way.
TEST_F(PluginBackend, CopyIntoATensorCrossesToItAndBackBroadcastingIntoViews) {
  const int64_t s23[] = {2, 3}, s32[] = {3, 2}, n3 = 3;
  const double row_v[3] = {1, 2, 3};
  const float cols_v[6] = {10, 20, 30, 40, 50, 60};
  T dst, row, cols, view, back;
  DT_ASSERT_OK(dt_tensor_zeros(s23, 2, DT_FLOAT32, kDev0, dst.out()));
  DT_ASSERT_OK(dt_tensor_from_data(row_v, sizeof row_v, &n3, 1, DT_FLOAT64, cpu(), row.out()));
  DT_ASSERT_OK(dt_copy_(dst, row, 0));
  EXPECT_EQ(values<float>(dst), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  DT_ASSERT_OK(dt_tensor_from_data(cols_v, sizeof cols_v, s32, 2, DT_FLOAT32, cpu(), cols.out()));
  DT_ASSERT_OK(dt_transpose(dst, 0, 1, view.out()));
  DT_ASSERT_OK(dt_copy_(view, cols, 0));
  EXPECT_EQ(values<float>(dst), (std::vector<float>{10, 30, 50, 20, 40, 60}));
  DT_ASSERT_OK(dt_tensor_zeros(s23, 2, DT_INT64, cpu(), back.out()));
  DT_ASSERT_OK(dt_copy_(back, dst, 0));
  EXPECT_EQ(values<int64_t>(back), (std::vector<int64_t>{10, 30, 50, 20, 40, 60}));
}

// The plugin's convolution-hook counter (DTP_HOOK_* passes it ran).
uint64_t plugin_hooks() {
  auto count = reinterpret_cast<uint64_t (*)()>(plugin_symbol("devtensor_test_backend_hooks"));
  return count ? count() : 0;
}

// conv2d forward and both gradients on testdev:0 and on the CPU: `hooks` passes are
// expected to run through the plugin's library hooks; the results must equal the CPU's.
void check_conv_against_cpu(dt_dtype dtype, uint64_t hooks) {
  const int64_t xs[] = {2, 4, 7, 6}, ws[] = {6, 2, 3, 2}, bs[] = {6};
  const int64_t stride[] = {2, 1}, padding[] = {1, 0}, dilation[] = {1, 2};
  T x, w, b;
  DT_ASSERT_OK(dt_manual_seed(7));
  DT_ASSERT_OK(dt_tensor_randn(xs, 4, dtype, cpu(), x.out()));
  DT_ASSERT_OK(dt_tensor_randn(ws, 4, dtype, cpu(), w.out()));
  DT_ASSERT_OK(dt_tensor_randn(bs, 1, dtype, cpu(), b.out()));
  std::string results[2][3];
  uint64_t ran = 0;
  for (int side = 0; side < 2; ++side) {
    const dt_device where = side == 0 ? cpu() : kDev0;
    T xd, wd, bd, y, yy, loss, gx, gw, back;
    DT_ASSERT_OK(dt_tensor_to(x, where, DT_DTYPE_DEFAULT, DT_TO_COPY, xd.out()));
    DT_ASSERT_OK(dt_tensor_to(w, where, DT_DTYPE_DEFAULT, DT_TO_COPY, wd.out()));
    DT_ASSERT_OK(dt_tensor_to(b, where, DT_DTYPE_DEFAULT, DT_TO_COPY, bd.out()));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(xd, 1));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(wd, 1));
    const uint64_t before = plugin_hooks();
    // groups 2: [2, 4, 7, 6] * [6, 2, 3, 2] -> [2, 6, 4, 3]
    DT_ASSERT_OK(dt_conv2d(xd, wd, bd, stride, padding, dilation, 2, y.out()));
    DT_ASSERT_OK(dt_mul(y, y, yy.out()));
    DT_ASSERT_OK(dt_sum(yy, nullptr, 0, 0, loss.out()));
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    DT_ASSERT_OK(dt_tensor_grad(xd, gx.out()));
    DT_ASSERT_OK(dt_tensor_grad(wd, gw.out()));
    if (side == 1) ran = plugin_hooks() - before;
    int k = 0;
    for (dt_tensor* t : {y.get(), gx.get(), gw.get()}) {
      T plain, host;  // without autograd history: the CPU's grad_fn names differ
      DT_ASSERT_OK(dt_tensor_detach(t, plain.out()));
      DT_ASSERT_OK(dt_tensor_to(plain, cpu(), DT_DTYPE_DEFAULT, 0, host.out()));
      results[side][k++] = str(host);
    }
  }
  EXPECT_EQ(ran, hooks);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(results[1][k], results[0][k]) << "output " << k;
}

TEST_F(PluginBackend, ConvolutionRunsThroughItsLibraryHooksAndFallsBackWhereItHasNone) {
  // float32: the plugin's hooks (oneDNN, as the CPU's) take all three passes, with stride,
  // padding, dilation and groups packed through the ABI, and give the CPU's very bits.
  SCOPED_TRACE("float32");
  const bool onednn = has(build_info_text(), "cpu convolutions (float32): oneDNN");
  check_conv_against_cpu(DT_FLOAT32, onednn ? 3 : 0);
  // float64: oneDNN has no such kernel, the plugin hands each pass back and the core
  // computes it (im2col and matmul), as on the CPU.
  SCOPED_TRACE("float64");
  check_conv_against_cpu(DT_FLOAT64, 0);
}

// max_pool2d forward and backward on testdev:0 and on the CPU, from x with ties and a NaN
// (stride, padding, dilation and ceil_mode's overhang all in play): `hooks` passes are
// expected through the plugin's max pooling hook; outputs and x's gradient (which follows
// the hook's indices) must equal the CPU's.
void check_max_pool_against_cpu(dt_dtype dtype, uint64_t hooks) {
  const int64_t xs[] = {2, 3, 7, 6}, kernel[] = {3, 2}, stride[] = {2, 1}, padding[] = {1, 1}, dilation[] = {1, 2};
  std::vector<double> xv(2 * 3 * 7 * 6);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(static_cast<int>((i * 37) % 13) - 6);
  xv[50] = std::nan("");
  T x64, x;
  DT_ASSERT_OK(dt_tensor_from_data(xv.data(), xv.size() * sizeof(double), xs, 4, DT_FLOAT64, cpu(), x64.out()));
  DT_ASSERT_OK(dt_tensor_to(x64, cpu(), dtype, DT_TO_COPY, x.out()));
  std::string results[2][2];
  uint64_t ran = 0;
  for (int side = 0; side < 2; ++side) {
    const dt_device where = side == 0 ? cpu() : kDev0;
    T xd, y, yy, loss, gx;
    DT_ASSERT_OK(dt_tensor_to(x, where, DT_DTYPE_DEFAULT, DT_TO_COPY, xd.out()));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(xd, 1));
    const uint64_t before = plugin_hooks();
    DT_ASSERT_OK(dt_max_pool2d(xd, kernel, stride, padding, dilation, 1, y.out()));  // [2, 3, 4, 6]
    if (side == 1) ran = plugin_hooks() - before;
    DT_ASSERT_OK(dt_mul(y, y, yy.out()));
    DT_ASSERT_OK(dt_sum(yy, nullptr, 0, 0, loss.out()));
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    DT_ASSERT_OK(dt_tensor_grad(xd, gx.out()));
    int k = 0;
    for (dt_tensor* t : {y.get(), gx.get()}) {
      T plain, host;
      DT_ASSERT_OK(dt_tensor_detach(t, plain.out()));
      DT_ASSERT_OK(dt_tensor_to(plain, cpu(), DT_DTYPE_DEFAULT, 0, host.out()));
      results[side][k++] = str(host);
    }
  }
  EXPECT_EQ(ran, hooks);
  EXPECT_TRUE(has(results[0][0], "nan")) << "the planted NaN wins its windows";
  for (int k = 0; k < 2; ++k) EXPECT_EQ(results[1][k], results[0][k]) << "output " << k;
}

TEST_F(PluginBackend, MaxPoolingRunsThroughItsLibraryHookAndFallsBackWhereItHasNone) {
  // float32 and float64: the plugin's kernel (the CPU's, as CUDA has its own in pool.cu)
  // takes the pass, its geometry packed through the ABI (dtp_pool_geometry_pack).
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64}) {
    SCOPED_TRACE(dtype);
    check_max_pool_against_cpu(dtype, 1);
  }
  // bfloat16: that kernel has none; the plugin hands the pass back and the core reduces
  // the windows view, as on the CPU.
  SCOPED_TRACE("bfloat16");
  check_max_pool_against_cpu(DT_BFLOAT16, 0);
}

// Attention: q [2, 3, 5, 4], k and v [2, 3, 7, 4] (5 queries, 7 keys, head size 4) of
// small integers / 8, made in float64 on the CPU and cast to dtype on `where`.
struct Qkv {
  T q, k, v;
};
Qkv attention_operands(dt_dtype dtype, dt_device where, int64_t k_batch = 2) {
  const int64_t qs[] = {2, 3, 5, 4}, ks[] = {k_batch, 3, 7, 4};
  Qkv r;
  T* dst[3] = {&r.q, &r.k, &r.v};
  for (int t = 0; t < 3; ++t) {
    const int64_t* shape = t == 0 ? qs : ks;
    std::vector<double> vals(static_cast<size_t>(shape[0] * shape[1] * shape[2] * shape[3]));
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<double>(static_cast<int>((i * (7 + 4 * t)) % 17) - 8) / 8;
    T host;
    EXPECT_EQ(dt_tensor_from_data(vals.data(), vals.size() * sizeof(double), shape, 4, DT_FLOAT64, cpu(), host.out()),
              DT_OK);
    EXPECT_EQ(dt_tensor_to(host, where, dtype, DT_TO_COPY, dst[t]->out()), DT_OK);
  }
  return r;
}
std::vector<double> as_doubles(dt_tensor* t) {
  T host;
  EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, DT_TO_COPY, host.out()), DT_OK) << dt_last_error_message();
  return values<double>(host);
}

// A forward autograd does not record, without an explicit mask, is one pass of the
// backend's fused attention (Backend::attention_forward; the test plugin's is a plain
// loop), with the composed ops' values on the CPU; everything else (a dtype the backend
// has no kernel for, an operand that requires grad, a mask, broadcast batch dims) is
// handed back or never offered, and composed as before.
TEST_F(PluginBackend, AttentionWithoutAutogradIsOneFusedPassWhereTheBackendHasOne) {
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64})
    for (int32_t causal : {0, 1}) {
      SCOPED_TRACE(std::string(dtype == DT_FLOAT32 ? "float32" : "float64") + (causal ? ", causal" : ""));
      Qkv c = attention_operands(dtype, cpu()), d = attention_operands(dtype, kDev0);
      T want, got;
      DT_ASSERT_OK(dt_scaled_dot_product_attention(c.q, c.k, c.v, nullptr, causal, want.out()));
      const uint64_t before = plugin_hooks();
      DT_ASSERT_OK(dt_scaled_dot_product_attention(d.q, d.k, d.v, nullptr, causal, got.out()));
      EXPECT_EQ(plugin_hooks() - before, 1u);
      EXPECT_EQ(shape_of(got), (std::vector<int64_t>{2, 3, 5, 4}));
      const std::vector<double> w = as_doubles(want), g = as_doubles(got), v = as_doubles(d.v);
      ASSERT_EQ(w.size(), g.size());
      const double tol = dtype == DT_FLOAT32 ? 2e-6 : 1e-13;
      for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << i;
      if (causal)  // the first query sees only the first key: its row is v's first row
        for (size_t head = 0; head < 6; ++head)
          for (size_t e = 0; e < 4; ++e) EXPECT_NEAR(g[head * 20 + e], v[head * 28 + e], tol) << head << " " << e;
    }

  // Handed back or not offered: no hook pass, the composed ops' values.
  struct Case {
    const char* what;
    dt_dtype dtype;
    bool grad, mask;
    int64_t k_batch;
  };
  for (const Case& k : {Case{"bfloat16 (the plugin has no kernel)", DT_BFLOAT16, false, false, 2},
                        Case{"q requires grad", DT_FLOAT32, true, false, 2},
                        Case{"an explicit mask", DT_FLOAT32, false, true, 2},
                        Case{"k and v broadcast over the batch", DT_FLOAT32, false, false, 1}}) {
    SCOPED_TRACE(k.what);
    Qkv c = attention_operands(k.dtype, cpu(), k.k_batch), d = attention_operands(k.dtype, kDev0, k.k_batch);
    T cmask, dmask;
    if (k.mask) {  // keys 0..3 allowed for every query
      const int64_t ms[] = {5, 7};
      std::vector<uint8_t> allowed(35);
      for (size_t i = 0; i < allowed.size(); ++i) allowed[i] = i % 7 < 4;
      DT_ASSERT_OK(dt_tensor_from_data(allowed.data(), allowed.size(), ms, 2, DT_BOOL, cpu(), cmask.out()));
      DT_ASSERT_OK(dt_tensor_to(cmask, kDev0, DT_DTYPE_DEFAULT, DT_TO_COPY, dmask.out()));
    }
    if (k.grad) DT_ASSERT_OK(dt_tensor_set_requires_grad(d.q, 1));
    T want, got;
    DT_ASSERT_OK(dt_scaled_dot_product_attention(c.q, c.k, c.v, k.mask ? cmask.get() : nullptr, 0, want.out()));
    const uint64_t before = plugin_hooks();
    DT_ASSERT_OK(dt_scaled_dot_product_attention(d.q, d.k, d.v, k.mask ? dmask.get() : nullptr, 0, got.out()));
    EXPECT_EQ(plugin_hooks() - before, 0u);
    T plain;
    DT_ASSERT_OK(dt_tensor_detach(got, plain.out()));
    const std::vector<double> w = as_doubles(want), g = as_doubles(plain);
    ASSERT_EQ(w.size(), g.size());
    const double tol = k.dtype == DT_BFLOAT16 ? 0.0 : 2e-6;  // the same ops on both sides
    for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << i;
    if (k.grad) {  // recorded: the gradient reaches q
      T loss, gq;
      DT_ASSERT_OK(dt_sum(got, nullptr, 0, 0, loss.out()));
      DT_ASSERT_OK(dt_backward(loss, nullptr));
      DT_ASSERT_OK(dt_tensor_grad(d.q, gq.out()));
      EXPECT_EQ(shape_of(gq), (std::vector<int64_t>{2, 3, 5, 4}));
    }
  }
}

TEST_F(PluginBackend, AScalarOperandIsMadeInTheOpsDtypeWithoutACast) {
  // x + 0.5 on a device: the wrapped number is filled in float32 at once (one fill and the
  // add, no copy); an integer tensor's integral scalar keeps the general path (an int64
  // fill, then a cast, as the op's dtype is not floating). Values as on the CPU.
  Stream def;
  DT_ASSERT_OK(dt_stream_default(kDev0, &def.s));
  const float xs[3] = {1, -2, 3.25f};
  const int32_t is[3] = {1, -2, 7};
  const int64_t n = 3;
  T x, xi, y, yi;
  DT_ASSERT_OK(dt_tensor_from_data(xs, sizeof xs, &n, 1, DT_FLOAT32, kDev0, x.out()));
  DT_ASSERT_OK(dt_tensor_from_data(is, sizeof is, &n, 1, DT_INT32, kDev0, xi.out()));
  const Queued q0 = queued_on(def);
  DT_ASSERT_OK(dt_add_scalar(x, 0.5, y.out()));
  const Queued q1 = queued_on(def);
  EXPECT_EQ(q1.ops - q0.ops, 2u) << "the fill and the add";
  EXPECT_EQ(q1.copies - q0.copies, 0u) << "no cast of the scalar";
  EXPECT_EQ(values<float>(y), (std::vector<float>{1.5f, -1.5f, 3.75f}));
  const Queued q2 = queued_on(def);  // after values()'s copy to the host
  DT_ASSERT_OK(dt_mul_scalar(xi, 3, yi.out()));
  const Queued q3 = queued_on(def);
  EXPECT_EQ(q3.copies - q2.copies, 1u) << "int64 -> int32 cast of the scalar";
  EXPECT_EQ(values<int32_t>(yi), (std::vector<int32_t>{3, -6, 21}));
}

// ReLU's gradient is one op on the device (KernelOp::ReluBackward), where the composed
// form made four (a fill for the scalar 0, the comparison, a zero tensor and a where): a
// backward through relu alone, from a given gradient, runs that one op (the leaf adopts
// its gradient). float16 has no fused kernel and composes, with the same values.
TEST_F(PluginBackend, AReluGradientIsOneOpOnTheDevice) {
  const double xv[6] = {-2, -0.5, 0, 0.5, 3, -1e-30}, gv[6] = {1, 2, 3, 4, 5, 6};
  const double want[6] = {0, 0, 0, 4, 5, 0};  // g where relu(x) > 0: x = 0 and a tiny negative give 0
  const int64_t n = 6;
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64, DT_FLOAT16}) {
    SCOPED_TRACE(dt_dtype_name(dtype));
    T x64, g64, x, g, y, gx;
    DT_ASSERT_OK(dt_tensor_from_data(xv, sizeof xv, &n, 1, DT_FLOAT64, cpu(), x64.out()));
    DT_ASSERT_OK(dt_tensor_from_data(gv, sizeof gv, &n, 1, DT_FLOAT64, cpu(), g64.out()));
    DT_ASSERT_OK(dt_tensor_to(x64, kDev0, dtype, DT_TO_COPY, x.out()));
    DT_ASSERT_OK(dt_tensor_to(g64, kDev0, dtype, DT_TO_COPY, g.out()));
    DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
    DT_ASSERT_OK(dt_relu(x, y.out()));
    const uint64_t before = plugin_ops();
    DT_ASSERT_OK(dt_backward(y, g));
    const uint64_t ran = plugin_ops() - before;
    if (dtype == DT_FLOAT16)
      EXPECT_GT(ran, 1u) << "composed";
    else
      EXPECT_EQ(ran, 1u);
    DT_ASSERT_OK(dt_tensor_grad(x, gx.out()));
    T host;
    DT_ASSERT_OK(dt_tensor_to(gx, cpu(), DT_FLOAT64, DT_TO_COPY, host.out()));
    EXPECT_EQ(values<double>(host), std::vector<double>(want, want + 6));
  }
}

// Linear's product and bias are one op on the device (KernelOp::Addmm, cuBLASLt's bias
// epilogue on CUDA), where matmul then add made two: a training step of 16 Linear layers
// has 16 of them. float16 has no fused op and composes, with the values of the CPU's.
TEST_F(PluginBackend, ALinearWithBiasIsOneOpOnTheDevice) {
  DT_ASSERT_OK(dt_manual_seed(3));
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64, DT_FLOAT16}) {
    SCOPED_TRACE(dt_dtype_name(dtype));
    M lin;
    DT_ASSERT_OK(dt_linear_new(5, 3, 1, dtype, cpu(), lin.out()));
    const int64_t xs[] = {4, 5};
    T x, xd, want, got, host;
    DT_ASSERT_OK(dt_tensor_randn(xs, 2, dtype, cpu(), x.out()));
    const dt_tensor* in[] = {x};
    DT_ASSERT_OK(dt_module_forward(lin, in, 1, want.out()));
    DT_ASSERT_OK(dt_module_to(lin, kDev0));
    DT_ASSERT_OK(dt_tensor_to(x, kDev0, DT_DTYPE_DEFAULT, 0, xd.out()));
    const dt_tensor* din[] = {xd};
    const uint64_t before = plugin_ops();
    DT_ASSERT_OK(dt_module_forward(lin, din, 1, got.out()));
    const uint64_t ran = plugin_ops() - before;
    if (dtype == DT_FLOAT16) EXPECT_EQ(ran, 2u) << "the product, then the add";
    else EXPECT_EQ(ran, 1u);
    T got64, want64;
    DT_ASSERT_OK(dt_tensor_detach(got, host.out()));
    DT_ASSERT_OK(dt_tensor_to(host, cpu(), DT_FLOAT64, DT_TO_COPY, got64.out()));
    DT_ASSERT_OK(dt_tensor_to(want, cpu(), DT_FLOAT64, DT_TO_COPY, want64.out()));
    EXPECT_EQ(values<double>(got64), values<double>(want64)) << "the same kernels as the CPU's";
  }
}

// Cross entropy over class indices is one op forward (KernelOp::CrossEntropy) and one
// backward, where the composed form (log_softmax, a gather, masks, sums, a division and
// their gradients) made about twenty: values against a float64 loop here, for each
// reduction and with an ignored sample. Class weights compose (more ops), as before.
TEST_F(PluginBackend, ACrossEntropyIsOneOpEachWayOnTheDevice) {
  const int64_t N = 5, C = 7, xs[] = {N, C}, ts[] = {N};
  std::vector<double> xv(N * C);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(0.7 * static_cast<double>(i)) * 3;
  const int64_t tv[N] = {3, 0, -100, 6, 2};
  for (dt_dtype dtype : {DT_FLOAT32, DT_FLOAT64}) {
    for (int32_t red : {DT_REDUCTION_NONE, DT_REDUCTION_MEAN, DT_REDUCTION_SUM}) {
      SCOPED_TRACE(std::string(dt_dtype_name(dtype)) + " reduction " + std::to_string(red));
      T x64, x, target, loss, total, gx, gx64, out64;
      DT_ASSERT_OK(dt_tensor_from_data(xv.data(), xv.size() * 8, xs, 2, DT_FLOAT64, cpu(), x64.out()));
      DT_ASSERT_OK(dt_tensor_to(x64, kDev0, dtype, DT_TO_COPY, x.out()));
      DT_ASSERT_OK(dt_tensor_from_data(tv, sizeof tv, ts, 1, DT_INT64, kDev0, target.out()));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(x, 1));
      M ce;
      DT_ASSERT_OK(dt_cross_entropy_loss_new(nullptr, red, -100, 0, ce.out()));
      const dt_tensor* in[] = {x, target};
      uint64_t before = plugin_ops();
      DT_ASSERT_OK(dt_module_forward(ce, in, 2, loss.out()));
      EXPECT_EQ(plugin_ops() - before, 1u) << "forward";
      T seed;
      if (red == DT_REDUCTION_NONE) {  // d(sum of the losses) = ones
        DT_ASSERT_OK(dt_tensor_ones(ts, 1, dtype, kDev0, seed.out()));
      } else {
        DT_ASSERT_OK(dt_tensor_ones(nullptr, 0, dtype, kDev0, seed.out()));
      }
      before = plugin_ops();
      DT_ASSERT_OK(dt_backward(loss, seed));
      EXPECT_EQ(plugin_ops() - before, 1u) << "backward";

      // float64 loop: loss_n = logsumexp(x_n) - x_n[t_n]; grad = s * (softmax - onehot)
      std::vector<double> want_loss(N, 0.0), want_grad(N * C, 0.0);
      double sum = 0;
      int kept = 0;
      for (int64_t n = 0; n < N; ++n) {
        if (tv[n] == -100) continue;
        ++kept;
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < C; ++c) m = std::max(m, xv[n * C + c]);
        for (int64_t c = 0; c < C; ++c) s += std::exp(xv[n * C + c] - m);
        want_loss[n] = m + std::log(s) - xv[n * C + tv[n]];
        sum += want_loss[n];
      }
      const double scale = red == DT_REDUCTION_MEAN ? 1.0 / kept : 1.0;
      for (int64_t n = 0; n < N; ++n) {
        if (tv[n] == -100) continue;
        const double lse = want_loss[n] + xv[n * C + tv[n]];
        for (int64_t c = 0; c < C; ++c)
          want_grad[n * C + c] = scale * (std::exp(xv[n * C + c] - lse) - (c == tv[n] ? 1.0 : 0.0));
      }
      const double tol = dtype == DT_FLOAT32 ? 2e-6 : 1e-13;
      T plain;
      DT_ASSERT_OK(dt_tensor_detach(loss, plain.out()));
      DT_ASSERT_OK(dt_tensor_to(plain, cpu(), DT_FLOAT64, DT_TO_COPY, out64.out()));
      const std::vector<double> got = values<double>(out64);
      if (red == DT_REDUCTION_NONE) {
        ASSERT_EQ(got.size(), static_cast<size_t>(N));
        for (int64_t n = 0; n < N; ++n) EXPECT_NEAR(got[n], want_loss[n], tol * (1 + std::fabs(want_loss[n]))) << n;
      } else {
        ASSERT_EQ(got.size(), 1u);
        const double want = red == DT_REDUCTION_MEAN ? sum / kept : sum;
        EXPECT_NEAR(got[0], want, tol * (1 + std::fabs(want)));
      }
      DT_ASSERT_OK(dt_tensor_grad(x, gx.out()));
      DT_ASSERT_OK(dt_tensor_to(gx, cpu(), DT_FLOAT64, DT_TO_COPY, gx64.out()));
      const std::vector<double> g = values<double>(gx64);
      ASSERT_EQ(g.size(), want_grad.size());
      for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want_grad[i], tol) << "grad " << i;
    }
  }
}

// An SGD step over several parameters of one device is one call (KernelOp::SgdStepMulti),
// where it was one per parameter; their values follow the formula (no momentum: p - lr g).
TEST_F(PluginBackend, AnSgdStepOverSeveralParametersIsOneOp) {
  const int64_t s3[] = {3}, s2[] = {2, 2};
  T p1, p2, g1, g2;
  const float v1[3] = {1, 2, 3}, v2[4] = {-1, 0, 1, 2};
  DT_ASSERT_OK(dt_tensor_from_data(v1, sizeof v1, s3, 1, DT_FLOAT32, kDev0, p1.out()));
  DT_ASSERT_OK(dt_tensor_from_data(v2, sizeof v2, s2, 2, DT_FLOAT32, kDev0, p2.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(p1, 1));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(p2, 1));
  T l1, l2, loss;  // loss = sum(p1) + 2 sum(p2): gradients 1 and 2
  DT_ASSERT_OK(dt_sum(p1, nullptr, 0, 0, l1.out()));
  DT_ASSERT_OK(dt_sum(p2, nullptr, 0, 0, l2.out()));
  T l2x2;
  DT_ASSERT_OK(dt_mul_scalar(l2, 2.0, l2x2.out()));
  DT_ASSERT_OK(dt_add(l1, l2x2, loss.out()));
  DT_ASSERT_OK(dt_backward(loss, nullptr));
  Handle<dt_optimizer, dt_optimizer_release> opt;
  const dt_tensor* params[] = {p1, p2};
  DT_ASSERT_OK(dt_sgd_new(params, 2, 0.5, 0.0, 0.0, 0.0, 0, opt.out()));
  const uint64_t before = plugin_ops();
  DT_ASSERT_OK(dt_optimizer_step(opt));
  EXPECT_EQ(plugin_ops() - before, 1u);
  EXPECT_EQ(values<float>(p1), (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(values<float>(p2), (std::vector<float>{-2, -1, 0, 1}));
}

// An Adam, RMSprop or Adagrad step on a backend with KernelOp::AdaptiveStep is one op per
// parameter (its constants travel as a host tensor), and gives the CPU step's bits.
TEST_F(PluginBackend, AnAdaptiveOptimizerStepIsOneOpPerParameter) {
  const int64_t s3[] = {3};
  const float v[3] = {1, -2, 0.5f};
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind);
    std::vector<float> got[2];
    for (int on_plugin = 0; on_plugin < 2; ++on_plugin) {
      const dt_device dev = on_plugin ? kDev0 : cpu();
      T p, sq, loss;
      DT_ASSERT_OK(dt_tensor_from_data(v, sizeof v, s3, 1, DT_FLOAT32, dev, p.out()));
      DT_ASSERT_OK(dt_tensor_set_requires_grad(p, 1));
      DT_ASSERT_OK(dt_mul(p, p, sq.out()));  // gradient 2 p
      DT_ASSERT_OK(dt_sum(sq, nullptr, 0, 0, loss.out()));
      DT_ASSERT_OK(dt_backward(loss, nullptr));
      Handle<dt_optimizer, dt_optimizer_release> opt;
      const dt_tensor* params[] = {p};
      if (kind == 0) DT_ASSERT_OK(dt_adam_new(params, 1, 0.1, 0.9, 0.999, 1e-8, 0.01, 1, opt.out()));
      if (kind == 1) DT_ASSERT_OK(dt_rmsprop_new(params, 1, 0.01, 0.9, 1e-8, 0.1, 0.5, 1, opt.out()));
      if (kind == 2) DT_ASSERT_OK(dt_adagrad_new(params, 1, 0.1, 0.1, 0.0, 0.1, 1e-10, opt.out()));
      for (int step = 0; step < 2; ++step) {
        const uint64_t before = plugin_ops();
        DT_ASSERT_OK(dt_optimizer_step(opt));
        if (on_plugin && step == 1) EXPECT_EQ(plugin_ops() - before, 1u) << "one kernel, its state already there";
      }
      T host;
      DT_ASSERT_OK(dt_tensor_to(p, cpu(), DT_FLOAT32, DT_TO_COPY, host.out()));
      got[on_plugin] = values<float>(host);
    }
    EXPECT_EQ(got[1], got[0]);
    EXPECT_NE(got[0], std::vector<float>(v, v + 3)) << "the step moved the parameter";
  }
}

// Eval-mode batch norm is one op on the device (KernelOp::BatchNormEval), where the
// unfused form made seven: a forward of ResNet-18 has twenty of them.
TEST_F(PluginBackend, AnEvalBatchNormIsOneOpOnTheDevice) {
  const int64_t xs[] = {2, 3, 2, 2}, cs[] = {3};
  const float mean_v[3] = {0.5f, -1.0f, 2.0f}, var_v[3] = {1.0f, 4.0f, 0.25f}, w_v[3] = {2.0f, 1.0f, -1.0f},
              b_v[3] = {0.0f, 1.0f, 3.0f};
  std::vector<float> xv(24);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i) - 10.0f;
  T x, mean, var, w, b, y;
  DT_ASSERT_OK(dt_tensor_from_data(xv.data(), xv.size() * sizeof(float), xs, 4, DT_FLOAT32, kDev0, x.out()));
  DT_ASSERT_OK(dt_tensor_from_data(mean_v, sizeof mean_v, cs, 1, DT_FLOAT32, kDev0, mean.out()));
  DT_ASSERT_OK(dt_tensor_from_data(var_v, sizeof var_v, cs, 1, DT_FLOAT32, kDev0, var.out()));
  DT_ASSERT_OK(dt_tensor_from_data(w_v, sizeof w_v, cs, 1, DT_FLOAT32, kDev0, w.out()));
  DT_ASSERT_OK(dt_tensor_from_data(b_v, sizeof b_v, cs, 1, DT_FLOAT32, kDev0, b.out()));
  const uint64_t before = plugin_ops();
  DT_ASSERT_OK(dt_batch_norm(x, mean, var, w, b, 0, 0.1, 1e-5, y.out()));
  EXPECT_EQ(plugin_ops() - before, 1u);
  const std::vector<float> got = values<float>(y);
  for (size_t i = 0; i < got.size(); ++i) {
    const size_t c = (i / 4) % 3;  // (x - mean) / sqrt(var + eps) * w + b
    const double want = (xv[i] - mean_v[c]) / std::sqrt(var_v[c] + 1e-5) * w_v[c] + b_v[c];
    EXPECT_NEAR(got[i], want, 1e-5 * (1 + std::fabs(want))) << i;
  }
}

TEST_F(PluginBackend, AGlooProcessGroupRefusesItsTensorsNamingTheDevice) {
  // A process group of one rank (a store file of its own): Gloo works on host memory, so
  // a tensor of another device is DT_ERR_DEVICE_MISMATCH before any byte moves, as a CUDA
  // tensor would be; the group stays usable.
  const std::string init = "file:///tmp/dt-plugin-pg-" + std::to_string(getpid());
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("gloo", init.c_str(), 0, 1, 10000, &pg));
  const int64_t shape[] = {4};
  T on_host, on_dev;
  DT_ASSERT_OK(dt_tensor_ones(shape, 1, DT_FLOAT32, cpu(), on_host.out()));
  DT_ASSERT_OK(dt_tensor_to(on_host, kDev0, DT_DTYPE_DEFAULT, 0, on_dev.out()));
  DT_EXPECT_STATUS(dt_all_reduce_(pg, on_dev, DT_REDUCE_SUM), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("t is on testdev:0 but a \"gloo\" process group works on cpu tensors"),
            std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_broadcast_(pg, on_dev, 0), DT_ERR_DEVICE_MISMATCH);
  DT_EXPECT_STATUS(dt_all_gather(pg, on_host, on_dev), DT_ERR_DEVICE_MISMATCH);
  DT_ASSERT_OK(dt_all_reduce_(pg, on_host, DT_REDUCE_SUM));
  DT_ASSERT_OK(dt_barrier(pg));
  DT_ASSERT_OK(dt_process_group_release(pg));
}

// ---- collectives: the plugin's "testcoll" library (tests/plugin/test_collectives.cpp)
// stands where NCCL stands for CUDA, so that the core's device-collective paths run here.

// {collectives run, waits, live communicators, groups started} in the plugin.
struct CollCounts {
  uint64_t runs, waits, comms, groups;
};
CollCounts coll_counts() {
  auto counts = reinterpret_cast<void (*)(uint64_t*)>(plugin_symbol("devtensor_test_backend_coll_counts"));
  uint64_t c[4] = {};
  if (counts) counts(c);
  return CollCounts{c[0], c[1], c[2], c[3]};
}

std::string store_file(const char* what) {
  return "file:///tmp/dt-plugin-" + std::string(what) + "-" + std::to_string(getpid());
}

std::string backend_of(const dt_process_group* pg) {
  char buf[64] = {};
  EXPECT_EQ(dt_process_group_backend(pg, buf, sizeof buf, nullptr), DT_OK) << dt_last_error_message();
  return buf;
}

TEST_F(PluginBackend, AProcessGroupRunsItsTensorsThroughThePluginsCollectives) {
  // Backend "": Gloo for host tensors, the plugin's library for its own. A group of one
  // process: every collective gives back the rank's own values, through the plugin.
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("", store_file("both").c_str(), 0, 1, 10000, &pg));
  const bool nccl = has(build_info_text(), "\nnccl: usable");  // a GPU machine's CUDA plugin joins in
  EXPECT_EQ(backend_of(pg), nccl ? "gloo,nccl,testcoll" : "gloo,testcoll");
  const CollCounts before = coll_counts();
  const float xs[6] = {1, -2, 3.5f, 4, 0.25f, -6};
  const int64_t shape[] = {2, 3}, flat[] = {6}, gathered[] = {1, 6};
  T x, t, g, rs, host;
  DT_ASSERT_OK(dt_tensor_from_data(xs, sizeof xs, shape, 2, DT_FLOAT32, kDev0, x.out()));
  DT_ASSERT_OK(dt_transpose(x, 0, 1, t.out()));  // not contiguous: reduced through a copy
  DT_ASSERT_OK(dt_all_reduce_(pg, t, DT_REDUCE_SUM));
  DT_ASSERT_OK(dt_all_reduce_(pg, x, DT_REDUCE_AVG));
  DT_ASSERT_OK(dt_broadcast_(pg, x, 0));
  EXPECT_EQ(values<float>(x), std::vector<float>(xs, xs + 6));
  DT_ASSERT_OK(dt_tensor_zeros(gathered, 2, DT_FLOAT32, kDev0, g.out()));
  DT_ASSERT_OK(dt_all_gather(pg, x, g));
  EXPECT_EQ(values<float>(g), std::vector<float>(xs, xs + 6));
  DT_ASSERT_OK(dt_tensor_zeros(flat, 1, DT_FLOAT32, kDev0, rs.out()));
  DT_ASSERT_OK(dt_reduce_scatter(pg, x, rs, DT_REDUCE_MAX));
  EXPECT_EQ(values<float>(rs), std::vector<float>(xs, xs + 6));
  const CollCounts after = coll_counts();
  EXPECT_EQ(after.runs - before.runs, 5u) << "every device collective goes through the plugin";
  EXPECT_EQ(after.waits - before.waits, 5u) << "and is waited for";
  EXPECT_EQ(after.comms - before.comms, 1u) << "one communicator for testdev:0, made at the first collective";
  // Host tensors still go to Gloo; an output on another device is refused.
  DT_ASSERT_OK(dt_tensor_ones(shape, 2, DT_FLOAT32, cpu(), host.out()));
  DT_ASSERT_OK(dt_all_reduce_(pg, host, DT_REDUCE_SUM));
  EXPECT_EQ(coll_counts().runs, after.runs);
  T other;
  DT_ASSERT_OK(dt_tensor_zeros(gathered, 2, DT_FLOAT32, kDev1, other.out()));
  DT_EXPECT_STATUS(dt_all_gather(pg, x, other), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("output is on testdev:1 but input is on testdev:0"), std::string::npos)
      << dt_last_error_message();
  DT_ASSERT_OK(dt_barrier(pg));
  DT_ASSERT_OK(dt_process_group_release(pg));
  EXPECT_EQ(coll_counts().comms, before.comms) << "releasing the group frees its communicators";
}

TEST_F(PluginBackend, AGroupOfThePluginsLibraryTakesOnlyItsTensors) {
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("testcoll", store_file("only").c_str(), 0, 1, 10000, &pg));
  EXPECT_EQ(backend_of(pg), "testcoll");
  const int64_t n = 3;
  T host, dev;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_INT16, cpu(), host.out()));
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_INT16, kDev1, dev.out()));
  DT_EXPECT_STATUS(dt_all_reduce_(pg, host, DT_REDUCE_SUM), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message())
                .find("t is on cpu:0 but a \"testcoll\" process group works on testdev tensors"),
            std::string::npos)
      << dt_last_error_message();
  DT_ASSERT_OK(dt_all_reduce_(pg, dev, DT_REDUCE_SUM));
  EXPECT_EQ(values<int16_t>(dev), std::vector<int16_t>(3, 1));
  DT_ASSERT_OK(dt_barrier(pg));  // runs on the group's Gloo connections
  DT_ASSERT_OK(dt_process_group_release(pg));

  // A library that does not load here is NOT_SUPPORTED, saying why.
  setenv("DEVTENSOR_TESTCOLL_UNUSABLE", "1", 1);
  DT_EXPECT_STATUS(dt_process_group_new("testcoll", store_file("off").c_str(), 0, 1, 10000, &pg),
                   DT_ERR_NOT_SUPPORTED);
  EXPECT_NE(std::string(dt_last_error_message()).find("switched off by DEVTENSOR_TESTCOLL_UNUSABLE"), std::string::npos)
      << dt_last_error_message();
  unsetenv("DEVTENSOR_TESTCOLL_UNUSABLE");
}

TEST_F(PluginBackend, AFailedDeviceCollectiveBreaksTheGroupAndLeaksNothing) {
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("", store_file("fail").c_str(), 0, 1, 10000, &pg));
  const CollCounts before = coll_counts();
  const int64_t n = 4;
  T dev, host;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev0, dev.out()));
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu(), host.out()));
  DT_ASSERT_OK(dt_all_reduce_(pg, dev, DT_REDUCE_SUM));
  setenv("DEVTENSOR_TESTCOLL_FAIL_AT", std::to_string(coll_counts().runs + 1).c_str(), 1);
  DT_EXPECT_STATUS(dt_all_reduce_(pg, dev, DT_REDUCE_SUM), DT_ERR_DISTRIBUTED);
  unsetenv("DEVTENSOR_TESTCOLL_FAIL_AT");
  EXPECT_NE(std::string(dt_last_error_message()).find("injected failure"), std::string::npos) << dt_last_error_message();
  // Unusable from then on, for every engine, saying why.
  DT_EXPECT_STATUS(dt_all_reduce_(pg, host, DT_REDUCE_SUM), DT_ERR_DISTRIBUTED);
  EXPECT_NE(std::string(dt_last_error_message()).find("unusable after an earlier failure"), std::string::npos)
      << dt_last_error_message();
  EXPECT_EQ(coll_counts().comms, before.comms) << "the failed communicator was aborted and freed";
  DT_ASSERT_OK(dt_process_group_release(pg));
}

// Trains lin (a Linear(3, 2) on testdev:0) for 4 SGD steps on fixed data, running
// forward through model (lin itself or a wrapper around it); returns the losses.
std::vector<float> train_four_steps(dt_module* model, dt_module* lin) {
  std::vector<float> losses;
  M mse;
  EXPECT_EQ(dt_mse_loss_new(DT_REDUCTION_MEAN, mse.out()), DT_OK);
  T w, b;
  EXPECT_EQ(dt_module_parameter(lin, 0, nullptr, 0, nullptr, w.out()), DT_OK);
  EXPECT_EQ(dt_module_parameter(lin, 1, nullptr, 0, nullptr, b.out()), DT_OK);
  const dt_tensor* params[] = {w, b};
  dt_optimizer* opt = nullptr;
  EXPECT_EQ(dt_sgd_new(params, 2, 0.1, 0.0, 0.0, 0.0, 0, &opt), DT_OK) << dt_last_error_message();
  const float xs[12] = {1, 2, 3, -1, 0, 1, 2, 2, -2, 0.5f, 0.5f, 0.5f};
  const float ys[8] = {1, 0, 0, 1, 1, 1, -1, 0};
  const int64_t xshape[] = {4, 3}, yshape[] = {4, 2};
  T x, y;
  EXPECT_EQ(dt_tensor_from_data(xs, sizeof xs, xshape, 2, DT_FLOAT32, kDev0, x.out()), DT_OK);
  EXPECT_EQ(dt_tensor_from_data(ys, sizeof ys, yshape, 2, DT_FLOAT32, kDev0, y.out()), DT_OK);
  for (int step = 0; step < 4; ++step) {
    T out, loss;
    const dt_tensor* in[] = {x};
    const dt_tensor* pair[2] = {nullptr, y};
    double v = 0;
    dt_status st = dt_module_forward(model, in, 1, out.out());
    pair[0] = out;
    if (st == DT_OK) st = dt_module_forward(mse, pair, 2, loss.out());
    if (st == DT_OK) st = dt_tensor_item(loss, &v);
    if (st == DT_OK) st = dt_backward(loss, nullptr);
    if (st == DT_OK) st = dt_optimizer_step(opt);
    if (st == DT_OK) st = dt_optimizer_zero_grad(opt);
    EXPECT_EQ(st, DT_OK) << dt_last_error_message();
    if (st != DT_OK) break;
    losses.push_back(static_cast<float>(v));
  }
  dt_optimizer_release(opt);
  return losses;
}

M linear_on_testdev(uint64_t seed) {
  M lin;
  EXPECT_EQ(dt_manual_seed(seed), DT_OK);
  EXPECT_EQ(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(), lin.out()), DT_OK);
  EXPECT_EQ(dt_module_to(lin, kDev0), DT_OK);
  return lin;
}

TEST_F(PluginBackend, DistributedDataParallelTrainsOnItLikeThePlainModule) {
  // One rank: DDP's averaged gradients are the plain ones, reduced through the plugin.
  M plain = linear_on_testdev(9), wrapped = linear_on_testdev(9), ddp;
  const uint64_t before_plain = coll_counts().runs;
  const std::vector<float> expected = train_four_steps(plain, plain);
  EXPECT_EQ(coll_counts().runs, before_plain);
  dt_process_group* pg = nullptr;
  DT_ASSERT_OK(dt_process_group_new("testcoll", store_file("ddp").c_str(), 0, 1, 10000, &pg));
  DT_ASSERT_OK(dt_distributed_data_parallel_new(wrapped, pg, 0, 0, ddp.out()));
  const uint64_t before = coll_counts().runs;
  const std::vector<float> got = train_four_steps(ddp, wrapped);
  EXPECT_EQ(coll_counts().runs - before, 4u) << "one bucket all-reduced per backward";
  DT_ASSERT_OK(dt_process_group_release(pg));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got, expected);
  EXPECT_LT(got.back(), got.front());
}

TEST_F(PluginBackend, DataParallelRefreshesItsReplicasWithOneGroupedBroadcast) {
  // DataParallel over testdev:0 and testdev:1: after each optimizer step the replica's
  // parameters are overwritten by the plugin's broadcast (a group of 2 devices x 2
  // tensors), and training equals the plain module's.
  M plain = linear_on_testdev(11), wrapped = linear_on_testdev(11);
  const std::vector<float> expected = train_four_steps(plain, plain);
  const dt_device both[] = {kDev0, kDev1};
  const CollCounts start = coll_counts();
  std::vector<float> got;
  CollCounts end{};
  {
    M dp;
    DT_ASSERT_OK(dt_data_parallel_new(wrapped, both, 2, kDev0, dp.out()));
    got = train_four_steps(dp, wrapped);
    end = coll_counts();
  }
  ASSERT_EQ(got.size(), 4u);
  for (size_t step = 0; step < 4; ++step) EXPECT_NEAR(expected[step], got[step], 1e-6) << "step " << step;
  EXPECT_LT(got.back(), got.front());
  // Step 0 makes the replica by copies; steps 1-3 refresh it: 3 groups of 2 x 2 broadcasts.
  EXPECT_EQ(end.groups - start.groups, 3u);
  EXPECT_EQ(end.runs - start.runs, 12u);
  EXPECT_EQ(end.comms - start.comms, 2u) << "one communicator per device";
  EXPECT_EQ(coll_counts().comms, start.comms) << "the DataParallel's communicators die with it";
}

TEST_F(PluginBackend, AModuleTrainsOnIt) {
  // forward, loss, backward and an SGD step, all on testdev:0, agree with cpu:0.
  std::vector<float> losses[2];
  for (int run = 0; run < 2; ++run) {
    const dt_device dev = run == 0 ? cpu() : kDev0;
    DT_ASSERT_OK(dt_manual_seed(5));
    M lin, mse;
    DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(), lin.out()));
    DT_ASSERT_OK(dt_module_to(lin, dev));
    DT_ASSERT_OK(dt_mse_loss_new(DT_REDUCTION_MEAN, mse.out()));
    T w, b;
    DT_ASSERT_OK(dt_module_parameter(lin, 0, nullptr, 0, nullptr, w.out()));
    DT_ASSERT_OK(dt_module_parameter(lin, 1, nullptr, 0, nullptr, b.out()));
    const dt_tensor* params[] = {w, b};
    dt_optimizer* opt = nullptr;
    DT_ASSERT_OK(dt_sgd_new(params, 2, 0.1, 0.0, 0.0, 0.0, 0, &opt));
    const float xs[12] = {1, 2, 3, -1, 0, 1, 2, 2, -2, 0.5f, 0.5f, 0.5f};
    const float ys[8] = {1, 0, 0, 1, 1, 1, -1, 0};
    const int64_t xshape[] = {4, 3}, yshape[] = {4, 2};
    T x, y;
    DT_ASSERT_OK(dt_tensor_from_data(xs, sizeof xs, xshape, 2, DT_FLOAT32, dev, x.out()));
    DT_ASSERT_OK(dt_tensor_from_data(ys, sizeof ys, yshape, 2, DT_FLOAT32, dev, y.out()));
    for (int step = 0; step < 5; ++step) {
      T out, loss;
      const dt_tensor* in[] = {x};
      DT_ASSERT_OK(dt_module_forward(lin, in, 1, out.out()));
      const dt_tensor* pair[] = {out, y};
      DT_ASSERT_OK(dt_module_forward(mse, pair, 2, loss.out()));
      double v = 0;
      DT_ASSERT_OK(dt_tensor_item(loss, &v));
      losses[run].push_back(static_cast<float>(v));
      DT_ASSERT_OK(dt_backward(loss, nullptr));
      DT_ASSERT_OK(dt_optimizer_step(opt));
      DT_ASSERT_OK(dt_optimizer_zero_grad(opt));
    }
    DT_ASSERT_OK(dt_optimizer_release(opt));
  }
  EXPECT_EQ(losses[0], losses[1]) << "training on the plugin device differs from the CPU";
  EXPECT_LT(losses[1].back(), losses[1].front());
}

TEST_F(PluginBackend, DlpackExportsItsDeviceType) {
  const int64_t n = 4;
  T t;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev1, t.out()));
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(t, &m));
  EXPECT_EQ(static_cast<int32_t>(m->dl_tensor.device.device_type), kTestDev);
  EXPECT_EQ(m->dl_tensor.device.device_id, 1);
  T back;
  DT_ASSERT_OK(dt_tensor_from_dlpack(m, back.out()));  // devtensor's codes are DLPack's
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(back, &d));
  EXPECT_EQ(d.type, kTestDev);
  EXPECT_EQ(d.index, 1);
}

// ---- streams and events through the plugin's own slots (it counts what each got)

// A graph on a backend with streams of its own: capture queues nothing (the plugin sees
// no op), another thread's work meanwhile runs on the default stream, and each replay
// queues the recorded op on the stream current in the replaying thread.
TEST_F(PluginBackend, AGraphRecordsWithoutQueuingAndReplaysOnTheCallersStream) {
  Stream def, capture, other, previous, ignored;
  DT_ASSERT_OK(dt_stream_default(kDev0, &def.s));
  DT_ASSERT_OK(dt_stream_create(kDev0, &capture.s));
  DT_ASSERT_OK(dt_stream_create(kDev0, &other.s));
  const float host[3] = {1, 2, 3};
  const int64_t n = 3;
  T a, b, c;
  DT_ASSERT_OK(dt_tensor_from_data(host, sizeof host, &n, 1, DT_FLOAT32, kDev0, a.out()));
  const uint64_t ops0 = plugin_ops();
  const Queued def0 = queued_on(def), cap0 = queued_on(capture);
  DT_ASSERT_OK(dt_graph_capture_begin(capture));
  DT_ASSERT_OK(dt_add(a, a, b.out()));
  std::thread([&] { EXPECT_EQ(dt_mul(a, a, c.out()), DT_OK) << dt_last_error_message(); }).join();
  dt_graph* g = nullptr;
  DT_ASSERT_OK(dt_graph_capture_end(capture, &g));
  EXPECT_EQ(plugin_ops() - ops0, 1u) << "only the other thread's multiplication ran";
  EXPECT_EQ(queued_on(capture).ops - cap0.ops, 0u);
  EXPECT_EQ(queued_on(def).ops - def0.ops, 1u);
  EXPECT_EQ(values<float>(c), (std::vector<float>{1, 4, 9}));

  const Queued other0 = queued_on(other), def1 = queued_on(def);
  DT_ASSERT_OK(dt_set_thread_stream(other, &previous.s));
  DT_ASSERT_OK(dt_graph_replay(g));
  DT_ASSERT_OK(dt_graph_replay(g));
  DT_ASSERT_OK(dt_set_thread_stream(previous, &ignored.s));
  EXPECT_EQ(queued_on(other).ops - other0.ops, 2u) << "both replays on the replaying thread's stream";
  EXPECT_EQ(queued_on(capture).ops - cap0.ops, 0u);
  EXPECT_EQ(queued_on(def).ops - def1.ops, 0u);
  EXPECT_EQ(values<float>(b), (std::vector<float>{2, 4, 6}));
  DT_ASSERT_OK(dt_graph_release(g));
}

// The plugin's native graphs: {alive, launched}.
std::pair<int64_t, int64_t> plugin_graphs() {
  auto count = reinterpret_cast<void (*)(int64_t*)>(plugin_symbol("devtensor_test_backend_graphs"));
  int64_t c[2] = {};
  if (count) count(c);
  return {c[0], c[1]};
}

// A small piece of work captured on testdev:0: y = relu(conv2d(x, w) + 1) with the
// convolution's library pass, whose hook the plugin hands back while recording (the core
// records its own im2col and product for it), and z = y as float64.
struct CapturedConv {
  T x, w, y, z;
  dt_graph* g = nullptr;
  ~CapturedConv() { dt_graph_release(g); }
  void capture() {
    const int64_t xs[] = {1, 2, 5, 5}, ws[] = {3, 2, 3, 3};
    DT_ASSERT_OK(dt_manual_seed(11));
    DT_ASSERT_OK(dt_tensor_randn(xs, 4, DT_FLOAT32, kDev0, x.out()));
    DT_ASSERT_OK(dt_tensor_randn(ws, 4, DT_FLOAT32, kDev0, w.out()));
    Stream capture;
    DT_ASSERT_OK(dt_stream_create(kDev0, &capture.s));
    DT_ASSERT_OK(dt_graph_capture_begin(capture));
    T c, c1;
    const int64_t one[] = {1, 1}, none[] = {0, 0};
    DT_ASSERT_OK(dt_conv2d(x, w, nullptr, one, none, one, 1, c.out()));
    DT_ASSERT_OK(dt_add_scalar(c, 1.0, c1.out()));
    DT_ASSERT_OK(dt_relu(c1, y.out()));
    DT_ASSERT_OK(dt_tensor_to(y, kDev0, DT_FLOAT64, DT_TO_COPY, z.out()));
    DT_ASSERT_OK(dt_graph_capture_end(capture, &g));
  }
  // The same work run eagerly on new values of x, on the CPU (host values).
  std::vector<float> expected() {
    T xc, wc, c, c1, r;
    const int64_t one[] = {1, 1}, none[] = {0, 0};
    EXPECT_EQ(dt_tensor_to(x, cpu(), DT_DTYPE_DEFAULT, DT_TO_COPY, xc.out()), DT_OK);
    EXPECT_EQ(dt_tensor_to(w, cpu(), DT_DTYPE_DEFAULT, DT_TO_COPY, wc.out()), DT_OK);
    EXPECT_EQ(dt_conv2d(xc, wc, nullptr, one, none, one, 1, c.out()), DT_OK);
    EXPECT_EQ(dt_add_scalar(c, 1.0, c1.out()), DT_OK);
    EXPECT_EQ(dt_relu(c1, r.out()), DT_OK);
    return values<float>(r);
  }
};

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
}

// The first replay records the steps once as the plugin's native graph; every replay is
// then one launch on the replaying thread's stream, with the eager results, and the
// native graph goes when the dt_graph does.
TEST_F(PluginBackend, AGraphReplaysAsOneNativeLaunchOfItsRecordedWork) {
  const auto [alive0, launched0] = plugin_graphs();
  {
    CapturedConv w;
    w.capture();
    for (int replay = 1; replay <= 3; ++replay) {
      std::vector<float> fresh(50);
      for (size_t i = 0; i < fresh.size(); ++i) fresh[i] = std::sin(0.7f * static_cast<float>(i * replay));
      DT_ASSERT_OK(dt_tensor_copy_from_host(w.x, fresh.data(), fresh.size() * sizeof(float)));
      const uint64_t hooks = plugin_hooks();
      DT_ASSERT_OK(dt_graph_replay(w.g));
      EXPECT_EQ(plugin_hooks(), hooks) << "the recorded work has the core's own convolution ops";
      EXPECT_EQ(plugin_graphs().first, alive0 + 1);
      EXPECT_EQ(plugin_graphs().second, launched0 + replay);
      const std::vector<float> want = w.expected();
      expect_near(values<float>(w.y), want);
      const std::vector<float> y = values<float>(w.y);
      EXPECT_EQ(values<double>(w.z), std::vector<double>(y.begin(), y.end())) << "the recorded copy ran after its op";
    }
  }
  EXPECT_EQ(plugin_graphs().first, alive0) << "the native graph was not destroyed with its dt_graph";
}

// A step the plugin cannot record ends the recording: what the plugin made of the
// unfinished work is destroyed (nothing leaks), the graph replays step by step with the
// same results, and the thread is back on its own stream.
TEST_F(PluginBackend, AStepThatCannotBeRecordedLeavesNoNativeGraphAndTheReplayStepByStep) {
  const auto [alive0, launched0] = plugin_graphs();
  CapturedConv w;
  w.capture();
  Stream mine, previous, ignored, now;
  DT_ASSERT_OK(dt_stream_create(kDev0, &mine.s));
  DT_ASSERT_OK(dt_set_thread_stream(mine, &previous.s));
  reinterpret_cast<void (*)()>(plugin_symbol("devtensor_test_backend_fail_next_recorded_op"))();
  const Queued before = queued_on(mine);
  DT_ASSERT_OK(dt_graph_replay(w.g));
  DT_ASSERT_OK(dt_graph_replay(w.g));
  EXPECT_EQ(plugin_graphs().first, alive0) << "the unfinished native graph leaked";
  EXPECT_EQ(plugin_graphs().second, launched0);
  EXPECT_GT(queued_on(mine).ops - before.ops, 0u) << "the steps ran on the thread's stream";
  DT_ASSERT_OK(dt_thread_stream(kDev0, &now.s));
  void *native_now = nullptr, *native_mine = nullptr;
  DT_ASSERT_OK(dt_stream_native_handle(now, &native_now));
  DT_ASSERT_OK(dt_stream_native_handle(mine, &native_mine));
  EXPECT_EQ(native_now, native_mine) << "the thread did not get its stream back after the recording";
  expect_near(values<float>(w.y), w.expected());
  DT_ASSERT_OK(dt_set_thread_stream(previous, &ignored.s));
}

// A ResNet-style head on the device captures into a graph: max pooling reduces its
// windows view, and adaptive average pooling to a size that divides the input is a mean
// over blocks (no averaging matrices from the host). A size that does not divide the
// input still needs them: refused during the capture with a message that says so.
TEST_F(PluginBackend, PoolingCapturesIntoAGraphOnItWhereItNeedsNoHostCopy) {
  const int64_t xs[] = {1, 2, 4, 4}, k[] = {2, 2}, one[] = {1, 1}, uneven[] = {3, 3};
  std::vector<float> xv(32);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7) % 11);
  T x, pooled, head, refused;
  DT_ASSERT_OK(dt_tensor_from_data(xv.data(), xv.size() * sizeof(float), xs, 4, DT_FLOAT32, kDev0, x.out()));
  Stream capture;
  DT_ASSERT_OK(dt_stream_create(kDev0, &capture.s));
  DT_ASSERT_OK(dt_graph_capture_begin(capture));
  DT_ASSERT_OK(dt_max_pool2d(x, k, k, nullptr, nullptr, 0, pooled.out()));  // [1, 2, 2, 2]
  DT_ASSERT_OK(dt_adaptive_avg_pool2d(pooled, one, head.out()));            // [1, 2, 1, 1]
  DT_EXPECT_STATUS(dt_adaptive_avg_pool2d(x, uneven, refused.out()), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "does not divide the input's 4x4")) << dt_last_error_message();
  dt_graph* g = nullptr;
  DT_ASSERT_OK(dt_graph_capture_end(capture, &g));
  DT_ASSERT_OK(dt_graph_replay(g));
  // By hand: the 2x2 windows' maxima of each plane, then their mean.
  std::vector<float> want;
  for (int c = 0; c < 2; ++c) {
    float sum = 0;
    for (int wy = 0; wy < 2; ++wy)
      for (int wx = 0; wx < 2; ++wx) {
        float m = -1;
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) m = std::max(m, xv[static_cast<size_t>(c * 16 + (2 * wy + dy) * 4 + 2 * wx + dx)]);
        sum += m;
      }
    want.push_back(sum / 4);
  }
  EXPECT_EQ(values<float>(head), want);
  DT_ASSERT_OK(dt_graph_release(g));
}

// Triangle masks (tril, triu, causal attention) are made on the device, so they capture
// into a graph there too (they used to be copied from the host, which a capture refuses).
TEST_F(PluginBackend, TriangleMasksCaptureIntoAGraphOnIt) {
  const int64_t xs[] = {3, 4};
  const float xv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  T x, lower, upper;
  DT_ASSERT_OK(dt_tensor_from_data(xv, sizeof xv, xs, 2, DT_FLOAT32, kDev0, x.out()));
  Stream capture;
  DT_ASSERT_OK(dt_stream_create(kDev0, &capture.s));
  DT_ASSERT_OK(dt_graph_capture_begin(capture));
  DT_ASSERT_OK(dt_tril(x, 0, lower.out()));
  DT_ASSERT_OK(dt_triu(x, 1, upper.out()));
  dt_graph* g = nullptr;
  DT_ASSERT_OK(dt_graph_capture_end(capture, &g));
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(lower), (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(values<float>(upper), (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  DT_ASSERT_OK(dt_graph_release(g));
}

// DEVTENSOR_NATIVE_GRAPHS=0 (read at a graph's first replay) keeps replays step by step.
TEST_F(PluginBackend, NativeGraphsCanBeTurnedOff) {
  const auto [alive0, launched0] = plugin_graphs();
  CapturedConv w;
  w.capture();
  setenv("DEVTENSOR_NATIVE_GRAPHS", "0", 1);
  const dt_status s = dt_graph_replay(w.g);
  unsetenv("DEVTENSOR_NATIVE_GRAPHS");
  DT_ASSERT_OK(s);
  DT_ASSERT_OK(dt_graph_replay(w.g));
  EXPECT_EQ(plugin_graphs(), std::make_pair(alive0, launched0));
  expect_near(values<float>(w.y), w.expected());
}

TEST_F(PluginBackend, OpsAllocationsAndCopiesGoToTheThreadsStream) {
  Stream def, user, previous, ignored;
  DT_ASSERT_OK(dt_stream_default(kDev0, &def.s));
  DT_ASSERT_OK(dt_stream_create(kDev0, &user.s));
  void* native = nullptr;
  DT_ASSERT_OK(dt_stream_native_handle(user, &native));
  EXPECT_NE(native, nullptr) << "the plugin's own stream";
  DT_ASSERT_OK(dt_stream_native_handle(def, &native));
  EXPECT_NE(native, nullptr) << "the plugin's default stream";
  const Queued def0 = queued_on(def), user0 = queued_on(user);
  const float host[3] = {1, 2, 3};
  const int64_t n = 3;
  T a, b, c;
  DT_ASSERT_OK(dt_set_thread_stream(user, &previous.s));
  DT_ASSERT_OK(dt_tensor_from_data(host, sizeof host, &n, 1, DT_FLOAT32, kDev0, a.out()));  // 1 allocation, 1 copy
  DT_ASSERT_OK(dt_add(a, a, b.out()));                                                       // 1 allocation, 1 op
  // Another thread's work on the same device still goes to the default stream.
  std::thread([&] { EXPECT_EQ(dt_mul(a, a, c.out()), DT_OK) << dt_last_error_message(); }).join();
  DT_ASSERT_OK(dt_set_thread_stream(previous, &ignored.s));
  const Queued def1 = queued_on(def), user1 = queued_on(user);
  EXPECT_EQ(user1.allocations - user0.allocations, 2u);
  EXPECT_EQ(user1.copies - user0.copies, 1u);
  EXPECT_EQ(user1.ops - user0.ops, 1u);
  EXPECT_EQ(def1.ops - def0.ops, 1u) << "the other thread's op";
  EXPECT_EQ(def1.allocations - def0.allocations, 1u);
  EXPECT_EQ(values<float>(b), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(values<float>(c), (std::vector<float>{1, 4, 9}));
  // Memory is freed on the stream it came from, whichever stream is current then, and
  // the stream lives on for it after its handle is gone.
  dt_stream* raw = user.s;
  DT_ASSERT_OK(dt_stream_retain(raw));
  a.out();
  b.out();
  EXPECT_EQ(queued_on(user).frees - user0.frees, 2u);
  DT_ASSERT_OK(dt_stream_release(raw));
}

TEST_F(PluginBackend, RecordStreamMakesTheFreeWaitForTheOtherStream) {
  Stream def, user;
  DT_ASSERT_OK(dt_stream_default(kDev0, &def.s));
  DT_ASSERT_OK(dt_stream_create(kDev0, &user.s));
  const int64_t n = 8;
  T x;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev0, x.out()));  // on the default stream
  DT_ASSERT_OK(dt_tensor_record_stream(x, user));
  DT_ASSERT_OK(dt_tensor_record_stream(x, user));  // twice is once
  DT_ASSERT_OK(dt_tensor_record_stream(x, def));   // its own stream: nothing to do
  const Queued def0 = queued_on(def), user0 = queued_on(user);
  x.out();
  const Queued def1 = queued_on(def), user1 = queued_on(user);
  EXPECT_EQ(user1.records - user0.records, 1u) << "an event marks the other stream's work";
  EXPECT_EQ(def1.waits - def0.waits, 1u) << "the allocating stream waits for it";
  EXPECT_EQ(def1.frees - def0.frees, 1u) << "then frees";
  // A stream of the other device is refused.
  Stream other;
  DT_ASSERT_OK(dt_stream_create(kDev1, &other.s));
  T y;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev0, y.out()));
  DT_EXPECT_STATUS(dt_tensor_record_stream(y, other), DT_ERR_DEVICE_MISMATCH);
}

TEST_F(PluginBackend, EventsRecordWaitAndTimeThroughThePlugin) {
  Stream s0, s1, t1;
  Event start, end;
  DT_ASSERT_OK(dt_stream_create(kDev0, &s0.s));
  DT_ASSERT_OK(dt_stream_create(kDev1, &s1.s));
  DT_ASSERT_OK(dt_stream_create(kDev1, &t1.s));
  DT_ASSERT_OK(dt_event_create(kDev0, &start.e));
  DT_ASSERT_OK(dt_event_create(kDev0, &end.e));
  DT_ASSERT_OK(dt_event_record(start, s0));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  DT_ASSERT_OK(dt_event_record(end, s0));
  EXPECT_EQ(queued_on(s0).records, 2u);
  float ms = 0;
  DT_ASSERT_OK(dt_event_elapsed_ms(start, end, &ms));  // the plugin's clock
  EXPECT_GE(ms, 20.0f);
  // A stream of testdev:1 waits on an event of testdev:0 on the device (same backend).
  DT_ASSERT_OK(dt_stream_wait_event(s1, end));
  EXPECT_EQ(queued_on(s1).waits, 1u);
  // stream waits for stream: an event recorded on the other, waited for.
  DT_ASSERT_OK(dt_stream_wait_stream(s1, t1));
  EXPECT_EQ(queued_on(t1).records, 1u);
  EXPECT_EQ(queued_on(s1).waits, 2u);
  int32_t done = 0;
  DT_ASSERT_OK(dt_stream_query(s1, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_event_query(end, &done));
  EXPECT_EQ(done, 1);
  DT_ASSERT_OK(dt_event_synchronize(end));
  DT_ASSERT_OK(dt_stream_synchronize(s1));
  // Recorded on a stream of another device: refused, naming both.
  DT_EXPECT_STATUS(dt_event_record(start, s1), DT_ERR_DEVICE_MISMATCH);
  EXPECT_NE(std::string(dt_last_error_message()).find("the event is on testdev:0 but the stream on testdev:1"),
            std::string::npos)
      << dt_last_error_message();
  // A CPU stream waiting on a testdev event: the host waits (another backend).
  Stream on_cpu;
  DT_ASSERT_OK(dt_stream_create(cpu(), &on_cpu.s));
  DT_ASSERT_OK(dt_stream_wait_event(on_cpu, end));
}

TEST_F(PluginBackend, DlpackImportWaitsForTheProducersStream) {
  Stream producer, def;
  DT_ASSERT_OK(dt_stream_create(kDev0, &producer.s));
  DT_ASSERT_OK(dt_stream_default(kDev0, &def.s));
  void* native = nullptr;
  DT_ASSERT_OK(dt_stream_native_handle(producer, &native));
  const int64_t n = 4;
  T t;
  DT_ASSERT_OK(dt_tensor_ones(&n, 1, DT_FLOAT32, kDev0, t.out()));
  DLManagedTensor* m = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(t, &m));
  // 0 is ambiguous in DLPack: refused, and m stays ours.
  dt_tensor* back = nullptr;
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(m, 0, &back), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("DLPack refuses 0 as ambiguous"), std::string::npos)
      << dt_last_error_message();
  DT_EXPECT_STATUS(dt_tensor_from_dlpack_stream(m, -5, &back), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(back, nullptr);
  const Queued p0 = queued_on(producer), d0 = queued_on(def);
  DT_ASSERT_OK(dt_tensor_from_dlpack_stream(m, static_cast<int64_t>(reinterpret_cast<intptr_t>(native)), &back));
  T owned(back);
  EXPECT_EQ(queued_on(producer).records - p0.records, 1u) << "an event on the producer's stream";
  EXPECT_EQ(queued_on(def).waits - d0.waits, 1u) << "waited for by the thread's (default) stream";
  EXPECT_EQ(values<float>(owned), (std::vector<float>{1, 1, 1, 1}));
  // -1: no ordering at all.
  DLManagedTensor* m2 = nullptr;
  DT_ASSERT_OK(dt_tensor_to_dlpack(t, &m2));
  T again;
  DT_ASSERT_OK(dt_tensor_from_dlpack_stream(m2, -1, again.out()));
  EXPECT_EQ(queued_on(def).waits - d0.waits, 1u);
}

TEST_F(PluginBackend, WhatItLacksIsNotSupported) {
  // The plugin offers no pinned memory (those optional slots are left NULL);
  // pinned memory then comes from no usable backend here (CUDA is unavailable too).
  if (dt_cuda_is_available()) GTEST_SKIP() << "CUDA offers pinned memory here";
  const int64_t n = 2;
  T p;
  DT_EXPECT_STATUS(dt_tensor_empty_pinned(&n, 1, DT_FLOAT32, p.out()), DT_ERR_DEVICE_UNAVAILABLE);
}

}  // namespace
