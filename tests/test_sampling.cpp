// dt_tensor_randint, dt_tensor_randperm and dt_multinomial on every device: each result
// is checked against the same computation done here by hand from the float64 uniforms
// dt_tensor_rand gives for the same seed (the documented definition), against the
// distribution it should follow (counts within 5 standard deviations, deterministic for
// the fixed seeds), and for its errors. Then dt_nonzero, dt_masked_select, dt_unique and
// dt_bincount at sizes the small PyTorch reference cases do not reach, against what the
// host computes. The devices: cpu:0, cuda:0 (skipped visibly without a GPU) and
// DT_TEST_DEVICE (ctest sets testdev:0, the backend plugin).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

std::vector<int32_t> DeviceTypes() {
  std::vector<int32_t> types{DT_DEVICE_CPU, DT_DEVICE_CUDA};
  if (const char* extra = std::getenv("DT_TEST_DEVICE")) {
    dt_device d{};
    if (dt_device_parse(extra, &d) == DT_OK) types.push_back(d.type);
  }
  return types;
}

std::string DeviceName(int32_t type) {
  char buf[64] = "?";
  dt_device_format(dt_device{type, 0}, buf, sizeof buf, nullptr);
  std::string s = buf;
  for (char& c : s)
    if (c == ':') c = '_';
  return s;
}

dt_tensor* Sentinel() { return reinterpret_cast<dt_tensor*>(0x5e17); }

class Sampling : public ::testing::TestWithParam<int32_t> {
 protected:
  void SetUp() override {
    live_ = dt_live_handle_count();
    dev_ = dt_device{GetParam(), 0};
    if (GetParam() == DT_DEVICE_CUDA && !dt_cuda_is_available()) GTEST_SKIP() << "CUDA unavailable";
  }
  void TearDown() override { EXPECT_EQ(dt_live_handle_count(), live_) << "the test leaked handles"; }

  // The float64 uniforms dt_tensor_rand gives n elements right after dt_manual_seed(seed).
  static std::vector<double> Uniforms(uint64_t seed, int64_t n) {
    T u;
    EXPECT_EQ(dt_manual_seed(seed), DT_OK);
    EXPECT_EQ(dt_tensor_rand(&n, 1, DT_FLOAT64, cpu(), u.out()), DT_OK) << dt_last_error_message();
    return values<double>(u);
  }
  // Any tensor's values as doubles, through a float64 copy on the CPU.
  static std::vector<double> AsDoubles(dt_tensor* t) {
    T h;
    EXPECT_EQ(dt_tensor_to(t, cpu(), DT_FLOAT64, 0, h.out()), DT_OK) << dt_last_error_message();
    return values<double>(h);
  }
  // The first error of a call that must fail, with *out untouched.
  template <typename Call>
  void ExpectFailure(Call call, dt_status code, const char* part) {
    dt_tensor* out = Sentinel();
    DT_EXPECT_STATUS(call(&out), code);
    EXPECT_EQ(out, Sentinel()) << "*out written by a failing call";
    EXPECT_TRUE(has(dt_last_error_message(), part)) << dt_last_error_message() << " (wanted: " << part << ")";
  }

  dt_device dev_{};
  size_t live_ = 0;
};

// ----------------------------------------------------------------------------- randint

TEST_P(Sampling, RandintIsLowPlusTheFloorOfTheUniformTimesTheRange) {
  const int64_t n = 3000;
  struct Case {
    int64_t low, high;
    dt_dtype dtype;
  };
  for (Case c : {Case{-5, 12, DT_INT64}, Case{0, 256, DT_UINT8}, Case{-128, 128, DT_INT8}, Case{-7, 3, DT_INT32},
                 Case{-1000, 1000, DT_INT16}, Case{-(1 << 24), (1 << 24) + 1, DT_FLOAT32},
                 Case{-3, 2049, DT_FLOAT16}, Case{0, 257, DT_BFLOAT16}, Case{-(int64_t{1} << 52), 1, DT_FLOAT64},
                 Case{0, 2, DT_BOOL}}) {
    SCOPED_TRACE(std::string(dt_dtype_name(c.dtype)) + " [" + std::to_string(c.low) + ", " + std::to_string(c.high) +
                 ")");
    T r;
    DT_ASSERT_OK(dt_manual_seed(77));
    DT_ASSERT_OK(dt_tensor_randint(c.low, c.high, &n, 1, c.dtype, dev_, r.out()));
    dt_dtype got = DT_DTYPE_DEFAULT;
    DT_ASSERT_OK(dt_tensor_dtype(r, &got));
    EXPECT_EQ(got, c.dtype);
    const std::vector<double> u = Uniforms(77, n), v = AsDoubles(r);
    const double range = static_cast<double>(c.high - c.low);
    for (int64_t i = 0; i < n; ++i) {
      const double want = static_cast<double>(c.low) + std::floor(u[i] * range);
      ASSERT_EQ(v[i], want) << "element " << i << " (u = " << u[i] << ")";
    }
  }
}

