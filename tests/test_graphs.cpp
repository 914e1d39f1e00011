// Graphs (dt_graph_*) on the CPU: capture records work without running it, replay runs
// it again on the same memory and gives the same bits as eager calls (ops, a whole SGD
// training step), calls that need values during capture are refused and the capture
// goes on, and bad input gets a clear error. On a GPU the same calls are checked by
// test_cuda.cpp.
#include <dlpack/dlpack.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/dt_test.h"

// Two logical CPU devices (cpu:1 for work beside a capture, and for a module move), set
// before the library first counts them.
static const int kSetEnv = (setenv("DEVTENSOR_CPU_DEVICES", "2", 1), 0);

namespace {

using S = Handle<dt_stream, dt_stream_release>;
using G = Handle<dt_graph, dt_graph_release>;
using O = Handle<dt_optimizer, dt_optimizer_release>;

T floats(std::vector<float> v, std::vector<int64_t> shape, dt_device d = cpu()) {
  T t;
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * sizeof(float), shape.data(), shape.size(), DT_FLOAT32, d, t.out()),
            DT_OK)
      << dt_last_error_message();
  return t;
}

T longs(std::vector<int64_t> v, dt_device d = cpu()) {
  T t;
  int64_t n = static_cast<int64_t>(v.size());
  EXPECT_EQ(dt_tensor_from_data(v.data(), v.size() * sizeof(int64_t), &n, 1, DT_INT64, d, t.out()), DT_OK);
  return t;
}

void fill(dt_tensor* t, const std::vector<float>& v) {
  ASSERT_EQ(dt_tensor_copy_from_host(t, v.data(), v.size() * sizeof(float)), DT_OK) << dt_last_error_message();
}

// Bit patterns, so that "equal" means the same bits (NaN and -0 included).
std::vector<uint32_t> bits(dt_tensor* t) {
  std::vector<float> v = values<float>(t);
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

// Deterministic inputs (a small LCG), so eager and replayed runs see the same batches.
std::vector<float> batch_values(int step, size_t n) {
  std::vector<float> v(n);
  uint32_t s = 12345u + 7919u * static_cast<uint32_t>(step);
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  return v;
}

class Graphs : public LeakChecked {};

TEST_F(Graphs, CaptureRecordsOpsAndReplayRunsThemOnTheSameMemory) {
  T x = floats({1, 2, 3}, {3});
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  int32_t capturing = 0;
  DT_ASSERT_OK(dt_stream_is_capturing(s, &capturing));
  EXPECT_EQ(capturing, 1);
  T y, z;
  DT_ASSERT_OK(dt_mul_scalar(x, 2.0, y.out()));
  DT_ASSERT_OK(dt_add(y, x, z.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_stream_is_capturing(s, &capturing));
  EXPECT_EQ(capturing, 0);
  size_t steps = 0;
  DT_ASSERT_OK(dt_graph_num_steps(g, &steps));
  EXPECT_GE(steps, 2u);  // the multiplication and the addition, at least
  dt_device dev{};
  DT_ASSERT_OK(dt_graph_device(g, &dev));
  EXPECT_EQ(dev.type, DT_DEVICE_CPU);
  EXPECT_EQ(dev.index, 0);

  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(z), (std::vector<float>{3, 6, 9}));
  // New values in the static input: the replay reads them.
  fill(x, {10, -20, 0.5f});
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(z), (std::vector<float>{30, -60, 1.5f}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{20, -40, 1}));
}

// dt_copy_ is how a static input gets values from another tensor of the device, between
// replays; a dt_copy_ inside the capture is recorded like any op (here: the copy of a
// broadcast row into the input, then the product), so each replay copies again.
TEST_F(Graphs, CopiesIntoStaticInputsWorkBetweenReplaysAndInsideTheCapture) {
  T x = floats({0, 0, 0, 0}, {2, 2}), row = floats({1, 2}, {2}), batch = floats({5, 6, 7, 8}, {2, 2});
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  T y;
  DT_ASSERT_OK(dt_copy_(x, row, 0));
  DT_ASSERT_OK(dt_mul_scalar(x, 10.0, y.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  EXPECT_EQ(values<float>(x), (std::vector<float>{0, 0, 0, 0})) << "capture computes nothing";
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(y), (std::vector<float>{10, 20, 10, 20}));
  fill(row, {-1, 3});
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(y), (std::vector<float>{-10, 30, -10, 30}));
  // Between replays, a copy into the input is just a copy (the recorded one overwrites it).
  DT_ASSERT_OK(dt_copy_(x, batch, 0));
  EXPECT_EQ(values<float>(x), (std::vector<float>{5, 6, 7, 8}));
}

