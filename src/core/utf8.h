// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing above
// U+10FFFF): checking names, and keeping the library's messages UTF-8.
#pragma once
#include <cstddef>
#include <string>

namespace dt {

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at p, of which n
// bytes are available; 0 when none starts there.
size_t utf8_sequence_length(const unsigned char* p, size_t n);

// True when s is well-formed UTF-8.
bool valid_utf8(const std::string& s);

// s with every byte that is not part of a well-formed sequence written as the text \xNN.
std::string escape_invalid_utf8(const std::string& s);

}  // namespace dt
