#include "dist/process_group.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "core/error.h"
#include "core/graph.h"
#include "core/plugin_backend.h"
#include "core/registry.h"
#include "dist/device_engine.h"
#include "dist/gloo_engine.h"
#include "dist/rendezvous.h"
#include "dist/sigpipe_guard.h"
#include "dist/store.h"
#include "ops/ops.h"

namespace dt::dist {

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Avg: return "avg";
    case Reduction::Min: return "min";
    case Reduction::Max: return "max";
    case Reduction::Product: return "product";
  }
  return "?";
}

namespace {

std::vector<char> text(const std::string& s) { return {s.begin(), s.end()}; }

std::string rank_list(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i == 0 ? "" : (i + 1 == ranks.size() ? " and " : ", ")) + std::to_string(ranks[i]);
  return s;
}

// Every rank announces itself (and its world size) and waits for the others, so that a
// rank that never arrives is named, and a rank started with another world size is caught.
void join(KeyValueStore& store, const std::string& prefix, int rank, int size) {
  store.set(cat(prefix, "joined/", rank), text(std::to_string(size)));
  const auto deadline = std::chrono::steady_clock::now() + store.timeout();
  auto pause = std::chrono::milliseconds(1);
  std::vector<int> missing, last_missing;  // last_missing: of the last whole round
  for (;;) {
    missing.clear();
    for (int r = 0; r < size; ++r) {
      std::vector<char> v;
      bool present = false;
      try {
        present = store.try_get(cat(prefix, "joined/", r), &v);
      } catch (const Error& e) {
        if (last_missing.empty()) throw;  // nothing known yet: the store's own message
        fail(DT_ERR_DISTRIBUTED, cat(last_missing.size() == 1 ? "rank " : "ranks ", rank_list(last_missing), " of ", size,
                                     " had not joined when rank 0's store went away (rank 0 gave up after its ",
                                     "timeout, or exited): ", e.what()));
      }
      if (!present) {
        missing.push_back(r);
        continue;
      }
      std::string their(v.begin(), v.end());
      if (their != std::to_string(size))
        fail(DT_ERR_INVALID_ARGUMENT, cat("rank ", r, " joined with world size ", their, " but rank ", rank,
                                          " with ", size, ": every rank must be started with the same world size"));
    }
    if (missing.empty()) return;
    last_missing = missing;
    if (std::chrono::steady_clock::now() >= deadline)
      fail(DT_ERR_DISTRIBUTED, cat(missing.size() == 1 ? "rank " : "ranks ", rank_list(missing), " of ", size,
                                   " did not join within ", store.timeout().count(), " ms (store ", store.where(), ")"));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

// The plugin of a device type, if it is one.
PluginBackend* plugin_of(int32_t device_type) { return dynamic_cast<PluginBackend*>(find_backend(device_type)); }

// The plugin whose collective library is `lib` ("nccl"), or null.
PluginBackend* plugin_with_collectives(const std::string& lib) {
  for (Backend* b : all_backends())
    if (auto* p = dynamic_cast<PluginBackend*>(b); p && p->collectives_name() == lib) return p;
  return nullptr;
}

}  // namespace

Ref<ProcessGroup> ProcessGroup::create(const std::string& backend, const char* init_method, int rank, int world_size,
                                       ms timeout) {
  SigpipeGuard no_sigpipe;  // the store's and Gloo's threads start with SIGPIPE blocked
  Ref<ProcessGroup> g = Ref<ProcessGroup>::adopt(new ProcessGroup());
  if (backend.empty()) {  // Gloo for host tensors, each device's library for its tensors
    g->device_tensors_ = true;
    g->backend_ = "gloo";
    for (Backend* b : all_backends())
      if (auto* p = dynamic_cast<PluginBackend*>(b); p && p->collectives_usable(nullptr, nullptr))
        g->backend_ += "," + p->collectives_name();
  } else if (backend == "gloo") {
    g->backend_ = backend;
  } else {
    PluginBackend* p = plugin_with_collectives(backend);
    if (!p && backend == "nccl")
      fail(DT_ERR_NOT_SUPPORTED, cat("process group backend \"nccl\" cannot be used: it runs in the CUDA plugin, and ",
                                     cuda_status().reason));
    if (!p) fail(DT_ERR_INVALID_ARGUMENT, cat("process group backend \"", backend, "\" is not one of \"gloo\", \"nccl\""));
    std::string why;
    if (!p->collectives_usable(&why, nullptr))
      fail(DT_ERR_NOT_SUPPORTED, cat("process group backend \"", backend, "\" cannot be used here: ", why));
    g->backend_ = backend;
    g->host_tensors_ = false;
    g->device_tensors_ = true;
    g->device_lib_ = backend;
  }
  if (timeout.count() <= 0) fail(DT_ERR_INVALID_ARGUMENT, cat("timeout ", timeout.count(), " ms must be positive"));
  Rendezvous r = resolve_rendezvous(init_method, rank, world_size);
  g->rank_ = r.rank;
  g->size_ = r.world_size;
  g->timeout_ = timeout;
  int index = 0;
  g->store_ = open_store(r, timeout, &index);
  const std::string prefix = cat("g", index, "/");
  g->prefix_ = prefix;
  join(*g->store_, prefix, r.rank, r.world_size);
  PrefixedStore gloo_keys(prefix + "gloo/", *g->store_);
  try {
    g->host_ = connect_gloo(gloo_keys, r.rank, r.world_size, timeout, r.host);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail(DT_ERR_DISTRIBUTED, cat("rank ", r.rank, " could not connect to its peers: ", e.what()));
  }
  return g;
}

ProcessGroup::~ProcessGroup() {
  SigpipeGuard no_sigpipe;  // closing Gloo's connections may write to a dead peer
  devices_.clear();
  host_.reset();
  store_.reset();
}

template <typename F>
void ProcessGroup::run(const char* what, F&& f) {
  std::lock_guard<std::mutex> lock(mu_);
  SigpipeGuard no_sigpipe;
  if (!broken_.empty()) fail(DT_ERR_DISTRIBUTED, cat(what, ": the process group is unusable after an earlier failure: ", broken_));
  std::string failure;
  try {
    f();
    return;
  } catch (const Error& e) {
    if (e.code() != DT_ERR_DISTRIBUTED) throw;
    failure = e.what();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  host_->abort();
  for (auto& [device, e] : devices_) e->abort();
  // A peer that exited is the likely cause: name it. Its closed connection may reach the
  // store a moment after ours failed, so ask a few times.
  std::vector<int> exited;
  for (int attempt = 0; attempt < 20 && exited.empty(); ++attempt) {
    exited = store_->exited_ranks();
    if (exited.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  exited.erase(std::remove(exited.begin(), exited.end(), rank_), exited.end());
  std::string cause = exited.empty() ? "no peer is known to have exited (a peer may be stuck, or failed itself)"
                                     : cat(exited.size() == 1 ? "rank " : "ranks ", rank_list(exited), " exited");
  broken_ = cat(what, " on rank ", rank_, " of ", size_, " failed: ", cause, " [", failure, "]");
  fail(DT_ERR_DISTRIBUTED, broken_);
}

void ProcessGroup::check_tensor(const Tensor& t, const char* fn, const std::string& what) const {
  refuse_while_capturing(t.device(), fn, "collectives are not recorded into graphs: they run on the host's schedule");
  if (t.device().is_cpu() ? host_tensors_ : t.device().type == checked_device_type_.load(std::memory_order_relaxed))
    return;  // the common case: no message built, no plugin asked
  const std::string where = cat(fn, ": ", what, " is on ", device_str(t.device()));
  if (t.device().is_cpu()) {
    if (!host_tensors_) {
      PluginBackend* p = plugin_with_collectives(device_lib_);
      fail(DT_ERR_DEVICE_MISMATCH, cat(where, " but a \"", backend_, "\" process group works on ", p ? p->name() : "device",
                                       " tensors (make the group with backend \"gloo\" or \"\" for cpu tensors)"));
    }
    return;
  }
  PluginBackend* p = plugin_of(t.device().type);
  const std::string lib = p ? p->collectives_name() : std::string();
  if (!device_tensors_) fail(DT_ERR_DEVICE_MISMATCH, cat(where, " but a \"", backend_, "\" process group works on cpu tensors"));
  if (lib.empty())
    fail(DT_ERR_DEVICE_MISMATCH, cat(where, ", whose backend has no collective library: process groups take cpu tensors ",
                                     "and those of backends with one (cuda, with NCCL)"));
  if (!device_lib_.empty() && lib != device_lib_)
    fail(DT_ERR_DEVICE_MISMATCH, cat(where, " but a \"", backend_, "\" process group works on ",
                                     plugin_with_collectives(device_lib_)->name(), " tensors"));
  std::string why;
  if (!p->collectives_usable(&why, nullptr))
    fail(DT_ERR_NOT_SUPPORTED, cat(where, ", whose collective library (", lib, ") cannot be used here: ", why));
  checked_device_type_.store(t.device().type, std::memory_order_relaxed);
}

void ProcessGroup::check_same_device(const Tensor& a, const Tensor& b, const char* fn) const {
  if (a.device() != b.device())
    fail(DT_ERR_DEVICE_MISMATCH, cat(fn, ": output is on ", device_str(b.device()), " but input is on ",
                                     device_str(a.device()), " (both must be on one device)"));
}

Collectives& ProcessGroup::engine(const Tensor& t) {
  const Device d = t.device();
  if (d.is_cpu()) return *host_;
  auto key = std::make_pair(d.type, d.index);
  if (auto it = devices_.find(key); it != devices_.end()) return *it->second;
  PluginBackend* p = plugin_of(d.type);
  if (!p) fail(DT_ERR_INTERNAL, cat("no plugin serves ", device_str(d)));
  // Every rank makes its communicators in the same order: the n-th one meets under key n.
  const std::string id_key = cat(prefix_, "coll/", p->collectives_name(), "/", device_engines_made_++);
  auto e = connect_device(*p, d, *store_, id_key, rank_, size_, timeout_);
  return *devices_.emplace(key, std::move(e)).first->second;
}

void ProcessGroup::check_peer(int peer, const char* fn, const char* param) const {
  if (peer < 0 || peer >= size_)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": ", param, " ", peer, " is not a rank of this group (0 .. ", size_ - 1, ")"));
}

namespace {

// Runs f on a contiguous tensor with t's elements and writes the result back into t
// when t itself is not contiguous (Gloo works on flat buffers).
template <typename F>
void on_contiguous(const Tensor& t, bool writes, F&& f) {
  if (t.is_contiguous()) return f(t);
  Tensor flat = ops::contiguous(t);
  f(flat);
  if (writes) ops::copy_(t, flat);
}

// avg's division by the world size, in place: nothing for one rank, and a product with
// the reciprocal for a power of two, which is exact (x * 2^-k and x / 2^k are the same
// number, rounded once) and several times cheaper than a division.
void divide_by_world_(const Tensor& t, int world) {
  if (world == 1) return;
  if ((world & (world - 1)) == 0) return ops::binary_scalar_(BinaryOp::Mul, t, 1.0 / world);
  ops::binary_scalar_(BinaryOp::Div, t, static_cast<double>(world));
}

}  // namespace

void ProcessGroup::all_reduce(const Tensor& t, Reduction op) {
  check_tensor(t, "dt_all_reduce_", "t");
  if (op == Reduction::Avg && !is_floating(t.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("dt_all_reduce_: avg needs a floating dtype, got ", dtype_name(t.dtype()),
                                    " (sum, then divide as you need)"));
  t.storage()->begin_write("all_reduce", "_");
  on_contiguous(t, true, [&](const Tensor& c) {
    if (c.numel() == 0) return;
    bool averaged = false;
    run("all_reduce", [&] {
      Collectives& e = engine(c);
      const size_t n = static_cast<size_t>(c.numel());
      if (op == Reduction::Avg) averaged = e.all_reduce_avg(c.data(), n, c.dtype());
      if (!averaged) e.all_reduce(c.data(), n, c.dtype(), op == Reduction::Avg ? Reduction::Sum : op);
    });
    if (op == Reduction::Avg && !averaged) divide_by_world_(c, size_);
  });
}

void ProcessGroup::broadcast(const Tensor& t, int root) {
  check_tensor(t, "dt_broadcast_", "t");
  check_peer(root, "dt_broadcast_", "root");
  t.storage()->begin_write("broadcast", "_");
  on_contiguous(t, rank_ != root, [&](const Tensor& c) {
    if (c.nbytes() == 0) return;
    run("broadcast", [&] { engine(c).broadcast(c.data(), c.nbytes(), root); });
  });
}

void ProcessGroup::all_gather(const Tensor& in, const Tensor& out) {
  check_tensor(in, "dt_all_gather", "input");
  check_tensor(out, "dt_all_gather", "output");
  check_same_device(in, out, "dt_all_gather");
  if (in.dtype() != out.dtype())
    fail(DT_ERR_DTYPE_MISMATCH, cat("dt_all_gather: output is ", dtype_name(out.dtype()), " but input is ", dtype_name(in.dtype())));
  if (out.numel() != in.numel() * size_)
    fail(DT_ERR_SHAPE_MISMATCH, cat("dt_all_gather: output has ", out.numel(), " elements; expected world size ", size_,
                                    " x ", in.numel()));
  out.storage()->begin_write("all_gather");
  on_contiguous(in, false, [&](const Tensor& ci) {
    on_contiguous(out, true, [&](const Tensor& co) {
      if (ci.nbytes() == 0) return;
      run("all_gather", [&] { engine(ci).all_gather(ci.data(), co.data(), ci.nbytes()); });
    });
  });
}

void ProcessGroup::reduce_scatter(const Tensor& in, const Tensor& out, Reduction op) {
  check_tensor(in, "dt_reduce_scatter", "input");
  check_tensor(out, "dt_reduce_scatter", "output");
  check_same_device(in, out, "dt_reduce_scatter");
  if (in.dtype() != out.dtype())
    fail(DT_ERR_DTYPE_MISMATCH, cat("dt_reduce_scatter: output is ", dtype_name(out.dtype()), " but input is ",
                                    dtype_name(in.dtype())));
  if (in.numel() != out.numel() * size_)
    fail(DT_ERR_SHAPE_MISMATCH, cat("dt_reduce_scatter: input has ", in.numel(), " elements; expected world size ", size_,
                                    " x ", out.numel(), " (the output's)"));
  if (op == Reduction::Avg && !is_floating(in.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("dt_reduce_scatter: avg needs a floating dtype, got ", dtype_name(in.dtype())));
  out.storage()->begin_write("reduce_scatter");
  const Reduction engine_op = op == Reduction::Avg ? Reduction::Sum : op;
  if (!in.device().is_cpu()) {  // a device library's own reduce-scatter
    Tensor ci = ops::contiguous(in);
    on_contiguous(out, true, [&](const Tensor& co) {
      if (co.numel() == 0) return;
      bool native = false;
      run("reduce_scatter", [&] {
        native = engine(ci).reduce_scatter(ci.data(), co.data(), static_cast<size_t>(co.numel()), co.dtype(), engine_op);
      });
      if (!native) fail(DT_ERR_INTERNAL, cat("reduce_scatter: the ", backend_, " engine has no reduce-scatter"));
      if (op == Reduction::Avg) divide_by_world_(co, size_);
    });
    return;
  }
  // Gloo has no reduce-scatter for arbitrary reductions: all-reduce a copy of the input
  // (Gloo's ring) and keep this rank's part.
  Tensor whole = ops::to(in, in.device(), in.dtype(), /*force_copy=*/true);  // a fresh, contiguous copy
  if (whole.numel() > 0) {
    run("reduce_scatter", [&] {
      engine(whole).all_reduce(whole.data(), static_cast<size_t>(whole.numel()), whole.dtype(), engine_op);
    });
  }
  Tensor mine = ops::narrow(ops::reshape(whole, Dims{static_cast<int64_t>(size_), out.numel()}, false), 0, rank_, 1);
  ops::copy_(out, ops::reshape(mine, out.shape(), false));
  if (op == Reduction::Avg) divide_by_world_(out, size_);
}

void ProcessGroup::barrier() {
  run("barrier", [&] { host_->barrier(); });
}

void ProcessGroup::send(const Tensor& t, int dst, int tag) {
  check_tensor(t, "dt_send", "t");
  check_peer(dst, "dt_send", "dst");
  if (dst == rank_) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_send: dst ", dst, " is this rank"));
  if (tag < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_send: tag ", tag, " must be >= 0"));
  on_contiguous(t, false, [&](const Tensor& c) {
    if (c.nbytes() == 0) return;
    run("send", [&] { engine(c).send(c.data(), c.nbytes(), dst, static_cast<uint32_t>(tag)); });
  });
}

void ProcessGroup::recv(const Tensor& t, int src, int tag) {
  check_tensor(t, "dt_recv", "t");
  check_peer(src, "dt_recv", "src");
  if (src == rank_) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_recv: src ", src, " is this rank"));
  if (tag < 0) fail(DT_ERR_INVALID_ARGUMENT, cat("dt_recv: tag ", tag, " must be >= 0"));
  t.storage()->begin_write("recv");
  on_contiguous(t, true, [&](const Tensor& c) {
    if (c.nbytes() == 0) return;
    run("recv", [&] { engine(c).recv(c.data(), c.nbytes(), src, static_cast<uint32_t>(tag)); });
  });
}

void ProcessGroup::host_all_gather(const Tensor& in, const Tensor& out) {
  if (!in.device().is_cpu() || !out.device().is_cpu() || !in.is_contiguous() || !out.is_contiguous() ||
      out.nbytes() != in.nbytes() * static_cast<size_t>(size_))
    fail(DT_ERR_INTERNAL, "host_all_gather: contiguous cpu tensors of world size x the input's bytes expected");
  if (in.nbytes() == 0) return;
  run("all_gather", [&] { host_->all_gather(in.data(), out.data(), in.nbytes()); });
}

}  // namespace dt::dist
