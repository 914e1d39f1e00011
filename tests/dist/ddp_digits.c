/*
 * ddp_digits: the digits MLP (64-128-10, cross-entropy, SGD with momentum) trained with
 * DistributedDataParallel, for tests/dist/test_ddp.py.
 *
 *   ddp_digits train DIGITS_CSV_GZ STEPS GLOBAL_BATCH [INIT.safetensors|-] [ACCUM]
 *       Without RANK in the environment: one process, no process group, the whole batch
 *       (the reference). Under `devtensor run`: every rank takes its equal share of each
 *       global batch (ranks in order, contiguous rows) and trains through a
 *       DistributedDataParallel; rank r starts from seed r, so only DDP's broadcast from
 *       rank 0 makes the ranks agree. Rank 0 (or the single process) prints
 *       "step S loss L" per step, L being the mean loss over the global batch (the ranks'
 *       losses averaged with an all-reduce), then "params equal on every rank" once the
 *       ranks' final parameters have been compared. INIT: start from these weights
 *       (PyTorch's names "0.weight" ...) instead of the seed, for the PyTorch comparison.
 *       ACCUM (default 1): gradient accumulation, as torch users write it: each share is
 *       cut into ACCUM equal micro-batches, each loss is divided by ACCUM, and all but the
 *       last backward run under dt_distributed_data_parallel_no_sync, so that the step's
 *       gradient is still the global batch's mean, reduced once.
 *   ddp_digits nosync DIGITS_CSV_GZ
 *       Rank r runs r + 1 backward passes of 8-row micro-batches with synchronisation off
 *       (so the ranks run different numbers: none may communicate), the first using only
 *       the first layer (an unused parameter is no error then, even without
 *       find_unused_parameters), then one synchronised pass. A plain copy of the model
 *       runs the same passes. Checks: after the local passes every .grad equals the
 *       copy's (bit for bit); after the synchronised pass it equals the copy's whole
 *       gradient averaged over the ranks with dt_all_reduce_ (within 1e-6 relative), on
 *       every rank; and no_sync refuses a module that is not a DistributedDataParallel.
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

static int train(const char* csv, int steps, int batch, const char* init, int accum) {
  static float x[ROWS * PIXELS];
  static int64_t y[ROWS];
  load_digits(csv, x, y);
  dt_process_group* pg = getenv("RANK") ? join() : NULL;
  if (batch % g_world != 0 || accum < 1 || (batch / g_world) % accum != 0) {
    fprintf(stderr, "the global batch %d does not split over %d ranks and %d micro-batches\n", batch, g_world, accum);
    return 1;
  }
  dt_module* model = make_mlp(128, (uint64_t)g_rank);
  if (init) OK(dt_module_load(model, init));
  dt_module* runner = model;
  if (pg) OK(dt_distributed_data_parallel_new(model, pg, 0, 0, &runner));
  dt_optimizer* opt = make_sgd(model);
  dt_module* loss_fn;
  OK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  const int share = batch / g_world, micro = share / accum;
  for (int step = 0; step < steps; ++step) {
    OK(dt_optimizer_zero_grad(opt));
    double v = 0; /* this rank's loss over its share: the sum of the divided micro-batch losses */
    for (int m = 0; m < accum; ++m) {
      /* rows of this step's global batch, wrapping around the data; this rank's share */
      int first = (step * batch) % (ROWS - batch) + g_rank * share + m * micro;
      int64_t xs[2] = {micro, PIXELS}, ys[1] = {micro};
      dt_tensor *xb, *yb, *logits, *loss;
      OK(dt_tensor_from_data(x + first * PIXELS, sizeof(float) * (size_t)(micro * PIXELS), xs, 2, DT_FLOAT32, kCpu, &xb));
      OK(dt_tensor_from_data(y + first, sizeof(int64_t) * (size_t)micro, ys, 1, DT_INT64, kCpu, &yb));
      if (pg && accum > 1) OK(dt_distributed_data_parallel_no_sync(runner, m < accum - 1));
      const dt_tensor* in[2] = {xb, NULL};
      OK(dt_module_forward(runner, in, 1, &logits));
      in[0] = logits;
      in[1] = yb;
      OK(dt_module_forward(loss_fn, in, 2, &loss));
      if (accum > 1) {
        dt_tensor* divided;
        OK(dt_div_scalar(loss, accum, &divided));
        dt_tensor_release(loss);
        loss = divided;
      }
      OK(dt_backward(loss, NULL));
      double part = 0;
      OK(dt_tensor_item(loss, &part));
      v += part;
      dt_tensor_release(xb);
      dt_tensor_release(yb);
      dt_tensor_release(logits);
      dt_tensor_release(loss);
    }
    OK(dt_optimizer_step(opt));
    if (pg) {
      dt_tensor* mean;
      OK(dt_tensor_full((const int64_t*)NULL, 0, v, DT_FLOAT64, kCpu, &mean));
      OK(dt_all_reduce_(pg, mean, DT_REDUCE_AVG));
      OK(dt_tensor_item(mean, &v));
      dt_tensor_release(mean);
    }
    if (g_rank == 0) printf("step %d loss %.9f\n", step, v);
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

/* The gradient of m's parameter i as floats in a new buffer (NULL when it has none); its
 * element count in *numel. With reduce, the gradient averaged over pg's ranks first. */
