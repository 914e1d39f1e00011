/* model_check.h: what the model examples (resnet18, transformer) share: loading the
 * check file tools/export_models.py writes, and comparing logits with PyTorch's. */
#ifndef DEVTENSOR_EXAMPLES_MODEL_CHECK_H
#define DEVTENSOR_EXAMPLES_MODEL_CHECK_H

#include <stdio.h>

#include <devtensor.h>

/* The largest |got - want| and the largest |want| (so *worst / *largest is the
 * difference relative to the largest logit). */
static dt_status largest_difference(const dt_tensor* got, const dt_tensor* want, double* worst, double* largest) {
  dt_tensor *diff = NULL, *adiff = NULL, *max_diff = NULL, *awant = NULL, *max_want = NULL;
  dt_status st = dt_sub(got, want, &diff);
  if (st == DT_OK) st = dt_abs(diff, &adiff);
  if (st == DT_OK) st = dt_max(adiff, NULL, 0, 0, &max_diff);
  if (st == DT_OK) st = dt_abs(want, &awant);
  if (st == DT_OK) st = dt_max(awant, NULL, 0, 0, &max_want);
  if (st == DT_OK) st = dt_tensor_item(max_diff, worst);
  if (st == DT_OK) st = dt_tensor_item(max_want, largest);
  dt_tensor_release(diff);
  dt_tensor_release(adiff);
  dt_tensor_release(max_diff);
  dt_tensor_release(awant);
  dt_tensor_release(max_want);
  return st;
}

/* Prints the comparison; 0 when the relative difference is within limit, else 2. */
static int report_difference(const char* prog, double worst, double largest, double limit) {
  const double relative = largest > 0 ? worst / largest : worst;
  printf("logits: largest %.4g, largest difference from PyTorch %.3g (relative %.3g, limit %.0e)\n", largest, worst,
         relative, limit);
  if (relative <= limit) return 0;
  fprintf(stderr, "%s: the logits differ from PyTorch's by more than %g\n", prog, limit);
  return 2;
}

#endif /* DEVTENSOR_EXAMPLES_MODEL_CHECK_H */
