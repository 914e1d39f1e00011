// dt_tensor_to_string against PyTorch: every case of tests/reference/print_cases.json
// (written by tests/reference/gen_print_cases.py from PyTorch's own repr) is rebuilt
// through the C ABI (autograd cases through recorded ops on a leaf that requires grad)
// and must print exactly as PyTorch printed it. Also checks the
// (buf, cap, needed) string protocol.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "devtensor.h"

namespace {

using nlohmann::json;

const json& all_cases() {
  static const json cases = [] {
    std::ifstream f(std::string(DT_TEST_DATA_DIR) + "/reference/print_cases.json");
    if (!f) return json::array();
    return json::parse(f)["cases"];
  }();
  return cases;
}

const json& find_case(const std::string& name) {
  for (const json& c : all_cases())
    if (c["name"] == name) return c;
  static const json none;
  return none;
}

dt_dtype dtype_code(const std::string& name) {
  for (dt_dtype d = DT_FLOAT32; d <= DT_BOOL; ++d) {
    const char* n = dt_dtype_name(d);
    if (n && name == n) return d;
  }
  return DT_DTYPE_DEFAULT;
}

std::vector<unsigned char> from_hex(const std::string& hex) {
  std::vector<unsigned char> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

// The whole string via the two-call protocol; also checks *needed and the NUL.
std::string to_string(const dt_tensor* t) {
  size_t needed = 0;
  EXPECT_EQ(dt_tensor_to_string(t, nullptr, 0, &needed), DT_OK) << dt_last_error_message();
  if (needed == 0) return "<needed 0>";
  std::vector<char> buf(needed + 8, '#');
  size_t needed2 = 0;
  EXPECT_EQ(dt_tensor_to_string(t, buf.data(), needed, &needed2), DT_OK);
  EXPECT_EQ(needed2, needed);
  EXPECT_EQ(buf[needed - 1], '\0');
  EXPECT_EQ(std::strlen(buf.data()), needed - 1);
  EXPECT_EQ(buf[needed], '#');  // nothing written past cap
  return std::string(buf.data());
}

// Keeps a handle for the test's duration.
struct Owned {
  dt_tensor* t = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { dt_tensor_release(t); }
  void reset(dt_tensor* n) {
    dt_tensor_release(t);
    t = n;
  }
};

// Restores the process default dtype.
struct DefaultDtypeGuard {
  dt_dtype saved = DT_FLOAT32;
  DefaultDtypeGuard() { dt_default_dtype(&saved); }
  ~DefaultDtypeGuard() { dt_set_default_dtype(saved); }
};

class PrintCase : public ::testing::TestWithParam<size_t> {};

TEST_P(PrintCase, MatchesPyTorch) {
  const json& c = all_cases()[GetParam()];
  const std::string expected = c["expected"];
  SCOPED_TRACE("case " + std::string(c["name"]) + ", expected:\n" + expected);

  dt_device device{DT_DEVICE_CPU, 0};
  if (c.contains("device")) {
    ASSERT_EQ(dt_device_parse(std::string(c["device"]).c_str(), &device), DT_OK);
    size_t count = 0;
    if (device.type == DT_DEVICE_CUDA && !dt_cuda_is_available()) GTEST_SKIP() << "no CUDA";
    ASSERT_EQ(dt_device_count(device.type, &count), DT_OK);
    if (static_cast<size_t>(device.index) >= count)
      GTEST_SKIP() << "device " << std::string(c["device"]) << " not present";
  }

  const size_t live_before = dt_live_handle_count();
  {
    const dt_dtype dtype = dtype_code(c["dtype"]);
    ASSERT_NE(dtype, DT_DTYPE_DEFAULT);
    const std::vector<int64_t> shape = c["shape"].get<std::vector<int64_t>>();
    const std::vector<unsigned char> bytes = from_hex(c["hex"]);
    Owned t;
    ASSERT_EQ(dt_tensor_from_data(bytes.empty() ? nullptr : bytes.data(), bytes.size(),
                                  shape.data(), shape.size(), dtype, device, &t.t),
              DT_OK)
        << dt_last_error_message();
    if (c.contains("requires_grad")) ASSERT_EQ(dt_tensor_set_requires_grad(t.t, 1), DT_OK) << dt_last_error_message();
    if (c.contains("ops")) {
      for (const json& op : c["ops"]) {
        const std::string kind = op[0];
        dt_tensor* next = nullptr;
        dt_status st;
        if (kind == "transpose") {
          st = dt_transpose(t.t, op[1].get<int64_t>(), op[2].get<int64_t>(), &next);
        } else if (kind == "permute") {
          const std::vector<int64_t> dims = op[1].get<std::vector<int64_t>>();
          st = dt_permute(t.t, dims.data(), dims.size(), &next);
        } else if (kind == "narrow") {
          st = dt_narrow(t.t, op[1].get<int64_t>(), op[2].get<int64_t>(), op[3].get<int64_t>(),
                         &next);
        } else if (kind == "mul_scalar") {
          st = dt_mul_scalar(t.t, op[1].get<double>(), &next);
        } else if (kind == "to_dtype") {
          st = dt_tensor_to(t.t, dt_device{DT_DEVICE_DEFAULT, 0}, dtype_code(op[1]), 0, &next);
        } else {
          FAIL() << "unknown op " << kind;
        }
        ASSERT_EQ(st, DT_OK) << kind << ": " << dt_last_error_message();
        t.reset(next);
      }
    }
    DefaultDtypeGuard guard;
    if (c.contains("default_dtype")) {
      ASSERT_EQ(dt_set_default_dtype(dtype_code(c["default_dtype"])), DT_OK);
    }
    EXPECT_EQ(to_string(t.t), expected);
  }
  EXPECT_EQ(dt_live_handle_count(), live_before);
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string n = all_cases()[info.param]["name"];
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

std::vector<size_t> case_indices() {
  std::vector<size_t> v(all_cases().size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

INSTANTIATE_TEST_SUITE_P(Reference, PrintCase, ::testing::ValuesIn(case_indices()), case_name);

TEST(Print, ReferenceFileLoaded) {
  ASSERT_GE(all_cases().size(), 100u) << "tests/reference/print_cases.json missing or short";
}

// A strided view made by dt_tensor_from_blob (no view op involved) prints like the
// transposed case PyTorch printed; so does one starting at an offset into the buffer.
TEST(Print, StridedBlob) {
  const json& c = find_case("t_f32_2d");  // arange(12).reshape(3, 4).t()
  ASSERT_FALSE(c.is_null());
  std::vector<float> data(13);
  for (int i = 0; i < 12; ++i) data[i + 1] = static_cast<float>(i);
  const int64_t shape[2] = {4, 3};
  const int64_t strides[2] = {1, 4};
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_from_blob(data.data() + 1, shape, 2, strides, DT_FLOAT32,
                                dt_device{DT_DEVICE_CPU, 0}, nullptr, nullptr, &t),
            DT_OK)
      << dt_last_error_message();
  EXPECT_EQ(to_string(t), std::string(c["expected"]));
  dt_tensor_release(t);
}

TEST(Print, BufferProtocol) {
  const float v[3] = {1.0f, 2.5f, -3.0f};
  const int64_t shape[1] = {3};
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_from_data(v, sizeof v, shape, 1, DT_FLOAT32, dt_device{DT_DEVICE_CPU, 0}, &t),
            DT_OK);
  const std::string full = "tensor([ 1.0000,  2.5000, -3.0000])";

  // cap 0 with a NULL buffer: only the size (string + NUL).
  size_t needed = 0;
  ASSERT_EQ(dt_tensor_to_string(t, nullptr, 0, &needed), DT_OK);
  EXPECT_EQ(needed, full.size() + 1);

  // cap 0 with a real buffer: nothing written.
  char untouched[4] = {'x', 'x', 'x', 'x'};
  needed = 0;
  ASSERT_EQ(dt_tensor_to_string(t, untouched, 0, &needed), DT_OK);
  EXPECT_EQ(needed, full.size() + 1);
  EXPECT_EQ(untouched[0], 'x');

  // Exact fit.
  std::vector<char> buf(full.size() + 1 + 4, '#');
  ASSERT_EQ(dt_tensor_to_string(t, buf.data(), full.size() + 1, &needed), DT_OK);
  EXPECT_EQ(std::string(buf.data()), full);
  EXPECT_EQ(buf[full.size() + 1], '#');

  // Truncation keeps the NUL inside cap and still reports the full size.
  for (size_t cap : {size_t{1}, size_t{2}, size_t{8}, full.size()}) {
    std::fill(buf.begin(), buf.end(), '#');
    needed = 0;
    ASSERT_EQ(dt_tensor_to_string(t, buf.data(), cap, &needed), DT_OK) << "cap " << cap;
    EXPECT_EQ(needed, full.size() + 1) << "cap " << cap;
    EXPECT_EQ(buf[cap - 1], '\0') << "cap " << cap;
    EXPECT_EQ(std::string(buf.data()), full.substr(0, cap - 1)) << "cap " << cap;
    EXPECT_EQ(buf[cap], '#') << "cap " << cap;
  }

  // needed may be NULL.
  std::fill(buf.begin(), buf.end(), '#');
  ASSERT_EQ(dt_tensor_to_string(t, buf.data(), buf.size(), nullptr), DT_OK);
  EXPECT_EQ(std::string(buf.data()), full);

  // A NULL buffer with cap > 0 is an error, and leaves *needed alone.
  needed = 12345;
  EXPECT_EQ(dt_tensor_to_string(t, nullptr, 10, &needed), DT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(needed, 12345u);

  ASSERT_EQ(dt_tensor_release(t), DT_OK);
  // A released handle is reported, not dereferenced.
  needed = 0;
  EXPECT_EQ(dt_tensor_to_string(t, nullptr, 0, &needed), DT_ERR_INVALID_HANDLE);
  EXPECT_NE(dt_tensor_to_string(nullptr, nullptr, 0, &needed), DT_OK);
}

// The default dtype is read at print time, as in PyTorch.
TEST(Print, FollowsDefaultDtype) {
  const double v[2] = {1.5, 2.0};
  const int64_t shape[1] = {2};
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_from_data(v, sizeof v, shape, 1, DT_FLOAT64, dt_device{DT_DEVICE_CPU, 0}, &t),
            DT_OK);
  {
    DefaultDtypeGuard guard;
    ASSERT_EQ(dt_set_default_dtype(DT_FLOAT32), DT_OK);
    EXPECT_EQ(to_string(t), "tensor([1.5000, 2.0000], dtype=torch.float64)");
    ASSERT_EQ(dt_set_default_dtype(DT_FLOAT64), DT_OK);
    EXPECT_EQ(to_string(t), "tensor([1.5000, 2.0000])");
  }
  dt_tensor_release(t);
}

}  // namespace
