#include "io/dlpack.h"

#include <cstring>
#include <new>

#include "core/graph.h"
#include "core/backend.h"
#include "core/registry.h"
#include "core/device.h"
#include "core/error.h"
#include "core/fault_injection.h"
#include "core/storage.h"

namespace dt::io {
namespace {

// DLPack 0.8's code for bool (PyTorch exports bool tensors with it); the 0.6 header has
// no name for it.
constexpr uint8_t kDLBoolCode = 6;

DLDataType dl_dtype(DType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::Bool: d.code = kDLBoolCode; break;
    case DType::UInt8: d.code = kDLUInt; break;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: d.code = kDLInt; break;
    case DType::BFloat16: d.code = kDLBfloat; break;
    default: d.code = kDLFloat; break;  // float16/32/64
  }
  return d;
}

// Our dtype for a DLPack one; NOT_SUPPORTED for what we lack.
DType from_dl_dtype(DLDataType d, const char* fn) {
  if (d.lanes != 1)
    fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": vector dtypes (lanes = ", d.lanes, ") are not supported"));
  switch (d.code) {
    case kDLInt:
      if (d.bits == 8) return DType::Int8;
      if (d.bits == 16) return DType::Int16;
      if (d.bits == 32) return DType::Int32;
      if (d.bits == 64) return DType::Int64;
      break;
    case kDLUInt:
      if (d.bits == 8) return DType::UInt8;
      break;
    case kDLFloat:
      if (d.bits == 16) return DType::Float16;
      if (d.bits == 32) return DType::Float32;
      if (d.bits == 64) return DType::Float64;
      break;
    case kDLBfloat:
      if (d.bits == 16) return DType::BFloat16;
      break;
    case kDLBoolCode:
      if (d.bits == 8) return DType::Bool;
      break;
    default:
      break;
  }
  fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": DLPack dtype (code ", static_cast<int>(d.code), ", bits ",
                                 static_cast<int>(d.bits), ") has no devtensor dtype"));
}

Device from_dl_device(const DLDevice& d, const char* fn) {
  // The producer may have written any value: read the enum's bytes as an integer, since
  // loading an out-of-range value as DLDeviceType is undefined (found by fuzzing).
  int32_t type = 0;
  static_assert(sizeof d.device_type == sizeof type, "DLDeviceType is 32 bits");
  std::memcpy(&type, &d.device_type, sizeof type);
  // Page-locked host memory is host memory.
  if (type == kDLCPU || type == kDLCUDAHost) return Device{DT_DEVICE_CPU, 0};
  // devtensor's device types are DLPack's: any registered backend's devices import.
  if (find_backend(type)) {
    if (d.device_id < 0) fail(DT_ERR_INVALID_DEVICE, cat(fn, ": negative device id ", d.device_id));
    return resolve_device(dt_device{type, d.device_id});  // checks it exists
  }
  std::string known;
  for (const Backend* b : all_backends()) known += cat(known.empty() ? "" : ", ", b->name(), " ", b->device_type());
  fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": DLPack device type ", type, " is not a device devtensor has (", known,
                                 ", and CUDA host 3 are)"));
}

// What an exported DLManagedTensor(Versioned) carries: the tensor reference that keeps
// the storage alive, and the shape and strides its DLTensor points at.
template <typename Managed>
struct Export {
  Managed managed;
  Tensor keep;
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];
};

template <typename Managed>
void delete_export(Managed* self) {
  delete static_cast<Export<Managed>*>(self->manager_ctx);
}

