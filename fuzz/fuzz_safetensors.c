/*
 * fuzz_safetensors.c — libFuzzer target for the safetensors loader (dt_safetensors_load).
 *
 * The input is a whole file. It is written to an in-memory file (memfd) and loaded
 * through /proc/self/fd/N, so the loader takes its real path: open, read the header,
 * validate the JSON and the offsets, map the data. Properties:
 *   - a load either succeeds or fails with DT_ERR_FORMAT (or DT_ERR_IO / DT_ERR_DTYPE_MISMATCH
 *     / DT_ERR_OUT_OF_MEMORY) and a non-empty message, and *out stays NULL on failure;
 *   - on success every tensor can be read to its last byte (a sum over each, and a copy
 *     to host memory of exactly its nbytes): a tensor that reached past the mapped file
 *     would crash here (SIGBUS or an ASan report);
 *   - nothing is leaked: the live handle count returns to where it was.
 * Any violated property aborts with a message naming it (a crash for libFuzzer).
 */
#define _GNU_SOURCE
#include <devtensor.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_NAME "fuzz_safetensors"
#include "fuzz_require.h"

static int g_fd = -1;
static char g_path[64];

static void read_every_byte(dt_tensor* t) {
  size_t nbytes = 0;
  REQUIRE(dt_tensor_nbytes(t, &nbytes) == DT_OK, "nbytes of a loaded tensor");
  void* host = malloc(nbytes ? nbytes : 1);
  REQUIRE(host != NULL, "malloc %zu", nbytes);
  REQUIRE(dt_tensor_copy_to_host(t, host, nbytes) == DT_OK, "copy_to_host of a loaded tensor");
  free(host);
  dt_dtype dtype;
  REQUIRE(dt_tensor_dtype(t, &dtype) == DT_OK, "dtype of a loaded tensor");
  if (dtype != DT_BOOL) {  // sum reads through the op path too (bool sums are int64: fine, skip)
    dt_tensor* s = NULL;
    dt_status st = dt_sum(t, NULL, 0, 0, &s);
    REQUIRE(st == DT_OK, "sum of a loaded tensor: status %d", (int)st);
    dt_tensor_release(s);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_fd < 0) {
    g_fd = memfd_create("fuzz_safetensors", 0);
    REQUIRE(g_fd >= 0, "memfd_create");
    snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
  }
  REQUIRE(ftruncate(g_fd, 0) == 0, "ftruncate");
  REQUIRE(size == 0 || pwrite(g_fd, data, size, 0) == (ssize_t)size, "pwrite %zu bytes", size);

  const size_t live = dt_live_handle_count();
  dt_state_dict* sd = NULL;
  dt_status st = dt_safetensors_load(g_path, (dt_device){DT_DEVICE_CPU, 0}, &sd);
  if (st != DT_OK) {
    REQUIRE(st == DT_ERR_FORMAT || st == DT_ERR_IO || st == DT_ERR_DTYPE_MISMATCH || st == DT_ERR_OUT_OF_MEMORY,
            "unexpected status %d for a bad file", (int)st);
    REQUIRE(sd == NULL, "*out was written on failure");
    REQUIRE(dt_last_error_message()[0] != '\0', "a failure without a message");
  } else {
    size_t n = 0;
    REQUIRE(dt_state_dict_count(sd, &n) == DT_OK, "count");
    for (size_t i = 0; i < n; ++i) {
      dt_tensor* t = NULL;
      REQUIRE(dt_state_dict_get(sd, i, &t) == DT_OK, "get %zu of %zu", i, n);
      read_every_byte(t);
      dt_tensor_release(t);
    }
    dt_state_dict_release(sd);
  }
  REQUIRE(dt_live_handle_count() == live, "handles leaked: %zu live, %zu before", dt_live_handle_count(), live);
  return 0;
}