TEST_P(Sampling, RandintDefaultsToInt64AndHoldsTheBoundsOfInt64Exactly) {
  const int64_t shape[] = {40, 50};
  T r;
  DT_ASSERT_OK(dt_manual_seed(5));
  DT_ASSERT_OK(dt_tensor_randint(0, 10, shape, 2, DT_DTYPE_DEFAULT, dev_, r.out()));
  dt_dtype got = DT_DTYPE_DEFAULT;
  DT_ASSERT_OK(dt_tensor_dtype(r, &got));
  EXPECT_EQ(got, DT_INT64);
  EXPECT_EQ(shape_of(r), (std::vector<int64_t>{40, 50}));
  // Bounds a double cannot hold: the sum is made in int64 (values checked against the
  // same draw done here in integers).
  const int64_t n = 2000;
  struct Case {
    int64_t low, high;
  };
  for (Case c : {Case{INT64_MIN, INT64_MIN + 1000}, Case{INT64_MAX - 999, INT64_MAX},
                 Case{-(int64_t{1} << 62) + 12345, -(int64_t{1} << 62) + 12345 + 777}, Case{INT64_MIN, INT64_MIN + 1}}) {
    T x;
    DT_ASSERT_OK(dt_manual_seed(11));
    DT_ASSERT_OK(dt_tensor_randint(c.low, c.high, &n, 1, DT_INT64, dev_, x.out()));
    const std::vector<double> u = Uniforms(11, n);
    T h;
    DT_ASSERT_OK(dt_tensor_to(x, cpu(), DT_INT64, 0, h.out()));
    const std::vector<int64_t> v = values<int64_t>(h);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(v[i], c.low + static_cast<int64_t>(std::floor(u[i] * static_cast<double>(c.high - c.low))))
          << "element " << i << " of [" << c.low << ", " << c.high << ")";
  }
}

TEST_P(Sampling, RandintCoversItsRangeEvenly) {
  const int64_t n = 170000, k = 17;
  T r;
  DT_ASSERT_OK(dt_manual_seed(2024));
  DT_ASSERT_OK(dt_tensor_randint(3, 3 + k, &n, 1, DT_INT32, dev_, r.out()));
  T h;
  DT_ASSERT_OK(dt_tensor_to(r, cpu(), DT_INT32, 0, h.out()));
  std::vector<int64_t> count(k, 0);
  for (int32_t v : values<int32_t>(h)) {
    ASSERT_TRUE(v >= 3 && v < 3 + k) << v;
    ++count[v - 3];
  }
  const double mean = static_cast<double>(n) / k, sd = std::sqrt(mean * (1.0 - 1.0 / k));
  for (int64_t j = 0; j < k; ++j) EXPECT_NEAR(static_cast<double>(count[j]), mean, 5 * sd) << "value " << 3 + j;
}