TEST_F(Graphs, TheThreadGoesBackToItsStreamAfterTheCapture) {
  S s, cur;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_thread_stream(cpu(), cur.out()));
  int32_t is_default = -1;
  DT_ASSERT_OK(dt_stream_is_default(cur, &is_default));
  EXPECT_EQ(is_default, 0);  // the capturing stream is the thread's while it captures
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_thread_stream(cpu(), cur.out()));
  DT_ASSERT_OK(dt_stream_is_default(cur, &is_default));
  EXPECT_EQ(is_default, 1);
  size_t steps = 99;
  DT_ASSERT_OK(dt_graph_num_steps(g, &steps));
  EXPECT_EQ(steps, 0u);
  DT_ASSERT_OK(dt_graph_replay(g));  // an empty graph replays as nothing
}

TEST_F(Graphs, TheCaptureKeepsItsStreamHandleValidUntilItEnds) {
  dt_stream* s = nullptr;
  DT_ASSERT_OK(dt_stream_create(cpu(), &s));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_stream_release(s));  // the caller's only reference
  T x = floats({1, 2}, {2}), y;
  DT_ASSERT_OK(dt_mul_scalar(x, 4.0, y.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));  // still valid: the capture's reference
  DT_EXPECT_STATUS(dt_stream_synchronize(s), DT_ERR_INVALID_HANDLE);  // and now gone
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(y), (std::vector<float>{4, 8}));
}

TEST_F(Graphs, TheGraphKeepsItsMemoryAfterEveryHandleIsGone) {
  G g;
  T out;
  {
    T a = floats({1, 2}, {2});
    T b = floats({5, 7}, {2});
    S s;
    DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
    DT_ASSERT_OK(dt_graph_capture_begin(s));
    T tmp;
    DT_ASSERT_OK(dt_mul(a, b, tmp.out()));
    DT_ASSERT_OK(dt_add_scalar(tmp, 1.0, out.out()));
    DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  }  // a, b, tmp and the stream released: the graph holds what it needs
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(out), (std::vector<float>{6, 15}));
}

TEST_F(Graphs, WorkOnAnotherDeviceRunsAtOnceDuringACapture) {
  T a = floats({1, 2}, {2}, cpu(1));
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(0), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  T b;
  DT_ASSERT_OK(dt_mul_scalar(a, 3.0, b.out()));
  EXPECT_EQ(values<float>(b), (std::vector<float>{3, 6}));  // cpu:1 is not capturing: it ran
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  size_t steps = 9;
  DT_ASSERT_OK(dt_graph_num_steps(g, &steps));
  EXPECT_EQ(steps, 0u);
}

