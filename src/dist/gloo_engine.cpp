#include "dist/gloo_engine.h"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

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

template <typename T>
void gloo_all_reduce(const std::shared_ptr<gloo::Context>& ctx, void* data, size_t count, Reduction op,
                     std::chrono::milliseconds timeout) {
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
      case DType::Float32: return gloo_all_reduce<float>(c, data, count, op, timeout_);
      case DType::Float64: return gloo_all_reduce<double>(c, data, count, op, timeout_);
      case DType::Float16: return gloo_all_reduce<float16>(c, data, count, op, timeout_);
      case DType::BFloat16: return gloo_all_reduce<bfloat16>(c, data, count, op, timeout_);
      case DType::Int8: return gloo_all_reduce<int8_t>(c, data, count, op, timeout_);
      case DType::Int16: return gloo_all_reduce<int16_t>(c, data, count, op, timeout_);
      case DType::Int32: return gloo_all_reduce<int32_t>(c, data, count, op, timeout_);
      case DType::Int64: return gloo_all_reduce<int64_t>(c, data, count, op, timeout_);
      case DType::UInt8: return gloo_all_reduce<uint8_t>(c, data, count, op, timeout_);
      case DType::Bool: return gloo_all_reduce<bool>(c, data, count, op, timeout_);
    }
    fail(DT_ERR_INTERNAL, "gloo all_reduce: unknown dtype");
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
