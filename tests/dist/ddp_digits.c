/*
 * ddp_digits: the digits MLP (64-128-10, cross-entropy, SGD with momentum) trained with
 * DistributedDataParallel, for tests/dist/test_ddp.py.
 *
 *   ddp_digits train DIGITS_CSV_GZ STEPS GLOBAL_BATCH [INIT.safetensors]
 *       Without RANK in the environment: one process, no process group, the whole batch
 *       (the reference). Under `devtensor run`: every rank takes its equal share of each
 *       global batch (ranks in order, contiguous rows) and trains through a
 *       DistributedDataParallel; rank r starts from seed r, so only DDP's broadcast from
 *       rank 0 makes the ranks agree. Rank 0 (or the single process) prints
 *       "step S loss L" per step, L being the mean loss over the global batch (the ranks'
 *       losses averaged with an all-reduce), then "params equal on every rank" once the
 *       ranks' final parameters have been compared. INIT: start from these weights
 *       (PyTorch's names "0.weight" ...) instead of the seed, for the PyTorch comparison.
 *   ddp_digits init PATH     saves the seed-0 model (rank 0's start) as safetensors.
 *   ddp_digits mismatch      rank 1 builds a hidden layer of 64: every rank must fail
 *                            with DT_ERR_SHAPE_MISMATCH naming '0.weight'.
 *   ddp_digits unused FIND   the loss uses only the first layer: with FIND=0 backward must
 *                            fail naming '2.weight'; with FIND=1 it succeeds and the
 *                            unused parameters' gradients are zero.
 * Exit status 0 when everything held, 1 otherwise (the reason printed).
 */
#include <devtensor.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ROWS 1797
#define PIXELS 64
#define CLASSES 10

static int g_rank = 0, g_world = 1;

