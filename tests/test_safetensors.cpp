// test_safetensors.cpp — dt_state_dict and the safetensors format, through the C ABI.
//
// Round trips of every dtype (bit-exact), 0-d, empty and non-contiguous tensors; the
// reference file tests/reference/gen_safetensors.py wrote with PyTorch (loaded, and
// reproduced byte for byte by dt_safetensors_save; checked by that script's own reader
// when Python is there); CPU loads borrowing the file mapping; and one test per way a
// file can break the format, each DT_ERR_FORMAT with its own message, creating nothing.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/dt_test.h"

namespace {

// Two logical CPU devices, before the library reads the variable (at first use).
[[maybe_unused]] const int kEnvSet = setenv("DEVTENSOR_CPU_DEVICES", "2", 1);

using Bytes = std::vector<unsigned char>;

// Owns one state-dict reference.
using SD = Handle<dt_state_dict, dt_state_dict_release>;

size_t count(dt_state_dict* sd) {
  size_t n = 0;
  EXPECT_EQ(dt_state_dict_count(sd, &n), DT_OK) << dt_last_error_message();
  return n;
}

std::string name_at(dt_state_dict* sd, size_t i) {
  size_t need = 0;
  EXPECT_EQ(dt_state_dict_name(sd, i, nullptr, 0, &need), DT_OK) << dt_last_error_message();
  std::string s(need, '\0');
  EXPECT_EQ(dt_state_dict_name(sd, i, &s[0], need, &need), DT_OK);
  s.resize(need - 1);
  return s;
}

std::vector<std::string> names(dt_state_dict* sd) {
  std::vector<std::string> v;
  for (size_t i = 0, n = count(sd); i < n; ++i) v.push_back(name_at(sd, i));
  return v;
}

Bytes bytes_of(dt_tensor* t) {
  size_t n = 0;
  dt_tensor_nbytes(t, &n);
  Bytes b(n);
  EXPECT_EQ(dt_tensor_copy_to_host(t, b.data(), n), DT_OK) << dt_last_error_message();
  return b;
}

dt_dtype dtype_of(dt_tensor* t) {
  dt_dtype d = 0;
  dt_tensor_dtype(t, &d);
  return d;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A safetensors file from header text and buffer bytes; the length field is the header's
// size unless `length` overrides it.
Bytes st_file(const std::string& header, const Bytes& buffer, uint64_t length = UINT64_MAX) {
  uint64_t n = length == UINT64_MAX ? header.size() : length;
  Bytes f;
  for (int i = 0; i < 8; ++i) f.push_back(static_cast<unsigned char>(n >> (8 * i)));
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), buffer.begin(), buffer.end());
  return f;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> v;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) v.push_back(e->d_name);
    closedir(d);
  }
  return v;
}

// Whether the file at path is mapped into this process (Linux: /proc/self/maps).
bool mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0) return true;
  return false;
}

dt_tensor* tensor_of(const void* data, size_t nbytes, std::vector<int64_t> shape, dt_dtype dtype,
                     dt_device device = cpu()) {
  dt_tensor* t = nullptr;
  dt_status s = dt_tensor_from_data(data, nbytes, shape.data(), shape.size(), dtype, device, &t);
  EXPECT_EQ(s, DT_OK) << dt_last_error_message();
  return t;
}