static float* grad_values(dt_module* m, size_t i, int64_t* numel, dt_process_group* reduce) {
  dt_tensor *p, *g = NULL;
  OK(dt_module_parameter(m, i, NULL, 0, NULL, &p));
  OK(dt_tensor_numel(p, numel));
  OK(dt_tensor_grad(p, &g));
  float* v = NULL;
  if (g) {
    dt_tensor* c;
    OK(dt_tensor_to(g, kCpu, DT_FLOAT32, DT_TO_COPY, &c));
    if (reduce) OK(dt_all_reduce_(reduce, c, DT_REDUCE_AVG));
    v = malloc(sizeof(float) * (size_t)*numel);
    OK(dt_tensor_copy_to_host(c, v, sizeof(float) * (size_t)*numel));
    dt_tensor_release(c);
  }
  dt_tensor_release(g);
  dt_tensor_release(p);
  return v;
}

/* 1 when every parameter of model has a gradient within rel (relative to the largest
 * magnitude of the expected one; 0: bit for bit) of copy's, averaged over pg when given. */
static int grads_match(dt_module* model, dt_module* copy, dt_process_group* reduce, double rel, const char* when) {
  size_t n = 0;
  OK(dt_module_parameter_count(model, &n));
  int ok = 1;
  for (size_t i = 0; i < n; ++i) {
    int64_t numel = 0;
    float* got = grad_values(model, i, &numel, NULL);
    float* want = grad_values(copy, i, &numel, reduce);
    if (!got && !want) continue; /* neither has one (a layer no pass has reached yet) */
    if (!got || !want) {
      fprintf(stderr, "rank %d: %s: parameter %zu has %s gradient\n", g_rank, when, i, got ? "no expected" : "no");
      ok = 0;
    } else {
      double scale = 0, worst = 0;
      for (int64_t k = 0; k < numel; ++k) scale = fmax(scale, fabs(want[k]));
      for (int64_t k = 0; k < numel; ++k) worst = fmax(worst, fabs((double)got[k] - want[k]));
      if (scale == 0 || worst > rel * scale) {
        fprintf(stderr, "rank %d: %s: parameter %zu's gradient is off by %g (largest expected %g)\n", g_rank, when, i,
                worst, scale);
        ok = 0;
      }
    }
    free(got);
    free(want);
  }
  return ok;
}

static int nosync(const char* csv) {
  static float x[ROWS * PIXELS];
  static int64_t y[ROWS];
  load_digits(csv, x, y);
  dt_process_group* pg = join();
  dt_module* model = make_mlp(128, 0);
  dt_module* copy = make_mlp(128, 0);
  dt_module *ddp, *loss_fn;
  OK(dt_distributed_data_parallel_new(model, pg, 0, 0, &ddp));
  OK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  int ok = 1;
  if (dt_distributed_data_parallel_no_sync(model, 1) != DT_ERR_INVALID_ARGUMENT ||
      !strstr(dt_last_error_message(), "the module is a Sequential, not a DistributedDataParallel")) {
    fprintf(stderr, "rank %d: no_sync on a Sequential: %s\n", g_rank, dt_last_error_message());
    ok = 0;
  }
  if (dt_distributed_data_parallel_no_sync(ddp, 2) != DT_ERR_INVALID_ARGUMENT ||
      !strstr(dt_last_error_message(), "no_sync is 2; expected 0 or 1")) {
    fprintf(stderr, "rank %d: no_sync 2: %s\n", g_rank, dt_last_error_message());
    ok = 0;
  }
  const int local = g_rank + 1;
  OK(dt_distributed_data_parallel_no_sync(ddp, 1));
  for (int k = 0; k <= local; ++k) {
    if (k == local) {
      ok &= grads_match(model, copy, NULL, 0.0, "after the local passes");
      OK(dt_distributed_data_parallel_no_sync(ddp, 0));
    }
    const int first = (g_rank * 8 + k) * 8; /* rows of their own for every rank and pass */
    int64_t xs[2] = {8, PIXELS}, ys[1] = {8};
    dt_tensor *xb, *yb;
    OK(dt_tensor_from_data(x + first * PIXELS, sizeof(float) * 8 * PIXELS, xs, 2, DT_FLOAT32, kCpu, &xb));
    OK(dt_tensor_from_data(y + first, sizeof(int64_t) * 8, ys, 1, DT_INT64, kCpu, &yb));
    for (int side = 0; side < 2; ++side) {
      dt_module* net = side ? copy : model;
      dt_tensor *out, *loss;
      const dt_tensor* in[2] = {xb, yb};
      if (k == 0) { /* the first layer alone: the second gets no gradient */
        dt_module* l1;
        OK(dt_module_child(net, "0", &l1));
        OK(dt_module_forward(l1, in, 1, &out));
        OK(dt_sum(out, NULL, 0, 0, &loss));
        dt_module_release(l1);
      } else {
        OK(dt_module_forward(side ? copy : ddp, in, 1, &out));
        in[0] = out;
        OK(dt_module_forward(loss_fn, in, 2, &loss));
      }
      OK(dt_backward(loss, NULL));
      dt_tensor_release(out);
      dt_tensor_release(loss);
    }
    dt_tensor_release(xb);
    dt_tensor_release(yb);
  }
  ok &= grads_match(model, copy, pg, 1e-6, "after the synchronised pass");
  if (ok) printf("rank %d: %d local passes, then the whole gradient averaged: as expected\n", g_rank, local);
  dt_module_release(loss_fn);
  dt_module_release(ddp);
  dt_module_release(copy);
  dt_module_release(model);
  dt_process_group_release(pg);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc >= 5 && strcmp(argv[1], "train") == 0)
    return train(argv[2], atoi(argv[3]), atoi(argv[4]), argc > 5 && strcmp(argv[5], "-") != 0 ? argv[5] : NULL,
                 argc > 6 ? atoi(argv[6]) : 1);
  if (argc == 3 && strcmp(argv[1], "nosync") == 0) return nosync(argv[2]);
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
