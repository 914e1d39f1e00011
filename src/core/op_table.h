/* The operation table: every elementwise and reduction op of devtensor, declared once.
 * Everything else that lists ops follows from these rows:
 *   - the C++ enums, names and dtype rules (core/op_kinds.h), the functor each row names
 *     (fn::<Name> in ops/functors.h) and the dispatch onto it (visit_unary, ...);
 *   - which dtypes each backend instantiates (cpu/kernels_elementwise.cpp, cuda/unary.cu);
 *   - the autograd formula (nn/grad_elementwise.cpp, nn/grad_reduce.cpp);
 *   - the C entry points dt_<c_name>, dt_<c_name>_scalar, dt_<c_name>_, ... (api/
 *     operations.cpp, which also fails to compile when include/devtensor.h lacks one);
 *   - the op codes of the backend plugin ABI (core/plugin_abi.h: DTP_OP_<NAME>);
 *   - the fuzzer's selectors (fuzz/fuzz_ops.cpp);
 *   - the Go and Rust methods and the PyTorch reference generators' lists, written by
 *     script/gen-op-bindings from this file (tools/op_table.py reads it).
 * Adding an op: a row here, its functor in ops/functors.h, its declaration in
 * include/devtensor.h, its reference cases (tests/reference/gen_reference.py and
 * gen_grad_reference.py); then run script/gen-op-bindings (docs/architecture.md, "How
 * to add an op").
 *
 * Pure preprocessor, valid C and C++: the plugin ABI (C) reads the codes from here.
 * A row's code is its op code in the plugin ABI: stable, never reused, never renumbered.
 * Keep one row per line (tools/op_table.py parses the rows).
 *
 * Every row ends with `doc`: what the op computes, one line (the bindings' comments).
 *
 * UNARY  X(Name, code, c_name, rule, cost, visibility, backward, grad, doc)
 *   rule: KeepsInt  integer inputs stay integer (bool refused): neg, abs, relu
 *         KeepsAll  integer and bool inputs keep their dtype: sign
 *         IntCopy   integer inputs come back unchanged, copied by the front end with no
 *                   integer kernel (bool refused): floor, ceil, round, trunc
 *         ToFloat   integer and bool inputs compute in the default float dtype: exp(int)
 *         FloatOnly non-floating inputs are refused: gelu, gelu_tanh, silu
 *   cost: Cheap or Costly (the CPU backend's grain per thread)
 *   visibility: Public (dt_<c_name> exists) or Internal (no entry point)
 *   backward: PyTorch's grad_fn name, or NotDifferentiable
 *   grad: d(loss)/d(input) from g (the output's gradient), x (the input) and o (the
 *         output), in the helpers of nn/grad_elementwise.cpp; only what it uses is saved
 */
#ifndef DEVTENSOR_OP_TABLE_H
#define DEVTENSOR_OP_TABLE_H

