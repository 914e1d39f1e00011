// matmul's front end: torch.matmul's rules for 1-d, 2-d and batched operands.
#include "core/backend.h"
#include "core/context.h"
#include "core/error.h"
#include "ops/ops.h"

namespace dt::ops {

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_device("matmul", a, b);
  if (a.ndim() == 0 || b.ndim() == 0)
    fail(DT_ERR_SHAPE_MISMATCH, cat("matmul: both arguments need to be at least 1-d, but got shapes ", dims_str(a.shape()),
                                    " and ", dims_str(b.shape())));
  if (a.dtype() != b.dtype())
    fail(DT_ERR_DTYPE_MISMATCH, cat("matmul: expected both operands to have the same dtype, but got ", dtype_name(a.dtype()),
                                    " and ", dtype_name(b.dtype())));
  if (a.dtype() == DType::Bool) fail(DT_ERR_DTYPE_MISMATCH, "matmul: not implemented for bool");

  // Promote 1-d operands to matrices, remembering which dims to drop from the result.
  Tensor a2 = a.ndim() == 1 ? unsqueeze(a, 0) : a;
  Tensor b2 = b.ndim() == 1 ? unsqueeze(b, 1) : b;
  const int an = a2.ndim(), bn = b2.ndim();
  const int64_t M = a2.size(an - 2), K = a2.size(an - 1), K2 = b2.size(bn - 2), N = b2.size(bn - 1);
  if (K != K2)
    fail(DT_ERR_SHAPE_MISMATCH, cat("matmul: shapes ", dims_str(a.shape()), " and ", dims_str(b.shape()),
                                    " cannot be multiplied (", K, " != ", K2, ")"));
  Dims abatch, bbatch;
  for (int d = 0; d < an - 2; ++d) abatch.push(a2.size(d));
  for (int d = 0; d < bn - 2; ++d) bbatch.push(b2.size(d));
  Dims batch = broadcast_shapes("matmul", abatch, bbatch);
  int64_t B = numel_of(batch);

  Dims ae = batch, be = batch;
  ae.push(M); ae.push(K);
  be.push(K); be.push(N);
  Tensor a3 = reshape(expand(a2, ae), Dims{B, M, K}, false);
  Tensor b3 = reshape(expand(b2, be), Dims{B, K, N}, false);
  Tensor out = Tensor::empty(Dims{B, M, N}, a.dtype(), a.device());
  if (out.numel() > 0) {
    OpArgs args{&out, &a3, &b3};
    args.i[0] = allow_tf32() ? 1 : 0;
    run_op(KernelOp::Matmul, args);
  }

  Dims final_shape = batch;
  if (a.ndim() > 1) final_shape.push(M);
  if (b.ndim() > 1) final_shape.push(N);
  return reshape(out, final_shape, true);
}

}  // namespace dt::ops