// Every test gets a fresh directory and must leave no handle behind.
class Safetensors : public LeakChecked {
 protected:
  void SetUp() override {
    LeakChecked::SetUp();
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/dt_safetensors_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    ASSERT_NE(mkdtemp(buf.data()), nullptr);
    dir_ = buf.data();
  }
  void TearDown() override {
    for (const std::string& e : dir_entries(dir_)) std::remove((dir_ + "/" + e).c_str());
    rmdir(dir_.c_str());
    LeakChecked::TearDown();
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

// ------------------------------------------------------------------ the state dict

TEST_F(Safetensors, StateDictKeepsInsertionOrderAndReplacesInPlace) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  EXPECT_EQ(count(sd), 0u);
  const float a[] = {1, 2, 3}, b[] = {4, 5}, c[] = {6};
  T ta(tensor_of(a, sizeof a, {3}, DT_FLOAT32)), tb(tensor_of(b, sizeof b, {2}, DT_FLOAT32)),
      tc(tensor_of(c, sizeof c, {1}, DT_FLOAT32));
  DT_ASSERT_OK(dt_state_dict_set(sd, "zeta", ta));
  DT_ASSERT_OK(dt_state_dict_set(sd, "alpha", tb));
  DT_ASSERT_OK(dt_state_dict_set(sd, "0.weight", tc));
  EXPECT_EQ(names(sd), (std::vector<std::string>{"zeta", "alpha", "0.weight"}));
  // Replacing keeps the position and drops the old reference.
  DT_ASSERT_OK(dt_state_dict_set(sd, "zeta", tc));
  EXPECT_EQ(names(sd), (std::vector<std::string>{"zeta", "alpha", "0.weight"}));
  T got;
  DT_ASSERT_OK(dt_state_dict_find(sd, "zeta", got.out()));
  EXPECT_EQ(values<float>(got), std::vector<float>{6});
  // get and find give the stored tensor itself (shared data), as a new reference.
  DT_ASSERT_OK(dt_state_dict_get(sd, 1, got.out()));
  int32_t shares = 0;
  DT_ASSERT_OK(dt_tensor_shares_storage(got, tb, &shares));
  EXPECT_EQ(shares, 1);
  // The state dict holds its own references: the caller's can go.
  ta = T();
  tb = T();
  DT_ASSERT_OK(dt_state_dict_get(sd, 1, got.out()));
  EXPECT_EQ(values<float>(got), (std::vector<float>{4, 5}));
}

TEST_F(Safetensors, StateDictErrorsNameTheProblem) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1};
  T ta(tensor_of(a, sizeof a, {1}, DT_FLOAT32));
  DT_ASSERT_OK(dt_state_dict_set(sd, "w", ta));
  dt_tensor* out = reinterpret_cast<dt_tensor*>(uintptr_t{0xABAB});
  DT_EXPECT_STATUS(dt_state_dict_find(sd, "missing.key", &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("missing.key"), std::string::npos) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_state_dict_get(sd, 1, &out), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("out of range"), std::string::npos);
  EXPECT_EQ(out, reinterpret_cast<dt_tensor*>(uintptr_t{0xABAB}));
  DT_EXPECT_STATUS(dt_state_dict_set(sd, "bad\xff", ta), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_state_dict_set(sd, "\xc0\x80", ta), DT_ERR_INVALID_ARGUMENT);  // overlong NUL
  DT_EXPECT_STATUS(dt_state_dict_set(sd, "\xed\xa0\x80", ta), DT_ERR_INVALID_ARGUMENT);  // surrogate
  DT_ASSERT_OK(dt_state_dict_set(sd, "gr\xc3\xbc\xc3\x9f", ta));  // valid UTF-8
  EXPECT_EQ(count(sd), 2u);
  // A handle of the other kind is refused, both ways.
  DT_EXPECT_STATUS(dt_state_dict_count(reinterpret_cast<dt_state_dict*>(ta.get()), nullptr), DT_ERR_INVALID_ARGUMENT);
  size_t n = 0;
  DT_EXPECT_STATUS(dt_state_dict_count(reinterpret_cast<dt_state_dict*>(ta.get()), &n), DT_ERR_INVALID_HANDLE);
  EXPECT_NE(std::string(dt_last_error_message()).find("state dict"), std::string::npos) << dt_last_error_message();
  DT_EXPECT_STATUS(dt_tensor_numel(reinterpret_cast<dt_tensor*>(sd.get()), &n), DT_ERR_INVALID_HANDLE);
  DT_EXPECT_STATUS(dt_state_dict_release(reinterpret_cast<dt_state_dict*>(ta.get())), DT_ERR_INVALID_HANDLE);
  EXPECT_EQ(dt_state_dict_release(nullptr), DT_OK);
}

TEST_F(Safetensors, StateDictRetainRelease) {
  dt_state_dict* sd = nullptr;
  size_t live = dt_live_handle_count();
  DT_ASSERT_OK(dt_state_dict_new(&sd));
  EXPECT_EQ(dt_live_handle_count(), live + 1);
  DT_ASSERT_OK(dt_state_dict_retain(sd));
  DT_ASSERT_OK(dt_state_dict_release(sd));
  EXPECT_EQ(count(sd), 0u);
  DT_ASSERT_OK(dt_state_dict_release(sd));
  EXPECT_EQ(dt_live_handle_count(), live);
  size_t n = 0;
  DT_EXPECT_STATUS(dt_state_dict_count(sd, &n), DT_ERR_INVALID_HANDLE);
  DT_EXPECT_STATUS(dt_state_dict_release(sd), DT_ERR_INVALID_HANDLE);
}

TEST_F(Safetensors, NameFollowsTheStringProtocol) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1};
  T ta(tensor_of(a, sizeof a, {1}, DT_FLOAT32));
  DT_ASSERT_OK(dt_state_dict_set(sd, "layer.weight", ta));
  size_t need = 0;
  DT_ASSERT_OK(dt_state_dict_name(sd, 0, nullptr, 0, &need));
  EXPECT_EQ(need, 13u);
  char small[6];
  std::memset(small, 0x7f, sizeof small);
  DT_ASSERT_OK(dt_state_dict_name(sd, 0, small, 4, &need));
  EXPECT_STREQ(small, "lay");
  EXPECT_EQ(small[4], '\x7f');
  EXPECT_EQ(need, 13u);
  DT_EXPECT_STATUS(dt_state_dict_name(sd, 0, nullptr, 8, &need), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_state_dict_name(sd, 1, small, sizeof small, &need), DT_ERR_INVALID_ARGUMENT);
}

// ------------------------------------------------------------------ round trips

