/*
 * test_header.c — a pure C99 test of the public header (ctest "c.test_header").
 *
 * Compiled with -std=c99 -pedantic -Wall -Wextra -Werror, so it also proves the header is
 * valid C99. Exercises versions, status strings, devices, constructors, queries, to(),
 * ops, views, host-memory sharing and the error contract (codes, messages, untouched
 * out-parameters, invalid handles), then checks no handle leaked.
 * Prints "N passed, N failed"; exits nonzero on any failure.
 */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <devtensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed = 0, g_failed = 0;

static void check(int cond, const char* what, const char* file, int line) {
  if (cond) {
    ++g_passed;
  } else {
    ++g_failed;
    fprintf(stderr, "%s:%d: FAILED: %s (last error: \"%s\")\n", file, line, what,
            dt_last_error_message());
  }
}
#define CHECK(cond) check((cond) ? 1 : 0, #cond, __FILE__, __LINE__)
#define CHECK_OK(call) check((call) == DT_OK, #call " == DT_OK", __FILE__, __LINE__)
#define CHECK_ERR(call, code) check((call) == (code), #call " == " #code, __FILE__, __LINE__)

static const int64_t S3[1] = {3};
static const int64_t S23[2] = {2, 3};
static const dt_device CPU0 = {DT_DEVICE_CPU, 0};
static const dt_device CPU1 = {DT_DEVICE_CPU, 1};
static const dt_device DEFAULT_DEVICE = {DT_DEVICE_DEFAULT, 0};

static double absd(double x) { return x < 0 ? -x : x; }

/* Copies a float32 tensor's elements to host; 0 on failure. */
static int read_f32(const dt_tensor* t, float* out, size_t n) {
  return dt_tensor_copy_to_host(t, out, n * sizeof(float)) == DT_OK;
}

static void test_version(void) {
  char expect[32];
  CHECK(dt_version() == (uint32_t)DT_VERSION_NUMBER);
  snprintf(expect, sizeof expect, "%d.%d.%d", DT_VERSION_MAJOR, DT_VERSION_MINOR,
           DT_VERSION_PATCH);
  CHECK(dt_version_string() != NULL && strcmp(dt_version_string(), expect) == 0);
  {
    size_t needed = 0;
    char buf[4096];
    CHECK_OK(dt_build_info(NULL, 0, &needed));
    CHECK(needed > 1 && needed <= sizeof buf);
    CHECK_OK(dt_build_info(buf, sizeof buf, NULL));
    CHECK(strlen(buf) + 1 == needed);
    CHECK(strstr(buf, ": ") != NULL);
    CHECK_ERR(dt_build_info(NULL, 4, &needed), DT_ERR_INVALID_ARGUMENT);
  }
}

static void test_status_strings(void) {
  dt_status c;
  CHECK(dt_last_error_message() != NULL);
  for (c = DT_OK; c <= DT_ERR_INTERNAL; ++c) {
    const char* s = dt_status_string(c);
    CHECK(s != NULL && s[0] != '\0' && strcmp(s, "unknown status") != 0);
  }
  CHECK(strcmp(dt_status_string(9999), "unknown status") == 0);
  CHECK(strcmp(dt_status_string(-1), "unknown status") == 0);
  CHECK(strcmp(dt_status_string(DT_ERR_INVALID_ARGUMENT), "invalid argument") == 0);
}

