// What autograd attaches to a tensor (src/nn/ records and runs the graph). Declared in
// the core only so a TensorImpl can own and free it; most tensors have none.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace dt {

class Node;

// Where the gradient of one input of a node goes: the node that produced that input
// (or the AccumulateGrad of a leaf), with the input's dtype, to which the gradient is
// cast. fn is null when the input needs no gradient.
struct Edge {
  Ref<Node> fn;
  DType dtype = DType::Float32;
};

// A step of the recorded graph: turns the gradient of its output into gradients of its
// inputs (one per edge of `next`, undefined where not needed).
class Node : public RefCounted {
 public:
  virtual ~Node() = default;
  static void destroy(Node* n) { delete n; }
  // PyTorch's name of the backward function, e.g. "AddmmBackward0".
  virtual const char* name() const = 0;
  virtual std::vector<Tensor> apply(const Tensor& grad_output) = 0;
  std::vector<Edge> next;
  // The tensors the formula saved, with their storages' versions then (PyTorch's saved
  // variables): backward refuses to apply a node once any of them was written in place,
  // since its gradient would be computed from the new values.
  struct Saved {
    Tensor tensor;
    uint64_t version;
  };
  std::vector<Saved> saved;
};

// Watches the gradients backward computes for some leaves, and may replace them before
// they are accumulated: DistributedDataParallel's reducer (dist/ddp.cpp) averages them
// over processes, starting on a bucket as soon as its gradients are in.
class GradHook : public RefCounted {
 public:
  virtual ~GradHook() = default;
  static void destroy(GradHook* h) { delete h; }
  // A backward pass that reaches some of this hook's leaves starts (before any
  // grad_ready of that pass).
  virtual void begin() = 0;
  // The whole gradient one backward pass computed for leaf (every use of it summed),
  // called on the backward thread as soon as it is known.
  virtual void grad_ready(const Tensor& leaf, const Tensor& grad) = 0;
  // The end of a backward pass that reached any of this hook's leaves: the (leaf,
  // gradient) pairs to use instead of those given to grad_ready, added to .grad, or
  // replacing it when `replace`. Throwing fails the pass, leaving every .grad as it was.
  struct Result {
    std::vector<std::pair<Tensor, Tensor>> grads;
    bool replace = false;
  };
  virtual Result finish() = 0;
  // The pass failed before finish: forget it.
  virtual void cancel() noexcept = 0;
};

struct AutogradMeta {
  bool requires_grad = false;  // a leaf the user marked (or a result of one)
  Tensor grad;                 // accumulated gradient of a leaf
  Ref<Node> grad_fn;           // the node that made this tensor, for non-leaves
  Ref<GradHook> hook;          // set on leaves whose gradients a hook watches
};

}  // namespace dt
