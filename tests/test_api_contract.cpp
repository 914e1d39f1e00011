// test_api_contract.cpp — the C ABI contract, checked for EVERY public function.
//
// The issue: "Every public function is called by a test with NULL, out-of-range, stale
// (released) and wrong-type arguments; each returns its documented code with a message,
// nothing crashes, leaks or changes an out-parameter. The tests also run under
// ASan+UBSan in CI."
//
// How this file meets it:
//
//  * Coverage.AllPublicFunctionsHaveContractTests parses include/devtensor.h at run time
//    and fails when a DT_API function has no contract test here. Adding a function to the
//    header without adding it to this file fails this test.
//
//  * Most checks are rows of one table (all_cases()): each row names the function, the
//    bad argument, the documented status code(s) and how to make the call. Generators
//    add the same rows to every function of a family, so e.g. every function taking a
//    tensor gets the NULL / stale / foreign-pointer rows and every function taking a
//    device gets the bad-device rows. Every row is its own gtest test, named
//    <function>__<what>_<n>, and checks, beyond the status code:
//      - dt_last_error_message() is non-empty and was written by THIS call (the thread's
//        message is primed with another failure first);
//      - every out-parameter is untouched: all of them point into a block pre-filled with
//        0xAB bytes (so a dt_tensor* out-parameter holds 0xABAB...AB) that must survive;
//      - the input tensors are unchanged (their contents are compared after the call, so
//        a failed in-place op that half-wrote its target is caught);
//      - no handle leaked: dt_live_handle_count() is the same at the end of every test as
//        at its start (the ContractTest fixture);
//      - a dt_tensor_from_blob deleter is never called on failure.
//
//  * Dedicated tests cover what a table row cannot: release/double release/slot reuse,
//    the (buf, cap, needed) string protocol of every string-writing function, the buffer
//    protocol of the device lists and of chunk/split, extensible structs, status names,
//    the per-thread error message, and that equal inputs give equal codes everywhere
//    (Consistency.*) where the header leaves a choice of two codes.
//
// What "wrong-type" means here. devtensor has ONE handle kind so far (dt_tensor), so a
// handle of "another kind" cannot be made yet. The wrong-type arguments are therefore:
//   - pointers that are not devtensor handles, cast to dt_tensor*: the address of a local
//     int on the stack, a malloc'd block, a pointer into the middle of a live handle, a
//     small integer (0x10);
//   - released handles (stale), including one whose slot has since been reused by a
//     live tensor;
//   - wrong codes in value arguments: dtype codes that are not dtypes (99, -1, INT32_MIN,
//     and DT_DTYPE_DEFAULT where a real dtype is required), device types that do not
//     exist (7, -1), and dtypes an operation does not accept (a bool tensor to sub, an
//     integer tensor to mean, a float index to index_select, ...).
// When a second handle kind (dt_module, ...) is added, add a "handle of another kind" row
// to the handle generator (add_handle_cases).
//
// Where the header allows two codes for one situation, a row accepts both, and a
// Consistency test then requires the library to give the SAME code for it everywhere:
//   - a NULL tensor handle: DT_ERR_INVALID_ARGUMENT ("a NULL pointer") or
//     DT_ERR_INVALID_HANDLE (the only code documented for e.g. dt_tensor_retain);
//   - an unknown device type (7) or a negative ordinal: DT_ERR_INVALID_ARGUMENT or
//     DT_ERR_INVALID_DEVICE ("a device ordinal or type that does not exist").
//
// Process setup: DEVTENSOR_CPU_DEVICES=2 is set before the library is first used, so
// cpu:1 exists (for device-mismatch rows) and cpu:5 does not. CUDA rows adapt: without a
// usable GPU, cuda:0 must give DT_ERR_DEVICE_UNAVAILABLE; with one, cuda:99 must give
// DT_ERR_INVALID_DEVICE. Rows that cannot apply on this machine are reported as skipped.
//
// Only include/devtensor.h is called; src/core/op_table.h lists the unary entry points, so
// a new op's rows come with its row in the table.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "devtensor.h"
#include "../src/api/testing.h"
#include "../src/core/op_table.h"  // the op table: the unary entry points

// Under AddressSanitizer a huge malloc must return NULL (so the library can report
// DT_ERR_OUT_OF_MEMORY) instead of aborting the test program.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace {

// Two logical CPU devices, before the library reads the variable (at first use).
[[maybe_unused]] const int kEnvSet = setenv("DEVTENSOR_CPU_DEVICES", "2", 1);

constexpr dt_status IA = DT_ERR_INVALID_ARGUMENT;
constexpr dt_status IH = DT_ERR_INVALID_HANDLE;
constexpr dt_status ID = DT_ERR_INVALID_DEVICE;
constexpr dt_status DU = DT_ERR_DEVICE_UNAVAILABLE;
constexpr dt_status DM = DT_ERR_DEVICE_MISMATCH;
constexpr dt_status SM = DT_ERR_SHAPE_MISMATCH;
constexpr dt_status TM = DT_ERR_DTYPE_MISMATCH;
constexpr dt_status OOM = DT_ERR_OUT_OF_MEMORY;
constexpr dt_status NS = DT_ERR_NOT_SUPPORTED;

constexpr dt_device dev(int32_t type, int32_t index) { return dt_device{type, index}; }
constexpr dt_device CPU0 = dev(DT_DEVICE_CPU, 0);
constexpr dt_device CPU1 = dev(DT_DEVICE_CPU, 1);
constexpr dt_device DEFAULT_DEV = dev(DT_DEVICE_DEFAULT, 0);

constexpr int64_t I64MIN = std::numeric_limits<int64_t>::min();
constexpr int64_t I64MAX = std::numeric_limits<int64_t>::max();

