/*
 * ddp_step: one DistributedDataParallel training step of the 784-256-10 MLP (batch 64
 * per rank, SGD with momentum, cross-entropy), timed under `devtensor run`. Run by
 * bench/dist/run beside torch_dist_bench.py's PyTorch DDP (gloo) on the same model.
 *
 *   devtensor run --nproc-per-node 2 -- ddp_step [ROUNDS]
 *
 * 10 warm-up steps, then ROUNDS rounds (default 7) of 50 steps each, started after a
 * barrier; a round's time per step is the slowest rank's. Rank 0 prints
 * "ddp_step median_seconds_per_step". Inputs: fixed pseudo-random floats and labels.
 */
#include <devtensor.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define OK(call)                                                                      \
  do {                                                                                \
    dt_status st_ = (call);                                                           \
    if (st_ != DT_OK) {                                                               \
      fprintf(stderr, "%s: %s: %s\n", #call, dt_status_string(st_), dt_last_error_message()); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 7;
  if (rounds < 1 || rounds > 99) rounds = 7;
  const dt_device cpu = {DT_DEVICE_CPU, 0};
  dt_process_group* pg;
  OK(dt_process_group_new("gloo", "env://", -1, -1, 120000, &pg));
  int32_t rank;
  OK(dt_process_group_rank(pg, &rank));

  dt_module *l1, *act, *l2, *model, *ddp, *loss_fn;
  OK(dt_manual_seed(0));
  OK(dt_linear_new(784, 256, 1, DT_FLOAT32, cpu, &l1));
  OK(dt_relu_new(&act));
  OK(dt_linear_new(256, 10, 1, DT_FLOAT32, cpu, &l2));
  dt_module* layers[3] = {l1, act, l2};
  OK(dt_sequential_new(layers, 3, &model));
  OK(dt_distributed_data_parallel_new(model, pg, 0, 0, &ddp));
  OK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  size_t np = 0;
  OK(dt_module_parameter_count(model, &np));
  dt_tensor* params[4];
  for (size_t i = 0; i < np; ++i) OK(dt_module_parameter(model, i, NULL, 0, NULL, &params[i]));
  dt_optimizer* opt;
  OK(dt_sgd_new((const dt_tensor* const*)params, np, 0.01, 0.9, 0.0, 0.0, 0, &opt));

  static float x[64 * 784];
  static int64_t y[64];
  unsigned s = 12345u + (unsigned)rank;
  for (int i = 0; i < 64 * 784; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)(s >> 8) / (float)(1u << 24);
  }
  for (int i = 0; i < 64; ++i) y[i] = (i * 7 + rank) % 10;
  const int64_t xs[2] = {64, 784}, ys[1] = {64};
  dt_tensor *xb, *yb;
  OK(dt_tensor_from_data(x, sizeof x, xs, 2, DT_FLOAT32, cpu, &xb));
  OK(dt_tensor_from_data(y, sizeof y, ys, 1, DT_INT64, cpu, &yb));

  dt_tensor* slowest;
  const int64_t one = 1;
  OK(dt_tensor_zeros(&one, 1, DT_FLOAT64, cpu, &slowest));
  double per_step[99];
  for (int r = -1; r < rounds; ++r) {
    const int steps = r < 0 ? 10 : 50; /* round -1: warm-up */
    OK(dt_barrier(pg));
    double t0 = now();
    for (int i = 0; i < steps; ++i) {
      dt_tensor *logits, *loss;
      const dt_tensor* in[2] = {xb, NULL};
      OK(dt_optimizer_zero_grad(opt));
      OK(dt_module_forward(ddp, in, 1, &logits));
      in[0] = logits;
      in[1] = yb;
      OK(dt_module_forward(loss_fn, in, 2, &loss));
      OK(dt_backward(loss, NULL));
      OK(dt_optimizer_step(opt));
      dt_tensor_release(logits);
      dt_tensor_release(loss);
    }
    double mine = (now() - t0) / steps;
    if (r < 0) continue;
    OK(dt_tensor_copy_from_host(slowest, &mine, sizeof mine));
    OK(dt_all_reduce_(pg, slowest, DT_REDUCE_MAX));
    OK(dt_tensor_item(slowest, &per_step[r]));
  }
  qsort(per_step, (size_t)rounds, sizeof(double), cmp);
  if (rank == 0) printf("ddp_step %.9g\n", per_step[rounds / 2]);
  for (size_t i = 0; i < np; ++i) dt_tensor_release(params[i]);
  dt_tensor_release(xb);
  dt_tensor_release(yb);
  dt_tensor_release(slowest);
  dt_optimizer_release(opt);
  dt_module_release(loss_fn);
  dt_module_release(ddp);
  dt_module_release(model);
  dt_module_release(l1);
  dt_module_release(act);
  dt_module_release(l2);
  OK(dt_process_group_release(pg));
  return 0;
}