#define OK(call)                                                                          \
  do {                                                                                    \
    dt_status st_ = (call);                                                               \
    if (st_ != DT_OK) {                                                                   \
      fprintf(stderr, "rank %d: %s:%d: %s: %s: %s\n", g_rank, __FILE__, __LINE__, #call,  \
              dt_status_string(st_), dt_last_error_message());                            \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static const dt_device kCpu = {DT_DEVICE_CPU, 0};

static void load_digits(const char* path, float* x, int64_t* y) {
  gzFile f = gzopen(path, "rb");
  char line[1024];
  int row = 0;
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  while (row < ROWS && gzgets(f, line, sizeof line)) {
    char* p = line;
    for (int col = 0; col <= PIXELS; ++col) {
      long v = strtol(p, &p, 10);
      if (col < PIXELS) x[row * PIXELS + col] = (float)v / 16.0f;
      else y[row] = v;
      if (*p == ',') ++p;
    }
    ++row;
  }
  gzclose(f);
  if (row != ROWS) {
    fprintf(stderr, "%s: %d rows, expected %d\n", path, row, ROWS);
    exit(1);
  }
}

/* Sequential(Linear(64, hidden), ReLU, Linear(hidden, 10)) from seed `seed`. */
static dt_module* make_mlp(int hidden, uint64_t seed) {
  dt_module *l1, *act, *l2, *model;
  OK(dt_manual_seed(seed));
  OK(dt_linear_new(PIXELS, hidden, 1, DT_FLOAT32, kCpu, &l1));
  OK(dt_relu_new(&act));
  OK(dt_linear_new(hidden, CLASSES, 1, DT_FLOAT32, kCpu, &l2));
  dt_module* layers[3] = {l1, act, l2};
  OK(dt_sequential_new(layers, 3, &model));
  dt_module_release(l1);
  dt_module_release(act);
  dt_module_release(l2);
  return model;
}

static dt_optimizer* make_sgd(dt_module* model) {
  size_t n = 0;
  OK(dt_module_parameter_count(model, &n));
  dt_tensor* params[8];
  for (size_t i = 0; i < n; ++i) OK(dt_module_parameter(model, i, NULL, 0, NULL, &params[i]));
  dt_optimizer* opt;
  OK(dt_sgd_new((const dt_tensor* const*)params, n, 0.1, 0.9, 0.0, 0.0, 0, &opt));
  for (size_t i = 0; i < n; ++i) dt_tensor_release(params[i]);
  return opt;
}

static dt_process_group* join(void) {
  dt_process_group* pg;
  OK(dt_process_group_new("gloo", "env://", -1, -1, 60000, &pg));
  OK(dt_process_group_rank(pg, &g_rank));
  OK(dt_process_group_size(pg, &g_world));
  return pg;
}

/* 1 when every rank's parameters are bit-for-bit rank 0's (all-gathered and compared). */
static int params_equal_everywhere(dt_process_group* pg, dt_module* model) {
  size_t n = 0;
  OK(dt_module_parameter_count(model, &n));
  int equal = 1;
  for (size_t i = 0; i < n; ++i) {
    dt_tensor *p, *all;
    OK(dt_module_parameter(model, i, NULL, 0, NULL, &p));
    int64_t numel = 0;
    OK(dt_tensor_numel(p, &numel));
    int64_t shape[2] = {g_world, numel};
    OK(dt_tensor_empty(shape, 2, DT_FLOAT32, kCpu, &all));
    OK(dt_all_gather(pg, p, all));
    float* v = malloc(sizeof(float) * (size_t)(numel * g_world));
    OK(dt_tensor_copy_to_host(all, v, sizeof(float) * (size_t)(numel * g_world)));
    for (int r = 1; r < g_world; ++r)
      if (memcmp(v, v + r * numel, sizeof(float) * (size_t)numel) != 0) equal = 0;
    free(v);
    dt_tensor_release(all);
    dt_tensor_release(p);
  }
  return equal;
}

static int train(const char* csv, int steps, int batch, const char* init) {
  static float x[ROWS * PIXELS];
  static int64_t y[ROWS];
  load_digits(csv, x, y);
  dt_process_group* pg = getenv("RANK") ? join() : NULL;
  if (batch % g_world != 0) {
    fprintf(stderr, "the global batch %d does not split over %d ranks\n", batch, g_world);
    return 1;
  }
  dt_module* model = make_mlp(128, (uint64_t)g_rank);
  if (init) OK(dt_module_load(model, init));
  dt_module* runner = model;
  if (pg) OK(dt_distributed_data_parallel_new(model, pg, 0, 0, &runner));
  dt_optimizer* opt = make_sgd(model);
  dt_module* loss_fn;
  OK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  const int share = batch / g_world;
  for (int step = 0; step < steps; ++step) {
    /* rows of this step's global batch, wrapping around the data; this rank's share */
    int first = (step * batch) % (ROWS - batch) + g_rank * share;
    int64_t xs[2] = {share, PIXELS}, ys[1] = {share};
    dt_tensor *xb, *yb, *logits, *loss;
    OK(dt_tensor_from_data(x + first * PIXELS, sizeof(float) * (size_t)(share * PIXELS), xs, 2, DT_FLOAT32, kCpu, &xb));
    OK(dt_tensor_from_data(y + first, sizeof(int64_t) * (size_t)share, ys, 1, DT_INT64, kCpu, &yb));
    OK(dt_optimizer_zero_grad(opt));
    const dt_tensor* in[2] = {xb, NULL};
    OK(dt_module_forward(runner, in, 1, &logits));
    in[0] = logits;
    in[1] = yb;
    OK(dt_module_forward(loss_fn, in, 2, &loss));
    OK(dt_backward(loss, NULL));
    OK(dt_optimizer_step(opt));
    double v = 0;
    if (pg) {
      dt_tensor* mean;
      OK(dt_tensor_to(loss, kCpu, DT_FLOAT64, DT_TO_COPY, &mean));
      OK(dt_all_reduce_(pg, mean, DT_REDUCE_AVG));
      OK(dt_tensor_item(mean, &v));
      dt_tensor_release(mean);
    } else {
      OK(dt_tensor_item(loss, &v));
    }
    if (g_rank == 0) printf("step %d loss %.9f\n", step, v);
    dt_tensor_release(xb);
    dt_tensor_release(yb);
    dt_tensor_release(logits);
    dt_tensor_release(loss);
  }
  int rc = 0;
  if (pg) {
    if (params_equal_everywhere(pg, model)) {
      if (g_rank == 0) printf("params equal on every rank\n");
    } else {
      fprintf(stderr, "rank %d: the ranks' parameters differ after training\n", g_rank);
      rc = 1;
    }
  }
  dt_module_release(loss_fn);
  dt_optimizer_release(opt);
  if (runner != model) dt_module_release(runner);
  dt_module_release(model);
  dt_process_group_release(pg);
  return rc;
}

static int mismatch(void) {
  dt_process_group* pg = join();
  dt_module* model = make_mlp(g_rank == 1 ? 64 : 128, 0);
  dt_module* ddp = NULL;
  dt_status st = dt_distributed_data_parallel_new(model, pg, 0, 0, &ddp);
  const char* msg = dt_last_error_message();
  int ok = st == DT_ERR_SHAPE_MISMATCH && strstr(msg, "parameter '0.weight' is [128, 64] (float32) on rank 0 but [64, 64] (float32) on rank 1") &&
           ddp == NULL;
  if (!ok) fprintf(stderr, "rank %d: got %s: %s\n", g_rank, dt_status_string(st), msg);
  else printf("rank %d: refused: %s\n", g_rank, msg);
  dt_module_release(model);
  dt_process_group_release(pg);
  return ok ? 0 : 1;
}

static int unused(int find) {
  dt_process_group* pg = join();
  dt_module *first, *act, *second, *model, *ddp;
  OK(dt_manual_seed(0));
  OK(dt_linear_new(PIXELS, 16, 1, DT_FLOAT32, kCpu, &first));
  OK(dt_relu_new(&act));
  OK(dt_linear_new(16, CLASSES, 1, DT_FLOAT32, kCpu, &second));
  dt_module* layers[3] = {first, act, second};
  OK(dt_sequential_new(layers, 3, &model));
  dt_module_release(act);
  dt_module_release(second);
  OK(dt_distributed_data_parallel_new(model, pg, 0, find, &ddp));
  int64_t shape[2] = {4, PIXELS};
  dt_tensor *x, *h, *loss;
  OK(dt_tensor_ones(shape, 2, DT_FLOAT32, kCpu, &x));
  const dt_tensor* in[1] = {x};
  OK(dt_module_forward(first, in, 1, &h)); /* the second layer takes no part */
  OK(dt_sum(h, NULL, 0, 0, &loss));
  dt_status st = dt_backward(loss, NULL);
  int ok;
  if (!find) {
    ok = st == DT_ERR_INVALID_ARGUMENT && strstr(dt_last_error_message(), "parameter '2.weight' received no gradient");
    if (!ok) fprintf(stderr, "rank %d: backward gave %s: %s\n", g_rank, dt_status_string(st), dt_last_error_message());
  } else {
    ok = st == DT_OK;
    if (!ok) fprintf(stderr, "rank %d: backward gave %s: %s\n", g_rank, dt_status_string(st), dt_last_error_message());
    dt_tensor *w2, *g2 = NULL, *w1, *g1 = NULL;
    OK(dt_module_parameter(model, 2, NULL, 0, NULL, &w2));
    OK(dt_module_parameter(model, 0, NULL, 0, NULL, &w1));
    OK(dt_tensor_grad(w2, &g2));
    OK(dt_tensor_grad(w1, &g1));
    double s2 = -1, s1 = 0;
    dt_tensor* t;
    if (g2) { OK(dt_sum(g2, NULL, 0, 0, &t)); OK(dt_tensor_item(t, &s2)); dt_tensor_release(t); }
    if (g1) { OK(dt_sum(g1, NULL, 0, 0, &t)); OK(dt_tensor_item(t, &s1)); dt_tensor_release(t); }
    /* d(sum h)/dW1 = count of positive units x inputs: nonzero; the unused layer: 0 */
    if (ok && !(s2 == 0.0 && s1 != 0.0)) {
      fprintf(stderr, "rank %d: unused grad sum %g (expected 0), used grad sum %g\n", g_rank, s2, s1);
      ok = 0;
    }
    dt_tensor_release(w1); dt_tensor_release(w2); dt_tensor_release(g1); dt_tensor_release(g2);
  }
  if (ok) printf("rank %d: unused parameters with find_unused_parameters=%d: as expected\n", g_rank, find);
  dt_tensor_release(x); dt_tensor_release(h); dt_tensor_release(loss);
  dt_module_release(first);
  dt_module_release(ddp);
  dt_module_release(model);
  dt_process_group_release(pg);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc >= 5 && strcmp(argv[1], "train") == 0) return train(argv[2], atoi(argv[3]), atoi(argv[4]), argc > 5 ? argv[5] : NULL);
  if (argc == 2 && strcmp(argv[1], "mismatch") == 0) return mismatch();
  if (argc == 3 && strcmp(argv[1], "init") == 0) {
    dt_module* model = make_mlp(128, 0);
    OK(dt_module_save(model, argv[2]));
    dt_module_release(model);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "unused") == 0) return unused(atoi(argv[2]));
  fprintf(stderr, "usage: see the comment at the top of ddp_digits.c\n");
  return 2;
}