// Calls that need values (or would run at once) fail with NOT_SUPPORTED and a message
// naming the call; the capture goes on and its graph replays what was recorded.
TEST_F(Graphs, CallsThatCannotBeCapturedAreRefusedAndTheCaptureGoesOn) {
  T x = floats({1, 2, 3, 4}, {4});
  S s, other;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_stream_create(cpu(), other.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  T y;
  DT_ASSERT_OK(dt_mul_scalar(x, 10.0, y.out()));

  double v = 0;
  DT_EXPECT_STATUS(dt_tensor_item(x, &v), DT_ERR_INVALID_ARGUMENT);  // bad input is still bad input first
  T one = floats({5}, {});
  DT_EXPECT_STATUS(dt_tensor_item(one, &v), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "dt_tensor_item: cannot be captured into a graph")) << dt_last_error_message();
  EXPECT_TRUE(has(dt_last_error_message(), "the capture on cpu:0 goes on")) << dt_last_error_message();
  float host[4];
  DT_EXPECT_STATUS(dt_tensor_copy_to_host(y, host, sizeof host), DT_ERR_NOT_SUPPORTED);
  DT_EXPECT_STATUS(dt_tensor_copy_from_host(x, host, sizeof host), DT_ERR_NOT_SUPPORTED);
  char buf[64];
  size_t need = 0;
  DT_EXPECT_STATUS(dt_tensor_to_string(y, buf, sizeof buf, &need), DT_ERR_NOT_SUPPORTED);
  T r;
  int64_t n = 4;
  DT_EXPECT_STATUS(dt_tensor_rand(&n, 1, DT_FLOAT32, cpu(), r.out()), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "repeat the same random numbers")) << dt_last_error_message();
  EXPECT_EQ(r.get(), nullptr);  // outputs untouched on failure
  DT_EXPECT_STATUS(dt_synchronize(cpu()), DT_ERR_NOT_SUPPORTED);
  DT_EXPECT_STATUS(dt_stream_synchronize(s), DT_ERR_NOT_SUPPORTED);
  int32_t done = 0;
  DT_EXPECT_STATUS(dt_stream_query(s, &done), DT_ERR_NOT_SUPPORTED);
  DT_EXPECT_STATUS(dt_stream_wait_stream(other, s), DT_ERR_NOT_SUPPORTED);
  dt_event* e = nullptr;
  DT_ASSERT_OK(dt_event_create(cpu(), &e));
  DT_EXPECT_STATUS(dt_event_record(e, nullptr), DT_ERR_NOT_SUPPORTED);
  DT_EXPECT_STATUS(dt_event_record(e, s), DT_ERR_NOT_SUPPORTED);
  DT_ASSERT_OK(dt_event_release(e));
  DLManagedTensor* dl = nullptr;
  DT_EXPECT_STATUS(dt_tensor_to_dlpack(y, &dl), DT_ERR_NOT_SUPPORTED);
  EXPECT_EQ(dl, nullptr);
  // Another device's stream captures (and its graph replays) on its own.
  {
    S s2;
    G inner;
    DT_ASSERT_OK(dt_stream_create(cpu(1), s2.out()));
    DT_ASSERT_OK(dt_graph_capture_begin(s2));
    DT_ASSERT_OK(dt_graph_capture_end(s2, inner.out()));
    DT_ASSERT_OK(dt_graph_replay(inner));  // cpu:1 is not capturing
  }

  // The capture went on: more work, then a graph that replays all of it.
  T z;
  DT_ASSERT_OK(dt_add_scalar(y, 1.0, z.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_graph_replay(g));
  EXPECT_EQ(values<float>(z), (std::vector<float>{11, 21, 31, 41}));
  // The refused calls recorded nothing: as many steps as a capture of the two ops alone.
  G plain;
  T y2, z2;
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_mul_scalar(x, 10.0, y2.out()));
  DT_ASSERT_OK(dt_add_scalar(y2, 1.0, z2.out()));
  DT_ASSERT_OK(dt_graph_capture_end(s, plain.out()));
  size_t steps = 0, plain_steps = 1;
  DT_ASSERT_OK(dt_graph_num_steps(g, &steps));
  DT_ASSERT_OK(dt_graph_num_steps(plain, &plain_steps));
  EXPECT_EQ(steps, plain_steps);
  // And the stream works as before.
  DT_ASSERT_OK(dt_stream_synchronize(s));
}

TEST_F(Graphs, AGraphIsNotReplayedInsideACapture) {
  T x = floats({1, 2}, {2});
  S s;
  G first, second;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_mul_scalar_(x, 2.0));
  DT_ASSERT_OK(dt_graph_capture_end(s, first.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_EXPECT_STATUS(dt_graph_replay(first), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "graphs do not nest")) << dt_last_error_message();
  DT_ASSERT_OK(dt_graph_capture_end(s, second.out()));
  EXPECT_EQ(values<float>(x), (std::vector<float>{1, 2}));  // nothing ran
  DT_ASSERT_OK(dt_graph_replay(first));
  DT_ASSERT_OK(dt_graph_replay(first));
  EXPECT_EQ(values<float>(x), (std::vector<float>{4, 8}));  // in place, twice
}

