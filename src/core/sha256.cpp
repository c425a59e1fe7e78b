#include "core/sha256.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace sluice {

namespace {

std::string HexOf(const unsigned char* digest, unsigned int size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * size, '0');
  for (unsigned int i = 0; i < size; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace

struct Sha256Hasher::Context {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(context); }
};

Sha256Hasher::Sha256Hasher() : context_(std::make_unique<Context>()) {
  if (context_->context == nullptr || EVP_DigestInit_ex(context_->context, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot start a SHA-256 digest");
  }
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Add(std::string_view piece) {
  if (EVP_DigestUpdate(context_->context, piece.data(), piece.size()) != 1) {
    throw std::runtime_error("OpenSSL: SHA-256 update failed");
  }
}

std::string Sha256Hasher::Hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(context_->context, digest, &size) != 1) {
    throw std::runtime_error("OpenSSL: SHA-256 final failed");
  }
  return HexOf(digest, size);
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL: SHA-256 failed");
  }
  return HexOf(digest, size);
}

}  // namespace sluice
