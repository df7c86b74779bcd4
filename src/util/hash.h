#pragma once
// Content hashes (OpenSSL EVP).
#include <string>
#include <string_view>

namespace ratchet::util {

/// SHA-256 of `data` as 64 lowercase hex digits (the format sha256sum prints).
std::string sha256_hex(std::string_view data);

/// SHA-256 over data fed in pieces (a stream of unknown length). Throws
/// std::runtime_error if OpenSSL fails (out of memory).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  /// The digest of everything fed so far, as sha256_hex() prints it; more may
  /// be fed afterwards.
  std::string hex() const;

 private:
  void* ctx_;  ///< EVP_MD_CTX
};

}  // namespace ratchet::util
