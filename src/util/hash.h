#pragma once
// Content hashes (OpenSSL EVP).
#include <string>
#include <string_view>

namespace ratchet::util {

/// SHA-256 of `data` as 64 lowercase hex digits (the format sha256sum prints).
std::string sha256_hex(std::string_view data);

}  // namespace ratchet::util
