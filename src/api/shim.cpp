#include "api/shim.h"

#include <cstring>
#include <utility>

#include "core/utf8.h"

namespace dt::api {

namespace {
thread_local std::string t_last_error;

void destroy_tensor(void* object) {
  TensorImpl* impl = static_cast<TensorImpl*>(object);
  if (impl->unref()) TensorImpl::destroy(impl);
}
}  // namespace

void set_error(dt_status code, const char* message) noexcept {
  try {
    // Messages are UTF-8 (the header's promise), even one that quotes a malformed
    // file's bytes: those become the text \xNN.
    t_last_error = escape_invalid_utf8(message);
  } catch (...) {
    (void)code;  // keep the old message if even that fails; the status still tells
  }
}

const char* last_error() noexcept { return t_last_error.c_str(); }

Borrowed tensor_arg(const dt_tensor* h, const char* fn, const char* param) {
  if (!h) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " is NULL"));
  TensorImpl* t = static_cast<TensorImpl*>(handle_resolve(h, HandleKind::Tensor, fn));
  pin_for_call(t);
  return Borrowed(t);
}

Tensor optional_tensor_arg(const dt_tensor* h, const char* fn, const char* param) {
  if (!h) return Tensor();
  Borrowed b = tensor_arg(h, fn, param);
  return b;
}

dt_tensor* new_handle(Tensor t) {
  TensorImpl* impl = t.impl();
  void* h = handle_create(HandleKind::Tensor, impl, destroy_tensor);
  t.release_impl();  // the handle owns this reference now
  return static_cast<dt_tensor*>(h);
}

void require_two_outs(const char* fn, dt_tensor** first, const char* first_name, dt_tensor** second,
                      const char* second_name) {
  require(first, fn, first_name);
  require(second, fn, second_name);
  if (first == second)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", first_name, " and ", second_name, " are the same out-parameter"));
}

void write_two(Tensor first, Tensor second, dt_tensor** out_first, dt_tensor** out_second) {
  write_outs({{std::move(first), out_first}, {std::move(second), out_second}});
}

void write_outs(std::vector<std::pair<Tensor, dt_tensor**>> outs) {
  std::vector<dt_tensor*> made;
  try {
    for (auto& [t, out] : outs)
      if (out) made.push_back(new_handle(std::move(t)));
  } catch (...) {
    for (dt_tensor* h : made) dt_tensor_release(h);
    throw;
  }
  size_t k = 0;
  for (auto& [t, out] : outs)
    if (out) *out = made[k++];
}

Dims dims_arg(const int64_t* shape, size_t ndim, const char* fn, const char* param) {
  if (ndim > static_cast<size_t>(kMaxDims))
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", ndim, " dimensions requested but at most ", kMaxDims, " are supported"));
  if (ndim > 0 && !shape) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " is NULL but ndim is ", ndim));
  return Dims(shape, ndim);
}

void check_string_buffer(const char* buf, size_t cap, const char* fn) {
  if (!buf && cap > 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": buf is NULL but cap is ", cap));
}

void write_string(const std::string& s, char* buf, size_t cap, size_t* needed) {
  if (buf && cap > 0) {
    size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  if (needed) *needed = s.size() + 1;
}

}  // namespace dt::api