TEST_F(Graphs, BadInputIsRefusedWithAClearError) {
  DT_EXPECT_STATUS(dt_graph_capture_begin(nullptr), DT_ERR_INVALID_ARGUMENT);
  S def, s;
  DT_ASSERT_OK(dt_stream_default(cpu(), def.out()));
  DT_EXPECT_STATUS(dt_graph_capture_begin(def), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "default stream cannot capture")) << dt_last_error_message();
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  G g;
  DT_EXPECT_STATUS(dt_graph_capture_end(s, g.out()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "is not capturing")) << dt_last_error_message();
  EXPECT_EQ(static_cast<dt_graph*>(g), nullptr);
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_EXPECT_STATUS(dt_graph_capture_begin(s), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "already capturing")) << dt_last_error_message();
  {
    S s2;  // a second stream of the same device, while this thread captures on it
    DT_ASSERT_OK(dt_stream_create(cpu(), s2.out()));
    DT_EXPECT_STATUS(dt_graph_capture_begin(s2), DT_ERR_INVALID_ARGUMENT);
  }
  DT_EXPECT_STATUS(dt_graph_capture_end(s, nullptr), DT_ERR_INVALID_ARGUMENT);
  // Another thread cannot end this thread's capture.
  dt_status other = DT_OK;
  std::string message;
  std::thread([&] {
    dt_graph* h = nullptr;
    other = dt_graph_capture_end(s, &h);
    message = dt_last_error_message();
  }).join();
  EXPECT_EQ(other, DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(message, "begun on another thread")) << message;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));

  DT_EXPECT_STATUS(dt_graph_replay(nullptr), DT_ERR_INVALID_ARGUMENT);
  size_t steps = 0;
  DT_EXPECT_STATUS(dt_graph_num_steps(nullptr, &steps), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_graph_num_steps(g, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_graph_device(g, nullptr), DT_ERR_INVALID_ARGUMENT);
  int32_t c = 0;
  DT_EXPECT_STATUS(dt_stream_is_capturing(nullptr, &c), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_stream_is_capturing(s, nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_graph_retain(nullptr), DT_ERR_INVALID_ARGUMENT);
  DT_ASSERT_OK(dt_graph_release(nullptr));
  // Reference counting, and a released handle is refused.
  dt_graph* h = g;
  DT_ASSERT_OK(dt_graph_retain(h));
  DT_ASSERT_OK(dt_graph_release(h));
  DT_ASSERT_OK(dt_graph_replay(h));
  dt_graph* stale = nullptr;
  {
    S s3;
    DT_ASSERT_OK(dt_stream_create(cpu(), s3.out()));
    DT_ASSERT_OK(dt_graph_capture_begin(s3));
    DT_ASSERT_OK(dt_graph_capture_end(s3, &stale));
    DT_ASSERT_OK(dt_graph_release(stale));
  }
  DT_EXPECT_STATUS(dt_graph_replay(stale), DT_ERR_INVALID_HANDLE);
  DT_EXPECT_STATUS(dt_graph_release(stale), DT_ERR_INVALID_HANDLE);
}

// A two-layer MLP with CrossEntropyLoss and SGD with momentum, built identically twice
// (the same seed), trained on the same batches: eagerly, and by replaying one captured
// step. Every loss and every parameter must be the same bits.
struct Mlp {
  M l1, relu, l2, net, loss;
  std::vector<T> params;
  O opt;
  explicit Mlp(uint64_t seed, dt_device d = cpu()) {
    EXPECT_EQ(dt_manual_seed(seed), DT_OK);
    EXPECT_EQ(dt_linear_new(8, 16, 1, DT_FLOAT32, d, l1.out()), DT_OK);
    EXPECT_EQ(dt_relu_new(relu.out()), DT_OK);
    EXPECT_EQ(dt_linear_new(16, 4, 1, DT_FLOAT32, d, l2.out()), DT_OK);
    dt_module* parts[] = {l1, relu, l2};
    EXPECT_EQ(dt_sequential_new(parts, 3, net.out()), DT_OK);
    EXPECT_EQ(dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0.0, loss.out()), DT_OK);
    size_t n = 0;
    EXPECT_EQ(dt_module_parameter_count(net, &n), DT_OK);
    std::vector<dt_tensor*> raw;
    for (size_t i = 0; i < n; ++i) {
      T p;
      EXPECT_EQ(dt_module_parameter(net, i, nullptr, 0, nullptr, p.out()), DT_OK);
      raw.push_back(p);
      params.push_back(std::move(p));
    }
    EXPECT_EQ(dt_sgd_new(raw.data(), raw.size(), 0.1, 0.9, 0.0, 1e-4, 0, opt.out()), DT_OK);
  }
  // zero_grad, forward, loss, backward, step; *loss_out gets the loss tensor.
  dt_status step(dt_tensor* x, dt_tensor* y, T* loss_out) {
    dt_status s;
    if ((s = dt_optimizer_zero_grad(opt)) != DT_OK) return s;
    T logits;
    if ((s = dt_module_forward(net, &x, 1, logits.out())) != DT_OK) return s;
    const dt_tensor* in[] = {logits, y};
    if ((s = dt_module_forward(loss, in, 2, loss_out->out())) != DT_OK) return s;
    if ((s = dt_backward(*loss_out, nullptr)) != DT_OK) return s;
    if (clip > 0) {
      std::vector<const dt_tensor*> raw(params.begin(), params.end());
      if ((s = dt_clip_grad_norm_(raw.data(), raw.size(), clip, 2.0, 0, nullptr)) != DT_OK) return s;
    }
    return dt_optimizer_step(opt);
  }
  double clip = 0;  // > 0: gradients clipped to this norm before each step
};

