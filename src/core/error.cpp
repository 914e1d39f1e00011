#include "core/error.h"

namespace dt {

void fail(dt_status code, const std::string& message) { throw Error(code, message); }

}  // namespace dt
