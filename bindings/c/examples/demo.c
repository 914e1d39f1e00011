/*
 * demo.c — devtensor end to end, from C99.
 *
 * Version, devices, the best device, constructors, to(), a few ops, host-memory sharing,
 * the device-mismatch error, and a leak check. `script/demo` runs it with
 * DEVTENSOR_CPU_DEVICES=2 so that cpu:0 and cpu:1 exist. Exits nonzero if anything
 * unexpected happens.
 */
#include <devtensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Aborts the demo (exit 1) when a call that should succeed fails. */
#define CHECK(call) check_ok((call), #call, __LINE__)

static void check_ok(dt_status st, const char* what, int line) {
  if (st != DT_OK) {
    fprintf(stderr, "demo.c:%d: %s failed: %s: %s\n", line, what, dt_status_string(st),
            dt_last_error_message());
    exit(1);
  }
}

static void expect(int cond, const char* what, int line) {
  if (!cond) {
    fprintf(stderr, "demo.c:%d: unexpected: %s\n", line, what);
    exit(1);
  }
}
#define EXPECT(cond) expect((cond), #cond, __LINE__)

static void section(const char* title) { printf("\n== %s\n", title); }

static const char* dev_str(dt_device d, char* buf, size_t cap) {
  CHECK(dt_device_format(d, buf, cap, NULL));
  return buf;
}

/* Prints "  <label> = <tensor in PyTorch's format>". */
static void show(const char* label, const dt_tensor* t) {
  size_t needed = 0;
  char* buf;
  CHECK(dt_tensor_to_string(t, NULL, 0, &needed));
  buf = (char*)malloc(needed);
  EXPECT(buf != NULL);
  CHECK(dt_tensor_to_string(t, buf, needed, &needed));
  printf("  %s = %s\n", label, buf);
  free(buf);
}

static double absd(double x) { return x < 0 ? -x : x; }

