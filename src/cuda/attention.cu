// Fused scaled dot-product attention (DTP_HOOK_ATTENTION_FORWARD) for float32 and a head
// size of 64, the flash-attention scheme on FMA units: each block takes 64 query rows and
// walks the keys 64 at a time, keeping a running row maximum and sum (the online softmax)
// and the output rows in registers, so the [L, S] scores never reach memory. The composed
// path (two cuBLAS products around a softmax) writes and reads them: for [8, 8, 1024, 64]
// that is 268 MB each way, and it took 705 us on an H100 against PyTorch's fused kernel's
// 550 (bench/gpu/NOTES.md).
//
// Not yet run on a GPU: until a lent one has checked it against the reference cases
// (script/gpu-session host and tests), the plugin offers it only with
// DEVTENSOR_FUSED_ATTENTION=1; otherwise the core composes the ops as before.
#include <climits>
#include <cmath>
#include <cstdint>

#include "cuda/kernels.h"
#include "cuda/launch.cuh"
#include "cuda/runtime.h"

namespace dt::cudap {
namespace {

constexpr int kRows = 64;      // query rows per block
constexpr int kKeys = 64;      // keys per tile
constexpr int kHead = 64;      // the head size E the kernel takes
constexpr int kThreads = 256;  // 16 x 16: thread (ty, tx) owns rows ty*4.., keys (or output columns) tx*4..

struct AttentionDims {
  int64_t L, S;      // queries and keys per head
  int64_t row_tiles;  // blocks per head: ceil(L / kRows)
  float scale_log2;  // scale * log2(e): the softmax runs in base 2 on pre-scaled queries
  int causal;        // 1: query l sees keys 0..l
};

// The probabilities are stored transposed, pT[key][row], in the key tile's buffer; rows
// are swizzled in groups of four by the key, so that the 32 threads of a warp storing
// their four keys' columns spread over the banks (each row group stays a 16-byte float4
// for the reads, which all take one key at a time).
__device__ __forceinline__ int row_swizzle(int key) { return ((key >> 2) & 7) << 2; }

// acc[i][j] += a[i] * b[j]: one step of a thread's 4 x 4 tile, for both products.
__device__ __forceinline__ void outer_fma(float (&acc)[4][4], float4 a, float4 b) {
  const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
}

__global__ void __launch_bounds__(kThreads, 2)
    attention_f32_e64(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                      float* __restrict__ out, AttentionDims d) {
  __shared__ __align__(16) float q_t[kHead][kRows];  // q_t[e][r] = q[row0 + r][e] * scale * log2(e)
  __shared__ __align__(16) float kp[kHead * kKeys];  // k_t[e][c] = k[key0 + c][e]; then pT (row_swizzle)
  __shared__ __align__(16) float vs[kKeys][kHead];   // vs[c][e] = v[key0 + c][e]

  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int64_t n = blockIdx.x / d.row_tiles;
  // The heaviest tiles first: with a causal mask, the last rows see the most keys.
  const int64_t tile = d.row_tiles - 1 - static_cast<int64_t>(blockIdx.x % d.row_tiles);
  const int64_t row0 = tile * kRows;
  const float* qn = q + n * d.L * kHead;
  const float* kn = k + n * d.S * kHead;
  const float* vn = v + n * d.S * kHead;
  const float4 zero4 = make_float4(0.f, 0.f, 0.f, 0.f);

  // The query tile, transposed and pre-scaled (rows past L are zeros, never written out).
  // Item f is row f % 64's float4 number f / 64: a warp stores 32 rows of one column, one
  // per bank.
  for (int f = tid; f < kRows * kHead / 4; f += kThreads) {
    const int r = f & (kRows - 1), e4 = f / kRows;
    const float4 x = row0 + r < d.L ? *reinterpret_cast<const float4*>(qn + (row0 + r) * kHead + e4 * 4) : zero4;
    q_t[e4 * 4 + 0][r] = x.x * d.scale_log2;
    q_t[e4 * 4 + 1][r] = x.y * d.scale_log2;
    q_t[e4 * 4 + 2][r] = x.z * d.scale_log2;
    q_t[e4 * 4 + 3][r] = x.w * d.scale_log2;
  }

  float o[4][4], m[4], l[4];  // output rows (unnormalised), running max (base 2) and sum
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY;
    l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j) o[i][j] = 0.f;
  }

