#include "util/hash.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace ratchet::util {

static std::string to_hex(const unsigned char* md, unsigned len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_DigestInit(sha256) failed");
}

Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::update(std::string_view data) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()) != 1)
    throw std::runtime_error("EVP_DigestUpdate(sha256) failed");
}

std::string Sha256::hex() const {
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  bool ok = copy != nullptr && EVP_MD_CTX_copy_ex(copy, static_cast<EVP_MD_CTX*>(ctx_)) == 1 &&
            EVP_DigestFinal_ex(copy, md, &len) == 1;
  EVP_MD_CTX_free(copy);
  if (!ok) throw std::runtime_error("EVP_DigestFinal(sha256) failed");
  return to_hex(md, len);
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP_Digest(sha256) failed");
  return to_hex(md, len);
}

}  // namespace ratchet::util
