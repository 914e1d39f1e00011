// What autograd attaches to a tensor (src/nn/ records and runs the graph). Declared in
// the core only so a TensorImpl can own and free it; most tensors have none.
#pragma once
#include <cstdint>
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
};

struct AutogradMeta {
  bool requires_grad = false;  // a leaf the user marked (or a result of one)
  Tensor grad;                 // accumulated gradient of a leaf
  Ref<Node> grad_fn;           // the node that made this tensor, for non-leaves
};

}  // namespace dt