// Shapes used by many rows.
const int64_t k23[] = {2, 3};
const int64_t k6[] = {6};
const int64_t k4[] = {4};
const int64_t k3[] = {3};
const int64_t k43[] = {4, 3};
const int64_t kNeg[] = {2, -3};
const int64_t kNegNeg[] = {-1, -1};
const int64_t kMinus2[] = {2, -2};
const int64_t kOverflow[] = {I64MAX, 2};                     // numel overflows int64
const int64_t kOverflow2[] = {int64_t{1} << 32, int64_t{1} << 32};  // 2^64 elements
const int64_t kHuge[] = {int64_t{1} << 40, int64_t{1} << 20};  // 2^60 elements: no memory
// DT_MAX_DIMS + 1 dimensions whose product is 6, so only the count is wrong.
const int64_t k17[DT_MAX_DIMS + 1] = {2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
const int64_t k17ones[DT_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

std::string status_name(dt_status s) {
  std::ostringstream os;
  os << s << " (" << dt_status_string(s) << ")";
  return os.str();
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

size_t cpu_device_count() {
  size_t n = 0;
  if (dt_device_count(DT_DEVICE_CPU, &n) != DT_OK) return 0;
  return n;
}

// ------------------------------------------------------------------ out-parameters

// Every out-parameter a row passes points into this block, pre-filled with 0xAB.
struct Outs {
  dt_tensor* t;
  dt_tensor* ts[4];
  size_t sz;
  size_t sz2;
  int32_t i32;
  int64_t i64[DT_MAX_DIMS + 2];
  dt_device dev;
  dt_device devs[4];
  dt_dtype dtype;
  double d;
  void* ptr;
  uint64_t u64a;
  uint64_t u64b;
  char buf[64];
  unsigned char bytes[64];
  dt_device_props props;
  dt_mem_stats stats;
};

#define DT_OUTS_FIELDS(X) \
  X(t) X(ts) X(sz) X(sz2) X(i32) X(i64) X(dev) X(devs) X(dtype) X(d) X(ptr) X(u64a) X(u64b) \
  X(buf) X(bytes) X(props) X(stats)

void fill_outs(Outs& o) {
  std::memset(static_cast<void*>(&o), 0xAB, sizeof o);
  o.props.struct_size = sizeof(dt_device_props);
  o.stats.struct_size = sizeof(dt_mem_stats);
}

// Names of the fields that differ.
std::vector<std::string> changed_outs(const Outs& before, const Outs& after) {
  std::vector<std::string> changed;
#define DT_CMP_FIELD(f)                                                  \
  if (std::memcmp(&before.f, &after.f, sizeof(before.f)) != 0) changed.push_back(#f);
  DT_OUTS_FIELDS(DT_CMP_FIELD)
#undef DT_CMP_FIELD
  return changed;
}

dt_tensor* sentinel_tensor() {
  dt_tensor* t;
  std::memset(static_cast<void*>(&t), 0xAB, sizeof t);
  return t;
}

// ------------------------------------------------------------------ the test context

// A deleter for dt_tensor_from_blob that counts its calls.
void counting_deleter(void*, void* context) { ++*static_cast<int*>(context); }

// Live and bad handles every row can use. Lives on the test's stack (so &local_int is
// the address of a local variable).
struct Ctx {
  // Valid inputs (fatal if they cannot be made).
  dt_tensor* a = nullptr;     // float32 [2,3] = 0..5
  dt_tensor* b = nullptr;     // float32 [2,3] = 1..6
  dt_tensor* bt = nullptr;    // float32 [3,2] (matmul partner of a)
  dt_tensor* i32 = nullptr;   // int32 [2,3] = 0..5
  dt_tensor* bl = nullptr;    // bool [2,3]
  dt_tensor* idx = nullptr;   // int64 [2] = {0, 1}
  dt_tensor* idx_bad = nullptr;   // int64 [1] = {5}: out of range for every dim of a
  dt_tensor* gidx = nullptr;      // int64 [2,3] = 0 (gather index for a)
  dt_tensor* gidx_bad = nullptr;  // int64 [2,3] = 5 (out of range)
  dt_tensor* v4 = nullptr;    // float32 [4] (does not broadcast with [2,3])
  dt_tensor* v3 = nullptr;    // float32 [3] (broadcasts with [2,3], but is smaller)
  dt_tensor* s0 = nullptr;    // float32 0-d
  dt_tensor* e03 = nullptr;   // float32 [0,3]
  // Optional inputs (null when the library cannot make them; rows needing them fail).
  dt_tensor* at = nullptr;    // transpose of a: [3,2], not contiguous
  dt_tensor* a1 = nullptr;    // float32 [2,3] on cpu:1
  // Bad handles.
  dt_tensor* stale = nullptr;      // created, then released
  dt_tensor* foreign_stack = nullptr;
  dt_tensor* foreign_heap = nullptr;
  dt_tensor* interior = nullptr;   // a live handle's address + 8
  dt_tensor* small = nullptr;      // (dt_tensor*)0x10
  int local_int = 42;
  void* heap_block = nullptr;
  float host[6] = {0, 1, 2, 3, 4, 5};
  int deleter_calls = 0;
  Outs o;
  bool ok = false;
  std::string error;

  std::vector<std::pair<const char*, dt_tensor**>> inputs() {
    return {{"a", &a}, {"b", &b}, {"bt", &bt}, {"i32", &i32}, {"bl", &bl}, {"idx", &idx},
            {"idx_bad", &idx_bad}, {"gidx", &gidx}, {"gidx_bad", &gidx_bad}, {"v4", &v4},
            {"v3", &v3}, {"s0", &s0}, {"e03", &e03}, {"at", &at}, {"a1", &a1}};
  }

  Ctx() {
    fill_outs(o);
    heap_block = std::malloc(64);
    std::memset(heap_block, 0x5A, 64);
    foreign_stack = reinterpret_cast<dt_tensor*>(&local_int);
    foreign_heap = static_cast<dt_tensor*>(heap_block);
    small = reinterpret_cast<dt_tensor*>(uintptr_t{0x10});
    // The stale handle is made first, so the next tensor may reuse its slot.
    if (dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &stale) != DT_OK) { fatal("zeros(stale)"); return; }
    if (dt_tensor_release(stale) != DT_OK) { fatal("release(stale)"); return; }
    const float av[6] = {0, 1, 2, 3, 4, 5};
    const float bv[6] = {1, 2, 3, 4, 5, 6};
    const int32_t iv[6] = {0, 1, 2, 3, 4, 5};
    const uint8_t blv[6] = {1, 0, 1, 0, 1, 0};
    const int64_t idxv[2] = {0, 1};
    const int64_t badv[1] = {5};
    const int64_t g0[6] = {0, 0, 0, 0, 0, 0};
    const int64_t g5[6] = {5, 5, 5, 5, 5, 5};
    const float f4[4] = {1, 2, 3, 4};
    const float f1 = 7.0f;
    const int64_t k32[] = {3, 2};
    const int64_t k1[] = {1};
    const int64_t k2[] = {2};
    const int64_t k03[] = {0, 3};
    if (!make(av, sizeof av, k23, 2, DT_FLOAT32, &a, "a")) return;
    if (!make(bv, sizeof bv, k23, 2, DT_FLOAT32, &b, "b")) return;
    if (!make(av, sizeof av, k32, 2, DT_FLOAT32, &bt, "bt")) return;
    if (!make(iv, sizeof iv, k23, 2, DT_INT32, &i32, "i32")) return;
    if (!make(blv, sizeof blv, k23, 2, DT_BOOL, &bl, "bl")) return;
    if (!make(idxv, sizeof idxv, k2, 1, DT_INT64, &idx, "idx")) return;
    if (!make(badv, sizeof badv, k1, 1, DT_INT64, &idx_bad, "idx_bad")) return;
    if (!make(g0, sizeof g0, k23, 2, DT_INT64, &gidx, "gidx")) return;
    if (!make(g5, sizeof g5, k23, 2, DT_INT64, &gidx_bad, "gidx_bad")) return;
    if (!make(f4, sizeof f4, k4, 1, DT_FLOAT32, &v4, "v4")) return;
    if (!make(f4, 3 * sizeof(float), k3, 1, DT_FLOAT32, &v3, "v3")) return;
    if (!make(&f1, sizeof f1, nullptr, 0, DT_FLOAT32, &s0, "s0")) return;
    if (dt_tensor_zeros(k03, 2, DT_FLOAT32, CPU0, &e03) != DT_OK) { fatal("zeros(e03)"); return; }
    if (dt_transpose(a, 0, 1, &at) != DT_OK) at = nullptr;
    if (cpu_device_count() >= 2 &&
        dt_tensor_from_data(av, sizeof av, k23, 2, DT_FLOAT32, CPU1, &a1) != DT_OK)
      a1 = nullptr;
    interior = reinterpret_cast<dt_tensor*>(reinterpret_cast<char*>(a) + 8);
    fill_outs(o);
    ok = true;
  }

  ~Ctx() {
    for (auto& in : inputs())
      if (*in.second) dt_tensor_release(*in.second);
    std::free(heap_block);
  }

  Ctx(const Ctx&) = delete;
  Ctx& operator=(const Ctx&) = delete;

 private:
  void fatal(const char* what) {
    error = std::string("could not build the test context: ") + what + ": " +
            dt_last_error_message();
  }
  bool make(const void* data, size_t nbytes, const int64_t* shape, size_t ndim, dt_dtype dtype,
            dt_tensor** out, const char* name) {
    if (dt_tensor_from_data(data, nbytes, shape, ndim, dtype, CPU0, out) != DT_OK) {
      *out = nullptr;
      fatal(name);
      return false;
    }
    return true;
  }
};

// Contents of a tensor as bytes (empty on failure).
std::vector<unsigned char> contents(const dt_tensor* t) {
  size_t n = 0;
  if (!t || dt_tensor_nbytes(t, &n) != DT_OK) return {};
  std::vector<unsigned char> v(n + 1, 0);
  if (dt_tensor_copy_to_host(t, v.data(), n) != DT_OK) return {};
  v.resize(n);
  return v;
}

// ------------------------------------------------------------------ the table

enum class Needs { None, NoCuda, Cuda, TwoCpus };

struct Case {
  std::string fn;                  // the public function under test
  std::string what;                // the bad argument
  std::vector<dt_status> accept;   // the documented code(s); accept[0] is the main one
  std::function<dt_status(Ctx&)> call;
  Needs needs = Needs::None;
  std::string msg_has;             // the message must contain this (case-insensitive)
  std::string group;               // rows of one group must all return the same code
  std::function<void(Ctx&)> prep;  // runs before the out-parameters are snapshotted
  std::function<void(Ctx&)> post;  // extra checks after a failed call
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fn << "(" << c.what << ")"; }

using Call = std::function<dt_status(Ctx&)>;
using TCall = std::function<dt_status(Ctx&, const dt_tensor*)>;
using DevCall = std::function<dt_status(Ctx&, dt_device)>;
using CtorCall =
    std::function<dt_status(Ctx&, const int64_t*, size_t, dt_dtype, dt_device, dt_tensor**)>;

class Table {
 public:
  std::vector<Case> cases;

  Case& add(const std::string& fn, const std::string& what, std::vector<dt_status> accept,
            Call call) {
    Case c;
    c.fn = fn;
    c.what = what;
    c.accept = std::move(accept);
    c.call = std::move(call);
    cases.push_back(std::move(c));
    return cases.back();
  }

  // A tensor argument `arg` replaced in turn by each bad handle.
  void handles(const std::string& fn, const std::string& arg, TCall call, bool with_null = true) {
    if (with_null) {
      Case& c = add(fn, arg + "=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); });
      c.group = "NULL tensor handle";
    }
    add(fn, arg + "=released", {IH}, [call](Ctx& x) { return call(x, x.stale); }).msg_has =
        "releas";
    add(fn, arg + "=stack_int", {IH}, [call](Ctx& x) { return call(x, x.foreign_stack); });
    add(fn, arg + "=malloc_block", {IH}, [call](Ctx& x) { return call(x, x.foreign_heap); });
    add(fn, arg + "=interior_pointer", {IH}, [call](Ctx& x) { return call(x, x.interior); });
    add(fn, arg + "=small_integer", {IH}, [call](Ctx& x) { return call(x, x.small); });
  }

  // A device argument replaced in turn by each bad device.
  void devices(const std::string& fn, DevCall call, bool from_blob = false) {
    add(fn, "device_type=7", {IA, ID}, [call](Ctx& x) { return call(x, dev(7, 0)); }).group =
        "unknown device type";
    add(fn, "device_type=-1", {IA, ID}, [call](Ctx& x) { return call(x, dev(-1, 0)); }).group =
        "unknown device type";
    add(fn, "device_type=INT32_MAX", {IA, ID},
        [call](Ctx& x) { return call(x, dev(INT32_MAX, 0)); })
        .group = "unknown device type";
    add(fn, "cpu:-1", {IA, ID}, [call](Ctx& x) { return call(x, dev(DT_DEVICE_CPU, -1)); })
        .group = "negative device index";
    add(fn, "cpu:INT32_MIN", {IA, ID},
        [call](Ctx& x) { return call(x, dev(DT_DEVICE_CPU, INT32_MIN)); })
        .group = "negative device index";
    add(fn, "cpu:5", {ID}, [call](Ctx& x) { return call(x, dev(DT_DEVICE_CPU, 5)); });
    add(fn, "cpu:INT32_MAX", {ID}, [call](Ctx& x) { return call(x, dev(DT_DEVICE_CPU, INT32_MAX)); });
    Case& nc = add(fn, "cuda:0_without_cuda", from_blob ? std::vector<dt_status>{NS, DU}
                                                        : std::vector<dt_status>{DU},
                   [call](Ctx& x) { return call(x, dev(DT_DEVICE_CUDA, 0)); });
    nc.needs = Needs::NoCuda;
    Case& c99 = add(fn, "cuda:99", from_blob ? std::vector<dt_status>{NS, ID}
                                             : std::vector<dt_status>{ID},
                    [call](Ctx& x) { return call(x, dev(DT_DEVICE_CUDA, 99)); });
    c99.needs = Needs::Cuda;
  }

  // The common constructor rows (shape, ndim, dtype, device, out).
  void ctor(const std::string& fn, CtorCall call, bool from_blob = false) {
    add(fn, "out=NULL", {IA}, [call](Ctx& x) { return call(x, k23, 2, DT_FLOAT32, CPU0, nullptr); });
    add(fn, "shape=NULL_ndim=2", {IA},
        [call](Ctx& x) { return call(x, nullptr, 2, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "negative_dimension", {IA},
        [call](Ctx& x) { return call(x, kNeg, 2, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "ndim=DT_MAX_DIMS+1", {IA},
        [call](Ctx& x) { return call(x, k17, DT_MAX_DIMS + 1, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "ndim=SIZE_MAX", {IA},
        [call](Ctx& x) { return call(x, k23, SIZE_MAX, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "numel_overflow_INT64_MAXx2", {IA},
        [call](Ctx& x) { return call(x, kOverflow, 2, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "numel_overflow_2^32x2^32", {IA},
        [call](Ctx& x) { return call(x, kOverflow2, 2, DT_FLOAT32, CPU0, &x.o.t); });
    add(fn, "dtype=99", {IA}, [call](Ctx& x) { return call(x, k23, 2, 99, CPU0, &x.o.t); });
    add(fn, "dtype=-1", {IA}, [call](Ctx& x) { return call(x, k23, 2, -1, CPU0, &x.o.t); });
    add(fn, "dtype=INT32_MIN", {IA},
        [call](Ctx& x) { return call(x, k23, 2, INT32_MIN, CPU0, &x.o.t); });
    devices(fn, [call](Ctx& x, dt_device d) { return call(x, k23, 2, DT_FLOAT32, d, &x.o.t); },
            from_blob);
  }

  // f(t, out) style rows: bad handles for t, NULL out.
  void unary(const std::string& fn, std::function<dt_status(const dt_tensor*, dt_tensor**)> f,
             const std::string& arg = "t") {
    handles(fn, arg, [f](Ctx& x, const dt_tensor* t) { return f(t, &x.o.t); });
    add(fn, "out=NULL", {IA}, [f](Ctx& x) { return f(x.a, nullptr); });
  }
};

#define FN(f) #f, f

void add_library_cases(Table& T) {
  // dt_build_info
  T.add("dt_build_info", "buf=NULL_cap=8", {IA}, [](Ctx& x) { return dt_build_info(nullptr, 8, &x.o.sz); });
  // dt_set_num_threads / dt_num_threads
  for (int32_t n : {0, -1, 1025, INT32_MIN, INT32_MAX}) {
    Case& c = T.add("dt_set_num_threads", "n=" + std::to_string(n), {IA},
                    [n](Ctx&) { return dt_set_num_threads(n); });
    c.prep = [](Ctx& x) { dt_num_threads(&x.local_int); };
    c.post = [](Ctx& x) {
      int32_t now = -1;
      EXPECT_EQ(dt_num_threads(&now), DT_OK);
      EXPECT_EQ(now, x.local_int) << "a failed dt_set_num_threads changed the thread count";
    };
  }
  T.add("dt_num_threads", "out=NULL", {IA}, [](Ctx&) { return dt_num_threads(nullptr); });
}

void add_device_cases(Table& T) {
  // dt_device_parse
  T.add("dt_device_parse", "text=NULL", {IA}, [](Ctx& x) { return dt_device_parse(nullptr, &x.o.dev); });
  T.add("dt_device_parse", "out=NULL", {IA}, [](Ctx&) { return dt_device_parse("cpu", nullptr); });
  for (const char* text : {"", "gpu", "cuda:-1", "cuda:x", "cuda:1x", "cpu:", "cuda:",
                           " cpu", "cpu ", "cpu:0:1", "cuda:99999999999999999999",
                           "cuda:2147483648", "cpu:-0x1", ":0", "cudaa", "cuda:01", "cpu:00"}) {
    std::string t = text;
    T.add("dt_device_parse", "text='" + t + "'", {IA},
          [t](Ctx& x) { return dt_device_parse(t.c_str(), &x.o.dev); });
  }
  // dt_device_format: bad values are INVALID_ARGUMENT (documented).
  for (dt_device d : {dev(7, 0), dev(-1, 0), dev(DT_DEVICE_CPU, -1), dev(DT_DEVICE_CUDA, -1),
                      dev(DT_DEVICE_CPU, INT32_MIN)}) {
    T.add("dt_device_format",
          "device={" + std::to_string(d.type) + "," + std::to_string(d.index) + "}", {IA},
          [d](Ctx& x) { return dt_device_format(d, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  }
  T.add("dt_device_format", "buf=NULL_cap=8", {IA},
        [](Ctx& x) { return dt_device_format(CPU0, nullptr, 8, &x.o.sz); });
  // dt_device_count
  T.add("dt_device_count", "out=NULL", {IA}, [](Ctx&) { return dt_device_count(DT_DEVICE_CPU, nullptr); });
  for (int32_t type : {7, -1, INT32_MAX, INT32_MIN}) {
    T.add("dt_device_count", "type=" + std::to_string(type), {IA},
          [type](Ctx& x) { return dt_device_count(type, &x.o.sz); });
  }
  // dt_cuda_status
  T.add("dt_cuda_status", "state=NULL", {IA},
        [](Ctx& x) { return dt_cuda_status(nullptr, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  T.add("dt_cuda_status", "buf=NULL_cap=8", {IA},
        [](Ctx& x) { return dt_cuda_status(&x.o.i32, nullptr, 8, &x.o.sz); });
  // dt_device_name
  T.devices("dt_device_name", [](Ctx& x, dt_device d) {
    return dt_device_name(d, x.o.buf, sizeof x.o.buf, &x.o.sz);
  });
  T.add("dt_device_name", "buf=NULL_cap=8", {IA},
        [](Ctx& x) { return dt_device_name(CPU0, nullptr, 8, &x.o.sz); });
  // dt_device_memory
  T.devices("dt_device_memory",
            [](Ctx& x, dt_device d) { return dt_device_memory(d, &x.o.u64a, &x.o.u64b); });
  T.add("dt_device_memory", "free=NULL", {IA},
        [](Ctx& x) { return dt_device_memory(CPU0, nullptr, &x.o.u64b); });
  T.add("dt_device_memory", "total=NULL", {IA},
        [](Ctx& x) { return dt_device_memory(CPU0, &x.o.u64a, nullptr); });
  T.add("dt_device_memory", "both=NULL", {IA},
        [](Ctx&) { return dt_device_memory(CPU0, nullptr, nullptr); });
  // dt_device_properties
  T.devices("dt_device_properties",
            [](Ctx& x, dt_device d) { return dt_device_properties(d, &x.o.props); });
  T.add("dt_device_properties", "props=NULL", {IA},
        [](Ctx&) { return dt_device_properties(CPU0, nullptr); });
  for (size_t sz : {size_t{0}, size_t{8}, offsetof(dt_device_props, name) - 1}) {
    T.add("dt_device_properties", "struct_size=" + std::to_string(sz), {IA},
          [](Ctx& x) { return dt_device_properties(CPU0, &x.o.props); })
        .prep = [sz](Ctx& x) { x.o.props.struct_size = sz; };
  }
  // dt_try_gpu
  T.add("dt_try_gpu", "out=NULL", {IA}, [](Ctx&) { return dt_try_gpu(0, nullptr); });
  for (int32_t i : {-1, INT32_MIN}) {
    T.add("dt_try_gpu", "i=" + std::to_string(i), {IA}, [i](Ctx& x) { return dt_try_gpu(i, &x.o.dev); });
  }
  // dt_all_gpus / dt_devices_by_free_memory
  using ListFn = dt_status (*)(dt_device*, size_t, size_t*);
  for (auto [name, f] : {std::pair<const char*, ListFn>{FN(dt_all_gpus)},
                         std::pair<const char*, ListFn>{FN(dt_devices_by_free_memory)}}) {
    T.add(name, "count=NULL", {IA}, [f = f](Ctx& x) { return f(x.o.devs, 4, nullptr); });
    T.add(name, "count=NULL_cap=0", {IA}, [f = f](Ctx&) { return f(nullptr, 0, nullptr); });
    T.add(name, "out=NULL_cap=4", {IA}, [f = f](Ctx& x) { return f(nullptr, 4, &x.o.sz); });
  }
  // dt_set_default_device: bad devices, and the default stays cpu:0.
  {
    size_t before = T.cases.size();
    T.devices("dt_set_default_device", [](Ctx&, dt_device d) { return dt_set_default_device(d); });
    for (size_t i = before; i < T.cases.size(); ++i) {
      T.cases[i].post = [](Ctx&) {
        dt_device d{-5, -5};
        EXPECT_EQ(dt_default_device(&d), DT_OK);
        EXPECT_EQ(d.type, DT_DEVICE_CPU) << "a failed dt_set_default_device changed the default";
        EXPECT_EQ(d.index, 0) << "a failed dt_set_default_device changed the default";
      };
    }
  }
  T.add("dt_default_device", "out=NULL", {IA}, [](Ctx&) { return dt_default_device(nullptr); });
  // dt_set_default_dtype / dt_default_dtype
  auto dtype_unchanged = [](Ctx&) {
    dt_dtype d = -5;
    EXPECT_EQ(dt_default_dtype(&d), DT_OK);
    EXPECT_EQ(d, DT_FLOAT32) << "a failed dt_set_default_dtype changed the default";
  };
  for (dt_dtype bad : {99, -1, INT32_MIN, 11}) {
    T.add("dt_set_default_dtype", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx&) { return dt_set_default_dtype(bad); })
        .post = dtype_unchanged;
  }
  // DT_DTYPE_DEFAULT is a sentinel, not a dtype: it cannot become the default.
  T.add("dt_set_default_dtype", "dtype=DT_DTYPE_DEFAULT", {IA},
        [](Ctx&) { return dt_set_default_dtype(DT_DTYPE_DEFAULT); })
      .post = dtype_unchanged;
  for (dt_dtype notfloat : {DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_BOOL}) {
    T.add("dt_set_default_dtype", "non_floating_" + std::to_string(notfloat), {TM},
          [notfloat](Ctx&) { return dt_set_default_dtype(notfloat); })
        .post = dtype_unchanged;
  }
  T.add("dt_default_dtype", "out=NULL", {IA}, [](Ctx&) { return dt_default_dtype(nullptr); });
  // dt_set_allow_tf32 / dt_allow_tf32: only 0 and 1, and a refused value changes nothing.
  for (int32_t bad : {2, -1, INT32_MAX, INT32_MIN}) {
    T.add("dt_set_allow_tf32", "allow=" + std::to_string(bad), {IA}, [bad](Ctx&) { return dt_set_allow_tf32(bad); })
        .post = [](Ctx&) {
      int32_t on = -5;
      EXPECT_EQ(dt_allow_tf32(&on), DT_OK);
      EXPECT_EQ(on, 0) << "a failed dt_set_allow_tf32 changed the setting";
    };
  }
  T.add("dt_allow_tf32", "out=NULL", {IA}, [](Ctx&) { return dt_allow_tf32(nullptr); });
  // Per-device functions.
  T.devices("dt_synchronize", [](Ctx&, dt_device d) { return dt_synchronize(d); });
  T.devices("dt_device_manual_seed", [](Ctx&, dt_device d) { return dt_device_manual_seed(d, 42); });
  T.devices("dt_memory_stats", [](Ctx& x, dt_device d) { return dt_memory_stats(d, &x.o.stats); });
  T.add("dt_memory_stats", "stats=NULL", {IA}, [](Ctx&) { return dt_memory_stats(CPU0, nullptr); });
  for (size_t sz : {size_t{0}, offsetof(dt_mem_stats, allocated_bytes) + 7}) {
    T.add("dt_memory_stats", "struct_size=" + std::to_string(sz), {IA},
          [](Ctx& x) { return dt_memory_stats(CPU0, &x.o.stats); })
        .prep = [sz](Ctx& x) { x.o.stats.struct_size = sz; };
  }
  T.devices("dt_empty_cache", [](Ctx&, dt_device d) { return dt_empty_cache(d); });
}

void add_constructor_cases(Table& T) {
  using Ctor = dt_status (*)(const int64_t*, size_t, dt_dtype, dt_device, dt_tensor**);
  const std::pair<const char*, Ctor> ctors[] = {
      {FN(dt_tensor_empty)}, {FN(dt_tensor_zeros)}, {FN(dt_tensor_ones)},
      {FN(dt_tensor_rand)}, {FN(dt_tensor_randn)}};
  for (auto [name, f] : ctors) {
    T.ctor(name, [f = f](Ctx&, const int64_t* s, size_t n, dt_dtype t, dt_device d,
                         dt_tensor** o) { return f(s, n, t, d, o); });
  }
  // Allocations no machine can serve.
  for (auto [name, f] : {ctors[0], ctors[1]}) {
    T.add(name, "2^60_elements", {OOM},
          [f = f](Ctx& x) { return f(kHuge, 2, DT_FLOAT32, CPU0, &x.o.t); });
  }
  for (auto [name, f] : {ctors[3], ctors[4]}) {
    for (dt_dtype t : {DT_INT32, DT_INT64, DT_BOOL, DT_UINT8}) {
      T.add(name, "non_floating_" + std::to_string(t), {TM},
            [f = f, t](Ctx& x) { return f(k23, 2, t, CPU0, &x.o.t); });
    }
  }
  // dt_tensor_empty_pinned: the constructor rows that do not involve a device.
  T.add("dt_tensor_empty_pinned", "out=NULL", {IA}, [](Ctx&) { return dt_tensor_empty_pinned(k23, 2, DT_FLOAT32, nullptr); });
  T.add("dt_tensor_empty_pinned", "shape=NULL_ndim=2", {IA},
        [](Ctx& x) { return dt_tensor_empty_pinned(nullptr, 2, DT_FLOAT32, &x.o.t); });
  T.add("dt_tensor_empty_pinned", "negative_dimension", {IA},
        [](Ctx& x) { return dt_tensor_empty_pinned(kNeg, 2, DT_FLOAT32, &x.o.t); });
  T.add("dt_tensor_empty_pinned", "ndim=17", {IA},
        [](Ctx& x) { return dt_tensor_empty_pinned(k23, DT_MAX_DIMS + 1, DT_FLOAT32, &x.o.t); });
  T.add("dt_tensor_empty_pinned", "dtype=99", {IA}, [](Ctx& x) { return dt_tensor_empty_pinned(k23, 2, 99, &x.o.t); });
  T.add("dt_tensor_empty_pinned", "without_cuda", {DU},
        [](Ctx& x) { return dt_tensor_empty_pinned(k23, 2, DT_FLOAT32, &x.o.t); })
      .needs = Needs::NoCuda;
  T.add("dt_tensor_empty_pinned", "2^60_elements", {OOM, IA},
        [](Ctx& x) { return dt_tensor_empty_pinned(kHuge, 2, DT_FLOAT32, &x.o.t); })
      .needs = Needs::Cuda;
  T.ctor("dt_tensor_full", [](Ctx&, const int64_t* s, size_t n, dt_dtype t, dt_device d,
                              dt_tensor** o) { return dt_tensor_full(s, n, 1.5, t, d, o); });
  // dt_tensor_arange
  T.add("dt_tensor_arange", "out=NULL", {IA},
        [](Ctx&) { return dt_tensor_arange(0, 10, 1, DT_FLOAT32, CPU0, nullptr); });
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct R { const char* what; double s, e, st; std::vector<dt_status> accept; };
  for (const R& r : {R{"step=0", 0, 10, 0, {IA}}, R{"negative_step_upward", 0, 10, -1, {IA}},
                     R{"positive_step_downward", 10, 0, 1, {IA}}, R{"start=NaN", nan, 10, 1, {IA}},
                     R{"end=inf", 0, inf, 1, {IA}}, R{"end=-inf", 0, -inf, -1, {IA}},
                     R{"step=NaN", 0, 10, nan, {IA}}, R{"step=inf", 0, 10, inf, {IA}},
                     R{"1e300_elements", 0, 1e300, 1, {IA, OOM}},
                     R{"2^62_elements", 0, 4.611686018427388e18, 1, {OOM, IA}}}) {
    double s = r.s, e = r.e, st = r.st;
    T.add("dt_tensor_arange", r.what, r.accept,
          [s, e, st](Ctx& x) { return dt_tensor_arange(s, e, st, DT_FLOAT32, CPU0, &x.o.t); });
  }
  T.add("dt_tensor_arange", "dtype=bool", {TM},
        [](Ctx& x) { return dt_tensor_arange(0, 5, 1, DT_BOOL, CPU0, &x.o.t); });
  for (dt_dtype bad : {99, -1}) {
    T.add("dt_tensor_arange", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_arange(0, 10, 1, bad, CPU0, &x.o.t); });
  }
  T.devices("dt_tensor_arange",
            [](Ctx& x, dt_device d) { return dt_tensor_arange(0, 10, 1, DT_FLOAT32, d, &x.o.t); });
  // dt_tensor_randint / randperm / linspace / eye
  T.ctor("dt_tensor_randint", [](Ctx&, const int64_t* s, size_t n, dt_dtype t, dt_device d, dt_tensor** o) {
    return dt_tensor_randint(0, 2, s, n, t, d, o);
  });
  struct RI { const char* what; int64_t low, high; dt_dtype dtype; const char* msg; };
  for (const RI& r : {RI{"low=high", 3, 3, DT_INT64, "expected low < high"},
                      RI{"low>high", 3, -3, DT_INT64, "expected low < high"},
                      RI{"full_int64_range", I64MIN, I64MAX, DT_INT64, "at most 2^53"},
                      RI{"range=2^53+1", 0, (int64_t{1} << 53) + 1, DT_INT64, "at most 2^53"},
                      RI{"uint8_high=257", 0, 257, DT_UINT8, "uint8 cannot hold 256"},
                      RI{"int8_low=-129", -129, 0, DT_INT8, "int8 cannot hold -129"},
                      RI{"bfloat16_high=258", 0, 258, DT_BFLOAT16, "bfloat16 cannot hold 257 exactly"},
                      RI{"bool_high=3", 0, 3, DT_BOOL, "bool cannot hold 2"}}) {
    const int64_t low = r.low, high = r.high;
    const dt_dtype dtype = r.dtype;
    T.add("dt_tensor_randint", r.what, {IA}, [low, high, dtype](Ctx& x) {
       return dt_tensor_randint(low, high, k23, 2, dtype, CPU0, &x.o.t);
     }).msg_has = r.msg;
  }
  T.add("dt_tensor_randperm", "out=NULL", {IA}, [](Ctx&) { return dt_tensor_randperm(4, DT_INT64, CPU0, nullptr); });
  for (int64_t bad : {int64_t{-1}, I64MIN})
    T.add("dt_tensor_randperm", "n=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_randperm(bad, DT_INT64, CPU0, &x.o.t); }).msg_has = "n must be >= 0";
  T.add("dt_tensor_randperm", "uint8_n=257", {IA}, [](Ctx& x) {
     return dt_tensor_randperm(257, DT_UINT8, CPU0, &x.o.t);
   }).msg_has = "too large for uint8";
  T.add("dt_tensor_randperm", "n=INT64_MAX", {IA, OOM},
        [](Ctx& x) { return dt_tensor_randperm(I64MAX, DT_INT64, CPU0, &x.o.t); });
  T.add("dt_tensor_randperm", "dtype=bool", {IA}, [](Ctx& x) { return dt_tensor_randperm(2, DT_BOOL, CPU0, &x.o.t); });
  for (dt_dtype bad : {99, -1})
    T.add("dt_tensor_randperm", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_randperm(4, bad, CPU0, &x.o.t); });
  T.devices("dt_tensor_randperm", [](Ctx& x, dt_device d) { return dt_tensor_randperm(4, DT_INT64, d, &x.o.t); });
  T.add("dt_tensor_linspace", "out=NULL", {IA},
        [](Ctx&) { return dt_tensor_linspace(0, 1, 5, DT_FLOAT32, CPU0, nullptr); });
  for (int64_t bad : {int64_t{-1}, I64MIN})
    T.add("dt_tensor_linspace", "steps=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_linspace(0, 1, bad, DT_FLOAT32, CPU0, &x.o.t); }).msg_has =
        "steps must be >= 0";
  T.add("dt_tensor_linspace", "steps=INT64_MAX", {IA, OOM},
        [](Ctx& x) { return dt_tensor_linspace(0, 1, I64MAX, DT_FLOAT32, CPU0, &x.o.t); });
  T.add("dt_tensor_linspace", "dtype=bool", {TM},
        [](Ctx& x) { return dt_tensor_linspace(0, 1, 3, DT_BOOL, CPU0, &x.o.t); });
  T.add("dt_tensor_linspace", "int8_end=300", {IA},
        [](Ctx& x) { return dt_tensor_linspace(0, 300, 3, DT_INT8, CPU0, &x.o.t); });
  for (dt_dtype bad : {99, -1})
    T.add("dt_tensor_linspace", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_linspace(0, 1, 3, bad, CPU0, &x.o.t); });
  T.devices("dt_tensor_linspace",
            [](Ctx& x, dt_device d) { return dt_tensor_linspace(0, 1, 3, DT_FLOAT32, d, &x.o.t); });
  T.add("dt_tensor_eye", "out=NULL", {IA}, [](Ctx&) { return dt_tensor_eye(2, 2, DT_FLOAT32, CPU0, nullptr); });
  T.add("dt_tensor_eye", "n=-1", {IA}, [](Ctx& x) { return dt_tensor_eye(-1, 2, DT_FLOAT32, CPU0, &x.o.t); }).msg_has =
      "n and m must be >= 0";
  T.add("dt_tensor_eye", "m=INT64_MIN", {IA},
        [](Ctx& x) { return dt_tensor_eye(2, I64MIN, DT_FLOAT32, CPU0, &x.o.t); });
  T.add("dt_tensor_eye", "n=m=2^32", {IA, OOM},
        [](Ctx& x) { return dt_tensor_eye(int64_t{1} << 32, int64_t{1} << 32, DT_FLOAT32, CPU0, &x.o.t); });
  for (dt_dtype bad : {99, -1})
    T.add("dt_tensor_eye", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_eye(2, 2, bad, CPU0, &x.o.t); });
  T.devices("dt_tensor_eye", [](Ctx& x, dt_device d) { return dt_tensor_eye(2, 3, DT_FLOAT32, d, &x.o.t); });
  // dt_tensor_from_data (nbytes fits float32 [2,3])
  T.ctor("dt_tensor_from_data", [](Ctx& x, const int64_t* s, size_t n, dt_dtype t, dt_device d,
                                   dt_tensor** o) {
    return dt_tensor_from_data(x.host, sizeof x.host, s, n, t, d, o);
  });
  T.add("dt_tensor_from_data", "data=NULL_nbytes=24", {IA}, [](Ctx& x) {
    return dt_tensor_from_data(nullptr, 24, k23, 2, DT_FLOAT32, CPU0, &x.o.t);
  });
  for (size_t nb : {size_t{0}, size_t{23}, size_t{25}, size_t{48}, SIZE_MAX}) {
    T.add("dt_tensor_from_data", "nbytes=" + std::to_string(nb), {IA}, [nb](Ctx& x) {
      return dt_tensor_from_data(x.host, nb, k23, 2, DT_FLOAT32, CPU0, &x.o.t);
    });
  }
  T.add("dt_tensor_from_data", "nbytes_for_float32_but_dtype_float64", {IA}, [](Ctx& x) {
    return dt_tensor_from_data(x.host, sizeof x.host, k23, 2, DT_FLOAT64, CPU0, &x.o.t);
  });
  // dt_tensor_from_blob: the deleter must not run on failure (checked for every row).
  T.ctor("dt_tensor_from_blob",
         [](Ctx& x, const int64_t* s, size_t n, dt_dtype t, dt_device d, dt_tensor** o) {
           return dt_tensor_from_blob(x.host, s, n, nullptr, t, d, counting_deleter,
                                      &x.deleter_calls, o);
         },
         /*from_blob=*/true);
  T.add("dt_tensor_from_blob", "data=NULL", {IA}, [](Ctx& x) {
    return dt_tensor_from_blob(nullptr, k23, 2, nullptr, DT_FLOAT32, CPU0, counting_deleter,
                               &x.deleter_calls, &x.o.t);
  });
  T.add("dt_tensor_from_blob", "negative_stride", {IA}, [](Ctx& x) {
    const int64_t strides[] = {3, -1};
    return dt_tensor_from_blob(x.host, k23, 2, strides, DT_FLOAT32, CPU0, counting_deleter,
                               &x.deleter_calls, &x.o.t);
  });
  T.add("dt_tensor_from_blob", "misaligned_data", {NS}, [](Ctx& x) {
    return dt_tensor_from_blob(reinterpret_cast<char*>(x.host) + 1, k23, 2, nullptr, DT_FLOAT32, CPU0,
                               counting_deleter, &x.deleter_calls, &x.o.t);
  });
  T.add("dt_tensor_from_blob", "stride0_bytes_overflow", {IA}, [](Ctx& x) {
    // INT64_MAX elements fit in int64, but not their 4-byte count (found by fuzz_ops).
    const int64_t shape[] = {INT64_MAX};
    const int64_t strides[] = {0};
    return dt_tensor_from_blob(x.host, shape, 1, strides, DT_FLOAT32, CPU0, counting_deleter,
                               &x.deleter_calls, &x.o.t);
  }).msg_has = "more bytes than fit in int64";
  T.add("dt_tensor_from_blob", "stride=INT64_MIN", {IA}, [](Ctx& x) {
    const int64_t strides[] = {I64MIN, 1};
    return dt_tensor_from_blob(x.host, k23, 2, strides, DT_FLOAT32, CPU0, counting_deleter,
                               &x.deleter_calls, &x.o.t);
  });

  // Like-constructors.
  using Like = dt_status (*)(const dt_tensor*, dt_tensor**);
  const std::pair<const char*, Like> likes[] = {{FN(dt_empty_like)}, {FN(dt_zeros_like)},
                                                {FN(dt_ones_like)}, {FN(dt_rand_like)},
                                                {FN(dt_randn_like)}};
  for (auto [name, f] : likes) {
    T.unary(name, f, "src");
  }
  T.unary("dt_full_like", [](const dt_tensor* t, dt_tensor** o) { return dt_full_like(t, 2.5, o); },
          "src");
  T.add("dt_rand_like", "int32_src", {TM}, [](Ctx& x) { return dt_rand_like(x.i32, &x.o.t); });
  T.add("dt_randn_like", "int32_src", {TM}, [](Ctx& x) { return dt_randn_like(x.i32, &x.o.t); });
  T.add("dt_rand_like", "bool_src", {TM}, [](Ctx& x) { return dt_rand_like(x.bl, &x.o.t); });

  // new_* constructors.
  using New = std::function<dt_status(const dt_tensor*, const int64_t*, size_t, dt_tensor**)>;
  const std::pair<const char*, New> news[] = {
      {FN(dt_tensor_new_empty)}, {FN(dt_tensor_new_zeros)}, {FN(dt_tensor_new_ones)},
      {"dt_tensor_new_full", [](const dt_tensor* t, const int64_t* s, size_t n, dt_tensor** o) {
         return dt_tensor_new_full(t, s, n, 3.0, o);
       }}};
  for (const auto& [name, f] : news) {
    T.handles(name, "src", [f = f](Ctx& x, const dt_tensor* t) { return f(t, k23, 2, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, k23, 2, nullptr); });
    T.add(name, "shape=NULL_ndim=2", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 2, &x.o.t); });
    T.add(name, "negative_dimension", {IA}, [f = f](Ctx& x) { return f(x.a, kNeg, 2, &x.o.t); });
    T.add(name, "ndim=DT_MAX_DIMS+1", {IA},
          [f = f](Ctx& x) { return f(x.a, k17, DT_MAX_DIMS + 1, &x.o.t); });
    T.add(name, "ndim=SIZE_MAX", {IA}, [f = f](Ctx& x) { return f(x.a, k23, SIZE_MAX, &x.o.t); });
    T.add(name, "numel_overflow", {IA}, [f = f](Ctx& x) { return f(x.a, kOverflow, 2, &x.o.t); });
  }

  // retain / release
  T.handles("dt_tensor_retain", "t", [](Ctx&, const dt_tensor* t) {
    return dt_tensor_retain(const_cast<dt_tensor*>(t));
  });
  T.handles("dt_tensor_release", "t",
            [](Ctx&, const dt_tensor* t) { return dt_tensor_release(const_cast<dt_tensor*>(t)); },
            /*with_null=*/false);  // release(NULL) is DT_OK: see Handles.ReleaseNullIsOk
}

void add_query_cases(Table& T) {
  // Queries have typed out-parameters (each points into the sentinel block).
#define DT_QUERY(fn, field)                                                                   \
  T.handles(#fn, "t", [](Ctx& x, const dt_tensor* t) { return fn(t, &x.o.field); });         \
  T.add(#fn, "out=NULL", {IA}, [](Ctx& x) { return fn(x.a, nullptr); });
  DT_QUERY(dt_tensor_ndim, sz)
  DT_QUERY(dt_tensor_dtype, dtype)
  DT_QUERY(dt_tensor_device, dev)
  DT_QUERY(dt_tensor_numel, sz)
  DT_QUERY(dt_tensor_nbytes, sz)
  DT_QUERY(dt_tensor_is_contiguous, i32)
  DT_QUERY(dt_tensor_data_ptr, ptr)
  DT_QUERY(dt_tensor_item, d)
#undef DT_QUERY
  T.add("dt_tensor_item", "numel=6", {IA}, [](Ctx& x) { return dt_tensor_item(x.a, &x.o.d); });
  T.add("dt_tensor_item", "numel=0", {IA}, [](Ctx& x) { return dt_tensor_item(x.e03, &x.o.d); });

  using ShapeFn = dt_status (*)(const dt_tensor*, int64_t*, size_t);
  for (auto [name, f] : {std::pair<const char*, ShapeFn>{FN(dt_tensor_shape)},
                         std::pair<const char*, ShapeFn>{FN(dt_tensor_strides)}}) {
    T.handles(name, "t", [f = f](Ctx& x, const dt_tensor* t) { return f(t, x.o.i64, 4); });
    T.add(name, "cap=1_for_ndim=2", {IA}, [f = f](Ctx& x) { return f(x.a, x.o.i64, 1); });
    T.add(name, "cap=0_for_ndim=2", {IA}, [f = f](Ctx& x) { return f(x.a, x.o.i64, 0); });
    T.add(name, "out=NULL_cap=2", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 2); });
  }

  T.handles("dt_tensor_shares_storage", "a",
            [](Ctx& x, const dt_tensor* t) { return dt_tensor_shares_storage(t, x.b, &x.o.i32); });
  T.handles("dt_tensor_shares_storage", "b",
            [](Ctx& x, const dt_tensor* t) { return dt_tensor_shares_storage(x.a, t, &x.o.i32); });
  T.add("dt_tensor_shares_storage", "out=NULL", {IA},
        [](Ctx& x) { return dt_tensor_shares_storage(x.a, x.b, nullptr); });

  for (dt_dtype bad : {DT_DTYPE_DEFAULT, 11, 99, -1, INT32_MIN}) {
    T.add("dt_dtype_size", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_dtype_size(bad, &x.o.sz); });
  }
  T.add("dt_dtype_size", "out=NULL", {IA}, [](Ctx&) { return dt_dtype_size(DT_FLOAT32, nullptr); });
}

void add_move_cases(Table& T) {
  // DLPack (tests/test_dlpack.cpp has the behaviours; these are the argument checks).
  T.handles("dt_tensor_to_dlpack", "t", [](Ctx& x, const dt_tensor* t) {
    return dt_tensor_to_dlpack(t, reinterpret_cast<DLManagedTensor**>(&x.o.ptr));
  });
  T.add("dt_tensor_to_dlpack", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_to_dlpack(x.a, nullptr); });
  T.add("dt_tensor_from_dlpack", "managed=NULL", {IA}, [](Ctx& x) { return dt_tensor_from_dlpack(nullptr, &x.o.t); });
  T.add("dt_tensor_from_dlpack", "out=NULL", {IA}, [](Ctx&) {
    return dt_tensor_from_dlpack(reinterpret_cast<DLManagedTensor*>(0x1000), nullptr);
  });
  T.handles("dt_tensor_to_dlpack_versioned", "t", [](Ctx& x, const dt_tensor* t) {
    return dt_tensor_to_dlpack_versioned(t, reinterpret_cast<DLManagedTensorVersioned**>(&x.o.ptr));
  });
  T.add("dt_tensor_to_dlpack_versioned", "out=NULL", {IA},
        [](Ctx& x) { return dt_tensor_to_dlpack_versioned(x.a, nullptr); });
  T.add("dt_tensor_from_dlpack_versioned", "managed=NULL", {IA},
        [](Ctx& x) { return dt_tensor_from_dlpack_versioned(nullptr, &x.o.t); });
  T.add("dt_tensor_from_dlpack_versioned", "out=NULL", {IA}, [](Ctx&) {
    return dt_tensor_from_dlpack_versioned(reinterpret_cast<DLManagedTensorVersioned*>(0x1000), nullptr);
  });
  T.handles("dt_tensor_is_read_only", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_is_read_only(t, &x.o.i32); });
  T.add("dt_tensor_is_read_only", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_is_read_only(x.a, nullptr); });

  // dt_tensor_to
  T.handles("dt_tensor_to", "t", [](Ctx& x, const dt_tensor* t) {
    return dt_tensor_to(t, CPU0, DT_FLOAT64, 0, &x.o.t);
  });
  T.add("dt_tensor_to", "out=NULL", {IA},
        [](Ctx& x) { return dt_tensor_to(x.a, CPU0, DT_FLOAT64, 0, nullptr); });
  T.add("dt_tensor_to", "out=NULL_nothing_changes", {IA},
        [](Ctx& x) { return dt_tensor_to(x.a, DEFAULT_DEV, DT_DTYPE_DEFAULT, 0, nullptr); });
  for (dt_dtype bad : {11, 99, -1, INT32_MIN}) {
    T.add("dt_tensor_to", "dtype=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_to(x.a, CPU0, bad, 0, &x.o.t); });
  }
  for (uint32_t flags : {4u, 8u, 0x80000000u, 0xFFFFFFFFu}) {
    T.add("dt_tensor_to", "flags=" + std::to_string(flags), {IA},
          [flags](Ctx& x) { return dt_tensor_to(x.a, CPU0, DT_FLOAT64, flags, &x.o.t); });
  }
  T.devices("dt_tensor_to",
            [](Ctx& x, dt_device d) { return dt_tensor_to(x.a, d, DT_DTYPE_DEFAULT, 0, &x.o.t); });

  // dt_tensor_pin_memory / dt_tensor_is_pinned
  T.handles("dt_tensor_pin_memory", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_pin_memory(t, &x.o.t); });
  T.add("dt_tensor_pin_memory", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_pin_memory(x.a, nullptr); });
  T.add("dt_tensor_pin_memory", "without_cuda", {DU}, [](Ctx& x) { return dt_tensor_pin_memory(x.a, &x.o.t); })
      .needs = Needs::NoCuda;
  T.handles("dt_tensor_is_pinned", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_is_pinned(t, &x.o.i32); });
  T.add("dt_tensor_is_pinned", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_is_pinned(x.a, nullptr); });

  // dt_tensor_copy_to_host (dst = o.bytes, must stay untouched on failure)
  T.handles("dt_tensor_copy_to_host", "t",
            [](Ctx& x, const dt_tensor* t) { return dt_tensor_copy_to_host(t, x.o.bytes, 24); });
  T.add("dt_tensor_copy_to_host", "dst=NULL", {IA},
        [](Ctx& x) { return dt_tensor_copy_to_host(x.a, nullptr, 24); });
  for (size_t nb : {size_t{0}, size_t{23}, size_t{25}, size_t{48}, SIZE_MAX}) {
    T.add("dt_tensor_copy_to_host", "nbytes=" + std::to_string(nb), {IA},
          [nb](Ctx& x) { return dt_tensor_copy_to_host(x.a, x.o.bytes, nb); });
  }
  // dt_tensor_copy_from_host (the target must stay unchanged on failure)
  T.handles("dt_tensor_copy_from_host", "t", [](Ctx& x, const dt_tensor* t) {
    return dt_tensor_copy_from_host(const_cast<dt_tensor*>(t), x.host, sizeof x.host);
  });
  T.add("dt_tensor_copy_from_host", "src=NULL", {IA},
        [](Ctx& x) { return dt_tensor_copy_from_host(x.b, nullptr, 24); });
  for (size_t nb : {size_t{0}, size_t{23}, size_t{25}, SIZE_MAX}) {
    T.add("dt_tensor_copy_from_host", "nbytes=" + std::to_string(nb), {IA},
          [nb](Ctx& x) { return dt_tensor_copy_from_host(x.b, x.host, nb); });
  }
  // dt_copy_ (self must stay unchanged on failure)
  T.handles("dt_copy_", "self", [](Ctx& x, const dt_tensor* t) { return dt_copy_(const_cast<dt_tensor*>(t), x.b, 0); });
  T.handles("dt_copy_", "src", [](Ctx& x, const dt_tensor* t) { return dt_copy_(x.a, t, 0); });
  for (uint32_t flags : {DT_TO_COPY, 4u, 0x80000000u, 0xFFFFFFFFu}) {
    T.add("dt_copy_", "flags=" + std::to_string(flags), {IA}, [flags](Ctx& x) { return dt_copy_(x.a, x.b, flags); });
  }
  T.add("dt_copy_", "src_does_not_broadcast", {SM}, [](Ctx& x) { return dt_copy_(x.a, x.v4, 0); });
  T.add("dt_copy_", "src_larger_than_self", {SM}, [](Ctx& x) { return dt_copy_(x.v3, x.a, 0); });
  T.add("dt_copy_", "self_empty_src_not", {SM}, [](Ctx& x) { return dt_copy_(x.e03, x.a, 0); });
  // dt_tensor_to_string
  T.handles("dt_tensor_to_string", "t", [](Ctx& x, const dt_tensor* t) {
    return dt_tensor_to_string(t, x.o.buf, sizeof x.o.buf, &x.o.sz);
  });
  T.add("dt_tensor_to_string", "buf=NULL_cap=8", {IA},
        [](Ctx& x) { return dt_tensor_to_string(x.a, nullptr, 8, &x.o.sz); });
}

void add_view_cases(Table& T) {
  using ShapeView = dt_status (*)(const dt_tensor*, const int64_t*, size_t, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, ShapeView>{FN(dt_reshape)},
                         std::pair<const char*, ShapeView>{FN(dt_view)}}) {
    T.handles(name, "t", [f = f](Ctx& x, const dt_tensor* t) { return f(t, k6, 1, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, k6, 1, nullptr); });
    T.add(name, "shape=NULL_ndim=2", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 2, &x.o.t); });
    T.add(name, "numel_4_for_6", {SM}, [f = f](Ctx& x) { return f(x.a, k4, 1, &x.o.t); });
    T.add(name, "two_inferred_dims", {SM, IA}, [f = f](Ctx& x) { return f(x.a, kNegNeg, 2, &x.o.t); });
    T.add(name, "dimension=-2", {IA, SM}, [f = f](Ctx& x) { return f(x.a, kMinus2, 2, &x.o.t); });
    T.add(name, "negative_dimension_product_matches", {IA, SM},
          [f = f](Ctx& x) { const int64_t s[] = {-2, -3}; return f(x.a, s, 2, &x.o.t); });
    T.add(name, "ndim=DT_MAX_DIMS+1", {IA, SM},
          [f = f](Ctx& x) { return f(x.a, k17, DT_MAX_DIMS + 1, &x.o.t); });
    T.add(name, "ndim=SIZE_MAX", {IA, SM}, [f = f](Ctx& x) { return f(x.a, k23, SIZE_MAX, &x.o.t); });
    T.add(name, "numel_overflow", {SM, IA}, [f = f](Ctx& x) { return f(x.a, kOverflow, 2, &x.o.t); });
  }
  T.add("dt_view", "non_viewable_strides", {SM}, [](Ctx& x) {
    if (!x.at) return dt_status{-999};
    return dt_view(x.at, k6, 1, &x.o.t);
  });
  // transpose
  T.handles("dt_transpose", "t", [](Ctx& x, const dt_tensor* t) { return dt_transpose(t, 0, 1, &x.o.t); });
  T.add("dt_transpose", "out=NULL", {IA}, [](Ctx& x) { return dt_transpose(x.a, 0, 1, nullptr); });
  for (auto [d0, d1] : std::vector<std::pair<int64_t, int64_t>>{{2, 0}, {0, -3}, {I64MIN, 0}, {0, I64MAX}}) {
    T.add("dt_transpose", "dims=" + std::to_string(d0) + "," + std::to_string(d1), {IA},
          [d0 = d0, d1 = d1](Ctx& x) { return dt_transpose(x.a, d0, d1, &x.o.t); });
  }
  T.add("dt_transpose", "0-d_tensor_dim_1", {IA}, [](Ctx& x) { return dt_transpose(x.s0, 0, 1, &x.o.t); });
  // permute
  const int64_t p10[] = {1, 0};
  T.handles("dt_permute", "t", [p10](Ctx& x, const dt_tensor* t) { return dt_permute(t, p10, 2, &x.o.t); });
  T.add("dt_permute", "out=NULL", {IA}, [p10](Ctx& x) { return dt_permute(x.a, p10, 2, nullptr); });
  T.add("dt_permute", "dims=NULL_ndim=2", {IA}, [](Ctx& x) { return dt_permute(x.a, nullptr, 2, &x.o.t); });
  struct P { const char* what; std::vector<int64_t> dims; std::vector<dt_status> accept; };
  for (const P& p : {P{"repeated", {0, 0}, {IA}}, P{"out_of_range", {0, 2}, {IA}},
                     P{"INT64_MIN", {I64MIN, 0}, {IA}}, P{"too_few", {0}, {IA, SM}},
                     P{"too_many", {0, 1, 2}, {IA, SM}}}) {
    std::vector<int64_t> dims = p.dims;
    T.add("dt_permute", p.what, p.accept,
          [dims](Ctx& x) { return dt_permute(x.a, dims.data(), dims.size(), &x.o.t); });
  }
  // narrow
  T.handles("dt_narrow", "t", [](Ctx& x, const dt_tensor* t) { return dt_narrow(t, 1, 0, 2, &x.o.t); });
  T.add("dt_narrow", "out=NULL", {IA}, [](Ctx& x) { return dt_narrow(x.a, 1, 0, 2, nullptr); });
  struct N { const char* what; int64_t dim, start, len; std::vector<dt_status> accept; };
  for (const N& n : {N{"dim=2", 2, 0, 1, {IA}}, N{"dim=-3", -3, 0, 1, {IA}},
                     N{"dim=INT64_MIN", I64MIN, 0, 1, {IA}},
                     N{"start=4", 1, 4, 0, {IA, SM}}, N{"start=-4", 1, -4, 1, {IA, SM}},
                     N{"length=-1", 1, 0, -1, {IA, SM}}, N{"past_the_end", 1, 2, 2, {IA, SM}},
                     N{"start=INT64_MAX", 1, I64MAX, I64MAX, {IA, SM}},
                     N{"start=INT64_MIN", 1, I64MIN, 1, {IA, SM}},
                     N{"length=INT64_MAX", 1, 1, I64MAX, {IA, SM}}}) {
    int64_t d = n.dim, s = n.start, l = n.len;
    T.add("dt_narrow", n.what, n.accept, [d, s, l](Ctx& x) { return dt_narrow(x.a, d, s, l, &x.o.t); });
  }
  T.add("dt_narrow", "length=-1_message", {IA}, [](Ctx& x) { return dt_narrow(x.a, 1, 0, -1, &x.o.t); }).msg_has =
      "length must be non-negative";
  // squeeze
  T.handles("dt_squeeze", "t", [](Ctx& x, const dt_tensor* t) { return dt_squeeze(t, nullptr, 0, &x.o.t); });
  T.add("dt_squeeze", "out=NULL", {IA}, [](Ctx& x) { return dt_squeeze(x.a, nullptr, 0, nullptr); });
  T.add("dt_squeeze", "dims=NULL_ndims=1", {IA}, [](Ctx& x) { return dt_squeeze(x.a, nullptr, 1, &x.o.t); });
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
    T.add("dt_squeeze", "dim=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { const int64_t d[] = {bad}; return dt_squeeze(x.a, d, 1, &x.o.t); });
  }
  // unsqueeze
  T.handles("dt_unsqueeze", "t", [](Ctx& x, const dt_tensor* t) { return dt_unsqueeze(t, 0, &x.o.t); });
  T.add("dt_unsqueeze", "out=NULL", {IA}, [](Ctx& x) { return dt_unsqueeze(x.a, 0, nullptr); });
  for (int64_t bad : {int64_t{3}, int64_t{-4}, I64MIN, I64MAX}) {
    T.add("dt_unsqueeze", "dim=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_unsqueeze(x.a, bad, &x.o.t); });
  }
  // expand
  T.handles("dt_expand", "t", [](Ctx& x, const dt_tensor* t) { return dt_expand(t, k23, 2, &x.o.t); });
  T.add("dt_expand", "out=NULL", {IA}, [](Ctx& x) { return dt_expand(x.a, k23, 2, nullptr); });
  T.add("dt_expand", "shape=NULL_ndim=2", {IA}, [](Ctx& x) { return dt_expand(x.a, nullptr, 2, &x.o.t); });
  T.add("dt_expand", "non-1_dimension_changes", {SM}, [](Ctx& x) { return dt_expand(x.a, k43, 2, &x.o.t); });
  T.add("dt_expand", "fewer_dimensions", {SM}, [](Ctx& x) { return dt_expand(x.a, k3, 1, &x.o.t); });
  T.add("dt_expand", "bytes_overflow", {IA}, [](Ctx& x) {
    const int64_t shape[] = {INT64_MAX};
    return dt_expand(x.s0, shape, 1, &x.o.t);
  }).msg_has = "more bytes than fit in int64";
  T.add("dt_expand", "dimension=-2", {IA, SM}, [](Ctx& x) { return dt_expand(x.a, kMinus2, 2, &x.o.t); });
  T.add("dt_expand", "ndim=DT_MAX_DIMS+1", {IA, SM},
        [](Ctx& x) { return dt_expand(x.v3, k17ones, DT_MAX_DIMS + 1, &x.o.t); });
  T.add("dt_expand", "ndim=SIZE_MAX", {IA, SM}, [](Ctx& x) { return dt_expand(x.a, k23, SIZE_MAX, &x.o.t); });
  // contiguous
  T.unary("dt_contiguous", dt_contiguous);
  // flatten
  T.handles("dt_flatten", "t", [](Ctx& x, const dt_tensor* t) { return dt_flatten(t, 0, -1, &x.o.t); });
  T.add("dt_flatten", "out=NULL", {IA}, [](Ctx& x) { return dt_flatten(x.a, 0, -1, nullptr); });
  struct F { const char* what; int64_t s, e; std::vector<dt_status> accept; };
  for (const F& f : {F{"start=2", 2, -1, {IA}}, F{"end=2", 0, 2, {IA}}, F{"end=-3", 0, -3, {IA}},
                     F{"start_after_end", 1, 0, {IA, SM}}, F{"start=INT64_MIN", I64MIN, 0, {IA}},
                     F{"end=INT64_MAX", 0, I64MAX, {IA}}}) {
    int64_t s = f.s, e = f.e;
    T.add("dt_flatten", f.what, f.accept, [s, e](Ctx& x) { return dt_flatten(x.a, s, e, &x.o.t); });
  }
}

void add_elementwise_cases(Table& T) {
  using Bin = dt_status (*)(const dt_tensor*, const dt_tensor*, dt_tensor**);
  struct B { const char* name; Bin f; bool matmul; };
  // Every binary op of the table (a new row gets its rows here), and matmul.
#define X(Name, code, c_name, ...) {FN(dt_##c_name), false},
  const B bins[] = {DT_BINARY_OPS(X){FN(dt_matmul), true}};
#undef X
  for (const B& bin : bins) {
    Bin f = bin.f;
    bool mm = bin.matmul;
    auto partner = [mm](Ctx& x) { return mm ? x.bt : x.b; };
    T.handles(bin.name, "a", [f, partner](Ctx& x, const dt_tensor* t) { return f(t, partner(x), &x.o.t); });
    T.handles(bin.name, "b", [f](Ctx& x, const dt_tensor* t) { return f(x.a, t, &x.o.t); });
    T.add(bin.name, "out=NULL", {IA}, [f, partner](Ctx& x) { return f(x.a, partner(x), nullptr); });
    Case& dm = T.add(bin.name, "a_cpu0_b_cpu1", {DM}, [f, mm](Ctx& x) {
      if (!x.a1) return dt_status{-999};
      dt_tensor* other = x.a1;
      dt_tensor* tmp = nullptr;
      if (mm) {  // a [2,3] @ a1^T [3,2]
        if (dt_transpose(x.a1, 0, 1, &tmp) != DT_OK) return dt_status{-999};
        other = tmp;
      }
      dt_status st = f(x.a, other, &x.o.t);
      dt_tensor_release(tmp);
      return st;
    });
    dm.needs = Needs::TwoCpus;
    dm.msg_has = "cpu:1";
    T.add(bin.name, "shapes_do_not_broadcast", {SM}, [f, mm](Ctx& x) {
      return f(x.a, mm ? x.b : x.v4, &x.o.t);
    });
  }
  T.add("dt_sub", "bool_operands", {TM}, [](Ctx& x) { return dt_sub(x.bl, x.bl, &x.o.t); });
  T.add("dt_matmul", "bool_operands", {TM}, [](Ctx& x) {
    dt_tensor* blt = nullptr;
    if (dt_transpose(x.bl, 0, 1, &blt) != DT_OK) return dt_status{-999};
    dt_status st = dt_matmul(x.bl, blt, &x.o.t);
    dt_tensor_release(blt);
    return st;
  });
  T.add("dt_matmul", "0-d_operand", {IA, SM}, [](Ctx& x) { return dt_matmul(x.s0, x.s0, &x.o.t); });

  using Sc = dt_status (*)(const dt_tensor*, double, dt_tensor**);
#define X(Name, code, c_name, ...) {FN(dt_##c_name##_scalar)},
  const std::pair<const char*, Sc> scs[] = {DT_BINARY_OPS(X)};
#undef X
  for (auto [name, f] : scs) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, 2.0, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, 2.0, nullptr); });
  }
  T.add("dt_sub_scalar", "bool_operand", {TM}, [](Ctx& x) { return dt_sub_scalar(x.bl, 1.0, &x.o.t); });

  // In-place: failures must leave self unchanged (checked for every row).
  using Ip = dt_status (*)(dt_tensor*, const dt_tensor*);
#define DT_CONTRACT_ROW(fn) {FN(fn)},
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(DT_CONTRACT_ROW(dt_##c_name##_))
  const std::pair<const char*, Ip> ips[] = {DT_BINARY_OPS(X)};
#undef X
  for (auto [name, f] : ips) {
    T.handles(name, "self", [f = f](Ctx& x, const dt_tensor* t) { return f(const_cast<dt_tensor*>(t), x.b); });
    T.handles(name, "other", [f = f](Ctx& x, const dt_tensor* t) { return f(x.a, t); });
    T.add(name, "shapes_do_not_broadcast", {SM}, [f = f](Ctx& x) { return f(x.a, x.v4); });
    T.add(name, "broadcast_shape_is_not_self's", {SM}, [f = f](Ctx& x) { return f(x.v3, x.a); });
    T.add(name, "float_into_int32_self", {TM}, [f = f](Ctx& x) { return f(x.i32, x.a); });
    Case& dm = T.add(name, "self_cpu0_other_cpu1", {DM}, [f = f](Ctx& x) {
      if (!x.a1) return dt_status{-999};
      return f(x.a, x.a1);
    });
    dm.needs = Needs::TwoCpus;
    dm.msg_has = "cpu:1";
  }
  T.add("dt_div_", "true_division_into_int32_self", {TM}, [](Ctx& x) { return dt_div_(x.i32, x.i32); });
  T.add("dt_sub_", "bool_self", {TM}, [](Ctx& x) { return dt_sub_(x.bl, x.bl); });

  using IpS = dt_status (*)(dt_tensor*, double);
#define X(Name, code, c_name, rule, ...) DT_IF_ARITH_##rule(DT_CONTRACT_ROW(dt_##c_name##_scalar_))
  const std::pair<const char*, IpS> ipss[] = {DT_BINARY_OPS(X)};
#undef X
#undef DT_CONTRACT_ROW
  for (auto [name, f] : ipss) {
    T.handles(name, "self", [f = f](Ctx&, const dt_tensor* t) { return f(const_cast<dt_tensor*>(t), 2.0); });
    T.add(name, "2.5_into_int32_self", {TM}, [f = f](Ctx& x) { return f(x.i32, 2.5); });
  }
  T.add("dt_div_scalar_", "true_division_into_int32_self", {TM},
        [](Ctx& x) { return dt_div_scalar_(x.i32, 2.0); });
  T.add("dt_atan2_", "float_result_into_int32_self", {TM}, [](Ctx& x) { return dt_atan2_(x.i32, x.i32); });
  T.add("dt_atan2_scalar_", "float_result_into_int32_self", {TM}, [](Ctx& x) { return dt_atan2_scalar_(x.i32, 2.0); });

  // The integer-division family: an integer divisor of 0 and bool operands are refused.
  const std::pair<const char*, Bin> int_divs[] = {{FN(dt_fmod)}, {FN(dt_remainder)}, {FN(dt_floor_divide)}};
  for (auto [name, f] : int_divs) {
    Case& z = T.add(name, "int32_divisor_with_a_0", {IA}, [f = f](Ctx& x) {
      dt_tensor* zero = nullptr;
      if (dt_zeros_like(x.i32, &zero) != DT_OK) return dt_status{-999};
      dt_status st = f(x.i32, zero, &x.o.t);
      dt_tensor_release(zero);
      return st;
    });
    z.msg_has = "integer division by zero";
    T.add(name, "bool_operands", {TM}, [f = f](Ctx& x) { return f(x.bl, x.bl, &x.o.t); });
  }
  const std::pair<const char*, Sc> int_div_scalars[] = {
      {FN(dt_fmod_scalar)}, {FN(dt_remainder_scalar)}, {FN(dt_floor_divide_scalar)}};
  for (auto [name, f] : int_div_scalars) {
    Case& z = T.add(name, "int32_by_0", {IA}, [f = f](Ctx& x) { return f(x.i32, 0.0, &x.o.t); });
    z.msg_has = "integer division by zero";
  }
  const std::pair<const char*, Ip> int_div_ips[] = {{FN(dt_fmod_)}, {FN(dt_remainder_)}, {FN(dt_floor_divide_)}};
  for (auto [name, f] : int_div_ips) {
    T.add(name, "int32_self_by_a_0", {IA}, [f = f](Ctx& x) {
      dt_tensor* zero = nullptr;
      if (dt_zeros_like(x.i32, &zero) != DT_OK) return dt_status{-999};
      dt_status st = f(x.i32, zero);
      dt_tensor_release(zero);
      return st;
    });
  }
  const std::pair<const char*, IpS> int_div_ipss[] = {
      {FN(dt_fmod_scalar_)}, {FN(dt_remainder_scalar_)}, {FN(dt_floor_divide_scalar_)}};
  for (auto [name, f] : int_div_ipss)
    T.add(name, "int32_self_by_0", {IA}, [f = f](Ctx& x) { return f(x.i32, 0.0); });

  // where
  T.handles("dt_where", "cond", [](Ctx& x, const dt_tensor* t) { return dt_where(t, x.a, x.b, &x.o.t); });
  T.handles("dt_where", "a", [](Ctx& x, const dt_tensor* t) { return dt_where(x.bl, t, x.b, &x.o.t); });
  T.handles("dt_where", "b", [](Ctx& x, const dt_tensor* t) { return dt_where(x.bl, x.a, t, &x.o.t); });
  T.add("dt_where", "out=NULL", {IA}, [](Ctx& x) { return dt_where(x.bl, x.a, x.b, nullptr); });
  T.add("dt_where", "float_cond", {TM}, [](Ctx& x) { return dt_where(x.a, x.a, x.b, &x.o.t); });
  T.add("dt_where", "shapes_do_not_broadcast", {SM}, [](Ctx& x) { return dt_where(x.bl, x.a, x.v4, &x.o.t); });
  Case& wdm = T.add("dt_where", "b_on_cpu1", {DM}, [](Ctx& x) {
    if (!x.a1) return dt_status{-999};
    return dt_where(x.bl, x.a, x.a1, &x.o.t);
  });
  wdm.needs = Needs::TwoCpus;

  // masked_fill, clamp, triu / tril
  T.handles("dt_masked_fill", "a", [](Ctx& x, const dt_tensor* t) { return dt_masked_fill(t, x.bl, 1.0, &x.o.t); });
  T.handles("dt_masked_fill", "mask", [](Ctx& x, const dt_tensor* t) { return dt_masked_fill(x.a, t, 1.0, &x.o.t); });
  T.add("dt_masked_fill", "out=NULL", {IA}, [](Ctx& x) { return dt_masked_fill(x.a, x.bl, 1.0, nullptr); });
  T.add("dt_masked_fill", "float_mask", {TM}, [](Ctx& x) { return dt_masked_fill(x.a, x.b, 1.0, &x.o.t); });
  T.add("dt_masked_fill", "int32_mask", {TM}, [](Ctx& x) { return dt_masked_fill(x.a, x.i32, 1.0, &x.o.t); });
  T.add("dt_masked_fill", "shapes_do_not_broadcast", {SM}, [](Ctx& x) { return dt_masked_fill(x.v4, x.bl, 1.0, &x.o.t); });
  Case& mfdm = T.add("dt_masked_fill", "a_on_cpu1", {DM}, [](Ctx& x) {
    if (!x.a1) return dt_status{-999};
    return dt_masked_fill(x.a1, x.bl, 1.0, &x.o.t);
  });
  mfdm.needs = Needs::TwoCpus;
  mfdm.msg_has = "cpu:1";
  static const double kLo = -1.0, kHi = 1.0;
  T.handles("dt_clamp", "a", [](Ctx& x, const dt_tensor* t) { return dt_clamp(t, &kLo, &kHi, &x.o.t); });
  T.add("dt_clamp", "out=NULL", {IA}, [](Ctx& x) { return dt_clamp(x.a, &kLo, &kHi, nullptr); });
  Case& nob = T.add("dt_clamp", "no_bound", {IA}, [](Ctx& x) { return dt_clamp(x.a, nullptr, nullptr, &x.o.t); });
  nob.msg_has = "at least one of min and max";
  static const int64_t kPad[] = {1, 2};
  T.handles("dt_pad", "a", [](Ctx& x, const dt_tensor* t) { return dt_pad(t, kPad, 2, nullptr, 0.0, &x.o.t); });
  T.add("dt_pad", "out=NULL", {IA}, [](Ctx& x) { return dt_pad(x.a, kPad, 2, nullptr, 0.0, nullptr); });
  T.add("dt_pad", "pad=NULL_npad=2", {IA}, [](Ctx& x) { return dt_pad(x.a, nullptr, 2, nullptr, 0.0, &x.o.t); });
  T.add("dt_pad", "npad=1", {IA}, [](Ctx& x) { return dt_pad(x.a, kPad, 1, nullptr, 0.0, &x.o.t); }).msg_has = "pairs";
  T.add("dt_pad", "npad=SIZE_MAX", {IA}, [](Ctx& x) {
    return dt_pad(x.a, kPad, SIZE_MAX, nullptr, 0.0, &x.o.t);
  });
  T.add("dt_pad", "mode=mirror", {IA}, [](Ctx& x) {
    return dt_pad(x.a, kPad, 2, "mirror", 0.0, &x.o.t);
  }).msg_has = "unknown mode \"mirror\"";
  T.add("dt_pad", "reflect_with_value", {IA}, [](Ctx& x) {
    return dt_pad(x.a, kPad, 2, "reflect", 1.0, &x.o.t);
  }).msg_has = "takes no value";
  T.add("dt_pad", "reflect_as_wide_as_the_dim", {IA}, [](Ctx& x) {
    static const int64_t wide[] = {3, 0};
    return dt_pad(x.a, wide, 2, "reflect", 0.0, &x.o.t);
  }).msg_has = "dim 1 of [2, 3] (size 3) padded by (3, 0)";
  T.add("dt_pad", "crop_below_zero", {IA}, [](Ctx& x) {
    static const int64_t crop[] = {-2, -2};
    return dt_pad(x.a, crop, 2, "constant", 0.0, &x.o.t);
  }).msg_has = "negative size";
  for (int64_t huge : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()})
    for (const char* mode : {"constant", "replicate"})
      T.add("dt_pad", std::string(mode) + "_pad=" + std::to_string(huge), {IA}, [huge, mode](Ctx& x) {
        const int64_t pads[] = {huge, 1};
        return dt_pad(x.a, pads, 2, mode, 0.0, &x.o.t);
      });
  T.add("dt_pad", "int64_min_and_max", {IA}, [](Ctx& x) {  // they sum to -1: a size of 2, but a crop past the dim
    const int64_t pads[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    return dt_pad(x.a, pads, 2, "replicate", 0.0, &x.o.t);
  }).msg_has = "more elements than the dim has";
  T.add("dt_pad", "int32_value_out_of_range", {IA}, [](Ctx& x) {
    return dt_pad(x.i32, kPad, 2, "constant", 1e10, &x.o.t);
  });
  T.handles("dt_leaky_relu", "a", [](Ctx& x, const dt_tensor* t) { return dt_leaky_relu(t, 0.01, &x.o.t); });
  T.add("dt_leaky_relu", "out=NULL", {IA}, [](Ctx& x) { return dt_leaky_relu(x.a, 0.01, nullptr); });
  T.add("dt_leaky_relu", "int32_operand", {TM}, [](Ctx& x) { return dt_leaky_relu(x.i32, 0.01, &x.o.t); });
  for (double slope : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
    T.add("dt_leaky_relu", "slope=" + std::to_string(slope), {IA},
          [slope](Ctx& x) { return dt_leaky_relu(x.a, slope, &x.o.t); }).msg_has = "negative_slope";
  for (auto [name, f] : {std::pair<const char*, dt_status (*)(const dt_tensor*, int64_t, dt_tensor**)>{FN(dt_triu)},
                         std::pair<const char*, dt_status (*)(const dt_tensor*, int64_t, dt_tensor**)>{FN(dt_tril)}}) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, 0, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, 0, nullptr); });
    T.add(name, "1d_operand", {IA}, [f = f](Ctx& x) { return f(x.v4, 0, &x.o.t); });
    T.add(name, "0d_operand", {IA}, [f = f](Ctx& x) { return f(x.s0, 0, &x.o.t); });
  }

  // unary
  using Un = dt_status (*)(const dt_tensor*, dt_tensor**);
  // Every unary op of the table with an entry point (a new row gets its rows here).
#define DT_CONTRACT_UNARY(fn) {FN(fn)},
#define X(Name, code, c_name, rule, cost, visibility, ...) DT_IF_PUBLIC_##visibility(DT_CONTRACT_UNARY(dt_##c_name))
  const std::pair<const char*, Un> uns[] = {DT_UNARY_OPS(X)};
#undef X
#undef DT_CONTRACT_UNARY
  for (auto [name, f] : uns) T.unary(name, f, "a");
  T.add("dt_neg", "bool_operand", {TM}, [](Ctx& x) { return dt_neg(x.bl, &x.o.t); });
}

void add_reduction_cases(Table& T) {
  using Red = dt_status (*)(const dt_tensor*, const int64_t*, size_t, int32_t, dt_tensor**);
  const std::pair<const char*, Red> reds[] = {{FN(dt_sum)}, {FN(dt_mean)}, {FN(dt_max)},
                                              {FN(dt_min)}, {FN(dt_argmax)}, {FN(dt_argmin)}};
  for (auto [name, f] : reds) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, nullptr, 0, 0, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 0, nullptr); });
    T.add(name, "dims=NULL_ndims=1", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 1, 0, &x.o.t); });
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
      T.add(name, "dim=" + std::to_string(bad), {IA}, [f = f, bad](Ctx& x) {
        const int64_t d[] = {bad};
        return f(x.a, d, 1, 0, &x.o.t);
      });
    }
    T.add(name, "repeated_dim", {IA}, [f = f](Ctx& x) {
      const int64_t d[] = {0, -2};
      return f(x.a, d, 2, 0, &x.o.t);
    });
  }
  for (auto [name, f] : reds)
    T.add(name, "keepdim=2", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 2, &x.o.t); });
  T.add("dt_mean", "int32_operand", {TM}, [](Ctx& x) { return dt_mean(x.i32, nullptr, 0, 0, &x.o.t); });

  // var / std
  using VarStd = dt_status (*)(const dt_tensor*, const int64_t*, size_t, double, int32_t, dt_tensor**);
  const std::pair<const char*, VarStd> vss[] = {{FN(dt_var)}, {FN(dt_std)}};
  for (auto [name, f] : vss) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, nullptr, 0, 1.0, 0, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 1.0, 0, nullptr); });
    T.add(name, "dims=NULL_ndims=1", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 1, 1.0, 0, &x.o.t); });
    T.add(name, "keepdim=-1", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 1.0, -1, &x.o.t); });
    T.add(name, "correction=nan", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, std::nan(""), 0, &x.o.t); });
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
      T.add(name, "dim=" + std::to_string(bad), {IA}, [f = f, bad](Ctx& x) {
        const int64_t d[] = {bad};
        return f(x.a, d, 1, 1.0, 0, &x.o.t);
      });
    }
    T.add(name, "int32_operand", {TM}, [f = f](Ctx& x) { return f(x.i32, nullptr, 0, 1.0, 0, &x.o.t); });
    T.add(name, "bool_operand", {TM}, [f = f](Ctx& x) { return f(x.bl, nullptr, 0, 1.0, 0, &x.o.t); });
  }
  // predicates, logical ops, any / all
  using Un = dt_status (*)(const dt_tensor*, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, Un>{FN(dt_isnan)}, std::pair<const char*, Un>{FN(dt_isinf)},
                         std::pair<const char*, Un>{FN(dt_isfinite)}, std::pair<const char*, Un>{FN(dt_logical_not)}}) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr); });
  }
  using Bin = dt_status (*)(const dt_tensor*, const dt_tensor*, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, Bin>{FN(dt_logical_and)}, std::pair<const char*, Bin>{FN(dt_logical_or)},
                         std::pair<const char*, Bin>{FN(dt_logical_xor)}}) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, x.b, &x.o.t); });
    T.handles(name, "b", [f = f](Ctx& x, const dt_tensor* t) { return f(x.a, t, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, x.b, nullptr); });
    T.add(name, "shapes_do_not_broadcast", {SM}, [f = f](Ctx& x) { return f(x.a, x.v4, &x.o.t); });
  }
  using AnyAll = dt_status (*)(const dt_tensor*, const int64_t*, size_t, int32_t, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, AnyAll>{FN(dt_any)}, std::pair<const char*, AnyAll>{FN(dt_all)}}) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, nullptr, 0, 0, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 0, nullptr); });
    T.add(name, "dims=NULL_ndims=1", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 1, 0, &x.o.t); });
    T.add(name, "keepdim=2", {IA}, [f = f](Ctx& x) { return f(x.a, nullptr, 0, 2, &x.o.t); });
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX})
      T.add(name, "dim=" + std::to_string(bad), {IA}, [f = f, bad](Ctx& x) {
        const int64_t d[] = {bad};
        return f(x.a, d, 1, 0, &x.o.t);
      });
    T.add(name, "dim_repeated", {IA}, [f = f](Ctx& x) {
      const int64_t d[] = {0, -2};
      return f(x.a, d, 2, 0, &x.o.t);
    });
  }

  // flip / roll / repeat
  static const int64_t one_dim[] = {1}, two[] = {2, 2};
  T.handles("dt_flip", "a", [](Ctx& x, const dt_tensor* t) { return dt_flip(t, one_dim, 1, &x.o.t); });
  T.add("dt_flip", "out=NULL", {IA}, [](Ctx& x) { return dt_flip(x.a, one_dim, 1, nullptr); });
  T.add("dt_flip", "dims=NULL_ndims=1", {IA}, [](Ctx& x) { return dt_flip(x.a, nullptr, 1, &x.o.t); });
  T.add("dt_flip", "dim_repeated", {IA}, [](Ctx& x) {
     const int64_t d[] = {0, -2};
     return dt_flip(x.a, d, 2, &x.o.t);
   }).msg_has = "appears multiple times";
  T.handles("dt_roll", "a", [](Ctx& x, const dt_tensor* t) { return dt_roll(t, one_dim, 1, one_dim, 1, &x.o.t); });
  T.add("dt_roll", "out=NULL", {IA}, [](Ctx& x) { return dt_roll(x.a, one_dim, 1, one_dim, 1, nullptr); });
  T.add("dt_roll", "shifts=NULL_nshifts=1", {IA}, [](Ctx& x) { return dt_roll(x.a, nullptr, 1, one_dim, 1, &x.o.t); });
  T.add("dt_roll", "dims=NULL_ndims=1", {IA}, [](Ctx& x) { return dt_roll(x.a, one_dim, 1, nullptr, 1, &x.o.t); });
  T.add("dt_roll", "nshifts=0", {IA}, [](Ctx& x) { return dt_roll(x.a, nullptr, 0, nullptr, 0, &x.o.t); }).msg_has =
      "shifts required";
  T.add("dt_roll", "misaligned", {IA}, [](Ctx& x) { return dt_roll(x.a, one_dim, 1, two, 2, &x.o.t); }).msg_has =
      "must align";
  T.add("dt_roll", "flat_two_shifts", {IA}, [](Ctx& x) { return dt_roll(x.a, two, 2, nullptr, 0, &x.o.t); });
  T.handles("dt_repeat", "a", [](Ctx& x, const dt_tensor* t) { return dt_repeat(t, two, 2, &x.o.t); });
  T.add("dt_repeat", "out=NULL", {IA}, [](Ctx& x) { return dt_repeat(x.a, two, 2, nullptr); });
  T.add("dt_repeat", "repeats=NULL_n=2", {IA}, [](Ctx& x) { return dt_repeat(x.a, nullptr, 2, &x.o.t); });
  T.add("dt_repeat", "too_few", {IA}, [](Ctx& x) { return dt_repeat(x.a, two, 1, &x.o.t); }).msg_has =
      "can not be smaller";
  T.add("dt_repeat", "too_many", {IA}, [](Ctx& x) {
    std::vector<int64_t> r(DT_MAX_DIMS + 1, 1);
    return dt_repeat(x.a, r.data(), r.size(), &x.o.t);
  });
  T.add("dt_repeat", "negative", {IA}, [](Ctx& x) {
     const int64_t r[] = {-1, 1};
     return dt_repeat(x.a, r, 2, &x.o.t);
   }).msg_has = "must be >= 0";
  T.add("dt_repeat", "numel_overflow", {IA, OOM}, [](Ctx& x) {
    const int64_t r[] = {INT64_MAX / 2, INT64_MAX / 3};
    return dt_repeat(x.a, r, 2, &x.o.t);
  });
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
    T.add("dt_flip", "dim=" + std::to_string(bad), {IA}, [bad](Ctx& x) {
      const int64_t d[] = {bad};
      return dt_flip(x.a, d, 1, &x.o.t);
    });
    T.add("dt_roll", "dim=" + std::to_string(bad), {IA}, [bad](Ctx& x) {
      const int64_t d[] = {bad};
      return dt_roll(x.a, one_dim, 1, d, 1, &x.o.t);
    });
  }

  // normalize / cosine_similarity / pairwise_distance
  T.unary("dt_normalize", [](const dt_tensor* t, dt_tensor** o) { return dt_normalize(t, 2.0, 1, 1e-12, o); }, "a");
  T.add("dt_normalize", "int32", {TM}, [](Ctx& x) { return dt_normalize(x.i32, 2.0, 1, 1e-12, &x.o.t); });
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX})
    T.add("dt_normalize", "dim=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_normalize(x.a, 2.0, bad, 1e-12, &x.o.t); });
  T.add("dt_normalize", "ord=NaN", {IA}, [](Ctx& x) { return dt_normalize(x.a, NAN, 1, 1e-12, &x.o.t); });
  using Pair = dt_status (*)(const dt_tensor*, const dt_tensor*, Ctx&);
  const std::pair<const char*, Pair> pairs[] = {
      {"dt_cosine_similarity",
       [](const dt_tensor* a, const dt_tensor* b, Ctx& x) { return dt_cosine_similarity(a, b, 1, 1e-8, &x.o.t); }},
      {"dt_pairwise_distance",
       [](const dt_tensor* a, const dt_tensor* b, Ctx& x) { return dt_pairwise_distance(a, b, 2.0, 1e-6, 0, &x.o.t); }}};
  for (const auto& [name, f] : pairs) {
    T.handles(name, "x1", [f = f](Ctx& x, const dt_tensor* t) { return f(t, x.b, x); });
    T.handles(name, "x2", [f = f](Ctx& x, const dt_tensor* t) { return f(x.a, t, x); });
    T.add(name, "shapes_do_not_broadcast", {SM}, [f = f](Ctx& x) { return f(x.a, x.v4, x); });
    T.add(name, "int32", {TM}, [f = f](Ctx& x) { return f(x.i32, x.i32, x); });
    T.add(name, "x1_cpu1_x2_cpu0", {DM}, [f = f](Ctx& x) {
      if (!x.a1) return dt_status{-999};
      return f(x.a1, x.b, x);
    });
  }
  T.add("dt_cosine_similarity", "out=NULL", {IA}, [](Ctx& x) { return dt_cosine_similarity(x.a, x.b, 1, 1e-8, nullptr); });
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN})
    T.add("dt_cosine_similarity", "dim=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_cosine_similarity(x.a, x.b, bad, 1e-8, &x.o.t); });
  T.add("dt_pairwise_distance", "out=NULL", {IA},
        [](Ctx& x) { return dt_pairwise_distance(x.a, x.b, 2.0, 1e-6, 0, nullptr); });
  T.add("dt_pairwise_distance", "keepdim=2", {IA},
        [](Ctx& x) { return dt_pairwise_distance(x.a, x.b, 2.0, 1e-6, 2, &x.o.t); });
  T.add("dt_pairwise_distance", "ord=NaN", {IA},
        [](Ctx& x) { return dt_pairwise_distance(x.a, x.b, NAN, 1e-6, 0, &x.o.t); });

  // logsumexp / vector_norm
  T.handles("dt_logsumexp", "a", [](Ctx& x, const dt_tensor* t) { return dt_logsumexp(t, nullptr, 0, 0, &x.o.t); });
  T.add("dt_logsumexp", "out=NULL", {IA}, [](Ctx& x) { return dt_logsumexp(x.a, nullptr, 0, 0, nullptr); });
  T.add("dt_logsumexp", "dims=NULL_ndims=1", {IA}, [](Ctx& x) { return dt_logsumexp(x.a, nullptr, 1, 0, &x.o.t); });
  T.add("dt_logsumexp", "keepdim=2", {IA}, [](Ctx& x) { return dt_logsumexp(x.a, nullptr, 0, 2, &x.o.t); });
  T.handles("dt_vector_norm", "a", [](Ctx& x, const dt_tensor* t) { return dt_vector_norm(t, 2, nullptr, 0, 0, &x.o.t); });
  T.add("dt_vector_norm", "out=NULL", {IA}, [](Ctx& x) { return dt_vector_norm(x.a, 2, nullptr, 0, 0, nullptr); });
  T.add("dt_vector_norm", "dims=NULL_ndims=1", {IA}, [](Ctx& x) { return dt_vector_norm(x.a, 2, nullptr, 1, 0, &x.o.t); });
  T.add("dt_vector_norm", "keepdim=-1", {IA}, [](Ctx& x) { return dt_vector_norm(x.a, 2, nullptr, 0, -1, &x.o.t); });
  T.add("dt_vector_norm", "ord=nan", {IA}, [](Ctx& x) {
     return dt_vector_norm(x.a, std::nan(""), nullptr, 0, 0, &x.o.t);
   }).msg_has = "ord must be a number";
  T.add("dt_vector_norm", "int32_operand", {TM}, [](Ctx& x) { return dt_vector_norm(x.i32, 2, nullptr, 0, 0, &x.o.t); });
  T.add("dt_vector_norm", "bool_operand", {TM}, [](Ctx& x) { return dt_vector_norm(x.bl, 2, nullptr, 0, 0, &x.o.t); });
  T.add("dt_vector_norm", "inf_over_empty_extent", {IA}, [](Ctx& x) {
     const int64_t d[] = {0};
     return dt_vector_norm(x.e03, INFINITY, d, 1, 0, &x.o.t);
   }).msg_has = "no identity";
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
    T.add("dt_logsumexp", "dim=" + std::to_string(bad), {IA}, [bad](Ctx& x) {
      const int64_t d[] = {bad};
      return dt_logsumexp(x.a, d, 1, 0, &x.o.t);
    });
    T.add("dt_vector_norm", "dim=" + std::to_string(bad), {IA}, [bad](Ctx& x) {
      const int64_t d[] = {bad};
      return dt_vector_norm(x.a, 2, d, 1, 0, &x.o.t);
    });
  }
  T.add("dt_logsumexp", "dim_repeated", {IA}, [](Ctx& x) {
    const int64_t d[] = {1, -1};
    return dt_logsumexp(x.a, d, 2, 0, &x.o.t);
  });
  T.add("dt_vector_norm", "dim_repeated", {IA}, [](Ctx& x) {
    const int64_t d[] = {0, 0};
    return dt_vector_norm(x.a, 1, d, 2, 0, &x.o.t);
  });
  for (auto [name, f] : {reds[2], reds[3], reds[4], reds[5]}) {
    T.add(name, "empty_extent", {SM}, [f = f](Ctx& x) {
      const int64_t d[] = {0};
      return f(x.e03, d, 1, 0, &x.o.t);
    });
    T.add(name, "empty_all", {SM}, [f = f](Ctx& x) { return f(x.e03, nullptr, 0, 0, &x.o.t); });
  }
  for (auto [name, f] : {reds[4], reds[5]}) {
    T.add(name, "two_dims", {IA}, [f = f](Ctx& x) {
      const int64_t d[] = {0, 1};
      return f(x.a, d, 2, 0, &x.o.t);
    });
  }
  using Soft = dt_status (*)(const dt_tensor*, int64_t, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, Soft>{FN(dt_softmax)}, std::pair<const char*, Soft>{FN(dt_log_softmax)},
                         std::pair<const char*, Soft>{FN(dt_cumsum)}}) {
    T.handles(name, "a", [f = f](Ctx& x, const dt_tensor* t) { return f(t, 1, &x.o.t); });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, 1, nullptr); });
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
      T.add(name, "dim=" + std::to_string(bad), {IA}, [f = f, bad](Ctx& x) { return f(x.a, bad, &x.o.t); });
    }
  }
  T.add("dt_softmax", "int32_operand", {TM}, [](Ctx& x) { return dt_softmax(x.i32, 1, &x.o.t); });
  T.add("dt_log_softmax", "int32_operand", {TM}, [](Ctx& x) { return dt_log_softmax(x.i32, 1, &x.o.t); });

  // sort, argsort, topk: values and indices are both untouched when a call fails
  T.handles("dt_sort", "a", [](Ctx& x, const dt_tensor* t) { return dt_sort(t, 1, 0, &x.o.ts[0], &x.o.ts[1]); });
  T.handles("dt_argsort", "a", [](Ctx& x, const dt_tensor* t) { return dt_argsort(t, 1, 0, &x.o.t); });
  T.handles("dt_topk", "a", [](Ctx& x, const dt_tensor* t) { return dt_topk(t, 1, 1, 1, &x.o.ts[0], &x.o.ts[1]); });
  T.add("dt_sort", "values=NULL", {IA}, [](Ctx& x) { return dt_sort(x.a, 1, 0, nullptr, &x.o.ts[1]); });
  T.add("dt_sort", "indices=NULL", {IA}, [](Ctx& x) { return dt_sort(x.a, 1, 0, &x.o.ts[0], nullptr); });
  T.add("dt_sort", "values==indices", {IA}, [](Ctx& x) { return dt_sort(x.a, 1, 1, &x.o.ts[0], &x.o.ts[0]); });
  T.add("dt_argsort", "out=NULL", {IA}, [](Ctx& x) { return dt_argsort(x.a, 1, 0, nullptr); });
  T.add("dt_topk", "values=NULL", {IA}, [](Ctx& x) { return dt_topk(x.a, 1, 1, 1, nullptr, &x.o.ts[1]); });
  T.add("dt_topk", "indices=NULL", {IA}, [](Ctx& x) { return dt_topk(x.a, 1, 1, 1, &x.o.ts[0], nullptr); });
  T.add("dt_topk", "values==indices", {IA}, [](Ctx& x) { return dt_topk(x.a, 1, 1, 0, &x.o.ts[1], &x.o.ts[1]); });
  for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
    const std::string row = "dim=" + std::to_string(bad);
    T.add("dt_sort", row, {IA}, [bad](Ctx& x) { return dt_sort(x.a, bad, 0, &x.o.ts[0], &x.o.ts[1]); });
    T.add("dt_argsort", row, {IA}, [bad](Ctx& x) { return dt_argsort(x.a, bad, 1, &x.o.t); });
    T.add("dt_topk", row, {IA}, [bad](Ctx& x) { return dt_topk(x.a, 1, bad, 1, &x.o.ts[0], &x.o.ts[1]); });
  }
  for (int64_t k : {int64_t{-1}, int64_t{4}, I64MIN, I64MAX}) {  // a's dim 1 has 3 elements
    T.add("dt_topk", "k=" + std::to_string(k), {IA},
          [k](Ctx& x) { return dt_topk(x.a, k, 1, 1, &x.o.ts[0], &x.o.ts[1]); });
  }
  T.add("dt_topk", "bool_operand", {TM}, [](Ctx& x) { return dt_topk(x.bl, 1, 1, 1, &x.o.ts[0], &x.o.ts[1]); });
}

