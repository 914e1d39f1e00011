#include "api/testing.h"

#include "core/fault_injection.h"

extern "C" {

DT_API void dt_testing_fail_allocation(int64_t nth, int persistent) { dt::fault::arm(nth, persistent != 0); }

DT_API int64_t dt_testing_allocation_count(void) { return dt::fault::allocations_seen(); }

}  // extern "C"