TEST_P(Sampling, RandintRefusesRangesItCannotDraw) {
  const int64_t n = 4;
  auto call = [&](int64_t low, int64_t high, dt_dtype dtype) {
    return [=](dt_tensor** out) { return dt_tensor_randint(low, high, &n, 1, dtype, dev_, out); };
  };
  ExpectFailure(call(5, 5, DT_INT64), DT_ERR_INVALID_ARGUMENT, "expected low < high, but got low=5 >= high=5");
  ExpectFailure(call(7, -2, DT_INT64), DT_ERR_INVALID_ARGUMENT, "low=7 >= high=-2");
  ExpectFailure(call(0, (int64_t{1} << 53) + 1, DT_INT64), DT_ERR_INVALID_ARGUMENT, "at most 2^53");
  ExpectFailure(call(INT64_MIN, INT64_MAX, DT_INT64), DT_ERR_INVALID_ARGUMENT, "at most 2^53");
  ExpectFailure(call(0, 300, DT_UINT8), DT_ERR_INVALID_ARGUMENT, "uint8 cannot hold 299");
  ExpectFailure(call(-129, 0, DT_INT8), DT_ERR_INVALID_ARGUMENT, "int8 cannot hold -129");
  ExpectFailure(call(0, (1 << 24) + 2, DT_FLOAT32), DT_ERR_INVALID_ARGUMENT, "float32 cannot hold 16777217 exactly");
  ExpectFailure(call(0, 2050, DT_FLOAT16), DT_ERR_INVALID_ARGUMENT, "float16 cannot hold 2049 exactly");
  ExpectFailure(call(0, 3, DT_BOOL), DT_ERR_INVALID_ARGUMENT, "bool cannot hold 2");
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randint(0, 3, &n, 1, 99, dev_, out); },
                DT_ERR_INVALID_ARGUMENT, "");
  const int64_t negative = -1;
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randint(0, 3, &negative, 1, DT_INT64, dev_, out); },
                DT_ERR_INVALID_ARGUMENT, "");
  DT_EXPECT_STATUS(dt_tensor_randint(0, 3, &n, 1, DT_INT64, dev_, nullptr), DT_ERR_INVALID_ARGUMENT);
}

// ----------------------------------------------------------------------------- randperm

TEST_P(Sampling, RandpermIsTheStableSortOrderOfTheUniforms) {
  for (int64_t n : {1, 2, 5, 1000, 4099}) {
    T p;
    DT_ASSERT_OK(dt_manual_seed(31 + n));
    DT_ASSERT_OK(dt_tensor_randperm(n, DT_DTYPE_DEFAULT, dev_, p.out()));
    dt_dtype got = DT_DTYPE_DEFAULT;
    DT_ASSERT_OK(dt_tensor_dtype(p, &got));
    EXPECT_EQ(got, DT_INT64);
    EXPECT_EQ(shape_of(p), (std::vector<int64_t>{n}));
    const std::vector<double> u = Uniforms(31 + n, n);
    std::vector<int64_t> want(n);
    std::iota(want.begin(), want.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) { return u[a] < u[b]; });
    T h;
    DT_ASSERT_OK(dt_tensor_to(p, cpu(), DT_INT64, 0, h.out()));
    EXPECT_EQ(values<int64_t>(h), want) << "n = " << n;
  }
}

TEST_P(Sampling, RandpermInOtherDtypesAndItsLimits) {
  for (dt_dtype dtype : {DT_INT32, DT_INT16, DT_FLOAT32, DT_FLOAT64}) {
    T p;
    DT_ASSERT_OK(dt_tensor_randperm(300, dtype, dev_, p.out()));
    std::vector<double> v = AsDoubles(p);
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < 300; ++i) ASSERT_EQ(v[i], static_cast<double>(i)) << dt_dtype_name(dtype);
  }
  T ok8, ok16, empty;
  DT_ASSERT_OK(dt_tensor_randperm(256, DT_UINT8, dev_, ok8.out()));   // 255 fits
  DT_ASSERT_OK(dt_tensor_randperm(2049, DT_FLOAT16, dev_, ok16.out()));  // 2048 is exact
  std::vector<double> h16 = AsDoubles(ok16);
  EXPECT_EQ(std::set<double>(h16.begin(), h16.end()).size(), 2049u);
  DT_ASSERT_OK(dt_tensor_randperm(0, DT_DTYPE_DEFAULT, dev_, empty.out()));
  EXPECT_EQ(shape_of(empty), (std::vector<int64_t>{0}));
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randperm(-1, DT_INT64, dev_, out); }, DT_ERR_INVALID_ARGUMENT,
                "n must be >= 0, got -1");
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randperm(257, DT_UINT8, dev_, out); }, DT_ERR_INVALID_ARGUMENT,
                "n = 257 is too large for uint8");
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randperm(2050, DT_FLOAT16, dev_, out); },
                DT_ERR_INVALID_ARGUMENT, "too large for float16, which holds the integers up to 2048 exactly");
  ExpectFailure([&](dt_tensor** out) { return dt_tensor_randperm(2, DT_BOOL, dev_, out); }, DT_ERR_INVALID_ARGUMENT,
                "bool cannot hold a permutation");
}

