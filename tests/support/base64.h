#pragma once
// Decodes the transcript's data_b64 (RFC 4648 base64) for assertions.
#include <string>

namespace ratchet::testing {

/// The bytes `in` encodes; stops at '=' and skips characters outside the alphabet.
inline std::string unbase64(const std::string& in) {
  static const std::string abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    auto i = abc.find(c);
    if (i == std::string::npos) continue;
    buf = (buf << 6) | static_cast<unsigned>(i);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace ratchet::testing
