#include "dist/ddp.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/autograd_meta.h"
#include "core/error.h"
#include "core/stream.h"
#include "nn/autograd.h"
#include "ops/ops.h"

namespace dt::dist {

namespace {

// Gradients of one process, averaged over the group bucket by bucket (see ddp.h).
class Reducer final : public GradHook {
 public:
  struct Param {
    std::string name;
    Tensor tensor;
    size_t bucket = 0;
    int64_t offset = 0;  // in the bucket's flat buffer, in elements
    Tensor grad;         // this pass's gradient, until its bucket is launched
    bool ready = false;
  };

  Reducer(Ref<ProcessGroup> group, std::vector<Param> params, size_t cap_bytes, bool find_unused)
      : group_(std::move(group)), params_(std::move(params)), find_unused_(find_unused) {
    // Reverse order of registration: the order backward produces the gradients.
    for (size_t k = params_.size(); k-- > 0;) {
      Param& p = params_[k];
      const size_t bytes = static_cast<size_t>(p.tensor.numel()) * p.tensor.itemsize();
      if (buckets_.empty() || (!buckets_.back().params.empty() && (buckets_.back().dtype != p.tensor.dtype() ||
                                                                   buckets_.back().bytes + bytes > cap_bytes)))
        buckets_.emplace_back();
      if (buckets_.back().params.empty()) buckets_.back().dtype = p.tensor.dtype();
      Bucket& b = buckets_.back();
      p.bucket = buckets_.size() - 1;
      p.offset = b.numel;
      b.params.push_back(k);
      b.numel += p.tensor.numel();
      b.bytes += bytes;
    }
    for (size_t k = 0; k < params_.size(); ++k) index_[params_[k].tensor.impl()] = k;
    reset();
  }

  ~Reducer() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  size_t bucket_count() const { return buckets_.size(); }

  // dt_distributed_data_parallel_no_sync: read when a pass begins.
  void set_no_sync(bool no_sync) { no_sync_.store(no_sync, std::memory_order_relaxed); }

  void begin() override {
    std::lock_guard<std::mutex> lock(mu_);
    local_pass_ = no_sync_.load(std::memory_order_relaxed);
  }

  void grad_ready(const Tensor& leaf, const Tensor& grad) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(leaf.impl());
    if (it == index_.end()) return;
    Param& p = params_[it->second];
    p.grad = grad;
    p.ready = true;
    Bucket& b = buckets_[p.bucket];
    if (--b.pending == 0 && !local_pass_) launch_in_order(false);
  }

  Result finish() override {
    std::unique_lock<std::mutex> lock(mu_);
    if (local_pass_) return finish_local();
    std::string missing;
    for (const Param& p : params_)
      if (!p.ready && missing.empty()) missing = p.name;
    // Every bucket is reduced, missing gradients as zeros, so that every rank runs the
    // same collectives whatever happened here.
    launch_in_order(true);
    cv_.wait(lock, [&] { return done_ == buckets_.size(); });
    std::exception_ptr error;
    for (Bucket& b : buckets_)
      if (b.error && !error) error = b.error;
    // The buckets held whole gradients (.grad and this pass's): their averages replace .grad.
    Result out;
    out.replace = true;
    if (!error && (missing.empty() || find_unused_)) {
      out.grads.reserve(params_.size());
      for (const Param& p : params_) {
        const Bucket& b = buckets_[p.bucket];
        out.grads.emplace_back(p.tensor,
                               ops::reshape(ops::narrow(b.flat, 0, p.offset, p.tensor.numel()), p.tensor.shape(), false));
      }
    }
    reset();
    lock.unlock();
    if (error) std::rethrow_exception(error);
    if (!missing.empty() && !find_unused_)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat("DistributedDataParallel: parameter '", missing, "' received no gradient in this backward pass on rank ",
               group_->rank(), ": every parameter must take part in computing the loss, or create the "
               "DistributedDataParallel with find_unused_parameters (then an unused parameter's gradient counts as 0)"));
    return out;
  }

  void cancel() noexcept override {
    std::unique_lock<std::mutex> lock(mu_);
    // Launched buckets finish (their peers expect them); the rest is forgotten.
    cv_.wait(lock, [&] { return done_ == launched_; });
    reset();
  }

 private:
  struct Bucket {
    DType dtype = DType::Float32;
    std::vector<size_t> params;
    int64_t numel = 0;
    size_t bytes = 0;
    size_t pending = 0;  // gradients still to come in this pass
    Tensor flat;
    Ref<Stream> stream;  // the backward thread's stream that filled flat (null: the default)
    std::exception_ptr error;
  };