void add_join_index_cases(Table& T) {
  using Join = dt_status (*)(const dt_tensor* const*, size_t, int64_t, dt_tensor**);
  for (auto [name, f] : {std::pair<const char*, Join>{FN(dt_cat)}, std::pair<const char*, Join>{FN(dt_stack)}}) {
    T.handles(name, "tensors[1]", [f = f](Ctx& x, const dt_tensor* t) {
      const dt_tensor* ts[] = {x.a, t};
      return f(ts, 2, 0, &x.o.t);
    });
    T.handles(name, "tensors[0]", [f = f](Ctx& x, const dt_tensor* t) {
      const dt_tensor* ts[] = {t, x.a};
      return f(ts, 2, 0, &x.o.t);
    });
    T.add(name, "tensors=NULL_n=2", {IA}, [f = f](Ctx& x) { return f(nullptr, 2, 0, &x.o.t); });
    T.add(name, "n=0", {IA}, [f = f](Ctx& x) {
      const dt_tensor* ts[] = {x.a};
      return f(ts, 0, 0, &x.o.t);
    });
    T.add(name, "out=NULL", {IA}, [f = f](Ctx& x) {
      const dt_tensor* ts[] = {x.a, x.b};
      return f(ts, 2, 0, nullptr);
    });
    for (int64_t bad : {int64_t{5}, int64_t{-5}, I64MIN, I64MAX}) {
      T.add(name, "dim=" + std::to_string(bad), {IA}, [f = f, bad](Ctx& x) {
        const dt_tensor* ts[] = {x.a, x.b};
        return f(ts, 2, bad, &x.o.t);
      });
    }
    T.add(name, "shapes_differ", {SM}, [f = f](Ctx& x) {
      const dt_tensor* ts[] = {x.a, x.v4};
      return f(ts, 2, 0, &x.o.t);
    });
    Case& dm = T.add(name, "devices_differ", {DM}, [f = f](Ctx& x) {
      if (!x.a1) return dt_status{-999};
      const dt_tensor* ts[] = {x.a, x.a1};
      return f(ts, 2, 0, &x.o.t);
    });
    dm.needs = Needs::TwoCpus;
  }

  using Split = dt_status (*)(const dt_tensor*, int64_t, int64_t, dt_tensor**, size_t, size_t*);
  for (auto [name, f] : {std::pair<const char*, Split>{FN(dt_chunk)}, std::pair<const char*, Split>{FN(dt_split)}}) {
    T.handles(name, "t", [f = f](Ctx& x, const dt_tensor* t) { return f(t, 2, 1, x.o.ts, 4, &x.o.sz); });
    T.add(name, "count=NULL", {IA}, [f = f](Ctx& x) { return f(x.a, 2, 1, x.o.ts, 4, nullptr); });
    T.add(name, "outs=NULL_cap=4", {IA}, [f = f](Ctx& x) { return f(x.a, 2, 1, nullptr, 4, &x.o.sz); });
    for (int64_t bad : {int64_t{-1}, I64MIN}) {
      T.add(name, "size_or_chunks=" + std::to_string(bad), {IA},
            [f = f, bad](Ctx& x) { return f(x.a, bad, 1, x.o.ts, 4, &x.o.sz); });
    }
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
      T.add(name, "dim=" + std::to_string(bad), {IA},
            [f = f, bad](Ctx& x) { return f(x.a, 2, bad, x.o.ts, 4, &x.o.sz); });
    }
  }
  T.add("dt_chunk", "chunks=0", {IA}, [](Ctx& x) { return dt_chunk(x.a, 0, 1, x.o.ts, 4, &x.o.sz); });
  T.add("dt_split", "split_size=0_non-empty_dim", {IA},
        [](Ctx& x) { return dt_split(x.a, 0, 1, x.o.ts, 4, &x.o.sz); });

  using Idx = dt_status (*)(const dt_tensor*, int64_t, const dt_tensor*, dt_tensor**);
  struct I { const char* name; Idx f; };
  for (const I& i : {I{FN(dt_index_select)}, I{FN(dt_gather)}}) {
    Idx f = i.f;
    bool gather = std::string(i.name) == "dt_gather";
    auto good = [gather](Ctx& x) { return gather ? x.gidx : x.idx; };
    T.handles(i.name, "t", [f, good](Ctx& x, const dt_tensor* t) { return f(t, 0, good(x), &x.o.t); });
    T.handles(i.name, "index", [f](Ctx& x, const dt_tensor* t) { return f(x.a, 0, t, &x.o.t); });
    T.add(i.name, "out=NULL", {IA}, [f, good](Ctx& x) { return f(x.a, 0, good(x), nullptr); });
    for (int64_t bad : {int64_t{2}, int64_t{-3}, I64MIN, I64MAX}) {
      T.add(i.name, "dim=" + std::to_string(bad), {IA},
            [f, good, bad](Ctx& x) { return f(x.a, bad, good(x), &x.o.t); });
    }
    T.add(i.name, "index_out_of_range", {IA},
          [f, gather](Ctx& x) { return f(x.a, 0, gather ? x.gidx_bad : x.idx_bad, &x.o.t); });
    T.add(i.name, "float_index", {TM}, [f, gather](Ctx& x) { return f(x.a, 0, gather ? x.b : x.v3, &x.o.t); });
    Case& dm = T.add(i.name, "t_on_cpu1", {DM}, [f, good](Ctx& x) {
      if (!x.a1) return dt_status{-999};
      return f(x.a1, 0, good(x), &x.o.t);
    });
    dm.needs = Needs::TwoCpus;
  }
  T.add("dt_gather", "index_ndim_differs", {IA, SM}, [](Ctx& x) { return dt_gather(x.a, 0, x.idx, &x.o.t); });

  // index_add(a, 0, idx = {0, 1}, b) and scatter_add(a, 0, gidx, b) are valid.
  T.handles("dt_index_add", "t", [](Ctx& x, const dt_tensor* t) { return dt_index_add(t, 0, x.idx, x.b, &x.o.t); });
  T.handles("dt_index_add", "index", [](Ctx& x, const dt_tensor* t) { return dt_index_add(x.a, 0, t, x.b, &x.o.t); });
  T.handles("dt_index_add", "source", [](Ctx& x, const dt_tensor* t) { return dt_index_add(x.a, 0, x.idx, t, &x.o.t); });
  T.add("dt_index_add", "out=NULL", {IA}, [](Ctx& x) { return dt_index_add(x.a, 0, x.idx, x.b, nullptr); });
  T.add("dt_index_add", "dim=2", {IA}, [](Ctx& x) { return dt_index_add(x.a, 2, x.idx, x.b, &x.o.t); });
  T.add("dt_index_add", "source_dtype_differs", {TM}, [](Ctx& x) { return dt_index_add(x.a, 0, x.idx, x.i32, &x.o.t); });
  T.add("dt_index_add", "source_shape_differs", {SM}, [](Ctx& x) { return dt_index_add(x.a, 0, x.idx, x.v3, &x.o.t); });
  T.add("dt_index_add", "float_index", {TM}, [](Ctx& x) { return dt_index_add(x.a, 1, x.v3, x.b, &x.o.t); });
  Case& ia_dm = T.add("dt_index_add", "t_on_cpu1", {DM}, [](Ctx& x) {
    if (!x.a1) return dt_status{-999};
    return dt_index_add(x.a1, 0, x.idx, x.b, &x.o.t);
  });
  ia_dm.needs = Needs::TwoCpus;
  // one_hot (x.idx: int64 {0, 1}) / multinomial (x.a: float32 [2,3] = 0..5, a zero weight in row 0)
  T.handles("dt_one_hot", "indices", [](Ctx& x, const dt_tensor* t) { return dt_one_hot(t, 3, &x.o.t); });
  T.add("dt_one_hot", "out=NULL", {IA}, [](Ctx& x) { return dt_one_hot(x.idx, 3, nullptr); });
  T.add("dt_one_hot", "float_indices", {TM}, [](Ctx& x) { return dt_one_hot(x.a, 3, &x.o.t); }).msg_has =
      "expected int64 class indices but got float32";
  T.add("dt_one_hot", "int32_indices", {TM}, [](Ctx& x) { return dt_one_hot(x.i32, 6, &x.o.t); });
  for (int64_t bad : {int64_t{-2}, I64MIN})
    T.add("dt_one_hot", "num_classes=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_one_hot(x.idx, bad, &x.o.t); }).msg_has = "num_classes must be -1";
  T.add("dt_one_hot", "num_classes=1_index_1", {IA}, [](Ctx& x) { return dt_one_hot(x.idx, 1, &x.o.t); }).msg_has =
      "class value 1 is not smaller than num_classes (1)";
  T.add("dt_one_hot", "num_classes=INT64_MAX", {IA, OOM}, [](Ctx& x) { return dt_one_hot(x.idx, I64MAX, &x.o.t); });
  T.unary("dt_nonzero", [](const dt_tensor* t, dt_tensor** o) { return dt_nonzero(t, o); }, "a");
  T.handles("dt_masked_select", "a", [](Ctx& x, const dt_tensor* t) { return dt_masked_select(t, x.bl, &x.o.t); });
  T.handles("dt_masked_select", "mask", [](Ctx& x, const dt_tensor* t) { return dt_masked_select(x.a, t, &x.o.t); });
  T.add("dt_masked_select", "out=NULL", {IA}, [](Ctx& x) { return dt_masked_select(x.a, x.bl, nullptr); });
  T.add("dt_masked_select", "float_mask", {TM}, [](Ctx& x) { return dt_masked_select(x.a, x.b, &x.o.t); }).msg_has =
      "expected a bool mask, got float32";
  T.add("dt_masked_select", "int32_mask", {TM}, [](Ctx& x) { return dt_masked_select(x.a, x.i32, &x.o.t); });
  T.add("dt_masked_select", "mask_does_not_broadcast", {SM}, [](Ctx& x) {
    const int64_t four = 4;
    dt_tensor* m = nullptr;
    if (dt_tensor_ones(&four, 1, DT_BOOL, CPU0, &m) != DT_OK) return dt_status{-999};
    const dt_status st = dt_masked_select(x.a, m, &x.o.t);
    dt_tensor_release(m);
    return st;
  });
  T.add("dt_masked_select", "a_cpu1_mask_cpu0", {DM}, [](Ctx& x) {
    if (!x.a1) return dt_status{-999};
    return dt_masked_select(x.a1, x.bl, &x.o.t);
  });
  // unique (its three out-parameters: no out written on failure) / bincount (x.idx: int64 {0, 1})
  T.handles("dt_unique", "a", [](Ctx& x, const dt_tensor* t) { return dt_unique(t, &x.o.t, nullptr, nullptr); });
  T.add("dt_unique", "values=NULL", {IA}, [](Ctx& x) { return dt_unique(x.a, nullptr, &x.o.t, nullptr); });
  T.add("dt_unique", "values=inverse", {IA}, [](Ctx& x) { return dt_unique(x.a, &x.o.t, &x.o.t, nullptr); }).msg_has =
      "distinct pointers";
  T.add("dt_unique", "inverse=counts", {IA}, [](Ctx& x) {
     static dt_tensor* values = nullptr;
     return dt_unique(x.a, &values, &x.o.t, &x.o.t);
   }).msg_has = "distinct pointers";
  T.handles("dt_bincount", "a", [](Ctx& x, const dt_tensor* t) { return dt_bincount(t, nullptr, 0, &x.o.t); });
  T.handles("dt_bincount", "weights", [](Ctx& x, const dt_tensor* t) { return dt_bincount(x.idx, t, 0, &x.o.t); },
            /*with_null=*/false);  // NULL weights: none
  T.add("dt_bincount", "out=NULL", {IA}, [](Ctx& x) { return dt_bincount(x.idx, nullptr, 0, nullptr); });
  T.add("dt_bincount", "float_values", {TM}, [](Ctx& x) { return dt_bincount(x.v3, nullptr, 0, &x.o.t); }).msg_has =
      "expected integer values, got float32";
  T.add("dt_bincount", "bool_values", {TM}, [](Ctx& x) { return dt_bincount(x.bl, nullptr, 0, &x.o.t); });
  T.add("dt_bincount", "2-d_values", {IA}, [](Ctx& x) { return dt_bincount(x.gidx, nullptr, 0, &x.o.t); }).msg_has =
      "expected a 1-d tensor";
  for (int64_t bad : {int64_t{-1}, I64MIN})
    T.add("dt_bincount", "minlength=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_bincount(x.idx, nullptr, bad, &x.o.t); }).msg_has = "minlength must be >= 0";
  T.add("dt_bincount", "minlength=INT64_MAX", {IA, OOM},
        [](Ctx& x) { return dt_bincount(x.idx, nullptr, I64MAX, &x.o.t); });
  T.add("dt_bincount", "weights_of_another_length", {IA}, [](Ctx& x) {
     return dt_bincount(x.idx, x.v3, 0, &x.o.t);
   }).msg_has = "weights must be 1-d with the input's length 2";
  T.add("dt_bincount", "weights_2-d", {IA}, [](Ctx& x) { return dt_bincount(x.idx, x.a, 0, &x.o.t); });
  T.add("dt_bincount", "weights_on_cpu1", {DM}, [](Ctx& x) {  // the device is checked first
    if (!x.a1) return dt_status{-999};
    return dt_bincount(x.idx, x.a1, 0, &x.o.t);
  });
  T.handles("dt_multinomial", "probs", [](Ctx& x, const dt_tensor* t) { return dt_multinomial(t, 1, 1, &x.o.t); });
  T.add("dt_multinomial", "out=NULL", {IA}, [](Ctx& x) { return dt_multinomial(x.a, 1, 1, nullptr); });
  for (int32_t bad : {2, -1})
    T.add("dt_multinomial", "replacement=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_multinomial(x.a, 1, bad, &x.o.t); });
  for (int64_t bad : {int64_t{0}, int64_t{-1}, I64MIN})
    T.add("dt_multinomial", "num_samples=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_multinomial(x.a, bad, 1, &x.o.t); }).msg_has = "num_samples must be >= 1";
  T.add("dt_multinomial", "4_of_3_without_replacement", {IA}, [](Ctx& x) {
     return dt_multinomial(x.a, 4, 0, &x.o.t);
   }).msg_has = "cannot draw 4 samples from 3 categories";
  T.add("dt_multinomial", "num_samples=INT64_MAX_with_replacement", {IA, OOM},
        [](Ctx& x) { return dt_multinomial(x.a, I64MAX, 1, &x.o.t); });
  T.add("dt_multinomial", "int32_probs", {TM}, [](Ctx& x) { return dt_multinomial(x.i32, 1, 1, &x.o.t); });
  T.add("dt_multinomial", "0-d_probs", {IA}, [](Ctx& x) { return dt_multinomial(x.s0, 1, 1, &x.o.t); });
  T.handles("dt_scatter_add", "t", [](Ctx& x, const dt_tensor* t) { return dt_scatter_add(t, 0, x.gidx, x.b, &x.o.t); });
  T.handles("dt_scatter_add", "index", [](Ctx& x, const dt_tensor* t) { return dt_scatter_add(x.a, 0, t, x.b, &x.o.t); });
  T.handles("dt_scatter_add", "src", [](Ctx& x, const dt_tensor* t) { return dt_scatter_add(x.a, 0, x.gidx, t, &x.o.t); });
  T.add("dt_scatter_add", "out=NULL", {IA}, [](Ctx& x) { return dt_scatter_add(x.a, 0, x.gidx, x.b, nullptr); });
  T.add("dt_scatter_add", "dim=-3", {IA}, [](Ctx& x) { return dt_scatter_add(x.a, -3, x.gidx, x.b, &x.o.t); });
  T.add("dt_scatter_add", "index_out_of_range", {IA},
        [](Ctx& x) { return dt_scatter_add(x.a, 0, x.gidx_bad, x.b, &x.o.t); });
  T.add("dt_scatter_add", "src_dtype_differs", {TM}, [](Ctx& x) { return dt_scatter_add(x.a, 0, x.gidx, x.i32, &x.o.t); });
  T.add("dt_scatter_add", "index_ndim_differs", {SM}, [](Ctx& x) { return dt_scatter_add(x.a, 0, x.idx, x.b, &x.o.t); });
  Case& sa_dm = T.add("dt_scatter_add", "t_on_cpu1", {DM}, [](Ctx& x) {
    if (!x.a1) return dt_status{-999};
    return dt_scatter_add(x.a1, 0, x.gidx, x.b, &x.o.t);
  });
  sa_dm.needs = Needs::TwoCpus;
}

// ---- state dicts and safetensors files (dt_state_dict_*, dt_safetensors_*)

// A temporary directory holding a valid safetensors file (one F32 [1] tensor "w") and a
// malformed one, made once and removed at exit.
struct ContractFiles {
  std::string dir, valid, bad, missing_dir;
  ContractFiles() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/dt_contract_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return;
    dir = buf.data();
    valid = dir + "/valid.safetensors";
    bad = dir + "/bad.safetensors";
    missing_dir = dir + "/no/such/dir/x.safetensors";
    std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string file(8, '\0');
    for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    file += header + std::string("\0\0\x80\x3f", 4);
    std::ofstream(valid, std::ios::binary) << file;
    std::ofstream(bad, std::ios::binary) << file.substr(0, 20);  // truncated header
  }
  ~ContractFiles() {
    std::remove(valid.c_str());
    std::remove(bad.c_str());
    std::remove(dir.c_str());
  }
};
const ContractFiles& contract_files() {
  static const ContractFiles files;
  return files;
}

// A state dict holding x.a as "w", released after the call.
struct LiveStateDict {
  dt_state_dict* p = nullptr;
  explicit LiveStateDict(Ctx& x) {
    if (dt_state_dict_new(&p) == DT_OK) dt_state_dict_set(p, "w", x.a);
  }
  ~LiveStateDict() { dt_state_dict_release(p); }
};

void add_state_dict_cases(Table& T) {
  using SDCall = std::function<dt_status(Ctx&, dt_state_dict*)>;
  // A state-dict argument replaced in turn by each bad handle, a tensor handle included.
  auto sd_handles = [&T](const std::string& fn, SDCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, "sd=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL state dict handle";
    T.add(fn, "sd=released", {IH}, [call](Ctx& x) {
       dt_state_dict* s = nullptr;
       if (dt_state_dict_new(&s) != DT_OK || dt_state_dict_release(s) != DT_OK) return dt_status{-999};
       return call(x, s);
     }).msg_has = "releas";
    T.add(fn, "sd=stack_int", {IH},
          [call](Ctx& x) { return call(x, reinterpret_cast<dt_state_dict*>(x.foreign_stack)); });
    T.add(fn, "sd=malloc_block", {IH},
          [call](Ctx& x) { return call(x, reinterpret_cast<dt_state_dict*>(x.foreign_heap)); });
    T.add(fn, "sd=small_integer", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_state_dict*>(x.small)); });
    T.add(fn, "sd=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_state_dict*>(x.a)); })
        .msg_has = "state dict";
  };
  auto sd_out = [](Ctx& x) { return reinterpret_cast<dt_state_dict**>(&x.o.ptr); };

  T.add("dt_state_dict_new", "out=NULL", {IA}, [](Ctx&) { return dt_state_dict_new(nullptr); });
  sd_handles("dt_state_dict_retain", [](Ctx&, dt_state_dict* s) { return dt_state_dict_retain(s); });
  sd_handles("dt_state_dict_release", [](Ctx&, dt_state_dict* s) { return dt_state_dict_release(s); }, false);

  sd_handles("dt_state_dict_count", [](Ctx& x, dt_state_dict* s) { return dt_state_dict_count(s, &x.o.sz); });
  T.add("dt_state_dict_count", "out=NULL", {IA}, [](Ctx& x) { return dt_state_dict_count(LiveStateDict(x).p, nullptr); });

  const std::string nm = "dt_state_dict_name";
  sd_handles(nm, [](Ctx& x, dt_state_dict* s) { return dt_state_dict_name(s, 0, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  for (size_t i : {size_t{1}, SIZE_MAX})
    T.add(nm, "i=" + std::to_string(i), {IA}, [i](Ctx& x) {
       return dt_state_dict_name(LiveStateDict(x).p, i, x.o.buf, sizeof x.o.buf, &x.o.sz);
     }).msg_has = "out of range";
  T.add(nm, "buf=NULL_cap=8", {IA}, [](Ctx& x) { return dt_state_dict_name(LiveStateDict(x).p, 0, nullptr, 8, &x.o.sz); });

  sd_handles("dt_state_dict_get", [](Ctx& x, dt_state_dict* s) { return dt_state_dict_get(s, 0, &x.o.t); });
  T.add("dt_state_dict_get", "i=1", {IA}, [](Ctx& x) { return dt_state_dict_get(LiveStateDict(x).p, 1, &x.o.t); })
      .msg_has = "out of range";
  T.add("dt_state_dict_get", "out=NULL", {IA}, [](Ctx& x) { return dt_state_dict_get(LiveStateDict(x).p, 0, nullptr); });

  const std::string fd = "dt_state_dict_find";
  sd_handles(fd, [](Ctx& x, dt_state_dict* s) { return dt_state_dict_find(s, "w", &x.o.t); });
  T.add(fd, "name=NULL", {IA}, [](Ctx& x) { return dt_state_dict_find(LiveStateDict(x).p, nullptr, &x.o.t); });
  T.add(fd, "out=NULL", {IA}, [](Ctx& x) { return dt_state_dict_find(LiveStateDict(x).p, "w", nullptr); });
  T.add(fd, "absent_name", {IA}, [](Ctx& x) { return dt_state_dict_find(LiveStateDict(x).p, "no.such.key", &x.o.t); })
      .msg_has = "no.such.key";

  const std::string st = "dt_state_dict_set";
  sd_handles(st, [](Ctx& x, dt_state_dict* s) { return dt_state_dict_set(s, "w", x.a); });
  T.handles(st, "t", [](Ctx& x, const dt_tensor* t) { return dt_state_dict_set(LiveStateDict(x).p, "w", t); });
  T.add(st, "t=state_dict_handle", {IH}, [](Ctx& x) {
     LiveStateDict s(x);
     return dt_state_dict_set(s.p, "w", reinterpret_cast<const dt_tensor*>(s.p));
   }).msg_has = "tensor";
  T.add(st, "name=NULL", {IA}, [](Ctx& x) { return dt_state_dict_set(LiveStateDict(x).p, nullptr, x.a); });
  T.add(st, "name_not_utf8", {IA}, [](Ctx& x) { return dt_state_dict_set(LiveStateDict(x).p, "w\xff", x.a); })
      .msg_has = "UTF-8";

  const std::string sv = "dt_safetensors_save";
  sd_handles(sv, [](Ctx&, dt_state_dict* s) {
    return dt_safetensors_save(s, (contract_files().dir + "/never_written.safetensors").c_str());
  });
  T.add(sv, "path=NULL", {IA}, [](Ctx& x) { return dt_safetensors_save(LiveStateDict(x).p, nullptr); });
  T.add(sv, "path=empty", {IA}, [](Ctx& x) { return dt_safetensors_save(LiveStateDict(x).p, ""); });
  T.add(sv, "path_in_missing_directory", {DT_ERR_IO},
        [](Ctx& x) { return dt_safetensors_save(LiveStateDict(x).p, contract_files().missing_dir.c_str()); })
      .msg_has = "no/such/dir";

  const std::string ld = "dt_safetensors_load";
  T.add(ld, "out=NULL", {IA}, [](Ctx&) { return dt_safetensors_load(contract_files().valid.c_str(), CPU0, nullptr); });
  T.add(ld, "path=NULL", {IA}, [sd_out](Ctx& x) { return dt_safetensors_load(nullptr, CPU0, sd_out(x)); });
  T.add(ld, "path=empty", {IA}, [sd_out](Ctx& x) { return dt_safetensors_load("", CPU0, sd_out(x)); });
  T.add(ld, "missing_file", {DT_ERR_IO}, [sd_out](Ctx& x) {
     return dt_safetensors_load(contract_files().missing_dir.c_str(), CPU0, sd_out(x));
   }).msg_has = "no/such/dir";
  T.add(ld, "truncated_file", {DT_ERR_FORMAT}, [sd_out](Ctx& x) {
     return dt_safetensors_load(contract_files().bad.c_str(), CPU0, sd_out(x));
   }).msg_has = "bad.safetensors";
  T.devices(ld, [sd_out](Ctx& x, dt_device d) { return dt_safetensors_load(contract_files().valid.c_str(), d, sd_out(x)); });
}

// A Linear(3, 2) on cpu:0 and a cross-entropy loss, released after the call.
struct LiveModule {
  dt_module* lin = nullptr;
  dt_module* loss = nullptr;
  explicit LiveModule(Ctx&) {
    dt_linear_new(3, 2, 1, DT_FLOAT32, CPU0, &lin);
    dt_cross_entropy_loss_new(nullptr, DT_REDUCTION_MEAN, -100, 0, &loss);
  }
  ~LiveModule() {
    dt_module_release(lin);
    dt_module_release(loss);
  }
};

// An SGD optimizer over x.a, released after the call.
struct LiveOptimizer {
  dt_optimizer* p = nullptr;
  explicit LiveOptimizer(Ctx& x) {
    const dt_tensor* params[] = {x.a};
    dt_sgd_new(params, 1, 0.1, 0, 0, 0, 0, &p);
  }
  ~LiveOptimizer() { dt_optimizer_release(p); }
};

// An optimizer argument of fn replaced in turn by each bad handle, a tensor's included.
using OptimizerCall = std::function<dt_status(Ctx&, dt_optimizer*)>;
void add_optimizer_handle_rows(Table& T, const std::string& fn, OptimizerCall call, bool with_null = true) {
  if (with_null)
    T.add(fn, "opt=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL optimizer handle";
  T.add(fn, "opt=released", {IH}, [call](Ctx& x) {
     LiveOptimizer o(x);
     dt_optimizer* p = o.p;
     dt_optimizer_release(p);
     o.p = nullptr;
     return call(x, p);
   }).msg_has = "releas";
  T.add(fn, "opt=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_optimizer*>(x.foreign_stack)); });
  T.add(fn, "opt=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_optimizer*>(x.a)); })
      .msg_has = "optimizer";
}

void add_autograd_cases(Table& T) {
  T.handles("dt_tensor_set_requires_grad", "t",
            [](Ctx&, const dt_tensor* t) { return dt_tensor_set_requires_grad(const_cast<dt_tensor*>(t), 1); });
  for (int32_t bad : {2, -1})
    T.add("dt_tensor_set_requires_grad", "flag=" + std::to_string(bad), {IA},
          [bad](Ctx& x) { return dt_tensor_set_requires_grad(x.a, bad); });
  T.add("dt_tensor_set_requires_grad", "integer_tensor", {TM}, [](Ctx& x) { return dt_tensor_set_requires_grad(x.i32, 1); })
      .msg_has = "floating";
  T.add("dt_tensor_set_requires_grad", "bool_tensor", {TM}, [](Ctx& x) { return dt_tensor_set_requires_grad(x.bl, 1); });
  T.handles("dt_tensor_requires_grad", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_requires_grad(t, &x.o.i32); });
  T.add("dt_tensor_requires_grad", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_requires_grad(x.a, nullptr); });
  T.handles("dt_tensor_is_leaf", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_is_leaf(t, &x.o.i32); });
  T.add("dt_tensor_is_leaf", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_is_leaf(x.a, nullptr); });
  T.handles("dt_tensor_grad", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_grad(t, &x.o.t); });
  T.add("dt_tensor_grad", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_grad(x.a, nullptr); });
  T.handles("dt_tensor_clear_grad", "t", [](Ctx&, const dt_tensor* t) { return dt_tensor_clear_grad(const_cast<dt_tensor*>(t)); });
  T.handles("dt_tensor_grad_fn_name", "t",
            [](Ctx& x, const dt_tensor* t) { return dt_tensor_grad_fn_name(t, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  T.add("dt_tensor_grad_fn_name", "buf=NULL_cap=8", {IA},
        [](Ctx& x) { return dt_tensor_grad_fn_name(x.a, nullptr, 8, &x.o.sz); });
  T.handles("dt_tensor_detach", "t", [](Ctx& x, const dt_tensor* t) { return dt_tensor_detach(t, &x.o.t); });
  T.add("dt_tensor_detach", "out=NULL", {IA}, [](Ctx& x) { return dt_tensor_detach(x.a, nullptr); });
  T.handles("dt_backward", "t", [](Ctx&, const dt_tensor* t) { return dt_backward(t, nullptr); });
  T.add("dt_backward", "t_does_not_require_grad", {IA}, [](Ctx& x) { return dt_backward(x.s0, nullptr); })
      .msg_has = "does not require grad";
  T.add("dt_backward", "grad=released", {IH}, [](Ctx& x) { return dt_backward(x.s0, x.stale); });
  for (int32_t bad : {2, -1})
    T.add("dt_set_grad_enabled", "enabled=" + std::to_string(bad), {IA}, [bad](Ctx&) { return dt_set_grad_enabled(bad); });
  T.add("dt_grad_enabled", "out=NULL", {IA}, [](Ctx&) { return dt_grad_enabled(nullptr); });
  for (int32_t bad : {2, -2})
    T.add("dt_set_thread_grad_mode", "mode=" + std::to_string(bad), {IA},
          [bad](Ctx&) { return dt_set_thread_grad_mode(bad, nullptr); });
  T.add("dt_thread_grad_mode", "out=NULL", {IA}, [](Ctx&) { return dt_thread_grad_mode(nullptr); });
}

void add_module_cases(Table& T) {
  using MCall = std::function<dt_status(Ctx&, dt_module*)>;
  // A module argument replaced in turn by each bad handle, a tensor handle included.
  auto mod_handles = [&T](const std::string& fn, MCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, "m=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL module handle";
    T.add(fn, "m=released", {IH}, [call](Ctx& x) {
       dt_module* m = nullptr;
       if (dt_relu_new(&m) != DT_OK || dt_module_release(m) != DT_OK) return dt_status{-999};
       return call(x, m);
     }).msg_has = "releas";
    T.add(fn, "m=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_module*>(x.foreign_stack)); });
    T.add(fn, "m=malloc_block", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_module*>(x.foreign_heap)); });
    T.add(fn, "m=small_integer", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_module*>(x.small)); });
    T.add(fn, "m=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_module*>(x.a)); })
        .msg_has = "module";
  };
  auto mod_out = [](Ctx& x) { return reinterpret_cast<dt_module**>(&x.o.ptr); };

  // Constructors: out=NULL for each, then their own bad arguments.
  T.add("dt_linear_new", "out=NULL", {IA}, [](Ctx&) { return dt_linear_new(3, 2, 1, DT_FLOAT32, CPU0, nullptr); });
  T.add("dt_linear_new", "in_features=-1", {IA}, [mod_out](Ctx& x) { return dt_linear_new(-1, 2, 1, DT_FLOAT32, CPU0, mod_out(x)); });
  T.add("dt_linear_new", "bias=2", {IA}, [mod_out](Ctx& x) { return dt_linear_new(3, 2, 2, DT_FLOAT32, CPU0, mod_out(x)); });
  T.add("dt_linear_new", "dtype=int32", {TM}, [mod_out](Ctx& x) { return dt_linear_new(3, 2, 1, DT_INT32, CPU0, mod_out(x)); });
  T.add("dt_linear_new", "dtype=99", {IA}, [mod_out](Ctx& x) { return dt_linear_new(3, 2, 1, 99, CPU0, mod_out(x)); });
  T.add("dt_linear_new", "huge", {OOM, IA},
        [mod_out](Ctx& x) { return dt_linear_new(int64_t{1} << 31, int64_t{1} << 31, 1, DT_FLOAT32, CPU0, mod_out(x)); });
  T.devices("dt_linear_new", [mod_out](Ctx& x, dt_device d) { return dt_linear_new(3, 2, 1, DT_FLOAT32, d, mod_out(x)); });
  // Convolution and pooling (issue 19). The [2, 3] tensors of the context are not images,
  // so a 2-d input is the shape error; a 4-d weight is made in the row when needed.
  static const int64_t k2[2] = {2, 2}, k0[2] = {0, 2}, one[2] = {1, 1};
  auto with_weight = [](dt_status (*call)(Ctx&, dt_tensor*)) {
    return [call](Ctx& x) {
      const int64_t ws[4] = {2, 3, 1, 1};
      dt_tensor* w = nullptr;
      if (dt_tensor_zeros(ws, 4, DT_FLOAT32, CPU0, &w) != DT_OK) return dt_status{-999};
      dt_status st = call(x, w);
      dt_tensor_release(w);
      return st;
    };
  };
  T.handles("dt_conv2d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_conv2d(t, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.t);
  });
  T.handles("dt_conv2d", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_conv2d(x.a, t, nullptr, nullptr, nullptr, nullptr, 1, &x.o.t);
  });
  T.handles("dt_conv2d", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_conv2d(x.a, x.a, t, nullptr, nullptr, nullptr, 1, &x.o.t);
  }, /*with_null=*/false);  // NULL bias is "no bias"
  T.add("dt_conv2d", "out=NULL", {IA}, [](Ctx& x) { return dt_conv2d(x.a, x.a, nullptr, nullptr, nullptr, nullptr, 1, nullptr); });
  T.add("dt_conv2d", "weight_2d", {SM}, [](Ctx& x) {
     return dt_conv2d(x.a, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.t);
   }).msg_has = "4-d weight";
  T.add("dt_conv2d", "input_2d", {SM}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv2d(x.a, w, nullptr, nullptr, nullptr, nullptr, 1, &x.o.t);
   })).msg_has = "[2, 3]";
  T.add("dt_conv2d", "groups=0", {IA}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv2d(x.a, w, nullptr, nullptr, nullptr, nullptr, 0, &x.o.t);
   })).msg_has = "groups";
  T.add("dt_conv2d", "stride=0", {IA}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv2d(x.a, w, nullptr, k0, nullptr, nullptr, 1, &x.o.t);
   }));
  T.add("dt_conv2d_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_conv2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_conv2d_new", "kernel_size=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_conv2d_new(3, 2, nullptr, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv2d_new", "kernel_size=0", {IA}, [mod_out](Ctx& x) {
    return dt_conv2d_new(3, 2, k0, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv2d_new", "in_channels=0", {IA}, [mod_out](Ctx& x) {
    return dt_conv2d_new(0, 2, k2, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv2d_new", "groups_not_dividing", {IA}, [mod_out](Ctx& x) {
     return dt_conv2d_new(3, 2, k2, nullptr, nullptr, nullptr, 2, 1, DT_FLOAT32, CPU0, mod_out(x));
   }).msg_has = "divisible by groups";
  T.add("dt_conv2d_new", "bias=2", {IA}, [mod_out](Ctx& x) {
    return dt_conv2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv2d_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_conv2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_conv2d_new", [mod_out](Ctx& x, dt_device d) {
    return dt_conv2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, DT_FLOAT32, d, mod_out(x));
  });
  // ConvTranspose2d: weight [in, out / groups, kH, kW]; the 4-d weight of with_weight has
  // in_channels 2, so the [2, 3] context tensor is again the shape error.
  T.handles("dt_conv_transpose2d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_conv_transpose2d(t, x.a, nullptr, nullptr, nullptr, nullptr, 1, nullptr, &x.o.t);
  });
  T.handles("dt_conv_transpose2d", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_conv_transpose2d(x.a, t, nullptr, nullptr, nullptr, nullptr, 1, nullptr, &x.o.t);
  });
  T.handles("dt_conv_transpose2d", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_conv_transpose2d(x.a, x.a, t, nullptr, nullptr, nullptr, 1, nullptr, &x.o.t);
  }, /*with_null=*/false);  // NULL bias is "no bias"
  T.add("dt_conv_transpose2d", "out=NULL", {IA}, [](Ctx& x) {
    return dt_conv_transpose2d(x.a, x.a, nullptr, nullptr, nullptr, nullptr, 1, nullptr, nullptr);
  });
  T.add("dt_conv_transpose2d", "weight_2d", {SM}, [](Ctx& x) {
     return dt_conv_transpose2d(x.a, x.a, nullptr, nullptr, nullptr, nullptr, 1, nullptr, &x.o.t);
   }).msg_has = "4-d weight";
  T.add("dt_conv_transpose2d", "input_2d", {SM}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv_transpose2d(x.a, w, nullptr, nullptr, nullptr, nullptr, 1, nullptr, &x.o.t);
   })).msg_has = "[2, 3]";
  T.add("dt_conv_transpose2d", "groups=0", {IA}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv_transpose2d(x.a, w, nullptr, nullptr, nullptr, nullptr, 0, nullptr, &x.o.t);
   })).msg_has = "groups";
  T.add("dt_conv_transpose2d", "stride=0", {IA}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv_transpose2d(x.a, w, nullptr, k0, nullptr, nullptr, 1, nullptr, &x.o.t);
   }));
  T.add("dt_conv_transpose2d", "output_padding=stride", {IA}, with_weight([](Ctx& x, dt_tensor* w) {
     return dt_conv_transpose2d(x.a, w, nullptr, nullptr, nullptr, one, 1, nullptr, &x.o.t);
   })).msg_has = "output padding must be smaller";
  T.add("dt_conv_transpose2d_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_conv_transpose2d_new", "kernel_size=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_conv_transpose2d_new(3, 2, nullptr, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv_transpose2d_new", "kernel_size=0", {IA}, [mod_out](Ctx& x) {
    return dt_conv_transpose2d_new(3, 2, k0, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv_transpose2d_new", "out_channels=0", {IA}, [mod_out](Ctx& x) {
    return dt_conv_transpose2d_new(3, 0, k2, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv_transpose2d_new", "groups_not_dividing", {IA}, [mod_out](Ctx& x) {
     return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, nullptr, 2, 1, nullptr, DT_FLOAT32, CPU0, mod_out(x));
   }).msg_has = "divisible by groups";
  T.add("dt_conv_transpose2d_new", "output_padding=stride", {IA}, [mod_out](Ctx& x) {
     return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, one, 1, 1, nullptr, DT_FLOAT32, CPU0, mod_out(x));
   }).msg_has = "output padding must be smaller";
  T.add("dt_conv_transpose2d_new", "bias=2", {IA}, [mod_out](Ctx& x) {
    return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 2, nullptr, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv_transpose2d_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_conv_transpose2d_new", [mod_out](Ctx& x, dt_device d) {
    return dt_conv_transpose2d_new(3, 2, k2, nullptr, nullptr, nullptr, 1, 1, nullptr, DT_FLOAT32, d, mod_out(x));
  });
  // Conv1d: a [2, 3] is an unbatched input of 2 channels; a 3-d weight is made in the row.
  auto with_weight1d = [](dt_status (*call)(Ctx&, dt_tensor*)) {
    return [call](Ctx& x) {
      const int64_t ws[3] = {2, 2, 1};
      dt_tensor* w = nullptr;
      if (dt_tensor_zeros(ws, 3, DT_FLOAT32, CPU0, &w) != DT_OK) return dt_status{-999};
      dt_status st = call(x, w);
      dt_tensor_release(w);
      return st;
    };
  };
  T.handles("dt_conv1d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_conv1d(t, x.a, nullptr, 1, 0, 1, 1, &x.o.t);
  });
  T.handles("dt_conv1d", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_conv1d(x.a, t, nullptr, 1, 0, 1, 1, &x.o.t);
  });
  T.handles("dt_conv1d", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_conv1d(x.a, x.a, t, 1, 0, 1, 1, &x.o.t);
  }, false);  // NULL: none
  T.add("dt_conv1d", "out=NULL", {IA}, [](Ctx& x) { return dt_conv1d(x.a, x.a, nullptr, 1, 0, 1, 1, nullptr); });
  T.add("dt_conv1d", "weight_2d", {SM}, [](Ctx& x) { return dt_conv1d(x.a, x.a, nullptr, 1, 0, 1, 1, &x.o.t); });
  T.add("dt_conv1d", "stride=0", {IA}, with_weight1d([](Ctx& x, dt_tensor* w) {
     return dt_conv1d(x.a, w, nullptr, 0, 0, 1, 1, &x.o.t);
   }));
  T.add("dt_conv1d", "same_with_stride_2", {IA}, with_weight1d([](Ctx& x, dt_tensor* w) {
     return dt_conv1d(x.a, w, nullptr, 2, DT_PADDING_SAME, 1, 1, &x.o.t);
   })).msg_has = "same";
  T.add("dt_conv1d_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_conv1d_new(3, 2, 3, 1, 0, 1, 1, 1, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_conv1d_new", "kernel_size=0", {IA}, [mod_out](Ctx& x) {
    return dt_conv1d_new(3, 2, 0, 1, 0, 1, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv1d_new", "groups_not_dividing", {IA}, [mod_out](Ctx& x) {
    return dt_conv1d_new(3, 2, 3, 1, 0, 1, 2, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv1d_new", "bias=2", {IA}, [mod_out](Ctx& x) {
    return dt_conv1d_new(3, 2, 3, 1, 0, 1, 1, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_conv1d_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_conv1d_new(3, 2, 3, 1, 0, 1, 1, 1, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_conv1d_new", [mod_out](Ctx& x, dt_device d) {
    return dt_conv1d_new(3, 2, 3, 1, 0, 1, 1, 1, DT_FLOAT32, d, mod_out(x));
  });
  T.handles("dt_max_pool2d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_max_pool2d(t, k2, nullptr, nullptr, nullptr, 0, &x.o.t);
  });
  T.add("dt_max_pool2d", "out=NULL", {IA}, [](Ctx& x) { return dt_max_pool2d(x.a, k2, nullptr, nullptr, nullptr, 0, nullptr); });
  T.add("dt_max_pool2d", "kernel_size=NULL", {IA}, [](Ctx& x) {
    return dt_max_pool2d(x.a, nullptr, nullptr, nullptr, nullptr, 0, &x.o.t);
  });
  T.add("dt_max_pool2d", "ceil_mode=2", {IA}, [](Ctx& x) { return dt_max_pool2d(x.a, k2, nullptr, nullptr, nullptr, 2, &x.o.t); })
      .msg_has = "ceil_mode";
  T.add("dt_max_pool2d", "input_2d", {SM}, [](Ctx& x) { return dt_max_pool2d(x.a, k2, nullptr, nullptr, nullptr, 0, &x.o.t); });
  T.handles("dt_avg_pool2d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_avg_pool2d(t, k2, nullptr, nullptr, 0, 1, &x.o.t);
  });
  T.add("dt_avg_pool2d", "out=NULL", {IA}, [](Ctx& x) { return dt_avg_pool2d(x.a, k2, nullptr, nullptr, 0, 1, nullptr); });
  T.add("dt_avg_pool2d", "count_include_pad=2", {IA}, [](Ctx& x) {
    return dt_avg_pool2d(x.a, k2, nullptr, nullptr, 0, 2, &x.o.t);
  });
  T.add("dt_avg_pool2d", "input_2d", {SM}, [](Ctx& x) { return dt_avg_pool2d(x.a, k2, nullptr, nullptr, 0, 1, &x.o.t); });
  T.handles("dt_adaptive_avg_pool2d", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_adaptive_avg_pool2d(t, one, &x.o.t);
  });
  T.add("dt_adaptive_avg_pool2d", "out=NULL", {IA}, [](Ctx& x) { return dt_adaptive_avg_pool2d(x.a, one, nullptr); });
  T.add("dt_adaptive_avg_pool2d", "output_size=NULL", {IA}, [](Ctx& x) {
    return dt_adaptive_avg_pool2d(x.a, nullptr, &x.o.t);
  });
  T.add("dt_adaptive_avg_pool2d", "output_size=0", {IA}, [](Ctx& x) { return dt_adaptive_avg_pool2d(x.a, k0, &x.o.t); });
  T.add("dt_max_pool2d_new", "out=NULL", {IA}, [](Ctx&) { return dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, 0, nullptr); });
  T.add("dt_max_pool2d_new", "kernel_size=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_max_pool2d_new(nullptr, nullptr, nullptr, nullptr, 0, mod_out(x));
  });
  T.add("dt_max_pool2d_new", "ceil_mode=-1", {IA}, [mod_out](Ctx& x) {
    return dt_max_pool2d_new(k2, nullptr, nullptr, nullptr, -1, mod_out(x));
  });
  T.add("dt_avg_pool2d_new", "out=NULL", {IA}, [](Ctx&) { return dt_avg_pool2d_new(k2, nullptr, nullptr, 0, 1, nullptr); });
  T.add("dt_avg_pool2d_new", "kernel_size=0", {IA}, [mod_out](Ctx& x) {
    return dt_avg_pool2d_new(k0, nullptr, nullptr, 0, 1, mod_out(x));
  });
  T.add("dt_adaptive_avg_pool2d_new", "out=NULL", {IA}, [](Ctx&) { return dt_adaptive_avg_pool2d_new(one, nullptr); });
  T.add("dt_adaptive_avg_pool2d_new", "output_size=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_adaptive_avg_pool2d_new(nullptr, mod_out(x));
  });
  // dt_interpolate / dt_upsample_new: a [2, 3] has no spatial dim (3-d to 5-d inputs).
  static const int64_t sz4[1] = {4};
  static const double twice[1] = {2.0}, negative[1] = {-1.0};
  const std::string ip = "dt_interpolate";
  T.handles(ip, "input", [](Ctx& x, const dt_tensor* t) {
    return dt_interpolate(t, sz4, nullptr, 1, nullptr, 0, &x.o.t);
  });
  T.add(ip, "out=NULL", {IA}, [](Ctx& x) { return dt_interpolate(x.a, sz4, nullptr, 1, nullptr, 0, nullptr); });
  T.add(ip, "size_and_scale", {IA}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, twice, 1, nullptr, 0, &x.o.t);
  }).msg_has = "not both";
  T.add(ip, "neither_size_nor_scale", {IA}, [](Ctx& x) {
    return dt_interpolate(x.a, nullptr, nullptr, 1, nullptr, 0, &x.o.t);
  });
  for (size_t n : {size_t{0}, size_t{4}, SIZE_MAX})
    T.add(ip, "n=" + std::to_string(n), {IA}, [n](Ctx& x) { return dt_interpolate(x.a, sz4, nullptr, n, nullptr, 0, &x.o.t); });
  T.add(ip, "mode=bicubic", {NS}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, nullptr, 1, "bicubic", 0, &x.o.t);
  }).msg_has = "bicubic";
  T.add(ip, "mode=cubic", {IA}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, nullptr, 1, "cubic", 0, &x.o.t);
  }).msg_has = "unknown mode";
  T.add(ip, "align_corners=2", {IA}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, nullptr, 1, "linear", 2, &x.o.t);
  });
  T.add(ip, "nearest_align_corners", {IA}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, nullptr, 1, "nearest", 1, &x.o.t);
  }).msg_has = "align_corners";
  T.add(ip, "scale=-1", {IA}, [](Ctx& x) { return dt_interpolate(x.a, nullptr, negative, 1, nullptr, 0, &x.o.t); });
  T.add(ip, "input_2d", {SM}, [](Ctx& x) {
    return dt_interpolate(x.a, sz4, nullptr, 1, nullptr, 0, &x.o.t);
  }).msg_has = "[2, 3]";
  // A 3-d input [1, 1, 2] made in the row: sizes past 2^60 are refused before any index list is made.
  auto line = [](Ctx&, auto call) {
    const int64_t shape[] = {1, 1, 2};
    dt_tensor* t = nullptr;
    if (dt_tensor_zeros(shape, 3, DT_FLOAT32, CPU0, &t) != DT_OK) return dt_status{-999};
    const dt_status st = call(t);
    dt_tensor_release(t);
    return st;
  };
  T.add(ip, "size=2^62", {IA}, [line](Ctx& x) {
    return line(x, [&](dt_tensor* t) {
      static const int64_t big[1] = {int64_t{1} << 62};
      return dt_interpolate(t, big, nullptr, 1, nullptr, 0, &x.o.t);
    });
  }).msg_has = "too large";
  T.add(ip, "scale=1e300", {IA}, [line](Ctx& x) {
    return line(x, [&](dt_tensor* t) {
      static const double big[1] = {1e300};
      return dt_interpolate(t, nullptr, big, 1, "linear", 0, &x.o.t);
    });
  }).msg_has = "too large";
  T.add(ip, "int_input", {TM, SM}, [](Ctx& x) { return dt_interpolate(x.i32, sz4, nullptr, 1, nullptr, 0, &x.o.t); });
  const std::string up = "dt_upsample_new";
  T.add(up, "out=NULL", {IA}, [](Ctx&) { return dt_upsample_new(sz4, nullptr, 1, nullptr, 0, nullptr); });
  T.add(up, "neither_size_nor_scale", {IA}, [mod_out](Ctx& x) {
    return dt_upsample_new(nullptr, nullptr, 1, nullptr, 0, mod_out(x));
  });
  T.add(up, "mode=area", {NS}, [mod_out](Ctx& x) { return dt_upsample_new(sz4, nullptr, 1, "area", 0, mod_out(x)); });
  T.add(up, "size=0", {IA}, [mod_out](Ctx& x) {
    static const int64_t zero[1] = {0};
    return dt_upsample_new(zero, nullptr, 1, nullptr, 0, mod_out(x));
  });
  T.add(up, "nearest_align_corners", {IA}, [mod_out](Ctx& x) {
    return dt_upsample_new(nullptr, twice, 1, "nearest", 1, mod_out(x));
  });
  // Normalisation and embedding (issue 19). a is [2, 3]: 3 channels, or 2 embeddings of 3.
  static const int64_t last3[1] = {3}, last4[1] = {4};
  auto mut = [](const dt_tensor* t) { return const_cast<dt_tensor*>(t); };
  T.handles("dt_batch_norm", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_batch_norm(t, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5, &x.o.t);
  });
  T.handles("dt_batch_norm", "running_mean", [mut](Ctx& x, const dt_tensor* t) {
    return dt_batch_norm(x.a, mut(t), x.v3, nullptr, nullptr, 1, 0.1, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.handles("dt_batch_norm", "running_var", [mut](Ctx& x, const dt_tensor* t) {
    return dt_batch_norm(x.a, x.v3, mut(t), nullptr, nullptr, 0, 0.1, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.handles("dt_batch_norm", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_batch_norm(x.a, nullptr, nullptr, t, nullptr, 1, 0.1, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.handles("dt_batch_norm", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_batch_norm(x.a, nullptr, nullptr, nullptr, t, 1, 0.1, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.add("dt_batch_norm", "out=NULL", {IA}, [](Ctx& x) {
    return dt_batch_norm(x.a, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5, nullptr);
  });
  T.add("dt_batch_norm", "training=2", {IA}, [](Ctx& x) {
    return dt_batch_norm(x.a, nullptr, nullptr, nullptr, nullptr, 2, 0.1, 1e-5, &x.o.t);
  });
  T.add("dt_batch_norm", "eval_without_running", {IA}, [](Ctx& x) {
    return dt_batch_norm(x.a, nullptr, nullptr, nullptr, nullptr, 0, 0.1, 1e-5, &x.o.t);
  }).msg_has = "running_mean";
  T.add("dt_batch_norm", "eps=0", {IA}, [](Ctx& x) {
    return dt_batch_norm(x.a, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 0.0, &x.o.t);
  });
  T.add("dt_batch_norm", "weight_of_4", {SM}, [](Ctx& x) {
    return dt_batch_norm(x.a, nullptr, nullptr, x.v4, nullptr, 1, 0.1, 1e-5, &x.o.t);
  }).msg_has = "[4]";
  T.add("dt_batch_norm", "input_1d", {SM}, [](Ctx& x) {
    return dt_batch_norm(x.v3, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5, &x.o.t);
  });
  T.add("dt_batch_norm", "input_int32", {TM}, [](Ctx& x) {
    return dt_batch_norm(x.i32, nullptr, nullptr, nullptr, nullptr, 1, 0.1, 1e-5, &x.o.t);
  });
  T.handles("dt_layer_norm", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_layer_norm(t, last3, 1, nullptr, nullptr, 1e-5, &x.o.t);
  });
  T.handles("dt_layer_norm", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_layer_norm(x.a, last3, 1, t, nullptr, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.handles("dt_layer_norm", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_layer_norm(x.a, last3, 1, nullptr, t, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.add("dt_layer_norm", "out=NULL", {IA}, [](Ctx& x) { return dt_layer_norm(x.a, last3, 1, nullptr, nullptr, 1e-5, nullptr); });
  T.add("dt_layer_norm", "normalized_shape=NULL", {IA}, [](Ctx& x) {
    return dt_layer_norm(x.a, nullptr, 1, nullptr, nullptr, 1e-5, &x.o.t);
  });
  T.add("dt_layer_norm", "normalized_shape=[4]", {SM}, [](Ctx& x) {
    return dt_layer_norm(x.a, last4, 1, nullptr, nullptr, 1e-5, &x.o.t);
  }).msg_has = "[2, 3]";
  T.handles("dt_group_norm", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_group_norm(t, 1, nullptr, nullptr, 1e-5, &x.o.t);
  });
  T.handles("dt_group_norm", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_group_norm(x.a, 1, t, nullptr, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.handles("dt_group_norm", "bias", [](Ctx& x, const dt_tensor* t) {
    return dt_group_norm(x.a, 1, nullptr, t, 1e-5, &x.o.t);
  }, false);  // NULL: none
  T.add("dt_group_norm", "out=NULL", {IA}, [](Ctx& x) { return dt_group_norm(x.a, 1, nullptr, nullptr, 1e-5, nullptr); });
  T.add("dt_group_norm", "groups=2_of_3_channels", {SM}, [](Ctx& x) {
    return dt_group_norm(x.a, 2, nullptr, nullptr, 1e-5, &x.o.t);
  }).msg_has = "num_groups";
  T.handles("dt_embedding", "input", [](Ctx& x, const dt_tensor* t) {
    return dt_embedding(t, x.a, DT_PADDING_IDX_NONE, &x.o.t);
  });
  T.handles("dt_embedding", "weight", [](Ctx& x, const dt_tensor* t) {
    return dt_embedding(x.idx, t, DT_PADDING_IDX_NONE, &x.o.t);
  });
  T.add("dt_embedding", "out=NULL", {IA}, [](Ctx& x) { return dt_embedding(x.idx, x.a, DT_PADDING_IDX_NONE, nullptr); });
  T.add("dt_embedding", "float_indices", {TM}, [](Ctx& x) {
    return dt_embedding(x.a, x.a, DT_PADDING_IDX_NONE, &x.o.t);
  }).msg_has = "int64 or int32";
  T.add("dt_embedding", "index_out_of_range", {IA}, [](Ctx& x) {
    return dt_embedding(x.idx_bad, x.a, DT_PADDING_IDX_NONE, &x.o.t);
  });
  T.add("dt_embedding", "padding_idx=5", {IA}, [](Ctx& x) { return dt_embedding(x.idx, x.a, 5, &x.o.t); });
  T.add("dt_embedding", "weight_1d", {SM}, [](Ctx& x) { return dt_embedding(x.idx, x.v3, DT_PADDING_IDX_NONE, &x.o.t); });
  for (auto* bn : {&dt_batch_norm1d_new, &dt_batch_norm2d_new}) {
    const char* fn = bn == &dt_batch_norm1d_new ? "dt_batch_norm1d_new" : "dt_batch_norm2d_new";
    T.add(fn, "out=NULL", {IA}, [bn](Ctx&) { return bn(3, 1e-5, 0.1, 1, 1, DT_FLOAT32, CPU0, nullptr); });
    T.add(fn, "num_features=0", {IA}, [bn, mod_out](Ctx& x) { return bn(0, 1e-5, 0.1, 1, 1, DT_FLOAT32, CPU0, mod_out(x)); });
    T.add(fn, "eps=0", {IA}, [bn, mod_out](Ctx& x) { return bn(3, 0.0, 0.1, 1, 1, DT_FLOAT32, CPU0, mod_out(x)); });
    T.add(fn, "momentum=2", {IA}, [bn, mod_out](Ctx& x) { return bn(3, 1e-5, 2.0, 1, 1, DT_FLOAT32, CPU0, mod_out(x)); });
    T.add(fn, "affine=2", {IA}, [bn, mod_out](Ctx& x) { return bn(3, 1e-5, 0.1, 2, 1, DT_FLOAT32, CPU0, mod_out(x)); });
    T.add(fn, "track_running_stats=2", {IA},
          [bn, mod_out](Ctx& x) { return bn(3, 1e-5, 0.1, 1, 2, DT_FLOAT32, CPU0, mod_out(x)); });
    T.add(fn, "dtype=int32", {TM}, [bn, mod_out](Ctx& x) { return bn(3, 1e-5, 0.1, 1, 1, DT_INT32, CPU0, mod_out(x)); });
    T.devices(fn, [bn, mod_out](Ctx& x, dt_device d) { return bn(3, 1e-5, 0.1, 1, 1, DT_FLOAT32, d, mod_out(x)); });
  }
  T.add("dt_layer_norm_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_layer_norm_new(last3, 1, 1e-5, 1, 1, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_layer_norm_new", "normalized_shape=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_layer_norm_new(nullptr, 1, 1e-5, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_layer_norm_new", "ndims=0", {IA}, [mod_out](Ctx& x) {
    return dt_layer_norm_new(last3, 0, 1e-5, 1, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_layer_norm_new", "bias=2", {IA}, [mod_out](Ctx& x) {
    return dt_layer_norm_new(last3, 1, 1e-5, 1, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_layer_norm_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_layer_norm_new(last3, 1, 1e-5, 1, 1, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_layer_norm_new", [mod_out](Ctx& x, dt_device d) {
    return dt_layer_norm_new(last3, 1, 1e-5, 1, 1, DT_FLOAT32, d, mod_out(x));
  });
  T.add("dt_group_norm_new", "out=NULL", {IA}, [](Ctx&) { return dt_group_norm_new(2, 4, 1e-5, 1, DT_FLOAT32, CPU0, nullptr); });
  T.add("dt_group_norm_new", "channels_not_divisible", {IA}, [mod_out](Ctx& x) {
    return dt_group_norm_new(3, 4, 1e-5, 1, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_group_norm_new", "affine=2", {IA}, [mod_out](Ctx& x) {
    return dt_group_norm_new(2, 4, 1e-5, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_group_norm_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_group_norm_new(2, 4, 1e-5, 1, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_group_norm_new", [mod_out](Ctx& x, dt_device d) {
    return dt_group_norm_new(2, 4, 1e-5, 1, DT_FLOAT32, d, mod_out(x));
  });
  // Attention. a [2, 3] as query, key and value: one batch of 2 positions, E = 3.
  T.handles("dt_scaled_dot_product_attention", "query", [](Ctx& x, const dt_tensor* t) {
    return dt_scaled_dot_product_attention(t, x.a, x.a, nullptr, 0, &x.o.t);
  });
  T.handles("dt_scaled_dot_product_attention", "key", [](Ctx& x, const dt_tensor* t) {
    return dt_scaled_dot_product_attention(x.a, t, x.a, nullptr, 0, &x.o.t);
  });
  T.handles("dt_scaled_dot_product_attention", "value", [](Ctx& x, const dt_tensor* t) {
    return dt_scaled_dot_product_attention(x.a, x.a, t, nullptr, 0, &x.o.t);
  });
  T.handles("dt_scaled_dot_product_attention", "attn_mask", [](Ctx& x, const dt_tensor* t) {
    return dt_scaled_dot_product_attention(x.a, x.a, x.a, t, 0, &x.o.t);
  }, false);  // NULL: none
  T.add("dt_scaled_dot_product_attention", "out=NULL", {IA}, [](Ctx& x) {
    return dt_scaled_dot_product_attention(x.a, x.a, x.a, nullptr, 0, nullptr);
  });
  T.add("dt_scaled_dot_product_attention", "is_causal=2", {IA}, [](Ctx& x) {
    return dt_scaled_dot_product_attention(x.a, x.a, x.a, nullptr, 2, &x.o.t);
  });
  T.add("dt_scaled_dot_product_attention", "mask_and_causal", {IA}, [](Ctx& x) {
    return dt_scaled_dot_product_attention(x.a, x.a, x.a, x.bl, 1, &x.o.t);
  });
  T.add("dt_scaled_dot_product_attention", "key_of_another_width", {SM}, [](Ctx& x) {
    return dt_scaled_dot_product_attention(x.a, x.bt, x.a, nullptr, 0, &x.o.t);
  });
  T.add("dt_scaled_dot_product_attention", "int_query", {TM}, [](Ctx& x) {
    return dt_scaled_dot_product_attention(x.i32, x.a, x.a, nullptr, 0, &x.o.t);
  });
  T.add("dt_multihead_attention_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_multihead_attention_new(4, 2, 0.0, 1, 0, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_multihead_attention_new", "heads_not_dividing", {IA}, [mod_out](Ctx& x) {
    return dt_multihead_attention_new(6, 4, 0.0, 1, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "num_heads";
  T.add("dt_multihead_attention_new", "dropout=2", {IA}, [mod_out](Ctx& x) {
    return dt_multihead_attention_new(4, 2, 2.0, 1, 0, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_multihead_attention_new", "batch_first=2", {IA}, [mod_out](Ctx& x) {
    return dt_multihead_attention_new(4, 2, 0.0, 1, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_multihead_attention_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_multihead_attention_new(4, 2, 0.0, 1, 0, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_multihead_attention_new", [mod_out](Ctx& x, dt_device d) {
    return dt_multihead_attention_new(4, 2, 0.0, 1, 0, DT_FLOAT32, d, mod_out(x));
  });
  // Recurrent layers: constructors, then dt_rnn_forward on x.a, an unbatched sequence of
  // 2 steps of width 3.
  T.add("dt_lstm_new", "out=NULL", {IA}, [](Ctx&) { return dt_lstm_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, nullptr); });
  T.add("dt_lstm_new", "hidden_size=0", {IA}, [mod_out](Ctx& x) {
    return dt_lstm_new(3, 0, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "hidden_size";
  T.add("dt_lstm_new", "input_size=huge", {IA}, [mod_out](Ctx& x) {
    return dt_lstm_new(INT64_MAX, 4, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "too large";
  T.add("dt_lstm_new", "dropout=nan", {IA}, [mod_out](Ctx& x) {
    return dt_lstm_new(3, 4, 2, 1, 0, std::numeric_limits<double>::quiet_NaN(), 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "dropout";
  T.add("dt_lstm_new", "bidirectional=2", {IA}, [mod_out](Ctx& x) {
    return dt_lstm_new(3, 4, 1, 1, 0, 0, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_lstm_new", "dtype=int64", {TM}, [mod_out](Ctx& x) {
    return dt_lstm_new(3, 4, 1, 1, 0, 0, 0, DT_INT64, CPU0, mod_out(x));
  });
  T.devices("dt_lstm_new", [mod_out](Ctx& x, dt_device d) { return dt_lstm_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, d, mod_out(x)); });
  T.add("dt_gru_new", "out=NULL", {IA}, [](Ctx&) { return dt_gru_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, nullptr); });
  T.add("dt_gru_new", "num_layers=-1", {IA}, [mod_out](Ctx& x) {
    return dt_gru_new(3, 4, -1, 1, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "num_layers";
  T.add("dt_gru_new", "batch_first=-1", {IA}, [mod_out](Ctx& x) {
    return dt_gru_new(3, 4, 1, 1, -1, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.devices("dt_gru_new", [mod_out](Ctx& x, dt_device d) { return dt_gru_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, d, mod_out(x)); });
  T.add("dt_rnn_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_rnn_new(3, 4, 1, "tanh", 1, 0, 0, 0, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_rnn_new", "nonlinearity=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_rnn_new(3, 4, 1, nullptr, 1, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "nonlinearity";
  T.add("dt_rnn_new", "nonlinearity=gelu", {IA}, [mod_out](Ctx& x) {
    return dt_rnn_new(3, 4, 1, "gelu", 1, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "\"gelu\"";
  T.add("dt_rnn_new", "bias=2", {IA}, [mod_out](Ctx& x) {
    return dt_rnn_new(3, 4, 1, "relu", 2, 0, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.devices("dt_rnn_new", [mod_out](Ctx& x, dt_device d) {
    return dt_rnn_new(3, 4, 1, "tanh", 1, 0, 0, 0, DT_FLOAT32, d, mod_out(x));
  });
  struct LiveRecurrent {
    dt_module* lstm = nullptr;
    dt_module* gru = nullptr;
    LiveRecurrent() {
      dt_lstm_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, &lstm);
      dt_gru_new(3, 4, 1, 1, 0, 0, 0, DT_FLOAT32, CPU0, &gru);
    }
    ~LiveRecurrent() {
      dt_module_release(lstm);
      dt_module_release(gru);
    }
  };
  const std::string rf = "dt_rnn_forward";
  mod_handles(rf, [](Ctx& x, dt_module* m) {
    return dt_rnn_forward(m, x.a, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  });
  T.handles(rf, "input", [](Ctx& x, const dt_tensor* t) {
    return dt_rnn_forward(LiveRecurrent().lstm, t, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], &x.o.ts[2]);
  });
  T.handles(rf, "h0", [](Ctx& x, const dt_tensor* t) {
    return dt_rnn_forward(LiveRecurrent().gru, x.a, t, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }, false);  // NULL: zeros
  T.add(rf, "output=NULL", {IA}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().lstm, x.a, nullptr, nullptr, nullptr, &x.o.ts[1], nullptr);
  });
  T.add(rf, "h_n==c_n", {IA}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().lstm, x.a, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], &x.o.ts[1]);
  }).msg_has = "different out-parameters";
  T.add(rf, "c_n_of_a_gru", {IA}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.a, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], &x.o.ts[2]);
  }).msg_has = "c_n is LSTM's alone";
  T.add(rf, "m_is_a_linear", {IA}, [](Ctx& x) {
    LiveModule l(x);
    return dt_rnn_forward(l.lin, x.a, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }).msg_has = "m is a Linear module, not an RNN, LSTM or GRU";
  T.add(rf, "input_of_another_width", {SM}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.bt, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }).msg_has = "input_size (3)";
  T.add(rf, "input_int32", {TM}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.i32, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }).msg_has = "GRU";
  T.add(rf, "empty_sequence", {SM}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.e03, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }).msg_has = "empty";
  T.add(rf, "h0_of_a_wrong_shape", {SM}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.a, x.a, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  }).msg_has = "h0";
  T.add(rf, "input_on_cpu1", {DM}, [](Ctx& x) {
    return dt_rnn_forward(LiveRecurrent().gru, x.a1, nullptr, nullptr, &x.o.ts[0], &x.o.ts[1], nullptr);
  });
  // dt_multihead_attention_forward: a [2, 3] as an unbatched query of width E = 3, one head.
  struct LiveAttention {
    dt_module* m = nullptr;
    LiveAttention() { dt_multihead_attention_new(3, 1, 0.0, 1, 0, DT_FLOAT32, CPU0, &m); }
    ~LiveAttention() { dt_module_release(m); }
  };
  const std::string mhf = "dt_multihead_attention_forward";
  mod_handles(mhf, [](Ctx& x, dt_module* m) {
    return dt_multihead_attention_forward(m, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0], &x.o.ts[1]);
  });
  T.handles(mhf, "query", [](Ctx& x, const dt_tensor* t) {
    return dt_multihead_attention_forward(LiveAttention().m, t, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0],
                                          &x.o.ts[1]);
  });
  T.handles(mhf, "key", [](Ctx& x, const dt_tensor* t) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, t, x.a, nullptr, nullptr, 1, &x.o.ts[0], &x.o.ts[1]);
  }, false);  // NULL: the query
  T.handles(mhf, "attn_mask", [](Ctx& x, const dt_tensor* t) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, nullptr, t, 1, &x.o.ts[0],
                                          &x.o.ts[1]);
  }, false);  // NULL: none
  T.add(mhf, "out=NULL", {IA}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, nullptr, nullptr, 1, nullptr,
                                          &x.o.ts[1]);
  });
  T.add(mhf, "out_weights=NULL", {IA}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0],
                                          nullptr);
  });
  T.add(mhf, "out==out_weights", {IA}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0],
                                          &x.o.ts[0]);
  }).msg_has = "same out-parameter";
  T.add(mhf, "average_attn_weights=2", {IA}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, nullptr, nullptr, 2, &x.o.ts[0],
                                          &x.o.ts[1]);
  }).msg_has = "average_attn_weights";
  T.add(mhf, "m_is_a_linear", {IA}, [](Ctx& x) {
    LiveModule l(x);
    return dt_multihead_attention_forward(l.lin, x.a, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0], &x.o.ts[1]);
  }).msg_has = "m is a Linear module, not a MultiheadAttention";
  T.add(mhf, "query_of_another_width", {SM}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.bt, nullptr, nullptr, nullptr, nullptr, 1, &x.o.ts[0],
                                          &x.o.ts[1]);
  }).msg_has = "MultiheadAttention(embed_dim=3";
  T.add(mhf, "key_padding_mask_of_another_length", {SM}, [](Ctx& x) {
    return dt_multihead_attention_forward(LiveAttention().m, x.a, nullptr, nullptr, x.v4, nullptr, 1, &x.o.ts[0],
                                          &x.o.ts[1]);
  }).msg_has = "key_padding_mask";
  T.add("dt_transformer_encoder_layer_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_transformer_encoder_layer_new(4, 2, 8, 0.0, "relu", 1e-5, 0, 0, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_transformer_encoder_layer_new", "activation=tanh", {IA}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_layer_new(4, 2, 8, 0.0, "tanh", 1e-5, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "tanh";
  T.add("dt_transformer_encoder_layer_new", "nhead_not_dividing", {IA}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_layer_new(4, 3, 8, 0.0, "relu", 1e-5, 0, 0, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_transformer_encoder_layer_new", "norm_first=2", {IA}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_layer_new(4, 2, 8, 0.0, "relu", 1e-5, 0, 2, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_transformer_encoder_layer_new", "dtype=int32", {TM}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_layer_new(4, 2, 8, 0.0, "relu", 1e-5, 0, 0, DT_INT32, CPU0, mod_out(x));
  });
  T.devices("dt_transformer_encoder_layer_new", [mod_out](Ctx& x, dt_device d) {
    return dt_transformer_encoder_layer_new(4, 2, 8, 0.0, nullptr, 1e-5, 0, 0, DT_FLOAT32, d, mod_out(x));
  });
  T.add("dt_transformer_encoder_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_transformer_encoder_new(nullptr, 0, nullptr, nullptr);
  });
  T.add("dt_transformer_encoder_new", "no_layers", {IA}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_new(nullptr, 0, nullptr, mod_out(x));
  });
  T.add("dt_transformer_encoder_new", "layers=NULL_n=2", {IA}, [mod_out](Ctx& x) {
    return dt_transformer_encoder_new(nullptr, 2, nullptr, mod_out(x));
  });
  T.add("dt_transformer_encoder_new", "not_an_encoder_layer", {IA}, [mod_out](Ctx& x) {
    LiveModule l(x);
    dt_module* layers[1] = {l.lin};
    return dt_transformer_encoder_new(layers, 1, nullptr, mod_out(x));
  }).msg_has = "not a TransformerEncoderLayer";
  mod_handles("dt_transformer_encoder_new", [mod_out](Ctx& x, dt_module* m) {
    dt_module* layers[1] = {m};
    return dt_transformer_encoder_new(layers, 1, nullptr, mod_out(x));
  }, false);
  T.add("dt_embedding_new", "out=NULL", {IA}, [](Ctx&) {
    return dt_embedding_new(5, 3, DT_PADDING_IDX_NONE, DT_FLOAT32, CPU0, nullptr);
  });
  T.add("dt_embedding_new", "num_embeddings=0", {IA}, [mod_out](Ctx& x) {
    return dt_embedding_new(0, 3, DT_PADDING_IDX_NONE, DT_FLOAT32, CPU0, mod_out(x));
  });
  T.add("dt_embedding_new", "padding_idx=5", {IA}, [mod_out](Ctx& x) {
    return dt_embedding_new(5, 3, 5, DT_FLOAT32, CPU0, mod_out(x));
  }).msg_has = "padding_idx";
  T.add("dt_embedding_new", "dtype=int64", {TM}, [mod_out](Ctx& x) {
    return dt_embedding_new(5, 3, DT_PADDING_IDX_NONE, DT_INT64, CPU0, mod_out(x));
  });
  T.devices("dt_embedding_new", [mod_out](Ctx& x, dt_device d) {
    return dt_embedding_new(5, 3, DT_PADDING_IDX_NONE, DT_FLOAT32, d, mod_out(x));
  });
  T.add("dt_sequential_new", "out=NULL", {IA}, [](Ctx&) { return dt_sequential_new(nullptr, 0, nullptr); });
  T.add("dt_sequential_new", "modules=NULL_n=2", {IA}, [mod_out](Ctx& x) { return dt_sequential_new(nullptr, 2, mod_out(x)); });
  mod_handles("dt_sequential_new", [mod_out](Ctx& x, dt_module* m) {
    dt_module* parts[] = {m};
    return dt_sequential_new(parts, 1, mod_out(x));
  });
  using Simple = dt_status (*)(dt_module**);
  for (auto [name, f] : {std::pair<const char*, Simple>{FN(dt_relu_new)}, std::pair<const char*, Simple>{FN(dt_sigmoid_new)},
                         std::pair<const char*, Simple>{FN(dt_tanh_new)}, std::pair<const char*, Simple>{FN(dt_gelu_new)},
                         std::pair<const char*, Simple>{FN(dt_gelu_tanh_new)}, std::pair<const char*, Simple>{FN(dt_silu_new)}})
    T.add(name, "out=NULL", {IA}, [f = f](Ctx&) { return f(nullptr); });
  T.add("dt_leaky_relu_new", "out=NULL", {IA}, [](Ctx&) { return dt_leaky_relu_new(0.01, nullptr); });
  T.add("dt_leaky_relu_new", "slope=inf", {IA}, [mod_out](Ctx& x) {
    return dt_leaky_relu_new(std::numeric_limits<double>::infinity(), mod_out(x));
  }).msg_has = "LeakyReLU";
  T.add("dt_softmax_new", "out=NULL", {IA}, [](Ctx&) { return dt_softmax_new(1, nullptr); });
  T.add("dt_log_softmax_new", "out=NULL", {IA}, [](Ctx&) { return dt_log_softmax_new(1, nullptr); });
  T.add("dt_flatten_new", "out=NULL", {IA}, [](Ctx&) { return dt_flatten_new(1, -1, nullptr); });
  T.add("dt_dropout_new", "out=NULL", {IA}, [](Ctx&) { return dt_dropout_new(0.5, nullptr); });
  for (double p : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()})
    T.add("dt_dropout_new", "p=" + std::to_string(p), {IA}, [mod_out, p](Ctx& x) { return dt_dropout_new(p, mod_out(x)); });
  const std::string ce = "dt_cross_entropy_loss_new";
  T.add(ce, "out=NULL", {IA}, [](Ctx&) { return dt_cross_entropy_loss_new(nullptr, 1, -100, 0, nullptr); });
  T.add(ce, "reduction=3", {IA}, [mod_out](Ctx& x) { return dt_cross_entropy_loss_new(nullptr, 3, -100, 0, mod_out(x)); });
  T.add(ce, "label_smoothing=2", {IA}, [mod_out](Ctx& x) { return dt_cross_entropy_loss_new(nullptr, 1, -100, 2, mod_out(x)); });
  T.add(ce, "weight=int32", {IA}, [mod_out](Ctx& x) { return dt_cross_entropy_loss_new(x.i32, 1, -100, 0, mod_out(x)); });
  T.add(ce, "weight=2d", {IA}, [mod_out](Ctx& x) { return dt_cross_entropy_loss_new(x.a, 1, -100, 0, mod_out(x)); });
  T.handles(ce, "weight", [mod_out](Ctx& x, const dt_tensor* w) { return dt_cross_entropy_loss_new(w, 1, -100, 0, mod_out(x)); },
            /*with_null=*/false);
  const std::string nl = "dt_nll_loss_new";
  T.add(nl, "out=NULL", {IA}, [](Ctx&) { return dt_nll_loss_new(nullptr, 1, -100, nullptr); });
  T.add(nl, "reduction=-1", {IA}, [mod_out](Ctx& x) { return dt_nll_loss_new(nullptr, -1, -100, mod_out(x)); });
  T.handles(nl, "weight", [mod_out](Ctx& x, const dt_tensor* w) { return dt_nll_loss_new(w, 1, -100, mod_out(x)); },
            /*with_null=*/false);
  T.add("dt_mse_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_mse_loss_new(1, nullptr); });
  T.add("dt_mse_loss_new", "reduction=9", {IA}, [mod_out](Ctx& x) { return dt_mse_loss_new(9, mod_out(x)); });
  // The pointwise losses.
  const double kNaN = std::numeric_limits<double>::quiet_NaN(), kInf = std::numeric_limits<double>::infinity();
  T.add("dt_l1_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_l1_loss_new(1, nullptr); });
  T.add("dt_l1_loss_new", "reduction=9", {IA}, [mod_out](Ctx& x) { return dt_l1_loss_new(9, mod_out(x)); });
  T.add("dt_l1_loss_new", "reduction=BATCHMEAN", {IA}, [mod_out](Ctx& x) {
    return dt_l1_loss_new(DT_REDUCTION_BATCHMEAN, mod_out(x));
  }).msg_has = "dt_kl_div_loss_new";
  T.add("dt_smooth_l1_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_smooth_l1_loss_new(1, 1.0, nullptr); });
  T.add("dt_smooth_l1_loss_new", "reduction=-1", {IA}, [mod_out](Ctx& x) { return dt_smooth_l1_loss_new(-1, 1.0, mod_out(x)); });
  for (double beta : {-1.0, kNaN, kInf})
    T.add("dt_smooth_l1_loss_new", "beta=" + std::to_string(beta), {IA}, [mod_out, beta](Ctx& x) {
      return dt_smooth_l1_loss_new(1, beta, mod_out(x));
    }).msg_has = "beta";
  T.add("dt_huber_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_huber_loss_new(1, 1.0, nullptr); });
  T.add("dt_huber_loss_new", "reduction=3", {IA}, [mod_out](Ctx& x) { return dt_huber_loss_new(3, 1.0, mod_out(x)); });
  for (double delta : {0.0, -1.0, kNaN, kInf})
    T.add("dt_huber_loss_new", "delta=" + std::to_string(delta), {IA}, [mod_out, delta](Ctx& x) {
      return dt_huber_loss_new(1, delta, mod_out(x));
    }).msg_has = "delta";
  T.add("dt_bce_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_bce_loss_new(nullptr, 1, nullptr); });
  T.add("dt_bce_loss_new", "reduction=5", {IA}, [mod_out](Ctx& x) { return dt_bce_loss_new(nullptr, 5, mod_out(x)); });
  T.add("dt_bce_loss_new", "weight=int32", {TM}, [mod_out](Ctx& x) { return dt_bce_loss_new(x.i32, 1, mod_out(x)); })
      .msg_has = "weight";
  T.handles("dt_bce_loss_new", "weight", [mod_out](Ctx& x, const dt_tensor* w) { return dt_bce_loss_new(w, 1, mod_out(x)); },
            /*with_null=*/false);
  const std::string bl = "dt_bce_with_logits_loss_new";
  T.add(bl, "out=NULL", {IA}, [](Ctx&) { return dt_bce_with_logits_loss_new(nullptr, nullptr, 1, nullptr); });
  T.add(bl, "reduction=9", {IA}, [mod_out](Ctx& x) { return dt_bce_with_logits_loss_new(nullptr, nullptr, 9, mod_out(x)); });
  T.add(bl, "weight=int32", {TM}, [mod_out](Ctx& x) { return dt_bce_with_logits_loss_new(x.i32, nullptr, 1, mod_out(x)); })
      .msg_has = "weight";
  T.add(bl, "pos_weight=bool", {TM}, [mod_out](Ctx& x) { return dt_bce_with_logits_loss_new(nullptr, x.bl, 1, mod_out(x)); })
      .msg_has = "pos_weight";
  T.handles(bl, "weight", [mod_out](Ctx& x, const dt_tensor* w) { return dt_bce_with_logits_loss_new(w, nullptr, 1, mod_out(x)); },
            /*with_null=*/false);
  T.handles(bl, "pos_weight", [mod_out](Ctx& x, const dt_tensor* w) {
    return dt_bce_with_logits_loss_new(nullptr, w, 1, mod_out(x));
  }, /*with_null=*/false);
  T.add("dt_kl_div_loss_new", "out=NULL", {IA}, [](Ctx&) { return dt_kl_div_loss_new(1, 0, nullptr); });
  T.add("dt_kl_div_loss_new", "reduction=4", {IA}, [mod_out](Ctx& x) { return dt_kl_div_loss_new(4, 0, mod_out(x)); })
      .msg_has = "BATCHMEAN";
  T.add("dt_kl_div_loss_new", "log_target=2", {IA}, [mod_out](Ctx& x) { return dt_kl_div_loss_new(1, 2, mod_out(x)); });

  const std::string dp = "dt_data_parallel_new";
  const dt_device kDefaultDevice{DT_DEVICE_DEFAULT, 0};
  T.add(dp, "out=NULL", {IA}, [kDefaultDevice](Ctx& x) {
    LiveModule l(x);
    return dt_data_parallel_new(l.lin, nullptr, 0, kDefaultDevice, nullptr);
  });
  T.add(dp, "device_ids=NULL_n=2", {IA}, [mod_out, kDefaultDevice](Ctx& x) {
    LiveModule l(x);
    return dt_data_parallel_new(l.lin, nullptr, 2, kDefaultDevice, mod_out(x));
  });
  T.add(dp, "device_ids=cpu:0,cpu:0", {IA}, [mod_out, kDefaultDevice](Ctx& x) {
    LiveModule l(x);
    const dt_device ids[2] = {CPU0, CPU0};
    return dt_data_parallel_new(l.lin, ids, 2, kDefaultDevice, mod_out(x));
  }).msg_has = "appears twice";
  mod_handles(dp, [mod_out, kDefaultDevice](Ctx& x, dt_module* m) {
    return dt_data_parallel_new(m, nullptr, 0, kDefaultDevice, mod_out(x));
  });
  T.devices(dp, [mod_out, kDefaultDevice](Ctx& x, dt_device d) {
    LiveModule l(x);
    const dt_device ids[2] = {CPU0, d};
    return dt_data_parallel_new(l.lin, ids, 2, kDefaultDevice, mod_out(x));
  });
  T.add(dp, "output_device=cpu:5", {ID}, [mod_out](Ctx& x) {
    LiveModule l(x);
    const dt_device ids[1] = {CPU0};
    return dt_data_parallel_new(l.lin, ids, 1, dt_device{DT_DEVICE_CPU, 5}, mod_out(x));
  }).msg_has = "output_device";

  mod_handles("dt_module_retain", [](Ctx&, dt_module* m) { return dt_module_retain(m); });
  mod_handles("dt_module_release", [](Ctx&, dt_module* m) { return dt_module_release(m); }, false);
  const std::string fw = "dt_module_forward";
  mod_handles(fw, [](Ctx& x, dt_module* m) {
    const dt_tensor* in[] = {x.a};
    return dt_module_forward(m, in, 1, &x.o.t);
  });
  T.handles(fw, "inputs[0]", [](Ctx& x, const dt_tensor* t) {
    LiveModule l(x);
    const dt_tensor* in[] = {t};
    return dt_module_forward(l.lin, in, 1, &x.o.t);
  });
  T.add(fw, "out=NULL", {IA}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.a};
    return dt_module_forward(l.lin, in, 1, nullptr);
  });
  T.add(fw, "inputs=NULL", {IA}, [](Ctx& x) { return dt_module_forward(LiveModule(x).lin, nullptr, 1, &x.o.t); });
  T.add(fw, "n=2_for_linear", {IA}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.a, x.a};
    return dt_module_forward(l.lin, in, 2, &x.o.t);
  });
  T.add(fw, "features_mismatch", {SM}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.v4};
    return dt_module_forward(l.lin, in, 1, &x.o.t);
  }).msg_has = "[4]";
  T.add(fw, "input_on_cpu1", {DM}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.a1};
    return dt_module_forward(l.lin, in, 1, &x.o.t);
  }).msg_has = "module parameters are on cpu:0 but the input is on cpu:1";
  T.cases.back().needs = Needs::TwoCpus;
  T.add(fw, "loss_probabilities_of_another_shape", {SM}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.a, x.v3};  // a floating target holds probabilities: the input's shape
    return dt_module_forward(l.loss, in, 2, &x.o.t);
  }).msg_has = "class probabilities";
  T.add(fw, "loss_int_input_probabilities", {TM}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.i32, x.b};
    return dt_module_forward(l.loss, in, 2, &x.o.t);
  });
  T.add(fw, "loss_target_out_of_range", {IA}, [](Ctx& x) {
    LiveModule l(x);
    const int64_t classes[] = {0, 7}, n = 2;
    dt_tensor* target = nullptr;
    if (dt_tensor_from_data(classes, sizeof classes, &n, 1, DT_INT64, CPU0, &target) != DT_OK) return dt_status{-999};
    const dt_tensor* in[] = {x.a, target};
    dt_status st = dt_module_forward(l.loss, in, 2, &x.o.t);
    dt_tensor_release(target);
    return st;
  }).msg_has = "target 7 is out of bounds";
  T.add(fw, "loss_target_shape", {SM}, [](Ctx& x) {
    LiveModule l(x);
    const dt_tensor* in[] = {x.a, x.gidx};
    return dt_module_forward(l.loss, in, 2, &x.o.t);
  });
  mod_handles("dt_module_to", [](Ctx&, dt_module* m) { return dt_module_to(m, CPU0); });
  T.devices("dt_module_to", [](Ctx& x, dt_device d) { return dt_module_to(LiveModule(x).lin, d); });
  mod_handles("dt_module_device", [](Ctx& x, dt_module* m) { return dt_module_device(m, &x.o.dev); });
  T.add("dt_module_device", "out=NULL", {IA}, [](Ctx& x) { return dt_module_device(LiveModule(x).lin, nullptr); });
  mod_handles("dt_module_train", [](Ctx&, dt_module* m) { return dt_module_train(m); });
  mod_handles("dt_module_eval", [](Ctx&, dt_module* m) { return dt_module_eval(m); });
  for (const char* fn : {"dt_module_parameter_count", "dt_module_buffer_count"}) {
    const bool params = std::string(fn) == "dt_module_parameter_count";
    mod_handles(fn, [params](Ctx& x, dt_module* m) {
      return params ? dt_module_parameter_count(m, &x.o.sz) : dt_module_buffer_count(m, &x.o.sz);
    });
    T.add(fn, "out=NULL", {IA}, [params](Ctx& x) {
      LiveModule l(x);
      return params ? dt_module_parameter_count(l.lin, nullptr) : dt_module_buffer_count(l.lin, nullptr);
    });
  }
  for (const char* fn : {"dt_module_parameter", "dt_module_buffer"}) {
    const bool params = std::string(fn) == "dt_module_parameter";
    auto call = [params](dt_module* m, size_t i, char* buf, size_t cap, size_t* need, dt_tensor** t) {
      return params ? dt_module_parameter(m, i, buf, cap, need, t) : dt_module_buffer(m, i, buf, cap, need, t);
    };
    mod_handles(fn, [call](Ctx& x, dt_module* m) { return call(m, 0, x.o.buf, sizeof x.o.buf, &x.o.sz, &x.o.t); });
    T.add(fn, "i=out_of_range", {IA}, [call](Ctx& x) {
      LiveModule l(x);
      return call(l.lin, 5, x.o.buf, sizeof x.o.buf, &x.o.sz, &x.o.t);
    }).msg_has = "out of range";
    T.add(fn, "buf=NULL_cap=8", {IA}, [call](Ctx& x) {
      LiveModule l(x);
      return call(l.lin, 0, nullptr, 8, &x.o.sz, &x.o.t);
    });
  }

  // Children and kind (a Linear has no children).
  mod_handles("dt_module_kind", [](Ctx& x, dt_module* m) { return dt_module_kind(m, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  T.add("dt_module_kind", "buf=NULL_cap=8", {IA}, [](Ctx& x) { return dt_module_kind(LiveModule(x).lin, nullptr, 8, nullptr); });
  mod_handles("dt_module_child_count", [](Ctx& x, dt_module* m) { return dt_module_child_count(m, &x.o.sz); });
  T.add("dt_module_child_count", "out=NULL", {IA}, [](Ctx& x) { return dt_module_child_count(LiveModule(x).lin, nullptr); });
  mod_handles("dt_module_child_at", [mod_out](Ctx& x, dt_module* m) {
    return dt_module_child_at(m, 0, x.o.buf, sizeof x.o.buf, &x.o.sz, mod_out(x));
  });
  T.add("dt_module_child_at", "i=out_of_range", {IA}, [mod_out](Ctx& x) {
    return dt_module_child_at(LiveModule(x).lin, 0, nullptr, 0, nullptr, mod_out(x));
  }).msg_has = "0 children";
  mod_handles("dt_module_child", [mod_out](Ctx& x, dt_module* m) { return dt_module_child(m, "0", mod_out(x)); });
  T.add("dt_module_child", "out=NULL", {IA}, [](Ctx& x) { return dt_module_child(LiveModule(x).lin, "0", nullptr); });
  T.add("dt_module_child", "path=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_module_child(LiveModule(x).lin, nullptr, mod_out(x));
  });
  T.add("dt_module_child", "path=missing", {IA}, [mod_out](Ctx& x) {
    return dt_module_child(LiveModule(x).lin, "no.such", mod_out(x));
  }).msg_has = "no child \"no\"";
  // Custom modules: a spec around a Linear child, each row spoiling one part of it.
  struct Spec {
    dt_module* child = nullptr;
    const char* names[1] = {"lin"};
    dt_module* children[1] = {nullptr};
    dt_module_spec s{};
    explicit Spec(Ctx&) {
      dt_linear_new(3, 2, 1, DT_FLOAT32, CPU0, &child);
      children[0] = child;
      s.struct_size = sizeof s;
      s.kind = "Custom";
      s.n_children = 1;
      s.child_names = names;
      s.children = children;
      s.forward = [](dt_module*, dt_tensor* const*, size_t, void*, dt_tensor**) { return dt_status{DT_ERR_INTERNAL}; };
    }
    ~Spec() { dt_module_release(child); }
  };
  T.add("dt_module_new", "spec=NULL", {IA}, [mod_out](Ctx& x) { return dt_module_new(nullptr, mod_out(x)); });
  T.add("dt_module_new", "out=NULL", {IA}, [](Ctx& x) {
    Spec sp(x);
    return dt_module_new(&sp.s, nullptr);
  });
  T.add("dt_module_new", "struct_size=0", {IA}, [mod_out](Ctx& x) {
    Spec sp(x);
    sp.s.struct_size = 0;
    return dt_module_new(&sp.s, mod_out(x));
  }).msg_has = "struct_size";
  T.add("dt_module_new", "forward=NULL", {IA}, [mod_out](Ctx& x) {
    Spec sp(x);
    sp.s.forward = nullptr;
    return dt_module_new(&sp.s, mod_out(x));
  }).msg_has = "forward";
  T.add("dt_module_new", "name=dotted", {IA}, [mod_out](Ctx& x) {
    Spec sp(x);
    sp.names[0] = "a.b";
    return dt_module_new(&sp.s, mod_out(x));
  }).msg_has = "\"a.b\"";
  T.add("dt_module_new", "child=released", {IH}, [mod_out](Ctx& x) {
    Spec sp(x);
    dt_module* m = nullptr;
    if (dt_relu_new(&m) != DT_OK || dt_module_release(m) != DT_OK) return dt_status{-999};
    sp.children[0] = m;
    return dt_module_new(&sp.s, mod_out(x));
  });
  T.add("dt_module_new", "child=tensor_handle", {IH}, [mod_out](Ctx& x) {
    Spec sp(x);
    sp.children[0] = reinterpret_cast<dt_module*>(x.a);
    return dt_module_new(&sp.s, mod_out(x));
  });
  T.add("dt_module_new", "parameter=int", {TM}, [mod_out](Ctx& x) {
    Spec sp(x);
    const char* pn[] = {"w"};
    const dt_tensor* ps[] = {x.gidx};
    sp.s.n_parameters = 1;
    sp.s.parameter_names = pn;
    sp.s.parameters = ps;
    return dt_module_new(&sp.s, mod_out(x));
  }).msg_has = "floating";
  for (const char* fn : {"dt_module_get_parameter", "dt_module_get_buffer"}) {
    const bool params = std::string(fn) == "dt_module_get_parameter";
    auto call = [params](const dt_module* m, const char* path, dt_tensor** out) {
      return params ? dt_module_get_parameter(m, path, out) : dt_module_get_buffer(m, path, out);
    };
    mod_handles(fn, [call](Ctx& x, dt_module* m) { return call(m, "weight", &x.o.t); });
    T.add(fn, "out=NULL", {IA}, [call](Ctx& x) { return call(LiveModule(x).lin, "weight", nullptr); });
    T.add(fn, "path=NULL", {IA}, [call](Ctx& x) { return call(LiveModule(x).lin, nullptr, &x.o.t); });
    T.add(fn, "path=missing", {IA}, [call](Ctx& x) { return call(LiveModule(x).lin, "gamma", &x.o.t); }).msg_has =
        "\"gamma\"";
    T.add(fn, "path=no_child", {IA}, [call](Ctx& x) { return call(LiveModule(x).lin, "head.weight", &x.o.t); })
        .msg_has = "no child \"head\"";
  }
  mod_handles("dt_module_state_dict", [](Ctx& x, dt_module* m) {
    return dt_module_state_dict(m, reinterpret_cast<dt_state_dict**>(&x.o.ptr));
  });
  T.add("dt_module_state_dict", "out=NULL", {IA}, [](Ctx& x) { return dt_module_state_dict(LiveModule(x).lin, nullptr); });
  mod_handles("dt_module_load_state_dict", [](Ctx& x, dt_module* m) {
    LiveStateDict sd(x);
    return dt_module_load_state_dict(m, sd.p);
  });
  T.add("dt_module_load_state_dict", "sd=NULL", {IA}, [](Ctx& x) { return dt_module_load_state_dict(LiveModule(x).lin, nullptr); });
  T.add("dt_module_load_state_dict", "missing_keys", {IA}, [](Ctx& x) {
    LiveModule l(x);
    LiveStateDict sd(x);  // holds "w" only
    return dt_module_load_state_dict(l.lin, sd.p);
  }).msg_has = "missing key";
  mod_handles("dt_module_save", [](Ctx&, dt_module* m) {
    return dt_module_save(m, (contract_files().dir + "/module_never_written.safetensors").c_str());
  });
  T.add("dt_module_save", "path=NULL", {IA}, [](Ctx& x) { return dt_module_save(LiveModule(x).lin, nullptr); });
  T.add("dt_module_save", "path=empty", {IA}, [](Ctx& x) { return dt_module_save(LiveModule(x).lin, ""); });
  T.add("dt_module_save", "path_in_missing_directory", {DT_ERR_IO},
        [](Ctx& x) { return dt_module_save(LiveModule(x).lin, contract_files().missing_dir.c_str()); });
  mod_handles("dt_module_load", [](Ctx&, dt_module* m) { return dt_module_load(m, contract_files().valid.c_str()); });
  T.add("dt_module_load", "path=NULL", {IA}, [](Ctx& x) { return dt_module_load(LiveModule(x).lin, nullptr); });
  T.add("dt_module_load", "missing_file", {DT_ERR_IO},
        [](Ctx& x) { return dt_module_load(LiveModule(x).lin, contract_files().missing_dir.c_str()); });
  T.add("dt_module_load", "truncated_file", {DT_ERR_FORMAT},
        [](Ctx& x) { return dt_module_load(LiveModule(x).lin, contract_files().bad.c_str()); });
  T.add("dt_module_load", "keys_of_another_model", {DT_ERR_FORMAT},
        [](Ctx& x) { return dt_module_load(LiveModule(x).lin, contract_files().valid.c_str()); })
      .msg_has = "key";

  // Optimizers.
  auto opt_handles = [&T](const std::string& fn, OptimizerCall call, bool with_null = true) {
    add_optimizer_handle_rows(T, fn, std::move(call), with_null);
  };
  auto opt_out = [](Ctx& x) { return reinterpret_cast<dt_optimizer**>(&x.o.ptr); };
  T.add("dt_sgd_new", "out=NULL", {IA}, [](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_sgd_new(p, 1, 0.1, 0, 0, 0, 0, nullptr);
  });
  T.add("dt_sgd_new", "params=NULL_n=1", {IA}, [opt_out](Ctx& x) { return dt_sgd_new(nullptr, 1, 0.1, 0, 0, 0, 0, opt_out(x)); });
  T.handles("dt_sgd_new", "params[0]", [opt_out](Ctx& x, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_sgd_new(p, 1, 0.1, 0, 0, 0, 0, opt_out(x));
  });
  struct S { const char* what; double lr, mom, damp, wd; int32_t nest; dt_status code; };
  for (const S& c : {S{"lr=-1", -1, 0, 0, 0, 0, IA}, S{"momentum=-1", 0.1, -1, 0, 0, 0, IA},
                     S{"weight_decay=-1", 0.1, 0, 0, -1, 0, IA}, S{"nesterov_without_momentum", 0.1, 0, 0, 0, 1, IA},
                     S{"nesterov=2", 0.1, 0.9, 0, 0, 2, IA}}) {
    T.add("dt_sgd_new", c.what, {c.code}, [opt_out, c](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_sgd_new(p, 1, c.lr, c.mom, c.damp, c.wd, c.nest, opt_out(x));
    });
  }
  T.add("dt_sgd_new", "integer_param", {TM}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.i32};
    return dt_sgd_new(p, 1, 0.1, 0, 0, 0, 0, opt_out(x));
  });
  T.add("dt_sgd_new", "n=0", {IA}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_sgd_new(p, 0, 0.1, 0, 0, 0, 0, opt_out(x));
  }).msg_has = "empty parameter list";
  T.add("dt_adam_new", "n=0", {IA}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_adam_new(p, 0, 1e-3, 0.9, 0.999, 1e-8, 0, 0, opt_out(x));
  }).msg_has = "empty parameter list";
  T.add("dt_sgd_new", "non_leaf_param", {IA}, [opt_out](Ctx& x) {
    const int64_t n = 3;
    dt_tensor *leaf = nullptr, *twice = nullptr;
    if (dt_tensor_zeros(&n, 1, DT_FLOAT32, CPU0, &leaf) != DT_OK) return dt_status{-999};
    dt_status st = dt_tensor_set_requires_grad(leaf, 1);
    if (st == DT_OK) st = dt_mul_scalar(leaf, 2.0, &twice);
    if (st == DT_OK) {
      const dt_tensor* p[] = {twice};
      st = dt_sgd_new(p, 1, 0.1, 0, 0, 0, 0, opt_out(x));
    } else {
      st = dt_status{-999};
    }
    dt_tensor_release(twice);
    dt_tensor_release(leaf);
    return st;
  }).msg_has = "non-leaf";
  T.add("dt_adam_new", "out=NULL", {IA}, [](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_adam_new(p, 1, 1e-3, 0.9, 0.999, 1e-8, 0, 0, nullptr);
  });
  T.handles("dt_adam_new", "params[0]", [opt_out](Ctx& x, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_adam_new(p, 1, 1e-3, 0.9, 0.999, 1e-8, 0, 0, opt_out(x));
  });
  struct A { const char* what; double lr, b1, b2, eps, wd; int32_t dec; };
  for (const A& c : {A{"lr=-1", -1, 0.9, 0.999, 1e-8, 0, 0}, A{"beta1=1", 1e-3, 1, 0.999, 1e-8, 0, 0},
                     A{"beta2=-0.5", 1e-3, 0.9, -0.5, 1e-8, 0, 0}, A{"eps=-1", 1e-3, 0.9, 0.999, -1, 0, 0},
                     A{"decoupled=3", 1e-3, 0.9, 0.999, 1e-8, 0, 3}}) {
    T.add("dt_adam_new", c.what, {IA}, [opt_out, c](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_adam_new(p, 1, c.lr, c.b1, c.b2, c.eps, c.wd, c.dec, opt_out(x));
    });
  }
  T.add("dt_rmsprop_new", "out=NULL", {IA}, [](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_rmsprop_new(p, 1, 0.01, 0.99, 1e-8, 0, 0, 0, nullptr);
  });
  T.add("dt_rmsprop_new", "params=NULL_n=1", {IA}, [opt_out](Ctx& x) {
    return dt_rmsprop_new(nullptr, 1, 0.01, 0.99, 1e-8, 0, 0, 0, opt_out(x));
  });
  T.handles("dt_rmsprop_new", "params[0]", [opt_out](Ctx& x, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_rmsprop_new(p, 1, 0.01, 0.99, 1e-8, 0, 0, 0, opt_out(x));
  });
  T.add("dt_rmsprop_new", "integer_param", {TM}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.i32};
    return dt_rmsprop_new(p, 1, 0.01, 0.99, 1e-8, 0, 0, 0, opt_out(x));
  });
  T.add("dt_rmsprop_new", "n=0", {IA}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_rmsprop_new(p, 0, 0.01, 0.99, 1e-8, 0, 0, 0, opt_out(x));
  }).msg_has = "empty parameter list";
  struct R { const char* what; double lr, alpha, eps, wd, mom; int32_t centered; const char* msg; };
  for (const R& c : {R{"lr=-1", -1, 0.99, 1e-8, 0, 0, 0, "learning rate"}, R{"alpha=-1", 0.01, -1, 1e-8, 0, 0, 0, "alpha"},
                     R{"eps=NaN", 0.01, 0.99, kNaN, 0, 0, 0, "epsilon"},
                     R{"weight_decay=-1", 0.01, 0.99, 1e-8, -1, 0, 0, "weight_decay"},
                     R{"momentum=-1", 0.01, 0.99, 1e-8, 0, -1, 0, "momentum"},
                     R{"centered=2", 0.01, 0.99, 1e-8, 0, 0, 2, "centered"}}) {
    T.add("dt_rmsprop_new", c.what, {IA}, [opt_out, c](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_rmsprop_new(p, 1, c.lr, c.alpha, c.eps, c.wd, c.mom, c.centered, opt_out(x));
    }).msg_has = c.msg;
  }
  T.add("dt_adagrad_new", "out=NULL", {IA}, [](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_adagrad_new(p, 1, 0.01, 0, 0, 0, 1e-10, nullptr);
  });
  T.add("dt_adagrad_new", "params=NULL_n=1", {IA}, [opt_out](Ctx& x) {
    return dt_adagrad_new(nullptr, 1, 0.01, 0, 0, 0, 1e-10, opt_out(x));
  });
  T.handles("dt_adagrad_new", "params[0]", [opt_out](Ctx& x, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_adagrad_new(p, 1, 0.01, 0, 0, 0, 1e-10, opt_out(x));
  });
  T.add("dt_adagrad_new", "integer_param", {TM}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.i32};
    return dt_adagrad_new(p, 1, 0.01, 0, 0, 0, 1e-10, opt_out(x));
  });
  T.add("dt_adagrad_new", "n=0", {IA}, [opt_out](Ctx& x) {
    const dt_tensor* p[] = {x.a};
    return dt_adagrad_new(p, 0, 0.01, 0, 0, 0, 1e-10, opt_out(x));
  }).msg_has = "empty parameter list";
  struct G { const char* what; double lr, lr_decay, wd, init, eps; const char* msg; };
  for (const G& c : {G{"lr=-1", -1, 0, 0, 0, 1e-10, "learning rate"}, G{"lr_decay=-1", 0.01, -1, 0, 0, 1e-10, "lr_decay"},
                     G{"weight_decay=NaN", 0.01, 0, kNaN, 0, 1e-10, "weight_decay"},
                     G{"initial_accumulator_value=-1", 0.01, 0, 0, -1, 1e-10, "initial_accumulator_value"},
                     G{"eps=-1", 0.01, 0, 0, 0, -1, "epsilon"}}) {
    T.add("dt_adagrad_new", c.what, {IA}, [opt_out, c](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_adagrad_new(p, 1, c.lr, c.lr_decay, c.wd, c.init, c.eps, opt_out(x));
    }).msg_has = c.msg;
  }
  opt_handles("dt_optimizer_step", [](Ctx&, dt_optimizer* o) { return dt_optimizer_step(o); });
  opt_handles("dt_optimizer_zero_grad", [](Ctx&, dt_optimizer* o) { return dt_optimizer_zero_grad(o); });
  opt_handles("dt_optimizer_retain", [](Ctx&, dt_optimizer* o) { return dt_optimizer_retain(o); });
  opt_handles("dt_optimizer_release", [](Ctx&, dt_optimizer* o) { return dt_optimizer_release(o); }, false);
  opt_handles("dt_optimizer_lr", [](Ctx& x, dt_optimizer* o) { return dt_optimizer_lr(o, &x.o.d); });
  T.add("dt_optimizer_lr", "out=NULL", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_lr(o.p, nullptr);
  });
  opt_handles("dt_optimizer_set_lr", [](Ctx&, dt_optimizer* o) { return dt_optimizer_set_lr(o, 0.5); });
  for (double lr : {-0.1, std::numeric_limits<double>::quiet_NaN()})
    T.add("dt_optimizer_set_lr", "lr=" + std::to_string(lr), {IA}, [lr](Ctx& x) {
      LiveOptimizer o(x);
      return dt_optimizer_set_lr(o.p, lr);
    }).msg_has = "learning rate";
  opt_handles("dt_optimizer_option", [](Ctx& x, dt_optimizer* o) { return dt_optimizer_option(o, "lr", &x.o.d); });
  T.add("dt_optimizer_option", "name=NULL", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_option(o.p, nullptr, &x.o.d);
   }).msg_has = "name is NULL";
  T.add("dt_optimizer_option", "out=NULL", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_option(o.p, "lr", nullptr);
  });
  T.add("dt_optimizer_option", "name=unknown", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_option(o.p, "betas", &x.o.d);
   }).msg_has = "SGD has no setting \"betas\"";
  T.add("dt_optimizer_option", "name=empty", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_option(o.p, "", &x.o.d);
  });
  opt_handles("dt_optimizer_set_option", [](Ctx&, dt_optimizer* o) { return dt_optimizer_set_option(o, "lr", 0.5); });
  T.add("dt_optimizer_set_option", "name=NULL", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_set_option(o.p, nullptr, 0.5);
   }).msg_has = "name is NULL";
  T.add("dt_optimizer_set_option", "name=unknown", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_set_option(o.p, "amsgrad", 1);
   }).msg_has = "its settings: lr, momentum, dampening, weight_decay, nesterov, maximize";
  for (double v : {-0.1, std::numeric_limits<double>::quiet_NaN()})
    T.add("dt_optimizer_set_option", "momentum=" + std::to_string(v), {IA}, [v](Ctx& x) {
       LiveOptimizer o(x);
       return dt_optimizer_set_option(o.p, "momentum", v);
     }).msg_has = "invalid momentum value";
  for (double v : {2.0, -1.0, 0.5})
    T.add("dt_optimizer_set_option", "maximize=" + std::to_string(v), {IA}, [v](Ctx& x) {
       LiveOptimizer o(x);
       return dt_optimizer_set_option(o.p, "maximize", v);
     }).msg_has = "is a flag: 0 or 1";
  T.add("dt_optimizer_set_option", "nesterov_without_momentum", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_set_option(o.p, "nesterov", 1);
   }).msg_has = "Nesterov momentum requires a momentum";
  T.add("dt_optimizer_set_option", "lr=inf", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     return dt_optimizer_set_option(o.p, "lr", std::numeric_limits<double>::infinity());
   }).msg_has = "learning rate";
  auto sd_out = [](Ctx& x) { return reinterpret_cast<dt_state_dict**>(&x.o.ptr); };
  opt_handles("dt_optimizer_state_dict", [sd_out](Ctx& x, dt_optimizer* o) { return dt_optimizer_state_dict(o, sd_out(x)); });
  T.add("dt_optimizer_state_dict", "out=NULL", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_state_dict(o.p, nullptr);
  });
  // A live, empty state dict for the rows of dt_optimizer_load_state_dict.
  struct LiveDict {
    dt_state_dict* s = nullptr;
    LiveDict() { dt_state_dict_new(&s); }
    ~LiveDict() { dt_state_dict_release(s); }
  };
  const std::string ls = "dt_optimizer_load_state_dict";
  opt_handles(ls, [](Ctx&, dt_optimizer* o) {
    LiveDict d;
    return dt_optimizer_load_state_dict(o, d.s);
  });
  T.add(ls, "sd=NULL", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_load_state_dict(o.p, nullptr);
  });
  T.add(ls, "sd=released", {IH}, [](Ctx& x) {
    LiveOptimizer o(x);
    dt_state_dict* s = nullptr;
    if (dt_state_dict_new(&s) != DT_OK || dt_state_dict_release(s) != DT_OK) return dt_status{-999};
    return dt_optimizer_load_state_dict(o.p, s);
  }).msg_has = "releas";
  T.add(ls, "sd=tensor_handle", {IH}, [](Ctx& x) {
    LiveOptimizer o(x);
    return dt_optimizer_load_state_dict(o.p, reinterpret_cast<dt_state_dict*>(x.a));
  }).msg_has = "state dict";
  T.add(ls, "unexpected_key", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    LiveDict d;
    if (dt_state_dict_set(d.s, "state.0.exp_avg", x.a) != DT_OK) return dt_status{-999};
    return dt_optimizer_load_state_dict(o.p, d.s);  // plain SGD keeps no state
  }).msg_has = "state.0.exp_avg";
  T.add(ls, "lr=2x3", {IA}, [](Ctx& x) {
    LiveOptimizer o(x);
    LiveDict d;
    if (dt_state_dict_set(d.s, "lr", x.a) != DT_OK) return dt_status{-999};
    return dt_optimizer_load_state_dict(o.p, d.s);
  }).msg_has = "one value";
  // Gradient clipping (x.a has no gradient: nothing to clip, but every argument is checked).
  const std::string cn = "dt_clip_grad_norm_", cv = "dt_clip_grad_value_";
  T.add(cn, "params=NULL_n=1", {IA}, [](Ctx&) { return dt_clip_grad_norm_(nullptr, 1, 1.0, 2.0, 0, nullptr); });
  T.handles(cn, "params[0]", [](Ctx& x, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_clip_grad_norm_(p, 1, 1.0, 2.0, 0, &x.o.t);
  });
  struct C { const char* what; double max_norm, norm_type; int32_t flag; };
  for (const C& c : {C{"max_norm=-1", -1, 2, 0}, C{"max_norm=nan", std::numeric_limits<double>::quiet_NaN(), 2, 0},
                     C{"norm_type=0", 1, 0, 0}, C{"norm_type=-2", 1, -2, 0}, C{"error_if_nonfinite=2", 1, 2, 2}}) {
    T.add(cn, c.what, {IA}, [c](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_clip_grad_norm_(p, 1, c.max_norm, c.norm_type, c.flag, &x.o.t);
    });
  }
  T.add(cv, "params=NULL_n=1", {IA}, [](Ctx&) { return dt_clip_grad_value_(nullptr, 1, 1.0); });
  T.handles(cv, "params[0]", [](Ctx&, const dt_tensor* t) {
    const dt_tensor* p[] = {t};
    return dt_clip_grad_value_(p, 1, 1.0);
  });
  for (double v : {-1.0, std::numeric_limits<double>::quiet_NaN()})
    T.add(cv, "clip_value=" + std::to_string(v), {IA}, [v](Ctx& x) {
      const dt_tensor* p[] = {x.a};
      return dt_clip_grad_value_(p, 1, v);
    }).msg_has = "clip_value";
}

