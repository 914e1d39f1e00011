// Reductions (sum, mean, max, min, argmax, argmin) with the CPU's semantics: NaN
// propagates through max/min, the first NaN or the first extreme wins arg*, integer
// sums wrap in int64. Short reductions over many outputs go one thread per output (in
// element order). Otherwise each output is reduced by one block (its threads stride over the
// reduced elements, then combine in shared memory); when there are few outputs and
// many elements, each output is split over several blocks whose partials a second
// kernel combines, so the whole GPU works on a full reduction.
#include <limits>
#include <type_traits>

#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/memory.h"
#include "ops/cast.h"
#include "core/op_kinds.h"

namespace dt::cudap {
namespace {

struct ReduceGeometry {
  int kn = 0, rn = 0;  // kept and reduced dims
  int64_t ksize[DT_MAX_DIMS], kin[DT_MAX_DIMS], kout[DT_MAX_DIMS];
  int64_t rsize[DT_MAX_DIMS], rstride[DT_MAX_DIMS];
  int64_t outputs = 1, count = 1;

  __device__ void output_offsets(int64_t o, int64_t* in_off, int64_t* out_off) const {
    int64_t a = 0, b = 0;
    for (int d = kn - 1; d >= 0; --d) {
      int64_t i = o % ksize[d];
      o /= ksize[d];
      a += i * kin[d];
      b += i * kout[d];
    }
    *in_off = a;
    *out_off = b;
  }
  // Offset of reduced element r (row-major over the reduced dims).
  __device__ int64_t reduced_offset(int64_t r) const {
    if (rn == 1) return r * rstride[0];
    int64_t off = 0;
    for (int d = rn - 1; d >= 0; --d) {
      off += (r % rsize[d]) * rstride[d];
      r /= rsize[d];
    }
    return off;
  }
};

ReduceGeometry reduce_geometry(const dtp_tensor& out, const dtp_tensor& in, uint32_t mask) {
  ReduceGeometry g;
  for (int d = 0; d < in.ndim; ++d) {
    const int64_t size = in.sizes[d], stride = in.strides[d];
    if (mask & (1u << d)) {
      g.count *= size;
      if (size == 1) continue;
      if (g.rn > 0 && g.rstride[g.rn - 1] == stride * size) {  // merge with the previous reduced dim
        g.rsize[g.rn - 1] *= size;
        g.rstride[g.rn - 1] = stride;
        continue;
      }
      g.rsize[g.rn] = size;
      g.rstride[g.rn] = stride;
      ++g.rn;
    } else {
      g.outputs *= size;
      if (size == 1) continue;
      g.ksize[g.kn] = size;
      g.kin[g.kn] = stride;
      g.kout[g.kn] = out.strides[d];
      ++g.kn;
    }
  }
  return g;
}

template <typename T>
using sum_acc_t = typename std::conditional<
    std::is_same<T, double>::value, double,
    typename std::conditional<is_float_like<T>, float, int64_t>::type>::type;

// Reducers: identity, load one element, combine two partials (associative, and
// order-independent where the result must not depend on the schedule), finish.
template <typename T>
struct SumReducer {
  using Acc = sum_acc_t<T>;
  bool mean;
  __device__ Acc identity() const { return Acc(0); }
  __device__ Acc load(T x, int64_t) const { return static_cast<Acc>(opmath_t<T>(x)); }
  __device__ Acc combine(Acc a, Acc b) const {
    if constexpr (std::is_integral<Acc>::value)
      return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else return a + b;
  }
  template <typename O>
  __device__ O finish(Acc a, int64_t count) const {
    if (mean) return cast_value<O>(static_cast<double>(a) / static_cast<double>(count));
    return cast_value<O>(a);
  }
};

template <typename T, bool Max>
struct ExtremeReducer {
  using M = opmath_t<T>;
  struct Acc {
    M v;
    bool nan, valid;
  };
  __device__ Acc identity() const { return Acc{M(0), false, false}; }
  __device__ Acc load(T x, int64_t) const {
    M v = M(x);
    return Acc{v, v != v, true};
  }
  __device__ Acc combine(Acc a, Acc b) const {
    if (!a.valid) return b;
    if (!b.valid) return a;
    Acc r;
    r.valid = true;
    r.nan = a.nan || b.nan;
    r.v = Max ? (b.v > a.v ? b.v : a.v) : (b.v < a.v ? b.v : a.v);
    return r;
  }
  template <typename O>
  __device__ O finish(Acc a, int64_t) const {
    if constexpr (is_float_like<T>) {
      if (a.nan) return cast_value<O>(T(std::numeric_limits<float>::quiet_NaN()));
    }
    return cast_value<O>(T(a.v));
  }
};

template <typename T, bool Max>
struct ArgReducer {
  using M = opmath_t<T>;
  struct Acc {
    M v;
    int64_t i;  // INT64_MAX: nothing yet
    bool nan;
  };
  __device__ Acc identity() const { return Acc{M(0), INT64_MAX, false}; }
  __device__ Acc load(T x, int64_t i) const {
    M v = M(x);
    return Acc{v, i, v != v};
  }
  // The first NaN wins; otherwise the extreme value, the lowest index among equals.
  __device__ Acc combine(Acc a, Acc b) const {
    if (a.i == INT64_MAX) return b;
    if (b.i == INT64_MAX) return a;
    if (a.nan != b.nan) return a.nan ? a : b;
    if (!a.nan) {
      if (Max ? a.v > b.v : a.v < b.v) return a;
      if (Max ? b.v > a.v : b.v < a.v) return b;
    }
    return a.i < b.i ? a : b;
  }
  template <typename O>
  __device__ O finish(Acc a, int64_t) const {
    return cast_value<O>(a.i == INT64_MAX ? int64_t{0} : a.i);
  }
};

// Stores r.finish<O>() at p for the output dtype chosen at run time.
template <typename R, typename Acc>
__device__ void store(const R& r, Acc a, int64_t count, void* base, int64_t off, int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
#define DT_STORE(D, C) \
  case DType::D: static_cast<C*>(base)[off] = r.template finish<C>(a, count); break;
    DT_STORE(Float32, float)
    DT_STORE(Float64, double)
    DT_STORE(Float16, float16)
    DT_STORE(BFloat16, bfloat16)
    DT_STORE(Int8, int8_t)
    DT_STORE(Int16, int16_t)
    DT_STORE(Int32, int32_t)
    DT_STORE(Int64, int64_t)
    DT_STORE(UInt8, uint8_t)
    DT_STORE(Bool, bool)
#undef DT_STORE
  }
}

// Combines blockDim.x partials in shared memory; thread 0 gets the result.
template <typename R>
__device__ typename R::Acc block_combine(const R& r, typename R::Acc mine, typename R::Acc* smem) {
  smem[threadIdx.x] = mine;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) smem[threadIdx.x] = r.combine(smem[threadIdx.x], smem[threadIdx.x + half]);
    __syncthreads();
  }
  typename R::Acc result = smem[0];
  __syncthreads();
  return result;
}

