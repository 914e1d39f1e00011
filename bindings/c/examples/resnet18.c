/* resnet18: torchvision's ResNet-18, built from devtensor's functional ops around the
 * state_dict PyTorch saved (safetensors, PyTorch's key names), run in eval mode on the
 * best device there is, its logits compared with PyTorch's.
 *
 *   resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]
 *
 * tools/export_models.py writes both files: the model's state_dict, and "input"
 * [N, 3, 224, 224] with PyTorch's "logits" [N, 1000]. The network:
 *
 *   conv1 (7x7, stride 2, padding 3) - bn1 - relu - maxpool (3x3, stride 2, padding 1)
 *   layer1..layer4: two BasicBlocks each (conv3x3 - bn - relu - conv3x3 - bn, plus the
 *     input, through downsample (conv1x1 - bn) when the stride or width changes) - relu
 *   adaptive average pool to 1x1 - flatten - fc
 *
 * Prints the device, the time of the forward pass and the largest difference from
 * PyTorch's logits relative to the largest logit; exits 1 on any error, 2 when the difference is over the limit
 * (1e-4). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <devtensor.h>

#include "model_check.h"

static const dt_state_dict* weights;
static int failed;

/* Records the first failure (and its message); later calls see `failed` and do nothing. */
static int ok(dt_status st, const char* what) {
  if (st == DT_OK) return 1;
  if (!failed) fprintf(stderr, "resnet18: %s: %s: %s\n", what, dt_status_string(st), dt_last_error_message());
  failed = 1;
  return 0;
}

/* The state_dict's tensor `prefix` + `name` (a new reference), or NULL. */
static dt_tensor* param(const char* prefix, const char* name) {
  char key[96];
  dt_tensor* t = NULL;
  snprintf(key, sizeof key, "%s%s", prefix, name);
  if (!failed) ok(dt_state_dict_find(weights, key, &t), key);
  return t;
}

/* The helpers below consume x (release it) and return a new tensor, or NULL after a failure. */
static dt_tensor* conv(dt_tensor* x, const char* prefix, int64_t stride, int64_t padding) {
  const int64_t s[2] = {stride, stride}, p[2] = {padding, padding};
  dt_tensor *w = param(prefix, "weight"), *y = NULL;
  if (!failed) ok(dt_conv2d(x, w, NULL, s, p, NULL, 1, &y), prefix);
  dt_tensor_release(w);
  dt_tensor_release(x);
  return y;
}

static dt_tensor* batch_norm(dt_tensor* x, const char* prefix) {
  dt_tensor *mean = param(prefix, "running_mean"), *var = param(prefix, "running_var");
  dt_tensor *w = param(prefix, "weight"), *b = param(prefix, "bias"), *y = NULL;
  if (!failed) ok(dt_batch_norm(x, mean, var, w, b, 0, 0.1, 1e-5, &y), prefix);
  dt_tensor_release(mean);
  dt_tensor_release(var);
  dt_tensor_release(w);
  dt_tensor_release(b);
  dt_tensor_release(x);
  return y;
}

static dt_tensor* relu(dt_tensor* x) {
  dt_tensor* y = NULL;
  if (!failed) ok(dt_relu(x, &y), "relu");
  dt_tensor_release(x);
  return y;
}

