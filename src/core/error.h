// The one exception type of the internals. Every C entry point catches it (and every
// other exception) and turns it into a status code plus the thread's error message.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

#include "devtensor.h"

namespace dt {

class Error : public std::exception {
 public:
  Error(dt_status code, std::string message) : code_(code), message_(std::move(message)) {}
  dt_status code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  dt_status code_;
  std::string message_;
};

[[noreturn]] void fail(dt_status code, const std::string& message);

// Concatenates any streamable values into a string: cat("shape ", 3, " bad").
template <typename... Ts>
std::string cat(const Ts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}
}  // namespace dt