// A new Managed viewing t: the fields both DLPack generations share.
template <typename Managed>
Managed* export_as(const Tensor& t) {
  refuse_while_capturing(t.device(), "to_dlpack", "the consumer would read values that only a replay computes");
  if (!t.device().is_cpu()) backend_for(t.device()).synchronize(t.device());
  auto* e = fault::allocation_fails() ? nullptr : new (std::nothrow) Export<Managed>();
  if (!e) fail(DT_ERR_OUT_OF_MEMORY, "to_dlpack: out of memory");
  // A module's parameter keeps its storage through a view of its own: the export must
  // keep the memory it points at even after the module moves (core/move_lock.h).
  try {
    e->keep = t.impl()->movable ? t.view_as(t.shape(), t.strides(), t.offset()) : t;
  } catch (...) {
    delete e;
    throw;
  }
  for (int i = 0; i < t.ndim(); ++i) {
    e->shape[i] = t.size(i);
    e->strides[i] = t.stride(i);
  }
  DLTensor& d = e->managed.dl_tensor;
  d.data = t.data();
  // devtensor's device types are DLPack's codes.
  d.device.device_type = static_cast<DLDeviceType>(t.device().type);
  d.device.device_id = t.device().is_cpu() ? 0 : t.device().index;
  d.ndim = t.ndim();
  d.dtype = dl_dtype(t.dtype());
  d.shape = e->shape;
  d.strides = e->strides;
  d.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_export<Managed>;
  return &e->managed;
}

// A tensor over d's memory, every field checked.
Tensor import_tensor(const DLTensor& d, const char* fn) {
  if (d.ndim < 0 || d.ndim > kMaxDims)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ndim ", d.ndim, " is outside 0..", kMaxDims));
  if (d.ndim > 0 && !d.shape) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": shape is NULL with ndim ", d.ndim));
  DType dtype = from_dl_dtype(d.dtype, fn);
  Device device = from_dl_device(d.device, fn);
  Dims shape(d.shape, d.ndim);
  for (int i = 0; i < d.ndim; ++i)
    if (d.shape[i] < 0) fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": negative size ", d.shape[i], " in dim ", i));
  const bool empty = numel_of(shape) == 0;  // checks overflow; an empty tensor's strides are never used
  Dims strides = d.strides ? Dims(d.strides, d.ndim) : contiguous_strides(shape);
  for (int i = 0; i < d.ndim && !empty; ++i)
    if (strides.v[i] < 0)
      fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": negative stride ", strides.v[i], " in dim ", i, " is not supported"));
  // (No arithmetic on a NULL pointer: an empty tensor may come with no data at all.)
  char* base = d.data ? static_cast<char*>(d.data) + d.byte_offset : nullptr;
  return borrow_tensor(fn, base, device, dtype, shape, strides);
}

// The storage deleter of an import: hands the memory back to its producer, once.
template <typename Managed>
void release_import(void*, void* ctx) {
  auto* managed = static_cast<Managed*>(ctx);
  if (managed->deleter) managed->deleter(managed);
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  if (t.storage()->read_only())
    fail(DT_ERR_NOT_SUPPORTED, "dt_tensor_to_dlpack: the tensor is read-only and an unversioned DLManagedTensor "
                               "cannot say so (a consumer could write to it); use dt_tensor_to_dlpack_versioned");
  return export_as<DLManagedTensor>(t);
}

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t) {
  DLManagedTensorVersioned* m = export_as<DLManagedTensorVersioned>(t);
  m->version.major = kDLPackMajor;
  m->version.minor = kDLPackMinor;
  m->flags = t.storage()->read_only() ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  return m;
}

Tensor from_dlpack(DLManagedTensor* managed, const char* fn) { return import_tensor(managed->dl_tensor, fn); }

Tensor from_dlpack_versioned(DLManagedTensorVersioned* managed, const char* fn) {
  // A major version is a promise about this struct's layout: past the version field,
  // nothing of another major version may be read.
  if (managed->version.major != kDLPackMajor)
    fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": DLPack major version ", managed->version.major, " is not supported (",
                                   kDLPackMajor, " is)"));
  Tensor t = import_tensor(managed->dl_tensor, fn);
  // IS_COPIED (the producer made this copy for us) changes nothing: we own it either way.
  if (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) t.storage()->set_read_only();
  return t;
}

void adopt_dlpack(Storage* storage, DLManagedTensor* managed) {
  storage->set_deleter(release_import<DLManagedTensor>, managed);
}

void adopt_dlpack(Storage* storage, DLManagedTensorVersioned* managed) {
  storage->set_deleter(release_import<DLManagedTensorVersioned>, managed);
}

}  // namespace dt::io
