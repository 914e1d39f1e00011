#include "dist/store.h"

#include <algorithm>
#include <thread>

#include "core/error.h"

namespace dt::dist {

namespace {

// Polls until every key is set or the deadline passes; returns the keys still missing.
template <typename Present>
std::vector<std::string> poll_keys(const std::vector<std::string>& keys, std::chrono::milliseconds timeout,
                                   Present present) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  std::vector<std::string> missing = keys;
  for (;;) {
    missing.erase(std::remove_if(missing.begin(), missing.end(), present), missing.end());
    if (missing.empty() || std::chrono::steady_clock::now() >= deadline) return missing;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "\"" : ", \"") + k + "\"";
  return s;
}

}  // namespace

void KeyValueStore::wait(const std::vector<std::string>& keys, const ms& timeout) {
  std::vector<char> ignored;
  auto missing = poll_keys(keys, timeout, [&](const std::string& k) { return try_get(k, &ignored); });
  if (!missing.empty())
    fail(DT_ERR_DISTRIBUTED, cat("timed out after ", timeout.count(), " ms waiting in the store ", where(),
                                 " for ", join_keys(missing)));
}

std::vector<char> KeyValueStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::vector<char> value;
  if (!try_get(key, &value)) fail(DT_ERR_INTERNAL, cat("store ", where(), ": key \"", key, "\" vanished"));
  return value;
}

void PrefixedStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(prefix_ + k);
  store_.wait(full, timeout);
}

}  // namespace dt::dist
