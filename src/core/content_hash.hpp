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

// The hash as 16 lowercase hex digits.
std::string ContentHashHex(uint64_t hash);

}  // namespace sluice
