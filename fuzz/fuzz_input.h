// fuzz_input.h — what the C++ fuzz targets (fuzz_nn, fuzz_modules, fuzz_autograd) share:
// the Input that draws values from libFuzzer's bytes (small values and int64's extremes
// alike), and the checks of the C ABI's properties on one call's outcome. Define FUZZ_NAME and include
// fuzz_require.h first.
#ifndef DEVTENSOR_FUZZ_INPUT_H
#define DEVTENSOR_FUZZ_INPUT_H
#include <devtensor.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

namespace fuzz {

// An out-parameter value no call may write on failure.
inline void* const kUntouched = reinterpret_cast<void*>(uintptr_t{0xdead0020});
constexpr size_t kMaxRead = size_t{1} << 16;  // elements read back from one result

inline const char* g_op = "";  // the call under test, for messages
inline size_t g_live_at_start = 0;  // dt_live_handle_count() before the first input
inline bool g_trace = false;   // print every call's outcome (to read a crash input)

class Input {
 public:
  Input(const uint8_t* data, size_t size) : in_(data, size) {}

  bool more() { return in_.remaining_bytes() > 0; }
  bool rarely(int one_in = 16) { return in_.ConsumeIntegralInRange<int>(0, one_in - 1) == 0; }
  int pick(int n) { return in_.ConsumeIntegralInRange<int>(0, n - 1); }
  int64_t small(int64_t lo, int64_t hi) { return in_.ConsumeIntegralInRange<int64_t>(lo, hi); }

  // A geometry value: usually small, sometimes an extreme: 0, negative, or at least
  // 2^62 - 1. Nothing between: any mix of these (a padding of 2^62 - 1 over a stride of
  // 3, a stride of 2^62 + 1 over that padding) asks for sizes that overflow int64 or
  // exceed ASan's largest allocation, which must fail cleanly, or for small ones. A value
  // like 2^32 would ask for outputs of 2^31 elements and more (a padding of 2^62 over a
  // stride of 2^32), which the library rightly tries to allocate and libFuzzer reports as
  // a crash (one malloc over -malloc_limit_mb).
  int64_t geometry(int64_t lo = 0, int64_t hi = 4) {
    if (!rarely(6)) return small(lo, hi);
    static const int64_t extremes[] = {0,
                                       -1,
                                       (int64_t{1} << 62) + 1,
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max() / 2,
                                       -(int64_t{1} << 40)};
    return extremes[pick(7)];
  }
  // A pair of geometry values, or (rarely) NULL for the default.
  const int64_t* pair(int64_t (&p)[2], int64_t lo = 0, int64_t hi = 4) {
    if (rarely(5)) return nullptr;
    p[0] = geometry(lo, hi);
    p[1] = rarely(3) ? geometry(lo, hi) : p[0];
    return p;
  }
  double real() {
    switch (pick(10)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return 1e300;
      case 4: return -1.0;
      case 5: return 0.0;
      case 6: return in_.ConsumeFloatingPoint<double>();
      default: return in_.ConsumeFloatingPointInRange<double>(1e-6, 2.0);
    }
  }
  // A 0/1 flag, rarely something else.
  int32_t flag() { return rarely(24) ? static_cast<int32_t>(small(-1, 7)) : static_cast<int32_t>(small(0, 1)); }
  std::vector<int64_t> shape(size_t min_ndim, size_t max_ndim, int64_t max_dim = 6) {
    std::vector<int64_t> s(in_.ConsumeIntegralInRange<size_t>(min_ndim, max_ndim));
    for (auto& d : s) d = small(rarely(8) ? 0 : 1, max_dim);
    return s;
  }
  // A floating dtype, rarely another.
  dt_dtype dtype() {
    if (rarely(12)) {
      static const dt_dtype others[] = {DT_FLOAT16, DT_BFLOAT16, DT_INT32, DT_INT64, DT_BOOL, DT_UINT8};
      return others[pick(6)];
    }
    return rarely(3) ? DT_FLOAT64 : DT_FLOAT32;
  }

 private:
  FuzzedDataProvider in_;
};

// The outcome of g_op: true on success; on failure the status must be documented, not
// DT_ERR_INTERNAL, and come with a message.
inline bool ok(dt_status st) {
  if (g_trace)
    fprintf(stderr, "%-34s %s%s%s\n", g_op, st == DT_OK ? "ok" : dt_status_string(st), st == DT_OK ? "" : ": ",
            st == DT_OK ? "" : dt_last_error_message());
  if (st == DT_OK) return true;
  REQUIRE(st >= DT_ERR_INVALID_ARGUMENT && st <= DT_ERR_DISTRIBUTED, "%s: status %d", g_op, (int)st);
  REQUIRE(st != DT_ERR_INTERNAL, "%s: DT_ERR_INTERNAL", g_op);
  const char* msg = dt_last_error_message();
  REQUIRE(msg != nullptr && msg[0] != '\0', "%s: status %d with an empty message", g_op, (int)st);
  return false;
}

// t's metadata is consistent and every element is readable (when there are at most
// kMaxRead); returns its bytes (empty when not read).
inline std::vector<unsigned char> check_tensor(const dt_tensor* t) {
  size_t ndim = 0, numel = 0, nbytes = 0, esize = 0;
  int64_t shape[DT_MAX_DIMS] = {};
  dt_dtype dt = 0;
  REQUIRE(dt_tensor_ndim(t, &ndim) == DT_OK && ndim <= DT_MAX_DIMS, "%s: ndim", g_op);
  REQUIRE(dt_tensor_shape(t, shape, DT_MAX_DIMS) == DT_OK, "%s: shape", g_op);
  REQUIRE(dt_tensor_numel(t, &numel) == DT_OK && dt_tensor_nbytes(t, &nbytes) == DT_OK, "%s: numel", g_op);
  REQUIRE(dt_tensor_dtype(t, &dt) == DT_OK && dt_dtype_size(dt, &esize) == DT_OK, "%s: dtype", g_op);
  size_t n = 1;
  for (size_t d = 0; d < ndim; ++d) {
    REQUIRE(shape[d] >= 0, "%s: dim %zu is %lld", g_op, d, (long long)shape[d]);
    n *= static_cast<size_t>(shape[d]);
  }
  REQUIRE(n == numel && nbytes == numel * esize, "%s: numel %zu, shape product %zu, nbytes %zu", g_op, numel, n,
          nbytes);
  if (numel > kMaxRead) return {};
  std::vector<unsigned char> host(nbytes ? nbytes : 1);
  REQUIRE(dt_tensor_copy_to_host(t, host.data(), nbytes) == DT_OK, "%s: copy_to_host", g_op);
  host.resize(nbytes);
  return host;
}

// With tracing on, a pair argument (kernel, stride, ...) or NULL.
inline void trace_pair(const char* name, const int64_t* p) {
  if (!g_trace) return;
  if (p == nullptr) fprintf(stderr, "  %s NULL\n", name);
  else fprintf(stderr, "  %s (%lld, %lld)\n", name, (long long)p[0], (long long)p[1]);
}

// At the end of an input, once it released everything: no handle is left.
inline void require_no_handle_left() {
  g_op = "end of input";
  REQUIRE(dt_live_handle_count() == g_live_at_start, "live handles %zu, at start %zu", dt_live_handle_count(),
          g_live_at_start);
}

}  // namespace fuzz

#endif