// A live StepLR over a live SGD, for a row's call.
struct LiveScheduler {
  dt_optimizer* opt = nullptr;
  dt_lr_scheduler* p = nullptr;
  explicit LiveScheduler(Ctx& x) {
    const dt_tensor* params[] = {x.a};
    dt_sgd_new(params, 1, 0.1, 0, 0, 0, 0, &opt);
    dt_step_lr_new(opt, 2, 0.5, &p);
  }
  ~LiveScheduler() {
    dt_lr_scheduler_release(p);
    dt_optimizer_release(opt);
  }
};

void add_scheduler_cases(Table& T) {
  using SCall = std::function<dt_status(Ctx&, dt_lr_scheduler*)>;
  // The optimizer of a constructor replaced in turn by each bad handle.
  auto opt_handles = [&T](const std::string& fn, OptimizerCall call) { add_optimizer_handle_rows(T, fn, std::move(call)); };
  // A scheduler argument replaced in turn by each bad handle, an optimizer's included.
  auto sched_handles = [&T](const std::string& fn, SCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, "s=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL scheduler handle";
    T.add(fn, "s=released", {IH}, [call](Ctx& x) {
       LiveScheduler l(x);
       dt_lr_scheduler* p = l.p;
       dt_lr_scheduler_release(p);
       l.p = nullptr;
       return call(x, p);
     }).msg_has = "releas";
    T.add(fn, "s=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_lr_scheduler*>(x.foreign_stack)); });
    T.add(fn, "s=optimizer_handle", {IH}, [call](Ctx& x) {
       LiveOptimizer o(x);
       return call(x, reinterpret_cast<dt_lr_scheduler*>(o.p));
     }).msg_has = "learning-rate scheduler";
  };
  auto out = [](Ctx& x) { return reinterpret_cast<dt_lr_scheduler**>(&x.o.ptr); };
  // Each constructor: bad optimizers, a NULL out, and settings PyTorch refuses.
  struct Ctor {
    const char* fn;
    std::function<dt_status(dt_optimizer*, dt_lr_scheduler**)> good;
    std::vector<std::tuple<const char*, const char*, std::function<dt_status(dt_optimizer*, dt_lr_scheduler**)>>> bad;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static const int64_t kMs[] = {2, 5};
  const std::vector<Ctor> ctors = {
      {"dt_step_lr_new", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_step_lr_new(o, 2, 0.1, s); },
       {{"step_size=0", "step_size", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_step_lr_new(o, 0, 0.1, s); }},
        {"gamma=NaN", "gamma", [nan](dt_optimizer* o, dt_lr_scheduler** s) { return dt_step_lr_new(o, 2, nan, s); }}}},
      {"dt_multi_step_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_multi_step_lr_new(o, kMs, 2, 0.1, s); },
       {{"milestones=NULL_n=2", "milestones is NULL",
         [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_multi_step_lr_new(o, nullptr, 2, 0.1, s); }},
        {"gamma=-1", "gamma", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_multi_step_lr_new(o, kMs, 2, -1, s); }}}},
      {"dt_exponential_lr_new", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_exponential_lr_new(o, 0.9, s); },
       {{"gamma=inf", "gamma", [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_exponential_lr_new(o, std::numeric_limits<double>::infinity(), s);
         }}}},
      {"dt_linear_lr_new", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_linear_lr_new(o, 0.5, 1, 4, s); },
       {{"start_factor=0", "start_factor", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_linear_lr_new(o, 0, 1, 4, s); }},
        {"end_factor=1.5", "end_factor", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_linear_lr_new(o, 0.5, 1.5, 4, s); }},
        {"total_iters=0", "total_iters", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_linear_lr_new(o, 0.5, 1, 0, s); }}}},
      {"dt_constant_lr_new", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_constant_lr_new(o, 0.5, 4, s); },
       {{"factor=0", "factor", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_constant_lr_new(o, 0, 4, s); }},
        {"factor=NaN", "factor", [nan](dt_optimizer* o, dt_lr_scheduler** s) { return dt_constant_lr_new(o, nan, 4, s); }},
        {"total_iters=0", "total_iters", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_constant_lr_new(o, 0.5, 0, s); }}}},
      {"dt_polynomial_lr_new", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_polynomial_lr_new(o, 4, 1, s); },
       {{"total_iters=-1", "total_iters", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_polynomial_lr_new(o, -1, 1, s); }},
        {"power=-0.5", "power", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_polynomial_lr_new(o, 4, -0.5, s); }},
        {"power=inf", "power", [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_polynomial_lr_new(o, 4, std::numeric_limits<double>::infinity(), s);
         }}}},
      {"dt_cosine_annealing_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_lr_new(o, 10, 0, s); },
       {{"t_max=0", "T_max", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_lr_new(o, 0, 0, s); }},
        {"eta_min=NaN", "eta_min",
         [nan](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_lr_new(o, 10, nan, s); }}}},
      {"dt_cosine_annealing_warm_restarts_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_warm_restarts_new(o, 5, 2, 0, s); },
       {{"t_0=-1", "T_0", [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_warm_restarts_new(o, -1, 1, 0, s); }},
        {"t_mult=0", "T_mult",
         [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_cosine_annealing_warm_restarts_new(o, 5, 0, 0, s); }}}},
      {"dt_cyclic_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) {
         return dt_cyclic_lr_new(o, 0.01, 0.1, 4, 0, "triangular", 1, 1, 0.8, 0.9, s);
       },
       {{"mode=NULL", "mode is NULL",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_cyclic_lr_new(o, 0.01, 0.1, 4, 0, nullptr, 1, 1, 0.8, 0.9, s);
         }},
        {"mode=triangular3", "\"exp_range\"",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_cyclic_lr_new(o, 0.01, 0.1, 4, 0, "triangular3", 1, 1, 0.8, 0.9, s);
         }},
        {"cycle_momentum=2", "cycle_momentum",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_cyclic_lr_new(o, 0.01, 0.1, 4, 0, "triangular", 1, 2, 0.8, 0.9, s);
         }},
        {"step_size_up=0", "step_size_up",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_cyclic_lr_new(o, 0.01, 0.1, 0, 0, "triangular", 1, 1, 0.8, 0.9, s);
         }},
        {"max_lr=inf", "max_lr",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_cyclic_lr_new(o, 0.01, std::numeric_limits<double>::infinity(), 4, 0, "triangular", 1, 1, 0.8,
                                   0.9, s);
         }}}},
      {"dt_one_cycle_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) {
         return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cos", 1, 0.85, 0.95, 25, 1e4, 0, s);
       },
       {{"anneal_strategy=NULL", "anneal_strategy is NULL",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, nullptr, 1, 0.85, 0.95, 25, 1e4, 0, s);
         }},
        {"anneal_strategy=cosine", "\"cos\" or \"linear\"",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cosine", 1, 0.85, 0.95, 25, 1e4, 0, s);
         }},
        {"cycle_momentum=2", "cycle_momentum",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cos", 2, 0.85, 0.95, 25, 1e4, 0, s);
         }},
        {"three_phase=-1", "three_phase",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cos", 1, 0.85, 0.95, 25, 1e4, -1, s);
         }},
        {"total_steps=0", "total_steps",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 0, 0.3, "cos", 1, 0.85, 0.95, 25, 1e4, 0, s);
         }},
        {"max_lr=-1", "max_lr",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, -1, 100, 0.3, "cos", 1, 0.85, 0.95, 25, 1e4, 0, s);
         }},
        {"final_div_factor=0", "final_div_factor",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cos", 1, 0.85, 0.95, 25, 0, 0, s);
         }},
        {"base_momentum=-1", "base_momentum and max_momentum must be finite",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_one_cycle_lr_new(o, 1, 100, 0.3, "cos", 1, -1, 0.95, 25, 1e4, 0, s);
         }}}},
      {"dt_reduce_lr_on_plateau_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) {
         return dt_reduce_lr_on_plateau_new(o, "min", 0.1, 10, 1e-4, "rel", 0, 0, 1e-8, s);
       },
       {{"mode=NULL", "mode is NULL",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_reduce_lr_on_plateau_new(o, nullptr, 0.1, 10, 1e-4, "rel", 0, 0, 1e-8, s);
         }},
        {"threshold_mode=relative", "\"rel\" or \"abs\"",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_reduce_lr_on_plateau_new(o, "min", 0.1, 10, 1e-4, "relative", 0, 0, 1e-8, s);
         }},
        {"factor=1", "factor",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_reduce_lr_on_plateau_new(o, "min", 1, 10, 1e-4, "rel", 0, 0, 1e-8, s);
         }},
        {"cooldown=-1", "cooldown",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_reduce_lr_on_plateau_new(o, "min", 0.1, 10, 1e-4, "rel", -1, 0, 1e-8, s);
         }},
        {"min_lr=NaN", "min_lr",
         [nan](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_reduce_lr_on_plateau_new(o, "min", 0.1, 10, 1e-4, "rel", 0, nan, 1e-8, s);
         }}}},
      {"dt_lambda_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) {
         return dt_lambda_lr_new(o, +[](int64_t, void*) { return 0.5; }, nullptr, nullptr, s);
       },
       {{"fn=NULL", "fn is NULL",
         [](dt_optimizer* o, dt_lr_scheduler** s) { return dt_lambda_lr_new(o, nullptr, nullptr, nullptr, s); }},
        {"fn=returns_NaN", "returned nan at epoch 0",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_lambda_lr_new(o, +[](int64_t, void*) { return std::nan(""); }, nullptr, nullptr, s);
         }},
        {"fn=returns_-1", "a rate must be finite and >= 0",
         [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_lambda_lr_new(o, +[](int64_t, void*) { return -1.0; }, nullptr, nullptr, s);
         }}}},
      {"dt_multiplicative_lr_new",
       [](dt_optimizer* o, dt_lr_scheduler** s) {
         return dt_multiplicative_lr_new(o, +[](int64_t, void*) { return 0.5; }, nullptr, nullptr, s);
       },
       {{"fn=NULL", "fn is NULL", [](dt_optimizer* o, dt_lr_scheduler** s) {
           return dt_multiplicative_lr_new(o, nullptr, nullptr, nullptr, s);
         }}}},
  };
  for (const Ctor& c : ctors) {
    auto good = c.good;
    opt_handles(c.fn, [good, out](Ctx& x, dt_optimizer* o) { return good(o, out(x)); });
    T.add(c.fn, "out=NULL", {IA}, [good](Ctx& x) {
       LiveOptimizer o(x);
       return good(o.p, nullptr);
     }).msg_has = "out is NULL";
    for (const auto& [what, msg, call] : c.bad) {
      auto bad = call;
      T.add(c.fn, what, {IA}, [bad, out](Ctx& x) {
         LiveOptimizer o(x);
         return bad(o.p, out(x));
       }).msg_has = msg;
    }
  }
  const std::string seq = "dt_sequential_lr_new";
  opt_handles(seq, [out](Ctx& x, dt_optimizer* o) {
    LiveScheduler l(x);
    dt_lr_scheduler* list[] = {l.p};
    return dt_sequential_lr_new(o, list, 1, nullptr, out(x));
  });
  T.add(seq, "out=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    dt_lr_scheduler* list[] = {l.p};
    return dt_sequential_lr_new(l.opt, list, 1, nullptr, nullptr);
  });
  T.add(seq, "schedulers=NULL_n=1", {IA}, [out](Ctx& x) {
     LiveOptimizer o(x);
     return dt_sequential_lr_new(o.p, nullptr, 1, nullptr, out(x));
   }).msg_has = "schedulers is NULL";
  T.add(seq, "milestones=NULL_n=2", {IA}, [out](Ctx& x) {
     LiveScheduler l(x);
     dt_lr_scheduler* list[] = {l.p, l.p};
     return dt_sequential_lr_new(l.opt, list, 2, nullptr, out(x));
   }).msg_has = "milestones is NULL";
  T.add(seq, "n=0", {IA}, [out](Ctx& x) {
     LiveOptimizer o(x);
     return dt_sequential_lr_new(o.p, nullptr, 0, nullptr, out(x));
   }).msg_has = "at least one";
  T.add(seq, "schedulers[0]=released", {IH}, [out](Ctx& x) {
     LiveScheduler l(x);
     dt_lr_scheduler* list[] = {l.p};
     dt_lr_scheduler_release(l.p);
     l.p = nullptr;
     return dt_sequential_lr_new(l.opt, list, 1, nullptr, out(x));
   }).msg_has = "releas";
  T.add(seq, "schedulers[0]=tensor_handle", {IH}, [out](Ctx& x) {
     LiveOptimizer o(x);
     dt_lr_scheduler* list[] = {reinterpret_cast<dt_lr_scheduler*>(x.a)};
     return dt_sequential_lr_new(o.p, list, 1, nullptr, out(x));
   }).msg_has = "learning-rate scheduler";
  T.add(seq, "other_optimizer", {IA}, [out](Ctx& x) {
     LiveScheduler l(x);
     LiveOptimizer other(x);
     dt_lr_scheduler* list[] = {l.p};
     return dt_sequential_lr_new(other.p, list, 1, nullptr, out(x));
   }).msg_has = "another optimizer";

  const std::string chained = "dt_chained_scheduler_new";
  sched_handles(chained, [out](Ctx& x, dt_lr_scheduler* s) {
    dt_lr_scheduler* list[] = {s};
    return dt_chained_scheduler_new(list, 1, out(x));
  });
  T.add(chained, "out=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    dt_lr_scheduler* list[] = {l.p};
    return dt_chained_scheduler_new(list, 1, nullptr);
  });
  T.add(chained, "schedulers=NULL_n=1", {IA}, [out](Ctx& x) {
     return dt_chained_scheduler_new(nullptr, 1, out(x));
   }).msg_has = "schedulers is NULL";
  T.add(chained, "n=0", {IA}, [out](Ctx& x) { return dt_chained_scheduler_new(nullptr, 0, out(x)); }).msg_has =
      "at least one";
  T.add(chained, "other_optimizer", {IA}, [out](Ctx& x) {
     LiveScheduler a(x), b(x);
     dt_lr_scheduler* list[] = {a.p, b.p};
     return dt_chained_scheduler_new(list, 2, out(x));
   }).msg_has = "another optimizer";

  sched_handles("dt_lr_scheduler_step", [](Ctx&, dt_lr_scheduler* s) { return dt_lr_scheduler_step(s); });
  T.add("dt_lr_scheduler_step", "plateau", {IA}, [](Ctx& x) {
     LiveOptimizer o(x);
     dt_lr_scheduler* s = nullptr;
     if (dt_reduce_lr_on_plateau_new(o.p, "min", 0.1, 10, 1e-4, "rel", 0, 0, 1e-8, &s) != DT_OK)
       return dt_status{-999};
     const dt_status st = dt_lr_scheduler_step(s);
     dt_lr_scheduler_release(s);
     return st;
   }).msg_has = "dt_lr_scheduler_step_metric";
  sched_handles("dt_lr_scheduler_step_metric",
                [](Ctx&, dt_lr_scheduler* s) { return dt_lr_scheduler_step_metric(s, 1.0); });
  T.add("dt_lr_scheduler_step_metric", "not_a_plateau", {IA}, [](Ctx& x) {
     LiveScheduler l(x);
     return dt_lr_scheduler_step_metric(l.p, 1.0);
   }).msg_has = "StepLR steps without a metric";
  sched_handles("dt_lr_scheduler_last_lr", [](Ctx& x, dt_lr_scheduler* s) { return dt_lr_scheduler_last_lr(s, &x.o.d); });
  T.add("dt_lr_scheduler_last_lr", "out=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    return dt_lr_scheduler_last_lr(l.p, nullptr);
  });
  sched_handles("dt_lr_scheduler_last_epoch",
                [](Ctx& x, dt_lr_scheduler* s) { return dt_lr_scheduler_last_epoch(s, x.o.i64); });
  T.add("dt_lr_scheduler_last_epoch", "out=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    return dt_lr_scheduler_last_epoch(l.p, nullptr);
  });
  sched_handles("dt_lr_scheduler_kind",
                [](Ctx& x, dt_lr_scheduler* s) { return dt_lr_scheduler_kind(s, x.o.buf, sizeof x.o.buf, &x.o.sz); });
  T.add("dt_lr_scheduler_kind", "buf=NULL_cap=8", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    return dt_lr_scheduler_kind(l.p, nullptr, 8, nullptr);
  });
  auto sd_out = [](Ctx& x) { return reinterpret_cast<dt_state_dict**>(&x.o.ptr); };
  sched_handles("dt_lr_scheduler_state_dict",
                [sd_out](Ctx& x, dt_lr_scheduler* s) { return dt_lr_scheduler_state_dict(s, sd_out(x)); });
  T.add("dt_lr_scheduler_state_dict", "out=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    return dt_lr_scheduler_state_dict(l.p, nullptr);
  });
  const std::string ls = "dt_lr_scheduler_load_state_dict";
  sched_handles(ls, [](Ctx&, dt_lr_scheduler* s) {
    dt_state_dict* d = nullptr;
    dt_state_dict_new(&d);
    const dt_status st = dt_lr_scheduler_load_state_dict(s, d);
    dt_state_dict_release(d);
    return st;
  });
  T.add(ls, "sd=NULL", {IA}, [](Ctx& x) {
    LiveScheduler l(x);
    return dt_lr_scheduler_load_state_dict(l.p, nullptr);
  });
  T.add(ls, "sd=tensor_handle", {IH}, [](Ctx& x) {
     LiveScheduler l(x);
     return dt_lr_scheduler_load_state_dict(l.p, reinterpret_cast<dt_state_dict*>(x.a));
   }).msg_has = "state dict";
  T.add(ls, "unexpected_key", {IA}, [](Ctx& x) {
     LiveScheduler l(x);
     dt_state_dict* d = nullptr;
     dt_state_dict_new(&d);
     dt_state_dict_set(d, "T_max", x.a);
     const dt_status st = dt_lr_scheduler_load_state_dict(l.p, d);
     dt_state_dict_release(d);
     return st;
   }).msg_has = "unexpected key \"T_max\"";
  T.add(ls, "not_one_number", {IA}, [](Ctx& x) {
     LiveScheduler l(x);
     dt_state_dict* d = nullptr;
     dt_state_dict_new(&d);
     dt_state_dict_set(d, "gamma", x.a);
     const dt_status st = dt_lr_scheduler_load_state_dict(l.p, d);
     dt_state_dict_release(d);
     return st;
   }).msg_has = "must hold one value";
  sched_handles("dt_lr_scheduler_retain", [](Ctx&, dt_lr_scheduler* s) { return dt_lr_scheduler_retain(s); });
  sched_handles("dt_lr_scheduler_release", [](Ctx&, dt_lr_scheduler* s) { return dt_lr_scheduler_release(s); }, false);
}

