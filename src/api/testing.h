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

#ifdef __cplusplus
}
#endif
#endif