static void test_devices(void) {
  dt_device d = {-5, -5};
  char buf[32];
  size_t needed = 0, n_cpu = 0, n_cuda = 99, count = 0;
  int32_t state = -1;

  CHECK_OK(dt_device_parse("cpu", &d));
  CHECK(d.type == DT_DEVICE_CPU && d.index == 0);
  CHECK_OK(dt_device_parse("cuda", &d));
  CHECK(d.type == DT_DEVICE_CUDA && d.index == 0);
  CHECK_OK(dt_device_parse("cuda:1", &d));
  CHECK(d.type == DT_DEVICE_CUDA && d.index == 1);
  CHECK_OK(dt_device_parse("cpu:3", &d));
  CHECK(d.type == DT_DEVICE_CPU && d.index == 3);
  d.type = 42;
  d.index = 43;
  CHECK_ERR(dt_device_parse("gpu", &d), DT_ERR_INVALID_ARGUMENT);
  CHECK(d.type == 42 && d.index == 43); /* untouched on failure */
  CHECK(dt_last_error_message()[0] != '\0');
  CHECK_ERR(dt_device_parse("cuda:-1", &d), DT_ERR_INVALID_ARGUMENT);
  CHECK_ERR(dt_device_parse("cuda:x", &d), DT_ERR_INVALID_ARGUMENT);
  CHECK_ERR(dt_device_parse("cuda:99999999999999999999", &d), DT_ERR_INVALID_ARGUMENT);
  CHECK_ERR(dt_device_parse(NULL, &d), DT_ERR_INVALID_ARGUMENT);

  d.type = DT_DEVICE_CUDA;
  d.index = 1;
  CHECK_OK(dt_device_format(d, NULL, 0, &needed));
  CHECK(needed == 7);
  CHECK_OK(dt_device_format(d, buf, sizeof buf, &needed));
  CHECK(strcmp(buf, "cuda:1") == 0);
  CHECK_OK(dt_device_format(d, buf, 3, &needed)); /* truncates like snprintf */
  CHECK(strcmp(buf, "cu") == 0 && needed == 7);
  CHECK_OK(dt_device_format(CPU0, buf, sizeof buf, NULL));
  CHECK(strcmp(buf, "cpu:0") == 0);
  d.index = -1;
  CHECK_ERR(dt_device_format(d, buf, sizeof buf, NULL), DT_ERR_INVALID_ARGUMENT);

  CHECK_OK(dt_device_count(DT_DEVICE_CPU, &n_cpu));
  CHECK(n_cpu >= 1);
  CHECK_OK(dt_device_count(DT_DEVICE_CUDA, &n_cuda));
  CHECK_ERR(dt_device_count(77, &n_cpu), DT_ERR_INVALID_ARGUMENT);
  CHECK_OK(dt_cuda_status(&state, NULL, 0, &needed));
  CHECK(needed > 1);
  CHECK(state >= DT_CUDA_AVAILABLE && state <= DT_CUDA_ALL_HIDDEN);
  CHECK((state == DT_CUDA_AVAILABLE) == (dt_cuda_is_available() == 1));
  CHECK((n_cuda > 0) == (dt_cuda_is_available() == 1));
  CHECK_ERR(dt_cuda_status(NULL, NULL, 0, &needed), DT_ERR_INVALID_ARGUMENT);

  {
    char name[256];
    uint64_t free_b = 0, total_b = 0;
    dt_device_props props;
    dt_device missing = {DT_DEVICE_CPU, 0};
    missing.index = (int32_t)n_cpu; /* one past the last CPU device */
    CHECK_OK(dt_device_name(CPU0, name, sizeof name, NULL));
    CHECK(name[0] != '\0');
    CHECK_OK(dt_device_memory(CPU0, &free_b, &total_b));
    CHECK(total_b > 0 && free_b <= total_b);
    CHECK_ERR(dt_device_name(missing, name, sizeof name, NULL), DT_ERR_INVALID_DEVICE);
    memset(&props, 0, sizeof props);
    props.struct_size = sizeof props;
    CHECK_OK(dt_device_properties(CPU0, &props));
    CHECK(props.device.type == DT_DEVICE_CPU && props.device.index == 0);
    CHECK(props.total_memory > 0 && props.multiprocessor_count >= 1);
    CHECK(props.compute_capability_major == 0 && props.uuid[0] == '\0');
    props.struct_size = 1;
    CHECK_ERR(dt_device_properties(CPU0, &props), DT_ERR_INVALID_ARGUMENT);
    if (n_cuda == 0) {
      dt_device cuda0 = {DT_DEVICE_CUDA, 0};
      dt_status st = dt_device_name(cuda0, name, sizeof name, NULL);
      CHECK(st == DT_ERR_DEVICE_UNAVAILABLE || st == DT_ERR_INVALID_DEVICE);
    }
  }

  CHECK_OK(dt_try_gpu(0, &d));
  CHECK(n_cuda > 0 ? (d.type == DT_DEVICE_CUDA && d.index == 0)
                   : (d.type == DT_DEVICE_CPU && d.index == 0));
  CHECK_ERR(dt_try_gpu(-1, &d), DT_ERR_INVALID_ARGUMENT);
  CHECK_OK(dt_all_gpus(NULL, 0, &count));
  CHECK(count == (n_cuda > 0 ? n_cuda : 1));
  CHECK_OK(dt_devices_by_free_memory(NULL, 0, &count));
  CHECK(count == (n_cuda > 0 ? n_cuda : 1));
  if (n_cuda == 0) {
    dt_device one = {-1, -1};
    CHECK_OK(dt_devices_by_free_memory(&one, 1, &count));
    CHECK(one.type == DT_DEVICE_CPU && one.index == 0);
  }
  CHECK_ERR(dt_all_gpus(NULL, 1, &count), DT_ERR_INVALID_ARGUMENT);

  {
    dt_device def = {-1, -1};
    dt_dtype dt = -1;
    CHECK_OK(dt_default_device(&def));
    CHECK(def.type == DT_DEVICE_CPU && def.index == 0);
    CHECK_OK(dt_default_dtype(&dt));
    CHECK(dt == DT_FLOAT32);
    CHECK_ERR(dt_set_default_dtype(DT_INT32), DT_ERR_DTYPE_MISMATCH);
    CHECK_ERR(dt_set_default_dtype(99), DT_ERR_INVALID_ARGUMENT);
  }
  {
    dt_mem_stats ms;
    memset(&ms, 0, sizeof ms);
    ms.struct_size = sizeof ms;
    CHECK_OK(dt_memory_stats(CPU0, &ms));
    CHECK_OK(dt_synchronize(CPU0));
    CHECK_OK(dt_empty_cache(CPU0));
  }
  {
    int32_t nt = 0;
    CHECK_OK(dt_num_threads(&nt));
    CHECK(nt >= 1);
    CHECK_ERR(dt_set_num_threads(0), DT_ERR_INVALID_ARGUMENT);
  }
}