// -------------------------------------------------------------------------- multinomial

// Weights made on the CPU as float32 and moved to the device under test.
class Weights {
 public:
  Weights(const std::vector<float>& w, std::vector<int64_t> shape, dt_device dev) {
    T host;
    EXPECT_EQ(dt_tensor_from_data(w.data(), w.size() * 4, shape.data(), shape.size(), DT_FLOAT32, cpu(), host.out()),
              DT_OK);
    EXPECT_EQ(dt_tensor_to(host, dev, DT_DTYPE_DEFAULT, 0, t_.out()), DT_OK) << dt_last_error_message();
  }
  operator dt_tensor*() const { return t_; }

 private:
  T t_;
};

TEST_P(Sampling, MultinomialWithReplacementInvertsTheCumulativeWeights) {
  const std::vector<float> w = {0.0f, 1.5f, 0.25f, 0.0f, 3.0f,   // zeros first, inside and last
                                2.0f, 0.0f, 0.0f, 0.5f, 0.0f,    //
                                1.0f, 1.0f, 1.0f, 1.0f, 1.0f};   //
  const int64_t rows = 3, cats = 5, samples = 400;
  Weights probs(w, {rows, cats}, dev_);
  T r;
  DT_ASSERT_OK(dt_manual_seed(808));
  DT_ASSERT_OK(dt_multinomial(probs, samples, 1, r.out()));
  EXPECT_EQ(shape_of(r), (std::vector<int64_t>{rows, samples}));
  const std::vector<double> u = Uniforms(808, rows * samples);
  T h;
  DT_ASSERT_OK(dt_tensor_to(r, cpu(), DT_INT64, 0, h.out()));
  const std::vector<int64_t> got = values<int64_t>(h);
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<double> cdf(cats);
    double run = 0;
    for (int64_t c = 0; c < cats; ++c) cdf[c] = run += static_cast<double>(w[i * cats + c]);
    for (int64_t s = 0; s < samples; ++s) {
      const double x = u[i * samples + s] * cdf[cats - 1];
      int64_t want = 0;
      while (cdf[want] <= x) ++want;
      ASSERT_EQ(got[i * samples + s], want) << "row " << i << " draw " << s;
      ASSERT_NE(w[i * cats + want], 0.0f) << "drew a category of weight 0";
    }
  }
}

TEST_P(Sampling, MultinomialFrequenciesFollowTheWeights) {
  const std::vector<float> w = {1.0f, 2.0f, 0.0f, 3.0f, 4.0f};  // not normalised
  Weights probs(w, {5}, dev_);
  const int64_t n = 100000;
  T r;
  DT_ASSERT_OK(dt_manual_seed(4321));
  DT_ASSERT_OK(dt_multinomial(probs, n, 1, r.out()));
  EXPECT_EQ(shape_of(r), (std::vector<int64_t>{n}));
  T h;
  DT_ASSERT_OK(dt_tensor_to(r, cpu(), DT_INT64, 0, h.out()));
  std::vector<int64_t> count(5, 0);
  for (int64_t v : values<int64_t>(h)) ++count.at(v);
  EXPECT_EQ(count[2], 0);
  for (int c : {0, 1, 3, 4}) {
    const double p = w[c] / 10.0, mean = n * p, sd = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(count[c]), mean, 5 * sd) << "category " << c;
  }
}

