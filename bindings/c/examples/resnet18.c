/* resnet18: torchvision's ResNet-18 built from devtensor modules, as PyTorch defines it
 * (a custom module per BasicBlock and one for the network, dt_module_new), loaded with
 * the state_dict PyTorch saved (safetensors, PyTorch's key names: every key must match),
 * run in eval mode on the best device there is, its logits compared with PyTorch's.
 *
 *   resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]
 *
 * tools/export_models.py writes both files: the model's state_dict, and "input"
 * [N, 3, 224, 224] with PyTorch's "logits" [N, 1000]. The network, with torchvision's
 * child names:
 *
 *   conv1 (7x7, stride 2, padding 3) - bn1 - relu - maxpool (3x3, stride 2, padding 1)
 *   layer1..layer4: Sequentials of two BasicBlocks (conv1 3x3 - bn1 - relu - conv2 3x3 -
 *     bn2, plus the input, through downsample (Sequential(conv 1x1, bn)) when the stride
 *     or width changes, then relu)
 *   avgpool (adaptive, 1x1) - flatten - fc
 *
 * Prints the device, the time of the forward pass and the largest difference from
 * PyTorch's logits relative to the largest logit; exits 1 on any error, 2 when the
 * difference is over the limit (1e-4). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <devtensor.h>

#include "model_check.h"

static int failed;

/* Records the first failure (and its message); later calls see `failed` and do nothing. */
static int ok(dt_status st, const char* what) {
  if (st == DT_OK) return 1;
  if (!failed) fprintf(stderr, "resnet18: %s: %s: %s\n", what, dt_status_string(st), dt_last_error_message());
  failed = 1;
  return 0;
}

/* ---- the forward functions: they reach their children through self */

/* Runs self's child `name` on x, then releases x; a new tensor, or NULL with the status in *st. */
static dt_tensor* child(dt_module* self, const char* name, dt_tensor* x, dt_status* st) {
  dt_module* c = NULL;
  dt_tensor* y = NULL;
  if (x && *st == DT_OK) *st = dt_module_child(self, name, &c);
  if (x && *st == DT_OK) *st = dt_module_forward(c, (const dt_tensor* const*)&x, 1, &y);
  dt_module_release(c);
  dt_tensor_release(x);
  return *st == DT_OK ? y : NULL;
}

static dt_tensor* relu(dt_tensor* x, dt_status* st) {
  dt_tensor* y = NULL;
  if (x && *st == DT_OK) *st = dt_relu(x, &y);
  dt_tensor_release(x);
  return *st == DT_OK ? y : NULL;
}

/* BasicBlock: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut), the shortcut x itself or
 * downsample(x) (user_data non-NULL when the block has a downsample). */
static dt_status basic_block_forward(dt_module* self, dt_tensor* const* in, size_t n, void* has_downsample,
                                     dt_tensor** out) {
  dt_status st = DT_OK;
  dt_tensor *x = in[0], *y, *shortcut, *sum = NULL;
  (void)n;
  dt_tensor_retain(x); /* each path below consumes one reference */
  dt_tensor_retain(x);
  y = relu(child(self, "bn1", child(self, "conv1", x, &st), &st), &st);
  y = child(self, "bn2", child(self, "conv2", y, &st), &st);
  shortcut = has_downsample ? child(self, "downsample", x, &st) : x;
  if (st == DT_OK) st = dt_add(y, shortcut, &sum);
  dt_tensor_release(y);
  dt_tensor_release(shortcut);
  if (st == DT_OK) sum = relu(sum, &st);
  if (st == DT_OK) *out = sum;
  return st;
}

/* ResNet: the stem, the four layers, pooling, flatten and fc. */
static dt_status resnet_forward(dt_module* self, dt_tensor* const* in, size_t n, void* user_data, dt_tensor** out) {
  static const char* const order[] = {"conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4",
                                      "avgpool"};
  dt_status st = DT_OK;
  dt_tensor *x = in[0], *flat = NULL;
  size_t i;
  (void)n;
  (void)user_data;
  dt_tensor_retain(x);
  for (i = 0; i < sizeof order / sizeof order[0]; ++i) x = child(self, order[i], x, &st);
  if (st == DT_OK) st = dt_flatten(x, 1, -1, &flat);
  dt_tensor_release(x);
  x = child(self, "fc", flat, &st);
  if (st == DT_OK) *out = x;
  return st;
}

/* ---- building the tree */

/* Releases the n modules of list, then returns m (the container holding them now). */
static dt_module* drop_all(dt_module** list, size_t n, dt_module* m) {
  size_t i;
  for (i = 0; i < n; ++i) dt_module_release(list[i]);
  return m;
}

static dt_module* custom(const char* kind, const char* const* names, dt_module** children, size_t n,
                         dt_module_forward_fn forward, void* user_data) {
  dt_module_spec spec = {0};
  dt_module* m = NULL;
  size_t i;
  for (i = 0; i < n; ++i)
    if (!children[i]) return drop_all(children, n, NULL); /* an earlier step failed */
  spec.struct_size = sizeof spec;
  spec.kind = kind;
  spec.n_children = n;
  spec.child_names = names;
  spec.children = children;
  spec.forward = forward;
  spec.user_data = user_data;
  ok(dt_module_new(&spec, &m), kind);
  return drop_all(children, n, m);
}