TEST_F(Safetensors, EveryDtypeRoundTripsBitExact) {
  const dt_dtype dtypes[] = {DT_FLOAT64, DT_FLOAT32, DT_FLOAT16, DT_BFLOAT16, DT_INT64,
                             DT_INT32,   DT_INT16,   DT_INT8,    DT_UINT8,    DT_BOOL};
  std::mt19937 rng(42);
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  std::vector<Bytes> want;
  std::vector<std::string> want_names;
  for (dt_dtype d : dtypes) {
    size_t size = 0;
    DT_ASSERT_OK(dt_dtype_size(d, &size));
    Bytes b(3 * 5 * size);
    // Any bit pattern (NaN payloads, subnormals, infinities) must survive; bools are 0/1.
    for (auto& x : b) x = static_cast<unsigned char>(d == DT_BOOL ? rng() & 1 : rng());
    T t(tensor_of(b.data(), b.size(), {3, 5}, d));
    std::string name = std::string("t.") + dt_dtype_name(d);
    DT_ASSERT_OK(dt_state_dict_set(sd, name.c_str(), t));
    want.push_back(b);
    want_names.push_back(name);
  }
  std::string file = path("all.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
  ASSERT_EQ(names(back), want_names);
  for (size_t i = 0; i < want.size(); ++i) {
    T t;
    DT_ASSERT_OK(dt_state_dict_get(back, i, t.out()));
    EXPECT_EQ(dtype_of(t), dtypes[i]);
    EXPECT_EQ(shape_of(t), (std::vector<int64_t>{3, 5}));
    EXPECT_TRUE(bytes_of(t) == want[i]) << want_names[i];
  }
  // Saving what was loaded gives the same file.
  std::string again = path("again.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(back, again.c_str()));
  EXPECT_TRUE(read_file(again) == read_file(file));
}

TEST_F(Safetensors, ZeroDimensionalAndEmptyTensors) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const double v = -7.25;
  const int64_t e0[] = {0}, e1[] = {2, 0, 3};
  T s(tensor_of(&v, sizeof v, {}, DT_FLOAT64));
  T a, b;
  DT_ASSERT_OK(dt_tensor_empty(e0, 1, DT_INT32, cpu(), a.out()));
  DT_ASSERT_OK(dt_tensor_empty(e1, 3, DT_BFLOAT16, cpu(), b.out()));
  DT_ASSERT_OK(dt_state_dict_set(sd, "empty_first", a));
  DT_ASSERT_OK(dt_state_dict_set(sd, "scalar", s));
  DT_ASSERT_OK(dt_state_dict_set(sd, "empty_3d", b));
  std::string file = path("small.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
  // Empty tensors share the scalar's offset; equal offsets keep the file order.
  ASSERT_EQ(names(back), (std::vector<std::string>{"empty_first", "scalar", "empty_3d"}));
  T t;
  DT_ASSERT_OK(dt_state_dict_find(back, "scalar", t.out()));
  EXPECT_EQ(shape_of(t), std::vector<int64_t>{});
  EXPECT_EQ(values<double>(t), std::vector<double>{-7.25});
  DT_ASSERT_OK(dt_state_dict_find(back, "empty_first", t.out()));
  EXPECT_EQ(shape_of(t), std::vector<int64_t>{0});
  EXPECT_EQ(dtype_of(t), DT_INT32);
  DT_ASSERT_OK(dt_state_dict_find(back, "empty_3d", t.out()));
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{2, 0, 3}));
  EXPECT_EQ(dtype_of(t), DT_BFLOAT16);
}

TEST_F(Safetensors, EmptyStateDictIsAPaddedEmptyObject) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  std::string file = path("none.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  EXPECT_TRUE(read_file(file) == st_file("{}      ", {}));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
  EXPECT_EQ(count(back), 0u);
}

TEST_F(Safetensors, NonContiguousTensorIsSavedContiguous) {
  const int32_t v[] = {0, 1, 2, 3, 4, 5};
  T a(tensor_of(v, sizeof v, {2, 3}, DT_INT32));
  T at;
  DT_ASSERT_OK(dt_transpose(a, 0, 1, at.out()));
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  DT_ASSERT_OK(dt_state_dict_set(sd, "t", at));
  std::string file = path("t.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
  T t;
  DT_ASSERT_OK(dt_state_dict_get(back, 0, t.out()));
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{3, 2}));
  int32_t contiguous = 0;
  DT_ASSERT_OK(dt_tensor_is_contiguous(t, &contiguous));
  EXPECT_EQ(contiguous, 1);
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  // The file's bytes are row-major: 0 3 1 4 2 5.
  Bytes f = read_file(file);
  ASSERT_GE(f.size(), 24u);
  int32_t raw[6];
  std::memcpy(raw, f.data() + f.size() - 24, 24);
  EXPECT_EQ(std::vector<int32_t>(raw, raw + 6), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

TEST_F(Safetensors, HeaderIsCompactJsonInInsertionOrderPaddedToEight) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1, 2, 3};
  const uint8_t b[] = {9};
  T ta(tensor_of(a, sizeof a, {3}, DT_FLOAT32)), tb(tensor_of(b, sizeof b, {1, 1}, DT_UINT8));
  DT_ASSERT_OK(dt_state_dict_set(sd, "z", ta));
  DT_ASSERT_OK(dt_state_dict_set(sd, "a", tb));
  std::string file = path("h.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  Bytes f = read_file(file);
  ASSERT_GE(f.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | f[i];
  EXPECT_EQ(n % 8, 0u);
  ASSERT_EQ(f.size(), 8 + n + 13);
  std::string header(f.begin() + 8, f.begin() + 8 + static_cast<long>(n));
  std::string json = R"({"z":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                     R"("a":{"dtype":"U8","shape":[1,1],"data_offsets":[12,13]}})";
  EXPECT_EQ(header, json + std::string(n - json.size(), ' '));
}