static void test_constructors(void) {
  dt_tensor *t = NULL, *sentinel = (dt_tensor*)&g_passed, *out;
  int64_t shape[4];
  size_t ndim = 0, numel = 0, nbytes = 0;
  dt_dtype dt = 0;
  dt_device dev = {-1, -1};
  float f[6];

  CHECK_OK(dt_tensor_zeros(S23, 2, DT_DTYPE_DEFAULT, DEFAULT_DEVICE, &t));
  CHECK_OK(dt_tensor_ndim(t, &ndim));
  CHECK(ndim == 2);
  CHECK_OK(dt_tensor_shape(t, shape, 4));
  CHECK(shape[0] == 2 && shape[1] == 3);
  CHECK_ERR(dt_tensor_shape(t, shape, 1), DT_ERR_INVALID_ARGUMENT);
  CHECK_OK(dt_tensor_strides(t, shape, 4));
  CHECK(shape[0] == 3 && shape[1] == 1);
  CHECK_OK(dt_tensor_dtype(t, &dt));
  CHECK(dt == DT_FLOAT32);
  CHECK_OK(dt_tensor_device(t, &dev));
  CHECK(dev.type == DT_DEVICE_CPU && dev.index == 0);
  CHECK_OK(dt_tensor_numel(t, &numel));
  CHECK(numel == 6);
  CHECK_OK(dt_tensor_nbytes(t, &nbytes));
  CHECK(nbytes == 24);
  CHECK(read_f32(t, f, 6) && f[0] == 0.0f && f[5] == 0.0f);
  CHECK_OK(dt_tensor_release(t));

  CHECK_OK(dt_tensor_ones(S23, 2, DT_FLOAT32, CPU0, &t));
  CHECK(read_f32(t, f, 6) && f[0] == 1.0f && f[5] == 1.0f);
  CHECK_OK(dt_tensor_release(t));

  CHECK_OK(dt_tensor_full(S3, 1, 2.5, DT_FLOAT64, CPU0, &t));
  {
    double d[3] = {0, 0, 0};
    CHECK_OK(dt_tensor_copy_to_host(t, d, sizeof d));
    CHECK(d[0] == 2.5 && d[2] == 2.5);
    CHECK_ERR(dt_tensor_copy_to_host(t, d, sizeof d - 1), DT_ERR_INVALID_ARGUMENT);
  }
  CHECK_OK(dt_tensor_release(t));

  /* arange with integral bounds is int64 */
  CHECK_OK(dt_tensor_arange(0, 5, 1, DT_DTYPE_DEFAULT, DEFAULT_DEVICE, &t));
  CHECK_OK(dt_tensor_dtype(t, &dt));
  CHECK(dt == DT_INT64);
  {
    int64_t v[5];
    CHECK_OK(dt_tensor_copy_to_host(t, v, sizeof v));
    CHECK(v[0] == 0 && v[4] == 4);
  }
  CHECK_OK(dt_tensor_release(t));
  CHECK_OK(dt_tensor_arange(0, 1, 0.25, DT_DTYPE_DEFAULT, DEFAULT_DEVICE, &t));
  CHECK_OK(dt_tensor_dtype(t, &dt));
  CHECK(dt == DT_FLOAT32);
  CHECK_OK(dt_tensor_numel(t, &numel));
  CHECK(numel == 4);
  CHECK_OK(dt_tensor_release(t));
  out = sentinel;
  CHECK_ERR(dt_tensor_arange(0, 5, 0, DT_DTYPE_DEFAULT, DEFAULT_DEVICE, &out),
            DT_ERR_INVALID_ARGUMENT);
  CHECK(out == sentinel);

  /* 0-d tensor with a NULL shape */
  CHECK_OK(dt_tensor_full(NULL, 0, 7, DT_INT32, CPU0, &t));
  CHECK_OK(dt_tensor_ndim(t, &ndim));
  CHECK_OK(dt_tensor_numel(t, &numel));
  CHECK(ndim == 0 && numel == 1);
  {
    double v = 0;
    CHECK_OK(dt_tensor_item(t, &v));
    CHECK(v == 7.0);
  }
  CHECK_OK(dt_tensor_release(t));

  /* rand is seeded and in [0, 1) */
  {
    float a[6], b[6];
    int k, same = 1, in_range = 1;
    CHECK_OK(dt_manual_seed(1234));
    CHECK_OK(dt_tensor_rand(S23, 2, DT_FLOAT32, CPU0, &t));
    CHECK(read_f32(t, a, 6));
    CHECK_OK(dt_tensor_release(t));
    CHECK_OK(dt_manual_seed(1234));
    CHECK_OK(dt_tensor_rand(S23, 2, DT_FLOAT32, CPU0, &t));
    CHECK(read_f32(t, b, 6));
    CHECK_OK(dt_tensor_release(t));
    for (k = 0; k < 6; ++k) {
      same = same && a[k] == b[k];
      in_range = in_range && a[k] >= 0.0f && a[k] < 1.0f;
    }
    CHECK(same && in_range);
    out = sentinel;
    CHECK_ERR(dt_tensor_rand(S23, 2, DT_INT32, CPU0, &out), DT_ERR_DTYPE_MISMATCH);
    CHECK(out == sentinel);
    CHECK_OK(dt_tensor_randn(S23, 2, DT_FLOAT64, CPU0, &t));
    CHECK_OK(dt_tensor_release(t));
  }

  /* errors leave the out-parameter alone */
  {
    int64_t bad[2] = {2, -1};
    dt_device nowhere = {DT_DEVICE_CPU, 1000};
    out = sentinel;
    CHECK_ERR(dt_tensor_zeros(bad, 2, DT_FLOAT32, CPU0, &out), DT_ERR_INVALID_ARGUMENT);
    CHECK(out == sentinel);
    CHECK_ERR(dt_tensor_zeros(S3, 1, 99, CPU0, &out), DT_ERR_INVALID_ARGUMENT);
    CHECK_ERR(dt_tensor_zeros(S3, 1, DT_FLOAT32, CPU0, NULL), DT_ERR_INVALID_ARGUMENT);
    {
      int64_t many[DT_MAX_DIMS + 1];
      int k;
      for (k = 0; k <= DT_MAX_DIMS; ++k) many[k] = 1;
      CHECK_ERR(dt_tensor_zeros(many, DT_MAX_DIMS + 1, DT_FLOAT32, CPU0, &out),
                DT_ERR_INVALID_ARGUMENT);
    }
    CHECK_ERR(dt_tensor_zeros(S3, 1, DT_FLOAT32, nowhere, &out), DT_ERR_INVALID_DEVICE);
    CHECK(out == sentinel);
    CHECK(strstr(dt_last_error_message(), "cpu:1000") != NULL);
  }

  /* from_data copies */
  {
    float src[6] = {1, 2, 3, 4, 5, 6};
    CHECK_OK(dt_tensor_from_data(src, sizeof src, S23, 2, DT_FLOAT32, CPU0, &t));
    src[0] = 100;
    CHECK(read_f32(t, f, 6) && f[0] == 1.0f && f[5] == 6.0f);
    CHECK_ERR(dt_tensor_from_data(src, sizeof src - 4, S23, 2, DT_FLOAT32, CPU0, &out),
              DT_ERR_INVALID_ARGUMENT);
    /* like / new constructors keep dtype and device */
    {
      dt_tensor *z, *n;
      int64_t s4[1] = {4};
      CHECK_OK(dt_full_like(t, 3, &z));
      CHECK(read_f32(z, f, 6) && f[0] == 3.0f);
      CHECK_OK(dt_tensor_new_ones(t, s4, 1, &n));
      CHECK_OK(dt_tensor_dtype(n, &dt));
      CHECK_OK(dt_tensor_numel(n, &numel));
      CHECK(dt == DT_FLOAT32 && numel == 4);
      CHECK_OK(dt_tensor_release(z));
      CHECK_OK(dt_tensor_release(n));
    }
    CHECK_OK(dt_tensor_release(t));
  }

  CHECK(dt_dtype_name(DT_FLOAT32) != NULL && strcmp(dt_dtype_name(DT_FLOAT32), "float32") == 0);
  CHECK(dt_dtype_name(DT_BFLOAT16) != NULL && strcmp(dt_dtype_name(DT_BFLOAT16), "bfloat16") == 0);
  CHECK(dt_dtype_name(99) == NULL);
  CHECK_OK(dt_dtype_size(DT_FLOAT16, &nbytes));
  CHECK(nbytes == 2);
  CHECK_ERR(dt_dtype_size(0, &nbytes), DT_ERR_INVALID_ARGUMENT);
}