TEST_P(Sampling, MultinomialWithoutReplacementTakesTheLargestWeightOverExponentials) {
  const std::vector<float> w = {0.5f, 0.0f, 2.0f, 1.0f, 0.0f, 0.25f,  //
                                1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const int64_t rows = 2, cats = 6;
  Weights probs(w, {rows, cats}, dev_);
  for (int64_t samples : {1, 3, 6}) {
    T r;
    DT_ASSERT_OK(dt_manual_seed(99 + samples));
    DT_ASSERT_OK(dt_multinomial(probs, samples, 0, r.out()));
    const std::vector<double> u = Uniforms(99 + samples, rows * cats);
    T h;
    DT_ASSERT_OK(dt_tensor_to(r, cpu(), DT_INT64, 0, h.out()));
    const std::vector<int64_t> got = values<int64_t>(h);
    for (int64_t i = 0; i < rows; ++i) {
      std::vector<double> key(cats);
      for (int64_t c = 0; c < cats; ++c) {
        const double p = w[i * cats + c], e = -std::log1p(-u[i * cats + c]);
        key[c] = p > 0 ? p / e : 0.0;
      }
      std::vector<int64_t> order(cats);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] > key[b]; });
      std::vector<int64_t> row(got.begin() + i * samples, got.begin() + (i + 1) * samples);
      EXPECT_EQ(row, std::vector<int64_t>(order.begin(), order.begin() + samples)) << "row " << i;
      EXPECT_EQ(std::set<int64_t>(row.begin(), row.end()).size(), static_cast<size_t>(samples)) << "a repeat";
    }
    if (samples == 6) {  // all of row 0: its two zero-weight categories last, in order
      EXPECT_EQ(got[4], 1);
      EXPECT_EQ(got[5], 4);
    }
  }
}

TEST_P(Sampling, MultinomialFirstDrawsWithoutReplacementFollowTheWeights) {
  const std::vector<float> w = {1.0f, 3.0f, 6.0f};
  std::vector<float> tiled;
  const int64_t rows = 20000;
  for (int64_t i = 0; i < rows; ++i) tiled.insert(tiled.end(), w.begin(), w.end());
  Weights probs(tiled, {rows, 3}, dev_);
  T r;
  DT_ASSERT_OK(dt_manual_seed(17));
  DT_ASSERT_OK(dt_multinomial(probs, 2, 0, r.out()));
  T h;
  DT_ASSERT_OK(dt_tensor_to(r, cpu(), DT_INT64, 0, h.out()));
  const std::vector<int64_t> got = values<int64_t>(h);
  std::vector<int64_t> first(3, 0);
  for (int64_t i = 0; i < rows; ++i) {
    ++first.at(got[2 * i]);
    ASSERT_NE(got[2 * i], got[2 * i + 1]);
  }
  for (int c = 0; c < 3; ++c) {
    const double p = w[c] / 10.0, mean = rows * p, sd = std::sqrt(rows * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(first[c]), mean, 5 * sd) << "category " << c;
  }
}