static double gib(uint64_t b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

static int g_deleter_calls = 0;
static void count_deleter(void* data, void* context) {
  (void)data;
  ++*(int*)context;
}

int main(void) {
  char d1[32], d2[32];
  char name[256];
  size_t n_cpu = 0, n_cuda = 0, count = 0, i;
  dt_device best, cpu0 = {DT_DEVICE_CPU, 0}, cpu1 = {DT_DEVICE_CPU, 1};
  dt_device keep = {DT_DEVICE_DEFAULT, 0};
  dt_device* order;
  int32_t cuda_state = 0, same = 0;
  char reason[512];
  dt_tensor *a, *r, *a64, *alias, *x, *y, *yt, *s, *m, *sm, *total, *blob;
  double v = 0;
  dt_dtype dt = 0;
  dt_device where;

  /* ------------------------------------------------------------------- version */
  section("version");
  printf("  devtensor %s (header %d.%d.%d)\n", dt_version_string(), DT_VERSION_MAJOR,
         DT_VERSION_MINOR, DT_VERSION_PATCH);
  if (dt_version() != (uint32_t)DT_VERSION_NUMBER) {
    fprintf(stderr, "demo: library version %u does not match header %d\n",
            (unsigned)dt_version(), DT_VERSION_NUMBER);
    return 1;
  }

  /* ------------------------------------------------------------------- devices */
  section("devices");
  CHECK(dt_device_count(DT_DEVICE_CPU, &n_cpu));
  CHECK(dt_device_count(DT_DEVICE_CUDA, &n_cuda));
  CHECK(dt_cuda_status(&cuda_state, reason, sizeof reason, NULL));
  printf("  CUDA: %s (%s)\n", dt_cuda_is_available() ? "available" : "unavailable", reason);
  for (i = 0; i < n_cpu + n_cuda; ++i) {
    dt_device d;
    uint64_t free_b = 0, total_b = 0;
    d.type = i < n_cpu ? DT_DEVICE_CPU : DT_DEVICE_CUDA;
    d.index = (int32_t)(i < n_cpu ? i : i - n_cpu);
    CHECK(dt_device_name(d, name, sizeof name, NULL));
    CHECK(dt_device_memory(d, &free_b, &total_b));
    EXPECT(free_b <= total_b);
    printf("  %-7s %-40s %7.1f GiB free of %7.1f GiB\n", dev_str(d, d1, sizeof d1), name,
           gib(free_b), gib(total_b));
  }

  CHECK(dt_devices_by_free_memory(NULL, 0, &count));
  EXPECT(count >= 1);
  order = (dt_device*)malloc(count * sizeof(dt_device));
  EXPECT(order != NULL);
  CHECK(dt_devices_by_free_memory(order, count, &count));
  best = order[0];
  free(order);
  printf("  best device (most free memory): %s\n", dev_str(best, d1, sizeof d1));

  /* -------------------------------------------------------------- constructors */
  section("constructors");
  CHECK(dt_manual_seed(42));
  {
    int64_t shape[2] = {2, 3};
    dt_tensor* flat;
    CHECK(dt_tensor_arange(0, 6, 1, DT_FLOAT32, cpu0, &flat));
    CHECK(dt_reshape(flat, shape, 2, &a));
    CHECK(dt_tensor_release(flat));
    CHECK(dt_tensor_rand(shape, 2, DT_FLOAT32, cpu0, &r));
  }
  show("a = arange(6).reshape(2, 3)", a);
  show("r = rand(2, 3), seed 42", r);

  /* ----------------------------------------------------------------------- to() */
  section("to(): a new tensor, the source unchanged; an alias when nothing changes");
  CHECK(dt_tensor_to(a, keep, DT_FLOAT64, 0, &a64));
  EXPECT(a64 != a);
  CHECK(dt_tensor_dtype(a, &dt));
  EXPECT(dt == DT_FLOAT32);
  show("a.to(float64)", a64);
  show("a (unchanged)", a);

  CHECK(dt_tensor_to(a, cpu0, DT_FLOAT32, 0, &alias));
  printf("  a.to(cpu:0, float32) %s a itself\n", alias == a ? "is" : "is NOT");
  EXPECT(alias == a);
  CHECK(dt_tensor_release(alias));

  CHECK(dt_tensor_to(a, cpu0, DT_FLOAT32, DT_TO_COPY, &alias));
  CHECK(dt_tensor_shares_storage(a, alias, &same));
  printf("  a.to(cpu:0, float32, copy=True) is a new tensor: %s, shares storage: %s\n",
         alias != a ? "yes" : "no", same ? "yes" : "no");
  EXPECT(alias != a && !same);
  CHECK(dt_tensor_release(alias));

  CHECK(dt_tensor_to(a, best, DT_DTYPE_DEFAULT, 0, &x));
  CHECK(dt_tensor_to(r, best, DT_DTYPE_DEFAULT, 0, &y));
  CHECK(dt_tensor_device(x, &where));
  EXPECT(where.type == best.type && where.index == best.index);
  printf("  a.to(%s): %s\n", dev_str(best, d1, sizeof d1),
         x == a ? "already there, so the same tensor" : "a new tensor on that device");
  if (n_cpu >= 2) {
    dt_tensor* a1;
    CHECK(dt_tensor_to(a, cpu1, DT_DTYPE_DEFAULT, 0, &a1));
    CHECK(dt_tensor_device(a1, &where));
    EXPECT(a1 != a && where.type == DT_DEVICE_CPU && where.index == 1);
    CHECK(dt_tensor_device(a, &where));
    EXPECT(where.index == 0);
    printf("  a.to(cpu:1) is a new tensor on cpu:1; a stays on cpu:0\n");
    CHECK(dt_tensor_release(a1));
  }

  /* ------------------------------------------------------------------------ ops */
  section("ops on the best device");
  CHECK(dt_add(x, y, &s));
  show("x + y", s);
  CHECK(dt_transpose(y, 0, 1, &yt));
  CHECK(dt_matmul(x, yt, &m));
  show("x @ y.T", m);
  CHECK(dt_softmax(m, -1, &sm));
  show("softmax(x @ y.T, dim=-1)", sm);
  CHECK(dt_sum(sm, NULL, 0, 0, &total));
  show("sum(softmax(...))", total);
  CHECK(dt_tensor_item(total, &v));
  EXPECT(absd(v - 2.0) < 1e-5); /* two rows, each summing to 1 */
  {
    /* check x + y against the host arithmetic */
    float hx[6], hy[6], hs[6];
    int k;
    CHECK(dt_tensor_copy_to_host(x, hx, sizeof hx));
    CHECK(dt_tensor_copy_to_host(y, hy, sizeof hy));
    CHECK(dt_tensor_copy_to_host(s, hs, sizeof hs));
    for (k = 0; k < 6; ++k) {
      EXPECT(hx[k] == (float)k);
      EXPECT(hy[k] >= 0.0f && hy[k] < 1.0f);
      EXPECT(absd((double)hs[k] - ((double)hx[k] + (double)hy[k])) < 1e-6);
    }
  }

  /* ------------------------------------------------------------------ from_blob */
  section("from_blob: a CPU tensor sharing host memory, both ways");
  {
    float host[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    void* p = NULL;
    CHECK(dt_tensor_from_blob(host, shape, 1, NULL, DT_FLOAT32, cpu0, count_deleter,
                              &g_deleter_calls, &blob));
    show("blob", blob);
    host[0] = 100.0f;
    show("after host[0] = 100", blob);
    CHECK(dt_tensor_data_ptr(blob, &p));
    EXPECT(p == (void*)host);
    CHECK(dt_add_scalar_(blob, 0.5));
    printf("  after blob += 0.5: host = {%g, %g, %g, %g}\n", host[0], host[1], host[2],
           host[3]);
    EXPECT(host[0] == 100.5f && host[3] == 4.5f);
    CHECK(dt_tensor_release(blob));
    printf("  deleter called %d time(s) after the last release\n", g_deleter_calls);
    EXPECT(g_deleter_calls == 1);
  }

  /* -------------------------------------------------------------------- errors */
  section("errors");
  {
    dt_device a_dev, b_dev;
    int have_pair = 0;
    if (n_cpu >= 2) {
      a_dev = cpu0;
      b_dev = cpu1;
      have_pair = 1;
    } else if (n_cuda >= 1) {
      a_dev.type = DT_DEVICE_CUDA;
      a_dev.index = 0;
      b_dev = cpu0;
      have_pair = 1;
    }
    if (have_pair) {
      dt_tensor *p, *q, *bad = NULL;
      int64_t shape[1] = {3};
      dt_status st;
      CHECK(dt_tensor_ones(shape, 1, DT_FLOAT32, a_dev, &p));
      CHECK(dt_tensor_ones(shape, 1, DT_FLOAT32, b_dev, &q));
      st = dt_add(p, q, &bad);
      printf("  add(%s, %s) -> %s: %s\n", dev_str(a_dev, d1, sizeof d1),
             dev_str(b_dev, d2, sizeof d2), dt_status_string(st), dt_last_error_message());
      EXPECT(st == DT_ERR_DEVICE_MISMATCH && bad == NULL);
      EXPECT(strstr(dt_last_error_message(), d1) != NULL);
      EXPECT(strstr(dt_last_error_message(), d2) != NULL);
      CHECK(dt_tensor_release(p));
      CHECK(dt_tensor_release(q));
    } else {
      printf("  (run with DEVTENSOR_CPU_DEVICES=2 to see the device-mismatch error)\n");
    }
  }
  {
    dt_device nowhere = {DT_DEVICE_CUDA, 7};
    dt_tensor* bad = NULL;
    int64_t shape[1] = {3};
    dt_status st = dt_tensor_zeros(shape, 1, DT_FLOAT32, nowhere, &bad);
    printf("  zeros(3, device=cuda:7) -> %s: %s\n", dt_status_string(st),
           dt_last_error_message());
    EXPECT(st != DT_OK && bad == NULL);
  }
  {
    dt_device d;
    dt_status st = dt_device_parse("gpu:0", &d);
    printf("  parse(\"gpu:0\") -> %s: %s\n", dt_status_string(st), dt_last_error_message());
    EXPECT(st == DT_ERR_INVALID_ARGUMENT);
  }

  /* ------------------------------------------------------------------- release */
  section("release");
  CHECK(dt_tensor_release(total));
  CHECK(dt_tensor_release(sm));
  CHECK(dt_tensor_release(m));
  CHECK(dt_tensor_release(yt));
  CHECK(dt_tensor_release(s));
  CHECK(dt_tensor_release(y));
  CHECK(dt_tensor_release(x));
  CHECK(dt_tensor_release(a64));
  CHECK(dt_tensor_release(r));
  CHECK(dt_tensor_release(a));
  printf("  live handles: %lu\n", (unsigned long)dt_live_handle_count());
  EXPECT(dt_live_handle_count() == 0);
  {
    dt_status st = dt_tensor_release(a);
    printf("  releasing a again -> %s: %s\n", dt_status_string(st), dt_last_error_message());
    EXPECT(st == DT_ERR_INVALID_HANDLE);
  }
  printf("\ndemo finished: OK\n");
  return 0;
}