TEST_F(Safetensors, SaveReplacesAnExistingFileAndCopiesFromOtherDevices) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1, 2};
  T on1(tensor_of(a, sizeof a, {2}, DT_FLOAT32, dt_device{DT_DEVICE_CPU, 1}));
  DT_ASSERT_OK(dt_state_dict_set(sd, "x", on1));
  std::string file = path("x.safetensors");
  write_file(file, Bytes(1000, 'q'));
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), dt_device{DT_DEVICE_CPU, 1}, back.out()));
  T t;
  DT_ASSERT_OK(dt_state_dict_get(back, 0, t.out()));
  dt_device d{};
  DT_ASSERT_OK(dt_tensor_device(t, &d));
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(values<float>(t), (std::vector<float>{1, 2}));
  EXPECT_EQ(dir_entries(dir_), std::vector<std::string>{"x.safetensors"}) << "a temporary file was left";
}

TEST_F(Safetensors, FailedSaveLeavesNoFile) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1, 2};
  T ta(tensor_of(a, sizeof a, {2}, DT_FLOAT32));
  DT_ASSERT_OK(dt_state_dict_set(sd, "x", ta));
  // The destination is a directory: the rename fails after everything was written.
  std::string sub = path("sub");
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  DT_EXPECT_STATUS(dt_safetensors_save(sd, sub.c_str()), DT_ERR_IO);
  EXPECT_NE(std::string(dt_last_error_message()).find(sub), std::string::npos) << dt_last_error_message();
  EXPECT_EQ(dir_entries(dir_), std::vector<std::string>{"sub"}) << "the temporary file was left behind";
  rmdir(sub.c_str());
  // A missing directory: nothing can be created.
  std::string missing = path("no/such/dir/x.safetensors");
  DT_EXPECT_STATUS(dt_safetensors_save(sd, missing.c_str()), DT_ERR_IO);
  EXPECT_NE(std::string(dt_last_error_message()).find(missing), std::string::npos) << dt_last_error_message();
  // A name the format reserves.
  DT_ASSERT_OK(dt_state_dict_set(sd, "__metadata__", ta));
  std::string file = path("m.safetensors");
  DT_EXPECT_STATUS(dt_safetensors_save(sd, file.c_str()), DT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dt_last_error_message()).find("__metadata__"), std::string::npos);
  EXPECT_TRUE(dir_entries(dir_).empty());
}

// ------------------------------------------------------------------ the mapping

TEST_F(Safetensors, CpuLoadBorrowsTheFileMapping) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const float a[] = {1, 2, 3, 4};
  const double b[] = {5, 6};
  T ta(tensor_of(a, sizeof a, {4}, DT_FLOAT32)), tb(tensor_of(b, sizeof b, {2}, DT_FLOAT64));
  DT_ASSERT_OK(dt_state_dict_set(sd, "a", ta));
  DT_ASSERT_OK(dt_state_dict_set(sd, "b", tb));
  std::string file = path("m.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  Bytes original = read_file(file);

  T la, lb;
  {
    SD back;
    DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
    DT_ASSERT_OK(dt_state_dict_get(back, 0, la.out()));
    DT_ASSERT_OK(dt_state_dict_get(back, 1, lb.out()));
  }  // the tensors outlive their state dict, and keep the mapping
  void* pa = nullptr;
  void* pb = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(la, &pa));
  DT_ASSERT_OK(dt_tensor_data_ptr(lb, &pb));
  // Laid out as in the file: b starts 16 bytes after a, and a starts 8 + N bytes after a
  // page boundary (the mapping's start).
  EXPECT_EQ(static_cast<char*>(pb) - static_cast<char*>(pa), 16);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | original[i];
  long page = sysconf(_SC_PAGESIZE);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(pa) % static_cast<uintptr_t>(page), (8 + n) % static_cast<uint64_t>(page));
  EXPECT_EQ(std::memcmp(pa, original.data() + 8 + n, 16), 0);
  // Each tensor has its own storage over the shared mapping.
  int32_t shares = 1;
  DT_ASSERT_OK(dt_tensor_shares_storage(la, lb, &shares));
  EXPECT_EQ(shares, 0);
  // Writing to a loaded tensor changes the tensor, not the file.
  DT_ASSERT_OK(dt_add_scalar_(la, 10.0));
  EXPECT_EQ(values<float>(la), (std::vector<float>{11, 12, 13, 14}));
  EXPECT_TRUE(read_file(file) == original);
  lb = T();
  EXPECT_EQ(values<float>(la), (std::vector<float>{11, 12, 13, 14}));
  // The mapping goes with the last tensor that uses it.
  EXPECT_TRUE(mapped(file));
  la = T();
  EXPECT_FALSE(mapped(file));
}