#define DT_UNARY_OPS(X)                                                                                       \
  X(Neg,      101, neg,           KeepsInt,  Cheap,  Public,   NegBackward0,      neg(g), "-x") \
  X(Abs,      102, abs,           KeepsInt,  Cheap,  Public,   AbsBackward0,      abs_grad(g, x), "|x|") \
  X(Exp,      103, exp,           ToFloat,   Costly, Public,   ExpBackward0,      mul(g, o), "e to the power x") \
  X(Log,      104, log,           ToFloat,   Costly, Public,   LogBackward0,      div(g, x), "The natural logarithm of x") \
  X(Sqrt,     105, sqrt,          ToFloat,   Costly, Public,   SqrtBackward0,     div(g, muls(o, 2.0)), "The square root of x") \
  X(Rsqrt,    106, rsqrt,         ToFloat,   Costly, Public,   RsqrtBackward0,    mul(g, muls(pows(o, 3.0), -0.5)), "1 / sqrt(x)") \
  X(Sin,      107, sin,           ToFloat,   Costly, Public,   SinBackward0,      mul(g, un(UnaryOp::Cos, x)), "The sine of x (radians)") \
  X(Cos,      108, cos,           ToFloat,   Costly, Public,   CosBackward0,      neg(mul(g, un(UnaryOp::Sin, x))), "The cosine of x (radians)") \
  X(Relu,     109, relu,          KeepsInt,  Cheap,  Public,   ReluBackward0,     relu_grad(g, o), "max(x, 0)") \
  X(Sigmoid,  110, sigmoid,       ToFloat,   Costly, Public,   SigmoidBackward0,  mul(g, mul(o, rsub1(o))), "The logistic sigmoid 1 / (1 + e^-x)") \
  X(Tanh,     111, tanh,          ToFloat,   Costly, Public,   TanhBackward0,     mul(g, rsub1(mul(o, o))), "The hyperbolic tangent of x") \
  X(Gelu,     112, gelu,          FloatOnly, Costly, Public,   GeluBackward0,     mul(g, un(UnaryOp::GeluGrad, x)), "GELU, exact (erf) form: x * Phi(x)") \
  X(Silu,     113, silu,          FloatOnly, Costly, Public,   SiluBackward0,     silu_grad(g, x), "SiLU (swish): x * sigmoid(x)") \
  X(GeluGrad, 114, gelu_backward, FloatOnly, Costly, Internal, NotDifferentiable, g, "d gelu(x) / dx (autograd only)") \
  X(Erf,      115, erf,           ToFloat,   Costly, Public,   ErfBackward0,      mul(g, muls(un(UnaryOp::Exp, neg(mul(x, x))), 1.12837916709551257390)), "The error function of x") \
  X(Floor,    116, floor,         IntCopy,   Cheap,  Public,   FloorBackward0,    zeros(g), "The largest integer <= x (integers unchanged)") \
  X(Ceil,     117, ceil,          IntCopy,   Cheap,  Public,   CeilBackward0,     zeros(g), "The smallest integer >= x (integers unchanged)") \
  X(Round,    118, round,         IntCopy,   Cheap,  Public,   RoundBackward0,    zeros(g), "x rounded to the nearest integer, halves to even (integers unchanged)") \
  X(Trunc,    119, trunc,         IntCopy,   Cheap,  Public,   TruncBackward0,    zeros(g), "x rounded toward zero (integers unchanged)") \
  X(Frac,     120, frac,          FloatOnly, Cheap,  Public,   FracBackward0,     g, "The fractional part x - trunc(x), with x's sign") \
  X(Sign,     121, sign,          KeepsAll,  Cheap,  Public,   SignBackward0,     zeros(g), "-1, 0 or 1 by the sign of x (0 for NaN; bool unchanged)") \
  X(Reciprocal, 122, reciprocal,  ToFloat,   Cheap,  Public,   ReciprocalBackward0, neg(mul(g, mul(o, o))), "1 / x") \
  X(Log1p,    123, log1p,         ToFloat,   Costly, Public,   Log1PBackward0,    div(g, adds(x, 1.0)), "log(1 + x), accurate for small x") \
  X(Expm1,    124, expm1,         ToFloat,   Costly, Public,   Expm1Backward0,    mul(g, adds(o, 1.0)), "e^x - 1, accurate for small x") \
  X(Log2,     125, log2,          ToFloat,   Costly, Public,   Log2Backward0,     div(g, muls(x, 0.69314718055994530942)), "The base-2 logarithm of x") \
  X(Log10,    126, log10,         ToFloat,   Costly, Public,   Log10Backward0,    div(g, muls(x, 2.30258509299404568402)), "The base-10 logarithm of x") \
  X(Exp2,     127, exp2,          ToFloat,   Costly, Public,   Exp2Backward0,     mul(g, muls(o, 0.69314718055994530942)), "2 to the power x") \
  X(Tan,      128, tan,           ToFloat,   Costly, Public,   TanBackward0,      mul(g, adds(mul(o, o), 1.0)), "The tangent of x (radians)") \
  X(Asin,     129, asin,          ToFloat,   Costly, Public,   AsinBackward0,     mul(g, un(UnaryOp::Rsqrt, rsub1(mul(x, x)))), "The arcsine of x, in [-pi/2, pi/2]") \
  X(Acos,     130, acos,          ToFloat,   Costly, Public,   AcosBackward0,     neg(mul(g, un(UnaryOp::Rsqrt, rsub1(mul(x, x))))), "The arccosine of x, in [0, pi]") \
  X(Atan,     131, atan,          ToFloat,   Costly, Public,   AtanBackward0,     div(g, adds(mul(x, x), 1.0)), "The arctangent of x, in (-pi/2, pi/2)") \
  X(Sinh,     132, sinh,          ToFloat,   Costly, Public,   SinhBackward0,     mul(g, un(UnaryOp::Cosh, x)), "The hyperbolic sine of x") \
  X(Cosh,     133, cosh,          ToFloat,   Costly, Public,   CoshBackward0,     mul(g, un(UnaryOp::Sinh, x)), "The hyperbolic cosine of x") \
  X(Asinh,    134, asinh,         ToFloat,   Costly, Public,   AsinhBackward0,    mul(g, un(UnaryOp::Rsqrt, adds(mul(x, x), 1.0))), "The inverse hyperbolic sine of x") \
  X(Acosh,    135, acosh,         ToFloat,   Costly, Public,   AcoshBackward0,    mul(g, un(UnaryOp::Rsqrt, adds(mul(x, x), -1.0))), "The inverse hyperbolic cosine of x (x >= 1)") \
  X(Atanh,    136, atanh,         ToFloat,   Costly, Public,   AtanhBackward0,    div(g, rsub1(mul(x, x))), "The inverse hyperbolic tangent of x (|x| <= 1)") \
  X(GeluTanh, 137, gelu_tanh,     FloatOnly, Costly, Public,   GeluBackward0,     mul(g, un(UnaryOp::GeluTanhGrad, x)), "GELU, tanh approximation (PyTorch's approximate='tanh', GPT-2's): x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2") \
  X(GeluTanhGrad, 138, gelu_tanh_backward, FloatOnly, Costly, Internal, NotDifferentiable, g, "d gelu_tanh(x) / dx (autograd only)")

