#include "dist/gloo_engine.h"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "core/error.h"
#include "core/half.h"

namespace dt::dist {

namespace {

// out[i] = a[i] (op) b[i], computed in the dtype's arithmetic type.
template <typename T, Reduction R>
void reduce_elements(void* out, const void* a, const void* b, size_t n) {
  using M = typename opmath<T>::type;
  auto* o = static_cast<T*>(out);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    M u = static_cast<M>(x[i]), v = static_cast<M>(y[i]);
    M r;
    if constexpr (std::is_same_v<T, bool>) {
      r = (R == Reduction::Sum || R == Reduction::Max) ? (u || v) : (u && v);  // or / and
    } else if constexpr (R == Reduction::Sum) {
      r = u + v;
    } else if constexpr (R == Reduction::Product) {
      r = u * v;
    } else if constexpr (R == Reduction::Min) {
      r = (v < u || v != v) ? v : u;  // a NaN wins, as torch's min does
    } else {
      r = (v > u || v != v) ? v : u;
    }
    o[i] = static_cast<T>(r);
  }
}

template <typename T>
gloo::AllreduceOptions::Func reduce_function(Reduction op) {
  switch (op) {
    case Reduction::Sum: return reduce_elements<T, Reduction::Sum>;
    case Reduction::Product: return reduce_elements<T, Reduction::Product>;
    case Reduction::Min: return reduce_elements<T, Reduction::Min>;
    case Reduction::Max: return reduce_elements<T, Reduction::Max>;
    case Reduction::Avg: break;
  }
  fail(DT_ERR_INTERNAL, "gloo: avg reaches the engine");
}

// Small all-reduces go through one Gloo allgather and a local reduction instead of
// Gloo's ring all-reduce. The ring takes 2 (size - 1) pipelined rounds of messages and is
// bound by their latency at these sizes (every message wakes Gloo's loop thread and the
// caller); the allgather takes size - 1 rounds. Measured with float32 sums on 2 vCPUs
// (2026-11-27, median of 5-8 runs, 2 ranks): 128 KiB 0.36 ms instead of 1.05, 256 KiB
// 0.43 / 0.88, 512 KiB 0.55 / 1.84, 795 KiB 0.64 / 2.20, 896 KiB about equal, 1 MiB
// 1.77 / 1.39 (4 ranks: 3.5 ms instead of 5.2-5.7 up to 795 KiB, 6.5 / 5.4 at 1 MiB). So:
// buffers under 1 MiB, and at most 4 MiB gathered, since the allgather moves size - 1
// whole buffers where the ring moves two. Two ranks swap buffers with one Gloo send and
// recv instead of the allgather (which splits the exchange in two halves, each its own
// round of notifications between the loop threads, and copies this rank's buffer into
// the gathered one): a 795 KiB all-reduce after 450 us of computing (as in a DDP step)
// went from a median of 1.28 ms (p90 4.3 ms) to 0.62 ms (p90 2.3 ms), back to back from
// 0.67 to 0.62 ms (2026-11-27, 2 vCPUs, bench probe /tmp/ar_gap.c, not kept).
constexpr size_t kGatherReduceMaxBufferBytes = (size_t{1} << 20) - 1;
constexpr size_t kGatherReduceMaxGatheredBytes = size_t{4} << 20;

bool takes_gather_path(size_t bytes, int world) {
  return bytes <= kGatherReduceMaxBufferBytes && bytes * static_cast<size_t>(world) <= kGatherReduceMaxGatheredBytes;
}

// out[i] = (a[i] + b[i]) * scale: the sum and the average's multiplication by the exact
// reciprocal of a power-of-two world in one pass, with the bits of the two passes
// (float32 and float64, computed in their own type, as the elementwise kernels do).
template <typename T>
void sum_and_scale(void* out, const void* a, const void* b, size_t n, T scale) {
  auto* o = static_cast<T*>(out);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) {
    const T sum = x[i] + y[i];
    o[i] = sum * scale;
  }
}

