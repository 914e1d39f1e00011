#include "io/module_state.h"

#include <set>
#include <vector>

#include "core/error.h"
#include "core/move_lock.h"
#include "ops/ops.h"

namespace dt::io {

std::unique_ptr<StateDict> state_dict(const nn::Module& m) {
  auto sd = std::make_unique<StateDict>();
  for (const auto& [name, t] : m.parameters()) sd->set(name, t);
  for (const auto& [name, t] : m.buffers()) sd->set(name, t);
  return sd;
}

void load_state_dict(nn::Module& m, const StateDict& sd, dt_status code, const char* fn) {
  nn::Named mine = m.parameters();
  nn::Named bufs = m.buffers();
  mine.insert(mine.end(), bufs.begin(), bufs.end());
  std::set<std::string> expected;
  std::vector<Tensor> sources;
  for (const auto& [name, t] : mine) {
    expected.insert(name);
    Tensor src = sd.find(name);
    if (!src.defined()) fail(code, cat(fn, ": missing key \"", name, "\" (", m.kind(), " has it)"));
    if (src.shape() != t.shape())
      fail(code, cat(fn, ": wrong shape for \"", name, "\": the state has ", dims_str(src.shape()),
                     " but the module (", m.kind(), ") has ", dims_str(t.shape())));
    // Any dtype converts, as a cast would (PyTorch's load_state_dict copies with copy_).
    sources.push_back(src);
  }
  for (const auto& [name, t] : sd.entries())
    if (!expected.count(name)) fail(code, cat(fn, ": unexpected key \"", name, "\" (", m.kind(), " has no such tensor)"));
  // Everything checked: copy (into staging first, so a failure halfway changes nothing).
  std::vector<Tensor> staged;
  std::vector<MovePin> pins;  // the sources may be another module's parameters
  pins.reserve(sources.size());
  for (const Tensor& src : sources) pins.emplace_back(src);
  for (size_t i = 0; i < mine.size(); ++i)
    staged.push_back(ops::to(sources[i], mine[i].second.device(), mine[i].second.dtype(), true));
  for (size_t i = 0; i < mine.size(); ++i) ops::copy_(mine[i].second, staged[i]);
}

}  // namespace dt::io
