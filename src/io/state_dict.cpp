#include "io/state_dict.h"

#include "core/error.h"

namespace dt::io {

size_t StateDict::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

namespace {
[[noreturn]] void out_of_range(const char* fn, size_t i, size_t n) {
  fail(DT_ERR_INVALID_ARGUMENT, cat(fn, ": index ", i, " is out of range for a state dict of ", n,
                                    n == 1 ? " entry" : " entries"));
}
}  // namespace

std::string StateDict::name(size_t i, const char* fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (i >= entries_.size()) out_of_range(fn, i, entries_.size());
  return entries_[i].first;
}

Tensor StateDict::at(size_t i, const char* fn) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (i >= entries_.size()) out_of_range(fn, i, entries_.size());
  return entries_[i].second;
}

Tensor StateDict::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(name);
  return it == index_.end() ? Tensor() : entries_[it->second].second;
}

void StateDict::set(const std::string& name, Tensor t) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(name);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(t);
    return;
  }
  // Everything that can throw comes before the index changes; the last step only moves.
  Entry e(name, std::move(t));
  entries_.reserve(entries_.size() + 1);
  index_.emplace(name, entries_.size());
  entries_.push_back(std::move(e));
}

std::vector<StateDict::Entry> StateDict::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

}  // namespace dt::io