// The gather path: every rank reduces the same buffers in rank order, so all ranks end
// with the same bits, as with the ring. Two ranks swap their buffers with one Gloo send
// and recv (the allgather would also copy this rank's buffer into the gathered one, and
// split the exchange in two); more ranks take Gloo's allgather. average: the last pass
// also multiplies by 1 / world (a power of two; float32 and float64 only).
template <typename T>
void gather_reduce(const std::shared_ptr<gloo::Context>& ctx, void* data, size_t count, Reduction op, bool average,
                   std::chrono::milliseconds timeout, std::vector<unsigned char>& scratch) {
  const size_t bytes = count * sizeof(T);
  const size_t world = static_cast<size_t>(ctx->size);
  const size_t rank = static_cast<size_t>(ctx->rank);
  if (world == 1) return;  // data is the only contribution (and an average of one is itself)
  const auto reduce = reduce_function<T>(op);
  auto last_pass = [&](void* out, const void* a, const void* b) {
    if constexpr (std::is_floating_point_v<T>) {
      if (average) return sum_and_scale<T>(out, a, b, count, static_cast<T>(1) / static_cast<T>(world));
    }
    reduce(out, a, b, count);
  };
  if (world == 2) {
    if (scratch.size() < bytes) scratch.resize(bytes);
    const int peer = static_cast<int>(1 - rank);
    const auto slot = ctx->nextSlot();
    auto mine = ctx->createUnboundBuffer(data, bytes);
    auto theirs = ctx->createUnboundBuffer(scratch.data(), bytes);
    theirs->recv(peer, slot);
    mine->send(peer, slot);
    mine->waitSend(timeout);
    theirs->waitRecv(timeout);
    if (rank == 0) last_pass(data, data, scratch.data());  // rank 0's buffer first, on both ranks
    else last_pass(data, scratch.data(), data);
    return;
  }
  if (scratch.size() < bytes * world) scratch.resize(bytes * world);
  gloo::AllgatherOptions opts(ctx);
  opts.setInput(static_cast<char*>(data), bytes);
  opts.setOutput(reinterpret_cast<char*>(scratch.data()), bytes * world);
  opts.setTimeout(timeout);
  gloo::allgather(opts);
  reduce(data, scratch.data(), scratch.data() + bytes, count);
  for (size_t r = 2; r + 1 < world; ++r) reduce(data, data, scratch.data() + r * bytes, count);
  last_pass(data, data, scratch.data() + (world - 1) * bytes);
}

template <typename T>
void gloo_all_reduce(const std::shared_ptr<gloo::Context>& ctx, void* data, size_t count, Reduction op,
                     std::chrono::milliseconds timeout, std::vector<unsigned char>& scratch) {
  const size_t bytes = count * sizeof(T);
  if (takes_gather_path(bytes, ctx->size)) return gather_reduce<T>(ctx, data, count, op, false, timeout, scratch);
  gloo::AllreduceOptions opts(ctx);
  // The storage type, not T: Gloo only needs the element size; 16-bit floats travel as
  // uint16_t and bool as uint8_t.
  using Wire = std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
  opts.setOutput(static_cast<Wire*>(data), count);
  opts.setReduceFunction(reduce_function<T>(op));
  opts.setTimeout(timeout);
  gloo::allreduce(opts);
}

class GlooEngine final : public Collectives {
 public:
  GlooEngine(std::shared_ptr<gloo::Context> ctx, std::chrono::milliseconds timeout)
      : ctx_(std::move(ctx)), timeout_(timeout) {}

  const char* name() const override { return "gloo"; }

  void all_reduce(void* data, size_t count, DType dtype, Reduction op) override {
    auto c = context();
    switch (dtype) {
      case DType::Float32: return gloo_all_reduce<float>(c, data, count, op, timeout_, scratch_);
      case DType::Float64: return gloo_all_reduce<double>(c, data, count, op, timeout_, scratch_);
      case DType::Float16: return gloo_all_reduce<float16>(c, data, count, op, timeout_, scratch_);
      case DType::BFloat16: return gloo_all_reduce<bfloat16>(c, data, count, op, timeout_, scratch_);
      case DType::Int8: return gloo_all_reduce<int8_t>(c, data, count, op, timeout_, scratch_);
      case DType::Int16: return gloo_all_reduce<int16_t>(c, data, count, op, timeout_, scratch_);
      case DType::Int32: return gloo_all_reduce<int32_t>(c, data, count, op, timeout_, scratch_);
      case DType::Int64: return gloo_all_reduce<int64_t>(c, data, count, op, timeout_, scratch_);
      case DType::UInt8: return gloo_all_reduce<uint8_t>(c, data, count, op, timeout_, scratch_);
      case DType::Bool: return gloo_all_reduce<bool>(c, data, count, op, timeout_, scratch_);
    }
    fail(DT_ERR_INTERNAL, "gloo all_reduce: unknown dtype");
  }

