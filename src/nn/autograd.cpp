#include "nn/autograd.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fault_injection.h"
#include "core/move_lock.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

std::atomic<bool> g_grad_enabled{true};

AutogradMeta& meta(const Tensor& t) {
  TensorImpl* impl = t.impl();
  if (!impl->autograd) {
    if (fault::allocation_fails()) throw std::bad_alloc();
    impl->autograd = new AutogradMeta();
  }
  return *impl->autograd;
}

// Every leaf's .grad is read and written under this lock: backward may accumulate into
// a leaf shared by graphs on several threads while others read or clear its gradient.
// Lock order: a thread may take it while holding move pins (core/move_lock.h), never
// pin (or move) while holding it, so pins are taken first.
std::mutex& grad_mutex() {
  static std::mutex mu;
  return mu;
}

// What a leaf's .grad becomes when `add` (the gradient that reached it) is accumulated
// into `current` (its .grad now, maybe undefined). Allocates; changes nothing. The
// caller pins the leaf (a parameter: its module may be moving).
Tensor accumulated(const Tensor& leaf, const Tensor& current, const Tensor& add) {
  // The leaf's first gradient is adopted rather than copied when nothing else can see it:
  // `add` holds the only reference to a dense tensor that owns its whole storage, of the
  // leaf's shape, dtype and device, outside any graph (PyTorch's AccumulateGrad steals it
  // the same way). That spares a copy of every weight gradient in every training step.
  if (!current.defined() && add.impl()->use_count() == 1 && add.storage()->use_count() == 1 &&
      add.impl()->autograd == nullptr && add.is_contiguous() && add.offset() == 0 &&
      add.storage()->nbytes() == add.nbytes() && add.shape() == leaf.shape() && add.dtype() == leaf.dtype() &&
      add.device() == leaf.device())
    return add;
  Tensor g = add;
  if (g.shape() != leaf.shape()) g = ops::reshape(g, leaf.shape(), false);
  // A tensor of our own when there is none yet: the incoming one may be shared with the graph.
  if (!current.defined()) return ops::to(g, leaf.device(), leaf.dtype(), true);
  return ops::binary(BinaryOp::Add, current, g);
}

// The sink of a leaf's gradient. backward() does not apply it: it collects what reaches
// every sink and accumulates them all at the end, all or nothing (accumulate_all).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) {}
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& g) override {
    MovePin pin(leaf_);
    std::lock_guard<std::mutex> lock(grad_mutex());
    AutogradMeta& m = meta(leaf_);
    m.grad = accumulated(leaf_, m.grad, g);
    return {};
  }
  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
};

// Adds each gradient to its leaf's .grad, all or nothing: every new .grad is computed
// (the step that allocates, and can fail) before any is stored. A leaf used by several
// ops has several sinks; their gradients add up in order. A sink that `replaces` gives
// its leaf's new .grad itself (a GradHook's result: the leaf has no other sink).
struct Sink {
  Tensor leaf, grad;
  bool replaces = false;
};
void accumulate_all(const std::vector<Sink>& sinks) {
  std::vector<MovePin> pins;
  pins.reserve(sinks.size());
  for (const Sink& s : sinks) pins.emplace_back(s.leaf);
  std::lock_guard<std::mutex> lock(grad_mutex());
  std::vector<TensorImpl*> leaves;
  std::vector<Tensor> next;
  std::unordered_map<TensorImpl*, size_t> slot;
  for (const Sink& s : sinks) {
    // A leaf whose requires_grad was cleared after the graph was built gets nothing, as
    // in PyTorch (its .grad stays as it was).
    const AutogradMeta* meta = s.leaf.impl()->autograd;
    if (!meta || !meta->requires_grad) continue;
    auto [it, fresh] = slot.try_emplace(s.leaf.impl(), next.size());
    if (fresh) {
      leaves.push_back(s.leaf.impl());
      next.push_back(accumulated(s.leaf, s.replaces ? Tensor() : meta->grad, s.grad));
    } else {
      next[it->second] = accumulated(s.leaf, next[it->second], s.grad);
    }
  }
  // Every leaf taken above has its AutogradMeta.
  for (size_t i = 0; i < leaves.size(); ++i) leaves[i]->autograd->grad = std::move(next[i]);
}

Edge edge_to(const Tensor& input) {
  Edge e;
  e.dtype = input.dtype();
  AutogradMeta* m = input.impl()->autograd;
  if (!m) return e;
  if (m->grad_fn) e.fn = m->grad_fn;
  else if (m->requires_grad) e.fn = Ref<Node>::adopt(new AccumulateGrad(input));
  return e;
}

}  // namespace

namespace {
// The calling thread's override of the process-wide mode (kFollowProcess: none).
thread_local int8_t t_grad_mode __attribute__((tls_model("initial-exec"))) = kFollowProcess;
}  // namespace

bool grad_enabled() {
  const int mode = t_grad_mode;
  return mode == kFollowProcess ? g_grad_enabled.load(std::memory_order_relaxed) : mode == 1;
}
void set_grad_enabled(bool enabled) { g_grad_enabled.store(enabled, std::memory_order_relaxed); }
int thread_grad_mode() { return t_grad_mode; }
void set_thread_grad_mode(int mode) { t_grad_mode = static_cast<int8_t>(mode); }

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = t.impl()->autograd;
  return m && (m->requires_grad || m->grad_fn);
}

