// The key-value store of env:// and tcp:// rendezvous: rank 0 serves it on
// MASTER_ADDR:MASTER_PORT from a thread of its own; every rank (rank 0 too) is a client
// over one TCP connection. The protocol is request/reply, one request at a time:
//   request  [u8 op][u32 key length][key][u32 value length][value]   (little endian)
//   reply    [u8 found][u32 value length][value]
// ops: HELLO (key: the client's rank), SET, GET (never blocks; clients poll), BYE (the
// client leaves cleanly), EXITED (value of the reply: the ranks whose connection closed
// without BYE, "1,3"). The server keeps every key for its life; a few hundred bytes per
// rank per process group. When rank 0 leaves, its server keeps serving for up to 3 s
// (or the timeout, if shorter) while other ranks are still connected, so that a rank
// whose collective failed can still learn which rank exited. IPv4.
#pragma once
#include <memory>
#include <mutex>
#include <string>

#include "dist/store.h"

namespace dt::dist {

class TcpStoreServer;

class TcpStore final : public KeyValueStore {
 public:
  // Rank 0 (is_server) listens on port (all IPv4 addresses); every rank then connects to
  // host:port, retrying until the timeout (the server may start later).
  TcpStore(const std::string& host, int port, int rank, bool is_server, ms timeout);
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  bool try_get(const std::string& key, std::vector<char>* value) override;
  std::vector<int> exited_ranks() override;
  std::string where() const override;

 private:
  // One request and its reply; throws DT_ERR_DISTRIBUTED when the server is gone.
  bool request(uint8_t op, const std::string& key, const std::vector<char>& value, std::vector<char>* reply);

  std::string host_;
  int port_;
  int rank_;
  std::unique_ptr<TcpStoreServer> server_;
  std::mutex mu_;
  int fd_ = -1;
};

}  // namespace dt::dist