// A live stream and event on cpu:0 for a row's call.
struct LiveStream {
  dt_stream* s = nullptr;
  LiveStream() { dt_stream_create(CPU0, &s); }
  ~LiveStream() { dt_stream_release(s); }
};
struct LiveEvent {
  dt_event* e = nullptr;
  LiveEvent() { dt_event_create(CPU0, &e); }
  ~LiveEvent() { dt_event_release(e); }
};

void add_stream_cases(Table& T) {
  using SCall = std::function<dt_status(Ctx&, dt_stream*)>;
  using ECall = std::function<dt_status(Ctx&, dt_event*)>;
  // A stream (event) argument replaced in turn by each bad handle, one of the other kind
  // included.
  auto stream_handles = [&T](const std::string& fn, const std::string& arg, SCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, arg + "=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL stream handle";
    T.add(fn, arg + "=released", {IH}, [call](Ctx& x) {
       dt_stream* s = nullptr;
       if (dt_stream_create(CPU0, &s) != DT_OK || dt_stream_release(s) != DT_OK) return dt_status{-999};
       return call(x, s);
     }).msg_has = "releas";
    T.add(fn, arg + "=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_stream*>(x.foreign_stack)); });
    T.add(fn, arg + "=small_integer", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_stream*>(x.small)); });
    T.add(fn, arg + "=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_stream*>(x.a)); })
        .msg_has = "stream";
    T.add(fn, arg + "=event_handle", {IH}, [call](Ctx& x) {
       LiveEvent e;
       return call(x, reinterpret_cast<dt_stream*>(e.e));
     }).msg_has = "stream";
  };
  auto event_handles = [&T](const std::string& fn, const std::string& arg, ECall call, bool with_null = true) {
    if (with_null)
      T.add(fn, arg + "=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL event handle";
    T.add(fn, arg + "=released", {IH}, [call](Ctx& x) {
       dt_event* e = nullptr;
       if (dt_event_create(CPU0, &e) != DT_OK || dt_event_release(e) != DT_OK) return dt_status{-999};
       return call(x, e);
     }).msg_has = "releas";
    T.add(fn, arg + "=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_event*>(x.foreign_stack)); });
    T.add(fn, arg + "=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_event*>(x.a)); })
        .msg_has = "event";
    T.add(fn, arg + "=stream_handle", {IH}, [call](Ctx& x) {
       LiveStream s;
       return call(x, reinterpret_cast<dt_event*>(s.s));
     }).msg_has = "event";
  };
  auto stream_out = [](Ctx& x) { return reinterpret_cast<dt_stream**>(&x.o.ptr); };
  auto event_out = [](Ctx& x) { return reinterpret_cast<dt_event**>(&x.o.ptr); };
  auto ms_out = [](Ctx& x) { return reinterpret_cast<float*>(&x.o.d); };

  T.add("dt_stream_create", "out=NULL", {IA}, [](Ctx&) { return dt_stream_create(CPU0, nullptr); });
  T.devices("dt_stream_create", [stream_out](Ctx& x, dt_device d) { return dt_stream_create(d, stream_out(x)); });
  T.add("dt_stream_default", "out=NULL", {IA}, [](Ctx&) { return dt_stream_default(CPU0, nullptr); });
  T.devices("dt_stream_default", [stream_out](Ctx& x, dt_device d) { return dt_stream_default(d, stream_out(x)); });
  T.add("dt_thread_stream", "out=NULL", {IA}, [](Ctx&) { return dt_thread_stream(CPU0, nullptr); });
  T.devices("dt_thread_stream", [stream_out](Ctx& x, dt_device d) { return dt_thread_stream(d, stream_out(x)); });
  T.add("dt_event_create", "out=NULL", {IA}, [](Ctx&) { return dt_event_create(CPU0, nullptr); });
  T.devices("dt_event_create", [event_out](Ctx& x, dt_device d) { return dt_event_create(d, event_out(x)); });

  stream_handles("dt_stream_retain", "s", [](Ctx&, dt_stream* s) { return dt_stream_retain(s); });
  stream_handles("dt_stream_release", "s", [](Ctx&, dt_stream* s) { return dt_stream_release(s); }, false);
  stream_handles("dt_stream_device", "s", [](Ctx& x, dt_stream* s) { return dt_stream_device(s, &x.o.dev); });
  T.add("dt_stream_device", "out=NULL", {IA}, [](Ctx&) { return dt_stream_device(LiveStream().s, nullptr); });
  stream_handles("dt_stream_is_default", "s", [](Ctx& x, dt_stream* s) { return dt_stream_is_default(s, &x.o.i32); });
  T.add("dt_stream_is_default", "out=NULL", {IA}, [](Ctx&) { return dt_stream_is_default(LiveStream().s, nullptr); });
  stream_handles("dt_stream_synchronize", "s", [](Ctx&, dt_stream* s) { return dt_stream_synchronize(s); });
  stream_handles("dt_stream_query", "s", [](Ctx& x, dt_stream* s) { return dt_stream_query(s, &x.o.i32); });
  T.add("dt_stream_query", "done=NULL", {IA}, [](Ctx&) { return dt_stream_query(LiveStream().s, nullptr); });
  stream_handles("dt_stream_wait_event", "s", [](Ctx&, dt_stream* s) { return dt_stream_wait_event(s, LiveEvent().e); });
  event_handles("dt_stream_wait_event", "e", [](Ctx&, dt_event* e) { return dt_stream_wait_event(LiveStream().s, e); });
  stream_handles("dt_stream_wait_stream", "s", [](Ctx&, dt_stream* s) { return dt_stream_wait_stream(s, LiveStream().s); });
  stream_handles("dt_stream_wait_stream", "other", [](Ctx&, dt_stream* s) { return dt_stream_wait_stream(LiveStream().s, s); });
  stream_handles("dt_stream_native_handle", "s", [](Ctx& x, dt_stream* s) { return dt_stream_native_handle(s, &x.o.ptr); });
  T.add("dt_stream_native_handle", "out=NULL", {IA}, [](Ctx&) { return dt_stream_native_handle(LiveStream().s, nullptr); });
  stream_handles("dt_set_thread_stream", "s", [stream_out](Ctx& x, dt_stream* s) { return dt_set_thread_stream(s, stream_out(x)); });

  event_handles("dt_event_retain", "e", [](Ctx&, dt_event* e) { return dt_event_retain(e); });
  event_handles("dt_event_release", "e", [](Ctx&, dt_event* e) { return dt_event_release(e); }, false);
  event_handles("dt_event_device", "e", [](Ctx& x, dt_event* e) { return dt_event_device(e, &x.o.dev); });
  T.add("dt_event_device", "out=NULL", {IA}, [](Ctx&) { return dt_event_device(LiveEvent().e, nullptr); });
  event_handles("dt_event_record", "e", [](Ctx&, dt_event* e) { return dt_event_record(e, nullptr); });
  T.add("dt_event_record", "s=released", {IH}, [](Ctx&) {
    dt_stream* s = nullptr;
    if (dt_stream_create(CPU0, &s) != DT_OK || dt_stream_release(s) != DT_OK) return dt_status{-999};
    return dt_event_record(LiveEvent().e, s);
  });
  T.add("dt_event_record", "stream_of_cpu:1", {DM}, [](Ctx&) {
    dt_stream* s = nullptr;
    if (dt_stream_create(dev(DT_DEVICE_CPU, 1), &s) != DT_OK) return dt_status{-999};
    const dt_status st = dt_event_record(LiveEvent().e, s);
    dt_stream_release(s);
    return st;
  }).msg_has = "cpu:1";
  event_handles("dt_event_synchronize", "e", [](Ctx&, dt_event* e) { return dt_event_synchronize(e); });
  event_handles("dt_event_query", "e", [](Ctx& x, dt_event* e) { return dt_event_query(e, &x.o.i32); });
  T.add("dt_event_query", "done=NULL", {IA}, [](Ctx&) { return dt_event_query(LiveEvent().e, nullptr); });
  event_handles("dt_event_elapsed_ms", "start", [ms_out](Ctx& x, dt_event* e) {
    LiveEvent end;
    dt_event_record(end.e, nullptr);
    return dt_event_elapsed_ms(e, end.e, ms_out(x));
  });
  event_handles("dt_event_elapsed_ms", "end", [ms_out](Ctx& x, dt_event* e) {
    LiveEvent start;
    dt_event_record(start.e, nullptr);
    return dt_event_elapsed_ms(start.e, e, ms_out(x));
  });
  T.add("dt_event_elapsed_ms", "ms=NULL", {IA}, [](Ctx&) {
    LiveEvent a;
    dt_event_record(a.e, nullptr);
    return dt_event_elapsed_ms(a.e, a.e, nullptr);
  });
  T.add("dt_event_elapsed_ms", "never_recorded", {IA}, [ms_out](Ctx& x) {
    LiveEvent a, b;
    dt_event_record(a.e, nullptr);
    return dt_event_elapsed_ms(a.e, b.e, ms_out(x));
  }).msg_has = "never recorded";
  T.add("dt_event_elapsed_ms", "events_of_two_devices", {IA}, [ms_out](Ctx& x) {
    LiveEvent a;
    dt_event* b = nullptr;
    if (dt_event_create(dev(DT_DEVICE_CPU, 1), &b) != DT_OK) return dt_status{-999};
    dt_event_record(a.e, nullptr);
    dt_event_record(b, nullptr);
    const dt_status st = dt_event_elapsed_ms(a.e, b, ms_out(x));
    dt_event_release(b);
    return st;
  }).msg_has = "different devices";

  T.handles("dt_tensor_record_stream", "t", [](Ctx&, const dt_tensor* t) { return dt_tensor_record_stream(t, LiveStream().s); });
  stream_handles("dt_tensor_record_stream", "s", [](Ctx& x, dt_stream* s) { return dt_tensor_record_stream(x.a, s); });
  T.add("dt_tensor_record_stream", "stream_of_cpu:1", {DM}, [](Ctx& x) {
    dt_stream* s = nullptr;
    if (dt_stream_create(dev(DT_DEVICE_CPU, 1), &s) != DT_OK) return dt_status{-999};
    const dt_status st = dt_tensor_record_stream(x.a, s);
    dt_stream_release(s);
    return st;
  });

  T.add("dt_tensor_from_dlpack_stream", "managed=NULL", {IA},
        [](Ctx& x) { return dt_tensor_from_dlpack_stream(nullptr, -1, &x.o.t); });
  T.add("dt_tensor_from_dlpack_stream", "out=NULL", {IA}, [](Ctx&) {
    return dt_tensor_from_dlpack_stream(reinterpret_cast<DLManagedTensor*>(0x1000), -1, nullptr);
  });
  T.add("dt_tensor_from_dlpack_versioned_stream", "managed=NULL", {IA},
        [](Ctx& x) { return dt_tensor_from_dlpack_versioned_stream(nullptr, -1, &x.o.t); });
  T.add("dt_tensor_from_dlpack_versioned_stream", "out=NULL", {IA}, [](Ctx&) {
    return dt_tensor_from_dlpack_versioned_stream(reinterpret_cast<DLManagedTensorVersioned*>(0x1000), -1, nullptr);
  });
}

// A live graph on cpu:0 (captured on a stream of its own, with nothing recorded).
struct LiveGraph {
  dt_graph* g = nullptr;
  LiveGraph() {
    LiveStream s;
    if (dt_graph_capture_begin(s.s) == DT_OK) dt_graph_capture_end(s.s, &g);
  }
  ~LiveGraph() { dt_graph_release(g); }
};

// A stream capturing on this thread for the life of a row's call.
struct CapturingStream {
  LiveStream s;
  CapturingStream() { dt_graph_capture_begin(s.s); }
  ~CapturingStream() {
    dt_graph* g = nullptr;
    dt_graph_capture_end(s.s, &g);
    dt_graph_release(g);
  }
};

void add_graph_cases(Table& T) {
  using GCall = std::function<dt_status(Ctx&, dt_graph*)>;
  // A graph argument replaced in turn by each bad handle, one of another kind included.
  auto graph_handles = [&T](const std::string& fn, GCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, "g=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL graph handle";
    T.add(fn, "g=released", {IH}, [call](Ctx& x) {
       dt_graph* g = LiveGraph().g;  // released when the temporary goes
       return call(x, g);
     }).msg_has = "releas";
    T.add(fn, "g=stack_int", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_graph*>(x.foreign_stack)); });
    T.add(fn, "g=small_integer", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_graph*>(x.small)); });
    T.add(fn, "g=tensor_handle", {IH}, [call](Ctx& x) { return call(x, reinterpret_cast<dt_graph*>(x.a)); })
        .msg_has = "graph";
    T.add(fn, "g=stream_handle", {IH}, [call](Ctx& x) {
       LiveStream s;
       return call(x, reinterpret_cast<dt_graph*>(s.s));
     }).msg_has = "graph";
  };
  auto graph_out = [](Ctx& x) { return reinterpret_cast<dt_graph**>(&x.o.ptr); };

  T.add("dt_graph_capture_begin", "s=NULL", {IA, IH}, [](Ctx&) { return dt_graph_capture_begin(nullptr); });
  T.add("dt_graph_capture_begin", "s=released", {IH}, [](Ctx&) {
    dt_stream* s = nullptr;
    if (dt_stream_create(CPU0, &s) != DT_OK || dt_stream_release(s) != DT_OK) return dt_status{-999};
    return dt_graph_capture_begin(s);
  }).msg_has = "releas";
  T.add("dt_graph_capture_begin", "s=tensor_handle", {IH}, [](Ctx& x) {
    return dt_graph_capture_begin(reinterpret_cast<dt_stream*>(x.a));
  }).msg_has = "stream";
  T.add("dt_graph_capture_begin", "default_stream", {IA}, [](Ctx&) {
    dt_stream* s = nullptr;
    if (dt_stream_default(CPU0, &s) != DT_OK) return dt_status{-999};
    const dt_status st = dt_graph_capture_begin(s);
    dt_stream_release(s);
    return st;
  }).msg_has = "default stream";
  T.add("dt_graph_capture_begin", "already_capturing", {IA}, [](Ctx&) {
    CapturingStream c;
    return dt_graph_capture_begin(c.s.s);
  }).msg_has = "already capturing";

  T.add("dt_graph_capture_end", "out=NULL", {IA}, [](Ctx&) {
    CapturingStream c;
    return dt_graph_capture_end(c.s.s, nullptr);
  });
  T.add("dt_graph_capture_end", "s=NULL", {IA, IH}, [graph_out](Ctx& x) { return dt_graph_capture_end(nullptr, graph_out(x)); });
  T.add("dt_graph_capture_end", "s=released", {IH}, [graph_out](Ctx& x) {
    dt_stream* s = nullptr;
    if (dt_stream_create(CPU0, &s) != DT_OK || dt_stream_release(s) != DT_OK) return dt_status{-999};
    return dt_graph_capture_end(s, graph_out(x));
  }).msg_has = "releas";
  T.add("dt_graph_capture_end", "not_capturing", {IA}, [graph_out](Ctx& x) {
    return dt_graph_capture_end(LiveStream().s, graph_out(x));
  }).msg_has = "not capturing";

  T.add("dt_stream_is_capturing", "s=NULL", {IA, IH}, [](Ctx& x) { return dt_stream_is_capturing(nullptr, &x.o.i32); });
  T.add("dt_stream_is_capturing", "s=event_handle", {IH}, [](Ctx& x) {
    LiveEvent e;
    return dt_stream_is_capturing(reinterpret_cast<dt_stream*>(e.e), &x.o.i32);
  }).msg_has = "stream";
  T.add("dt_stream_is_capturing", "out=NULL", {IA}, [](Ctx&) { return dt_stream_is_capturing(LiveStream().s, nullptr); });

  graph_handles("dt_graph_replay", [](Ctx&, dt_graph* g) { return dt_graph_replay(g); });
  T.add("dt_graph_replay", "inside_a_capture", {NS}, [](Ctx&) {
    LiveGraph g;
    CapturingStream c;
    return dt_graph_replay(g.g);
  }).msg_has = "graphs do not nest";
  graph_handles("dt_graph_num_steps", [](Ctx& x, dt_graph* g) { return dt_graph_num_steps(g, &x.o.sz); });
  T.add("dt_graph_num_steps", "out=NULL", {IA}, [](Ctx&) { return dt_graph_num_steps(LiveGraph().g, nullptr); });
  graph_handles("dt_graph_device", [](Ctx& x, dt_graph* g) { return dt_graph_device(g, &x.o.dev); });
  T.add("dt_graph_device", "out=NULL", {IA}, [](Ctx&) { return dt_graph_device(LiveGraph().g, nullptr); });
  graph_handles("dt_graph_retain", [](Ctx&, dt_graph* g) { return dt_graph_retain(g); });
  graph_handles("dt_graph_release", [](Ctx&, dt_graph* g) { return dt_graph_release(g); }, false);
}