static int g_deleted = 0;
static void on_delete(void* data, void* ctx) {
  (void)data;
  *(int*)ctx += 1;
}

static void test_from_blob(void) {
  float host[6] = {0, 1, 2, 3, 4, 5};
  dt_tensor *t, *v, *out = NULL;
  void* p = NULL;
  float f[6];
  int64_t strides[2] = {1, 2}; /* column-major view of a 2x3 */

  g_deleted = 0;
  CHECK_OK(dt_tensor_from_blob(host, S23, 2, NULL, DT_FLOAT32, CPU0, on_delete, &g_deleted, &t));
  CHECK_OK(dt_tensor_data_ptr(t, &p));
  CHECK(p == (void*)host);
  host[1] = 42;                                  /* host -> tensor */
  CHECK(read_f32(t, f, 6) && f[1] == 42.0f);
  CHECK_OK(dt_mul_scalar_(t, 2));                /* tensor -> host */
  CHECK(host[1] == 84.0f && host[5] == 10.0f);
  CHECK_OK(dt_transpose(t, 0, 1, &v));           /* a view keeps the memory alive */
  CHECK_OK(dt_tensor_release(t));
  CHECK(g_deleted == 0);
  CHECK_OK(dt_tensor_release(v));
  CHECK(g_deleted == 1);

  CHECK_OK(dt_tensor_from_blob(host, S23, 2, strides, DT_FLOAT32, CPU0, NULL, NULL, &t));
  {
    int32_t contig = 1;
    CHECK_OK(dt_tensor_is_contiguous(t, &contig));
    CHECK(contig == 0);
  }
  CHECK(read_f32(t, f, 6) && f[0] == host[0] && f[1] == host[2] && f[3] == host[1]);
  CHECK_OK(dt_tensor_release(t));

  g_deleted = 0;
  {
    dt_device cuda0 = {DT_DEVICE_CUDA, 0};
    dt_status st = dt_tensor_from_blob(host, S23, 2, NULL, DT_FLOAT32, cuda0, on_delete,
                                       &g_deleted, &out);
    /* not supported for a device tensor; without CUDA, the device is unavailable first */
    CHECK(st == DT_ERR_NOT_SUPPORTED ||
          (!dt_cuda_is_available() && st == DT_ERR_DEVICE_UNAVAILABLE));
    CHECK(out == NULL && g_deleted == 0); /* on failure the deleter does not run */
  }
}

