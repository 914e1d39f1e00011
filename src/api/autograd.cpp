// Autograd entry points: requires_grad, grad, grad_fn, detach, backward, grad mode.
#include "api/shim.h"
#include "nn/autograd.h"

using namespace dt;
using namespace dt::api;


extern "C" {

DT_API dt_status dt_tensor_set_requires_grad(dt_tensor* t, int32_t requires_grad) {
  return guard([&] {
    const char* fn = "dt_tensor_set_requires_grad";
    Borrowed x = tensor_arg(t, fn, "t");
    ag::set_requires_grad(x, flag_arg(requires_grad, fn, "requires_grad"));
  });
}

DT_API dt_status dt_tensor_requires_grad(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_requires_grad", "out");
    *out = ag::requires_grad(tensor_arg(t, "dt_tensor_requires_grad", "t")) ? 1 : 0;
  });
}

DT_API dt_status dt_tensor_is_leaf(const dt_tensor* t, int32_t* out) {
  return guard([&] {
    require(out, "dt_tensor_is_leaf", "out");
    *out = ag::is_leaf(tensor_arg(t, "dt_tensor_is_leaf", "t")) ? 1 : 0;
  });
}

DT_API dt_status dt_tensor_grad(const dt_tensor* t, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_grad", "out");
    Tensor g = ag::grad(tensor_arg(t, "dt_tensor_grad", "t"));
    *out = g.defined() ? new_handle(std::move(g)) : nullptr;
  });
}

DT_API dt_status dt_tensor_clear_grad(dt_tensor* t) {
  return guard([&] { ag::set_grad(tensor_arg(t, "dt_tensor_clear_grad", "t"), Tensor()); });
}

DT_API dt_status dt_tensor_grad_fn_name(const dt_tensor* t, char* buf, size_t cap, size_t* needed) {
  return guard([&] {
    check_string_buffer(buf, cap, "dt_tensor_grad_fn_name");
    Node* n = ag::grad_fn(tensor_arg(t, "dt_tensor_grad_fn_name", "t"));
    write_string(n ? n->name() : "", buf, cap, needed);
  });
}

DT_API dt_status dt_tensor_detach(const dt_tensor* t, dt_tensor** out) {
  return guard([&] {
    require(out, "dt_tensor_detach", "out");
    *out = new_handle(ag::detach(tensor_arg(t, "dt_tensor_detach", "t")));
  });
}

DT_API dt_status dt_backward(const dt_tensor* t, const dt_tensor* grad) {
  return guard([&] {
    Borrowed x = tensor_arg(t, "dt_backward", "t");
    ag::backward(x, optional_tensor_arg(grad, "dt_backward", "grad"));
  });
}

DT_API dt_status dt_set_grad_enabled(int32_t enabled) {
  return guard([&] { ag::set_grad_enabled(flag_arg(enabled, "dt_set_grad_enabled", "enabled")); });
}

DT_API dt_status dt_set_thread_grad_mode(int32_t mode, int32_t* previous) {
  return guard([&] {
    if (mode != DT_GRAD_MODE_PROCESS && mode != 0 && mode != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat("dt_set_thread_grad_mode: mode must be 1, 0 or DT_GRAD_MODE_PROCESS (-1), got ", mode));
    const int before = ag::thread_grad_mode();
    ag::set_thread_grad_mode(mode);
    if (previous) *previous = before;
  });
}

DT_API dt_status dt_thread_grad_mode(int32_t* out) {
  return guard([&] { *require(out, "dt_thread_grad_mode", "out") = ag::thread_grad_mode(); });
}

DT_API dt_status dt_grad_enabled(int32_t* out) {
  return guard([&] { *require(out, "dt_grad_enabled", "out") = ag::grad_enabled() ? 1 : 0; });
}

}  // extern "C"