TEST_P(Sampling, MultinomialRefusesWhatPyTorchRefuses) {
  Weights ok({1.0f, 2.0f, 3.0f}, {3}, dev_);
  auto draw = [](dt_tensor* p, int64_t n, int32_t replacement) {
    return [=](dt_tensor** out) { return dt_multinomial(p, n, replacement, out); };
  };
  ExpectFailure(draw(ok, 0, 1), DT_ERR_INVALID_ARGUMENT, "num_samples must be >= 1, got 0");
  ExpectFailure(draw(ok, 4, 0), DT_ERR_INVALID_ARGUMENT, "cannot draw 4 samples from 3 categories without replacement");
  ExpectFailure(draw(ok, 1, 2), DT_ERR_INVALID_ARGUMENT, "replacement must be 0 or 1");
  Weights negative({1.0f, -1.0f}, {2}, dev_), nan({1.0f, NAN}, {2}, dev_), inf({INFINITY, 1.0f}, {2}, dev_);
  for (dt_tensor* bad : {static_cast<dt_tensor*>(negative), static_cast<dt_tensor*>(nan), static_cast<dt_tensor*>(inf)})
    ExpectFailure(draw(bad, 1, 1), DT_ERR_INVALID_ARGUMENT, "a negative, NaN or infinite weight");
  Weights zero_row({1.0f, 1.0f, 0.0f, 0.0f}, {2, 2}, dev_);
  ExpectFailure(draw(zero_row, 1, 1), DT_ERR_INVALID_ARGUMENT, "weights sum to 0");
  ExpectFailure(draw(zero_row, 1, 0), DT_ERR_INVALID_ARGUMENT, "weights sum to 0");
  Weights cube({1, 1, 1, 1, 1, 1, 1, 1}, {2, 2, 2}, dev_), scalar({1.0f}, {}, dev_);
  ExpectFailure(draw(cube, 1, 1), DT_ERR_INVALID_ARGUMENT, "must be 1-d or 2-d");
  ExpectFailure(draw(scalar, 1, 1), DT_ERR_INVALID_ARGUMENT, "must be 1-d or 2-d");
  Weights none({}, {2, 0}, dev_);
  ExpectFailure(draw(none, 1, 1), DT_ERR_INVALID_ARGUMENT, "no category");
  T ints;
  const int64_t three = 3;
  DT_ASSERT_OK(dt_tensor_ones(&three, 1, DT_INT64, dev_, ints.out()));
  ExpectFailure(draw(ints, 1, 1), DT_ERR_DTYPE_MISMATCH, "expected floating weights but got int64");
  ExpectFailure(draw(nullptr, 1, 1), DT_ERR_INVALID_ARGUMENT, "probs");
  DT_EXPECT_STATUS(dt_multinomial(ok, 1, 1, nullptr), DT_ERR_INVALID_ARGUMENT);
  // No row: an empty result of the right shape.
  Weights no_rows({}, {0, 4}, dev_);
  T empty;
  DT_ASSERT_OK(dt_multinomial(no_rows, 2, 1, empty.out()));
  EXPECT_EQ(shape_of(empty), (std::vector<int64_t>{0, 2}));
}

// ------------------------------------------------------------ nonzero and masked_select

// At a size where the cumsum and the scatter run over many blocks and threads: the
// positions of a random mask's true elements, as found here on the host.
TEST_P(Sampling, NonzeroAndMaskedSelectFindEveryTrueElementOfALargeMask) {
  const int64_t shape[] = {317, 631};
  const int64_t n = shape[0] * shape[1];
  T mask, values, pos, picked;
  DT_ASSERT_OK(dt_manual_seed(606));
  DT_ASSERT_OK(dt_tensor_randint(0, 2, shape, 2, DT_BOOL, dev_, mask.out()));
  DT_ASSERT_OK(dt_tensor_arange(0, static_cast<double>(n), 1, DT_FLOAT64, dev_, values.out()));
  T grid;
  DT_ASSERT_OK(dt_reshape(values, shape, 2, grid.out()));
  DT_ASSERT_OK(dt_nonzero(mask, pos.out()));
  DT_ASSERT_OK(dt_masked_select(grid, mask, picked.out()));
  const std::vector<double> m = AsDoubles(mask);
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i)
    if (m[i] != 0) want.push_back(static_cast<double>(i));
  ASSERT_GT(want.size(), static_cast<size_t>(n / 3));
  EXPECT_EQ(AsDoubles(picked), want);
  EXPECT_EQ(shape_of(pos), (std::vector<int64_t>{static_cast<int64_t>(want.size()), 2}));
  const std::vector<double> rc = AsDoubles(pos);
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(rc[2 * k] * shape[1] + rc[2 * k + 1], want[k]) << "row " << k;
  }
}

