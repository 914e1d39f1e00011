/*
 * fuzz_require.h — the property check of the C fuzz targets. A violated property aborts
 * (a crash for libFuzzer) naming the target (FUZZ_NAME, defined before the include), the
 * condition, the target's own message and the library's last error.
 */
#ifndef DEVTENSOR_FUZZ_REQUIRE_H
#define DEVTENSOR_FUZZ_REQUIRE_H
#include <devtensor.h>

#include <stdio.h>
#include <stdlib.h>

#define REQUIRE(cond, ...)                                                                  \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, "%s: property violated: %s\n  ", FUZZ_NAME, #cond);                  \
      fprintf(stderr, __VA_ARGS__);                                                         \
      fprintf(stderr, "\n  last error: \"%s\"\n", dt_last_error_message());                \
      abort();                                                                              \
    }                                                                                       \
  } while (0)

#endif
