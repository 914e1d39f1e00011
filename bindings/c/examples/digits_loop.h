/* digits_loop.h: the training epoch and the test evaluation the digits examples share
 * (train_digits, train_digits_cnn), through the C API only. Every function returns the
 * first failing call's status; the caller prints dt_last_error_message(). */
#ifndef DEVTENSOR_EXAMPLES_DIGITS_LOOP_H
#define DEVTENSOR_EXAMPLES_DIGITS_LOOP_H

#include <devtensor.h>

#include "digits_data.h"

#define DIGITS_BATCH 64

/* The shuffled images as training and test tensors on device: xs holds ROWS images of
 * PIXELS floats, shaped per image as image_shape (image_dims values multiplying to
 * PIXELS, e.g. {64} or {1, 8, 8}). */
static dt_status digits_tensors(const float* xs, const int64_t* ys, const int64_t* image_shape, size_t image_dims,
                                dt_device device, dt_tensor** x_train, dt_tensor** y_train, dt_tensor** x_test,
                                dt_tensor** y_test) {
  int64_t shape[4] = {TRAIN, 0, 0, 0};
  const int64_t train_y[1] = {TRAIN}, test_y[1] = {ROWS - TRAIN};
  size_t d;
  dt_status st;
  for (d = 0; d < image_dims && d < 3; ++d) shape[d + 1] = image_shape[d];
  st = dt_tensor_from_data(xs, sizeof(float) * TRAIN * PIXELS, shape, image_dims + 1, DT_FLOAT32, device, x_train);
  if (st == DT_OK) st = dt_tensor_from_data(ys, sizeof(int64_t) * TRAIN, train_y, 1, DT_INT64, device, y_train);
  shape[0] = ROWS - TRAIN;
  if (st == DT_OK)
    st = dt_tensor_from_data(xs + TRAIN * PIXELS, sizeof(float) * (ROWS - TRAIN) * PIXELS, shape, image_dims + 1,
                             DT_FLOAT32, device, x_test);
  if (st == DT_OK)
    st = dt_tensor_from_data(ys + TRAIN, sizeof(int64_t) * (ROWS - TRAIN), test_y, 1, DT_INT64, device, y_test);
  return st;
}

/* One epoch: a fresh shuffle from *rng, batches of DIGITS_BATCH through runner and
 * loss_fn, a step of opt after each. *mean_loss is the mean of the batch losses. */
static dt_status digits_train_epoch(dt_module* runner, dt_module* loss_fn, dt_optimizer* opt, const dt_tensor* x_train,
                                    const dt_tensor* y_train, dt_device device, uint64_t* rng, double* mean_loss) {
  static int64_t perm[TRAIN];
  const int64_t n = TRAIN;
  double total = 0;
  int batches = 0, start;
  dt_tensor *index = NULL, *xe = NULL, *ye = NULL;
  dt_status st;
  shuffle(perm, TRAIN, rng);
  st = dt_tensor_from_data(perm, sizeof perm, &n, 1, DT_INT64, device, &index);
  if (st == DT_OK) st = dt_index_select(x_train, 0, index, &xe);
  if (st == DT_OK) st = dt_index_select(y_train, 0, index, &ye);
  dt_tensor_release(index);
  for (start = 0; st == DT_OK && start < TRAIN; start += DIGITS_BATCH) {
    const int64_t len = TRAIN - start < DIGITS_BATCH ? TRAIN - start : DIGITS_BATCH;
    dt_tensor *xb = NULL, *yb = NULL, *logits = NULL, *loss = NULL;
    const dt_tensor* in[2];
    double v = 0;
    st = dt_narrow(xe, 0, start, len, &xb);
    if (st == DT_OK) st = dt_narrow(ye, 0, start, len, &yb);
    if (st == DT_OK) st = dt_optimizer_zero_grad(opt);
    in[0] = xb;
    if (st == DT_OK) st = dt_module_forward(runner, in, 1, &logits);
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
    total += v;
    ++batches;
  }
  dt_tensor_release(xe);
  dt_tensor_release(ye);
  *mean_loss = batches ? total / batches : 0;
  return st;
}

/* The share of test images whose largest logit is their label, with model in eval mode
 * and gradients off (runner: the model or a DataParallel around it). */
static dt_status digits_accuracy(dt_module* model, dt_module* runner, const dt_tensor* x_test,
                                 const dt_tensor* y_test, double* accuracy) {
  dt_tensor *logits = NULL, *pred = NULL, *hit = NULL, *hits = NULL;
  const dt_tensor* in[1];
  const int64_t class_dim = 1;
  double correct = 0;
  dt_status st = dt_module_eval(model);
  if (st == DT_OK) st = dt_set_grad_enabled(0);
  in[0] = x_test;
  if (st == DT_OK) st = dt_module_forward(runner, in, 1, &logits);
  if (st == DT_OK) st = dt_argmax(logits, &class_dim, 1, 0, &pred);
  if (st == DT_OK) st = dt_eq(pred, y_test, &hit);
  if (st == DT_OK) st = dt_sum(hit, NULL, 0, 0, &hits);
  if (st == DT_OK) st = dt_tensor_item(hits, &correct);
  dt_tensor_release(logits);
  dt_tensor_release(pred);
  dt_tensor_release(hit);
  dt_tensor_release(hits);
  *accuracy = correct / (ROWS - TRAIN);
  return st;
}

#endif /* DEVTENSOR_EXAMPLES_DIGITS_LOOP_H */
