// Binding a dlopened library's entry points (NCCL, cuDNN): each slot is typed by the
// library's own header (decltype of its declaration), so a mismatch fails to compile.
#pragma once
#include <dlfcn.h>

#include <string>

namespace dt::cudap {

// *slot = the symbol `name` of handle; the first missing name goes to *missing.
template <typename F>
bool bind(void* handle, const char* name, F* slot, std::string* missing) {
  *slot = reinterpret_cast<F>(dlsym(handle, name));
  if (!*slot && missing->empty()) *missing = name;
  return *slot != nullptr;
}

}  // namespace dt::cudap
