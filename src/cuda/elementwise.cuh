// Elementwise launchers shared by the op families: a vectorised path for operands that
// walk memory in order from 16-byte-aligned addresses (16-byte loads and stores, a
// broadcast scalar read once) and a strided path for everything else. Contiguous but
// unaligned operands (views at an odd offset) take the strided path, which for one merged
// dim costs a multiply per element: one kernel fewer per op and dtype to compile, where
// an unvectorised copy of the linear kernel gained nothing. `f` is a __device__ functor
// on element values.
#pragma once
#include <cstdint>

#include "cuda/launch.cuh"
#include "cuda/loops.cuh"

namespace dt::cudap {

template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <int V, typename T>
__device__ __forceinline__ void load(const T* p, int64_t i, bool scalar, T (&r)[V]) {
  if (scalar) {
    T s = p[0];
#pragma unroll
    for (int j = 0; j < V; ++j) r[j] = s;
  } else {
    Pack<T, V> pk = *reinterpret_cast<const Pack<T, V>*>(p + i);
#pragma unroll
    for (int j = 0; j < V; ++j) r[j] = pk.v[j];
  }
}

template <int V, typename O, typename A, typename F>
__global__ void unary_linear_kernel(int64_t n, O* o, const A* a, bool a_scalar, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t v = first; v < n / V; v += step) {
    A x[V];
    load<V>(a, v * V, a_scalar, x);
    Pack<O, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = f(x[j]);
    *reinterpret_cast<Pack<O, V>*>(o + v * V) = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += step) o[i] = f(a[a_scalar ? 0 : i]);
}

template <int V, typename O, typename A, typename B, typename F>
__global__ void binary_linear_kernel(int64_t n, O* o, const A* a, bool a_scalar, const B* b, bool b_scalar, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  for (int64_t v = first; v < n / V; v += step) {
    A x[V];
    B y[V];
    load<V>(a, v * V, a_scalar, x);
    load<V>(b, v * V, b_scalar, y);
    Pack<O, V> r;
#pragma unroll
    for (int j = 0; j < V; ++j) r.v[j] = f(x[j], y[j]);
    *reinterpret_cast<Pack<O, V>*>(o + v * V) = r;
  }
  for (int64_t i = n / V * V + first; i < n; i += step) o[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
}

inline bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// Elements per 16-byte access for the widest of the types.
template <typename... Ts>
constexpr int vector_width() {
  constexpr size_t widest = std::max({sizeof(Ts)...});
  return static_cast<int>(16 / widest) > 0 ? static_cast<int>(16 / widest) : 1;
}

// out = f(a), out's shape; a broadcasts.
template <typename O, typename A, typename F>
void unary_op(const dtp_tensor& out, const dtp_tensor& a, const char* name, F f) {
  const int dev = out.device;
  const dtp_tensor* ops[2] = {&out, &a};
  Geometry<2> g = make_geometry<2>(ops);
  O* o = static_cast<O*>(out.data);
  const A* x = static_cast<const A*>(a.data);
  const bool xs = scalar_operand(g, 1);
  constexpr int V = vector_width<O, A>();
  if (linear_operand(g, 0) && (xs || linear_operand(g, 1)) && aligned(o, V * sizeof(O)) &&
      (xs || aligned(x, V * sizeof(A)))) {
    const unsigned blocks = grid_for(dev, (g.numel + V - 1) / V);
    launch_kernel<&unary_linear_kernel<V, O, A, F>>(dev, blocks, kThreads, name, g.numel, o, x, xs, f);
    return;
  }
  launch(dev, g.numel, name, [=] __device__(int64_t i) {
    int64_t off[2];
    g.offsets(i, off);
    o[off[0]] = f(x[off[1]]);
  });
}

// out = f(a, b), out's shape; a and b broadcast.
template <typename O, typename A, typename B, typename F>
void binary_op(const dtp_tensor& out, const dtp_tensor& a, const dtp_tensor& b, const char* name, F f) {
  const int dev = out.device;
  const dtp_tensor* ops[3] = {&out, &a, &b};
  Geometry<3> g = make_geometry<3>(ops);
  O* o = static_cast<O*>(out.data);
  const A* x = static_cast<const A*>(a.data);
  const B* y = static_cast<const B*>(b.data);
  const bool xs = scalar_operand(g, 1), ys = scalar_operand(g, 2);
  constexpr int V = vector_width<O, A, B>();
  if (linear_operand(g, 0) && (xs || linear_operand(g, 1)) && (ys || linear_operand(g, 2)) &&
      aligned(o, V * sizeof(O)) && (xs || aligned(x, V * sizeof(A))) && (ys || aligned(y, V * sizeof(B)))) {
    const unsigned blocks = grid_for(dev, (g.numel + V - 1) / V);
    launch_kernel<&binary_linear_kernel<V, O, A, B, F>>(dev, blocks, kThreads, name, g.numel, o, x, xs, y, ys, f);
    return;
  }
  launch(dev, g.numel, name, [=] __device__(int64_t i) {
    int64_t off[3];
    g.offsets(i, off);
    o[off[0]] = f(x[off[1]], y[off[2]]);
  });
}

}  // namespace dt::cudap