// The gradient of a broadcast, transposed input, worked out by hand: t = base^T ([3, 4],
// t[i][j] = base[j][i] = 3j + i), the mask true at flat positions 0, 5, 10, 15, 20 of
// [2, 3, 4], so the selection is t[0][0], t[1][1], t[2][2], t[0][3], t[2][0] = base
// elements 0, 4, 8, 9, 2; weighted 1..5, base's gradient is 1, 2, 3, 4, 5 there. (torch
// 1.13 puts 5 at element 9 and 4 at 2: its backward scatters in memory order.)
TEST_P(Sampling, MaskedSelectGradientOfABroadcastTransposedInput) {
  std::vector<double> d(12);
  for (int i = 0; i < 12; ++i) d[i] = i;
  const int64_t bs[] = {4, 3}, ms[] = {2, 3, 4}, five = 5;
  T host, base, t, mask_host, mask, sel, w_host, w, prod, total, grad;
  DT_ASSERT_OK(dt_tensor_from_data(d.data(), 96, bs, 2, DT_FLOAT64, cpu(), host.out()));
  DT_ASSERT_OK(dt_tensor_to(host, dev_, DT_DTYPE_DEFAULT, DT_TO_COPY, base.out()));
  DT_ASSERT_OK(dt_tensor_set_requires_grad(base, 1));
  DT_ASSERT_OK(dt_transpose(base, 0, 1, t.out()));
  bool m[24];
  for (int i = 0; i < 24; ++i) m[i] = i % 5 == 0;
  DT_ASSERT_OK(dt_tensor_from_data(m, 24, ms, 3, DT_BOOL, cpu(), mask_host.out()));
  DT_ASSERT_OK(dt_tensor_to(mask_host, dev_, DT_DTYPE_DEFAULT, 0, mask.out()));
  DT_ASSERT_OK(dt_masked_select(t, mask, sel.out()));
  EXPECT_EQ(AsDoubles(sel), (std::vector<double>{0, 4, 8, 9, 2}));
  const double wv[] = {1, 2, 3, 4, 5};
  DT_ASSERT_OK(dt_tensor_from_data(wv, sizeof wv, &five, 1, DT_FLOAT64, cpu(), w_host.out()));
  DT_ASSERT_OK(dt_tensor_to(w_host, dev_, DT_DTYPE_DEFAULT, 0, w.out()));
  DT_ASSERT_OK(dt_mul(sel, w, prod.out()));
  DT_ASSERT_OK(dt_sum(prod, nullptr, 0, 0, total.out()));
  DT_ASSERT_OK(dt_backward(total, nullptr));
  DT_ASSERT_OK(dt_tensor_grad(base, grad.out()));
  EXPECT_EQ(AsDoubles(grad), (std::vector<double>{1, 0, 5, 0, 2, 0, 0, 0, 3, 4, 0, 0}));
}

// unique and bincount of 50,000 draws from [0, 1000): the values, counts and inverse
// found here on the host with a histogram, on every device.
TEST_P(Sampling, UniqueAndBincountOfManyDrawsMatchAHostHistogram) {
  const int64_t n = 50000, k = 1000;
  T x, values, inverse, counts, bins;
  DT_ASSERT_OK(dt_manual_seed(909));
  DT_ASSERT_OK(dt_tensor_randint(0, k, &n, 1, DT_INT64, dev_, x.out()));
  DT_ASSERT_OK(dt_unique(x, values.out(), inverse.out(), counts.out()));
  DT_ASSERT_OK(dt_bincount(x, nullptr, 0, bins.out()));
  const std::vector<double> xs = AsDoubles(x);
  std::vector<double> hist(k, 0);
  for (double v : xs) hist[static_cast<size_t>(v)] += 1;
  std::vector<double> want_values, want_counts, rank(k, -1);
  for (int64_t v = 0; v < k; ++v)
    if (hist[v] > 0) {
      rank[v] = static_cast<double>(want_values.size());
      want_values.push_back(static_cast<double>(v));
      want_counts.push_back(hist[v]);
    }
  EXPECT_EQ(AsDoubles(values), want_values);
  EXPECT_EQ(AsDoubles(counts), want_counts);
  const std::vector<double> inv = AsDoubles(inverse);
  ASSERT_EQ(inv.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(inv[i], rank[static_cast<size_t>(xs[i])]) << "element " << i;
  std::vector<double> b = AsDoubles(bins);
  while (b.size() < static_cast<size_t>(k)) b.push_back(0);  // bincount stops at the largest value
  EXPECT_EQ(b, hist);
}

INSTANTIATE_TEST_SUITE_P(Devices, Sampling, ::testing::ValuesIn(DeviceTypes()),
                         [](const ::testing::TestParamInfo<int32_t>& info) { return DeviceName(info.param); });

}  // namespace
