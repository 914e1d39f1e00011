// Reverse-mode automatic differentiation, as PyTorch's: ops run through the
// differentiable front ends (nn/functions.h) record a graph of Nodes when grad mode is
// on and an input requires grad; backward() walks it from a root in dependency order,
// summing the gradients that meet at a node, and accumulates into the leaves' .grad.
#pragma once
#include <initializer_list>
#include <vector>

#include "core/autograd_meta.h"
#include "core/tensor.h"

namespace dt::ag {

// Grad mode: a process-wide setting that a thread may override for itself (PyTorch's
// grad mode is per thread): an inference thread can stop recording without stopping a
// training thread. grad_enabled() is the calling thread's effective mode.
bool grad_enabled();
void set_grad_enabled(bool enabled);  // process-wide
constexpr int kFollowProcess = -1;    // a thread mode: no override (every thread's initial state)
int thread_grad_mode();               // kFollowProcess, 0 or 1
void set_thread_grad_mode(int mode);
// Sets the calling thread's mode for a scope and restores the previous one after
// (DataParallel's workers run with the caller's effective mode).
class ThreadGradMode {
 public:
  explicit ThreadGradMode(bool enabled) : previous_(thread_grad_mode()) { set_thread_grad_mode(enabled ? 1 : 0); }
  ThreadGradMode(const ThreadGradMode&) = delete;
  ThreadGradMode& operator=(const ThreadGradMode&) = delete;
  ~ThreadGradMode() { set_thread_grad_mode(previous_); }

 private:
  int previous_;
};

bool requires_grad(const Tensor& t);  // a leaf marked by the user, or any result of one
void set_requires_grad(const Tensor& t, bool on);  // leaves of a floating dtype only
Tensor grad(const Tensor& t);          // undefined when there is none
void set_grad(const Tensor& t, Tensor g);  // undefined clears it
Node* grad_fn(const Tensor& t);        // null for leaves and untracked tensors
bool is_leaf(const Tensor& t);

// True when an op on these inputs must be recorded.
bool should_record(std::initializer_list<const Tensor*> inputs);
// Makes `node` the grad_fn of `out`, with one edge per input (in order). When out is
// the very body of an input (an op that returned its input), out becomes a fresh alias.
void record(Tensor& out, Node* node, std::initializer_list<const Tensor*> inputs);
void record(Tensor& out, Node* node, const std::vector<const Tensor*>& inputs);

// The gradient of root with respect to every leaf that requires grad, accumulated into
// their .grad. grad_output may be undefined only for a one-element root.
void backward(const Tensor& root, const Tensor& grad_output);

// A new tensor sharing t's storage and geometry, outside any graph.
Tensor detach(const Tensor& t);

// t as the result of PyTorch's fused op `name` ("NllLossBackward0"): when t is recorded,
// an alias of t whose grad_fn has that name and passes the gradient through to t's own.
// For modules built from several differentiable ops, so grad_fn names what PyTorch's does.
Tensor named_result(const Tensor& t, const char* name);

}  // namespace dt::ag
