// Sorting the rows of a contiguous [rows, n] tensor (torch.sort along the last dim; the
// front end moves any other dim there), keeping the first k of each (topk; k = n for a
// sort), with CUB's segmented radix sort: each element becomes its sort key
// (ops/sort_keys.h, shared with the CPU), the keys are sorted with their positions as
// payload (a radix sort is stable, so ties keep their positions in order:
// torch.sort(stable=True)), and the values are read back through the positions. A topk
// sorts whole rows (O(n) passes, not a selection). CUB is instantiated for the two key
// widths only, not for every dtype. CUB counts elements in int: rows are sorted in
// chunks of fewer than 2^31 elements.
#include <climits>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "cuda/kernels.h"
#include "cuda/loops.cuh"
#include "cuda/memory.h"
#include "ops/sort_keys.h"

namespace dt::cudap {
namespace {

// keys_out and pos_out: [rows, n] sorted keys and their positions within the row.
template <typename K>
void sort_keys(int dev, const K* keys, K* keys_out, int64_t* pos_out, int64_t rows, int64_t n, int bits) {
  if (n > INT_MAX) raise(DT_ERR_NOT_SUPPORTED, "sort: rows longer than 2^31 - 1 elements are not supported on CUDA");
  const int64_t chunk = std::min<int64_t>(rows, INT_MAX / n);
  Scratch offsets(dev, static_cast<size_t>(chunk + 1) * sizeof(int));
  Scratch positions(dev, static_cast<size_t>(chunk * n) * sizeof(int64_t));
  int* off = static_cast<int*>(offsets.get());
  int64_t* pos = static_cast<int64_t*>(positions.get());
  launch(dev, chunk + 1, "sort (offsets)", [=] __device__(int64_t i) { off[i] = static_cast<int>(i * n); });
  launch(dev, chunk * n, "sort (positions)", [=] __device__(int64_t i) { pos[i] = i % n; });
  size_t temp_bytes = 0;
  check(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp_bytes, keys, keys_out, pos, pos_out,
                                                 static_cast<int>(chunk * n), static_cast<int>(chunk), off, off + 1, 0,
                                                 bits, stream(dev)),
        dev, "sort (CUB temporary storage size)");
  // At least one byte: CUB reads a null temporary storage as a size query, not a sort.
  Scratch temp(dev, std::max<size_t>(temp_bytes, 1));
  for (int64_t r = 0; r < rows; r += chunk) {
    const int64_t m = std::min(chunk, rows - r);
    check(cub::DeviceSegmentedRadixSort::SortPairs(temp.get(), temp_bytes, keys + r * n, keys_out + r * n, pos,
                                                   pos_out + r * n, static_cast<int>(m * n), static_cast<int>(m), off,
                                                   off + 1, 0, bits, stream(dev)),
          dev, "sort (CUB segmented radix sort)");
  }
}

template <typename T>
void sort_typed(const dtp_tensor& values, const dtp_tensor& indices, const dtp_tensor& in, bool descending) {
  using K = sortkey::key_t<T>;
  const int dev = in.device;
  const int64_t n = in.sizes[in.ndim - 1], k = values.sizes[values.ndim - 1];
  if (n == 0 || k == 0 || in.numel == 0) return;
  const int64_t rows = in.numel / n, total = in.numel;
  const T* x = static_cast<const T*>(in.data);
  T* v = static_cast<T*>(values.data);
  int64_t* ix = static_cast<int64_t*>(indices.data);
  Scratch keys(dev, static_cast<size_t>(total) * sizeof(K)), sorted(dev, static_cast<size_t>(total) * sizeof(K));
  // A topk's positions are sorted in full first, then its k columns taken; a sort writes
  // them straight into the indices (no scratch: zero bytes allocate nothing).
  Scratch all_positions(dev, k < n ? static_cast<size_t>(total) * sizeof(int64_t) : 0);
  int64_t* pos = k < n ? static_cast<int64_t*>(all_positions.get()) : ix;
  K* key = static_cast<K*>(keys.get());
  launch(dev, total, "sort (keys)", [=] __device__(int64_t i) { key[i] = sortkey::encode(x[i], descending); });
  sort_keys<K>(dev, key, static_cast<K*>(sorted.get()), pos, rows, n, sortkey::key_bits<T>());
  launch(dev, rows * k, "sort (values)", [=] __device__(int64_t i) {
    const int64_t row = i / k, p = pos[row * n + i % k];
    ix[i] = p;
    v[i] = x[row * n + p];
  });
}

}  // namespace

void sort(const dtp_tensor& values, const dtp_tensor& indices, const dtp_tensor& in, bool descending) {
  dispatch(in.dtype, [&](auto tag) { sort_typed<decltype(tag)>(values, indices, in, descending); });
}

}  // namespace dt::cudap
