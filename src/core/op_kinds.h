// The kinds of operations a backend implements, as C++ types made from the one table in
// core/op_table.h: enums whose values are the ops' stable codes, names, dtype rules and
// counts. Shape, dtype and device rules live in src/ops/*.cpp; the math of each op lives
// once in src/ops/functors.h.
#pragma once
#include <cstdint>

#include "core/op_table.h"

namespace dt {

enum class UnaryRule { KeepsInt, KeepsAll, IntCopy, ToFloat, FloatOnly };
enum class OpCost { Cheap, Costly };
enum class BinaryRule { Arith, NoBool, ToFloat, Power, IntDiv, Compare };
enum class ReduceRule { Value, Index };

// Enum values are the table's codes (the plugin ABI's op codes).
enum class UnaryOp : int32_t {
#define DT_X(Name, code, ...) Name = code,
  DT_UNARY_OPS(DT_X)
#undef DT_X
};
enum class BinaryOp : int32_t {
#define DT_X(Name, code, ...) Name = code,
  DT_BINARY_OPS(DT_X)
#undef DT_X
};
enum class ReduceOp : int32_t {
#define DT_X(Name, code, ...) Name = code,
  DT_REDUCE_OPS(DT_X)
#undef DT_X
};
enum class KernelOp : int32_t {
#define DT_X(Name, code, ...) Name = code,
  DT_KERNEL_OPS(DT_X)
#undef DT_X
};
enum class RandomDist { Uniform, Normal };

// Every op of a kind, in table order.
#define DT_X(Name, ...) UnaryOp::Name,
inline constexpr UnaryOp kUnaryOps[] = {DT_UNARY_OPS(DT_X)};
#undef DT_X
#define DT_X(Name, ...) BinaryOp::Name,
inline constexpr BinaryOp kBinaryOps[] = {DT_BINARY_OPS(DT_X)};
#undef DT_X
#define DT_X(Name, ...) ReduceOp::Name,
inline constexpr ReduceOp kReduceOps[] = {DT_REDUCE_OPS(DT_X)};
#undef DT_X

// PyTorch's name of the op ("relu"), which is also its C entry point's suffix.
constexpr const char* op_name(KernelOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, ...) case KernelOp::Name: return #c_name;
    DT_KERNEL_OPS(DT_X)
#undef DT_X
  }
  return "?";
}
constexpr const char* op_name(UnaryOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, ...) case UnaryOp::Name: return #c_name;
    DT_UNARY_OPS(DT_X)
#undef DT_X
  }
  return "?";
}
constexpr const char* op_name(BinaryOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, ...) case BinaryOp::Name: return #c_name;
    DT_BINARY_OPS(DT_X)
#undef DT_X
  }
  return "?";
}
constexpr const char* op_name(ReduceOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, ...) case ReduceOp::Name: return #c_name;
    DT_REDUCE_OPS(DT_X)
#undef DT_X
  }
  return "?";
}

// The name of the op with this code (any table), for messages.
constexpr const char* op_code_name(int32_t code) {
  switch (code) {
#define DT_X(Name, code, c_name, ...) case code: return #c_name;
    DT_KERNEL_OPS(DT_X)
    DT_UNARY_OPS(DT_X)
    DT_BINARY_OPS(DT_X)
    DT_REDUCE_OPS(DT_X)
#undef DT_X
  }
  return "an unknown op";
}
constexpr int32_t code_of(UnaryOp op) { return static_cast<int32_t>(op); }
constexpr int32_t code_of(BinaryOp op) { return static_cast<int32_t>(op); }
constexpr int32_t code_of(ReduceOp op) { return static_cast<int32_t>(op); }
constexpr int32_t code_of(KernelOp op) { return static_cast<int32_t>(op); }

constexpr UnaryRule unary_rule(UnaryOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, ...) case UnaryOp::Name: return UnaryRule::rule;
    DT_UNARY_OPS(DT_X)
#undef DT_X
  }
  return UnaryRule::FloatOnly;
}
constexpr OpCost unary_cost(UnaryOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, cost, ...) case UnaryOp::Name: return OpCost::cost;
    DT_UNARY_OPS(DT_X)
#undef DT_X
  }
  return OpCost::Costly;
}
constexpr BinaryRule binary_rule(BinaryOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, ...) case BinaryOp::Name: return BinaryRule::rule;
    DT_BINARY_OPS(DT_X)
#undef DT_X
  }
  return BinaryRule::Arith;
}
constexpr ReduceRule reduce_rule(ReduceOp op) {
  switch (op) {
#define DT_X(Name, code, c_name, rule, ...) case ReduceOp::Name: return ReduceRule::rule;
    DT_REDUCE_OPS(DT_X)
#undef DT_X
  }
  return ReduceRule::Value;
}

constexpr bool is_comparison(BinaryOp op) { return binary_rule(op) == BinaryRule::Compare; }

}  // namespace dt