  // Folded into the gather path's last pass for a power-of-two world (float32, float64).
  bool all_reduce_avg(void* data, size_t count, DType dtype) override {
    auto c = context();
    const int world = c->size;
    const bool pow2 = world > 0 && (world & (world - 1)) == 0;
    if (!pow2 || (dtype != DType::Float32 && dtype != DType::Float64)) return false;
    const size_t bytes = count * dtype_size(dtype);
    if (!takes_gather_path(bytes, world)) return false;
    if (dtype == DType::Float32) gather_reduce<float>(c, data, count, Reduction::Sum, true, timeout_, scratch_);
    else gather_reduce<double>(c, data, count, Reduction::Sum, true, timeout_, scratch_);
    return true;
  }

  void broadcast(void* data, size_t bytes, int root) override {
    gloo::BroadcastOptions opts(context());
    opts.setOutput(static_cast<char*>(data), bytes);  // the root sends its output buffer
    opts.setRoot(root);
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  }

  void all_gather(const void* in, void* out, size_t bytes) override {
    auto c = context();
    gloo::AllgatherOptions opts(c);
    opts.setInput(const_cast<char*>(static_cast<const char*>(in)), bytes);
    opts.setOutput(static_cast<char*>(out), bytes * static_cast<size_t>(c->size));
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  }

  void barrier() override {
    gloo::BarrierOptions opts(context());
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  }

  void send(const void* data, size_t bytes, int dst, uint32_t tag) override {
    auto buf = context()->createUnboundBuffer(const_cast<void*>(data), bytes);
    buf->send(dst, gloo::Slot::build(kSendRecvSlotPrefix, tag));
    buf->waitSend(timeout_);
  }

  void recv(void* data, size_t bytes, int src, uint32_t tag) override {
    auto buf = context()->createUnboundBuffer(data, bytes);
    buf->recv(src, gloo::Slot::build(kSendRecvSlotPrefix, tag));
    buf->waitRecv(timeout_);
  }

  void abort() noexcept override { ctx_.reset(); }

 private:
  // Past Gloo's own collective prefixes (gloo/types.h), as torch's send/recv slots are.
  static constexpr uint8_t kSendRecvSlotPrefix = 0x09;

  std::shared_ptr<gloo::Context> context() const {
    if (!ctx_) fail(DT_ERR_DISTRIBUTED, "the process group's connections are closed");
    return ctx_;
  }

  std::shared_ptr<gloo::Context> ctx_;
  std::chrono::milliseconds timeout_;
  // The gathered buffers of small all-reduces, kept between calls (at most
  // kGatherReduceMaxGatheredBytes); the group's lock serializes its users.
  std::vector<unsigned char> scratch_;
};

bool is_loopback(const std::string& host) { return host == "localhost" || host.rfind("127.", 0) == 0; }

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return false;
  ::freeaddrinfo(res);
  return true;
}

gloo::transport::tcp::attr device_attr(const std::string& master_host) {
  gloo::transport::tcp::attr attr;
  attr.ai_family = AF_INET;
  if (const char* iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface) {
    attr.iface = iface;
    return attr;
  }
  char name[256] = {};
  if (!is_loopback(master_host) && ::gethostname(name, sizeof name - 1) == 0 && resolves(name)) attr.hostname = name;
  else attr.hostname = "127.0.0.1";
  return attr;
}

}  // namespace

std::unique_ptr<Collectives> connect_gloo(gloo::rendezvous::Store& store, int rank, int size,
                                          std::chrono::milliseconds timeout, const std::string& master_host) {
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(device_attr(master_host));
  } catch (const std::exception& e) {
    fail(DT_ERR_DISTRIBUTED, cat("gloo cannot open a TCP device: ", e.what(),
                                 " (set GLOO_SOCKET_IFNAME to the network interface to use)"));
  }
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->setTimeout(timeout);
  ctx->connectFullMesh(store, device);
  return std::make_unique<GlooEngine>(std::move(ctx), timeout);
}

}  // namespace dt::dist
