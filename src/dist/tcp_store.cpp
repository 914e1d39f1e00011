#include "dist/tcp_store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "core/error.h"

namespace dt::dist {

namespace {

enum Op : uint8_t { kHello = 1, kSet = 2, kGet = 3, kBye = 4, kExited = 5 };
// Keys and values are small (addresses, ids); anything larger is not a devtensor client.
constexpr uint32_t kMaxField = 1u << 20;
// How long rank 0 keeps serving, once it leaves, for ranks still connected (see drain).
constexpr int64_t kServerLingerMs = 3000;

void put_u32(std::vector<char>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

// The server: one thread polling the listening socket, its clients and a wake-up pipe.
class TcpStoreServer {
 public:
  explicit TcpStoreServer(int port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) fail(DT_ERR_DISTRIBUTED, cat("store server: socket: ", std::strerror(errno)));
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 128) != 0) {
      int err = errno;
      ::close(listen_fd_);
      fail(DT_ERR_DISTRIBUTED, cat("rank 0 cannot serve the store on port ", port, ": ", std::strerror(err),
                                   err == EADDRINUSE ? " (another program, or another group's store, holds it)" : ""));
    }
    if (::pipe2(wake_, O_CLOEXEC) != 0) {
      ::close(listen_fd_);
      fail(DT_ERR_DISTRIBUTED, cat("store server: pipe: ", std::strerror(errno)));
    }
    thread_ = std::thread([this] { serve(); });
  }

