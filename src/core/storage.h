// Storage: a block of device memory shared by a tensor and its views. Who frees it is
// recorded with it: a backend allocator, or a caller's deleter (from_blob).
#pragma once
#include <cstddef>
#include <atomic>
#include <cstdint>

#include "core/device.h"
#include "core/refcounted.h"
#include "devtensor.h"

namespace dt {

class Allocator;
class Stream;

class Storage : public RefCounted {
 public:
  // Memory from an allocator of the device's backend (throws OUT_OF_MEMORY). When
  // `prefix` is given and the bytes are few enough to live inline, the block also holds
  // `prefix_bytes` of space before the storage, returned in *prefix, for an object the
  // caller places there (a tensor body); it lives as long as the storage. Otherwise
  // *prefix is set to null.
  static Ref<Storage> allocate(Device device, size_t nbytes, size_t prefix_bytes = 0, void** prefix = nullptr);
  // Memory from a given allocator (pinned host memory), never inline.
  static Ref<Storage> allocate_from(Allocator& alloc, Device device, size_t nbytes);
  // Caller-owned host memory; deleter(data, ctx) runs when the storage dies.
  static Ref<Storage> borrow(Device device, void* data, size_t nbytes, dt_deleter deleter, void* ctx);
  static void destroy(Storage* s);

  // Hands a borrowed block's release to the caller's deleter (from_blob, once nothing
  // else can fail).
  void set_deleter(dt_deleter deleter, void* ctx) {
    deleter_ = deleter;
    deleter_ctx_ = ctx;
  }
  // A number, unique in the process, that changes whenever the data may have changed,
  // as PyTorch's version counter: DataParallel compares it to know when its replicas are
  // stale. Assigned on first use (most storages are never asked, so making one costs no
  // shared counter) and renewed by every later in-place write (copy_, add_, a writable
  // data pointer handed out). A new storage, even at a freed one's address, gets a
  // number never seen before. Writes through a data pointer obtained earlier, or to
  // borrowed memory by its owner, are not seen.
  uint64_t version() const;
  // Every in-place write calls this first, naming itself (op and suffix: "add", "_"):
  // it refuses a read-only storage (DT_ERR_INVALID_ARGUMENT) and renews the version if
  // one was assigned. Builds no string unless it fails.
  void begin_write(const char* op, const char* suffix = "") {
    if (read_only_) refuse_write(op, suffix);
    if (version_.load(std::memory_order_relaxed) != 0) version_.store(next_version(), std::memory_order_release);
  }
  // Read-only storage (a DLPack import the producer marked so): every write is refused.
  void set_read_only() { read_only_ = true; }
  bool read_only() const { return read_only_; }
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  Allocator* allocator() const { return allocator_; }  // null: inline or borrowed
  // The memory is also used by work queued on s, a stream of its device other than the
  // one it was allocated on (dt_tensor_record_stream): its free waits for that work.
  void record_stream(Stream& s);

 private:
  Storage() = default;
  static uint64_t next_version();
  [[noreturn]] static void refuse_write(const char* op, const char* suffix);
  mutable std::atomic<uint64_t> version_{0};  // 0: none assigned yet
  bool read_only_ = false;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* allocator_ = nullptr;  // null: inline or borrowed
  dt_deleter deleter_ = nullptr;
  void* deleter_ctx_ = nullptr;
  void* block_ = nullptr;           // non-null: one malloc'd block holds this storage (and its data)
  Stream* stream_ = nullptr;        // owned reference: the stream the memory came from, when not the default
  struct StreamUses;
  StreamUses* uses_ = nullptr;      // streams recorded by record_stream (null: none)
};

}  // namespace dt
