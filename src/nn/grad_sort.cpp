// Autograd for sort and topk (PyTorch's SortBackward0 and TopkBackward0): the values'
// gradient goes back to the positions the indices name, added into zeros of the input's
// shape; the indices have no gradient.
#include <vector>

#include "nn/autograd.h"
#include "nn/functions.h"
#include "nn/node.h"
#include "ops/ops.h"

namespace dt::ag {
namespace {

ops::SortResult with_gradient(ops::SortResult r, const Tensor& a, int d, const char* name) {
  if (!should_record({&a})) return r;
  const Dims shape = a.shape();
  const Tensor idx = r.indices;
  record(r.values,
         saving(make_node(name,
                          [shape, d, idx](const Tensor& g) {
                            return std::vector<Tensor>{gather_backward(g, shape, d, idx)};
                          }),
                {&idx}),
         {&a});
  return r;
}

}  // namespace

ops::SortResult sort(const Tensor& a, int64_t dim, bool descending) {
  ops::SortResult r = ops::sort(a, dim, descending);
  return with_gradient(std::move(r), a, wrap_dim(dim, a.ndim(), "sort"), "SortBackward0");
}

ops::SortResult topk(const Tensor& a, int64_t k, int64_t dim, bool largest) {
  ops::SortResult r = ops::topk(a, k, dim, largest);
  return with_gradient(std::move(r), a, wrap_dim(dim, a.ndim(), "topk"), "TopkBackward0");
}

}  // namespace dt::ag
