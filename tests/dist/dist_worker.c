/*
 * dist_worker: one rank of the failure checks (test_dist_failures.py starts it).
 *
 *   dist_worker train INIT STEPS DIE_RANK DIE_STEP TIMEOUT_MS
 *       joins a group through INIT (env://, tcp://..., file:///...; rank and world size
 *       from RANK / WORLD_SIZE), then all-reduces a 4096-float tensor STEPS times and
 *       checks each sum; rank DIE_RANK kills itself with SIGKILL at step DIE_STEP (-1:
 *       nobody dies). On the first failure it prints
 *           rank R: step S failed after T ms: STATUS: MESSAGE
 *       then calls all_reduce once more and prints "rank R: then: STATUS: MESSAGE",
 *       releases the group and exits 3.
 *   dist_worker join INIT TIMEOUT_MS WORLD_SIZE
 *       joins with an explicit world size (-1: WORLD_SIZE), meets at a barrier, prints
 *       "rank R: joined"; on failure prints "rank R: join failed: STATUS: MESSAGE", exit 3.
 *
 * Exit 0 on success, 1 on a wrong value, 2 on bad arguments.
 */
#include <devtensor.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int env_rank(void) {
  const char* r = getenv("RANK");
  return r ? atoi(r) : -1;
}

static int train(const char* init, int steps, int die_rank, int die_step, long timeout_ms) {
  dt_process_group* pg = NULL;
  int rank = env_rank();
  dt_status st = dt_process_group_new("gloo", init, -1, -1, timeout_ms, &pg);
  if (st != DT_OK) {
    fprintf(stderr, "rank %d: join failed: %s: %s\n", rank, dt_status_string(st), dt_last_error_message());
    return 3;
  }
  int32_t world = 0;
  dt_process_group_size(pg, &world);
  const int64_t shape[1] = {4096};
  dt_device cpu = {DT_DEVICE_CPU, 0};
  for (int step = 0; step < steps; ++step) {
    if (rank == die_rank && step == die_step) raise(SIGKILL);
    dt_tensor* t = NULL;
    if (dt_tensor_full(shape, 1, (double)(rank + step), DT_FLOAT32, cpu, &t) != DT_OK) return 1;
    double start = now_ms();
    st = dt_all_reduce_(pg, t, DT_REDUCE_SUM);
    if (st != DT_OK) {
      fprintf(stderr, "rank %d: step %d failed after %.0f ms: %s: %s\n", rank, step, now_ms() - start,
              dt_status_string(st), dt_last_error_message());
      st = dt_all_reduce_(pg, t, DT_REDUCE_SUM);
      fprintf(stderr, "rank %d: then: %s: %s\n", rank, dt_status_string(st), dt_last_error_message());
      dt_tensor_release(t);
      dt_process_group_release(pg);
      return 3;
    }
    static float sums[4096];
    if (dt_tensor_copy_to_host(t, sums, sizeof sums) != DT_OK) return 1;
    double want = world * (world - 1) / 2.0 + (double)world * step;
    dt_tensor_release(t);
    for (int i = 0; i < 4096; ++i) {
      if (sums[i] != (float)want) {
        fprintf(stderr, "rank %d: step %d: element %d is %g, expected %g\n", rank, step, i, sums[i], want);
        return 1;
      }
    }
  }
  dt_process_group_release(pg);
  printf("rank %d: done\n", rank);
  return 0;
}

static int join(const char* init, long timeout_ms, int world) {
  dt_process_group* pg = NULL;
  int rank = env_rank();
  dt_status st = dt_process_group_new(NULL, init, rank, world, timeout_ms, &pg);
  if (st == DT_OK) st = dt_barrier(pg);
  if (st != DT_OK) {
    fprintf(stderr, "rank %d: join failed: %s: %s\n", rank, dt_status_string(st), dt_last_error_message());
    dt_process_group_release(pg);
    return 3;
  }
  dt_process_group_release(pg);
  printf("rank %d: joined\n", rank);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 7 && strcmp(argv[1], "train") == 0)
    return train(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atol(argv[6]));
  if (argc == 5 && strcmp(argv[1], "join") == 0) return join(argv[2], atol(argv[3]), atoi(argv[4]));
  fprintf(stderr, "usage: see the comment at the top of dist_worker.c\n");
  return 2;
}
