// launch_kernel<&kernel>(device, grid, block, name, args...): kernel<<<grid, block, 0,
// stream(device)>>>(args...) through launch_raw (the driver's cuLaunchKernel on a
// function looked up once), for the launches whose host cost sets the pace of tiny ops.
#pragma once
#include <atomic>
#include <tuple>
#include <utility>

#include "cuda/runtime.h"

namespace dt::cudap {

// The arguments are first converted to the kernel's own parameter types: the driver reads
// each one by address, so their types must match the kernel's exactly.
template <typename... P, typename... A>
void launch_converted(void (*kernel)(P...), std::atomic<void*>* cache, int device, unsigned grid, unsigned block,
                      const char* name, A&&... a) {
  std::tuple<P...> params(std::forward<A>(a)...);
  std::apply(
      [&](auto&... p) {
        void* args[] = {static_cast<void*>(&p)...};
        launch_raw(reinterpret_cast<const void*>(kernel), cache, device, grid, block, args, name);
      },
      params);
}

template <auto Kernel, typename... A>
void launch_kernel(int device, unsigned grid, unsigned block, const char* name, A&&... a) {
  static std::atomic<void*> cache[kMaxDevices];  // this kernel's function, per device
  launch_converted(Kernel, cache, device, grid, block, name, std::forward<A>(a)...);
}

}  // namespace dt::cudap
