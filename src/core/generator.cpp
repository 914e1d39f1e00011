#include "core/generator.h"

#include <map>
#include <mutex>
#include <utility>

namespace dt {
namespace {

struct State {
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;
};

struct Generators {
  std::mutex mu;
  std::map<std::pair<int32_t, int32_t>, State> by_device;
  uint64_t global_seed = kDefaultSeed;  // applies to devices first used after manual_seed_all
};

Generators& gens() {
  static Generators* g = new Generators();
  return *g;
}

}  // namespace

RandomRange reserve_random(Device d, uint64_t blocks) {
  Generators& g = gens();
  std::lock_guard<std::mutex> lock(g.mu);
  auto [it, inserted] = g.by_device.try_emplace({d.type, d.index});
  if (inserted) it->second.seed = g.global_seed;
  RandomRange r{it->second.seed, it->second.offset};
  it->second.offset += blocks;
  return r;
}

void manual_seed_all(uint64_t seed) {
  Generators& g = gens();
  std::lock_guard<std::mutex> lock(g.mu);
  g.global_seed = seed;
  for (auto& [key, st] : g.by_device) st = State{seed, 0};
}

void manual_seed(Device d, uint64_t seed) {
  Generators& g = gens();
  std::lock_guard<std::mutex> lock(g.mu);
  g.by_device[{d.type, d.index}] = State{seed, 0};
}

}  // namespace dt
