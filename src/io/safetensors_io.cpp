#include "io/safetensors_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#include "core/graph.h"
#include "core/error.h"
#include "core/move_lock.h"
#include "core/fault_injection.h"
#include "io/safetensors_format.h"
#include "ops/ops.h"

namespace dt::io {

namespace {

void check_little_endian(const char* fn) {
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  fail(DT_ERR_NOT_SUPPORTED, cat(fn, ": safetensors data is little-endian and this host is big-endian"));
#endif
}

[[noreturn]] void io_error(const char* fn, const char* what, const std::string& path, int err) {
  char buf[256];
  const char* reason = strerror_r(err, buf, sizeof buf);  // GNU: returns the message
  fail(DT_ERR_IO, cat(fn, ": cannot ", what, " '", path, "': ", reason));
}

struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void write_all(int fd, const char* p, size_t n, const char* fn, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n < (size_t{1} << 30) ? n : (size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      io_error(fn, "write", path, errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void read_all(int fd, char* p, size_t n, uint64_t offset, const char* fn, const std::string& path) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n < (size_t{1} << 30) ? n : (size_t{1} << 30), static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      io_error(fn, "read", path, errno);
    }
    if (r == 0) fail(DT_ERR_IO, cat(fn, ": cannot read '", path, "': the file ended early (changed while read?)"));
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

// The process umask, read without changing it (umask(2) can only set it, and setting it
// back would race with other threads creating files).
mode_t process_umask() {
  mode_t mask = 022;
  if (FILE* f = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned m;
      if (std::sscanf(line, "Umask: %o", &m) == 1) {
        mask = static_cast<mode_t>(m);
        break;
      }
    }
    std::fclose(f);
  }
  return mask;
}

// A temporary file beside the destination, renamed onto it by commit(); removed if the
// save fails before that.
class TempFile {
 public:
  TempFile(const std::string& path, const char* fn) : path_(path), fn_(fn) {
    std::vector<char> name(path.begin(), path.end());
    const char suffix[] = ".tmp-XXXXXX";
    name.insert(name.end(), suffix, suffix + sizeof suffix);  // with the NUL
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0) io_error(fn, "create a temporary file to write", path, errno);
    tmp_.assign(name.data());
    // mkostemp makes the file 0600; give it the mode a plain create would.
    ::fchmod(fd_, 0666 & ~process_umask());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  int fd() const { return fd_; }
  void commit() {
    if (::fsync(fd_) != 0) io_error(fn_, "write", path_, errno);
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) io_error(fn_, "write", path_, errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) io_error(fn_, "replace", path_, errno);
    committed_ = true;
  }

 private:
  std::string path_, tmp_;
  const char* fn_;
  int fd_ = -1;
  bool committed_ = false;
};

// A private (copy-on-write) mapping of a whole file, shared by the tensors loaded from it:
// each tensor's storage holds one reference, and the last one unmaps. The pages are
// writable, so an in-place op on a loaded tensor changes that tensor, never the file.
class Mapping : public RefCounted {
 public:
  static Ref<Mapping> create(int fd, size_t len, const char* fn, const std::string& path) {
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) io_error(fn, "map", path, errno);
    Mapping* m = fault::allocation_fails() ? nullptr : new (std::nothrow) Mapping(p, len);
    if (!m) {
      ::munmap(p, len);
      fail(DT_ERR_OUT_OF_MEMORY, "out of memory allocating a file mapping record");
    }
    return Ref<Mapping>::adopt(m);
  }
  static void destroy(Mapping* m) {
    ::munmap(m->base_, m->len_);
    delete m;
  }
  char* base() const { return static_cast<char*>(base_); }

 private:
  Mapping(void* base, size_t len) : base_(base), len_(len) {}
  ~Mapping() = default;
  void* base_;
  size_t len_;
};

void drop_mapping(void*, void* mapping) {
  Mapping* m = static_cast<Mapping*>(mapping);
  if (m->unref()) Mapping::destroy(m);
}

// A storage over n bytes at p inside the mapping, keeping the mapping alive.
Ref<Storage> borrow_mapping(const Ref<Mapping>& map, char* p, size_t n, Device device) {
  map->ref();
  try {
    return Storage::borrow(device, p, n, drop_mapping, map.get());
  } catch (...) {
    drop_mapping(nullptr, map.get());
    throw;
  }
}

Tensor make_tensor(const TensorRecord& r, const Ref<Mapping>& map, uint64_t data_start, Device device) {
  Dims shape;
  for (uint64_t d : r.shape) shape.push(static_cast<int64_t>(d));
  DType dtype = r.dtype->dtype;
  size_t nbytes = static_cast<size_t>(r.end - r.begin);
  if (nbytes == 0) return ops::empty(shape, dtype, device);
  uint64_t file_offset = data_start + r.begin;
  char* p = map->base() + file_offset;
  // The mapping starts on a page boundary, so an element is aligned exactly when its file
  // offset is a multiple of the element size. Then a CPU tensor borrows the mapping (no
  // copy). A misaligned tensor (the format does not pad: a 3-byte U8 tensor before an F32
  // one misaligns it) cannot be read through a typed pointer, so it is copied, as is every
  // tensor for another device.
  if (device.is_cpu() && file_offset % dtype_size(dtype) == 0) {
    Ref<Storage> storage = borrow_mapping(map, p, nbytes, device);
    return Tensor(Ref<TensorImpl>::adopt(TensorImpl::create(std::move(storage), dtype, shape, contiguous_strides(shape), 0)));
  }
  return ops::from_host(p, nbytes, shape, dtype, device);
}

}  // namespace