static void test_to(size_t n_cpu) {
  dt_tensor *a, *b, *c;
  dt_dtype dt = 0;
  dt_device dev;
  int32_t shares = 1;
  float f[3];
  float src[3] = {1.5f, -2.7f, 3.0f};

  CHECK_OK(dt_tensor_from_data(src, sizeof src, S3, 1, DT_FLOAT32, CPU0, &a));
  CHECK_OK(dt_tensor_to(a, DEFAULT_DEVICE, DT_DTYPE_DEFAULT, 0, &b));
  CHECK(b == a); /* nothing changes: an alias */
  CHECK_OK(dt_tensor_release(b));
  CHECK_OK(dt_tensor_to(a, CPU0, DT_FLOAT32, 0, &b));
  CHECK(b == a);
  CHECK_OK(dt_tensor_release(b));
  CHECK_OK(dt_tensor_to(a, CPU0, DT_FLOAT32, DT_TO_COPY, &b));
  CHECK(b != a);
  CHECK_OK(dt_tensor_shares_storage(a, b, &shares));
  CHECK(shares == 0);
  CHECK_OK(dt_tensor_release(b));

  CHECK_OK(dt_tensor_to(a, DEFAULT_DEVICE, DT_INT32, 0, &b));
  CHECK(b != a);
  CHECK_OK(dt_tensor_dtype(b, &dt));
  CHECK(dt == DT_INT32);
  {
    int32_t v[3];
    CHECK_OK(dt_tensor_copy_to_host(b, v, sizeof v));
    CHECK(v[0] == 1 && v[1] == -2 && v[2] == 3); /* truncation toward zero */
  }
  CHECK_OK(dt_tensor_dtype(a, &dt));
  CHECK(dt == DT_FLOAT32); /* the source is unchanged */
  CHECK(read_f32(a, f, 3) && f[0] == 1.5f && f[1] == -2.7f);
  CHECK_OK(dt_tensor_release(b));

  if (n_cpu >= 2) {
    CHECK_OK(dt_tensor_to(a, CPU1, DT_DTYPE_DEFAULT, 0, &b));
    CHECK_OK(dt_tensor_device(b, &dev));
    CHECK(b != a && dev.type == DT_DEVICE_CPU && dev.index == 1);
    CHECK_OK(dt_tensor_device(a, &dev));
    CHECK(dev.index == 0);
    CHECK(read_f32(b, f, 3) && f[0] == 1.5f && f[2] == 3.0f);
    /* mixing devices fails, naming both */
    c = (dt_tensor*)&g_passed;
    CHECK_ERR(dt_add(a, b, &c), DT_ERR_DEVICE_MISMATCH);
    CHECK(c == (dt_tensor*)&g_passed);
    CHECK(strstr(dt_last_error_message(), "cpu:0") != NULL);
    CHECK(strstr(dt_last_error_message(), "cpu:1") != NULL);
    CHECK_ERR(dt_add_(a, b), DT_ERR_DEVICE_MISMATCH);
    CHECK_OK(dt_tensor_release(b));
  }
  if (!dt_cuda_is_available()) {
    dt_device cuda0 = {DT_DEVICE_CUDA, 0};
    c = NULL;
    CHECK(dt_tensor_to(a, cuda0, DT_DTYPE_DEFAULT, 0, &c) != DT_OK);
    CHECK(c == NULL);
  }
  CHECK_ERR(dt_tensor_to(a, CPU0, 99, 0, &c), DT_ERR_INVALID_ARGUMENT);
  CHECK_ERR(dt_tensor_to(a, CPU0, DT_FLOAT32, 0x100u, &c), DT_ERR_INVALID_ARGUMENT);
  CHECK_OK(dt_tensor_release(a));
}

