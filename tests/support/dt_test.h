// Small helpers shared by the C-ABI tests: status assertions that print the library's
// message, RAII for handles, and a fixture that fails on leaked handles.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "devtensor.h"

#define DT_ASSERT_OK(expr)                                                                   \
  do {                                                                                       \
    dt_status s_ = (expr);                                                                   \
    ASSERT_EQ(s_, DT_OK) << #expr << ": " << dt_status_string(s_) << ": " << dt_last_error_message(); \
  } while (0)

#define DT_EXPECT_STATUS(expr, code)                                                         \
  do {                                                                                       \
    dt_status s_ = (expr);                                                                   \
    EXPECT_EQ(s_, code) << #expr << ": " << dt_status_string(s_) << ": " << dt_last_error_message(); \
  } while (0)

// Owns one tensor reference.
class T {
 public:
  T() = default;
  explicit T(dt_tensor* t) : t_(t) {}
  T(const T&) = delete;
  T& operator=(const T&) = delete;
  T(T&& o) noexcept : t_(o.t_) { o.t_ = nullptr; }
  T& operator=(T&& o) noexcept {
    if (this != &o) {
      dt_tensor_release(t_);
      t_ = o.t_;
      o.t_ = nullptr;
    }
    return *this;
  }
  ~T() { dt_tensor_release(t_); }
  dt_tensor** out() { dt_tensor_release(t_); t_ = nullptr; return &t_; }
  dt_tensor* get() const { return t_; }
  operator dt_tensor*() const { return t_; }

 private:
  dt_tensor* t_ = nullptr;
};

// Owns one module reference.
class M {
 public:
  M() = default;
  explicit M(dt_module* m) : m_(m) {}
  M(const M&) = delete;
  M& operator=(const M&) = delete;
  M(M&& o) noexcept : m_(o.m_) { o.m_ = nullptr; }
  M& operator=(M&& o) noexcept {
    if (this != &o) {
      dt_module_release(m_);
      m_ = o.m_;
      o.m_ = nullptr;
    }
    return *this;
  }
  ~M() { dt_module_release(m_); }
  dt_module** out() { return &m_; }
  operator dt_module*() const { return m_; }

 private:
  dt_module* m_ = nullptr;
};

// Owns one reference of a handle type released by Release (a stream, event, graph,
// optimizer, ...).
template <typename H, dt_status (*Release)(H*)>
class Handle {
 public:
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { Release(h_); }
  H** out() {
    Release(h_);
    h_ = nullptr;
    return &h_;
  }
  H* get() const { return h_; }
  operator H*() const { return h_; }

 private:
  H* h_ = nullptr;
};

// Whether an error message (or any text) contains `part`.
inline bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

inline dt_device cpu(int i = 0) { return dt_device{DT_DEVICE_CPU, i}; }

template <typename V>
std::vector<V> values(dt_tensor* t) {
  size_t n = 0;
  dt_tensor_numel(t, &n);
  std::vector<V> v(n);
  dt_status s = dt_tensor_copy_to_host(t, v.data(), n * sizeof(V));
  EXPECT_EQ(s, DT_OK) << dt_last_error_message();
  return v;
}

inline std::vector<int64_t> shape_of(dt_tensor* t) {
  size_t nd = 0;
  dt_tensor_ndim(t, &nd);
  std::vector<int64_t> s(nd);
  dt_tensor_shape(t, s.data(), nd);
  return s;
}

inline std::string str(dt_tensor* t) {
  size_t need = 0;
  dt_tensor_to_string(t, nullptr, 0, &need);
  std::string s(need, '\0');
  dt_tensor_to_string(t, &s[0], need, &need);
  s.resize(need - 1);
  return s;
}

// dt_build_info's text (one "name: value" line per component).
inline std::string build_info_text() {
  size_t need = 0;
  dt_build_info(nullptr, 0, &need);
  std::string s(need, '\0');
  dt_build_info(&s[0], need, &need);
  s.resize(need ? need - 1 : 0);
  return s;
}

// Fails the test if it leaves handles behind.
class LeakChecked : public ::testing::Test {
 protected:
  void SetUp() override { live_ = dt_live_handle_count(); }
  void TearDown() override { EXPECT_EQ(dt_live_handle_count(), live_) << "the test leaked handles"; }

 private:
  size_t live_ = 0;
};