std::vector<int64_t> batch_targets(int step) {
  std::vector<int64_t> t(6);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int64_t>((i * 3 + static_cast<size_t>(step)) % 4);
  return t;
}

void replayed_step_matches_eager(dt_device d, double clip = 0) {
  Mlp eager(7, d), graphed(7, d);
  eager.clip = graphed.clip = clip;
  T x = floats(batch_values(0, 6 * 8), {6, 8}, d);
  T y = longs(batch_targets(0), d);
  // Step 0 eagerly on both: SGD's momentum buffers exist before the capture (warm-up).
  T l0, l0g;
  DT_ASSERT_OK(eager.step(x, y, &l0));
  DT_ASSERT_OK(graphed.step(x, y, &l0g));
  EXPECT_EQ(bits(l0), bits(l0g));

  S s;
  DT_ASSERT_OK(dt_stream_create(d, s.out()));
  T static_loss;
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(graphed.step(x, y, &static_loss));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  size_t steps = 0;
  DT_ASSERT_OK(dt_graph_num_steps(g, &steps));
  EXPECT_GT(steps, 20u);
  // Capture computed nothing: the parameters are still those after step 0.
  for (size_t i = 0; i < eager.params.size(); ++i) EXPECT_EQ(bits(eager.params[i]), bits(graphed.params[i])) << i;

  for (int step = 1; step <= 5; ++step) {
    std::vector<float> xv = batch_values(step, 6 * 8);
    std::vector<int64_t> yv = batch_targets(step);
    T xe = floats(xv, {6, 8}, d), ye = longs(yv, d), le;
    DT_ASSERT_OK(eager.step(xe, ye, &le));
    fill(x, xv);
    DT_ASSERT_OK(dt_tensor_copy_from_host(y, yv.data(), yv.size() * sizeof(int64_t)));
    DT_ASSERT_OK(dt_graph_replay(g));
    EXPECT_EQ(bits(le), bits(static_loss)) << "step " << step;
    for (size_t i = 0; i < eager.params.size(); ++i)
      EXPECT_EQ(bits(eager.params[i]), bits(graphed.params[i])) << "step " << step << ", parameter " << i;
  }
  // The gradients backward set are outputs too: the same as the eager ones.
  for (size_t i = 0; i < eager.params.size(); ++i) {
    T ge, gg;
    DT_ASSERT_OK(dt_tensor_grad(eager.params[i], ge.out()));
    DT_ASSERT_OK(dt_tensor_grad(graphed.params[i], gg.out()));
    ASSERT_NE(ge.get(), nullptr);
    ASSERT_NE(gg.get(), nullptr);
    EXPECT_EQ(bits(ge), bits(gg)) << i;
  }
  if (clip > 0) {  // the last step's gradients were clipped: their norm is now the limit
    std::vector<const dt_tensor*> raw(eager.params.begin(), eager.params.end());
    T norm;
    DT_ASSERT_OK(dt_clip_grad_norm_(raw.data(), raw.size(), 1e9, 2.0, 0, norm.out()));
    EXPECT_NEAR(values<float>(norm)[0], clip, 1e-6);
  }
  // The loss fell (the model learns), so the comparison above compared something.
  double first = 0, last = 0;
  DT_ASSERT_OK(dt_tensor_item(l0, &first));
  DT_ASSERT_OK(dt_tensor_item(static_loss, &last));
  EXPECT_NE(first, last);
}

