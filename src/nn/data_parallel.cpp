#include "nn/data_parallel.h"

#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/graph.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/replica_broadcast.h"
#include "ops/ops.h"

namespace dt::nn {
namespace {

// Joins every started worker when it goes out of scope, whether forward returns or throws
// (a thread left joinable would end the process).
struct JoinAll {
  std::vector<std::thread>& workers;
  ~JoinAll() {
    for (std::thread& t : workers) t.join();
  }
};

class DataParallel final : public Module {
 public:
  DataParallel(const Ref<Module>& module, std::vector<Device> devices, Device output)
      : devices_(std::move(devices)), output_(output), broadcast_(ReplicaBroadcast::make(devices_)) {
    children_.emplace_back("module", module);  // state_dict names "module.0.weight", as PyTorch's
  }
  const char* kind() const override { return "DataParallel"; }
  size_t arity() const override { return module().arity(); }
  Tensor forward(const std::vector<Tensor>& in) override;

 private:
  Module& module() const { return *children_[0].second; }
  void check_module_device() const;
  int64_t check_inputs(const std::vector<Tensor>& in) const;
  std::vector<Ref<Module>> replicas(size_t count);

  const std::vector<Device> devices_;
  const Device output_;
  std::mutex mu_;                      // guards what follows: forward may run on several threads
  std::vector<Ref<Module>> replicas_;  // replicas_[k] serves devices_[k + 1]
  std::vector<uint64_t> stamp_;        // the module's stamp when replicas_ were made
  bool tracked_ = false;               // replicas_ record gradients back to the module
  // NCCL's broadcast into the replicas when the module changed; null: copies
  std::unique_ptr<ReplicaBroadcast> broadcast_;
};

void DataParallel::check_module_device() const {
  for (bool params : {true, false}) {
    for (const auto& [name, t] : params ? module().parameters() : module().buffers()) {
      if (t.device() != devices_[0])
        fail(DT_ERR_DEVICE_MISMATCH,
             cat("DataParallel: module must have its parameters and buffers on device ", device_str(devices_[0]),
                 " (device_ids[0]) but found one of them on device: ", device_str(t.device()), " (",
                 params ? "parameter " : "buffer ", name, ")"));
    }
  }
}

// Every input is split along dim 0, so each must have one and the same size there.
int64_t DataParallel::check_inputs(const std::vector<Tensor>& in) const {
  if (in.empty()) fail(DT_ERR_INVALID_ARGUMENT, "DataParallel: expected at least one input");
  for (size_t j = 0; j < in.size(); ++j) {
    if (in[j].ndim() == 0)
      fail(DT_ERR_SHAPE_MISMATCH, cat("DataParallel: input ", j, " is 0-d and cannot be split along dimension 0"));
    if (in[j].size(0) != in[0].size(0))
      fail(DT_ERR_SHAPE_MISMATCH, cat("DataParallel: every input is split along dimension 0, so their sizes there "
                                      "must agree, but input 0 has ", in[0].size(0), " and input ", j, " has ",
                                      in[j].size(0)));
  }
  return in[0].size(0);
}

// Replicas for devices_[1 .. count-1], made again when the module changed since the last
// ones were made, or when gradients must now flow and they were made without.
std::vector<Ref<Module>> DataParallel::replicas(size_t count) {
  std::vector<uint64_t> now;
  module().stamp(&now);
  const bool track = ag::grad_enabled();
  std::lock_guard<std::mutex> lock(mu_);
  if (now != stamp_ || (track && !tracked_)) {
    // Values changed, replicas complete and tracked as needed: a device library can
    // overwrite them in place; otherwise they are made again by copies.
    const bool refreshed = !(track && !tracked_) && broadcast_ && broadcast_->refresh(module(), replicas_);
    if (!refreshed) {
      replicas_.clear();
      tracked_ = track;
    }
    stamp_ = std::move(now);
  }
  while (replicas_.size() + 1 < count) replicas_.push_back(module().replicate(devices_[replicas_.size() + 1]));
  return std::vector<Ref<Module>>(replicas_.begin(), replicas_.begin() + static_cast<std::ptrdiff_t>(count - 1));
}

Tensor DataParallel::forward(const std::vector<Tensor>& in) {
  // Its replicas run on threads of their own, whose work a capture would not record.
  for (const Tensor& x : in) refuse_while_capturing(x.device(), "DataParallel", "its replicas run on other threads");
  for (const Device& d : devices_) refuse_while_capturing(d, "DataParallel", "its replicas run on other threads");
  check_module_device();
  const int64_t batch = check_inputs(in);
  // torch.chunk's pieces (an empty batch runs whole on devices_[0]).
  const auto n = static_cast<int64_t>(devices_.size());
  const size_t count = batch == 0 ? 1 : static_cast<size_t>(ops::chunk_pieces(in[0], n, 0));
  std::vector<Ref<Module>> others = replicas(count);

  // Scatter (recorded by autograd: a piece's gradient flows back to its rows of the input).
  std::vector<std::vector<Tensor>> inputs(count);
  for (const Tensor& x : in) {
    std::vector<Tensor> pieces = count == 1 ? std::vector<Tensor>{x} : ag::chunk(x, n, 0);
    for (size_t k = 0; k < count; ++k) inputs[k].push_back(ag::to(pieces[k], devices_[k], pieces[k].dtype(), false));
  }

  // One worker per device; the caller's thread serves devices_[0] with the module itself.
  std::vector<Tensor> outs(count);
  std::vector<std::exception_ptr> errors(count);
  const bool track = ag::grad_enabled();  // the caller's mode, which its workers take
  auto run = [&](size_t k) {
    try {
      ag::ThreadGradMode mode(track);
      outs[k] = (k == 0 ? module() : *others[k - 1]).forward(inputs[k]);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  {
    std::vector<std::thread> workers;
    JoinAll join{workers};
    workers.reserve(count - 1);
    for (size_t k = 1; k < count; ++k) workers.emplace_back(run, k);
    run(0);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);  // the first device's error

  // Gather on the output device; 0-d results (a loss per piece) become a vector of them.
  if (count == 1) return ag::to(outs[0], output_, outs[0].dtype(), false);
  std::vector<Tensor> parts;
  parts.reserve(count);
  for (const Tensor& o : outs) {
    Tensor r = o.ndim() == 0 ? ag::unsqueeze(o, 0) : o;
    parts.push_back(ag::to(r, output_, r.dtype(), false));
  }
  return ag::cat_tensors(parts, 0);
}

}  // namespace

Module* new_data_parallel(const Ref<Module>& module, std::vector<Device> devices, const Device* output) {
  if (std::string(module->kind()) == "DataParallel")
    fail(DT_ERR_INVALID_ARGUMENT, "DataParallel: the module is already a DataParallel");
  if (devices.empty()) {
    const Device home = module->device();
    for (size_t i = 0; i < device_count(home.type); ++i) devices.push_back(Device{home.type, static_cast<int32_t>(i)});
  }
  std::set<std::pair<int32_t, int32_t>> seen;
  for (size_t i = 0; i < devices.size(); ++i) {
    try {
      check_device(devices[i]);
    } catch (const Error& e) {
      fail(e.code(), cat("DataParallel: device_ids[", i, "]: ", e.what()));
    }
    if (!seen.emplace(devices[i].type, devices[i].index).second)
      fail(DT_ERR_INVALID_ARGUMENT, cat("DataParallel: device_ids[", i, "] is ", device_str(devices[i]),
                                        ", which appears twice in device_ids"));
  }
  const Device out = output ? *output : devices[0];
  try {
    check_device(out);
  } catch (const Error& e) {
    fail(e.code(), cat("DataParallel: output_device: ", e.what()));
  }
  return new DataParallel(module, std::move(devices), out);
}

}  // namespace dt::nn