void save_safetensors(const StateDict& sd, const std::string& path, const char* fn) {
  check_little_endian(fn);
  std::vector<StateDict::Entry> entries = sd.entries();
  // Entries may be a module's parameters, whose module another thread may be moving.
  std::vector<MovePin> pins;
  pins.reserve(entries.size());
  for (const auto& entry : entries) pins.emplace_back(entry.second);
  std::vector<TensorRecord> records;
  records.reserve(entries.size());
  uint64_t at = 0;
  for (const auto& [name, t] : entries) {
    if (name == "__metadata__")
      fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": the name \"__metadata__\" is reserved by the safetensors format"));
    TensorRecord r;
    r.name = name;
    r.dtype = &safetensors_dtype_of(t.dtype());
    for (int i = 0; i < t.ndim(); ++i) r.shape.push_back(static_cast<uint64_t>(t.size(i)));
    r.begin = at;
    r.end = at + t.nbytes();
    at = r.end;
    records.push_back(std::move(r));
  }
  for (const auto& entry : entries)
    refuse_while_capturing(entry.second.device(), fn, "its values are computed only when the graph is replayed");
  std::string header = format_header(records);
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xff);

  TempFile file(path, fn);
  write_all(file.fd(), len, sizeof len, fn, path);
  write_all(file.fd(), header.data(), header.size(), fn, path);
  const Device host{DT_DEVICE_CPU, 0};
  for (const auto& entry : entries) {
    const Tensor& t = entry.second;
    if (t.numel() == 0) continue;
    // Contiguous row-major bytes on the host (a copy only when t is elsewhere or strided).
    Tensor h = ops::contiguous(t.device().is_cpu() ? t : ops::to(t, host, t.dtype(), false));
    write_all(file.fd(), h.data(), h.nbytes(), fn, path);
  }
  file.commit();
}

namespace {
const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}
}  // namespace

std::unique_ptr<StateDict> load_safetensors(const std::string& path, Device device, const char* fn) {
  check_little_endian(fn);
  const std::string where = cat(fn, ": '", path, "'");
  Fd f;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever;
  // the file type is checked before anything is read (and regular files ignore the flag).
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) io_error(fn, "open", path, errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) io_error(fn, "stat", path, errno);
  if (!S_ISREG(st.st_mode))
    fail(DT_ERR_IO, cat(fn, ": cannot read '", path, "': not a regular file (", file_type_name(st.st_mode), ")"));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8)
    fail(DT_ERR_FORMAT, cat(where, ": the file is truncated: ", size, " bytes, fewer than the 8 of the header length"));
  unsigned char len[8];
  read_all(f.fd, reinterpret_cast<char*>(len), 8, 0, fn, path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len[i];
  if (n > kMaxHeaderBytes)
    fail(DT_ERR_FORMAT, cat(where, ": the header length ", n, " exceeds the limit of ", kMaxHeaderBytes, " bytes"));
  if (n > size - 8)
    fail(DT_ERR_FORMAT, cat(where, ": the header length ", n, " is beyond the end of the file (", size - 8,
                            " bytes follow the length)"));
  std::vector<TensorRecord> records;
  const uint64_t data_start = 8 + n;
  {
    std::string header(static_cast<size_t>(n), '\0');
    read_all(f.fd, header.data(), header.size(), 8, fn, path);
    records = parse_header(header.data(), header.size(), size - data_start, where);
  }
  // A valid file may still hold what devtensor cannot represent.
  for (const TensorRecord& r : records) {
    if (!r.dtype->supported)
      fail(DT_ERR_NOT_SUPPORTED, cat(where, ": tensor \"", r.name, "\" has dtype ", r.dtype->code,
                                     ", which devtensor does not support"));
    if (r.shape.size() > static_cast<size_t>(kMaxDims))
      fail(DT_ERR_NOT_SUPPORTED, cat(where, ": tensor \"", r.name, "\" has ", r.shape.size(),
                                     " dimensions; devtensor supports at most ", kMaxDims));
  }
  Ref<Mapping> map;
  if (size > data_start) map = Mapping::create(f.fd, static_cast<size_t>(size), fn, path);
  // A bool byte other than 0 or 1 is no bool: refuse it rather than compute with it.
  for (const TensorRecord& r : records) {
    if (r.dtype->dtype != DType::Bool) continue;
    const unsigned char* p = reinterpret_cast<unsigned char*>(map ? map->base() + data_start : nullptr);
    for (uint64_t i = r.begin; i < r.end; ++i)
      if (p[i] > 1)
        fail(DT_ERR_FORMAT, cat(where, ": tensor \"", r.name, "\" of dtype BOOL holds the byte ",
                                static_cast<unsigned>(p[i]), " (not 0 or 1) at offset ", i));
  }
  auto sd = std::make_unique<StateDict>();
  for (const TensorRecord& r : records) sd->set(r.name, make_tensor(r, map, data_start, device));
  return sd;
}

}  // namespace dt::io
