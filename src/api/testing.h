/* Test-only entry points of libdevtensor: exported (so tests linked against the shared
 * library reach them) but not part of the public header or its ABI promise. */
#ifndef DEVTENSOR_TESTING_H
#define DEVTENSOR_TESTING_H
#include <stdint.h>

#include "devtensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Allocation fault injection (src/core/fault_injection.h). nth >= 1 makes the nth
 *  allocation at an injection site fail (with persistent != 0, also every later one);
 *  nth <= 0 turns it off. Process-wide, not thread-safe against concurrent arming. */
DT_API void dt_testing_fail_allocation(int64_t nth, int persistent);

/** Allocations counted at injection sites since the last dt_testing_fail_allocation. */
DT_API int64_t dt_testing_allocation_count(void);

/** Gives tensor handle t's slot its last generation (handles carry a 40-bit generation:
 *  src/api/handle_table.h) so that its final release retires the slot, and returns t's
 *  new value; t's old value stops being valid. NULL if t is not a live tensor handle. */
DT_API dt_tensor* dt_testing_age_tensor_handle(dt_tensor* t);

#ifdef __cplusplus
}
#endif
#endif
