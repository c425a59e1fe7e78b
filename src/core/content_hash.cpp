#include "core/content_hash.hpp"


namespace sluice {

namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;

uint64_t RotateLeft(uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }

// Reads 8 bytes as a little-endian word whatever the host order, so hashes agree across machines.
uint64_t ReadWord(const unsigned char* p) {
  uint64_t word = 0;
  for (int i = 7; i >= 0; --i) word = (word << 8) | p[i];
  return word;
}

uint64_t Mix(uint64_t state, uint64_t word) { return RotateLeft(state ^ (word * kPrime2), 31) * kPrime1; }

uint64_t Finish(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

uint64_t ContentHash(std::string_view contents) {
  const auto* p = reinterpret_cast<const unsigned char*>(contents.data());
  size_t size = contents.size();
  // Four independent lanes keep the multiplier pipeline busy on long inputs.
  uint64_t lanes[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    for (int lane = 0; lane < 4; ++lane) lanes[lane] = Mix(lanes[lane], ReadWord(p + i + 8 * lane));
  }
  uint64_t h = RotateLeft(lanes[0], 1) + RotateLeft(lanes[1], 7) + RotateLeft(lanes[2], 12) + RotateLeft(lanes[3], 18);
  h ^= static_cast<uint64_t>(size) * kPrime3;
  for (; i + 8 <= size; i += 8) h = Mix(h, ReadWord(p + i));
  uint64_t tail = 0;
  for (size_t k = size; k > i; --k) tail = (tail << 8) | p[k - 1];
  h = Mix(h, tail ^ (static_cast<uint64_t>(size - i) << 56));
  return Finish(h);
}

std::string ContentHashHex(uint64_t hash) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<size_t>(i)] = kHex[hash & 0xF];
    hash >>= 4;
  }
  return out;
}

}  // namespace sluice
