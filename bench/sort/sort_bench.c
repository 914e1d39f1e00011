/* sort_bench: dt_sort and dt_topk on float32 rows of random normals, the median of 7
 * timed calls after 2 warm-ups, one line per case ("CASE devtensor MS ms"). bench/sort/run
 * builds it against build/release and runs it next to sort_bench.py (PyTorch). */
#include <devtensor.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static void bench(const char* name, int64_t rows, int64_t n, int64_t k) {
  int64_t shape[2] = {rows, n};
  dt_device cpu = {DT_DEVICE_CPU, 0};
  dt_tensor* a = NULL;
  if (dt_tensor_randn(shape, 2, DT_FLOAT32, cpu, &a) != DT_OK) {
    printf("randn: %s\n", dt_last_error_message());
    exit(1);
  }
  double t[9];
  for (int i = 0; i < 9; ++i) {
    dt_tensor *values = NULL, *indices = NULL;
    double start = now();
    dt_status st = k ? dt_topk(a, k, 1, 1, &values, &indices) : dt_sort(a, 1, 0, &values, &indices);
    t[i] = now() - start;
    if (st != DT_OK) {
      printf("%s: %s\n", name, dt_last_error_message());
      exit(1);
    }
    dt_tensor_release(values);
    dt_tensor_release(indices);
  }
  qsort(t + 2, 7, sizeof(double), by_value);
  printf("%s devtensor %.3f ms\n", name, t[5] * 1e3);
  dt_tensor_release(a);
}

int main(void) {
  bench("sort_1x1M", 1, 1 << 20, 0);
  bench("sort_256x4096", 256, 4096, 0);
  bench("topk5_64x50257", 64, 50257, 5);
  bench("topk1000_8x65536", 8, 65536, 1000);
  return 0;
}