// A process group of one rank (this process), through a store file of its own.
struct LiveGroup {
  dt_process_group* g = nullptr;
  LiveGroup() {
    static std::atomic<int> n{0};
    std::string init = "file:///tmp/dt-contract-" + std::to_string(getpid()) + "-" + std::to_string(n++);
    dt_process_group_new("gloo", init.c_str(), 0, 1, 10000, &g);
  }
  ~LiveGroup() { dt_process_group_release(g); }
};

void add_dist_cases(Table& T) {
  using GCall = std::function<dt_status(Ctx&, const dt_process_group*)>;
  // The group argument replaced in turn by each bad handle.
  auto group_handles = [&T](const std::string& fn, GCall call, bool with_null = true) {
    if (with_null)
      T.add(fn, "pg=NULL", {IA, IH}, [call](Ctx& x) { return call(x, nullptr); }).group = "NULL group handle";
    T.add(fn, "pg=released", {IH}, [call](Ctx& x) {
       dt_process_group* g = nullptr;
       if (dt_process_group_new("gloo", "file:///tmp/dt-contract-released", 0, 1, 10000, &g) != DT_OK ||
           dt_process_group_release(g) != DT_OK)
         return dt_status{-999};
       return call(x, g);
     }).msg_has = "releas";
    T.add(fn, "pg=stack_int", {IH}, [call](Ctx& x) {
      return call(x, reinterpret_cast<const dt_process_group*>(x.foreign_stack));
    });
    T.add(fn, "pg=tensor_handle", {IH}, [call](Ctx& x) {
       return call(x, reinterpret_cast<const dt_process_group*>(x.a));
     }).msg_has = "process group";
  };
  auto group_out = [](Ctx& x) { return reinterpret_cast<dt_process_group**>(&x.o.ptr); };
  const char* one = "file:///tmp/dt-contract-new";

  T.add("dt_process_group_new", "out=NULL", {IA}, [one](Ctx&) { return dt_process_group_new("gloo", one, 0, 1, 1000, nullptr); });
  T.add("dt_process_group_new", "backend=mpi", {IA}, [one, group_out](Ctx& x) {
     return dt_process_group_new("mpi", one, 0, 1, 1000, group_out(x));
   }).msg_has = "\"mpi\"";
  if (!dt_cuda_is_available()) {  // with a GPU and NCCL it is a group (tests/test_cuda.cpp)
    T.add("dt_process_group_new", "backend=nccl_without_gpu", {NS}, [one, group_out](Ctx& x) {
       return dt_process_group_new("nccl", one, 0, 1, 1000, group_out(x));
     }).msg_has = "\"nccl\" cannot be used";
  }
  T.add("dt_process_group_new", "init=udp", {IA}, [group_out](Ctx& x) {
     return dt_process_group_new("gloo", "udp://x:1", 0, 1, 1000, group_out(x));
   }).msg_has = "udp://x:1";
  T.add("dt_process_group_new", "init=relative_file", {IA}, [group_out](Ctx& x) {
     return dt_process_group_new("gloo", "file://store", 0, 1, 1000, group_out(x));
   }).msg_has = "absolute";
  T.add("dt_process_group_new", "init=tcp_no_port", {IA}, [group_out](Ctx& x) {
     return dt_process_group_new("gloo", "tcp://127.0.0.1", 0, 1, 1000, group_out(x));
   }).msg_has = "tcp://host:port";
  T.add("dt_process_group_new", "rank=world_size", {IA}, [one, group_out](Ctx& x) {
     return dt_process_group_new("gloo", one, 1, 1, 1000, group_out(x));
   }).msg_has = "not below the world size";
  T.add("dt_process_group_new", "world_size=0", {IA}, [one, group_out](Ctx& x) {
     return dt_process_group_new("gloo", one, 0, 0, 1000, group_out(x));
   }).msg_has = "at least 1";
  T.add("dt_process_group_new", "timeout=-1", {IA}, [one, group_out](Ctx& x) {
     return dt_process_group_new("gloo", one, 0, 1, -1, group_out(x));
   }).msg_has = "negative";
  T.add("dt_process_group_new", "file_in_missing_dir", {DT_ERR_IO}, [group_out](Ctx& x) {
     return dt_process_group_new("gloo", "file:///nonexistent-dir/store", 0, 1, 1000, group_out(x));
   }).msg_has = "/nonexistent-dir/store";

  group_handles("dt_process_group_retain", [](Ctx&, const dt_process_group* g) {
    return dt_process_group_retain(const_cast<dt_process_group*>(g));
  });
  group_handles("dt_process_group_release", [](Ctx&, const dt_process_group* g) {
    return dt_process_group_release(const_cast<dt_process_group*>(g));
  }, false);
  group_handles("dt_process_group_rank", [](Ctx& x, const dt_process_group* g) { return dt_process_group_rank(g, &x.o.i32); });
  T.add("dt_process_group_rank", "out=NULL", {IA}, [](Ctx&) { return dt_process_group_rank(LiveGroup().g, nullptr); });
  group_handles("dt_process_group_size", [](Ctx& x, const dt_process_group* g) { return dt_process_group_size(g, &x.o.i32); });
  T.add("dt_process_group_size", "out=NULL", {IA}, [](Ctx&) { return dt_process_group_size(LiveGroup().g, nullptr); });
  group_handles("dt_process_group_backend", [](Ctx& x, const dt_process_group* g) {
    return dt_process_group_backend(g, x.o.buf, sizeof x.o.buf, &x.o.sz);
  });
  T.add("dt_process_group_backend", "buf=NULL_cap=8", {IA}, [](Ctx& x) {
    return dt_process_group_backend(LiveGroup().g, nullptr, 8, &x.o.sz);
  });

  group_handles("dt_all_reduce_", [](Ctx& x, const dt_process_group* g) { return dt_all_reduce_(g, x.a, DT_REDUCE_SUM); });
  T.add("dt_all_reduce_", "t=NULL", {IA}, [](Ctx&) { return dt_all_reduce_(LiveGroup().g, nullptr, DT_REDUCE_SUM); });
  T.add("dt_all_reduce_", "t=released", {IH}, [](Ctx& x) { return dt_all_reduce_(LiveGroup().g, x.stale, DT_REDUCE_SUM); });
  T.add("dt_all_reduce_", "op=5", {IA}, [](Ctx& x) { return dt_all_reduce_(LiveGroup().g, x.a, 5); }).msg_has = "op 5";
  T.add("dt_all_reduce_", "op=-1", {IA}, [](Ctx& x) { return dt_all_reduce_(LiveGroup().g, x.a, -1); });
  T.add("dt_all_reduce_", "avg_of_int32", {TM}, [](Ctx& x) {
     return dt_all_reduce_(LiveGroup().g, x.i32, DT_REDUCE_AVG);
   }).msg_has = "int32";

  group_handles("dt_broadcast_", [](Ctx& x, const dt_process_group* g) { return dt_broadcast_(g, x.a, 0); });
  T.add("dt_broadcast_", "t=NULL", {IA}, [](Ctx&) { return dt_broadcast_(LiveGroup().g, nullptr, 0); });
  T.add("dt_broadcast_", "root=1_of_1", {IA}, [](Ctx& x) { return dt_broadcast_(LiveGroup().g, x.a, 1); }).msg_has =
      "not a rank of this group";
  T.add("dt_broadcast_", "root=-1", {IA}, [](Ctx& x) { return dt_broadcast_(LiveGroup().g, x.a, -1); });

  group_handles("dt_all_gather", [](Ctx& x, const dt_process_group* g) { return dt_all_gather(g, x.a, x.b); });
  T.add("dt_all_gather", "input=NULL", {IA}, [](Ctx& x) { return dt_all_gather(LiveGroup().g, nullptr, x.b); });
  T.add("dt_all_gather", "output=NULL", {IA}, [](Ctx& x) { return dt_all_gather(LiveGroup().g, x.a, nullptr); });
  T.add("dt_all_gather", "output=v4", {SM}, [](Ctx& x) { return dt_all_gather(LiveGroup().g, x.a, x.v4); }).msg_has =
      "expected world size 1 x 6";
  T.add("dt_all_gather", "output=int32", {TM}, [](Ctx& x) { return dt_all_gather(LiveGroup().g, x.a, x.i32); });

  group_handles("dt_reduce_scatter", [](Ctx& x, const dt_process_group* g) {
    return dt_reduce_scatter(g, x.a, x.b, DT_REDUCE_SUM);
  });
  T.add("dt_reduce_scatter", "input=NULL", {IA}, [](Ctx& x) {
    return dt_reduce_scatter(LiveGroup().g, nullptr, x.b, DT_REDUCE_SUM);
  });
  T.add("dt_reduce_scatter", "output=NULL", {IA}, [](Ctx& x) {
    return dt_reduce_scatter(LiveGroup().g, x.a, nullptr, DT_REDUCE_SUM);
  });
  T.add("dt_reduce_scatter", "output=v4", {SM}, [](Ctx& x) {
    return dt_reduce_scatter(LiveGroup().g, x.a, x.v4, DT_REDUCE_SUM);
  });
  T.add("dt_reduce_scatter", "op=7", {IA}, [](Ctx& x) { return dt_reduce_scatter(LiveGroup().g, x.a, x.b, 7); });
  T.add("dt_reduce_scatter", "avg_of_int32", {TM}, [](Ctx& x) {
    dt_tensor* out = nullptr;
    if (dt_zeros_like(x.i32, &out) != DT_OK) return dt_status{-999};
    dt_status st = dt_reduce_scatter(LiveGroup().g, x.i32, out, DT_REDUCE_AVG);
    dt_tensor_release(out);
    return st;
  });

  group_handles("dt_barrier", [](Ctx&, const dt_process_group* g) { return dt_barrier(g); });

  group_handles("dt_send", [](Ctx& x, const dt_process_group* g) { return dt_send(g, x.a, 1, 0); });
  T.add("dt_send", "t=NULL", {IA}, [](Ctx&) { return dt_send(LiveGroup().g, nullptr, 1, 0); });
  T.add("dt_send", "dst=self", {IA}, [](Ctx& x) { return dt_send(LiveGroup().g, x.a, 0, 0); }).msg_has = "is this rank";
  T.add("dt_send", "dst=1_of_1", {IA}, [](Ctx& x) { return dt_send(LiveGroup().g, x.a, 1, 0); });
  group_handles("dt_recv", [](Ctx& x, const dt_process_group* g) { return dt_recv(g, x.a, 1, 0); });
  T.add("dt_recv", "t=NULL", {IA}, [](Ctx&) { return dt_recv(LiveGroup().g, nullptr, 1, 0); });
  T.add("dt_recv", "src=self", {IA}, [](Ctx& x) { return dt_recv(LiveGroup().g, x.a, 0, 0); });
  T.add("dt_recv", "src=-2", {IA}, [](Ctx& x) { return dt_recv(LiveGroup().g, x.a, -2, 0); });

  const std::string ddp = "dt_distributed_data_parallel_new";
  auto mod_out = [](Ctx& x) { return reinterpret_cast<dt_module**>(&x.o.ptr); };
  T.add(ddp, "out=NULL", {IA}, [](Ctx& x) {
    LiveModule l(x);
    return dt_distributed_data_parallel_new(l.lin, LiveGroup().g, 0, 0, nullptr);
  });
  group_handles(ddp, [mod_out](Ctx& x, const dt_process_group* g) {
    LiveModule l(x);
    return dt_distributed_data_parallel_new(l.lin, g, 0, 0, mod_out(x));
  });
  T.add(ddp, "module=NULL", {IA}, [mod_out](Ctx& x) {
    return dt_distributed_data_parallel_new(nullptr, LiveGroup().g, 0, 0, mod_out(x));
  });
  T.add(ddp, "module=tensor_handle", {IH}, [mod_out](Ctx& x) {
    return dt_distributed_data_parallel_new(reinterpret_cast<dt_module*>(x.a), LiveGroup().g, 0, 0, mod_out(x));
  });
  T.add(ddp, "bucket_cap_bytes=-1", {IA}, [mod_out](Ctx& x) {
     LiveModule l(x);
     return dt_distributed_data_parallel_new(l.lin, LiveGroup().g, -1, 0, mod_out(x));
   }).msg_has = "negative";
  T.add(ddp, "find_unused_parameters=2", {IA}, [mod_out](Ctx& x) {
    LiveModule l(x);
    return dt_distributed_data_parallel_new(l.lin, LiveGroup().g, 0, 2, mod_out(x));
  });
  T.add(ddp, "module_wrapped_twice", {IA}, [mod_out](Ctx& x) {
     LiveModule l(x);
     LiveGroup g;
     dt_module* first = nullptr;
     if (dt_distributed_data_parallel_new(l.lin, g.g, 0, 0, &first) != DT_OK) return dt_status{-999};
     dt_status st = dt_distributed_data_parallel_new(l.lin, g.g, 0, 0, mod_out(x));
     dt_module_release(first);
     return st;
   }).msg_has = "already belongs";

  const std::string nosync = "dt_distributed_data_parallel_no_sync";
  T.add(nosync, "ddp=NULL", {IA}, [](Ctx&) { return dt_distributed_data_parallel_no_sync(nullptr, 1); }).msg_has =
      "ddp is NULL";
  T.add(nosync, "ddp=released", {IH}, [](Ctx&) {
     dt_module* m = nullptr;
     if (dt_relu_new(&m) != DT_OK || dt_module_release(m) != DT_OK) return dt_status{-999};
     return dt_distributed_data_parallel_no_sync(m, 1);
   }).msg_has = "releas";
  T.add(nosync, "ddp=stack_int", {IH}, [](Ctx& x) {
    return dt_distributed_data_parallel_no_sync(reinterpret_cast<dt_module*>(x.foreign_stack), 1);
  });
  T.add(nosync, "ddp=malloc_block", {IH}, [](Ctx& x) {
    return dt_distributed_data_parallel_no_sync(reinterpret_cast<dt_module*>(x.foreign_heap), 1);
  });
  T.add(nosync, "ddp=small_integer", {IH}, [](Ctx& x) {
    return dt_distributed_data_parallel_no_sync(reinterpret_cast<dt_module*>(x.small), 1);
  });
  T.add(nosync, "ddp=tensor_handle", {IH}, [](Ctx& x) {
     return dt_distributed_data_parallel_no_sync(reinterpret_cast<dt_module*>(x.a), 1);
   }).msg_has = "module";
  T.add(nosync, "ddp=Linear", {IA}, [](Ctx& x) {
     LiveModule l(x);
     return dt_distributed_data_parallel_no_sync(l.lin, 1);
   }).msg_has = "the module is a Linear, not a DistributedDataParallel";
  for (int32_t bad : {2, -1})
    T.add(nosync, "no_sync=" + std::to_string(bad), {IA}, [bad](Ctx& x) {
       LiveModule l(x);
       dt_module* d = nullptr;
       if (dt_distributed_data_parallel_new(l.lin, LiveGroup().g, 0, 0, &d) != DT_OK) return dt_status{-999};
       dt_status st = dt_distributed_data_parallel_no_sync(d, bad);
       dt_module_release(d);
       return st;
     }).msg_has = "expected 0 or 1";
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    Table T;
    add_library_cases(T);
    add_device_cases(T);
    add_constructor_cases(T);
    add_query_cases(T);
    add_move_cases(T);
    add_view_cases(T);
    add_elementwise_cases(T);
    add_reduction_cases(T);
    add_join_index_cases(T);
    add_state_dict_cases(T);
    add_autograd_cases(T);
    add_module_cases(T);
    add_scheduler_cases(T);
    add_stream_cases(T);
    add_graph_cases(T);
    add_dist_cases(T);
    return T.cases;
  }();
  return cases;
}

