#include "api/testing.h"

#include "api/shim.h"
#include "core/fault_injection.h"

extern "C" {

DT_API void dt_testing_fail_allocation(int64_t nth, int persistent) { dt::fault::arm(nth, persistent != 0); }

DT_API int64_t dt_testing_allocation_count(void) { return dt::fault::allocations_seen(); }

DT_API dt_tensor* dt_testing_age_tensor_handle(dt_tensor* t) {
  void* aged = nullptr;
  dt::api::guard([&] { aged = dt::handle_age_to_last_generation(t, dt::HandleKind::Tensor); });
  return static_cast<dt_tensor*>(aged);
}

}  // extern "C"