void set_requires_grad(const Tensor& t, bool on) {
  if (!on) {
    if (t.impl()->autograd && t.impl()->autograd->grad_fn)
      fail(DT_ERR_INVALID_ARGUMENT,
           "set_requires_grad: you can only change requires_grad flags of leaf variables (this tensor has grad_fn " +
               std::string(t.impl()->autograd->grad_fn->name()) + "); use dt_tensor_detach");
    if (t.impl()->autograd) t.impl()->autograd->requires_grad = false;
    return;
  }
  if (!is_floating(t.dtype()))
    fail(DT_ERR_DTYPE_MISMATCH, cat("set_requires_grad: only tensors of floating point dtype can require gradients, got ",
                                    dtype_name(t.dtype())));
  meta(t).requires_grad = true;
}

Tensor grad(const Tensor& t) {
  std::lock_guard<std::mutex> lock(grad_mutex());
  const AutogradMeta* m = t.impl()->autograd;
  return m ? m->grad : Tensor();
}

void set_grad(const Tensor& t, Tensor g) {
  Tensor old;  // released after the lock
  std::lock_guard<std::mutex> lock(grad_mutex());
  if (!g.defined() && !t.impl()->autograd) return;
  old = std::exchange(meta(t).grad, std::move(g));
}

Node* grad_fn(const Tensor& t) {
  const AutogradMeta* m = t.impl()->autograd;
  return m ? m->grad_fn.get() : nullptr;
}

bool is_leaf(const Tensor& t) { return grad_fn(t) == nullptr; }

bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && t->defined() && requires_grad(*t)) return true;
  return false;
}

void record(Tensor& out, Node* node, std::initializer_list<const Tensor*> inputs) {
  record(out, node, std::vector<const Tensor*>(inputs));
}

void record(Tensor& out, Node* node, const std::vector<const Tensor*>& inputs) {
  Ref<Node> owned = Ref<Node>::adopt(node);
  if (fault::allocation_fails()) throw std::bad_alloc();  // the node's edges
  for (const Tensor* t : inputs) {
    if (t && t->defined() && t->impl() == out.impl()) {
      out = out.view_as(out.shape(), out.strides(), out.offset());
      break;
    }
  }
  node->next.reserve(inputs.size());
  for (const Tensor* t : inputs) node->next.push_back(t && t->defined() ? edge_to(*t) : Edge{});
  AutogradMeta& m = meta(out);
  m.grad_fn = std::move(owned);
  m.requires_grad = true;
}

// The GradHooks of one backward pass (core/autograd_meta.h): counts the sinks of each
// watched leaf the pass reaches, sums what reaches them, and hands the hook the whole
// gradient when the last one has run; at the end, the hooks' results join the sinks.
class HookedLeaves {
 public:
  // Called once for every node the pass reaches, while backward counts dependencies (no
  // pass of its own): notes the sinks of watched leaves.
  void note(Node* node) {
    auto* sink = dynamic_cast<AccumulateGrad*>(node);
    if (!sink) return;
    const AutogradMeta* m = sink->leaf().impl()->autograd;
    if (!m || !m->hook) return;
    Leaf& l = leaves_[sink->leaf().impl()];
    ++l.sinks_left;
    l.hook = m->hook;
    if (std::none_of(hooks_.begin(), hooks_.end(), [&](const Ref<GradHook>& h) { return h.get() == m->hook.get(); }))
      hooks_.push_back(m->hook);
  }
  // A sink of leaf ran with gradient g (undefined when none reached it); false when no
  // hook watches leaf.
  bool take(const Tensor& leaf, const Tensor& g) {
    auto it = leaves_.find(leaf.impl());
    if (it == leaves_.end()) return false;
    Leaf& l = it->second;
    if (g.defined()) l.sum = l.sum.defined() ? ops::binary(BinaryOp::Add, l.sum, g) : g;
    if (--l.sinks_left == 0 && l.sum.defined()) l.hook->grad_ready(leaf, l.sum);
    return true;
  }
  // The pass starts (inside backward's try, so that a failure cancels every hook begun).
  void begin() {
    for (; begun_ < hooks_.size(); ++begun_) hooks_[begun_]->begin();
  }
  void finish(std::vector<Sink>* sinks) {
    for (size_t i = 0; i < hooks_.size(); ++i) {
      ++finished_;
      GradHook::Result r = hooks_[i]->finish();
      for (auto& [leaf, g] : r.grads) sinks->push_back(Sink{std::move(leaf), std::move(g), r.replace});
    }
  }
  void cancel() noexcept {
    // A hook that threw in begin counts as begun: it cancels its own half-begun pass.
    for (size_t i = finished_; i < std::min(begun_ + 1, hooks_.size()); ++i) hooks_[i]->cancel();
  }