TEST_F(Graphs, AReplayedTrainingStepGivesTheBitsOfTheEagerStep) { replayed_step_matches_eager(cpu()); }

// dt_clip_grad_norm_ never reads the norm on the host (without error_if_nonfinite), so a
// step with clipped gradients captures and replays too. A max norm of 0.05 clips the
// gradients of this model (checked on the last step).
TEST_F(Graphs, AReplayedStepWithClippedGradientsGivesTheBitsOfTheEagerStep) {
  replayed_step_matches_eager(cpu(), 0.05);
}

// The same on a GPU, where the replay queues the recorded kernels on the captured stream
// (SKIPPED where CUDA is unusable).
TEST_F(Graphs, AReplayedTrainingStepOnCudaGivesTheBitsOfTheEagerStep) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  replayed_step_matches_eager(dt_device{DT_DEVICE_CUDA, 0});
}

TEST_F(Graphs, ACopyBetweenTheHostAndAGpuIsRefusedDuringItsCapture) {
  if (!dt_cuda_is_available()) GTEST_SKIP() << "CUDA is not available";
  const dt_device gpu{DT_DEVICE_CUDA, 0};
  T host = floats({1, 2, 3}, {3});
  T dev = floats({1, 2, 3}, {3}, gpu);
  S s;
  DT_ASSERT_OK(dt_stream_create(gpu, s.out()));
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  T up, down, twice;
  DT_EXPECT_STATUS(dt_tensor_to(host, gpu, DT_DTYPE_DEFAULT, 0, up.out()), DT_ERR_NOT_SUPPORTED);
  EXPECT_TRUE(has(dt_last_error_message(), "a copy between the host and a device")) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_tensor_to(dev, cpu(), DT_DTYPE_DEFAULT, 0, down.out()), DT_ERR_NOT_SUPPORTED);
  DT_ASSERT_OK(dt_mul_scalar(dev, 2.0, twice.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_graph_replay(g));
  DT_ASSERT_OK(dt_stream_synchronize(s));
  EXPECT_EQ(values<float>(twice), (std::vector<float>{2, 4, 6}));
}

TEST_F(Graphs, AClassTargetOutOfRangeFailsTheReplay) {
  Mlp m(3);
  T x = floats(batch_values(0, 6 * 8), {6, 8});
  T y = longs(batch_targets(0));
  T l0;
  DT_ASSERT_OK(m.step(x, y, &l0));
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  T loss;
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(m.step(x, y, &loss));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_graph_replay(g));
  std::vector<int64_t> bad = {0, 1, 2, 7, 1, 0};  // 4 classes
  DT_ASSERT_OK(dt_tensor_copy_from_host(y, bad.data(), bad.size() * sizeof(int64_t)));
  DT_EXPECT_STATUS(dt_graph_replay(g), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "index 7 is out of bounds")) << dt_last_error_message();
  std::vector<int64_t> good = batch_targets(1);
  DT_ASSERT_OK(dt_tensor_copy_from_host(y, good.data(), good.size() * sizeof(int64_t)));
  DT_ASSERT_OK(dt_graph_replay(g));
}