TEST_F(Safetensors, MisalignedTensorIsCopiedAligned) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  const uint8_t a[] = {7, 8, 9};
  const float b[] = {0.5f, -2.0f};
  T ta(tensor_of(a, sizeof a, {3}, DT_UINT8)), tb(tensor_of(b, sizeof b, {2}, DT_FLOAT32));
  DT_ASSERT_OK(dt_state_dict_set(sd, "odd", ta));
  DT_ASSERT_OK(dt_state_dict_set(sd, "f", tb));
  std::string file = path("odd.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  SD back;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), back.out()));
  T t;
  DT_ASSERT_OK(dt_state_dict_find(back, "f", t.out()));
  void* p = nullptr;
  DT_ASSERT_OK(dt_tensor_data_ptr(t, &p));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4, 0u);
  EXPECT_EQ(values<float>(t), (std::vector<float>{0.5f, -2.0f}));
}

TEST_F(Safetensors, LoadsOntoCuda) {
  if (dt_cuda_is_available() != 1) GTEST_SKIP() << "no usable CUDA device";
  std::string file = std::string(DT_TEST_DATA_DIR) + "/reference/safetensors/reference.safetensors";
  SD gpu, host;
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), dt_device{DT_DEVICE_CUDA, 0}, gpu.out()));
  DT_ASSERT_OK(dt_safetensors_load(file.c_str(), cpu(), host.out()));
  ASSERT_EQ(names(gpu), names(host));
  for (size_t i = 0; i < count(gpu); ++i) {
    T g, h;
    DT_ASSERT_OK(dt_state_dict_get(gpu, i, g.out()));
    DT_ASSERT_OK(dt_state_dict_get(host, i, h.out()));
    dt_device d{};
    DT_ASSERT_OK(dt_tensor_device(g, &d));
    EXPECT_EQ(d.type, DT_DEVICE_CUDA);
    EXPECT_TRUE(bytes_of(g) == bytes_of(h)) << name_at(gpu, i);
  }
  // And back: a state dict of CUDA tensors saves the same file.
  std::string again = path("gpu.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(gpu, again.c_str()));
  EXPECT_TRUE(read_file(again) == read_file(file));
}

// ------------------------------------------------------------------ the reference file

struct RefTensor {
  std::string name;
  dt_dtype dtype;
  std::vector<int64_t> shape;
  Bytes bytes;
};

std::vector<RefTensor> reference_tensors() {
  std::ifstream in(DT_TEST_DATA_DIR "/reference/safetensors/reference.json");
  nlohmann::json j = nlohmann::json::parse(in);
  const std::map<std::string, dt_dtype> codes = {
      {"F64", DT_FLOAT64}, {"F32", DT_FLOAT32}, {"F16", DT_FLOAT16}, {"BF16", DT_BFLOAT16},
      {"I64", DT_INT64},   {"I32", DT_INT32},   {"I16", DT_INT16},   {"I8", DT_INT8},
      {"U8", DT_UINT8},    {"BOOL", DT_BOOL}};
  std::vector<RefTensor> v;
  for (const auto& e : j["tensors"]) {
    RefTensor r;
    r.name = e["name"];
    r.dtype = codes.at(e["dtype"]);
    r.shape = e["shape"].get<std::vector<int64_t>>();
    std::string hex = e["hex"];
    for (size_t i = 0; i + 1 < hex.size(); i += 2) r.bytes.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    v.push_back(std::move(r));
  }
  return v;
}

