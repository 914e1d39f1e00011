// A backward node from a lambda: the formula captures what it saved (detached tensors
// only, so a node never owns the graph that owns it), and saving() notes their versions.
#pragma once
#include <initializer_list>
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

// n, noting the versions of the tensors its formula saved (null or undefined entries
// are skipped); see Node::saved.
inline Node* saving(Node* n, std::initializer_list<const Tensor*> saved) {
  try {
    for (const Tensor* t : saved)
      if (t && t->defined()) n->saved.push_back({*t, t->storage()->version()});
  } catch (...) {
    Node::destroy(n);
    throw;
  }
  return n;
}

// Whether a formula's text names the one-letter identifier id ('x', 'y', 'o'): the op
// table's gradient formulas are also strings (#grad), so an elementwise node saves
// exactly the tensors its formula uses.
constexpr bool formula_names(const char* f, char id) {
  auto word = [](char c) { return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  for (size_t i = 0; f[i] != '\0'; ++i)
    if (f[i] == id && (i == 0 || !word(f[i - 1])) && !word(f[i + 1])) return true;
  return false;
}
static_assert(formula_names("mul(g, y)", 'y') && !formula_names("mul(g, y)", 'x') &&
              !formula_names("un(UnaryOp::Exp, g)", 'x'));

}  // namespace dt::ag