  // Waits until every client has gone (BYE or closed), at most `limit`: the other ranks
  // may still need the store to learn which rank exited (rank 0 often fails, releases and
  // exits a moment before a peer whose collective failed because of that same dead rank
  // asks), and a normal end costs nothing since every rank releases at about once.
  void drain(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (live_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  ~TcpStoreServer() {
    char c = 0;
    (void)!::write(wake_[1], &c, 1);
    thread_.join();
    for (auto& [fd, client] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

 private:
  struct Client {
    std::vector<char> in;
    int rank = -1;
    bool bye = false;
  };

  void serve() {
    for (;;) {
      std::vector<pollfd> fds{{wake_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_[fd];
          live_.fetch_add(1, std::memory_order_release);
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        if (!on_readable(fds[i].fd)) drop(fds[i].fd);
      }
    }
  }

  // Reads what arrived and answers every complete request; false when the client is gone.
  bool on_readable(int fd) {
    Client& c = clients_[fd];
    char buf[4096];
    ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) return r < 0 && errno == EINTR;
    c.in.insert(c.in.end(), buf, buf + r);
    for (;;) {
      if (c.in.size() < 9) return true;
      uint32_t klen = get_u32(c.in.data() + 1);
      if (klen > kMaxField) return false;  // not our protocol
      if (c.in.size() < 5 + static_cast<size_t>(klen) + 4) return true;
      uint32_t vlen = get_u32(c.in.data() + 5 + klen);
      if (vlen > kMaxField) return false;
      size_t total = 9 + static_cast<size_t>(klen) + vlen;
      if (c.in.size() < total) return true;
      uint8_t op = static_cast<uint8_t>(c.in[0]);
      std::string key(c.in.data() + 5, klen);
      std::vector<char> value(c.in.begin() + 9 + klen, c.in.begin() + static_cast<std::ptrdiff_t>(total));
      c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(total));
      std::vector<char> reply{1};
      std::vector<char> payload;
      switch (op) {
        case kHello: c.rank = std::atoi(key.c_str()); break;
        case kSet: data_[key] = std::move(value); break;
        case kGet: {
          auto it = data_.find(key);
          if (it == data_.end()) reply[0] = 0;
          else payload = it->second;
          break;
        }
        case kBye: c.bye = true; break;
        case kExited: {
          std::string list;
          for (int rank : exited_) list += (list.empty() ? "" : ",") + std::to_string(rank);
          payload.assign(list.begin(), list.end());
          break;
        }
        default: return false;  // not our protocol
      }
      put_u32(reply, static_cast<uint32_t>(payload.size()));
      reply.insert(reply.end(), payload.begin(), payload.end());
      if (!write_all(fd, reply.data(), reply.size())) return false;
    }
  }

  void drop(int fd) {
    Client& c = clients_[fd];
    if (c.rank >= 0 && !c.bye) exited_.insert(c.rank);
    ::close(fd);
    clients_.erase(fd);
    live_.fetch_sub(1, std::memory_order_release);
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::map<int, Client> clients_;  // touched by the server thread only
  std::map<std::string, std::vector<char>> data_;
  std::set<int> exited_;
  std::atomic<int> live_{0};  // connected clients (written by the server thread)
};

TcpStore::TcpStore(const std::string& host, int port, int rank, bool is_server, ms timeout)
    : KeyValueStore(timeout), host_(host), port_(port), rank_(rank) {
  if (is_server) server_ = std::make_unique<TcpStoreServer>(port);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) fail(DT_ERR_DISTRIBUTED, cat("cannot resolve the master address \"", host, "\": ", gai_strerror(rc)));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, ::freeaddrinfo);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error;
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail(DT_ERR_DISTRIBUTED, cat("store client: socket: ", std::strerror(errno)));
    if (::connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
      fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline)
      fail(DT_ERR_DISTRIBUTED, cat("rank ", rank, " could not reach rank 0's store at ", where(), " within ",
                                   timeout.count(), " ms (", last_error, "): rank 0 never started it"));
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A server that stops answering fails a request after the timeout instead of hanging.
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  try {
    request(kHello, std::to_string(rank), {}, nullptr);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

TcpStore::~TcpStore() {
  try {
    request(kBye, "", {}, nullptr);
  } catch (...) {
    // the server is gone already: nothing to tell it
  }
  ::close(fd_);
  if (server_) server_->drain(std::min(timeout_, std::chrono::milliseconds(kServerLingerMs)));
  server_.reset();
}

bool TcpStore::request(uint8_t op, const std::string& key, const std::vector<char>& value, std::vector<char>* reply) {
  std::vector<char> msg{static_cast<char>(op)};
  put_u32(msg, static_cast<uint32_t>(key.size()));
  msg.insert(msg.end(), key.begin(), key.end());
  put_u32(msg, static_cast<uint32_t>(value.size()));
  msg.insert(msg.end(), value.begin(), value.end());
  std::lock_guard<std::mutex> lock(mu_);
  char head[5];
  if (!write_all(fd_, msg.data(), msg.size()) || !read_all(fd_, head, sizeof head))
    fail(DT_ERR_DISTRIBUTED, cat("the store at ", where(), " (served by rank 0) is gone: rank 0 exited or is unreachable"));
  std::vector<char> payload(get_u32(head + 1));
  if (!payload.empty() && !read_all(fd_, payload.data(), payload.size()))
    fail(DT_ERR_DISTRIBUTED, cat("the store at ", where(), " (served by rank 0) is gone: rank 0 exited or is unreachable"));
  if (reply) *reply = std::move(payload);
  return head[0] != 0;
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) { request(kSet, key, data, nullptr); }

bool TcpStore::try_get(const std::string& key, std::vector<char>* value) { return request(kGet, key, {}, value); }

std::vector<int> TcpStore::exited_ranks() {
  std::vector<char> list;
  try {
    request(kExited, "", {}, &list);
  } catch (const Error&) {
    return {0};  // the server's own process is gone
  }
  std::vector<int> ranks;
  std::string s(list.begin(), list.end());
  for (size_t pos = 0; pos < s.size();) {
    size_t comma = s.find(',', pos);
    ranks.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return ranks;
}

std::string TcpStore::where() const { return cat("tcp://", host_, ":", port_); }

}  // namespace dt::dist