// Functions whose contract is checked by the dedicated tests below (those that cannot
// fail, or need more than one call).
const std::set<std::string>& dedicated_functions() {
  static const std::set<std::string> s = {
      "dt_version",          "dt_version_string", "dt_status_string", "dt_last_error_message",
      "dt_live_handle_count", "dt_cuda_is_available", "dt_dtype_name",   "dt_manual_seed",
      "dt_tensor_release",   "dt_build_info",     "dt_device_format", "dt_cuda_status",
      "dt_device_name",      "dt_tensor_to_string", "dt_all_gpus",     "dt_devices_by_free_memory",
      "dt_chunk",            "dt_split",          "dt_device_properties", "dt_memory_stats",
      "dt_set_error_message"};
  return s;
}

std::set<std::string> covered_functions() {
  std::set<std::string> s = dedicated_functions();
  for (const Case& c : all_cases()) s.insert(c.fn);
  return s;
}

// Every DT_API function declared in the public header.
std::vector<std::string> header_functions() {
  std::ifstream in(DT_TEST_DATA_DIR "/../include/devtensor.h");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::vector<std::string> names;
  std::regex re(R"(DT_API\s+(?:const\s+)?[A-Za-z_][A-Za-z_0-9]*\s*\**\s*(dt_[A-Za-z_0-9]+)\s*\()");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1].str());
  return names;
}

