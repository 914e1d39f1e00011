// torch.masked_select (functions.h): the elements of a where the bool mask (broadcast
// with a) is true, as a 1-d tensor in row-major order. Built from differentiable ops (a
// broadcast, a flatten and an index_select of the mask's true positions, found on the
// device: ops/nonzero.h), so its gradient is index_add's into a's broadcast shape, summed
// back to a's shape; named as PyTorch names the node.
#include "core/error.h"
#include "nn/autograd.h"
#include "nn/functions.h"
#include "ops/nonzero.h"
#include "ops/ops.h"

namespace dt::ag {

Tensor masked_select(const Tensor& a, const Tensor& mask) {
  const char* op = "masked_select";
  if (mask.dtype() != DType::Bool)
    fail(DT_ERR_DTYPE_MISMATCH, cat(op, ": expected a bool mask, got ", dtype_name(mask.dtype())));
  ops::check_same_device(op, a, mask);
  const Dims shape = ops::broadcast_shapes(op, a.shape(), mask.shape());
  const Tensor flat_mask = ops::reshape(ops::contiguous(ops::expand(mask, shape)), Dims{numel_of(shape)}, false);
  const Tensor picks = ops::true_positions(flat_mask);
  const Tensor flat = reshape(contiguous(expand(a, shape)), Dims{numel_of(shape)}, false);
  return named_result(index_select(flat, 0, picks), "MaskedSelectBackward0");
}

}  // namespace dt::ag
