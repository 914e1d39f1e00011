// DLPack 1.x's versioned managed tensor (DLManagedTensorVersioned: a version, flags for
// read-only and producer-copied data). Debian's dlpack.h is DLPack 0.6, which lacks it,
// so it is declared here with the layout the DLPack 1.0 specification fixes; a program
// built against a newer dlpack.h exchanges the same bytes with us. Where the dlpack.h in
// use is 1.0 or later (it defines DLPACK_MAJOR_VERSION), its own declarations are used.
#pragma once
#include <dlpack/dlpack.h>

#include <cstdint>

#ifndef DLPACK_MAJOR_VERSION
extern "C" {
typedef struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

namespace dt::io {
// The version our exports carry, and the only major version imports accept.
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 0;
}  // namespace dt::io
