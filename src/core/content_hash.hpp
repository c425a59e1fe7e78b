// A fast 64-bit content fingerprint for change detection in files Sluice owns (compile artifacts): equal
// contents give equal hashes on every machine and build; different contents collide with probability about
// 2^-64. Not cryptographic: never use it where an adversary chooses the contents to fool a check.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

uint64_t ContentHash(std::string_view contents);

// ContentHash of contents that arrive in pieces: Add them in order, then Finish gives the hash the whole would
// have (for a file rendered and hashed piece by piece, never held whole).
class ContentHasher {
 public:
  ContentHasher();
  void Add(std::string_view piece);
  uint64_t Finish() const;
  size_t size() const { return size_; }

 private:
  uint64_t lanes_[4];
  unsigned char pending_[32];  // the bytes of an incomplete 32-byte block
  size_t pending_size_ = 0;
  size_t size_ = 0;
};

// The hash as 16 lowercase hex digits.
std::string ContentHashHex(uint64_t hash);

}  // namespace sluice