TEST_F(Graphs, OptimizerStepsThatCannotReplayAreRefused) {
  T x = floats(batch_values(0, 6 * 8), {6, 8});
  T y = longs(batch_targets(0));
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  {
    Mlp m(5);  // no step yet: no momentum buffers
    T loss;
    DT_ASSERT_OK(dt_graph_capture_begin(s));
    DT_EXPECT_STATUS(m.step(x, y, &loss), DT_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(has(dt_last_error_message(), "run one step before the capture")) << dt_last_error_message();
    G g;
    DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  }
  {
    Mlp m(5);
    std::vector<dt_tensor*> raw;
    for (const T& p : m.params) raw.push_back(p);
    O adam;
    DT_ASSERT_OK(dt_adam_new(raw.data(), raw.size(), 1e-3, 0.9, 0.999, 1e-8, 0, 0, adam.out()));
    T logits, loss;
    dt_tensor* xin = x;
    DT_ASSERT_OK(dt_graph_capture_begin(s));
    DT_ASSERT_OK(dt_module_forward(m.net, &xin, 1, logits.out()));
    const dt_tensor* in[] = {logits, y};
    DT_ASSERT_OK(dt_module_forward(m.loss, in, 2, loss.out()));
    DT_ASSERT_OK(dt_backward(loss, nullptr));
    DT_EXPECT_STATUS(dt_optimizer_step(adam), DT_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(has(dt_last_error_message(), "Adam step: cannot be captured")) << dt_last_error_message();
    G g;
    DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  }
}

TEST_F(Graphs, AReplayAfterTheModuleMovedIsRefused) {
  M lin;
  DT_ASSERT_OK(dt_linear_new(3, 2, 1, DT_FLOAT32, cpu(0), lin.out()));
  T x = floats({1, 2, 3}, {1, 3});
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(0), s.out()));
  T out;
  dt_tensor* xin = x;
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_module_forward(lin, &xin, 1, out.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_graph_replay(g));
  T eager;
  DT_ASSERT_OK(dt_module_forward(lin, &xin, 1, eager.out()));
  EXPECT_EQ(bits(out), bits(eager));
  DT_ASSERT_OK(dt_module_to(lin, cpu(1)));
  DT_EXPECT_STATUS(dt_graph_replay(g), DT_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(dt_last_error_message(), "was moved (dt_module_to) after capture")) << dt_last_error_message();
}

TEST_F(Graphs, AConvolutionReplaysCloseToTheEagerOne) {
  // A capture records convolutions as im2col and matrix products (a library hook would
  // run at once), so replay agrees with eager oneDNN to rounding, not to the bit.
  M conv;
  const int64_t k[2] = {3, 3}, st[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1};
  DT_ASSERT_OK(dt_manual_seed(11));
  DT_ASSERT_OK(dt_conv2d_new(2, 4, k, st, pad, dil, 1, 1, DT_FLOAT32, cpu(), conv.out()));
  T x = floats(batch_values(3, 2 * 2 * 5 * 5), {2, 2, 5, 5});
  dt_tensor* xin = x;
  T eager;
  DT_ASSERT_OK(dt_module_forward(conv, &xin, 1, eager.out()));
  S s;
  DT_ASSERT_OK(dt_stream_create(cpu(), s.out()));
  T out;
  DT_ASSERT_OK(dt_graph_capture_begin(s));
  DT_ASSERT_OK(dt_module_forward(conv, &xin, 1, out.out()));
  G g;
  DT_ASSERT_OK(dt_graph_capture_end(s, g.out()));
  DT_ASSERT_OK(dt_graph_replay(g));
  std::vector<float> a = values<float>(eager), b = values<float>(out);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f) << i;
}

}  // namespace
