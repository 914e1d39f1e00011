// The small key-value stores a process group meets its peers through (rendezvous): each
// rank publishes its Gloo address and its identity, and reads the others'. Gloo's
// rendezvous code uses them through gloo::rendezvous::Store; devtensor adds what it needs
// to name a failed peer (exited_ranks). Transport and collectives are Gloo's; these only
// carry a few hundred bytes per rank at start-up.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gloo/rendezvous/store.h>

namespace dt::dist {

class KeyValueStore : public gloo::rendezvous::Store {
 public:
  using ms = std::chrono::milliseconds;
  // Gloo calls wait(keys) without a timeout: the store's own timeout applies.
  explicit KeyValueStore(ms timeout) : timeout_(timeout) {}
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const ms& timeout) override;
  // get() waits for the key first, as Gloo expects.
  std::vector<char> get(const std::string& key) override;

  // Non-blocking: the value of key, if set.
  virtual bool try_get(const std::string& key, std::vector<char>* value) = 0;
  // The ranks known to have exited without leaving (their process is gone), for error
  // messages. Best effort: empty when nothing is known.
  virtual std::vector<int> exited_ranks() = 0;
  // A description for messages ("tcp://10.0.0.1:29500", "file:///tmp/x").
  virtual std::string where() const = 0;
  ms timeout() const { return timeout_; }

 protected:
  ms timeout_;
};

// Keys of one process group inside a shared store: "<prefix>/<key>".
class PrefixedStore : public gloo::rendezvous::Store {
 public:
  PrefixedStore(std::string prefix, KeyValueStore& store) : prefix_(std::move(prefix)), store_(store) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_.set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(prefix_ + key); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, store_.timeout()); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::string prefix_;
  KeyValueStore& store_;
};

}  // namespace dt::dist
