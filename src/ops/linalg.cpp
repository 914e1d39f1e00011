// matmul's front end: torch.matmul's rules for 1-d, 2-d and batched operands; Linear's
// product with its bias as one op where the backend has it.
#include "core/backend.h"
#include "core/context.h"
#include "core/error.h"
#include "core/registry.h"
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

bool linear_bias_fusable(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const DType d = x.dtype();
  if ((d != DType::Float32 && d != DType::Float64) || w.dtype() != d || bias.dtype() != d) return false;
  if (x.ndim() == 0 || w.ndim() != 2 || bias.ndim() != 1 || !bias.is_contiguous()) return false;
  if (x.size(x.ndim() - 1) != w.size(1) || bias.size(0) != w.size(0)) return false;
  if (w.device() != x.device() || bias.device() != x.device()) return false;
  Backend* backend = find_backend(x.device().type);
  return backend && backend->supports(code_of(KernelOp::Addmm));
}

Tensor linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias) {
  if (!linear_bias_fusable(x, w, bias))
    fail(DT_ERR_INVALID_ARGUMENT, "linear: the fused product takes float32 or float64 x [..., in], weight [out, in] "
                                  "and a contiguous bias [out] of one device");
  const int64_t in = w.size(1), outf = w.size(0);
  Dims lead;  // x's dims but the last
  int64_t lead_numel = 1;
  for (int d = 0; d + 1 < x.ndim(); ++d) {
    lead.push(x.size(d));
    lead_numel *= x.size(d);
  }
  Tensor a3 = reshape(x, Dims{1, lead_numel, in}, false);
  Tensor b3 = reshape(transpose(w, 0, 1), Dims{1, in, outf}, false);  // a view: BLAS reads it transposed
  Tensor out = Tensor::empty(Dims{1, lead_numel, outf}, x.dtype(), x.device());
  if (out.numel() > 0) {
    OpArgs args{&out, &a3, &b3, &bias};
    args.i[0] = allow_tf32() ? 1 : 0;
    run_op(KernelOp::Addmm, args);
  }
  lead.push(outf);
  return reshape(out, lead, true);
}

}  // namespace dt::ops
