// fuzz_ops.cpp — libFuzzer target: an op sequencer that turns the input bytes into calls
// of the public C API on small random shapes, dtypes and devices.
//
// Each input is a program of up to kMaxOps steps over a pool of at most kPool live
// handles: constructors (every one, from_data/from_blob included), like/new_*, views,
// elementwise ops (tensor, scalar, in-place), comparisons, where, reductions, softmax,
// cumsum, sort, argsort, topk,
// matmul, cat/stack/chunk/split, index_select/gather, to() and the host copies, item,
// printing, retain/release, device queries and the process defaults. Devices are cpu:0,
// cpu:1 (DEVTENSOR_CPU_DEVICES=2, set before the first call), the default device and
// cuda:0, plus rarely a device that does not exist; arguments are rarely NULL, a released
// handle or a foreign pointer. The properties checked, any violation aborting with a
// message (a crash for libFuzzer):
//   - a call whose arguments are known to be invalid (cuda:0 without a usable CUDA
//     backend, cpu:2, an unknown dtype, a NULL/stale/foreign handle, ...) fails;
//   - every failure is a documented nonzero status other than DT_ERR_INTERNAL, with a
//     non-empty dt_last_error_message(), and leaves the out-parameter untouched;
//   - every tensor made is self-consistent (ndim, shape, numel, nbytes, dtype, device) and
//     its elements can be read both through dt_tensor_copy_to_host and by walking its
//     strides from dt_tensor_data_ptr (ASan sees any view that points outside its
//     storage); bool results hold only 0 and 1;
//   - at the end of the input, after every handle is released, dt_live_handle_count() is
//     what it was at the start, and every dt_tensor_from_blob buffer's deleter has run
//     exactly once. (ASan's leak check runs after each input too.)
// Sizes stay small (results with more than kPoolMaxNumel elements are released at once),
// so that an execution takes microseconds. Uninitialised memory (dt_tensor_empty) is
// filled before use, so runs are reproducible, and bool memory written by the caller
// holds only 0 and 1, as the caller's side of the contract requires.
#include <devtensor.h>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

// The op table (pure preprocessor): the selectors below cover every row, so a new op is
// fuzzed without editing this file.
#include "../src/core/op_table.h"

