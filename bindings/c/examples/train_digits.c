/* train_digits: an MLP (64-128-10) learns the UCI handwritten digits on the best device
 * there is, through the C API only: devices, tensors, modules, autograd, an optimizer.
 *
 *   train_digits [path/to/digits.csv.gz] [epochs] [devices]
 *
 * devices, a comma-separated list such as "cpu:0,cpu:1" or "cuda:0,cuda:1", trains
 * through DataParallel over them (the data and the model on the first); the curve is
 * the one-device curve up to float rounding.
 * Fixed split (a seeded shuffle: 1437 training and 360 test images) and fixed seeds, so
 * every run prints the same curve on a given device. Prints the device, the mean
 * training loss per epoch and the test accuracy; exits 1 on any error, 2 when the
 * accuracy is below 95%. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <devtensor.h>

#include "digits_loop.h"

#ifndef DT_DIGITS_PATH
#define DT_DIGITS_PATH "data/digits.csv.gz"
#endif

static int check(dt_status st, const char* what) {
  if (st == DT_OK) return 0;
  fprintf(stderr, "train_digits: %s: %s: %s\n", what, dt_status_string(st), dt_last_error_message());
  return 1;
}
#define CHECK(expr)                      \
  do {                                   \
    if (check((expr), #expr)) goto fail; \
  } while (0)

/* Parses "cpu:0,cpu:1" into devices; returns their count, 0 on a bad list. */
static size_t parse_devices(const char* list, dt_device* devices, size_t cap) {
  char name[32];
  size_t n = 0;
  while (*list && n < cap) {
    size_t len = strcspn(list, ",");
    if (len == 0 || len >= sizeof name) return 0;
    memcpy(name, list, len);
    name[len] = '\0';
    if (check(dt_device_parse(name, &devices[n]), name)) return 0;
    ++n;
    list += len;
    if (*list == ',') ++list;
  }
  return *list ? 0 : n;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 && argv[1][0] ? argv[1] : DT_DIGITS_PATH; /* "" for the default */
  int epochs = argc > 2 ? atoi(argv[2]) : 30;
  dt_device replicas[8];
  size_t nreplicas = 0;
  static float xs[ROWS * PIXELS];
  static int64_t ys[ROWS];
  uint64_t rng = 20261122;
  dt_device device;
  char name[64];
  size_t need = 0;
  int rc = 1, epoch, i;
  double accuracy = 0;
  dt_module *l1 = NULL, *act = NULL, *l2 = NULL, *model = NULL, *loss_fn = NULL, *parallel = NULL;
  dt_module* runner = NULL; /* what forward runs: the model, or the DataParallel around it */
  dt_tensor *x_train = NULL, *y_train = NULL, *x_test = NULL, *y_test = NULL;
  dt_tensor* params[4] = {NULL, NULL, NULL, NULL};
  dt_optimizer* opt = NULL;
  size_t nparams = 0;

  if (load_digits_shuffled(path, &rng, xs, ys)) return 1;

  if (argc > 3) {
    nreplicas = parse_devices(argv[3], replicas, sizeof replicas / sizeof replicas[0]);
    if (nreplicas == 0) {
      fprintf(stderr, "train_digits: bad device list \"%s\" (expected e.g. cpu:0,cpu:1)\n", argv[3]);
      return 1;
    }
    device = replicas[0];
  } else {
    CHECK(dt_try_gpu(0, &device));
  }
  CHECK(dt_device_format(device, name, sizeof name, &need));
  printf("device: %s\n", name);
  if (nreplicas) printf("DataParallel over %s\n", argv[3]);
  {
    const int64_t image[1] = {PIXELS};
    CHECK(digits_tensors(xs, ys, image, 1, device, &x_train, &y_train, &x_test, &y_test));
  }

  CHECK(dt_manual_seed(0));
  CHECK(dt_linear_new(PIXELS, 128, 1, DT_FLOAT32, device, &l1));
  CHECK(dt_relu_new(&act));
  CHECK(dt_linear_new(128, CLASSES, 1, DT_FLOAT32, device, &l2));
  {
    dt_module* layers[3];
    layers[0] = l1;
    layers[1] = act;
    layers[2] = l2;
    CHECK(dt_sequential_new(layers, 3, &model));
  }
  runner = model;
  if (nreplicas) {
    const dt_device default_device = {DT_DEVICE_DEFAULT, 0};
    CHECK(dt_data_parallel_new(model, replicas, nreplicas, default_device, &parallel));
    runner = parallel;
  }
  CHECK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  CHECK(dt_module_parameter_count(model, &nparams));
  for (i = 0; i < (int)nparams && i < 4; ++i) CHECK(dt_module_parameter(model, (size_t)i, NULL, 0, NULL, &params[i]));
  CHECK(dt_adam_new((const dt_tensor* const*)params, nparams, 1e-3, 0.9, 0.999, 1e-8, 0.0, 0, &opt));

  for (epoch = 1; epoch <= epochs; ++epoch) {
    double mean_loss = 0;
    CHECK(digits_train_epoch(runner, loss_fn, opt, x_train, y_train, device, &rng, &mean_loss));
    printf("epoch %2d  loss %.4f\n", epoch, mean_loss);
  }
  CHECK(digits_accuracy(model, runner, x_test, y_test, &accuracy));
  printf("test accuracy: %.2f%% (%d of %d)\n", 100 * accuracy, (int)(accuracy * (ROWS - TRAIN) + 0.5), ROWS - TRAIN);
  rc = accuracy >= 0.95 ? 0 : 2;
  if (rc) fprintf(stderr, "train_digits: the accuracy is below 95%%\n");

fail:
  for (i = 0; i < 4; ++i) dt_tensor_release(params[i]);
  dt_optimizer_release(opt);
  dt_module_release(loss_fn);
  dt_module_release(parallel);
  dt_module_release(model);
  dt_module_release(l2);
  dt_module_release(act);
  dt_module_release(l1);
  dt_tensor_release(x_train);
  dt_tensor_release(y_train);
  dt_tensor_release(x_test);
  dt_tensor_release(y_test);
  return rc;
}
