/* transformer: a 2-layer torch.nn.TransformerEncoder (with a final LayerNorm) made with
 * devtensor's modules, PyTorch's state_dict loaded into it from safetensors by its key
 * names ("layers.0.self_attn.in_proj_weight", ..., "norm.weight"), run in eval mode on
 * the best device there is with a key padding mask, its output compared with PyTorch's.
 *
 *   transformer MODEL.safetensors CHECK.safetensors [max-relative-difference]
 *
 * tools/export_models.py writes both files (d_model 64, nhead 4, dim_feedforward 256,
 * gelu, batch_first; "input" [3, 16, 64], "key_padding_mask" [3, 16], "logits").
 * Exits 1 on any error, 2 when the difference is over the limit (1e-4). */
#include <stdio.h>
#include <stdlib.h>

#include <devtensor.h>

#include "model_check.h"

static int ok(dt_status st, const char* what) {
  if (st == DT_OK) return 1;
  fprintf(stderr, "transformer: %s: %s: %s\n", what, dt_status_string(st), dt_last_error_message());
  return 0;
}

int main(int argc, char** argv) {
  const double limit = argc > 3 ? atof(argv[3]) : 1e-4;
  const int64_t d_model = 64;
  dt_module *layers[2] = {NULL, NULL}, *norm = NULL, *encoder = NULL;
  dt_state_dict* check = NULL;
  dt_tensor *input = NULL, *padding = NULL, *expected = NULL, *out = NULL;
  const dt_tensor* in[3];
  dt_device device;
  char name[32];
  double worst = 0, largest = 0;
  int rc = 1, i;
  if (argc < 3) {
    fprintf(stderr, "usage: transformer MODEL.safetensors CHECK.safetensors [max-relative-difference]\n");
    return 1;
  }
  if (!ok(dt_try_gpu(0, &device), "dt_try_gpu") || !ok(dt_device_format(device, name, sizeof name, NULL), "device"))
    goto done;
  printf("device: %s\n", name);
  /* TransformerEncoder(TransformerEncoderLayer(64, 4, 256, 0.1, "gelu", batch_first), 2, LayerNorm(64)) */
  for (i = 0; i < 2; ++i)
    if (!ok(dt_transformer_encoder_layer_new(d_model, 4, 256, 0.1, "gelu", 1e-5, 1, 0, DT_FLOAT32, device, &layers[i]),
            "layer"))
      goto done;
  if (!ok(dt_layer_norm_new(&d_model, 1, 1e-5, 1, 1, DT_FLOAT32, device, &norm), "norm") ||
      !ok(dt_transformer_encoder_new(layers, 2, norm, &encoder), "encoder") ||
      !ok(dt_module_load(encoder, argv[1]), argv[1]) || !ok(dt_module_eval(encoder), "eval") ||
      !ok(dt_safetensors_load(argv[2], device, &check), argv[2]) ||
      !ok(dt_state_dict_find(check, "input", &input), "input") ||
      !ok(dt_state_dict_find(check, "key_padding_mask", &padding), "key_padding_mask") ||
      !ok(dt_state_dict_find(check, "logits", &expected), "logits"))
    goto done;
  /* forward(src, mask = None, src_key_padding_mask) */
  in[0] = input;
  in[1] = NULL;
  in[2] = padding;
  if (!ok(dt_module_forward(encoder, in, 3, &out), "forward") ||
      !ok(largest_difference(out, expected, &worst, &largest), "comparison"))
    goto done;
  rc = report_difference("transformer", worst, largest, limit);
done:
  for (i = 0; i < 2; ++i) dt_module_release(layers[i]);
  dt_module_release(norm);
  dt_module_release(encoder);
  dt_tensor_release(input);
  dt_tensor_release(padding);
  dt_tensor_release(expected);
  dt_tensor_release(out);
  dt_state_dict_release(check);
  return rc;
}