// ------------------------------------------------------------------ the fixture

// Every test starts and ends with the same number of live handles.
class ContractTest : public ::testing::Test {
 protected:
  void SetUp() override { live_at_start_ = dt_live_handle_count(); }
  void TearDown() override {
    EXPECT_EQ(dt_live_handle_count(), live_at_start_) << "handles leaked (or over-released)";
  }
  size_t live_at_start_ = 0;
};

// Runs one row; returns the status (used by the row tests and the consistency tests).
struct RowResult {
  dt_status status = -999;
  bool skipped = false;
  std::string skip_reason;
};

// Primes the thread's message with a failure of another function.
std::string prime_message(const std::string& fn) {
  dt_device d;
  if (fn != "dt_device_parse")
    dt_device_parse("contract-test-prime", &d);
  else
    dt_set_num_threads(-12345);
  return dt_last_error_message();
}

bool cuda_usable() { return dt_cuda_is_available() == 1; }

RowResult run_row(const Case& k, bool check) {
  RowResult r;
  switch (k.needs) {
    case Needs::NoCuda:
      if (cuda_usable()) { r.skipped = true; r.skip_reason = "a CUDA device is usable here"; return r; }
      break;
    case Needs::Cuda:
      if (!cuda_usable()) { r.skipped = true; r.skip_reason = "no usable CUDA device"; return r; }
      break;
    case Needs::TwoCpus:
      if (cpu_device_count() < 2) {
        r.skipped = true;
        r.skip_reason = "DEVTENSOR_CPU_DEVICES=2 did not give two CPU devices";
        if (check) ADD_FAILURE() << "dt_device_count(CPU) < 2 although DEVTENSOR_CPU_DEVICES=2";
        return r;
      }
      break;
    case Needs::None:
      break;
  }
  Ctx c;
  if (!c.ok) {
    if (check) ADD_FAILURE() << c.error;
    return r;
  }
  if (k.prep) k.prep(c);
  Outs before;
  std::memcpy(static_cast<void*>(&before), static_cast<const void*>(&c.o), sizeof before);
  std::vector<std::vector<unsigned char>> data_before;
  for (auto& in : c.inputs()) data_before.push_back(contents(*in.second));
  std::string primed = prime_message(k.fn);

  r.status = k.call(c);

  std::string msg = dt_last_error_message();
  if (check && std::getenv("DT_CONTRACT_VERBOSE"))  // a log of every row, for review
    std::printf("ROW %s(%s) -> %s: %s\n", k.fn.c_str(), k.what.c_str(), status_name(r.status).c_str(),
                msg.c_str());
  if (check) {
    SCOPED_TRACE(k.fn + "(" + k.what + ")");
    if (r.status == -999) {
      ADD_FAILURE() << "the row could not set up its arguments: " << msg;
      return r;
    }
    bool accepted = std::find(k.accept.begin(), k.accept.end(), r.status) != k.accept.end();
    std::string expected;
    for (dt_status s : k.accept) expected += (expected.empty() ? "" : " or ") + status_name(s);
    EXPECT_TRUE(accepted) << k.fn << "(" << k.what << "): expected " << expected << ", got "
                          << status_name(r.status) << (r.status ? " (message: \"" + msg + "\")" : "");
    if (r.status != DT_OK) {
      EXPECT_FALSE(msg.empty()) << "no error message";
      EXPECT_NE(msg, primed) << "the error message is the previous failure's: this call did not set one";
      if (!k.msg_has.empty()) {
        EXPECT_NE(lower(msg).find(lower(k.msg_has)), std::string::npos)
            << "message \"" << msg << "\" should mention \"" << k.msg_has << "\"";
      }
      for (const std::string& f : changed_outs(before, c.o))
        ADD_FAILURE() << "out-parameter '" << f << "' was changed by a failing call";
      EXPECT_EQ(c.deleter_calls, 0) << "the from_blob deleter ran although the call failed";
      auto ins = c.inputs();
      for (size_t i = 0; i < ins.size(); ++i)
        EXPECT_TRUE(contents(*ins[i].second) == data_before[i])
            << "input tensor '" << ins[i].first << "' changed although the call failed";
      if (k.post) k.post(c);
    }
  }
  // A call that wrongly succeeded: release what it returned, so one bug gives one failure.
  if (r.status == DT_OK) {
    const dt_tensor* sent = sentinel_tensor();
    if (c.o.t != sent) dt_tensor_release(c.o.t);
    if (c.o.sz <= 4)
      for (size_t i = 0; i < c.o.sz; ++i)
        if (c.o.ts[i] != sent) dt_tensor_release(c.o.ts[i]);
    dt_set_default_device(CPU0);
    dt_set_default_dtype(DT_FLOAT32);
  }
  return r;
}

class Row : public ContractTest, public ::testing::WithParamInterface<Case> {};

TEST_P(Row, FailsWithDocumentedCode) {
  RowResult r = run_row(GetParam(), /*check=*/true);
  if (r.skipped) GTEST_SKIP() << r.skip_reason;
}

std::string row_name(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.fn + "__" + info.param.what;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Contract, Row, ::testing::ValuesIn(all_cases()), row_name);

// ------------------------------------------------------------------ coverage

TEST(Coverage, AllPublicFunctionsHaveContractTests) {
  std::vector<std::string> declared = header_functions();
  ASSERT_GT(declared.size(), 100u) << "could not parse " DT_TEST_DATA_DIR "/../include/devtensor.h";
  std::set<std::string> covered = covered_functions();
  for (const std::string& fn : declared)
    EXPECT_TRUE(covered.count(fn)) << fn << " is declared in devtensor.h but has no contract test "
                                      "in tests/test_api_contract.cpp";
  std::set<std::string> declared_set(declared.begin(), declared.end());
  for (const std::string& fn : covered)
    EXPECT_TRUE(declared_set.count(fn)) << fn << " is tested here but not declared in devtensor.h";
  EXPECT_EQ(declared_set.size(), declared.size()) << "a function is declared twice";
}

TEST(Coverage, EveryTensorTakingFunctionHasBadHandleRows) {
  // Every function with a "released" row also has stack/heap/interior/small-integer rows,
  // by construction (Table::handles); check that every function taking a dt_tensor has one.
  std::ifstream in(DT_TEST_DATA_DIR "/../include/devtensor.h");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::regex re(R"(DT_API\s+[^;]*?\b(dt_[A-Za-z_0-9]+)\s*\(([^)]*)\))");
  std::set<std::string> with_released;
  for (const Case& c : all_cases())
    if (c.what.find("=released") != std::string::npos) with_released.insert(c.fn);
  int n = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    std::string fn = (*it)[1].str(), params = (*it)[2].str();
    // Inputs (dt_tensor* t / const dt_tensor* ...), not dt_tensor** out-parameters.
    bool takes_tensor = false;
    static const std::regex param_re(R"(dt_tensor[^,]*)");
    for (auto p = std::sregex_iterator(params.begin(), params.end(), param_re);
         p != std::sregex_iterator(); ++p) {
      std::string param = p->str();
      if (param.find("**") == std::string::npos || param.find("const*") != std::string::npos ||
          param.find("const *") != std::string::npos)
        takes_tensor = true;
    }
    if (!takes_tensor) continue;
    ++n;
    EXPECT_TRUE(with_released.count(fn)) << fn << " takes a tensor but has no bad-handle rows";
  }
  EXPECT_GT(n, 80);
}

// ------------------------------------------------------------------ consistency

// Where two codes are allowed, the library must give the same one everywhere.
TEST(Consistency, SameSituationSameCodeEverywhere) {
  size_t live = dt_live_handle_count();
  std::map<std::string, std::map<dt_status, std::vector<std::string>>> seen;
  for (const Case& k : all_cases()) {
    if (k.group.empty()) continue;
    RowResult r = run_row(k, /*check=*/false);
    if (r.skipped) continue;
    seen[k.group][r.status].push_back(k.fn + "(" + k.what + ")");
  }
  for (auto& [group, by_code] : seen) {
    if (by_code.size() <= 1) continue;
    std::ostringstream os;
    for (auto& [code, rows] : by_code) {
      os << "\n  " << status_name(code) << " from " << rows.size() << " rows, e.g.";
      for (size_t i = 0; i < rows.size() && i < 4; ++i) os << " " << rows[i];
    }
    ADD_FAILURE() << "'" << group << "' gives different codes in different functions:" << os.str();
  }
  EXPECT_EQ(dt_live_handle_count(), live);
}

// ------------------------------------------------------------------ handles

using Handles = ContractTest;

TEST_F(Handles, ReleaseNullIsOk) {
  EXPECT_EQ(dt_tensor_release(nullptr), DT_OK);
}

TEST_F(Handles, DoubleReleaseIsInvalidHandleWithMessage) {
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  size_t live = dt_live_handle_count();
  ASSERT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), live - 1);
  EXPECT_EQ(dt_tensor_release(t), IH);
  std::string msg = dt_last_error_message();
  EXPECT_NE(lower(msg).find("releas"), std::string::npos) << msg;
  EXPECT_EQ(dt_tensor_release(t), IH) << "a third release";
  EXPECT_EQ(dt_tensor_retain(t), IH) << "retain after release";
  EXPECT_EQ(dt_live_handle_count(), live - 1);
}

TEST_F(Handles, RetainedHandleNeedsTwoReleases) {
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  ASSERT_EQ(dt_tensor_retain(t), DT_OK);
  ASSERT_EQ(dt_tensor_release(t), DT_OK);
  size_t n = 0;
  EXPECT_EQ(dt_tensor_ndim(t, &n), DT_OK) << "one reference is still held";
  ASSERT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(dt_tensor_release(t), IH);
}

TEST_F(Handles, StaleHandleDoesNotReachTheTensorThatReusedItsSlot) {
  // Release a handle, make new tensors (one may reuse the slot), then use the old handle:
  // it must be refused and must not release or read the new tensor.
  dt_tensor* old_t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &old_t), DT_OK);
  ASSERT_EQ(dt_tensor_release(old_t), DT_OK);
  std::vector<dt_tensor*> fresh(8, nullptr);
  for (auto& f : fresh) ASSERT_EQ(dt_tensor_ones(k4, 1, DT_FLOAT32, CPU0, &f), DT_OK);
  size_t live = dt_live_handle_count();
  EXPECT_EQ(dt_tensor_release(old_t), IH);
  EXPECT_EQ(dt_tensor_retain(old_t), IH);
  size_t nd = 99;
  EXPECT_EQ(dt_tensor_ndim(old_t, &nd), IH);
  EXPECT_EQ(nd, 99u);
  EXPECT_EQ(dt_live_handle_count(), live);
  for (auto& f : fresh) {
    size_t n = 0;
    EXPECT_EQ(dt_tensor_numel(f, &n), DT_OK);
    EXPECT_EQ(n, 4u);
    EXPECT_EQ(dt_tensor_release(f), DT_OK);
  }
}

TEST_F(Handles, AMillionReusesOfOneSlotNeverRevalidateAStaleHandle) {
  // Issue 16: with a 16-bit generation the 65,536th reuse of a slot gave the first
  // handle's value again, and a stale release freed someone else's tensor. Create and
  // release one tensor a million times (the per-thread cache hands the same slot back
  // each time): every value must be new, and the first handle must stay refused.
  dt_tensor* first = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k4, 1, DT_FLOAT32, CPU0, &first), DT_OK);
  ASSERT_EQ(dt_tensor_release(first), DT_OK);
  const size_t live = dt_live_handle_count();
  constexpr int kReuses = 1000000;
  int repeats = 0;
  for (int i = 0; i < kReuses; ++i) {
    dt_tensor* t = nullptr;
    ASSERT_EQ(dt_tensor_zeros(k4, 1, DT_FLOAT32, CPU0, &t), DT_OK);
    if (t == first) ++repeats;
    ASSERT_EQ(dt_tensor_release(t), DT_OK);
  }
  EXPECT_EQ(repeats, 0) << "a released handle's value was given out again";
  dt_tensor* live_one = nullptr;  // possibly in the very slot `first` had
  ASSERT_EQ(dt_tensor_ones(k4, 1, DT_FLOAT32, CPU0, &live_one), DT_OK);
  EXPECT_EQ(dt_tensor_release(first), IH);
  EXPECT_EQ(dt_tensor_retain(first), IH);
  size_t n = 0;
  EXPECT_EQ(dt_tensor_numel(live_one, &n), DT_OK) << "the stale release must not have touched the live tensor";
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(dt_tensor_release(live_one), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), live);
}

TEST_F(Handles, ASlotAtItsLastGenerationIsRetiredNotReused) {
  // Generations never wrap: a slot that used its last one is never handed out again
  // (dt_testing_age_tensor_handle jumps a slot to it; 2^40 real reuses take days).
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k4, 1, DT_FLOAT32, CPU0, &t), DT_OK);
  dt_tensor* aged = dt_testing_age_tensor_handle(t);
  ASSERT_NE(aged, nullptr);
  EXPECT_EQ(dt_tensor_release(t), IH) << "the value before aging no longer matches";
  size_t n = 0;
  EXPECT_EQ(dt_tensor_numel(aged, &n), DT_OK);
  const size_t live = dt_live_handle_count();
  ASSERT_EQ(dt_tensor_release(aged), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), live - 1);
  const uintptr_t slot_mask = (uintptr_t{1} << 24) - 1;  // handle_table.cpp's index bits
  std::vector<dt_tensor*> fresh(256, nullptr);
  for (auto& f : fresh) {
    ASSERT_EQ(dt_tensor_zeros(k4, 1, DT_FLOAT32, CPU0, &f), DT_OK);
    EXPECT_NE(reinterpret_cast<uintptr_t>(f) & slot_mask, reinterpret_cast<uintptr_t>(aged) & slot_mask)
        << "the retired slot was handed out again";
  }
  EXPECT_EQ(dt_tensor_release(aged), IH);
  for (auto& f : fresh) EXPECT_EQ(dt_tensor_release(f), DT_OK);
}

TEST_F(Handles, AForeignPointerIsNotAHandle) {
  int not_a_handle = 0;
  EXPECT_EQ(dt_tensor_release(reinterpret_cast<dt_tensor*>(&not_a_handle)), IH);
  EXPECT_NE(lower(dt_last_error_message()).find("not a devtensor handle"), std::string::npos) << dt_last_error_message();
}

TEST_F(Handles, LiveHandleCountFollowsCreateAndRelease) {
  size_t n0 = dt_live_handle_count();
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), n0 + 1);
  dt_tensor* v = nullptr;
  ASSERT_EQ(dt_reshape(t, k6, 1, &v), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), n0 + 2);
  EXPECT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(dt_tensor_release(v), DT_OK);
  EXPECT_EQ(dt_live_handle_count(), n0);
}

TEST_F(Handles, FromBlobDeleterRunsOnceOnSuccess) {
  float data[6] = {0};
  int calls = 0;
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_from_blob(data, k23, 2, nullptr, DT_FLOAT32, CPU0, counting_deleter, &calls, &t),
            DT_OK);
  EXPECT_EQ(calls, 0);
  ASSERT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(dt_tensor_release(t), IH);
  EXPECT_EQ(calls, 1);
}

TEST_F(Handles, ConcurrentRetainReleaseKeepsTheCount) {
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 2000; ++j) {
        if (dt_tensor_retain(t) != DT_OK) ++errors;
        if (dt_tensor_release(t) != DT_OK) ++errors;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  size_t n = 0;
  EXPECT_EQ(dt_tensor_numel(t, &n), DT_OK);
  EXPECT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(dt_tensor_release(t), IH);
}

TEST_F(Handles, RacingDoubleReleaseSucceedsExactlyOnce) {
  for (int round = 0; round < 200; ++round) {
    dt_tensor* t = nullptr;
    ASSERT_EQ(dt_tensor_zeros(k4, 1, DT_FLOAT32, CPU0, &t), DT_OK);
    std::atomic<int> go{0};
    dt_status st[4] = {-1, -1, -1, -1};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&, i] {
        ++go;
        while (go.load() < 4) {
        }
        st[i] = dt_tensor_release(t);
      });
    for (auto& th : threads) th.join();
    int ok = 0, invalid = 0;
    for (dt_status s : st) {
      if (s == DT_OK) ++ok;
      else if (s == IH) ++invalid;
      else ADD_FAILURE() << "release returned " << status_name(s);
    }
    ASSERT_EQ(ok, 1) << "round " << round;
    ASSERT_EQ(invalid, 3) << "round " << round;
  }
}

// ------------------------------------------------------------------ library functions

using Library = ContractTest;

TEST_F(Library, Version) {
  EXPECT_EQ(dt_version(), static_cast<uint32_t>(DT_VERSION_NUMBER));
  const char* v = dt_version_string();
  ASSERT_NE(v, nullptr);
  std::string expect = std::to_string(DT_VERSION_MAJOR) + "." + std::to_string(DT_VERSION_MINOR) +
                       "." + std::to_string(DT_VERSION_PATCH);
  EXPECT_EQ(std::string(v), expect);
}

TEST_F(Library, StatusStringNamesEveryCodeDistinctly) {
  std::set<std::string> names;
  for (dt_status s = 0; s <= DT_ERR_DISTRIBUTED; ++s) {
    const char* n = dt_status_string(s);
    ASSERT_NE(n, nullptr) << s;
    EXPECT_GT(std::strlen(n), 0u) << s;
    EXPECT_STRNE(n, "unknown status") << s;
    EXPECT_TRUE(names.insert(n).second) << "code " << s << " shares its name \"" << n << "\"";
  }
  EXPECT_STREQ(dt_status_string(DT_ERR_INVALID_ARGUMENT), "invalid argument");
  for (dt_status s : {DT_ERR_DISTRIBUTED + 1, 99, -1, INT32_MIN, INT32_MAX}) {
    const char* n = dt_status_string(s);
    ASSERT_NE(n, nullptr) << s;
    EXPECT_STREQ(n, "unknown status") << s;
  }
}

TEST_F(Library, LastErrorMessageIsNeverNullAndEmptyOnAFreshThread) {
  std::string fresh = "unset";
  bool nonnull = false;
  std::thread th([&] {
    const char* m = dt_last_error_message();
    nonnull = m != nullptr;
    if (m) fresh = m;
  });
  th.join();
  EXPECT_TRUE(nonnull);
  EXPECT_EQ(fresh, "") << "no call has failed on a new thread";
}

TEST_F(Library, SuccessDoesNotClearTheMessageAndTheMessageStaysValid) {
  EXPECT_EQ(dt_set_num_threads(0), IA);
  const char* m = dt_last_error_message();
  ASSERT_NE(m, nullptr);
  std::string copy = m;
  ASSERT_FALSE(copy.empty());
  int32_t n = 0;
  EXPECT_EQ(dt_num_threads(&n), DT_OK);
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  EXPECT_EQ(dt_tensor_release(t), DT_OK);
  EXPECT_EQ(std::string(m), copy) << "the borrowed message must stay valid across successful calls";
  EXPECT_EQ(std::string(dt_last_error_message()), copy);
}

TEST_F(Library, SetErrorMessageSetsThisThreadsMessageOnly) {
  EXPECT_EQ(dt_set_error_message("from a callback \xc3\xa9"), DT_OK);
  EXPECT_STREQ(dt_last_error_message(), "from a callback \xc3\xa9");
  std::string other = "unset";
  std::thread th([&] { other = dt_last_error_message(); });
  th.join();
  EXPECT_EQ(other, "") << "another thread's message is its own";
  EXPECT_EQ(dt_set_error_message(nullptr), DT_OK);
  EXPECT_STREQ(dt_last_error_message(), "");
  EXPECT_EQ(dt_set_error_message("bad \xff byte"), DT_OK);  // kept UTF-8, as every message
  EXPECT_STREQ(dt_last_error_message(), "bad \\xFF byte");
}

TEST_F(Library, ErrorMessageIsPerThread) {
  // Two threads fail with different errors at the same time; each reads its own message.
  dt_tensor* stale = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &stale), DT_OK);
  ASSERT_EQ(dt_tensor_release(stale), DT_OK);
  ASSERT_EQ(dt_device_parse("not-a-device", nullptr), IA);  // the main thread's own message
  std::string main_msg = dt_last_error_message();

  std::mutex mu;
  std::condition_variable cv;
  int failed = 0;
  auto both_failed = [&] {
    std::unique_lock<std::mutex> lock(mu);
    ++failed;
    cv.notify_all();
    cv.wait(lock, [&] { return failed == 2; });
  };
  for (int round = 0; round < 50; ++round) {
    failed = 0;
    dt_status st1 = -1, st2 = -1;
    std::string m1, m2;
    std::thread t1([&] {
      st1 = dt_set_num_threads(-1);
      both_failed();
      m1 = dt_last_error_message();
    });
    std::thread t2([&] {
      st2 = dt_tensor_release(stale);
      both_failed();
      m2 = dt_last_error_message();
    });
    t1.join();
    t2.join();
    ASSERT_EQ(st1, IA);
    ASSERT_EQ(st2, IH);
    ASSERT_FALSE(m1.empty());
    ASSERT_FALSE(m2.empty());
    ASSERT_NE(m1, m2);
    ASSERT_EQ(lower(m1).find("releas"), std::string::npos) << "thread 1 sees thread 2's message: " << m1;
    ASSERT_NE(lower(m2).find("releas"), std::string::npos) << "thread 2's message: " << m2;
  }
  EXPECT_EQ(std::string(dt_last_error_message()), main_msg) << "other threads changed this thread's message";
}

TEST_F(Library, LiveHandleCountAndCudaAvailability) {
  size_t a = dt_live_handle_count(), b = dt_live_handle_count();
  EXPECT_EQ(a, b);
  int32_t avail = dt_cuda_is_available();
  EXPECT_TRUE(avail == 0 || avail == 1) << avail;
  int32_t state = -1;
  ASSERT_EQ(dt_cuda_status(&state, nullptr, 0, nullptr), DT_OK);
  EXPECT_EQ(avail == 1, state == DT_CUDA_AVAILABLE);
  EXPECT_TRUE(state >= DT_CUDA_AVAILABLE && state <= DT_CUDA_ALL_HIDDEN) << state;
}

TEST_F(Library, ManualSeedAcceptsEverySeed) {
  for (uint64_t s : {uint64_t{0}, uint64_t{1}, uint64_t{42}, UINT64_MAX}) EXPECT_EQ(dt_manual_seed(s), DT_OK);
}

TEST_F(Library, DtypeNames) {
  std::set<std::string> names;
  for (dt_dtype t = DT_FLOAT32; t <= DT_BOOL; ++t) {
    const char* n = dt_dtype_name(t);
    ASSERT_NE(n, nullptr) << t;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_STREQ(dt_dtype_name(DT_FLOAT32), "float32");
  EXPECT_STREQ(dt_dtype_name(DT_BFLOAT16), "bfloat16");
  EXPECT_STREQ(dt_dtype_name(DT_BOOL), "bool");
  for (dt_dtype bad : {11, 99, -1, INT32_MIN, INT32_MAX}) EXPECT_EQ(dt_dtype_name(bad), nullptr) << bad;
}

// ------------------------------------------------------------------ string protocol

struct StringFn {
  const char* name;
  std::function<dt_status(char*, size_t, size_t*)> call;
};

class StringProtocol : public ContractTest, public ::testing::WithParamInterface<StringFn> {};

void PrintTo(const StringFn& s, std::ostream* os) { *os << s.name; }

TEST_P(StringProtocol, BufCapNeeded) {
  const StringFn& f = GetParam();
  // Size query: buf NULL, cap 0.
  size_t needed = 0xABAB;
  ASSERT_EQ(f.call(nullptr, 0, &needed), DT_OK) << dt_last_error_message();
  ASSERT_GE(needed, 2u) << "the string should not be empty";
  ASSERT_LT(needed, 1u << 20);
  // needed may be NULL.
  EXPECT_EQ(f.call(nullptr, 0, nullptr), DT_OK);
  // Exact size: the whole string, NUL-terminated, strlen == needed - 1.
  std::vector<char> full(needed + 16, '\x7f');
  size_t n2 = 0;
  ASSERT_EQ(f.call(full.data(), needed, &n2), DT_OK);
  EXPECT_EQ(n2, needed);
  EXPECT_EQ(std::strlen(full.data()), needed - 1);
  for (size_t i = needed; i < full.size(); ++i) ASSERT_EQ(full[i], '\x7f') << "wrote past cap at " << i;
  std::string whole(full.data());
  // Truncation: cap 3 keeps 2 chars and a NUL, needed is the full size, nothing past cap.
  for (size_t cap : {size_t{1}, size_t{2}, size_t{3}, needed - 1}) {
    if (cap == 0 || cap >= needed) continue;
    std::vector<char> small(cap + 16, '\x7f');
    size_t n3 = 0;
    ASSERT_EQ(f.call(small.data(), cap, &n3), DT_OK) << "cap " << cap;
    EXPECT_EQ(n3, needed) << "cap " << cap;
    EXPECT_EQ(small[cap - 1], '\0') << "cap " << cap << ": no terminating NUL";
    EXPECT_EQ(std::string(small.data()), whole.substr(0, cap - 1)) << "cap " << cap;
    for (size_t i = cap; i < small.size(); ++i) ASSERT_EQ(small[i], '\x7f') << "cap " << cap << ": wrote at " << i;
  }
  // Larger buffer: same string, needed unchanged.
  std::vector<char> big(needed + 100, '\x7f');
  size_t n4 = 0;
  ASSERT_EQ(f.call(big.data(), big.size(), &n4), DT_OK);
  EXPECT_EQ(n4, needed);
  EXPECT_EQ(std::string(big.data()), whole);
  // buf NULL with cap > 0 is an error that leaves needed alone.
  size_t n5 = 0xABAB;
  EXPECT_EQ(f.call(nullptr, 8, &n5), IA);
  EXPECT_EQ(n5, 0xABABu);
  EXPECT_STRNE(dt_last_error_message(), "");
}

const StringFn kStringFns[] = {
    {"dt_build_info", [](char* b, size_t c, size_t* n) { return dt_build_info(b, c, n); }},
    {"dt_device_format", [](char* b, size_t c, size_t* n) { return dt_device_format(CPU0, b, c, n); }},
    {"dt_device_format_cuda1",
     [](char* b, size_t c, size_t* n) { return dt_device_format(dev(DT_DEVICE_CUDA, 1), b, c, n); }},
    {"dt_cuda_status", [](char* b, size_t c, size_t* n) {
       int32_t state = -1;
       return dt_cuda_status(&state, b, c, n);
     }},
    {"dt_device_name", [](char* b, size_t c, size_t* n) { return dt_device_name(CPU0, b, c, n); }},
    {"dt_lr_scheduler_kind", [](char* b, size_t c, size_t* n) {
       dt_optimizer* o = nullptr;
       dt_lr_scheduler* s = nullptr;
       dt_tensor* p = nullptr;
       const int64_t shape[] = {2};
       if (dt_tensor_zeros(shape, 1, DT_FLOAT32, CPU0, &p) != DT_OK) return dt_status{-999};
       dt_tensor_set_requires_grad(p, 1);
       const dt_tensor* ps[] = {p};
       dt_sgd_new(ps, 1, 0.1, 0, 0, 0, 0, &o);
       dt_cosine_annealing_warm_restarts_new(o, 2, 1, 0, &s);
       const dt_status st = dt_lr_scheduler_kind(s, b, c, n);
       dt_lr_scheduler_release(s);
       dt_optimizer_release(o);
       dt_tensor_release(p);
       return st;
     }},
    {"dt_tensor_to_string", [](char* b, size_t c, size_t* n) {
       dt_tensor* t = nullptr;
       const float v[2] = {1.0f, 2.0f};
       const int64_t s[] = {2};
       if (dt_tensor_from_data(v, sizeof v, s, 1, DT_FLOAT32, CPU0, &t) != DT_OK) return dt_status{-999};
       dt_status st = dt_tensor_to_string(t, b, c, n);
       dt_tensor_release(t);
       return st;
     }},
};

INSTANTIATE_TEST_SUITE_P(Contract, StringProtocol, ::testing::ValuesIn(kStringFns),
                         [](const ::testing::TestParamInfo<StringFn>& i) { return std::string(i.param.name); });

TEST_F(Library, DeviceFormatGivesTheDocumentedText) {
  char buf[32];
  size_t n = 0;
  ASSERT_EQ(dt_device_format(CPU0, buf, sizeof buf, &n), DT_OK);
  EXPECT_STREQ(buf, "cpu:0");
  EXPECT_EQ(n, 6u);
  ASSERT_EQ(dt_device_format(dev(DT_DEVICE_CUDA, 1), buf, sizeof buf, &n), DT_OK);
  EXPECT_STREQ(buf, "cuda:1");
}

// ------------------------------------------------------------------ buffer protocols

using Buffers = ContractTest;

TEST_F(Buffers, DeviceListsSizeQueryAndSmallCap) {
  using ListFn = dt_status (*)(dt_device*, size_t, size_t*);
  for (auto [name, f] : {std::pair<const char*, ListFn>{FN(dt_all_gpus)},
                         std::pair<const char*, ListFn>{FN(dt_devices_by_free_memory)}}) {
    SCOPED_TRACE(name);
    size_t count = 0;
    ASSERT_EQ(f(nullptr, 0, &count), DT_OK) << dt_last_error_message();
    ASSERT_GE(count, 1u);
    std::vector<dt_device> all(count + 2, dt_device{-7, -7});
    size_t count2 = 0;
    ASSERT_EQ(f(all.data(), count, &count2), DT_OK);
    EXPECT_EQ(count2, count);
    EXPECT_EQ(all[count].type, -7) << "wrote past cap";
    if (!cuda_usable()) {
      EXPECT_EQ(count, 1u);
      EXPECT_EQ(all[0].type, DT_DEVICE_CPU);
      EXPECT_EQ(all[0].index, 0);
    }
  }
}

TEST_F(Buffers, ChunkAndSplitWithTooSmallCapWriteNothing) {
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(k23, 2, DT_FLOAT32, CPU0, &t), DT_OK);
  using Split = dt_status (*)(const dt_tensor*, int64_t, int64_t, dt_tensor**, size_t, size_t*);
  for (auto [name, f] : {std::pair<const char*, Split>{FN(dt_chunk)}, std::pair<const char*, Split>{FN(dt_split)}}) {
    SCOPED_TRACE(name);
    size_t live = dt_live_handle_count();
    size_t count = 0;
    ASSERT_EQ(f(t, 2, 1, nullptr, 0, &count), DT_OK) << dt_last_error_message();
    EXPECT_EQ(count, 2u);  // [2,3] along dim 1: chunk(2) -> 2+1, split(2) -> 2+1
    dt_tensor* outs[4];
    for (auto& o : outs) o = sentinel_tensor();
    size_t count2 = 0;
    ASSERT_EQ(f(t, 2, 1, outs, 1, &count2), DT_OK) << dt_last_error_message();
    EXPECT_EQ(count2, 2u);
    for (auto& o : outs) EXPECT_EQ(o, sentinel_tensor()) << "cap too small: nothing may be written";
    EXPECT_EQ(dt_live_handle_count(), live);
    ASSERT_EQ(f(t, 2, 1, outs, 4, &count2), DT_OK);
    ASSERT_EQ(count2, 2u);
    EXPECT_EQ(outs[2], sentinel_tensor());
    for (size_t i = 0; i < count2; ++i) EXPECT_EQ(dt_tensor_release(outs[i]), DT_OK);
    EXPECT_EQ(dt_live_handle_count(), live);
  }
  EXPECT_EQ(dt_tensor_release(t), DT_OK);
}

TEST_F(Buffers, ShapeOfA0dTensorAcceptsNullOut) {
  dt_tensor* t = nullptr;
  ASSERT_EQ(dt_tensor_zeros(nullptr, 0, DT_FLOAT32, CPU0, &t), DT_OK) << dt_last_error_message();
  EXPECT_EQ(dt_tensor_shape(t, nullptr, 0), DT_OK) << dt_last_error_message();
  EXPECT_EQ(dt_tensor_strides(t, nullptr, 0), DT_OK) << dt_last_error_message();
  EXPECT_EQ(dt_tensor_release(t), DT_OK);
}

// ------------------------------------------------------------------ extensible structs

using Structs = ContractTest;

TEST_F(Structs, DevicePropertiesWritesNothingPastStructSize) {
  dt_device_props p;
  std::memset(static_cast<void*>(&p), 0xAB, sizeof p);
  p.struct_size = offsetof(dt_device_props, name);  // the smallest valid size
  ASSERT_EQ(dt_device_properties(CPU0, &p), DT_OK) << dt_last_error_message();
  EXPECT_EQ(p.device.type, DT_DEVICE_CPU);
  EXPECT_EQ(p.device.index, 0);
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&p);
  for (size_t i = offsetof(dt_device_props, name); i < sizeof p; ++i)
    ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " past struct_size was written";
  // The full struct.
  dt_device_props full;
  std::memset(static_cast<void*>(&full), 0, sizeof full);
  full.struct_size = sizeof full;
  ASSERT_EQ(dt_device_properties(CPU0, &full), DT_OK);
  EXPECT_GT(std::strlen(full.name), 0u);
  EXPECT_LT(std::strlen(full.name), sizeof full.name);
}

TEST_F(Structs, MemoryStatsWritesNothingPastStructSize) {
  dt_mem_stats s;
  std::memset(static_cast<void*>(&s), 0xAB, sizeof s);
  s.struct_size = offsetof(dt_mem_stats, allocated_bytes) + 8;
  ASSERT_EQ(dt_memory_stats(CPU0, &s), DT_OK) << dt_last_error_message();
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&s);
  for (size_t i = offsetof(dt_mem_stats, allocated_bytes) + 8; i < sizeof s; ++i)
    ASSERT_EQ(bytes[i], 0xAB) << "byte " << i << " past struct_size was written";
}

}  // namespace