TEST_F(Safetensors, LoadsTheReferenceFileWrittenByPython) {
  std::vector<RefTensor> want = reference_tensors();
  ASSERT_EQ(want.size(), 16u);
  SD sd;
  DT_ASSERT_OK(dt_safetensors_load(DT_TEST_DATA_DIR "/reference/safetensors/reference.safetensors", cpu(), sd.out()));
  ASSERT_EQ(count(sd), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(name_at(sd, i), want[i].name);
    T t;
    DT_ASSERT_OK(dt_state_dict_get(sd, i, t.out()));
    EXPECT_EQ(dtype_of(t), want[i].dtype);
    EXPECT_EQ(shape_of(t), want[i].shape);
    EXPECT_TRUE(bytes_of(t) == want[i].bytes);
  }
  // Known values, independently of reference.json.
  T t;
  DT_ASSERT_OK(dt_state_dict_find(sd, "f32", t.out()));
  EXPECT_EQ(values<float>(t), (std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "i64", t.out()));
  EXPECT_EQ(values<int64_t>(t), (std::vector<int64_t>{INT64_MIN, INT64_MAX, 0, -1}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "f16", t.out()));
  EXPECT_EQ(values<uint16_t>(t), (std::vector<uint16_t>{0x3e00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0xfc00}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "bf16", t.out()));
  EXPECT_EQ(values<uint16_t>(t), (std::vector<uint16_t>{0x3f80, 0xc060, 0x7e96, 0x0001}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "bool", t.out()));
  EXPECT_EQ(values<uint8_t>(t), (std::vector<uint8_t>{1, 0, 1, 1}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "scalar", t.out()));
  EXPECT_EQ(shape_of(t), std::vector<int64_t>{});
  EXPECT_EQ(values<float>(t), std::vector<float>{3.25f});
  DT_ASSERT_OK(dt_state_dict_find(sd, "emb.\xc3\xa9t\xc3\xa9", t.out()));
  EXPECT_EQ(values<float>(t), (std::vector<float>{2.0f, 4.0f}));
  DT_ASSERT_OK(dt_state_dict_find(sd, "after_odd", t.out()));  // misaligned in the file
  EXPECT_EQ(values<float>(t), (std::vector<float>{0.25f, -8.0f}));
}

TEST_F(Safetensors, SavingTheReferenceTensorsReproducesTheFileByteForByte) {
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  for (const RefTensor& r : reference_tensors()) {
    T t(tensor_of(r.bytes.data(), r.bytes.size(), r.shape, r.dtype));
    DT_ASSERT_OK(dt_state_dict_set(sd, r.name.c_str(), t));
  }
  std::string file = path("ours.safetensors");
  DT_ASSERT_OK(dt_safetensors_save(sd, file.c_str()));
  EXPECT_TRUE(read_file(file) == read_file(DT_TEST_DATA_DIR "/reference/safetensors/reference.safetensors"));
  // The script's independent reader accepts it too, where Python with torch is there.
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3 for the Python cross-check";
  std::string cmd = "/usr/bin/python3 " DT_TEST_DATA_DIR "/reference/gen_safetensors.py --check '" + file + "'";
  int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) GTEST_SKIP() << "/usr/bin/python3 has no torch for the Python cross-check";
  EXPECT_EQ(rc, 0) << cmd;
}

// ------------------------------------------------------------------ malformed files

// Loads `file` and expects DT_ERR_FORMAT (or `code`) with a message naming the file and
// containing `what`; nothing may be created and *out must be untouched.
void expect_bad(const std::string& file, const std::string& what, dt_status code = DT_ERR_FORMAT) {
  size_t live = dt_live_handle_count();
  dt_state_dict* out = reinterpret_cast<dt_state_dict*>(uintptr_t{0xABAB});
  dt_status s = dt_safetensors_load(file.c_str(), cpu(), &out);
  std::string msg = dt_last_error_message();
  EXPECT_EQ(s, code) << dt_status_string(s) << ": " << msg;
  EXPECT_NE(msg.find(file), std::string::npos) << "the message should name the file: " << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << "the message should say \"" << what << "\": " << msg;
  EXPECT_EQ(out, reinterpret_cast<dt_state_dict*>(uintptr_t{0xABAB}));
  EXPECT_EQ(dt_live_handle_count(), live);
}

const Bytes k24(24, 0);  // the bytes of an F32 [2, 3]

TEST_F(Safetensors, TruncatedFile) {
  write_file(path("f"), Bytes{1, 0, 0, 0, 0});
  expect_bad(path("f"), "truncated");
  write_file(path("g"), Bytes{});
  expect_bad(path("g"), "truncated");
}

TEST_F(Safetensors, HeaderLengthBeyondTheFile) {
  write_file(path("f"), st_file("{}      ", {}, 4096));
  expect_bad(path("f"), "beyond the end of the file");
}

TEST_F(Safetensors, HeaderLengthOverTheBound) {
  write_file(path("f"), st_file("{}      ", {}, 100000001));
  expect_bad(path("f"), "exceeds the limit of 100000000");
  write_file(path("g"), st_file("{}      ", {}, UINT64_MAX - 1));
  expect_bad(path("g"), "exceeds the limit");
}

TEST_F(Safetensors, HeaderIsNotJson) {
  write_file(path("f"), st_file(R"({"w": {"dtype": "F32",)", {}));
  expect_bad(path("f"), "not valid JSON");
  write_file(path("g"), st_file("{\"w\xff\": 1}", {}));  // not UTF-8
  expect_bad(path("g"), "not valid JSON");
  write_file(path("h"), st_file("[1, 2]", {}));
  expect_bad(path("h"), "not a JSON object");
  write_file(path("i"), st_file(R"({"a": {"b": [[1]]}})", {}));
  expect_bad(path("i"), "nested deeper");
}

