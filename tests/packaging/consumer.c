/*
 * consumer.c — an out-of-tree C99 program built against an INSTALLED devtensor, once
 * through pkg-config and once through find_package(devtensor). Exits nonzero on failure.
 */
#include <devtensor.h>

#include <stdio.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    dt_status st_ = (call);                                                              \
    if (st_ != DT_OK) {                                                                  \
      fprintf(stderr, "consumer: %s failed: %s: %s\n", #call, dt_status_string(st_),    \
              dt_last_error_message());                                                  \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main(void) {
  const int64_t shape[2] = {2, 2};
  const float av[4] = {1, 2, 3, 4};
  const dt_device cpu = {DT_DEVICE_CPU, 0};
  dt_tensor *a = NULL, *b = NULL, *c = NULL;
  float out[4];
  int i;

  printf("devtensor %s\n", dt_version_string());
  if (dt_version() != (uint32_t)DT_VERSION_NUMBER) {
    fprintf(stderr, "consumer: library version %u != header version %d\n",
            (unsigned)dt_version(), DT_VERSION_NUMBER);
    return 1;
  }
  CHECK(dt_tensor_from_data(av, sizeof av, shape, 2, DT_FLOAT32, cpu, &a));
  CHECK(dt_tensor_ones(shape, 2, DT_FLOAT32, cpu, &b));
  CHECK(dt_add(a, b, &c));
  CHECK(dt_tensor_copy_to_host(c, out, sizeof out));
  for (i = 0; i < 4; ++i) {
    if (out[i] != av[i] + 1.0f) {
      fprintf(stderr, "consumer: element %d is %g, expected %g\n", i, out[i], av[i] + 1.0f);
      return 1;
    }
  }
  CHECK(dt_tensor_release(c));
  CHECK(dt_tensor_release(b));
  CHECK(dt_tensor_release(a));
  if (dt_live_handle_count() != 0) {
    fprintf(stderr, "consumer: %lu live handles after release\n",
            (unsigned long)dt_live_handle_count());
    return 1;
  }
  printf("consumer: OK\n");
  return 0;
}
