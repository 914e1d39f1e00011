/*
 * test_data_parallel.c — DataParallel from pure C99 (ctest "c.test_data_parallel").
 *
 * Over four logical CPU devices (DEVTENSOR_CPU_DEVICES=4, set before the first call), a
 * Linear(4, 3) wrapped in dt_data_parallel_new gives the same outputs and the same
 * weight, bias and input gradients as the plain module for an even batch (8 rows: 2 per
 * device) and uneven ones (6 rows: torch.chunk's 2, 2, 2; 3 rows: one per device for
 * three devices), then checks the wrong-device and invalid-ordinal errors and that no
 * handle leaked. Prints "N passed, N failed"; exits nonzero on any failure.
 */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <devtensor.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed = 0, g_failed = 0;

static void check(int cond, const char* what, int line) {
  if (cond) {
    ++g_passed;
  } else {
    ++g_failed;
    fprintf(stderr, "test_data_parallel.c:%d: FAILED: %s (last error: \"%s\")\n", line, what, dt_last_error_message());
  }
}
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __LINE__)
#define CHECK_OK(call) check((call) == DT_OK, #call " == DT_OK", __LINE__)
#define CHECK_ERR(call, code) check((call) == (code), #call " == " #code, __LINE__)

#define MAX_ROWS 8
static const dt_device DEFAULT_DEVICE = {DT_DEVICE_DEFAULT, 0};

/* What one forward and backward gives: the output, then the weight, bias and input
 * gradients, as float32 values one after another. */
typedef struct {
  float out[MAX_ROWS * 3];
  float grad_w[3 * 4], grad_b[3], grad_x[MAX_ROWS * 4];
} step_result;

/* sum(m(x) * c) for fixed c, backward, and every value of step_result. */
static int step(dt_module* m, dt_module* params_of, int64_t rows, step_result* r) {
  float xs[MAX_ROWS * 4], cs[MAX_ROWS * 3];
  const int64_t xshape[2] = {rows, 4}, cshape[2] = {rows, 3};
  dt_tensor *x = NULL, *c = NULL, *out = NULL, *prod = NULL, *total = NULL, *w = NULL, *b = NULL;
  dt_tensor *gw = NULL, *gb = NULL, *gx = NULL;
  const dt_tensor* in[1];
  int64_t i;
  int ok = 1;
  for (i = 0; i < rows * 4; ++i) xs[i] = (float)sin(0.7 * (double)i + 0.2);
  for (i = 0; i < rows * 3; ++i) cs[i] = (float)(1 + i % 5);
  ok &= dt_tensor_from_data(xs, sizeof(float) * (size_t)(rows * 4), xshape, 2, DT_FLOAT32, DEFAULT_DEVICE, &x) == DT_OK;
  ok &= dt_tensor_from_data(cs, sizeof(float) * (size_t)(rows * 3), cshape, 2, DT_FLOAT32, DEFAULT_DEVICE, &c) == DT_OK;
  ok &= ok && dt_tensor_set_requires_grad(x, 1) == DT_OK;
  in[0] = x;
  ok &= ok && dt_module_forward(m, in, 1, &out) == DT_OK;
  ok &= ok && dt_mul(out, c, &prod) == DT_OK;
  ok &= ok && dt_sum(prod, NULL, 0, 0, &total) == DT_OK;
  ok &= ok && dt_backward(total, NULL) == DT_OK;
  ok &= ok && dt_module_parameter(params_of, 0, NULL, 0, NULL, &w) == DT_OK;
  ok &= ok && dt_module_parameter(params_of, 1, NULL, 0, NULL, &b) == DT_OK;
  ok &= ok && dt_tensor_grad(w, &gw) == DT_OK && dt_tensor_grad(b, &gb) == DT_OK && dt_tensor_grad(x, &gx) == DT_OK;
  ok &= ok && gw && gb && gx;
  ok &= ok && dt_tensor_copy_to_host(out, r->out, sizeof(float) * (size_t)(rows * 3)) == DT_OK;
  ok &= ok && dt_tensor_copy_to_host(gw, r->grad_w, sizeof r->grad_w) == DT_OK;
  ok &= ok && dt_tensor_copy_to_host(gb, r->grad_b, sizeof r->grad_b) == DT_OK;
  ok &= ok && dt_tensor_copy_to_host(gx, r->grad_x, sizeof(float) * (size_t)(rows * 4)) == DT_OK;
  ok &= ok && dt_tensor_clear_grad(w) == DT_OK && dt_tensor_clear_grad(b) == DT_OK;
  dt_tensor_release(x);
  dt_tensor_release(c);
  dt_tensor_release(out);
  dt_tensor_release(prod);
  dt_tensor_release(total);
  dt_tensor_release(w);
  dt_tensor_release(b);
  dt_tensor_release(gw);
  dt_tensor_release(gb);
  dt_tensor_release(gx);
  return ok;
}

