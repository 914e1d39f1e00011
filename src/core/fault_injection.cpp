#include "core/fault_injection.h"

#include <atomic>

namespace dt::fault {
namespace {
std::atomic<bool> g_armed{false};
std::atomic<bool> g_persistent{false};
std::atomic<int64_t> g_nth{0};
std::atomic<int64_t> g_count{0};
}  // namespace

bool allocation_fails() noexcept {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const int64_t c = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t nth = g_nth.load(std::memory_order_relaxed);
  return g_persistent.load(std::memory_order_relaxed) ? c >= nth : c == nth;
}

void arm(int64_t nth, bool persistent) noexcept {
  g_armed.store(false);
  g_count.store(0);
  g_nth.store(nth);
  g_persistent.store(persistent);
  g_armed.store(nth >= 1);
}

int64_t allocations_seen() noexcept { return g_count.load(); }

}  // namespace dt::fault