  // Launches, in index order, every bucket whose gradients are all in (all remaining
  // ones when `all`): a bucket may launch only after every bucket before it, so that
  // every rank issues the same all-reduces in the same order. Called with mu_ held.
  void launch_in_order(bool all) {
    while (launched_ < buckets_.size() && (all || buckets_[launched_].pending == 0)) {
      Bucket& b = buckets_[launched_];
      const Device device = params_[b.params[0]].tensor.device();
      b.flat = ops::empty(Dims{b.numel}, b.dtype, device);
      if (Stream* s = thread_stream(device)) {  // the reduction queues after the copies below
        s->ref();
        b.stream = Ref<Stream>::adopt(s);
      }
      for (size_t k : b.params) {
        Param& p = params_[k];
        Tensor slot = ops::narrow(b.flat, 0, p.offset, p.tensor.numel());
        // The whole gradient, as torch's reducer takes it: what .grad holds (what no_sync
        // passes accumulated; nothing after zero_grad) plus this pass's, added as the
        // engine adds them.
        const Tensor held = ag::grad(p.tensor);
        auto flat = [&](const Tensor& t) { return ops::reshape(t, Dims{p.tensor.numel()}, false); };
        if (held.defined()) {
          ops::copy_(slot, flat(held));
          if (p.grad.defined()) ops::binary_(BinaryOp::Add, slot, flat(p.grad));  // in the bucket: no temporary
        } else if (p.grad.defined()) {
          ops::copy_(slot, flat(p.grad));
        } else {
          ops::fill_(slot, 0.0);
        }
        p.grad = Tensor();
      }
      ++launched_;
      if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
      cv_.notify_all();
    }
  }

  // The end of a local (no_sync) pass: this pass's gradients, to add to .grad as they
  // are; nothing was sent and nothing is checked. Called with mu_ held.
  Result finish_local() {
    Result out;
    for (Param& p : params_)
      if (p.grad.defined()) out.grads.emplace_back(p.tensor, std::move(p.grad));
    reset();
    return out;
  }

  // The communication thread: all-reduces launched buckets in order.
  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || taken_ < launched_; });
      if (stop_) return;
      Bucket& b = buckets_[taken_++];
      Tensor flat = b.flat;
      Ref<Stream> stream = b.stream;
      lock.unlock();
      std::exception_ptr error;
      try {
        // On the stream that filled the bucket, when it was not the device's default;
        // this thread goes back to the default after.
        if (stream) {
          reserve_thread_stream();
          set_thread_stream(stream);
        }
        struct BackToDefault {
          Device d;
          bool active;
          ~BackToDefault() {
            if (!active) return;
            try {
              set_thread_stream(Stream::default_for(d));
            } catch (...) {  // the device was checked when the bucket was made
            }
          }
        } back{flat.device(), static_cast<bool>(stream)};
        group_->all_reduce(flat, Reduction::Avg);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      b.error = error;
      ++done_;
      cv_.notify_all();
    }
  }

  // A new pass: nothing in, nothing launched. Called with mu_ held, no bucket in flight.
  void reset() {
    for (Param& p : params_) {
      p.grad = Tensor();
      p.ready = false;
    }
    for (Bucket& b : buckets_) {
      b.pending = b.params.size();
      b.flat = Tensor();
      b.stream = Ref<Stream>();
      b.error = nullptr;
    }
    launched_ = taken_ = done_ = 0;
  }

  Ref<ProcessGroup> group_;
  std::vector<Param> params_;
  std::vector<Bucket> buckets_;
  std::unordered_map<const TensorImpl*, size_t> index_;
  const bool find_unused_;
  std::atomic<bool> no_sync_{false};
  bool local_pass_ = false;  // the pass under way is a no_sync one
  std::mutex mu_;
  std::condition_variable cv_;
  size_t launched_ = 0, taken_ = 0, done_ = 0;  // buckets launched / taken by the worker / reduced
  bool stop_ = false;
  std::thread worker_;
};