/* BINARY  X(Name, code, c_name, rule, backward, grad_a, grad_b, scalar_backward, grad_scalar, doc)
 *   rule: Arith    the promoted dtype of the operands (bool: logical or/and)
 *         NoBool   as Arith, but bool operands are refused (sub)
 *         ToFloat  integer operands compute in the default float dtype (div)
 *         Power    as Arith, but bool is refused and integers to negative scalar powers
 *         IntDiv   as Arith, but bool is refused and so is an integer division by zero
 *                  (fmod, remainder, floor_divide: PyTorch's ZeroDivisionError)
 *         Compare  bool results, no in-place form
 *   Arith, NoBool, ToFloat, Power and IntDiv ops have in-place forms (dt_<c_name>_,
 *   dt_<c_name>_scalar_); every op has a scalar form (dt_<c_name>_scalar).
 *   grad_a / grad_b: the gradients of a and b (before broadcast dims are summed away)
 *   from g, x = a, y = b and o = the output; grad_scalar: a's gradient when b is the
 *   scalar s, named scalar_backward.
 */
#define DT_BINARY_OPS(X)                                                                                        \
  X(Add,     201, add,     Arith,   AddBackward0,      g,                       g,                       AddBackward0,      g, "a + b") \
  X(Sub,     202, sub,     NoBool,  SubBackward0,      g,                       neg(g),                  SubBackward0,      g, "a - b") \
  X(Mul,     203, mul,     Arith,   MulBackward0,      mul(g, y),               mul(g, x),               MulBackward0,      muls(g, s), "a * b") \
  X(Div,     204, div,     ToFloat, DivBackward0,      div(g, y),               neg(div(mul(div(g, y), x), y)), DivBackward0, divs(g, s), "a / b, true division (integers divide as floats)") \
  X(Pow,     205, pow,     Power,   PowBackward1,      pow_grad_base(g, x, y),  pow_grad_exponent(g, x, y, o), PowBackward0, pow_grad_scalar(g, x, s), "a to the power b") \
  X(Maximum, 206, maximum, Arith,   MaximumBackward0,  extreme_grad(g, x, y, true), extreme_grad(g, y, x, true), ClampMinBackward0, keep(ges(x, s), g), "The larger of a and b (NaN if either is)") \
  X(Minimum, 207, minimum, Arith,   MinimumBackward0,  extreme_grad(g, x, y, false), extreme_grad(g, y, x, false), ClampMaxBackward0, keep(les(x, s), g), "The smaller of a and b (NaN if either is)") \
  X(Eq,      208, eq,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a == b, as bool") \
  X(Ne,      209, ne,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a != b, as bool") \
  X(Lt,      210, lt,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a < b, as bool") \
  X(Le,      211, le,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a <= b, as bool") \
  X(Gt,      212, gt,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a > b, as bool") \
  X(Ge,      213, ge,      Compare, NotDifferentiable, g,                       g,                       NotDifferentiable, g, "a >= b, as bool") \
  X(Fmod,    214, fmod,    IntDiv,  FmodBackward1,     g,                       neg(mul(g, un(UnaryOp::Trunc, div(x, y)))), FmodBackward0, g, "The remainder of a / b rounded toward zero (C's fmod: the sign of a)") \
  X(Remainder, 215, remainder, IntDiv, RemainderBackward1, g,                   neg(mul(g, floor_div(x, y))), RemainderBackward0, g, "The remainder of a / b rounded down (Python's %: the sign of b)") \
  X(FloorDivide, 216, floor_divide, IntDiv, NotDifferentiable, g,               g,                       NotDifferentiable, g, "a / b rounded down (Python's //)") \
  X(Atan2,   217, atan2,   ToFloat, Atan2Backward0,    atan2_grad(g, y, x, y),  atan2_grad(g, neg(x), x, y), Atan2Backward0, atan2_grad_scalar(g, s, x), "The angle of the point (b, a) in radians, in [-pi, pi]: atan(a / b) in the right quadrant")

/* REDUCE  X(Name, code, c_name, rule, doc)
 *   rule: Value  the result has the input's dtype (sum of integers: int64; mean: floating)
 *         Index  int64 positions, over exactly one dimension
 */
#define DT_REDUCE_OPS(X)              \
  X(Sum,    301, sum,    Value, "The sum over dims (all when none); integers and bool sum to int64") \
  X(Mean,   302, mean,   Value, "The mean over dims (all when none) of a floating tensor") \
  X(Max,    303, max,    Value, "The largest value over dims (all when none), as torch.amax") \
  X(Min,    304, min,    Value, "The smallest value over dims (all when none), as torch.amin") \
  X(ArgMax, 305, argmax, Index, "The index of the largest value along at most one dim (none: the flattened tensor)") \
  X(ArgMin, 306, argmin, Index, "The index of the smallest value along at most one dim (none: the flattened tensor)")

/* KERNEL  X(Name, code, c_name, doc): the ops that are not elementwise or reductions;
 * each has its own front end in src/ops and its own argument layout (core/plugin_abi.h,
 * dtp_op_args). Backends run them by code, as every op. */
#define DT_KERNEL_OPS(X)                                                                      \
  X(Fill,        1, fill,         "Sets every element to a value")                               \
  X(Arange,      2, arange,       "start + i * step for element i")                              \
  X(Random,      3, random,       "Philox uniform or normal values, indexed by element")          \
  X(Where,       4, where,        "cond ? a : b")                                                \
  X(Softmax,     5, softmax,      "softmax or log-softmax along one dim")                         \
  X(Matmul,      6, matmul,       "batched matrix product of 3-d operands")                       \
  X(IndexSelect, 7, index_select, "rows of a dim picked by an index")                             \
  X(Gather,      8, gather,       "elements picked along a dim by an index of the output's shape") \
  X(ScatterAdd,  9, scatter_add,  "adds each element of src at the index along a dim, in place")   \
  X(IndexAdd,   10, index_add,    "adds rows of source at the rows an index names, in place")   \
  X(SgdStep,    11, sgd_step,     "one SGD step of a parameter and its momentum buffer, in place") \
  X(BatchNormEval, 12, batch_norm, "batch norm with fixed statistics, one pass: x * scale + shift per channel") \
  X(ReluBackward, 13, relu_backward, "ReLU's gradient in one pass: g where the output is positive, else 0") \
  X(Addmm,      14, addmm,        "a matrix product with a bias added to every row in the same pass (Linear)") \
  X(CrossEntropy, 15, cross_entropy, "log-softmax and the negative log-likelihood of class indices, reduced, in one pass") \
  X(CrossEntropyBackward, 16, cross_entropy_backward, "cross entropy's gradient in one pass: (softmax - one-hot) times the upstream gradient") \
  X(SgdStepMulti, 17, sgd_step_multi, "SGD steps of many parameters in one call, from a table of their tensors") \
  X(Cumsum,     18, cumsum,       "running sums along one dim, from the start or from the end (its gradient)") \
  X(Sort,       19, sort,         "each row of the last dim sorted (stable, NaN last) and its first k kept, with the positions the values came from") \
  X(AdaptiveStep, 20, adaptive_step, "one Adam, RMSprop or Adagrad step of a parameter and its state, in place")

/* Row filters for X-macro expansions: DT_IF_ARITH_<rule>(x) keeps x for the binary ops
 * that have in-place forms, DT_IF_COMPARE_<rule>(x) for the comparisons,
 * DT_IF_PUBLIC_<visibility>(x) for the unary ops with an entry point. */
#define DT_IF_ARITH_Arith(x) x
#define DT_IF_ARITH_NoBool(x) x
#define DT_IF_ARITH_ToFloat(x) x
#define DT_IF_ARITH_Power(x) x
#define DT_IF_ARITH_IntDiv(x) x
#define DT_IF_ARITH_Compare(x)
#define DT_IF_COMPARE_Arith(x)
#define DT_IF_COMPARE_NoBool(x)
#define DT_IF_COMPARE_ToFloat(x)
#define DT_IF_COMPARE_Power(x)
#define DT_IF_COMPARE_IntDiv(x)
#define DT_IF_COMPARE_Compare(x) x
#define DT_IF_PUBLIC_Public(x) x
#define DT_IF_PUBLIC_Internal(x)

#endif /* DEVTENSOR_OP_TABLE_H */
