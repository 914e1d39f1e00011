// The names of the operations a backend implements. Shape, dtype and device rules live
// in src/ops/*.cpp; the math of each op lives once in src/ops/functors.h.
#pragma once

namespace dt {

enum class BinaryOp { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge };
// GeluGrad (d gelu / dx) exists for autograd; no public function maps to it.
enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Sin, Cos, Relu, Sigmoid, Tanh, Gelu, Silu, GeluGrad };
enum class ReduceOp { Sum, Mean, Max, Min, ArgMax, ArgMin };
enum class RandomDist { Uniform, Normal };

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

const char* op_name(BinaryOp op);
const char* op_name(UnaryOp op);
const char* op_name(ReduceOp op);

}  // namespace dt
