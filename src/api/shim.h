// What every C entry point shares: the catch-all guard that turns exceptions into
// status codes and the thread's error message, argument checks, and tensor handles.
// No math here.
#pragma once
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "api/call_pins.h"
#include "api/handle_table.h"
#include "core/error.h"
#include "core/tensor.h"
#include "devtensor.h"

namespace dt::api {

void set_error(dt_status code, const char* message) noexcept;

// Runs f; any exception becomes a status and a message, and nothing escapes. The
// movable tensors the call pinned are released when it returns (api/call_pins.h).
template <typename F>
dt_status guard(F&& f) noexcept {
  CallScope scope;
  try {
    f();
    return DT_OK;
  } catch (const Error& e) {
    set_error(e.code(), e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_error(DT_ERR_OUT_OF_MEMORY, "out of memory");
    return DT_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(DT_ERR_INTERNAL, (std::string("internal error: ") + e.what()).c_str());
    return DT_ERR_INTERNAL;
  } catch (...) {
    set_error(DT_ERR_INTERNAL, "internal error: unknown exception");
    return DT_ERR_INTERNAL;
  }
}

// Throws INVALID_ARGUMENT naming the function and parameter when p is NULL.
template <typename T>
T* require(T* p, const char* fn, const char* param) {
  if (!p) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " is NULL"));
  return p;
}

// A 0/1 flag argument as a bool; any other value is INVALID_ARGUMENT naming the function
// and parameter.
inline bool flag_arg(int32_t v, const char* fn, const char* param) {
  if (v != 0 && v != 1) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " must be 0 or 1, got ", v));
  return v == 1;
}

// A Tensor that borrows the reference held by the caller's handle for the duration of
// one call: no reference-count traffic. It converts only to `const Tensor&`, so any
// Tensor made from it (stored in a vector, returned) is a counted copy, never a
// stolen reference.
class Borrowed {
 public:
  explicit Borrowed(TensorImpl* p) : t_(Ref<TensorImpl>::adopt(p)) {}
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;
  ~Borrowed() { t_.release_impl(); }
  operator const Tensor&() const { return t_; }
  const Tensor* operator->() const { return &t_; }

 private:
  Tensor t_;
};

// The tensor behind a handle; INVALID_HANDLE when stale, INVALID_ARGUMENT when NULL.
// A module's parameter or buffer is pinned until the entry point returns, so a
// concurrent dt_module_to cannot free its storage during the call.
Borrowed tensor_arg(const dt_tensor* h, const char* fn, const char* param);
// An optional tensor argument (a bias, a class weight): an undefined Tensor for NULL,
// else a counted copy of tensor_arg's.
Tensor optional_tensor_arg(const dt_tensor* h, const char* fn, const char* param);
// Registers t under a new handle; the caller's out-parameter gets it.
dt_tensor* new_handle(Tensor t);
// Two out-parameters (a sort's values and indices, attention's output and weights):
// neither NULL, not the same pointer; written only when both handles exist, so a
// failure leaves both untouched.
void require_two_outs(const char* fn, dt_tensor** first, const char* first_name, dt_tensor** second,
                      const char* second_name);
void write_two(Tensor first, Tensor second, dt_tensor** out_first, dt_tensor** out_second);
// Makes a handle for each (tensor, out) pair whose out is not NULL, then writes them all;
// when one cannot be made, those made are released and no out is written.
void write_outs(std::vector<std::pair<Tensor, dt_tensor**>> outs);

// Shape arguments: (shape, ndim) checked (NULL with ndim > 0, ndim > DT_MAX_DIMS).
Dims dims_arg(const int64_t* shape, size_t ndim, const char* fn, const char* param);

// Writes s with the (buf, cap, needed) protocol. Check `check_string_buffer` first, so
// nothing is computed for a call that will fail.
void check_string_buffer(const char* buf, size_t cap, const char* fn);
void write_string(const std::string& s, char* buf, size_t cap, size_t* needed);

}  // namespace dt::api