static dt_module* sequential(dt_module** children, size_t n) {
  dt_module* m = NULL;
  size_t i;
  for (i = 0; i < n; ++i)
    if (!children[i]) return drop_all(children, n, NULL);
  ok(dt_sequential_new(children, n, &m), "Sequential");
  return drop_all(children, n, m);
}

static dt_module* conv(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding, dt_device d) {
  const int64_t ks[2] = {k, k}, s[2] = {stride, stride}, p[2] = {padding, padding};
  dt_module* m = NULL;
  ok(dt_conv2d_new(in, out, ks, s, p, NULL, 1, 0, DT_FLOAT32, d, &m), "Conv2d");
  return m;
}

static dt_module* bn(int64_t c, dt_device d) {
  dt_module* m = NULL;
  ok(dt_batch_norm2d_new(c, 1e-5, 0.1, 1, 1, DT_FLOAT32, d, &m), "BatchNorm2d");
  return m;
}

static dt_module* basic_block(int64_t in, int64_t out, int64_t stride, dt_device d) {
  static int has_downsample;
  static const char* const names[] = {"conv1", "bn1", "conv2", "bn2", "downsample"};
  dt_module* c[5];
  const int down = stride != 1 || in != out;
  c[0] = conv(in, out, 3, stride, 1, d);
  c[1] = bn(out, d);
  c[2] = conv(out, out, 3, 1, 1, d);
  c[3] = bn(out, d);
  if (down) {
    dt_module* ds[2];
    ds[0] = conv(in, out, 1, stride, 0, d);
    ds[1] = bn(out, d);
    c[4] = sequential(ds, 2);
  }
  return custom("BasicBlock", names, c, down ? 5 : 4, basic_block_forward, down ? &has_downsample : NULL);
}

static dt_module* resnet18(dt_device d) {
  static const char* const names[] = {"conv1",  "bn1",    "relu",   "maxpool", "layer1", "layer2",
                                      "layer3", "layer4", "avgpool", "fc"};
  const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1}, one[2] = {1, 1};
  dt_module* c[10] = {NULL};
  int64_t width = 64;
  int layer;
  c[0] = conv(3, 64, 7, 2, 3, d);
  c[1] = bn(64, d);
  ok(dt_relu_new(&c[2]), "ReLU");
  ok(dt_max_pool2d_new(k3, s2, p1, NULL, 0, &c[3]), "MaxPool2d");
  for (layer = 0; layer < 4; ++layer) {
    const int64_t out = 64 << layer;
    dt_module* blocks[2];
    blocks[0] = basic_block(width, out, layer == 0 ? 1 : 2, d);
    blocks[1] = basic_block(out, out, 1, d);
    c[4 + layer] = sequential(blocks, 2);
    width = out;
  }
  ok(dt_adaptive_avg_pool2d_new(one, &c[8]), "AdaptiveAvgPool2d");
  ok(dt_linear_new(512, 1000, 1, DT_FLOAT32, d, &c[9]), "Linear");
  return custom("ResNet", names, c, 10, resnet_forward, NULL);
}

int main(int argc, char** argv) {
  const double limit = argc > 3 ? atof(argv[3]) : 1e-4;
  dt_state_dict* check = NULL;
  dt_module* net = NULL;
  dt_tensor *input = NULL, *expected = NULL, *logits = NULL;
  dt_device device;
  char name[32];
  double worst = 0, largest = 0;
  size_t n_params = 0;
  struct timespec t0, t1;
  int rc = 1;
  if (argc < 3) {
    fprintf(stderr, "usage: resnet18 MODEL.safetensors CHECK.safetensors [max-relative-difference]\n");
    return 1;
  }
  if (!ok(dt_try_gpu(0, &device), "dt_try_gpu") || !ok(dt_device_format(device, name, sizeof name, NULL), "device"))
    goto done;
  printf("device: %s\n", name);
  net = resnet18(device);
  if (failed || !ok(dt_module_load(net, argv[1]), argv[1]) || !ok(dt_module_eval(net), "eval") ||
      !ok(dt_module_parameter_count(net, &n_params), "parameters") ||
      !ok(dt_safetensors_load(argv[2], device, &check), argv[2]) ||
      !ok(dt_state_dict_find(check, "input", &input), "input") ||
      !ok(dt_state_dict_find(check, "logits", &expected), "logits"))
    goto done;
  printf("model: %zu parameter tensors, every key of PyTorch's state_dict loaded\n", n_params);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!ok(dt_module_forward(net, (const dt_tensor* const*)&input, 1, &logits), "forward") ||
      !ok(dt_synchronize(device), "synchronize"))
    goto done;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("forward: %.1f ms\n", 1e3 * (double)(t1.tv_sec - t0.tv_sec) + 1e-6 * (double)(t1.tv_nsec - t0.tv_nsec));
  if (!ok(largest_difference(logits, expected, &worst, &largest), "comparison")) goto done;
  rc = report_difference("resnet18", worst, largest, limit);
done:
  dt_tensor_release(input);
  dt_tensor_release(expected);
  dt_tensor_release(logits);
  dt_module_release(net);
  dt_state_dict_release(check);
  return rc;
}
