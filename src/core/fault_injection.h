// Test-only allocation fault injection, SQLite's method: once armed, the Nth allocation
// made at an injection site fails, either that one alone (transient) or it and every
// later one (persistent). Sites are the library's own allocations: tensor and storage
// records, host and device tensor memory, handles, autograd records, modules'
// safetensors buffers. Disarmed (the default), a site costs one relaxed atomic load.
// Tests reach it through dt_testing_fail_allocation (src/api/testing.h), which is
// exported but not in the public header.
#pragma once
#include <cstdint>

namespace dt::fault {

// True when this allocation should fail. Counts the allocation when armed.
bool allocation_fails() noexcept;

// nth >= 1 arms (the count restarts at 0); nth <= 0 disarms.
void arm(int64_t nth, bool persistent) noexcept;

// Allocations counted since the last arm.
int64_t allocations_seen() noexcept;

}  // namespace dt::fault
