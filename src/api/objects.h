// Handles of the reference-counted objects other than tensors (modules, optimizers,
// state dicts): resolving a handle to a borrowed object, and registering a new one.
#pragma once
#include "api/handle_table.h"
#include "core/error.h"

namespace dt::api {

// The object behind a live handle of kind K; INVALID_ARGUMENT when NULL, INVALID_HANDLE
// when stale or of another kind. Borrowed: valid while the caller holds the handle.
template <typename T, HandleKind K>
T* object_arg(const void* h, const char* fn, const char* param) {
  if (!h) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " is NULL"));
  return static_cast<T*>(handle_resolve(h, K, fn));
}

// A new handle owning the one reference `obj` was created with (released on failure).
template <typename T, HandleKind K>
void* new_object_handle(T* obj) {
  try {
    return handle_create(K, obj, [](void* o) {
      T* t = static_cast<T*>(o);
      if (t->unref()) T::destroy(t);
    });
  } catch (...) {
    if (obj->unref()) T::destroy(obj);
    throw;
  }
}

// A new handle holding one more reference to an object another one owns (a module's
// child, the module a forward function runs on).
template <typename T, HandleKind K>
void* shared_object_handle(T* obj) {
  obj->ref();
  return new_object_handle<T, K>(obj);
}

}  // namespace dt::api
