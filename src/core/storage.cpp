#include "core/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "core/allocator.h"
#include "core/error.h"
#include "core/fault_injection.h"
#include "core/stream.h"

namespace dt {

namespace {
// Host tensors this small keep their bytes inside the Storage object: one allocation
// instead of two for the tiny tensors of scalar-heavy code.
constexpr size_t kInlineBytes = 64;
// The Storage record, then its bytes on the next 64-byte boundary.
constexpr size_t kInlineOffset = (sizeof(Storage) + 63) / 64 * 64;
}  // namespace

uint64_t Storage::next_version() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

uint64_t Storage::version() const {
  uint64_t v = version_.load(std::memory_order_acquire);
  if (v != 0) return v;
  const uint64_t fresh = next_version();
  // Another thread may assign one first: then both use its number.
  return version_.compare_exchange_strong(v, fresh, std::memory_order_acq_rel) ? fresh : v;
}

void Storage::refuse_write(const char* op, const char* suffix) {
  fail(DT_ERR_INVALID_ARGUMENT, cat(op, suffix, ": the tensor is read-only (its producer exported it through DLPack as "
                                                "read-only); write to a copy (dt_tensor_to with DT_TO_COPY)"));
}

Ref<Storage> Storage::allocate(Device device, size_t nbytes, size_t prefix_bytes, void** prefix) {
  if (prefix) *prefix = nullptr;
  if (device.is_cpu() && nbytes <= kInlineBytes) {
    size_t head = prefix ? (prefix_bytes + 63) / 64 * 64 : 0;
    void* block = fault::allocation_fails() ? nullptr : std::malloc(head + kInlineOffset + kInlineBytes);
    if (!block) fail(DT_ERR_OUT_OF_MEMORY, cat("out of memory allocating ", nbytes, " bytes on cpu"));
    char* base = static_cast<char*>(block) + head;
    Storage* s = new (base) Storage();
    s->data_ = base + kInlineOffset;
    s->nbytes_ = nbytes;
    s->device_ = device;
    s->block_ = block;
    if (prefix) *prefix = block;
    return Ref<Storage>::adopt(s);
  }
  return allocate_from(allocator_for(device), device, nbytes);
}

Ref<Storage> Storage::allocate_from(Allocator& alloc, Device device, size_t nbytes) {
  // Allocated on the thread's current stream of the device, and freed there later.
  Stream* stream = thread_stream(device);
  void* native = stream ? stream->native() : nullptr;
  void* data = alloc.allocate_on(nbytes, native);
  void* block = fault::allocation_fails() ? nullptr : std::malloc(sizeof(Storage));
  if (!block) {
    alloc.deallocate_on(data, nbytes, native);
    fail(DT_ERR_OUT_OF_MEMORY, "out of memory allocating a storage record");
  }
  Storage* s = new (block) Storage();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->device_ = device;
  s->allocator_ = &alloc;
  if (native) {
    stream->ref();
    s->stream_ = stream;
  }
  return Ref<Storage>::adopt(s);
}

struct Storage::StreamUses {
  std::mutex mu;
  std::vector<Ref<Stream>> streams;
};

void Storage::record_stream(Stream& use) {
  if (use.device() != device_)
    fail(DT_ERR_DEVICE_MISMATCH, cat("dt_tensor_record_stream: the tensor is on ", device_str(device_),
                                     " but the stream on ", device_str(use.device())));
  // Only memory from a stream-ordered allocator needs it: host memory, borrowed memory
  // and backends without streams free with nothing queued.
  if (!allocator_ || !use.native() || use.native() == (stream_ ? stream_->native() : nullptr)) return;
  static std::mutex create_mu;  // makes the list once; it then has its own lock
  StreamUses* uses;
  {
    std::lock_guard<std::mutex> lock(create_mu);
    if (!uses_) {
      uses_ = fault::allocation_fails() ? nullptr : new (std::nothrow) StreamUses();
      if (!uses_) fail(DT_ERR_OUT_OF_MEMORY, "out of memory recording a stream");
    }
    uses = uses_;
  }
  std::lock_guard<std::mutex> lock(uses->mu);
  for (const Ref<Stream>& s : uses->streams)
    if (s.get() == &use) return;
  use.ref();
  uses->streams.push_back(Ref<Stream>::adopt(&use));
}

Ref<Storage> Storage::borrow(Device device, void* data, size_t nbytes, dt_deleter deleter, void* ctx) {
  void* block = fault::allocation_fails() ? nullptr : std::malloc(sizeof(Storage));
  if (!block) fail(DT_ERR_OUT_OF_MEMORY, "out of memory allocating a storage record");
  Storage* s = new (block) Storage();
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->device_ = device;
  s->deleter_ = deleter;
  s->deleter_ctx_ = ctx;
  return Ref<Storage>::adopt(s);
}

void Storage::destroy(Storage* s) {
  if (s->allocator_) {
    void* native = s->stream_ ? s->stream_->native() : nullptr;
    if (s->uses_) {
      // The free is queued after the work of every stream that used the memory.
      for (const Ref<Stream>& use : s->uses_->streams) {
        try {
          order_after_native(s->device_, native, use->native());
        } catch (...) {
          try {
            use->synchronize();  // no event to be had: wait on the host instead
          } catch (...) {
            // the device is lost: nothing of its work will read the memory again
          }
        }
      }
      delete s->uses_;
    }
    s->allocator_->deallocate_on(s->data_, s->nbytes_, native);
    if (s->stream_ && s->stream_->unref()) Stream::destroy(s->stream_);
  }
  else if (s->deleter_) s->deleter_(s->data_, s->deleter_ctx_);
  void* block = s->block_ ? s->block_ : s;
  s->~Storage();
  std::free(block);
}

}  // namespace dt