  const int64_t keys_end = d.causal ? (d.S < row0 + kRows ? d.S : row0 + kRows) : d.S;
  for (int64_t key0 = 0; key0 < keys_end; key0 += kKeys) {
    __syncthreads();  // the previous tile's pT and vs are read (and, first, q_t is written)
    for (int f = tid; f < kKeys * kHead / 4; f += kThreads) {
      const int c = f & (kKeys - 1), e4 = f / kKeys;
      const float4 x = key0 + c < d.S ? *reinterpret_cast<const float4*>(kn + (key0 + c) * kHead + e4 * 4) : zero4;
      kp[(e4 * 4 + 0) * kKeys + c] = x.x;
      kp[(e4 * 4 + 1) * kKeys + c] = x.y;
      kp[(e4 * 4 + 2) * kKeys + c] = x.z;
      kp[(e4 * 4 + 3) * kKeys + c] = x.w;
    }
    for (int f = tid; f < kKeys * kHead / 4; f += kThreads) {
      const int c = f / (kHead / 4), e4 = f % (kHead / 4);
      // Keys past S get zero values: their weight is 0, and 0 * garbage could be NaN.
      *reinterpret_cast<float4*>(&vs[c][e4 * 4]) =
          key0 + c < d.S ? *reinterpret_cast<const float4*>(vn + (key0 + c) * kHead + e4 * 4) : zero4;
    }
    __syncthreads();

    // Scores (base 2) of rows ty*4.. against keys tx*4..
    float s[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) s[i][j] = 0.f;
#pragma unroll 16
    for (int e = 0; e < kHead; ++e) {
      outer_fma(s, *reinterpret_cast<const float4*>(&q_t[e][ty * 4]),
                *reinterpret_cast<const float4*>(&kp[e * kKeys + tx * 4]));
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t key = key0 + tx * 4 + j, row = row0 + ty * 4 + i;
        if (key >= d.S || (d.causal && key > row)) s[i][j] = -INFINITY;
      }

    // The online softmax: a row's 64 keys lie with the 16 threads of its half-warp.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float top = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, off));
      const float m_new = fmaxf(m[i], top);
      const float base = m_new == -INFINITY ? 0.f : m_new;  // a row with no key yet: keep exp2 finite
      const float rescale = exp2f(m[i] - base);             // 0 while m[i] is -inf
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = exp2f(s[i][j] - base);
        sum += s[i][j];
      }
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
      l[i] = l[i] * rescale + sum;
      m[i] = m_new;
#pragma unroll
      for (int j = 0; j < 4; ++j) o[i][j] *= rescale;
    }

    __syncthreads();  // every thread is done with k_t: its buffer takes pT
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = tx * 4 + j;
      *reinterpret_cast<float4*>(&kp[c * kRows + ((ty * 4) ^ row_swizzle(c))]) =
          make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
    }
    __syncthreads();

    // o += p v for rows ty*4.. and output columns tx*4..
#pragma unroll 16
    for (int c = 0; c < kKeys; ++c) {
      outer_fma(o, *reinterpret_cast<const float4*>(&kp[c * kRows + ((ty * 4) ^ row_swizzle(c))]),
                *reinterpret_cast<const float4*>(&vs[c][tx * 4]));
    }
  }

#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t row = row0 + ty * 4 + i;
    if (row >= d.L) continue;
    const float inv = 1.f / l[i];
    *reinterpret_cast<float4*>(out + (n * d.L + row) * kHead + tx * 4) =
        make_float4(o[i][0] * inv, o[i][1] * inv, o[i][2] * inv, o[i][3] * inv);
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

bool fused_attention_offered() {
  static const bool on = env_equals("DEVTENSOR_FUSED_ATTENTION", "1");
  return on;
}

void attention_forward(const dtp_op_args& a) {
  const dtp_tensor &out = *a.t[0], &q = *a.t[1], &k = *a.t[2], &v = *a.t[3];
  // The ABI's pass brings contiguous [N, L, E], [N, S, E], [N, S, Ev] of one dtype, fresh out.
  if (q.dtype != DT_FLOAT32) raise(DT_ERR_NOT_SUPPORTED, "fused attention: float32 only");
  if (q.sizes[2] != kHead || v.sizes[2] != kHead)
    raise(DT_ERR_NOT_SUPPORTED, "fused attention: a head size of 64 (query and value) only");
  if (!aligned16(q.data) || !aligned16(k.data) || !aligned16(v.data) || !aligned16(out.data))
    raise(DT_ERR_NOT_SUPPORTED, "fused attention: operands not 16-byte aligned");
  const int64_t N = q.sizes[0], L = q.sizes[1], S = k.sizes[1];
  AttentionDims d;
  d.L = L;
  d.S = S;
  d.row_tiles = (L + kRows - 1) / kRows;
  d.scale_log2 = static_cast<float>(a.f[0] * 1.4426950408889634);  // log2(e)
  d.causal = a.i[0] != 0 ? 1 : 0;
  if (N <= 0 || d.row_tiles <= 0 || S <= 0) return;
  if (N > INT_MAX / d.row_tiles) raise(DT_ERR_NOT_SUPPORTED, "fused attention: more blocks than one launch takes");
  const int dev = out.device;
  launch_kernel<&attention_f32_e64>(dev, static_cast<unsigned>(N * d.row_tiles), kThreads, "attention",
                                    static_cast<const float*>(q.data), static_cast<const float*>(k.data),
                                    static_cast<const float*>(v.data), static_cast<float*>(out.data), d);
}

}  // namespace dt::cudap