static int close_all(const float* got, const float* want, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i)
    if (fabs((double)got[i] - (double)want[i]) > 1e-5 + 1e-5 * fabs((double)want[i])) return 0;
  return 1;
}

static void test_matches_plain_module(void) {
  const dt_device devices[4] = {{DT_DEVICE_CPU, 0}, {DT_DEVICE_CPU, 1}, {DT_DEVICE_CPU, 2}, {DT_DEVICE_CPU, 3}};
  const int64_t batches[3] = {8, 6, 3};
  dt_module *lin = NULL, *dp = NULL;
  int k;
  CHECK_OK(dt_manual_seed(3));
  CHECK_OK(dt_linear_new(4, 3, 1, DT_FLOAT32, devices[0], &lin));
  CHECK_OK(dt_data_parallel_new(lin, devices, 4, DEFAULT_DEVICE, &dp));
  for (k = 0; k < 3; ++k) {
    const int64_t rows = batches[k];
    step_result plain, split;
    memset(&plain, 0, sizeof plain);
    memset(&split, 0, sizeof split);
    CHECK(step(lin, lin, rows, &plain));
    CHECK(step(dp, lin, rows, &split));
    CHECK(close_all(split.out, plain.out, (size_t)(rows * 3)));
    CHECK(close_all(split.grad_w, plain.grad_w, 12));
    CHECK(close_all(split.grad_b, plain.grad_b, 3));
    CHECK(close_all(split.grad_x, plain.grad_x, (size_t)(rows * 4)));
  }
  dt_module_release(dp);
  dt_module_release(lin);
}

static void test_errors(void) {
  const dt_device on_first[2] = {{DT_DEVICE_CPU, 0}, {DT_DEVICE_CPU, 1}};
  const dt_device bad_ordinal[2] = {{DT_DEVICE_CPU, 0}, {DT_DEVICE_CPU, 4}};
  const dt_device cpu1 = {DT_DEVICE_CPU, 1};
  const int64_t shape[2] = {2, 4};
  dt_module *lin = NULL, *dp = NULL, *untouched = NULL;
  dt_tensor *x = NULL, *out = NULL;
  const dt_tensor* in[1];
  CHECK_OK(dt_linear_new(4, 3, 1, DT_FLOAT32, cpu1, &lin)); /* on cpu:1, not device_ids[0] */
  CHECK_OK(dt_data_parallel_new(lin, on_first, 2, DEFAULT_DEVICE, &dp));
  CHECK_OK(dt_tensor_zeros(shape, 2, DT_FLOAT32, DEFAULT_DEVICE, &x));
  in[0] = x;
  CHECK_ERR(dt_module_forward(dp, in, 1, &out), DT_ERR_DEVICE_MISMATCH);
  CHECK(out == NULL);
  CHECK(strstr(dt_last_error_message(), "on device cpu:0 (device_ids[0]) but found one of them on device: cpu:1") !=
        NULL);
  CHECK_ERR(dt_data_parallel_new(lin, bad_ordinal, 2, DEFAULT_DEVICE, &untouched), DT_ERR_INVALID_DEVICE);
  CHECK(strstr(dt_last_error_message(), "device_ids[1]") != NULL);
  CHECK(untouched == NULL);
  dt_tensor_release(x);
  dt_module_release(dp);
  dt_module_release(lin);
}

int main(void) {
  size_t live = 0, n = 0;
  setenv("DEVTENSOR_CPU_DEVICES", "4", 1);
  CHECK_OK(dt_device_count(DT_DEVICE_CPU, &n));
  CHECK(n == 4);
  live = dt_live_handle_count();
  test_matches_plain_module();
  test_errors();
  CHECK(dt_live_handle_count() == live);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed ? 1 : 0;
}