// Every rank's (count, then per tensor dtype and shape) must equal rank 0's; all ranks
// see the same gathered table, so all fail alike, naming the first difference.
void check_same_everywhere(ProcessGroup& g, const nn::Named& tensors, const char* what) {
  const int world = g.size();
  Tensor count = ops::full(Dims{1}, static_cast<double>(tensors.size()), DType::Int64, Device{DT_DEVICE_CPU, 0});
  Tensor counts = ops::empty(Dims{world}, DType::Int64, Device{DT_DEVICE_CPU, 0});
  g.host_all_gather(count, counts);
  const int64_t* c = counts.data_as<int64_t>();
  for (int r = 1; r < world; ++r)
    if (c[r] != c[0])
      fail(DT_ERR_INVALID_ARGUMENT, cat("DistributedDataParallel: rank 0 has ", c[0], " ", what, "s but rank ", r, " has ", c[r],
                                        ": every rank must wrap the same model"));
  constexpr int kRow = 2 + kMaxDims;  // dtype, ndim, dims
  const int64_t n = static_cast<int64_t>(tensors.size());
  if (n == 0) return;
  Tensor mine = ops::full(Dims{n * kRow}, 0.0, DType::Int64, Device{DT_DEVICE_CPU, 0});
  int64_t* m = mine.data_as<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& t = tensors[static_cast<size_t>(i)].second;
    m[i * kRow] = static_cast<int64_t>(t.dtype());
    m[i * kRow + 1] = t.ndim();
    for (int d = 0; d < t.ndim(); ++d) m[i * kRow + 2 + d] = t.size(d);
  }
  Tensor all = ops::empty(Dims{world * n * kRow}, DType::Int64, Device{DT_DEVICE_CPU, 0});
  g.host_all_gather(mine, all);
  const int64_t* a = all.data_as<int64_t>();
  auto describe = [&](const int64_t* row) {
    Dims d;
    for (int64_t k = 0; k < row[1]; ++k) d.push(row[2 + k]);
    return cat(dims_str(d), " (", dtype_name(static_cast<DType>(row[0])), ")");
  };
  for (int r = 1; r < world; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t* r0 = a + i * kRow;
      const int64_t* rr = a + (r * n + i) * kRow;
      if (!std::equal(r0, r0 + kRow, rr))
        fail(DT_ERR_SHAPE_MISMATCH, cat("DistributedDataParallel: ", what, " '", tensors[static_cast<size_t>(i)].first,
                                        "' is ", describe(r0), " on rank 0 but ", describe(rr), " on rank ", r,
                                        ": every rank must wrap the same model"));
    }
}

class DistributedDataParallel final : public nn::Module {
 public:
  DistributedDataParallel(const Ref<nn::Module>& module, Ref<Reducer> reducer, std::vector<Tensor> hooked)
      : reducer_(std::move(reducer)), hooked_(std::move(hooked)) {
    children_.emplace_back("module", module);  // state_dict names "module.0.weight", as PyTorch's
  }
  ~DistributedDataParallel() override {
    // The parameters' hooks refer to the reducer, which refers to the parameters.
    for (const Tensor& t : hooked_)
      if (t.impl()->autograd && t.impl()->autograd->hook.get() == reducer_.get()) t.impl()->autograd->hook = Ref<GradHook>();
  }
  const char* kind() const override { return "DistributedDataParallel"; }
  size_t arity() const override { return children_[0].second->arity(); }
  Tensor forward(const std::vector<Tensor>& in) override { return children_[0].second->forward(in); }
  void set_no_sync(bool no_sync) { reducer_->set_no_sync(no_sync); }

 private:
  Ref<Reducer> reducer_;
  std::vector<Tensor> hooked_;
};

}  // namespace

void set_no_sync(nn::Module& ddp, bool no_sync, const char* fn) {
  auto* d = dynamic_cast<DistributedDataParallel*>(&ddp);
  if (!d)
    fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the module is a ", ddp.kind(),
                                      ", not a DistributedDataParallel (dt_distributed_data_parallel_new)"));
  d->set_no_sync(no_sync);
}

nn::Module* new_distributed_data_parallel(const Ref<nn::Module>& module, const Ref<ProcessGroup>& group,
                                          size_t bucket_cap_bytes, bool find_unused_parameters) {
  if (bucket_cap_bytes == 0) bucket_cap_bytes = kDefaultBucketCapBytes;
  // Each tensor once, though a child be shared: a second entry would wait for a gradient
  // hook that fires once.
  nn::Named params = module->parameters(true), buffers = module->buffers(true);
  for (const nn::Named* list : {&params, &buffers})
    for (const auto& [name, t] : *list)
      group->check_tensor(t, "DistributedDataParallel", cat(list == &params ? "parameter '" : "buffer '", name, "'"));
  for (const auto& [name, t] : params)
    if (t.impl()->autograd && t.impl()->autograd->hook)
      fail(DT_ERR_INVALID_ARGUMENT, cat("DistributedDataParallel: parameter '", name,
                                        "' already belongs to another DistributedDataParallel"));
  check_same_everywhere(*group, params, "parameter");
  check_same_everywhere(*group, buffers, "buffer");
  for (const nn::Named* list : {&params, &buffers})
    for (const auto& [name, t] : *list) group->broadcast(t, 0);

  std::vector<Reducer::Param> tracked;
  std::vector<Tensor> hooked;
  for (const auto& [name, t] : params) {
    if (!ag::requires_grad(t)) continue;  // frozen parameters are not reduced
    Reducer::Param p;
    p.name = name;
    p.tensor = t;
    tracked.push_back(std::move(p));
    hooked.push_back(t);
  }
  auto reducer = Ref<Reducer>::adopt(new Reducer(group, std::move(tracked), bucket_cap_bytes, find_unused_parameters));
  for (const Tensor& t : hooked) {
    reducer->ref();
    t.impl()->autograd->hook = Ref<GradHook>::adopt(reducer.get());
  }
  return new DistributedDataParallel(module, std::move(reducer), std::move(hooked));
}

}  // namespace dt::dist
