// Normalisation and embedding entry points: the functional dt_batch_norm, dt_layer_norm,
// dt_group_norm and dt_embedding, and their modules.
#include "api/objects.h"
#include "api/shim.h"
#include "core/context.h"
#include "nn/functions.h"
#include "nn/layers.h"

using namespace dt;
using namespace dt::api;

namespace {

Dims shape_arg(const int64_t* shape, size_t ndims, const char* fn, const char* name) {
  if (!shape && ndims > 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", name, " is NULL with ", ndims, " dims"));
  if (ndims > static_cast<size_t>(kMaxDims))
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", name, " has ", ndims, " dims (at most ", kMaxDims, ")"));
  return Dims(shape, ndims);
}

template <typename Make>
dt_status module_out(const char* fn, dt_module** out, Make make) {
  return guard([&] {
    require(out, fn, "out");
    nn::Module* m = make();
    *out = static_cast<dt_module*>(new_object_handle<nn::Module, HandleKind::Module>(m));
  });
}

dt_status batch_norm_new(const char* fn, int spatial_dims, int64_t num_features, double eps, double momentum,
                         int32_t affine, int32_t track, dt_dtype dtype, dt_device device, dt_module** out) {
  return module_out(fn, out, [&] {
    nn::BatchNormOptions o;
    o.num_features = num_features;
    o.eps = eps;
    o.momentum = momentum;
    o.affine = flag_arg(affine, fn, "affine");
    o.track_running_stats = flag_arg(track, fn, "track_running_stats");
    return nn::new_batch_norm(o, spatial_dims, resolve_dtype(dtype), resolve_device(device));
  });
}

}  // namespace

extern "C" {

DT_API dt_status dt_batch_norm(const dt_tensor* input, dt_tensor* running_mean, dt_tensor* running_var,
                               const dt_tensor* weight, const dt_tensor* bias, int32_t training, double momentum,
                               double eps, dt_tensor** out) {
  const char* fn = "dt_batch_norm";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(input, fn, "input");
    const bool train = flag_arg(training, fn, "training");
    *out = new_handle(ag::batch_norm(x, optional_tensor_arg(running_mean, fn, "running_mean"),
                                     optional_tensor_arg(running_var, fn, "running_var"), optional_tensor_arg(weight, fn, "weight"),
                                     optional_tensor_arg(bias, fn, "bias"), train, momentum, eps));
  });
}

DT_API dt_status dt_layer_norm(const dt_tensor* input, const int64_t* normalized_shape, size_t ndims,
                               const dt_tensor* weight, const dt_tensor* bias, double eps, dt_tensor** out) {
  const char* fn = "dt_layer_norm";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(input, fn, "input");
    const Dims shape = shape_arg(normalized_shape, ndims, fn, "normalized_shape");
    *out = new_handle(ag::layer_norm(x, shape, optional_tensor_arg(weight, fn, "weight"), optional_tensor_arg(bias, fn, "bias"), eps));
  });
}

DT_API dt_status dt_group_norm(const dt_tensor* input, int64_t num_groups, const dt_tensor* weight,
                               const dt_tensor* bias, double eps, dt_tensor** out) {
  const char* fn = "dt_group_norm";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(input, fn, "input");
    *out = new_handle(
        ag::group_norm(x, num_groups, optional_tensor_arg(weight, fn, "weight"), optional_tensor_arg(bias, fn, "bias"), eps));
  });
}

DT_API dt_status dt_embedding(const dt_tensor* input, const dt_tensor* weight, int64_t padding_idx, dt_tensor** out) {
  const char* fn = "dt_embedding";
  return guard([&] {
    require(out, fn, "out");
    Borrowed x = tensor_arg(input, fn, "input");
    Borrowed w = tensor_arg(weight, fn, "weight");
    *out = new_handle(ag::embedding(w, x, padding_idx));
  });
}

DT_API dt_status dt_batch_norm1d_new(int64_t num_features, double eps, double momentum, int32_t affine,
                                     int32_t track_running_stats, dt_dtype dtype, dt_device device, dt_module** out) {
  return batch_norm_new("dt_batch_norm1d_new", 1, num_features, eps, momentum, affine, track_running_stats, dtype,
                        device, out);
}

DT_API dt_status dt_batch_norm2d_new(int64_t num_features, double eps, double momentum, int32_t affine,
                                     int32_t track_running_stats, dt_dtype dtype, dt_device device, dt_module** out) {
  return batch_norm_new("dt_batch_norm2d_new", 2, num_features, eps, momentum, affine, track_running_stats, dtype,
                        device, out);
}

DT_API dt_status dt_layer_norm_new(const int64_t* normalized_shape, size_t ndims, double eps,
                                   int32_t elementwise_affine, int32_t bias, dt_dtype dtype, dt_device device,
                                   dt_module** out) {
  const char* fn = "dt_layer_norm_new";
  return module_out(fn, out, [&] {
    const Dims shape = shape_arg(normalized_shape, ndims, fn, "normalized_shape");
    return nn::new_layer_norm(shape, eps, flag_arg(elementwise_affine, fn, "elementwise_affine"),
                              flag_arg(bias, fn, "bias"), resolve_dtype(dtype), resolve_device(device));
  });
}

DT_API dt_status dt_group_norm_new(int64_t num_groups, int64_t num_channels, double eps, int32_t affine,
                                   dt_dtype dtype, dt_device device, dt_module** out) {
  const char* fn = "dt_group_norm_new";
  return module_out(fn, out, [&] {
    return nn::new_group_norm(num_groups, num_channels, eps, flag_arg(affine, fn, "affine"), resolve_dtype(dtype),
                              resolve_device(device));
  });
}

DT_API dt_status dt_embedding_new(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, dt_dtype dtype,
                                  dt_device device, dt_module** out) {
  return module_out("dt_embedding_new", out, [&] {
    return nn::new_embedding(num_embeddings, embedding_dim, padding_idx, resolve_dtype(dtype), resolve_device(device));
  });
}

}  // extern "C"