// The format: the header begins with '{' and is padded with spaces only.
TEST_F(Safetensors, HeaderBeginsWithABraceAndIsPaddedWithSpaces) {
  write_file(path("bom"), st_file("\xEF\xBB\xBF{}     ", {}));
  expect_bad(path("bom"), "must begin with '{'");
  write_file(path("lead"), st_file(" {}     ", {}));
  expect_bad(path("lead"), "must begin with '{'");
  write_file(path("nul"), st_file(std::string("{}\0\0\0\0\0\0", 8), {}));
  expect_bad(path("nul"), "padded with spaces only");
  write_file(path("tab"), st_file("{}\t     ", {}));
  expect_bad(path("tab"), "padded with spaces only");
  write_file(path("ok"), st_file("{ }     ", {}));  // whitespace inside the object is JSON's
  SD sd;
  DT_ASSERT_OK(dt_safetensors_load(path("ok").c_str(), cpu(), sd.out()));
}

// A message that quotes a malformed file's bytes stays UTF-8: they become \xNN.
TEST_F(Safetensors, ErrorMessagesAreUtf8EvenWhenTheFileIsNot) {
  write_file(path("f"), st_file("{\"a\xff\": 1}   ", {}));
  expect_bad(path("f"), "not valid JSON");
  const std::string msg = dt_last_error_message();
  for (unsigned char c : msg) EXPECT_LT(c, 0x80) << "a non-ASCII byte in: " << msg;
  EXPECT_NE(msg.find("\\xFF"), std::string::npos) << msg;
}

// load_state_dict converts any dtype, as PyTorch's copy_ does: int16, uint8 and bool
// entries load into a float32 Linear (they were refused while int32 and int64 loaded).
TEST_F(Safetensors, ModuleLoadConvertsEveryDtype) {
  M lin;
  DT_ASSERT_OK(dt_linear_new(2, 1, 1, DT_FLOAT32, cpu(), lin.out()));
  const int16_t w16[2] = {3, -4};
  const uint8_t b8[1] = {7};
  const uint8_t wbool[2] = {1, 0};
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  T tw(tensor_of(w16, sizeof w16, {1, 2}, DT_INT16)), tb(tensor_of(b8, sizeof b8, {1}, DT_UINT8));
  DT_ASSERT_OK(dt_state_dict_set(sd, "weight", tw));
  DT_ASSERT_OK(dt_state_dict_set(sd, "bias", tb));
  DT_ASSERT_OK(dt_module_load_state_dict(lin, sd));
  T w, b;
  DT_ASSERT_OK(dt_module_parameter(lin, 0, nullptr, 0, nullptr, w.out()));
  DT_ASSERT_OK(dt_module_parameter(lin, 1, nullptr, 0, nullptr, b.out()));
  EXPECT_EQ(values<float>(w), (std::vector<float>{3, -4}));
  EXPECT_EQ(values<float>(b), std::vector<float>{7});
  T twb(tensor_of(wbool, sizeof wbool, {1, 2}, DT_BOOL));
  DT_ASSERT_OK(dt_state_dict_set(sd, "weight", twb));
  DT_ASSERT_OK(dt_module_load_state_dict(lin, sd));
  EXPECT_EQ(values<float>(w), (std::vector<float>{1, 0}));
}

TEST_F(Safetensors, UnknownDtype) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F33","shape":[2,3],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "unknown dtype \"F33\"");
}

TEST_F(Safetensors, ByteCountDoesNotMatchShape) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "hold 24 bytes but shape [2, 2] of F32 needs 16");
}

TEST_F(Safetensors, OffsetsOverlap) {
  write_file(path("f"), st_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                                R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", k24));
  expect_bad(path("f"), "\"b\" (data_offsets [8, 24]) overlaps tensor \"a\"");
}

TEST_F(Safetensors, HoleBetweenTensors) {
  write_file(path("f"), st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})", k24));
  expect_bad(path("f"), "bytes [8, 16) of the data buffer belong to no tensor");
}

TEST_F(Safetensors, BytesAfterTheLastTensor) {
  write_file(path("f"), st_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", k24));
  expect_bad(path("f"), "hole at the end");
}

TEST_F(Safetensors, OffsetsPastTheEnd) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[2,4],"data_offsets":[0,32]}})", k24));
  expect_bad(path("f"), "past the end of the 24-byte data buffer");
}

TEST_F(Safetensors, OffsetsBeginAfterEnd) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", k24));
  expect_bad(path("f"), "begin after they end");
  write_file(path("g"), st_file(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0]}})", k24));
  expect_bad(path("g"), "are not two non-negative integers");
}

TEST_F(Safetensors, DuplicateKey) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]},)"
                                R"("w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "duplicate key \"w\"");
  write_file(path("g"), st_file(R"({"w":{"dtype":"F32","dtype":"F32","shape":[6],"data_offsets":[0,24]}})", k24));
  expect_bad(path("g"), "duplicate key \"dtype\"");
}