static void test_ops(void) {
  dt_tensor *a, *b, *c, *t;
  float fa[6] = {1, 2, 3, 4, 5, 6};
  float fb[3] = {10, 20, 30};
  float f[6];
  int64_t s32[2] = {3, 2};
  double v = 0;

  CHECK_OK(dt_tensor_from_data(fa, sizeof fa, S23, 2, DT_FLOAT32, CPU0, &a));
  CHECK_OK(dt_tensor_from_data(fb, sizeof fb, S3, 1, DT_FLOAT32, CPU0, &b));

  CHECK_OK(dt_add(a, b, &c)); /* broadcast (2,3) + (3) */
  CHECK(read_f32(c, f, 6) && f[0] == 11.0f && f[5] == 36.0f);
  CHECK_OK(dt_tensor_release(c));
  CHECK_OK(dt_sub(a, b, &c));
  CHECK(read_f32(c, f, 6) && f[0] == -9.0f && f[4] == -15.0f);
  CHECK_OK(dt_tensor_release(c));
  CHECK_OK(dt_mul(a, b, &c));
  CHECK(read_f32(c, f, 6) && f[2] == 90.0f);
  CHECK_OK(dt_tensor_release(c));
  CHECK_OK(dt_div_scalar(a, 2, &c));
  CHECK(read_f32(c, f, 6) && f[0] == 0.5f && f[5] == 3.0f);
  CHECK_OK(dt_tensor_release(c));

  /* matmul (2,3) @ (3,2) */
  CHECK_OK(dt_reshape(a, s32, 2, &t));
  CHECK_OK(dt_matmul(a, t, &c));
  {
    int64_t shape[2];
    CHECK_OK(dt_tensor_shape(c, shape, 2));
    CHECK(shape[0] == 2 && shape[1] == 2);
    /* [[1,2,3],[4,5,6]] @ [[1,2],[3,4],[5,6]] = [[22,28],[49,64]] */
    CHECK(read_f32(c, f, 4) && f[0] == 22.0f && f[1] == 28.0f && f[2] == 49.0f && f[3] == 64.0f);
  }
  CHECK_OK(dt_tensor_release(c));
  c = (dt_tensor*)&g_passed;
  CHECK_ERR(dt_matmul(a, a, &c), DT_ERR_SHAPE_MISMATCH);
  CHECK(c == (dt_tensor*)&g_passed);
  CHECK_OK(dt_tensor_release(t));

  /* reductions */
  CHECK_OK(dt_sum(a, NULL, 0, 0, &c));
  CHECK_OK(dt_tensor_item(c, &v));
  CHECK(v == 21.0);
  CHECK_OK(dt_tensor_release(c));
  {
    int64_t dim = 1;
    int64_t shape[2];
    CHECK_OK(dt_mean(a, &dim, 1, 1, &c));
    CHECK_OK(dt_tensor_shape(c, shape, 2));
    CHECK(shape[0] == 2 && shape[1] == 1);
    CHECK(read_f32(c, f, 2) && f[0] == 2.0f && f[1] == 5.0f);
    CHECK_OK(dt_tensor_release(c));
    CHECK_OK(dt_argmax(a, &dim, 1, 0, &c));
    {
      int64_t idx[2];
      CHECK_OK(dt_tensor_copy_to_host(c, idx, sizeof idx));
      CHECK(idx[0] == 2 && idx[1] == 2);
    }
    CHECK_OK(dt_tensor_release(c));
    dim = 5;
    CHECK_ERR(dt_sum(a, &dim, 1, 0, &c), DT_ERR_INVALID_ARGUMENT);
  }

  /* softmax rows sum to 1 */
  CHECK_OK(dt_softmax(a, -1, &c));
  CHECK(read_f32(c, f, 6) && absd((double)f[0] + f[1] + f[2] - 1.0) < 1e-6 &&
        absd((double)f[3] + f[4] + f[5] - 1.0) < 1e-6 && f[2] > f[1]);
  CHECK_OK(dt_tensor_release(c));

  /* unary */
  CHECK_OK(dt_neg(a, &t));
  CHECK_OK(dt_relu(t, &c));
  CHECK(read_f32(c, f, 6) && f[0] == 0.0f && f[5] == 0.0f);
  CHECK_OK(dt_tensor_release(c));
  CHECK_OK(dt_tensor_release(t));

  /* views share storage */
  CHECK_OK(dt_transpose(a, 0, 1, &t));
  {
    int32_t shares = 0, contig = 1;
    CHECK_OK(dt_tensor_shares_storage(a, t, &shares));
    CHECK(shares == 1);
    CHECK_OK(dt_tensor_is_contiguous(t, &contig));
    CHECK(contig == 0);
    CHECK(read_f32(t, f, 6) && f[0] == 1.0f && f[1] == 4.0f && f[2] == 2.0f);
    CHECK_OK(dt_contiguous(t, &c));
    CHECK_OK(dt_tensor_is_contiguous(c, &contig));
    CHECK(contig == 1);
    CHECK_OK(dt_tensor_release(c));
  }
  CHECK_OK(dt_tensor_release(t));
  {
    int64_t bad[2] = {4, 2};
    c = (dt_tensor*)&g_passed;
    CHECK_ERR(dt_reshape(a, bad, 2, &c), DT_ERR_SHAPE_MISMATCH);
    CHECK(c == (dt_tensor*)&g_passed);
  }

  /* in place */
  CHECK_OK(dt_add_(a, b));
  CHECK(read_f32(a, f, 6) && f[0] == 11.0f && f[5] == 36.0f);

  /* cat and chunk */
  {
    const dt_tensor* parts[2];
    dt_tensor* pieces[4];
    size_t count = 0;
    size_t numel = 0;
    parts[0] = b;
    parts[1] = b;
    CHECK_OK(dt_cat(parts, 2, 0, &c));
    CHECK_OK(dt_tensor_numel(c, &numel));
    CHECK(numel == 6);
    CHECK_OK(dt_chunk(c, 3, 0, NULL, 0, &count));
    CHECK(count == 3);
    CHECK_OK(dt_chunk(c, 3, 0, pieces, 4, &count));
    CHECK(count == 3);
    if (count == 3) {
      CHECK(read_f32(pieces[1], f, 2) && f[0] == 30.0f && f[1] == 10.0f);
      CHECK_OK(dt_tensor_release(pieces[0]));
      CHECK_OK(dt_tensor_release(pieces[1]));
      CHECK_OK(dt_tensor_release(pieces[2]));
    }
    CHECK_OK(dt_tensor_release(c));
  }

  /* dtype errors: sub on bool */
  {
    dt_tensor* bl;
    CHECK_OK(dt_tensor_ones(S3, 1, DT_BOOL, CPU0, &bl));
    c = (dt_tensor*)&g_passed;
    CHECK_ERR(dt_sub(bl, bl, &c), DT_ERR_DTYPE_MISMATCH);
    CHECK(c == (dt_tensor*)&g_passed);
    CHECK_OK(dt_tensor_release(bl));
  }
  /* shapes that do not broadcast */
  {
    dt_tensor* z;
    int64_t s4[1] = {4};
    CHECK_OK(dt_tensor_zeros(s4, 1, DT_FLOAT32, CPU0, &z));
    CHECK_ERR(dt_add(a, z, &c), DT_ERR_SHAPE_MISMATCH);
    CHECK_OK(dt_tensor_release(z));
  }

  CHECK_OK(dt_tensor_release(a));
  CHECK_OK(dt_tensor_release(b));
}

