// Sorting the rows of a contiguous [rows, n] tensor (torch.sort along the last dim; the
// front end moves any other dim there), keeping the first k of each (topk; k = n for a
// sort): each row's elements become sort keys (ops/sort_keys.h, shared with CUDA), the
// (key, position) pairs are sorted, which is torch.sort's stable order, and the values
// are read back through the positions. A topk of a few elements from a long row selects
// instead (select_smallest: one pass over the keys, a block at a time, against the k-th
// best so far); a larger one sorts only its k (std::partial_sort: O(n log k)). Rows are
// split over threads; the pair sort is compiled once per key width, not per dtype.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/loops.h"
#include "cpu/vec_math.h"
#include "ops/sort_keys.h"

namespace dt::cpu {
namespace {

template <typename K>
struct KeyPos {
  K key;
  int64_t pos;
  bool operator<(const KeyPos& o) const { return key != o.key ? key < o.key : pos < o.pos; }
};

// The k smallest pairs, in order, at the front of v.
template <typename K>
void sort_pairs(std::vector<KeyPos<K>>& v, int64_t k) {
  if (k < static_cast<int64_t>(v.size()))
    std::partial_sort(v.begin(), v.begin() + k, v.end());
  else
    std::sort(v.begin(), v.end());
}

// The k smallest (key, position) pairs of a row, in order, at the front of best (k
// entries), for k much smaller than n: a max-heap of the best k so far, the worst on top.
// Keys are made a block at a time and a block is looked at only when its smallest key
// beats the worst kept (positions only grow, so an equal key never does): after the
// first blocks almost none does, and the pass runs at the speed of making the keys.
template <typename T, typename K = sortkey::key_t<T>>
void select_smallest(const T* row, int64_t n, int64_t k, bool descending, KeyPos<K>* best) {
  constexpr int64_t kBlock = 256;
  K keys[kBlock];
  int64_t kept = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    K smallest = K(~K(0));
    if constexpr (std::is_same<T, float>::value) {
      smallest = sort_keys_f32(row + b, m, descending, keys);  // vectorised (cpu/vec_math.h)
    } else {
      for (int64_t j = 0; j < m; ++j) {
        keys[j] = sortkey::encode(row[b + j], descending);
        smallest = std::min(smallest, keys[j]);
      }
    }
    if (kept == k && !(smallest < best[0].key)) continue;
    for (int64_t j = 0; j < m; ++j) {
      if (kept < k) {
        best[kept++] = {keys[j], b + j};
        std::push_heap(best, best + kept);
      } else if (keys[j] < best[0].key) {
        std::pop_heap(best, best + k);
        best[k - 1] = {keys[j], b + j};
        std::push_heap(best, best + k);
      }
    }
  }
  std::sort_heap(best, best + k);
}

// Selecting beats partial_sort when the heap stays small next to the row.
bool selects(int64_t k, int64_t n) { return k * 16 <= n; }

template <typename T>
void sort_rows(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending) {
  using K = sortkey::key_t<T>;
  const int64_t n = in.size(in.ndim() - 1), k = values.size(values.ndim() - 1);
  if (n == 0 || k == 0) return;
  const int64_t rows = in.numel() / n;
  const T* x = in.data_as<T>();
  T* v = values.data_as<T>();
  int64_t* ix = indices.data_as<int64_t>();
  parallel_for(rows, std::max<int64_t>(1, kGrainCostly / n), [&](int64_t b, int64_t e) {
    std::vector<KeyPos<K>> pairs(static_cast<size_t>(selects(k, n) ? k : n));
    for (int64_t r = b; r < e; ++r) {
      const T* row = x + r * n;
      if (selects(k, n)) {
        select_smallest<T>(row, n, k, descending, pairs.data());
      } else {
        for (int64_t j = 0; j < n; ++j) pairs[j] = {sortkey::encode(row[j], descending), j};
        sort_pairs(pairs, k);
      }
      for (int64_t j = 0; j < k; ++j) {
        ix[r * k + j] = pairs[j].pos;
        v[r * k + j] = row[pairs[j].pos];
      }
    }
  });
}

}  // namespace

void CpuBackend::sort(const Tensor& values, const Tensor& indices, const Tensor& in, bool descending) {
  dispatch_dtype(in.dtype(), [&](auto tag) { sort_rows<decltype(tag)>(values, indices, in, descending); });
}

}  // namespace dt::cpu