TEST_F(Safetensors, NegativeDimension) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[-2,-3],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "negative dimension -2");
  write_file(path("g"), st_file(R"({"w":{"dtype":"F32","shape":[2.0,3],"data_offsets":[0,24]}})", k24));
  expect_bad(path("g"), "not a list of non-negative integers");
}

TEST_F(Safetensors, ElementCountOverflow) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "overflows");
  // numel fits, numel * 4 bytes does not
  write_file(path("g"), st_file(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,24]}})", k24));
  expect_bad(path("g"), "overflows");
  write_file(path("h"), st_file(R"({"w":{"dtype":"F32","shape":[0,18446744073709551615],"data_offsets":[0,0]}})", {}));
  expect_bad(path("h"), "beyond the largest int64");
}

TEST_F(Safetensors, EntryFields) {
  write_file(path("f"), st_file(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24],"extra":1}})", k24));
  expect_bad(path("f"), "unexpected field \"extra\"");
  write_file(path("g"), st_file(R"({"w":{"dtype":"F32","data_offsets":[0,24]}})", k24));
  expect_bad(path("g"), "\"shape\" is missing");
  write_file(path("h"), st_file(R"({"w":[1,2]})", {}));
  expect_bad(path("h"), "not an object");
  write_file(path("i"), st_file(R"({"w":{"dtype":7,"shape":[6],"data_offsets":[0,24]}})", k24));
  expect_bad(path("i"), "dtype is not a string");
}

TEST_F(Safetensors, Metadata) {
  // A metadata object of strings is accepted and ignored.
  write_file(path("ok"), st_file(R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", k24));
  SD sd;
  DT_ASSERT_OK(dt_safetensors_load(path("ok").c_str(), cpu(), sd.out()));
  EXPECT_EQ(names(sd), std::vector<std::string>{"w"});
  write_file(path("f"), st_file(R"({"__metadata__":{"n":1}})", {}));
  expect_bad(path("f"), "__metadata__ is not an object of strings");
}

TEST_F(Safetensors, BoolBytesMustBeZeroOrOne) {
  write_file(path("f"), st_file(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", Bytes{1, 2, 0}));
  expect_bad(path("f"), "holds the byte 2");
  EXPECT_FALSE(mapped(path("f"))) << "a failed load left the file mapped";
}

TEST_F(Safetensors, ValidButUnsupported) {
  write_file(path("f"), st_file(R"({"u":{"dtype":"U32","shape":[6],"data_offsets":[0,24]}})", k24));
  expect_bad(path("f"), "U32", DT_ERR_NOT_SUPPORTED);
  std::string shape17 = "[1";
  for (int i = 0; i < 16; ++i) shape17 += ",1";
  write_file(path("g"), st_file(R"({"x":{"dtype":"U8","shape":)" + shape17 + R"(],"data_offsets":[0,1]}})", Bytes{5}));
  expect_bad(path("g"), "17 dimensions", DT_ERR_NOT_SUPPORTED);
}

TEST_F(Safetensors, IoErrors) {
  expect_bad(path("does-not-exist"), "No such file", DT_ERR_IO);
  expect_bad(dir_, "not a regular file", DT_ERR_IO);
}

TEST_F(Safetensors, AFifoIsRefusedWithoutBlocking) {
  // Issue 16.4: open() of a FIFO for reading waited for a writer, forever. The load
  // (and dt_module_load) must see the file type first and fail with DT_ERR_IO.
  const std::string fifo = path("pipe.safetensors");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto load = std::async(std::launch::async, [&] {
    expect_bad(fifo, "not a regular file (a FIFO)", DT_ERR_IO);
    M lin;
    EXPECT_EQ(dt_linear_new(2, 2, 1, DT_FLOAT32, cpu(), lin.out()), DT_OK);
    EXPECT_EQ(dt_module_load(lin, fifo.c_str()), DT_ERR_IO) << dt_last_error_message();
  });
  if (load.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "loading a FIFO blocked";
    // Unblock the readers: a writer that opens and closes the FIFO ends a blocked open().
    while (load.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
      int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) close(fd);
    }
  }
  load.get();
}

TEST_F(Safetensors, ArgumentErrors) {
  dt_state_dict* out = nullptr;
  DT_EXPECT_STATUS(dt_safetensors_load(nullptr, cpu(), &out), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_safetensors_load("", cpu(), &out), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_safetensors_load(path("x").c_str(), dt_device{DT_DEVICE_CPU, 7}, &out), DT_ERR_INVALID_DEVICE);
  SD sd;
  DT_ASSERT_OK(dt_state_dict_new(sd.out()));
  DT_EXPECT_STATUS(dt_safetensors_save(sd, ""), DT_ERR_INVALID_ARGUMENT);
  DT_EXPECT_STATUS(dt_safetensors_save(nullptr, path("x").c_str()), DT_ERR_INVALID_ARGUMENT);
}

}  // namespace