static void test_to_string(void) {
  dt_tensor* t;
  char buf[256];
  size_t needed = 0;

  CHECK_OK(dt_tensor_arange(1, 4, 1, DT_FLOAT32, CPU0, &t));
  CHECK_OK(dt_tensor_to_string(t, NULL, 0, &needed));
  CHECK(needed == strlen("tensor([1., 2., 3.])") + 1);
  CHECK_OK(dt_tensor_to_string(t, buf, sizeof buf, NULL));
  CHECK(strcmp(buf, "tensor([1., 2., 3.])") == 0);
  CHECK_ERR(dt_tensor_to_string(t, NULL, 5, &needed), DT_ERR_INVALID_ARGUMENT);
  CHECK_OK(dt_tensor_release(t));

  CHECK_OK(dt_tensor_arange(0, 3, 1, DT_DTYPE_DEFAULT, CPU0, &t));
  CHECK_OK(dt_tensor_to_string(t, buf, sizeof buf, NULL));
  CHECK(strcmp(buf, "tensor([0, 1, 2])") == 0);
  CHECK_OK(dt_tensor_release(t));

  CHECK_OK(dt_tensor_full(S3, 1, 0.5, DT_FLOAT64, CPU0, &t));
  CHECK_OK(dt_tensor_to_string(t, buf, sizeof buf, NULL));
  CHECK(strcmp(buf, "tensor([0.5000, 0.5000, 0.5000], dtype=torch.float64)") == 0);
  CHECK_OK(dt_tensor_release(t));
}

