// StateDict: an ordered map from UTF-8 names to tensors (a PyTorch state_dict). Names are
// unique and keep their insertion order; setting an existing name replaces its tensor in
// place. The tensors are shared, not copied. A mutex guards the entries, so concurrent
// calls on one state dict never corrupt it.
#pragma once
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace dt::io {

class StateDict {
 public:
  using Entry = std::pair<std::string, Tensor>;

  size_t size() const;
  // The i-th name / tensor; INVALID_ARGUMENT when i is out of range (`fn` names the caller).
  std::string name(size_t i, const char* fn) const;
  Tensor at(size_t i, const char* fn) const;
  // The tensor named `name`, or an undefined Tensor.
  Tensor find(const std::string& name) const;
  // Adds name -> t at the end, or replaces the tensor of an existing name in place.
  void set(const std::string& name, Tensor t);
  // A snapshot of every entry in order.
  std::vector<Entry> entries() const;

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace dt::io