// Block b handles (output, chunk) pairs b, b + gridDim.x, ...; with chunks == 1 it
// stores the final value, otherwise a partial into partials[output * chunks + chunk].
template <typename T, typename R>
__global__ void reduce_blocks(ReduceGeometry g, const T* in, void* out, int32_t out_dtype, R r, int64_t chunks,
                              int64_t chunk_len, typename R::Acc* partials) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* smem = reinterpret_cast<typename R::Acc*>(smem_raw);
  for (int64_t item = blockIdx.x; item < g.outputs * chunks; item += gridDim.x) {
    const int64_t o = item / chunks, c = item % chunks;
    int64_t in_off, out_off;
    g.output_offsets(o, &in_off, &out_off);
    const int64_t begin = c * chunk_len;
    const int64_t end = begin + chunk_len < g.count ? begin + chunk_len : g.count;
    typename R::Acc acc = r.identity();
    for (int64_t k = begin + threadIdx.x; k < end; k += blockDim.x)
      acc = r.combine(acc, r.load(in[in_off + g.reduced_offset(k)], k));
    acc = block_combine(r, acc, smem);
    if (threadIdx.x == 0) {
      if (chunks == 1) store(r, acc, g.count, out, out_off, out_dtype);
      else partials[item] = acc;
    }
  }
}

// One thread per output, for short reductions (a pooling window, a small trailing dim)
// over many outputs: a block per output would leave most of its threads idle and pay a
// block's barriers for a handful of elements. The reduced elements are walked in order
// with an odometer over (at most two merged) reduced dims, so no division per element.
template <typename T, typename R>
__global__ void reduce_threads(ReduceGeometry g, const T* in, void* out, int32_t out_dtype, R r) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o < g.outputs;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t in_off, out_off;
    g.output_offsets(o, &in_off, &out_off);
    const T* p = in + in_off;
    typename R::Acc acc = r.identity();
    if (g.rn <= 1) {
      const int64_t step = g.rn == 1 ? g.rstride[0] : 0;
      for (int64_t k = 0; k < g.count; ++k) acc = r.combine(acc, r.load(p[k * step], k));
    } else if (g.rn == 2) {
      int64_t k = 0;
      for (int64_t a = 0; a < g.rsize[0]; ++a)
        for (int64_t b = 0; b < g.rsize[1]; ++b, ++k)
          acc = r.combine(acc, r.load(p[a * g.rstride[0] + b * g.rstride[1]], k));
    } else {
      for (int64_t k = 0; k < g.count; ++k) acc = r.combine(acc, r.load(p[g.reduced_offset(k)], k));
    }
    store(r, acc, g.count, out, out_off, out_dtype);
  }
}