namespace {

// Open, reported devtensor bugs the sequencer steps around, so that fuzzing can go on past
// them, are listed here as flags (each with its regression input under
// fuzz/regressions/fuzz_ops/); a fixed bug's flag is deleted, and its input then checks
// the fix on every run. UBSan reports of open bugs go in fuzz/ubsan-ignorelist.txt.
// Fixed so far: int16 multiplication overflow (int16-mul-overflow), the endless loop on a
// huge allocation (huge-alloc-hang), unchecked size arithmetic in views, matmul and cat
// (expand-numel-overflow, matmul-numel-overflow, cat-size-overflow). None is open.

constexpr int kMaxOps = 48;

// The entry points the op table makes, in table order (core/op_table.h).
using BinaryFn = dt_status (*)(const dt_tensor*, const dt_tensor*, dt_tensor**);
using ScalarFn = dt_status (*)(const dt_tensor*, double, dt_tensor**);
using InplaceFn = dt_status (*)(dt_tensor*, const dt_tensor*);
using InplaceScalarFn = dt_status (*)(dt_tensor*, double);
using UnaryFn = dt_status (*)(const dt_tensor*, dt_tensor**);
using ReduceFn = dt_status (*)(const dt_tensor*, const int64_t*, size_t, int32_t, dt_tensor**);
#define COMMA ,
const std::vector<BinaryFn>& binary_fns() {
#define X(Name, code, c_name, ...) dt_##c_name,
  static const std::vector<BinaryFn> fns{DT_BINARY_OPS(X)};
#undef X
  return fns;
}
const std::vector<ScalarFn>& scalar_fns() {
#define X(Name, code, c_name, ...) dt_##c_name##_scalar,
  static const std::vector<ScalarFn> fns{DT_BINARY_OPS(X)};
#undef X
  return fns;
}
const std::vector<InplaceFn>& inplace_fns() {
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(dt_##c_name##_ COMMA)
  static const std::vector<InplaceFn> fns{DT_BINARY_OPS(X)};
#undef X
  return fns;
}
const std::vector<InplaceScalarFn>& inplace_scalar_fns() {
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(dt_##c_name##_scalar_ COMMA)
  static const std::vector<InplaceScalarFn> fns{DT_BINARY_OPS(X)};
#undef X
  return fns;
}
const std::vector<UnaryFn>& unary_fns() {
#define X(Name, code, c_name, rule, cost, visibility, ...) DT_IF_PUBLIC_##visibility(dt_##c_name COMMA)
  static const std::vector<UnaryFn> fns{DT_UNARY_OPS(X)};
#undef X
  return fns;
}
const std::vector<ReduceFn>& reduce_fns() {
#define X(Name, code, c_name, ...) dt_##c_name,
  static const std::vector<ReduceFn> fns{DT_REDUCE_OPS(X)};
#undef X
  return fns;
}
constexpr size_t kPool = 8;
constexpr size_t kPoolMaxNumel = 1024;   // larger results are checked, then released
constexpr size_t kMaxRead = 1 << 16;     // elements read back from one result
constexpr uint64_t kMaxBroadcast = 1 << 16;

// An out-parameter value no call may write on failure.
dt_tensor* const kUntouched = reinterpret_cast<dt_tensor*>(uintptr_t{0xdead0010});

size_t g_live_at_start = 0;
int g_cuda = 0;          // dt_cuda_is_available()
int32_t g_threads = 1;   // dt_num_threads() at start, restored after each input
long g_blobs_made = 0;   // dt_tensor_from_blob successes
long g_blobs_freed = 0;  // deleter calls

const char* g_op = "";   // the step being run, for messages
int g_step = 0;
bool g_trace = false;    // FUZZ_OPS_TRACE=1: print every call's outcome (to read a crash input)

[[noreturn]] void violated(const char* cond, const char* detail) {
  fprintf(stderr, "\nfuzz_ops: property violated at step %d (%s): %s\n  %s\n  last error: \"%s\"\n",
          g_step, g_op, cond, detail, dt_last_error_message());
  abort();
}

#define REQUIRE(cond, ...)                                   \
  do {                                                       \
    if (!(cond)) {                                           \
      char detail_[512];                                     \
      snprintf(detail_, sizeof detail_, "" __VA_ARGS__);     \
      violated(#cond, detail_);                              \
    }                                                        \
  } while (0)

void blob_deleter(void* data, void* context) {
  REQUIRE(context == &g_blobs_freed, "deleter context %p", context);
  ++g_blobs_freed;
  free(data);
}

struct Info {
  size_t ndim = 0;
  int64_t shape[DT_MAX_DIMS] = {};
  int64_t strides[DT_MAX_DIMS] = {};
  dt_dtype dtype = 0;
  dt_device device{};
  size_t numel = 0, nbytes = 0, esize = 0;
};

// True when dt_tensor_from_blob must refuse this shape whatever the strides: too many
// dims, a negative size, or more elements or bytes than int64 holds.
bool blob_shape_fails(const std::vector<int64_t>& s, size_t es) {
  if (s.size() > DT_MAX_DIMS) return true;
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : s) {
    if (d < 0) return true;
    empty = empty || d == 0;
  }
  if (empty) return false;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) return true;
  int64_t bytes = 0;
  return __builtin_mul_overflow(n, static_cast<int64_t>(es), &bytes);
}

class Program {
 public:
  Program(const uint8_t* data, size_t size) : in_(data, size) {}

  void run() {
    // Random values depend on the generator's offset, which every rand call advances:
    // reset it, so that an input does the same thing alone as after others.
    REQUIRE(dt_manual_seed(0) == DT_OK, "seed");
    for (g_step = 0; g_step < kMaxOps && in_.remaining_bytes() > 0; ++g_step) step();
    g_op = "end of input";
    for (dt_tensor* t : pool_) REQUIRE(dt_tensor_release(t) == DT_OK, "release at the end");
    pool_.clear();
    // Process-wide state goes back to its initial values, so inputs stay independent.
    REQUIRE(dt_set_default_device(dt_device{DT_DEVICE_CPU, 0}) == DT_OK, "reset device");
    REQUIRE(dt_set_default_dtype(DT_FLOAT32) == DT_OK, "reset dtype");
    REQUIRE(dt_set_num_threads(g_threads) == DT_OK, "reset threads");
    REQUIRE(dt_live_handle_count() == g_live_at_start, "live handles %zu, at start %zu",
            dt_live_handle_count(), g_live_at_start);
    REQUIRE(g_blobs_freed == g_blobs_made, "from_blob: %ld buffers given, %ld deleter calls",
            g_blobs_made, g_blobs_freed);
  }

 private:
  FuzzedDataProvider in_;
  std::vector<dt_tensor*> pool_;
  dt_tensor* stale_ = nullptr;  // a handle released during this input
  bool bad_ = false;            // an argument of the current call is invalid: it must fail
  int foreign_ = 0;             // its address is a "foreign" handle

  // ---------------------------------------------------------------- checking results

  // Checks a status; true on success.
  bool ok(dt_status st) {
    if (g_trace) {
      fprintf(stderr, "step %2d %-40s %s%s%s\n", g_step, g_op, st == DT_OK ? "ok" : dt_status_string(st),
              st == DT_OK ? "" : ": ", st == DT_OK ? "" : dt_last_error_message());
    }
    if (st == DT_OK) {
      REQUIRE(!bad_, "succeeded with an argument that must make it fail");
      return true;
    }
    REQUIRE(st >= DT_ERR_INVALID_ARGUMENT && st <= DT_ERR_INTERNAL, "status %d", (int)st);
    REQUIRE(st != DT_ERR_INTERNAL, "DT_ERR_INTERNAL");
    const char* msg = dt_last_error_message();
    REQUIRE(msg != nullptr && msg[0] != '\0', "status %d (%s) with an empty message", (int)st,
            dt_status_string(st));
    REQUIRE(strlen(msg) < 4096, "a message of %zu bytes", strlen(msg));
    return false;
  }

  // Runs a call that makes one tensor (*out) and adopts the result.
  template <typename F>
  void produce(F call) {
    dt_tensor* out = kUntouched;
    if (ok(call(&out))) {
      REQUIRE(out != nullptr && out != kUntouched, "success without a result");
      adopt(out);
    } else {
      REQUIRE(out == kUntouched, "failed but wrote *out (%p)", (void*)out);
    }
  }

  // A call with two results (values and indices): both adopted, or both untouched.
  template <typename F>
  void produce_pair(F call) {
    dt_tensor* v = kUntouched;
    dt_tensor* i = kUntouched;
    if (ok(call(&v, &i))) {
      REQUIRE(v != nullptr && v != kUntouched && i != nullptr && i != kUntouched, "success without both results");
      adopt(v);
      adopt(i);
    } else {
      REQUIRE(v == kUntouched && i == kUntouched, "failed but wrote a result (%p, %p)", (void*)v, (void*)i);
    }
  }

  Info info(const dt_tensor* t) {
    Info i;
    REQUIRE(dt_tensor_ndim(t, &i.ndim) == DT_OK, "ndim");
    REQUIRE(i.ndim <= DT_MAX_DIMS, "ndim %zu", i.ndim);
    REQUIRE(dt_tensor_shape(t, i.shape, DT_MAX_DIMS) == DT_OK, "shape");
    REQUIRE(dt_tensor_strides(t, i.strides, DT_MAX_DIMS) == DT_OK, "strides");
    REQUIRE(dt_tensor_dtype(t, &i.dtype) == DT_OK, "dtype");
    REQUIRE(dt_tensor_device(t, &i.device) == DT_OK, "device");
    REQUIRE(dt_tensor_numel(t, &i.numel) == DT_OK, "numel");
    REQUIRE(dt_tensor_nbytes(t, &i.nbytes) == DT_OK, "nbytes");
    REQUIRE(i.dtype >= DT_FLOAT32 && i.dtype <= DT_BOOL, "dtype %d", (int)i.dtype);
    REQUIRE(dt_dtype_size(i.dtype, &i.esize) == DT_OK, "dtype_size");
    return i;
  }

  // A new result: consistent metadata and readable elements.
  void adopt(dt_tensor* t) {
    Info i = info(t);
    if (g_trace) {
      fprintf(stderr, "        -> %p dtype %d cpu:%d shape [", (void*)t, (int)i.dtype, (int)i.device.index);
      for (size_t d = 0; d < i.ndim; ++d) fprintf(stderr, "%s%" PRId64, d ? ", " : "", i.shape[d]);
      fprintf(stderr, "] strides [");
      for (size_t d = 0; d < i.ndim; ++d) fprintf(stderr, "%s%" PRId64, d ? ", " : "", i.strides[d]);
      fprintf(stderr, "]\n");
    }
    size_t n = 1;
    for (size_t d = 0; d < i.ndim; ++d) {
      REQUIRE(i.shape[d] >= 0, "dim %zu is %" PRId64, d, i.shape[d]);
      n *= static_cast<size_t>(i.shape[d]);
    }
    REQUIRE(n == i.numel, "numel %zu, shape product %zu", i.numel, n);
    REQUIRE(i.nbytes == i.numel * i.esize, "nbytes %zu", i.nbytes);
    REQUIRE(i.device.type == DT_DEVICE_CPU || (g_cuda && i.device.type == DT_DEVICE_CUDA),
            "device type %d", (int)i.device.type);
    REQUIRE(i.device.type != DT_DEVICE_CPU || (i.device.index >= 0 && i.device.index < 2),
            "device cpu:%d", (int)i.device.index);
    int32_t contiguous = -1;
    REQUIRE(dt_tensor_is_contiguous(t, &contiguous) == DT_OK && (contiguous == 0 || contiguous == 1),
            "is_contiguous");
    if (i.numel <= kMaxRead && i.device.type == DT_DEVICE_CPU) read_back(t, i);
    if (i.numel > kPoolMaxNumel) {
      REQUIRE(dt_tensor_release(t) == DT_OK, "release of a large result");
      return;
    }
    pool_.push_back(t);
    if (pool_.size() > kPool) release_at(in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1));
  }

  // Reads every element twice: through the library and by walking the strides.
  void read_back(const dt_tensor* t, const Info& i) {
    std::vector<unsigned char> host(i.nbytes ? i.nbytes : 1);
    REQUIRE(dt_tensor_copy_to_host(t, host.data(), i.nbytes) == DT_OK, "copy_to_host");
    if (i.dtype == DT_BOOL) {
      for (size_t k = 0; k < i.numel; ++k) REQUIRE(host[k] <= 1, "bool element %zu is %d", k, host[k]);
    }
    void* p = nullptr;
    REQUIRE(dt_tensor_data_ptr(t, &p) == DT_OK, "data_ptr of a CPU tensor");
    if (i.numel == 0) return;
    REQUIRE(p != nullptr, "data_ptr NULL");
    int64_t idx[DT_MAX_DIMS] = {};
    const unsigned char* base = static_cast<const unsigned char*>(p);
    unsigned sum = 0;
    for (size_t k = 0; k < i.numel; ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < i.ndim; ++d) off += idx[d] * i.strides[d];
      const unsigned char* e = base + off * static_cast<int64_t>(i.esize);
      for (size_t b = 0; b < i.esize; ++b) sum += e[b];  // ASan checks each byte
      // The same bytes as the copy (row-major order).
      REQUIRE(memcmp(e, &host[k * i.esize], i.esize) == 0, "element %zu differs from its copy", k);
      for (size_t d = i.ndim; d-- > 0;) {
        if (++idx[d] < i.shape[d]) break;
        idx[d] = 0;
      }
    }
    volatile unsigned sink = sum;
    (void)sink;
  }

