// A small fork-join thread pool for large CPU operations. Work is split into contiguous
// index ranges; results never depend on the thread count (every kernel computes each
// output element the same way whichever thread runs it).
#pragma once
#include <cstdint>
#include <functional>

namespace dt::cpu {

int32_t num_threads();
void set_num_threads(int32_t n);  // caller validated 1..1024

// Runs f(begin, end) over [0, n) in chunks of at least `grain` indices, on up to
// num_threads() threads (the caller's thread included). Runs inline when n <= grain.
// Exceptions from f are rethrown on the caller's thread.
void parallel_for_impl(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

template <typename F>
inline void parallel_for(int64_t n, int64_t grain, const F& f) {
  if (n <= grain || num_threads() == 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  parallel_for_impl(n, grain, f);
}

}  // namespace dt::cpu