/* layerL.B: out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)). */
static dt_tensor* basic_block(dt_tensor* x, int layer, int block) {
  char pre[64], sub[80];
  const int64_t stride = layer > 1 && block == 0 ? 2 : 1;
  const int downsample = layer > 1 && block == 0;
  dt_tensor *out, *shortcut = x, *sum = NULL;
  snprintf(pre, sizeof pre, "layer%d.%d.", layer, block);
  dt_tensor_retain(x); /* the shortcut keeps x */
  snprintf(sub, sizeof sub, "%sconv1.", pre);
  out = conv(x, sub, stride, 1);
  snprintf(sub, sizeof sub, "%sbn1.", pre);
  out = relu(batch_norm(out, sub));
  snprintf(sub, sizeof sub, "%sconv2.", pre);
  out = conv(out, sub, 1, 1);
  snprintf(sub, sizeof sub, "%sbn2.", pre);
  out = batch_norm(out, sub);
  if (downsample) {
    snprintf(sub, sizeof sub, "%sdownsample.0.", pre);
    shortcut = conv(shortcut, sub, stride, 0);
    snprintf(sub, sizeof sub, "%sdownsample.1.", pre);
    shortcut = batch_norm(shortcut, sub);
  }
  if (!failed) ok(dt_add(out, shortcut, &sum), pre);
  dt_tensor_release(out);
  dt_tensor_release(shortcut);
  return relu(sum);
}

static dt_tensor* resnet18(dt_tensor* x) {
  const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1}, one[2] = {1, 1};
  dt_tensor *y = NULL, *w, *b, *wt = NULL, *prod = NULL;
  int layer, block;
  dt_tensor_retain(x);
  x = relu(batch_norm(conv(x, "conv1.", 2, 3), "bn1."));
  if (!failed) ok(dt_max_pool2d(x, k3, s2, p1, NULL, 0, &y), "maxpool");
  dt_tensor_release(x);
  x = y;
  for (layer = 1; layer <= 4; ++layer)
    for (block = 0; block < 2; ++block) x = basic_block(x, layer, block);
  y = NULL;
  if (!failed) ok(dt_adaptive_avg_pool2d(x, one, &y), "avgpool");
  dt_tensor_release(x);
  x = y;
  y = NULL;
  if (!failed) ok(dt_flatten(x, 1, -1, &y), "flatten");
  dt_tensor_release(x);
  x = y;
  /* fc: x @ weight^T + bias */
  w = param("fc.", "weight");
  b = param("fc.", "bias");
  y = NULL;
  if (!failed) ok(dt_transpose(w, 0, 1, &wt), "fc.weight^T");
  if (!failed) ok(dt_matmul(x, wt, &prod), "fc");
  if (!failed) ok(dt_add(prod, b, &y), "fc.bias");
  dt_tensor_release(w);
  dt_tensor_release(b);
  dt_tensor_release(wt);
  dt_tensor_release(prod);
  dt_tensor_release(x);
  return y;
}

int main(int argc, char** argv) {
  const double limit = argc > 3 ? atof(argv[3]) : 1e-4;
  dt_state_dict *model = NULL, *check = NULL;
  dt_tensor *input = NULL, *expected = NULL, *logits = NULL;
  dt_device device;
  char name[32];
  double worst = 0, largest = 0;
  struct timespec t0, t1;
  int rc = 1;
  if (argc < 3) {
    fprintf(stderr, "usage: resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]\n");
    return 1;
  }
  if (!ok(dt_try_gpu(0, &device), "dt_try_gpu") || !ok(dt_device_format(device, name, sizeof name, NULL), "device") ||
      !ok(dt_safetensors_load(argv[1], device, &model), argv[1]) ||
      !ok(dt_safetensors_load(argv[2], device, &check), argv[2]) ||
      !ok(dt_state_dict_find(check, "input", &input), "input") ||
      !ok(dt_state_dict_find(check, "logits", &expected), "logits"))
    goto done;
  printf("device: %s\n", name);
  weights = model;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  logits = resnet18(input);
  if (failed || !ok(dt_synchronize(device), "synchronize")) goto done;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("forward: %.1f ms\n", 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec));
  if (!ok(largest_difference(logits, expected, &worst, &largest), "comparison")) goto done;
  rc = report_difference("resnet18", worst, largest, limit);
done:
  dt_tensor_release(input);
  dt_tensor_release(expected);
  dt_tensor_release(logits);
  dt_state_dict_release(model);
  dt_state_dict_release(check);
  return rc;
}
