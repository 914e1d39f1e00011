#include "cpu/openmp.h"

#include <dlfcn.h>

namespace dt::cpu {

void set_openmp_threads(int n) {
  using SetThreads = void (*)(int);
  static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set) set(n);
}

}  // namespace dt::cpu
