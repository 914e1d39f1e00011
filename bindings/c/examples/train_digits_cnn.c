/* train_digits_cnn: a small convolutional net learns the UCI handwritten digits (8 x 8
 * images) through the C API only:
 *
 *   Conv2d(1, 32, 3, padding 1) - ReLU - MaxPool2d(2)       32 x 4 x 4
 *   Conv2d(32, 64, 3, padding 1) - ReLU - MaxPool2d(2)      64 x 2 x 2
 *   Flatten - Linear(256, 10)
 *
 *   train_digits_cnn [path/to/digits.csv.gz] [epochs] [min-accuracy-percent]
 *
 * The same fixed split as train_digits (1437 training and 360 test images), Adam, fixed
 * seeds, on the best device there is. Prints the mean training loss per epoch and the
 * test accuracy; exits 1 on any error, 2 when the accuracy is below the minimum (98%). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <devtensor.h>

#include "digits_data.h"

#define BATCH 64
#define NLAYERS 9

#ifndef DT_DIGITS_PATH
#define DT_DIGITS_PATH "data/digits.csv.gz"
#endif

static int check(dt_status st, const char* what) {
  if (st == DT_OK) return 0;
  fprintf(stderr, "train_digits_cnn: %s: %s: %s\n", what, dt_status_string(st), dt_last_error_message());
  return 1;
}

#define CHECK(expr)                      \
  do {                                   \
    if (check((expr), #expr)) goto fail; \
  } while (0)

int main(int argc, char** argv) {
  const char* path = argc > 1 && argv[1][0] ? argv[1] : DT_DIGITS_PATH;
  int epochs = argc > 2 ? atoi(argv[2]) : 40;
  double minimum = argc > 3 ? atof(argv[3]) / 100.0 : 0.98;
  static float pixels[ROWS * PIXELS];
  static int64_t labels[ROWS];
  static float xs[ROWS * PIXELS];
  static int64_t ys[ROWS];
  int64_t order[ROWS], perm[TRAIN];
  uint64_t rng = 20261122;
  const int64_t k3[2] = {3, 3}, pad1[2] = {1, 1}, k2[2] = {2, 2};
  dt_device device;
  char name[64];
  size_t need = 0, nparams = 0;
  int rc = 1, epoch, i;
  double accuracy = 0;
  dt_module* layers[NLAYERS] = {NULL};
  dt_module *model = NULL, *loss_fn = NULL;
  dt_tensor *x_train = NULL, *y_train = NULL, *x_test = NULL, *y_test = NULL;
  dt_tensor* params[6] = {NULL};
  dt_optimizer* opt = NULL;

  if (load_digits(path, pixels, labels)) return 1;
  shuffle(order, ROWS, &rng);
  for (i = 0; i < ROWS; ++i) {
    memcpy(xs + i * PIXELS, pixels + order[i] * PIXELS, sizeof(float) * PIXELS);
    ys[i] = labels[order[i]];
  }
  CHECK(dt_try_gpu(0, &device));
  CHECK(dt_device_format(device, name, sizeof name, &need));
  printf("device: %s\n", name);
  {
    /* Images as [N, 1, 8, 8]: one channel. */
    const int64_t train_x[4] = {TRAIN, 1, 8, 8}, test_x[4] = {ROWS - TRAIN, 1, 8, 8};
    const int64_t train_y[1] = {TRAIN}, test_y[1] = {ROWS - TRAIN};
    CHECK(dt_tensor_from_data(xs, sizeof(float) * TRAIN * PIXELS, train_x, 4, DT_FLOAT32, device, &x_train));
    CHECK(dt_tensor_from_data(ys, sizeof(int64_t) * TRAIN, train_y, 1, DT_INT64, device, &y_train));
    CHECK(dt_tensor_from_data(xs + TRAIN * PIXELS, sizeof(float) * (ROWS - TRAIN) * PIXELS, test_x, 4, DT_FLOAT32,
                              device, &x_test));
    CHECK(dt_tensor_from_data(ys + TRAIN, sizeof(int64_t) * (ROWS - TRAIN), test_y, 1, DT_INT64, device, &y_test));
  }

  CHECK(dt_manual_seed(0));
  CHECK(dt_conv2d_new(1, 32, k3, NULL, pad1, NULL, 1, 1, DT_FLOAT32, device, &layers[0]));
  CHECK(dt_relu_new(&layers[1]));
  CHECK(dt_max_pool2d_new(k2, NULL, NULL, NULL, 0, &layers[2]));
  CHECK(dt_conv2d_new(32, 64, k3, NULL, pad1, NULL, 1, 1, DT_FLOAT32, device, &layers[3]));
  CHECK(dt_relu_new(&layers[4]));
  CHECK(dt_max_pool2d_new(k2, NULL, NULL, NULL, 0, &layers[5]));
  CHECK(dt_flatten_new(1, -1, &layers[6]));
  CHECK(dt_linear_new(64 * 2 * 2, CLASSES, 1, DT_FLOAT32, device, &layers[7]));
  CHECK(dt_sequential_new(layers, 8, &model));
  CHECK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  CHECK(dt_module_parameter_count(model, &nparams));
  if (nparams != 6) {
    fprintf(stderr, "train_digits_cnn: expected 6 parameters, got %d\n", (int)nparams);
    goto fail;
  }
  for (i = 0; i < 6; ++i) CHECK(dt_module_parameter(model, (size_t)i, NULL, 0, NULL, &params[i]));
  CHECK(dt_adam_new((const dt_tensor* const*)params, nparams, 2e-3, 0.9, 0.999, 1e-8, 0.0, 0, &opt));

  for (epoch = 1; epoch <= epochs; ++epoch) {
    double total = 0;
    int batches = 0, start;
    dt_tensor *index = NULL, *xe = NULL, *ye = NULL;
    const int64_t n = TRAIN;
    shuffle(perm, TRAIN, &rng);
    CHECK(dt_tensor_from_data(perm, sizeof perm, &n, 1, DT_INT64, device, &index));
    CHECK(dt_index_select(x_train, 0, index, &xe));
    CHECK(dt_index_select(y_train, 0, index, &ye));
    dt_tensor_release(index);
    for (start = 0; start < TRAIN; start += BATCH) {
      const int64_t len = TRAIN - start < BATCH ? TRAIN - start : BATCH;
      dt_tensor *xb = NULL, *yb = NULL, *logits = NULL, *loss = NULL;
      const dt_tensor* in[2];
      double v = 0;
      dt_status st = dt_narrow(xe, 0, start, len, &xb);
      if (st == DT_OK) st = dt_narrow(ye, 0, start, len, &yb);
      if (st == DT_OK) st = dt_optimizer_zero_grad(opt);
      in[0] = xb;
      if (st == DT_OK) st = dt_module_forward(model, in, 1, &logits);
      in[0] = logits;
      in[1] = yb;
      if (st == DT_OK) st = dt_module_forward(loss_fn, in, 2, &loss);
      if (st == DT_OK) st = dt_backward(loss, NULL);
      if (st == DT_OK) st = dt_optimizer_step(opt);
      if (st == DT_OK) st = dt_tensor_item(loss, &v);
      dt_tensor_release(xb);
      dt_tensor_release(yb);
      dt_tensor_release(logits);
      dt_tensor_release(loss);
      if (check(st, "training step")) {
        dt_tensor_release(xe);
        dt_tensor_release(ye);
        goto fail;
      }
      total += v;
      ++batches;
    }
    dt_tensor_release(xe);
    dt_tensor_release(ye);
    printf("epoch %2d  loss %.4f\n", epoch, total / batches);
  }

  {
    dt_tensor *logits = NULL, *pred = NULL, *hit = NULL, *hits = NULL;
    const dt_tensor* in[1];
    const int64_t class_dim = 1;
    double correct = 0;
    dt_status st = dt_module_eval(model);
    if (st == DT_OK) st = dt_set_grad_enabled(0);
    in[0] = x_test;
    if (st == DT_OK) st = dt_module_forward(model, in, 1, &logits);
    if (st == DT_OK) st = dt_argmax(logits, &class_dim, 1, 0, &pred);
    if (st == DT_OK) st = dt_eq(pred, y_test, &hit);
    if (st == DT_OK) st = dt_sum(hit, NULL, 0, 0, &hits);
    if (st == DT_OK) st = dt_tensor_item(hits, &correct);
    dt_tensor_release(logits);
    dt_tensor_release(pred);
    dt_tensor_release(hit);
    dt_tensor_release(hits);
    if (check(st, "evaluation")) goto fail;
    accuracy = correct / (ROWS - TRAIN);
    printf("test accuracy: %.2f%% (%d of %d)\n", 100 * accuracy, (int)correct, ROWS - TRAIN);
  }
  rc = accuracy >= minimum ? 0 : 2;
  if (rc) fprintf(stderr, "train_digits_cnn: the accuracy is below %.2f%%\n", 100 * minimum);

fail:
  for (i = 0; i < 6; ++i) dt_tensor_release(params[i]);
  dt_optimizer_release(opt);
  dt_module_release(loss_fn);
  dt_module_release(model);
  for (i = 0; i < NLAYERS; ++i) dt_module_release(layers[i]);
  dt_tensor_release(x_train);
  dt_tensor_release(y_train);
  dt_tensor_release(x_test);
  dt_tensor_release(y_test);
  return rc;
}
