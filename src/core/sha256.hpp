// SHA-256 (OpenSSL's) of bytes, as 64 lowercase hex characters: the one digest Sluice uses (run SQL, seed
// files, macro fingerprints, DAG identities, the artifact index's file fingerprints).
// Thread-safety: Sha256Hex is pure; a Sha256Hasher is used by one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace sluice {

std::string Sha256Hex(std::string_view bytes);

// The digest of bytes that arrive in pieces: Add them in order; Hex() gives what Sha256Hex of the whole gives.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Add(std::string_view piece);
  // The digest of everything added; the hasher takes no more pieces afterwards.
  std::string Hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace sluice