// One block per output combines its chunks' partials in a fixed order.
template <typename R>
__global__ void combine_partials(ReduceGeometry g, void* out, int32_t out_dtype, R r, int64_t chunks,
                                 const typename R::Acc* partials) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  auto* smem = reinterpret_cast<typename R::Acc*>(smem_raw);
  for (int64_t o = blockIdx.x; o < g.outputs; o += gridDim.x) {
    int64_t in_off, out_off;
    g.output_offsets(o, &in_off, &out_off);
    typename R::Acc acc = r.identity();
    for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) acc = r.combine(acc, partials[o * chunks + c]);
    acc = block_combine(r, acc, smem);
    if (threadIdx.x == 0) store(r, acc, g.count, out, out_off, out_dtype);
  }
}

// Reductions of at most this many elements per output go one thread per output.
constexpr int64_t kThreadReduceMax = 64;

template <typename T, typename R>
void run(const dtp_tensor& out, const dtp_tensor& in, uint32_t mask, R r) {
  using Acc = typename R::Acc;
  const int dev = out.device;
  ReduceGeometry g = reduce_geometry(out, in, mask);
  if (g.outputs == 0) return;
  const T* x = static_cast<const T*>(in.data);
  // Short reductions over enough outputs to fill the GPU: a thread each.
  if (g.count <= kThreadReduceMax && g.outputs >= static_cast<int64_t>(multiprocessors(dev)) * 64) {
    reduce_threads<T, R><<<grid_for(dev, g.outputs), kThreads, 0, stream(dev)>>>(g, x, out.data, out.dtype, r);
    check_launch(dev, "reduce");
    return;
  }
  const int threads = g.count >= 1024 ? 256 : (g.count >= 128 ? 128 : 32);
  const size_t smem = sizeof(Acc) * static_cast<size_t>(threads);
  const int64_t target_blocks = static_cast<int64_t>(multiprocessors(dev)) * 8;
  // Split each output over several blocks when outputs alone cannot fill the GPU.
  int64_t chunks = 1;
  if (g.outputs < target_blocks && g.count >= 8192) {
    chunks = std::min<int64_t>((target_blocks + g.outputs - 1) / g.outputs, (g.count + 4095) / 4096);
  }
  const int64_t chunk_len = (g.count + chunks - 1) / chunks;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(g.outputs * chunks, 65535 * 16));
  if (chunks == 1) {
    reduce_blocks<T, R><<<blocks, threads, smem, stream(dev)>>>(g, x, out.data, out.dtype, r, 1, g.count, nullptr);
    check_launch(dev, "reduce");
    return;
  }
  Scratch partials(dev, sizeof(Acc) * static_cast<size_t>(g.outputs * chunks));
  Acc* p = static_cast<Acc*>(partials.get());
  reduce_blocks<T, R><<<blocks, threads, smem, stream(dev)>>>(g, x, out.data, out.dtype, r, chunks, chunk_len, p);
  check_launch(dev, "reduce");
  const int combine_threads = 128;
  combine_partials<R><<<static_cast<unsigned>(std::min<int64_t>(g.outputs, 65535)), combine_threads,
                        sizeof(Acc) * combine_threads, stream(dev)>>>(g, out.data, out.dtype, r, chunks, p);
  check_launch(dev, "reduce");
}

template <typename T>
void reduce_typed(ReduceOp op, const dtp_tensor& out, const dtp_tensor& in, uint32_t mask) {
  switch (op) {
    case ReduceOp::Sum: return run<T>(out, in, mask, SumReducer<T>{false});
    case ReduceOp::Mean: return run<T>(out, in, mask, SumReducer<T>{true});
    case ReduceOp::Max: return run<T>(out, in, mask, ExtremeReducer<T, true>{});
    case ReduceOp::Min: return run<T>(out, in, mask, ExtremeReducer<T, false>{});
    case ReduceOp::ArgMax: return run<T>(out, in, mask, ArgReducer<T, true>{});
    case ReduceOp::ArgMin: return run<T>(out, in, mask, ArgReducer<T, false>{});
  }
}

}  // namespace

void reduce(int32_t op, const dtp_tensor& out, const dtp_tensor& in, uint32_t mask) {
  dispatch(in.dtype, [&](auto tag) { reduce_typed<decltype(tag)>(static_cast<ReduceOp>(op), out, in, mask); });
}

}  // namespace dt::cudap