  void release_at(size_t k) {
    dt_tensor* t = pool_[k];
    pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(k));
    REQUIRE(dt_tensor_release(t) == DT_OK, "release");
    // Every reference this program holds is in the pool (dt_contiguous and dt_tensor_to
    // may return another reference to their argument): t is stale once none is left.
    if (std::find(pool_.begin(), pool_.end(), t) == pool_.end()) stale_ = t;
  }

  // ---------------------------------------------------------------- arguments

  bool rarely(int one_in = 32) { return in_.ConsumeIntegralInRange<int>(0, one_in - 1) == 0; }

  // A tensor argument: usually one from the pool; rarely NULL, released or foreign.
  dt_tensor* tensor() {
    int r = in_.ConsumeIntegralInRange<int>(0, 63);
    if (pool_.empty() || r == 0) {
      bad_ = true;
      return nullptr;
    }
    if (r == 1 && stale_ != nullptr) {
      bad_ = true;
      return stale_;
    }
    if (r == 2) {
      bad_ = true;
      return reinterpret_cast<dt_tensor*>(&foreign_);
    }
    return pool_[in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1)];
  }

  dt_dtype dtype() {
    if (rarely(48)) {
      bad_ = true;
      static const dt_dtype invalid[] = {11, -1, 1000, std::numeric_limits<int32_t>::min()};
      return invalid[in_.ConsumeIntegralInRange<int>(0, 3)];
    }
    return in_.ConsumeIntegralInRange<dt_dtype>(DT_DTYPE_DEFAULT, DT_BOOL);
  }

  // cpu:0, cpu:1, the default, cuda:0 (must fail without a usable CUDA); rarely invalid.
  dt_device device() {
    switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: case 1: case 2: case 3: case 4: return {DT_DEVICE_CPU, 0};
      case 5: case 6: case 7: case 8: return {DT_DEVICE_CPU, 1};
      case 9: case 10: return {DT_DEVICE_DEFAULT, 0};
      case 11: case 12: case 13:
        if (!g_cuda) bad_ = true;
        return {DT_DEVICE_CUDA, 0};
      case 14: bad_ = true; return {DT_DEVICE_CPU, 2};
      default: {
        bad_ = true;
        static const dt_device invalid[] = {{DT_DEVICE_CPU, -1}, {7, 0}, {-1, 0},
                                            {DT_DEVICE_CUDA, -3}, {DT_DEVICE_CPU, INT32_MAX}};
        return invalid[in_.ConsumeIntegralInRange<int>(0, 4)];
      }
    }
  }

  // A small shape (ndim 0..max_ndim, dims 0..4); rarely a negative or overflowing one,
  // which makes a constructor fail (mark_bad); for reshape, view and expand, where -1 has
  // a meaning, it is only a shape that may or may not fit.
  std::vector<int64_t> shape(int max_ndim = 4, bool mark_bad = true) {
    if (rarely(64)) {
      if (mark_bad) bad_ = true;
      static const std::vector<int64_t> invalid[] = {
          {-1}, {2, -3}, {std::numeric_limits<int64_t>::min()},
          {std::numeric_limits<int64_t>::max(), 2}, {int64_t{1} << 32, int64_t{1} << 32},
          {std::numeric_limits<int64_t>::max()},
          std::vector<int64_t>(DT_MAX_DIMS + 1, 1)};
      int k = in_.ConsumeIntegralInRange<int>(0, 6);
      return invalid[k];
    }
    std::vector<int64_t> s(in_.ConsumeIntegralInRange<int>(0, max_ndim));
    for (auto& d : s) d = in_.ConsumeIntegralInRange<int64_t>(0, 4);
    return s;
  }

  // A dimension index, usually in range for small ranks.
  int64_t dim() {
    if (rarely(64)) {
      return rarely(2) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    }
    return in_.ConsumeIntegralInRange<int64_t>(-5, 5);
  }

  std::vector<int64_t> dims(size_t max = 4) {
    std::vector<int64_t> v(in_.ConsumeIntegralInRange<size_t>(0, max));
    for (auto& d : v) d = dim();
    return v;
  }

  double scalar() {
    switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -std::numeric_limits<double>::infinity();
      case 3: return 1e300;
      case 4: return -1e10;
      case 5: return 0.5;
      case 6: return -2.5;
      case 7: return in_.ConsumeFloatingPoint<double>();
      default: return static_cast<double>(in_.ConsumeIntegralInRange<int>(-4, 4));
    }
  }

  size_t esize(dt_dtype dt) {
    size_t s = 0;
    dt_dtype resolved = dt;
    if (dt == DT_DTYPE_DEFAULT) REQUIRE(dt_default_dtype(&resolved) == DT_OK, "default_dtype");
    return dt_dtype_size(resolved, &s) == DT_OK ? s : 0;
  }

  // n bytes of element data for dtype dt (bool bytes are 0 or 1).
  std::vector<unsigned char> bytes(size_t n, dt_dtype dt) {
    std::vector<unsigned char> b = in_.ConsumeBytes<unsigned char>(n);
    b.resize(n, 0);
    if (dt == DT_BOOL) for (auto& c : b) c &= 1;
    return b;
  }

  static size_t numel_of(const std::vector<int64_t>& s) {
    size_t n = 1;
    for (int64_t d : s) n *= d > 0 ? static_cast<size_t>(d) : 0;
    return n;
  }

  // Fills a fresh uninitialised tensor with input bytes (see the header comment).
  void fill_empty(dt_tensor* t) {
    Info i = info(t);
    auto b = bytes(i.nbytes, i.dtype);
    REQUIRE(dt_tensor_copy_from_host(t, b.data(), i.nbytes) == DT_OK, "fill of an empty tensor");
  }
  template <typename F>
  void produce_empty(F call) {
    dt_tensor* out = kUntouched;
    if (ok(call(&out))) {
      REQUIRE(out != nullptr && out != kUntouched, "success without a result");
      fill_empty(out);
      adopt(out);
    } else {
      REQUIRE(out == kUntouched, "failed but wrote *out");
    }
  }

  // An upper bound of the broadcast numel of the tensors (0 if a handle is not valid).
  // The product of t's sizes with each 0 counted as 1, saturating at 2^62: a bound on what
  // an op can materialise from t even when t itself is empty (a matmul of [n, 0] by [0, m]
  // is an [n, m] of zeros, a sum over the 0 of [n, 0] is n zeros), since empty tensors may
  // carry any sizes.
  uint64_t extent(const dt_tensor* t) {
    size_t n = 0;
    int64_t s[DT_MAX_DIMS];
    if (t == nullptr || dt_tensor_ndim(t, &n) != DT_OK || dt_tensor_shape(t, s, DT_MAX_DIMS) != DT_OK) return 0;
    constexpr uint64_t kCap = uint64_t{1} << 62;
    uint64_t e = 1;
    for (size_t k = 0; k < n; ++k) {
      uint64_t d = s[k] > 0 ? static_cast<uint64_t>(s[k]) : 1;
      e = e > kCap / d ? kCap : e * d;
    }
    return e;
  }

  uint64_t broadcast_bound(std::initializer_list<const dt_tensor*> ts) {
    int64_t out[DT_MAX_DIMS + 1] = {};
    size_t nd = 0;
    for (const dt_tensor* t : ts) {
      size_t n = 0;
      int64_t s[DT_MAX_DIMS];
      if (t == nullptr || dt_tensor_ndim(t, &n) != DT_OK || dt_tensor_shape(t, s, DT_MAX_DIMS) != DT_OK)
        continue;
      for (size_t k = 0; k < n; ++k) {
        int64_t& o = out[DT_MAX_DIMS - n + k];
        if (s[k] > o) o = s[k];
      }
      if (n > nd) nd = n;
    }
    uint64_t bound = 1;
    for (size_t k = DT_MAX_DIMS - nd; k < DT_MAX_DIMS; ++k) bound *= static_cast<uint64_t>(out[k] ? out[k] : 1);
    return bound;
  }
  size_t numel(const dt_tensor* t) {
    size_t n = 0;
    return t != nullptr && dt_tensor_numel(t, &n) == DT_OK ? n : 0;
  }

  // ---------------------------------------------------------------- one step

  void step() {
    bad_ = false;
    const int op = in_.ConsumeIntegralInRange<int>(0, 39);
    switch (op) {
      case 0: {
        g_op = "dt_tensor_empty";
        auto s = shape();
        auto dt = dtype();
        auto dev = device();
        produce_empty([&](dt_tensor** o) { return dt_tensor_empty(s.data(), s.size(), dt, dev, o); });
        break;
      }
      case 1: {
        g_op = "dt_tensor_zeros/ones";
        auto s = shape();
        auto dt = dtype();
        auto dev = device();
        bool ones = rarely(2);
        produce([&](dt_tensor** o) {
          return ones ? dt_tensor_ones(s.data(), s.size(), dt, dev, o)
                      : dt_tensor_zeros(s.data(), s.size(), dt, dev, o);
        });
        break;
      }
      case 2: {
        g_op = "dt_tensor_full";
        auto s = shape();
        double v = scalar();
        auto dt = dtype();
        auto dev = device();
        produce([&](dt_tensor** o) { return dt_tensor_full(s.data(), s.size(), v, dt, dev, o); });
        break;
      }
      case 3: {
        g_op = "dt_tensor_arange";
        static const double steps[] = {1, -1, 0.5, 2, -0.25, 3, 0};
        double start = in_.ConsumeIntegralInRange<int>(-8, 8);
        double end = in_.ConsumeIntegralInRange<int>(-8, 8);
        double step = steps[in_.ConsumeIntegralInRange<int>(0, 6)];
        if (rarely(16)) start += 0.5;
        if (step == 0 || (end - start) * step < 0) bad_ = true;
        if (rarely(32)) {
          bad_ = true;
          (rarely(2) ? end : start) = rarely(2) ? std::numeric_limits<double>::quiet_NaN()
                                                : std::numeric_limits<double>::infinity();
        }
        auto dt = dtype();
        auto dev = device();
        produce([&](dt_tensor** o) { return dt_tensor_arange(start, end, step, dt, dev, o); });
        break;
      }
      case 4: {
        g_op = "dt_tensor_rand/randn";
        auto s = shape();
        auto dt = dtype();
        auto dev = device();
        bool normal = rarely(2);
        if (rarely(64)) REQUIRE(dt_manual_seed(in_.ConsumeIntegral<uint64_t>()) == DT_OK, "seed");
        produce([&](dt_tensor** o) {
          return normal ? dt_tensor_randn(s.data(), s.size(), dt, dev, o)
                        : dt_tensor_rand(s.data(), s.size(), dt, dev, o);
        });
        break;
      }
      case 5: {
        g_op = "dt_tensor_from_data";
        auto s = shape();
        auto dt = dtype();
        auto dev = device();
        size_t es = esize(dt);
        size_t n = bad_ ? 8 : numel_of(s) * es;
        if (rarely(32)) {
          n += 1;
          bad_ = true;
        }
        auto b = bytes(n, dt);
        produce([&](dt_tensor** o) {
          return dt_tensor_from_data(n ? b.data() : nullptr, n, s.data(), s.size(), dt, dev, o);
        });
        break;
      }
      case 6: {
        g_op = "dt_tensor_from_blob";
        const bool bad_before = bad_;
        auto s = shape();
        const bool shape_bad = bad_ && !bad_before;
        auto dt = dtype();
        auto dev = device();
        if (dt == DT_DTYPE_DEFAULT) dt = DT_FLOAT32;  // the element size must be known here
        size_t es = esize(dt);
        // An "invalid" shape may be a valid claim here ([INT64_MAX] of int8: every byte
        // count fits), and the library cannot know the buffer is smaller: a caller's
        // promise, which a test must not break. Only shapes that must fail are passed.
        if (shape_bad && es != 0 && !blob_shape_fails(s, es)) break;
        // Strides that fit in the buffer (any layout, overlapping ones included).
        std::vector<int64_t> st(s.size());
        bool contiguous = rarely(3);
        size_t extent = 1;
        for (size_t k = 0; k < s.size(); ++k) {
          st[k] = in_.ConsumeIntegralInRange<int64_t>(0, 5);
          if (s[k] > 0 && s[k] <= 4) extent += static_cast<size_t>(s[k] - 1) * static_cast<size_t>(st[k]);
        }
        if (contiguous) extent = numel_of(s);
        if (bad_ || es == 0) extent = 1, es = es ? es : 1;
        size_t nbytes = extent * es;
        unsigned char* buf = static_cast<unsigned char*>(malloc(nbytes ? nbytes : 1));
        auto b = bytes(nbytes, dt);
        if (nbytes) memcpy(buf, b.data(), nbytes);
        bool with_deleter = !rarely(8);
        dt_tensor* out = kUntouched;
        dt_status stt = dt_tensor_from_blob(buf, s.data(), s.size(), contiguous ? nullptr : st.data(), dt,
                                            dev, with_deleter ? blob_deleter : nullptr,
                                            with_deleter ? &g_blobs_freed : nullptr, &out);
        if (ok(stt)) {
          REQUIRE(out != nullptr && out != kUntouched, "success without a result");
          if (with_deleter) {
            ++g_blobs_made;
            adopt(out);
          } else {
            // Without a deleter the caller keeps the buffer: release before freeing it.
            adopt_now_and_release(out);
            free(buf);
          }
        } else {
          REQUIRE(out == kUntouched, "failed but wrote *out");
          free(buf);  // on failure the caller keeps ownership
        }
        break;
      }
      case 7: {
        g_op = "dt_*_like";
        dt_tensor* src = tensor();
        int which = in_.ConsumeIntegralInRange<int>(0, 5);
        double v = scalar();
        if (which == 0) {
          produce_empty([&](dt_tensor** o) { return dt_empty_like(src, o); });
        } else {
          produce([&](dt_tensor** o) {
            switch (which) {
              case 1: return dt_zeros_like(src, o);
              case 2: return dt_ones_like(src, o);
              case 3: return dt_full_like(src, v, o);
              case 4: return dt_rand_like(src, o);
              default: return dt_randn_like(src, o);
            }
          });
        }
        break;
      }
      case 8: {
        g_op = "dt_tensor_new_*";
        dt_tensor* src = tensor();
        auto s = shape();
        int which = in_.ConsumeIntegralInRange<int>(0, 3);
        double v = scalar();
        if (which == 0) {
          produce_empty([&](dt_tensor** o) { return dt_tensor_new_empty(src, s.data(), s.size(), o); });
        } else {
          produce([&](dt_tensor** o) {
            switch (which) {
              case 1: return dt_tensor_new_zeros(src, s.data(), s.size(), o);
              case 2: return dt_tensor_new_ones(src, s.data(), s.size(), o);
              default: return dt_tensor_new_full(src, s.data(), s.size(), v, o);
            }
          });
        }
        break;
      }
      case 9: {
        g_op = "dt_reshape/dt_view";
        dt_tensor* t = tensor();
        auto s = shape(5, false);
        if (!s.empty() && rarely(3)) s[in_.ConsumeIntegralInRange<size_t>(0, s.size() - 1)] = -1;
        bool view = rarely(2);
        produce([&](dt_tensor** o) {
          return view ? dt_view(t, s.data(), s.size(), o) : dt_reshape(t, s.data(), s.size(), o);
        });
        break;
      }
      case 10: {
        g_op = "dt_transpose";
        dt_tensor* t = tensor();
        int64_t a = dim(), b = dim();
        produce([&](dt_tensor** o) { return dt_transpose(t, a, b, o); });
        break;
      }
      case 11: {
        g_op = "dt_permute";
        dt_tensor* t = tensor();
        size_t nd = 0;
        if (t != nullptr) dt_tensor_ndim(t, &nd);
        std::vector<int64_t> p(nd);
        for (size_t k = 0; k < nd; ++k) p[k] = static_cast<int64_t>(k);
        for (size_t k = nd; k > 1; --k) std::swap(p[k - 1], p[in_.ConsumeIntegralInRange<size_t>(0, k - 1)]);
        for (auto& d : p) if (rarely(4)) d -= static_cast<int64_t>(nd);  // negative form
        if (rarely(16)) p = dims(5);
        produce([&](dt_tensor** o) { return dt_permute(t, p.data(), p.size(), o); });
        break;
      }
      case 12: {
        g_op = "dt_narrow";
        dt_tensor* t = tensor();
        int64_t d = dim();
        int64_t start = in_.ConsumeIntegralInRange<int64_t>(-5, 5);
        int64_t len = in_.ConsumeIntegralInRange<int64_t>(-1, 5);
        if (rarely(32)) len = std::numeric_limits<int64_t>::max();
        if (rarely(32)) start = std::numeric_limits<int64_t>::min();
        produce([&](dt_tensor** o) { return dt_narrow(t, d, start, len, o); });
        break;
      }
      case 13: {
        g_op = "dt_squeeze/unsqueeze";
        dt_tensor* t = tensor();
        auto ds = dims(3);
        int64_t d = dim();
        bool un = rarely(2);
        produce([&](dt_tensor** o) {
          return un ? dt_unsqueeze(t, d, o) : dt_squeeze(t, ds.empty() ? nullptr : ds.data(), ds.size(), o);
        });
        break;
      }
      case 14: {
        g_op = "dt_expand";
        dt_tensor* t = tensor();
        auto s = shape(5, false);
        for (auto& d : s) if (rarely(3)) d = -1;
        produce([&](dt_tensor** o) { return dt_expand(t, s.data(), s.size(), o); });
        break;
      }
      case 15: {
        g_op = "dt_contiguous/flatten";
        dt_tensor* t = tensor();
        int64_t a = dim(), b = dim();
        bool flat = rarely(2);
        produce([&](dt_tensor** o) { return flat ? dt_flatten(t, a, b, o) : dt_contiguous(t, o); });
        break;
      }
      case 16: case 17: {
        g_op = "binary op";
        dt_tensor* a = tensor();
        dt_tensor* b = tensor();
        const auto& fns = binary_fns();
        const size_t which = in_.ConsumeIntegralInRange<size_t>(0, fns.size() - 1);
        if (broadcast_bound({a, b}) > kMaxBroadcast) break;
        produce([&](dt_tensor** o) { return fns[which](a, b, o); });
        break;
      }
      case 18: {
        g_op = "scalar op";
        dt_tensor* a = tensor();
        double v = scalar();
        const auto& fns = scalar_fns();
        const size_t which = in_.ConsumeIntegralInRange<size_t>(0, fns.size() - 1);
        produce([&](dt_tensor** o) { return fns[which](a, v, o); });
        break;
      }
      case 19: {
        g_op = "in-place op";
        dt_tensor* self = tensor();
        dt_tensor* other = tensor();
        double v = scalar();
        const auto& tensor_forms = inplace_fns();
        const auto& scalar_forms = inplace_scalar_fns();
        const size_t which = in_.ConsumeIntegralInRange<size_t>(0, tensor_forms.size() + scalar_forms.size() - 1);
        if (broadcast_bound({self, other}) > kMaxBroadcast) break;
        const bool scalar_form = which >= tensor_forms.size();
        if (scalar_form) bad_ = bad_ && self_bad(self);  // the scalar forms ignore `other`
        const dt_status st = scalar_form ? scalar_forms[which - tensor_forms.size()](self, v)
                                         : tensor_forms[which](self, other);
        if (ok(st)) recheck(self);
        break;
      }
      case 20: {
        g_op = "dt_where";
        dt_tensor* c = tensor();
        dt_tensor* a = tensor();
        dt_tensor* b = tensor();
        if (broadcast_bound({c, a, b}) > kMaxBroadcast) break;
        produce([&](dt_tensor** o) { return dt_where(c, a, b, o); });
        break;
      }
      case 21: {
        g_op = "unary op";
        dt_tensor* a = tensor();
        if (rarely(4)) {  // the resizing ops: pad (any mode, crops, huge pads) and interpolate
          static const char* const kModes[] = {nullptr, "constant", "reflect", "replicate", "circular", "mirror",
                                               "nearest", "linear", "bilinear", "trilinear", "bicubic"};
          const char* mode = kModes[in_.ConsumeIntegralInRange<size_t>(0, 10)];
          const size_t n = in_.ConsumeIntegralInRange<size_t>(0, 7);
          std::vector<int64_t> ints(n);
          for (auto& v : ints)
            v = rarely(32) ? (in_.ConsumeBool() ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min())
                           : in_.ConsumeIntegralInRange<int64_t>(-3, 6);
          if (extent(a) > kMaxBroadcast) break;
          if (in_.ConsumeBool()) {
            g_op = "dt_pad";
            const double value = rarely(8) ? std::numeric_limits<double>::quiet_NaN() : in_.ConsumeIntegralInRange<int>(-2, 2);
            if (mode && (std::strcmp(mode, "nearest") == 0 || std::strcmp(mode, "linear") == 0)) mode = "reflect";
            const int64_t* p = n == 0 && rarely(2) ? nullptr : ints.data();
            produce([&](dt_tensor** o) { return dt_pad(a, p, n, mode, value, o); });
          } else {
            g_op = "dt_interpolate";
            std::vector<double> scales(n);
            for (auto& f : scales) f = rarely(16) ? 1e300 : in_.ConsumeIntegralInRange<int>(-1, 12) / 4.0;
            const bool by_size = in_.ConsumeBool();
            for (auto& v : ints) v = std::min<int64_t>(v, 9);  // output sizes stay small
            const int32_t align = in_.ConsumeIntegralInRange<int32_t>(0, 2);
            produce([&](dt_tensor** o) {
              return dt_interpolate(a, by_size ? ints.data() : nullptr, by_size ? nullptr : scales.data(), n, mode,
                                    align, o);
            });
          }
          break;
        }
        const auto& fns = unary_fns();
        const size_t which = in_.ConsumeIntegralInRange<size_t>(0, fns.size() - 1);
        produce([&](dt_tensor** o) { return fns[which](a, o); });
        break;
      }
      case 22: case 23: {
        g_op = "reduction";
        dt_tensor* a = tensor();
        if (extent(a) > kMaxBroadcast) break;  // reducing an empty [n, 0] over dim 1 makes n values
        auto ds = dims(3);
        bool null_dims = ds.empty() && rarely(2);
        if (rarely(64)) {  // dims NULL with ndims > 0
          bad_ = true;
          null_dims = true;
          ds.assign(1, 0);
        }
        int32_t keep = in_.ConsumeIntegralInRange<int32_t>(0, 1);
        const auto& fns = reduce_fns();
        const size_t which = in_.ConsumeIntegralInRange<size_t>(0, fns.size() - 1);
        const int64_t* dp = null_dims ? nullptr : ds.data();
        produce([&](dt_tensor** o) { return fns[which](a, dp, ds.size(), keep, o); });
        break;
      }
      case 24: {
        g_op = "dt_softmax/log_softmax";
        dt_tensor* a = tensor();
        int64_t d = dim();
        bool log = rarely(2);
        if (rarely(2)) {  // the ops along one dim that keep it: cumsum, sort, argsort, topk
          const int which = in_.ConsumeIntegralInRange<int>(0, 3);
          const int32_t flag = in_.ConsumeIntegralInRange<int32_t>(0, 1);
          if (which == 0) {
            g_op = "dt_cumsum";
            produce([&](dt_tensor** o) { return dt_cumsum(a, d, o); });
          } else if (which == 1) {
            g_op = "dt_sort";
            produce_pair([&](dt_tensor** v, dt_tensor** i) { return dt_sort(a, d, flag, v, i); });
          } else if (which == 2) {
            g_op = "dt_argsort";
            produce([&](dt_tensor** o) { return dt_argsort(a, d, flag, o); });
          } else {
            g_op = "dt_topk";
            int64_t k = in_.ConsumeIntegralInRange<int64_t>(-1, 6);
            if (rarely(32)) k = in_.ConsumeBool() ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
            produce_pair([&](dt_tensor** v, dt_tensor** i) { return dt_topk(a, k, d, flag, v, i); });
          }
          break;
        }
        produce([&](dt_tensor** o) { return log ? dt_log_softmax(a, d, o) : dt_softmax(a, d, o); });
        break;
      }
      case 25: case 26: {
        g_op = "dt_matmul";
        dt_tensor* a = tensor();
        dt_tensor* b = tensor();
        // extent, not numel: found by fuzz_ops (regressions/fuzz_ops/matmul-empty-huge-output),
        // a 4 GiB zero result of empty operands ran the harness out of memory.
        const uint64_t ea = extent(a), eb = extent(b);
        if (ea > (uint64_t{1} << 18) || eb > (uint64_t{1} << 18) || ea * eb > (uint64_t{1} << 18)) break;
        produce([&](dt_tensor** o) { return dt_matmul(a, b, o); });
        break;
      }
      case 27: {
        g_op = "dt_cat/dt_stack";
        size_t n = in_.ConsumeIntegralInRange<size_t>(0, 4);
        if (n == 0) bad_ = true;
        std::vector<const dt_tensor*> ts(n);
        for (auto& t : ts) t = tensor();
        int64_t d = dim();
        bool stack = rarely(2);
        size_t total = 0;
        for (auto* t : ts) total += numel(t);
        if (total > kPoolMaxNumel * 4) break;
        const dt_tensor* const* tp = n == 0 && rarely(2) ? nullptr : ts.data();
        produce([&](dt_tensor** o) { return stack ? dt_stack(tp, n, d, o) : dt_cat(tp, n, d, o); });
        break;
      }
      case 28: {
        g_op = "dt_chunk/dt_split";
        dt_tensor* t = tensor();
        int64_t k = in_.ConsumeIntegralInRange<int64_t>(-1, 5);
        int64_t d = dim();
        bool split = rarely(2);
        size_t count = 12345, cap = in_.ConsumeIntegralInRange<size_t>(0, 6);
        dt_tensor* outs[6];
        for (auto& o : outs) o = kUntouched;
        dt_status st = split ? dt_split(t, k, d, outs, cap, &count) : dt_chunk(t, k, d, outs, cap, &count);
        if (ok(st)) {
          if (count <= cap) {
            for (size_t i = 0; i < count; ++i) {
              REQUIRE(outs[i] != nullptr && outs[i] != kUntouched, "piece %zu of %zu", i, count);
            }
            for (size_t i = count; i < cap; ++i) REQUIRE(outs[i] == kUntouched, "wrote past count");
            for (size_t i = 0; i < count; ++i) adopt(outs[i]);
          } else {
            for (auto& o : outs) REQUIRE(o == kUntouched, "cap %zu < count %zu but outs written", cap, count);
          }
        } else {
          for (auto& o : outs) REQUIRE(o == kUntouched, "failed but wrote outs");
        }
        break;
      }
      case 29: {
        g_op = "index tensor (from_data, int64/int32)";
        size_t n = in_.ConsumeIntegralInRange<size_t>(0, 6);
        bool i32 = rarely(3);
        std::vector<int64_t> v64(n);
        std::vector<int32_t> v32(n);
        for (size_t k = 0; k < n; ++k) v32[k] = static_cast<int32_t>(v64[k] = in_.ConsumeIntegralInRange<int64_t>(-2, 5));
        std::vector<int64_t> s{static_cast<int64_t>(n)};
        if (rarely(3) && n % 2 == 0) s = {2, static_cast<int64_t>(n / 2)};
        produce([&](dt_tensor** o) {
          return i32 ? dt_tensor_from_data(v32.data(), n * 4, s.data(), s.size(), DT_INT32, dt_device{DT_DEVICE_CPU, 0}, o)
                     : dt_tensor_from_data(v64.data(), n * 8, s.data(), s.size(), DT_INT64, dt_device{DT_DEVICE_CPU, 0}, o);
        });
        break;
      }
      case 30: {
        g_op = "dt_index_select/dt_gather/dt_index_add/dt_scatter_add";
        dt_tensor* t = tensor();
        dt_tensor* idx = tensor();
        int64_t d = dim();
        const int which = in_.ConsumeIntegralInRange<int>(0, 3);
        dt_tensor* src = which >= 2 ? tensor() : nullptr;
        produce([&](dt_tensor** o) {
          switch (which) {
            case 0: return dt_index_select(t, d, idx, o);
            case 1: return dt_gather(t, d, idx, o);
            case 2: return dt_index_add(t, d, idx, src, o);
            default: return dt_scatter_add(t, d, idx, src, o);
          }
        });
        break;
      }
      case 31: case 32: {
        g_op = "dt_tensor_to";
        dt_tensor* t = tensor();
        dt_device dev = device();
        dt_dtype dt = dtype();
        uint32_t flags = in_.ConsumeIntegralInRange<uint32_t>(0, 3);
        if (rarely(32)) {
          flags |= 4u << in_.ConsumeIntegralInRange<int>(0, 29);
          bad_ = true;
        }
        produce([&](dt_tensor** o) { return dt_tensor_to(t, dev, dt, flags, o); });
        break;
      }
      case 33: {
        g_op = "dt_tensor_copy_from_host/copy_to_host";
        dt_tensor* t = tensor();
        size_t n = numel(t) * (t && !bad_ ? info(t).esize : 1);
        if (rarely(16)) {
          n = n + 1;
          bad_ = true;
        }
        bool to_host = rarely(2);
        if (to_host) {
          std::vector<unsigned char> b(n + 1);
          ok(dt_tensor_copy_to_host(t, b.data(), n));
        } else {
          auto b = bytes(n + 1, t && !bad_ ? info(t).dtype : DT_UINT8);
          if (ok(dt_tensor_copy_from_host(t, b.data(), n))) recheck(t);
        }
        break;
      }
      case 34: {
        g_op = "dt_tensor_item/to_string";
        dt_tensor* t = tensor();
        if (rarely(2)) {
          double v = -7.0;
          if (!bad_ && numel(t) != 1) bad_ = true;
          if (!ok(dt_tensor_item(t, &v))) REQUIRE(v == -7.0, "failed item wrote *out");
        } else {
          size_t cap = in_.ConsumeIntegralInRange<size_t>(0, 64), needed = 0;
          std::vector<char> buf(cap ? cap : 1, 'Z');
          if (numel(t) > kMaxRead) break;
          if (ok(dt_tensor_to_string(t, cap ? buf.data() : nullptr, cap, &needed))) {
            REQUIRE(needed >= 1, "to_string needed %zu", needed);
            if (cap) {
              size_t len = strnlen(buf.data(), cap);
              REQUIRE(len < cap && len == std::min(cap - 1, needed - 1), "to_string wrote %zu of %zu (cap %zu)",
                      len, needed, cap);
            }
          }
        }
        break;
      }
      case 35: {
        g_op = "retain/release";
        if (pool_.empty()) break;
        size_t k = in_.ConsumeIntegralInRange<size_t>(0, pool_.size() - 1);
        if (rarely(2)) {
          release_at(k);
        } else {
          REQUIRE(dt_tensor_retain(pool_[k]) == DT_OK, "retain");
          REQUIRE(dt_tensor_release(pool_[k]) == DT_OK, "release after retain");
        }
        if (stale_ != nullptr && rarely(4)) {
          g_op = "release of a released handle";
          dt_status st = dt_tensor_release(stale_);
          REQUIRE(st == DT_ERR_INVALID_HANDLE, "status %d", (int)st);
          ok(st);
          st = dt_tensor_retain(stale_);
          REQUIRE(st == DT_ERR_INVALID_HANDLE, "retain: status %d", (int)st);
        }
        break;
      }
      case 36: {
        g_op = "device queries";
        dt_device dev = device();
        if (dev.type == DT_DEVICE_DEFAULT) dev = {DT_DEVICE_CPU, 0};  // only constructors and to() take it
        char name[64];
        size_t needed = 0;
        uint64_t fr = 0, tot = 0;
        dt_device_props props;
        memset(&props, 0, sizeof props);
        props.struct_size = sizeof props;
        dt_mem_stats ms;
        memset(&ms, 0, sizeof ms);
        ms.struct_size = sizeof ms;
        switch (in_.ConsumeIntegralInRange<int>(0, 6)) {
          case 0: ok(dt_device_name(dev, name, sizeof name, &needed)); break;
          case 1: ok(dt_device_memory(dev, &fr, &tot)); break;
          case 2: ok(dt_device_properties(dev, &props)); break;
          case 3: ok(dt_memory_stats(dev, &ms)); break;
          case 4: ok(dt_synchronize(dev)); break;
          case 5: ok(dt_empty_cache(dev)); break;
          default: ok(dt_device_manual_seed(dev, in_.ConsumeIntegral<uint64_t>())); break;
        }
        break;
      }
      case 37: {
        g_op = "dt_set_default_device/dtype";
        if (rarely(2)) {
          dt_device dev = device();
          if (dev.type == DT_DEVICE_DEFAULT) dev = {DT_DEVICE_CPU, 1};
          ok(dt_set_default_device(dev));
        } else {
          dt_dtype dt = dtype();
          if (dt == DT_DTYPE_DEFAULT) dt = DT_FLOAT64;
          bool floating = dt == DT_FLOAT32 || dt == DT_FLOAT64 || dt == DT_FLOAT16 || dt == DT_BFLOAT16;
          if (!floating) bad_ = true;
          ok(dt_set_default_dtype(dt));
        }
        break;
      }
      case 38: {
        g_op = "dt_set_num_threads";
        int32_t n = in_.ConsumeIntegralInRange<int32_t>(0, 3);
        if (n == 0) bad_ = true;
        ok(dt_set_num_threads(n));
        break;
      }
      default: {
        g_op = "queries of an argument";
        dt_tensor* a = tensor();
        const bool a_bad = bad_;
        dt_tensor* b = tensor();
        int32_t shares = -1;
        if (ok(dt_tensor_shares_storage(a, b, &shares))) REQUIRE(shares == 0 || shares == 1, "shares %d", shares);
        bad_ = a_bad;
        size_t nd = 99;
        if (!ok(dt_tensor_ndim(a, &nd))) REQUIRE(nd == 99, "failed ndim wrote *out");
        break;
      }
    }
  }

  // Only `self` decides the validity of a scalar in-place op.
  bool self_bad(dt_tensor* self) {
    return self == nullptr || self == stale_ || self == reinterpret_cast<dt_tensor*>(&foreign_);
  }

  // A tensor written in place: still consistent and readable.
  void recheck(dt_tensor* t) {
    Info i = info(t);
    if (i.numel <= kMaxRead && i.device.type == DT_DEVICE_CPU) read_back(t, i);
  }

  // A from_blob tensor without a deleter: checked and released before its buffer is freed.
  void adopt_now_and_release(dt_tensor* t) {
    Info i = info(t);
    if (i.numel <= kMaxRead) read_back(t, i);
    REQUIRE(dt_tensor_release(t) == DT_OK, "release of a borrowed-buffer tensor");
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Two logical CPU devices; read once, at first use, so set before any call.
  setenv("DEVTENSOR_CPU_DEVICES", "2", 1);
  g_trace = getenv("FUZZ_OPS_TRACE") != nullptr;
  g_cuda = dt_cuda_is_available();
  size_t n = 0;
  if (dt_device_count(DT_DEVICE_CPU, &n) != DT_OK || n != 2) {
    fprintf(stderr, "fuzz_ops: expected 2 CPU devices, got %zu\n", n);
    abort();
  }
  if (dt_num_threads(&g_threads) != DT_OK) abort();
  g_live_at_start = dt_live_handle_count();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program(data, size).run();
  return 0;
}
