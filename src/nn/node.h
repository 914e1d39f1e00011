// A backward node from a lambda: the formula captures what it saved (detached tensors
// only, so a node never owns the graph that owns it).
#pragma once
#include <utility>
#include <vector>

#include "core/autograd_meta.h"

namespace dt::ag {

template <typename F>
class FnNode final : public Node {
 public:
  FnNode(const char* name, F f) : name_(name), f_(std::move(f)) {}
  const char* name() const override { return name_; }
  std::vector<Tensor> apply(const Tensor& g) override { return f_(g); }

 private:
  const char* name_;
  F f_;
};

template <typename F>
Node* make_node(const char* name, F f) {
  return new FnNode<F>(name, std::move(f));
}

}  // namespace dt::ag
