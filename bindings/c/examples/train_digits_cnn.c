/* train_digits_cnn: a small convolutional net learns the UCI handwritten digits (8 x 8
 * images) through the C API only:
 *
 *   Conv2d(1, 32, 3, padding 1) - BatchNorm2d(32) - ReLU - MaxPool2d(2)    32 x 4 x 4
 *   Conv2d(32, 64, 3, padding 1) - BatchNorm2d(64) - ReLU - MaxPool2d(2)   64 x 2 x 2
 *   Flatten - Linear(256, 10)
 *
 * Training uses each batch's statistics; the test, in eval mode, the running ones.
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

#include "digits_loop.h"

#define NLAYERS 10
#define NPARAMS 10

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
  static float xs[ROWS * PIXELS];
  static int64_t ys[ROWS];
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
  dt_tensor* params[NPARAMS] = {NULL};
  dt_optimizer* opt = NULL;

  if (load_digits_shuffled(path, &rng, xs, ys)) return 1;
  CHECK(dt_try_gpu(0, &device));
  CHECK(dt_device_format(device, name, sizeof name, &need));
  printf("device: %s\n", name);
  {
    const int64_t image[3] = {1, 8, 8}; /* one channel */
    CHECK(digits_tensors(xs, ys, image, 3, device, &x_train, &y_train, &x_test, &y_test));
  }

  CHECK(dt_manual_seed(0));
  CHECK(dt_conv2d_new(1, 32, k3, NULL, pad1, NULL, 1, 1, DT_FLOAT32, device, &layers[0]));
  CHECK(dt_batch_norm2d_new(32, 1e-5, 0.1, 1, 1, DT_FLOAT32, device, &layers[1]));
  CHECK(dt_relu_new(&layers[2]));
  CHECK(dt_max_pool2d_new(k2, NULL, NULL, NULL, 0, &layers[3]));
  CHECK(dt_conv2d_new(32, 64, k3, NULL, pad1, NULL, 1, 1, DT_FLOAT32, device, &layers[4]));
  CHECK(dt_batch_norm2d_new(64, 1e-5, 0.1, 1, 1, DT_FLOAT32, device, &layers[5]));
  CHECK(dt_relu_new(&layers[6]));
  CHECK(dt_max_pool2d_new(k2, NULL, NULL, NULL, 0, &layers[7]));
  CHECK(dt_flatten_new(1, -1, &layers[8]));
  CHECK(dt_linear_new(64 * 2 * 2, CLASSES, 1, DT_FLOAT32, device, &layers[9]));
  CHECK(dt_sequential_new(layers, NLAYERS, &model));
  CHECK(dt_cross_entropy_loss_new(NULL, DT_REDUCTION_MEAN, -100, 0.0, &loss_fn));
  CHECK(dt_module_parameter_count(model, &nparams));
  if (nparams != NPARAMS) {
    fprintf(stderr, "train_digits_cnn: expected %d parameters, got %d\n", NPARAMS, (int)nparams);
    goto fail;
  }
  for (i = 0; i < NPARAMS; ++i) CHECK(dt_module_parameter(model, (size_t)i, NULL, 0, NULL, &params[i]));
  CHECK(dt_adam_new((const dt_tensor* const*)params, nparams, 2e-3, 0.9, 0.999, 1e-8, 0.0, 0, &opt));

  for (epoch = 1; epoch <= epochs; ++epoch) {
    double mean_loss = 0;
    CHECK(digits_train_epoch(model, loss_fn, opt, x_train, y_train, device, &rng, &mean_loss));
    printf("epoch %2d  loss %.4f\n", epoch, mean_loss);
  }
  CHECK(digits_accuracy(model, model, x_test, y_test, &accuracy));
  printf("test accuracy: %.2f%% (%d of %d)\n", 100 * accuracy, (int)(accuracy * (ROWS - TRAIN) + 0.5), ROWS - TRAIN);
  rc = accuracy >= minimum ? 0 : 2;
  if (rc) fprintf(stderr, "train_digits_cnn: the accuracy is below %.2f%%\n", 100 * minimum);

fail:
  for (i = 0; i < NPARAMS; ++i) dt_tensor_release(params[i]);
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
