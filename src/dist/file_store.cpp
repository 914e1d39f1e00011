#include "dist/file_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/error.h"

namespace dt::dist {

namespace {

const char kUsersKey[] = "devtensor/users";
const char kProcessPrefix[] = "devtensor/process/";

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

// Every record of the file, the last value of each key.
std::map<std::string, std::vector<char>> read_records(int fd, const std::string& path) {
  std::vector<char> bytes;
  char buf[8192];
  if (::lseek(fd, 0, SEEK_SET) < 0) fail(DT_ERR_IO, cat("store file ", path, ": ", std::strerror(errno)));
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(DT_ERR_IO, cat("store file ", path, ": ", std::strerror(errno)));
    if (r == 0) break;
    bytes.insert(bytes.end(), buf, buf + r);
  }
  std::map<std::string, std::vector<char>> records;
  size_t pos = 0;
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  while (pos + 4 <= bytes.size()) {
    uint32_t klen = u32(pos);
    if (pos + 8 + klen > bytes.size()) break;
    uint32_t vlen = u32(pos + 4 + klen);
    if (pos + 8 + klen + vlen > bytes.size()) break;
    std::string key(bytes.data() + pos + 4, klen);
    records[key].assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos + 8 + klen),
                        bytes.begin() + static_cast<std::ptrdiff_t>(pos + 8 + klen + vlen));
    pos += 8 + klen + vlen;
  }
  if (pos != bytes.size())
    fail(DT_ERR_FORMAT, cat("store file ", path, " is not a devtensor store (or is damaged); delete it and retry"));
  return records;
}

void append_record(int fd, const std::string& path, const std::string& key, const std::vector<char>& value) {
  std::vector<char> rec(8 + key.size() + value.size());
  uint32_t klen = static_cast<uint32_t>(key.size()), vlen = static_cast<uint32_t>(value.size());
  std::memcpy(rec.data(), &klen, 4);
  std::memcpy(rec.data() + 4, key.data(), key.size());
  std::memcpy(rec.data() + 4 + key.size(), &vlen, 4);
  if (!value.empty()) std::memcpy(rec.data() + 8 + key.size(), value.data(), value.size());
  if (::lseek(fd, 0, SEEK_END) < 0) fail(DT_ERR_IO, cat("store file ", path, ": ", std::strerror(errno)));
  const char* p = rec.data();
  size_t n = rec.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail(DT_ERR_IO, cat("store file ", path, ": ", std::strerror(errno)));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

std::vector<char> text(const std::string& s) { return {s.begin(), s.end()}; }

}  // namespace

template <typename F>
auto FileStore::locked(F&& f) {
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) fail(DT_ERR_IO, cat("store file ", path_, ": flock: ", std::strerror(errno)));
  }
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN); }
  } unlock{fd_};
  return f();
}

FileStore::FileStore(std::string path, int rank, ms timeout) : KeyValueStore(timeout), path_(std::move(path)), rank_(rank) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(DT_ERR_IO, cat("cannot open the store file ", path_, ": ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(DT_ERR_IO, cat("the store file ", path_, " is not a regular file"));
  }
  try {
    locked([&] {
      auto records = read_records(fd_, path_);
      auto it = records.find(kUsersKey);
      long users = it == records.end() ? 0 : std::atol(std::string(it->second.begin(), it->second.end()).c_str());
      append_record(fd_, path_, kUsersKey, text(std::to_string(users + 1)));
      append_record(fd_, path_, kProcessPrefix + std::to_string(rank_),
                    text(host_name() + " " + std::to_string(::getpid())));
    });
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

FileStore::~FileStore() {
  try {
    locked([&] {
      auto records = read_records(fd_, path_);
      auto it = records.find(kUsersKey);
      long users = it == records.end() ? 1 : std::atol(std::string(it->second.begin(), it->second.end()).c_str());
      if (users <= 1) ::unlink(path_.c_str());
      else append_record(fd_, path_, kUsersKey, text(std::to_string(users - 1)));
    });
  } catch (...) {
    // leaving the file behind is all that can go wrong here
  }
  ::close(fd_);
}

void FileStore::set(const std::string& key, const std::vector<char>& data) {
  locked([&] { append_record(fd_, path_, key, data); });
}

bool FileStore::try_get(const std::string& key, std::vector<char>* value) {
  return locked([&] {
    auto records = read_records(fd_, path_);
    auto it = records.find(key);
    if (it == records.end()) return false;
    *value = std::move(it->second);
    return true;
  });
}

std::vector<int> FileStore::exited_ranks() {
  std::vector<int> ranks;
  try {
    auto records = locked([&] { return read_records(fd_, path_); });
    const std::string me = host_name();
    for (const auto& [key, value] : records) {
      if (key.rfind(kProcessPrefix, 0) != 0) continue;
      std::string v(value.begin(), value.end());
      size_t space = v.rfind(' ');
      if (space == std::string::npos || v.substr(0, space) != me) continue;
      pid_t pid = static_cast<pid_t>(std::atol(v.c_str() + space + 1));
      if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) ranks.push_back(std::atoi(key.c_str() + sizeof kProcessPrefix - 1));
    }
  } catch (const Error&) {
  }
  return ranks;
}

}  // namespace dt::dist