 private:
  struct Leaf {
    int sinks_left = 0;
    Tensor sum;
    Ref<GradHook> hook;
  };
  std::unordered_map<TensorImpl*, Leaf> leaves_;
  std::vector<Ref<GradHook>> hooks_;
  size_t begun_ = 0, finished_ = 0;
};

namespace {
// PyTorch's check of saved variables: a tensor a node saved and that was written in
// place since (through an alias autograd does not track: a detached view, a tensor that
// does not require grad) would give a silently wrong gradient.
void check_saved(const Node& n) {
  for (const Node::Saved& s : n.saved)
    if (s.tensor.storage()->version() != s.version)
      fail(DT_ERR_INVALID_ARGUMENT,
           cat("backward: a tensor ", n.name(), " saved (", dtype_name(s.tensor.dtype()), " ", dims_str(s.tensor.shape()),
               ") has been modified by an in-place operation since the forward pass, so the gradient would be "
               "wrong; modify a copy instead (dt_tensor_to with DT_TO_COPY), or run backward first"));
}
}  // namespace

void backward(const Tensor& root, const Tensor& grad_output) {
  if (!requires_grad(root))
    fail(DT_ERR_INVALID_ARGUMENT, "backward: element 0 of tensors does not require grad and does not have a grad_fn");
  Tensor g = grad_output;
  if (!g.defined()) {
    if (root.numel() != 1)
      fail(DT_ERR_INVALID_ARGUMENT, cat("backward: grad can be implicitly created only for scalar outputs (the "
                                        "output has shape ", dims_str(root.shape()), "); pass a gradient"));
    g = ops::full(root.shape(), 1.0, root.dtype(), root.device());
  } else {
    if (g.shape() != root.shape())
      fail(DT_ERR_SHAPE_MISMATCH, cat("backward: the gradient has shape ", dims_str(g.shape()),
                                      " but the output has shape ", dims_str(root.shape())));
    ops::check_same_device("backward", root, g);
    if (g.dtype() != root.dtype()) g = ops::to(g, root.device(), root.dtype(), false);
  }
  // Backward formulas call src/ops directly, so nothing they compute is recorded; grad
  // mode is left alone for the threads still running forward passes.
  Ref<Node> start = root.impl()->autograd->grad_fn;
  if (!start) start = edge_to(root).fn;  // a leaf: its AccumulateGrad
  // Count, for every node reachable from start, the edges that lead to it.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack{start.get()};
  deps[start.get()] = 0;
  // Leaves watched by a GradHook (DistributedDataParallel): how many of their sinks this
  // pass reaches, so the hook hears of a leaf's whole gradient as soon as it is known.
  HookedLeaves hooked;
  hooked.note(start.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (!e.fn) continue;
      auto [it, fresh] = deps.try_emplace(e.fn.get(), 0);
      ++it->second;
      if (fresh) {
        stack.push_back(e.fn.get());
        hooked.note(e.fn.get());
      }
    }
  }
  // Run nodes whose every consumer has run, summing the gradients that reach each one.
  // The leaves' sinks are collected, not run: their .grad changes only once the whole
  // pass has succeeded (accumulate_all), so a failed backward leaves every .grad as it was.
  std::vector<Sink> sinks;
  std::unordered_map<Node*, Tensor> pending;
  pending[start.get()] = g;
  std::vector<Node*> ready{start.get()};
  try {
    hooked.begin();
    while (!ready.empty()) {
      Node* n = ready.back();
      ready.pop_back();
      auto found = pending.find(n);
      Tensor in = found == pending.end() ? Tensor() : std::move(found->second);
      if (found != pending.end()) pending.erase(found);
      if (auto* sink = dynamic_cast<AccumulateGrad*>(n)) {
        if (!hooked.take(sink->leaf(), in) && in.defined()) sinks.push_back(Sink{sink->leaf(), std::move(in)});
        continue;  // a sink has no inputs
      }
      // A node no gradient reached still releases its inputs' dependency counts.
      if (in.defined()) check_saved(*n);
      std::vector<Tensor> grads = in.defined() ? n->apply(in) : std::vector<Tensor>();
      for (size_t i = 0; i < n->next.size(); ++i) {
        const Edge& e = n->next[i];
        if (!e.fn) continue;
        Node* target = e.fn.get();
        if (i < grads.size() && grads[i].defined()) {
          Tensor gi = grads[i];
          if (gi.dtype() != e.dtype) gi = ops::to(gi, gi.device(), e.dtype, false);
          Tensor& acc = pending[target];
          acc = acc.defined() ? ops::binary(BinaryOp::Add, acc, gi) : gi;
        }
        if (--deps[target] == 0) ready.push_back(target);
      }
    }
    hooked.finish(&sinks);
  } catch (...) {
    hooked.cancel();
    throw;
  }
  accumulate_all(sinks);
}

Tensor detach(const Tensor& t) { return t.view_as(t.shape(), t.strides(), t.offset()); }

Tensor named_result(const Tensor& t, const char* name) {
  if (!should_record({&t})) return t;
  Tensor out = detach(t);
  record(out, make_node(name, [](const Tensor& g) { return std::vector<Tensor>{g}; }), {&t});
  return out;
}

}  // namespace dt::ag
