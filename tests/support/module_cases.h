// tests/reference/module_cases.json (gen_module_reference.py), read once per test
// program: the losses, training runs, pointwise losses, clipping, resumed runs and
// recurrent layers of PyTorch that test_modules, test_pointwise_losses,
// test_optim_state and test_recurrent compare with. An empty object when the file is
// missing, so each test's `contains` check names what to regenerate.
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

inline const nlohmann::json& Cases() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(DT_TEST_DATA_DIR) + "/reference/module_cases.json");
    return in ? nlohmann::json::parse(in) : nlohmann::json::object();
  }();
  return j;
}
