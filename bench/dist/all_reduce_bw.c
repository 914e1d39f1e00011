/*
 * all_reduce_bw: time dt_all_reduce_ (sum, float32) over the ranks of `devtensor run`,
 * for message sizes from 4 KB to 64 MB. Run by bench/dist/run beside PyTorch's
 * torch_dist_bench.py, which times torch.distributed.all_reduce (gloo) the same way.
 *
 *   devtensor run --nproc-per-node N -- all_reduce_bw [ROUNDS]
 *
 * Per size: 3 warm-up calls, then ROUNDS rounds (default 7) of `iters` calls each
 * (iters chosen so a round moves about 64 MB, 5 to 200 calls), each round started
 * after a barrier; a round's time per call is the slowest rank's (an all-reduce of the
 * per-rank times with MAX). Rank 0 prints "size_bytes median_seconds_per_call".
 */
#include <devtensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define OK(call)                                                                      \
  do {                                                                                \
    dt_status st_ = (call);                                                           \
    if (st_ != DT_OK) {                                                               \
      fprintf(stderr, "%s: %s: %s\n", #call, dt_status_string(st_), dt_last_error_message()); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  if (rounds < 1 || rounds > 99) rounds = 7;
  dt_process_group* pg;
  OK(dt_process_group_new("gloo", "env://", -1, -1, 120000, &pg));
  int32_t rank;
  OK(dt_process_group_rank(pg, &rank));
  const dt_device cpu = {DT_DEVICE_CPU, 0};
  dt_tensor* slowest;
  const int64_t one = 1;
  OK(dt_tensor_zeros(&one, 1, DT_FLOAT64, cpu, &slowest));
  for (long bytes = 4096; bytes <= 64L << 20; bytes *= 4) {
    const int64_t n = bytes / 4;
    dt_tensor* t;
    OK(dt_tensor_ones(&n, 1, DT_FLOAT32, cpu, &t));
    long iters = (64L << 20) / bytes;
    if (iters < 5) iters = 5;
    if (iters > 200) iters = 200;
    for (int w = 0; w < 3; ++w) OK(dt_all_reduce_(pg, t, DT_REDUCE_SUM));
    double per_call[99];
    for (int r = 0; r < rounds; ++r) {
      OK(dt_barrier(pg));
      double t0 = now();
      for (long i = 0; i < iters; ++i) OK(dt_all_reduce_(pg, t, DT_REDUCE_SUM));
      double mine = (now() - t0) / iters;
      OK(dt_tensor_copy_from_host(slowest, &mine, sizeof mine));
      OK(dt_all_reduce_(pg, slowest, DT_REDUCE_MAX));
      OK(dt_tensor_item(slowest, &per_call[r]));
    }
    qsort(per_call, (size_t)rounds, sizeof(double), cmp);
    if (rank == 0) printf("%ld %.9g\n", bytes, per_call[rounds / 2]);
    fflush(stdout);
    dt_tensor_release(t);
  }
  dt_tensor_release(slowest);
  OK(dt_process_group_release(pg));
  return 0;
}