static void test_handles(void) {
  dt_tensor* t;
  size_t numel = 0;
  CHECK_OK(dt_tensor_release(NULL));
  CHECK_OK(dt_tensor_zeros(S3, 1, DT_FLOAT32, CPU0, &t));
  CHECK_OK(dt_tensor_retain(t));
  CHECK_OK(dt_tensor_release(t));
  CHECK_OK(dt_tensor_numel(t, &numel)); /* still one reference */
  CHECK_OK(dt_tensor_release(t));
  /* used after the last release, or released twice: an error, never a crash */
  CHECK_ERR(dt_tensor_numel(t, &numel), DT_ERR_INVALID_HANDLE);
  CHECK_ERR(dt_tensor_release(t), DT_ERR_INVALID_HANDLE);
  CHECK_ERR(dt_tensor_retain(t), DT_ERR_INVALID_HANDLE);
  CHECK(dt_last_error_message()[0] != '\0');
  {
    /* a NULL handle is refused (the header does not say which of the two codes) */
    dt_status st = dt_tensor_numel(NULL, &numel);
    CHECK(st == DT_ERR_INVALID_HANDLE || st == DT_ERR_INVALID_ARGUMENT);
  }
}

int main(void) {
  size_t live0, n_cpu = 0;
  /* Two logical CPU devices, so device mismatch is tested for real (read at first use). */
  if (getenv("DEVTENSOR_CPU_DEVICES") == NULL) setenv("DEVTENSOR_CPU_DEVICES", "2", 1);

  live0 = dt_live_handle_count();
  CHECK(live0 == 0);
  (void)dt_device_count(DT_DEVICE_CPU, &n_cpu);

  test_version();
  test_status_strings();
  test_devices();
  test_constructors();
  test_from_blob();
  test_to(n_cpu);
  test_ops();
  test_to_string();
  test_handles();

  CHECK(dt_live_handle_count() == live0);
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
