#include "core/content_hash.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace sluice {

namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ULL;

uint64_t RotateLeft(uint64_t value, int bits) { return (value << bits) | (value >> (64 - bits)); }

// Reads 8 bytes as a little-endian word whatever the host order, so hashes agree across machines.
uint64_t ReadWord(const unsigned char* p) {
  uint64_t word = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&word, p, sizeof word);  // one load
  } else {
    for (int i = 7; i >= 0; --i) word = (word << 8) | p[i];
  }
  return word;
}

uint64_t Mix(uint64_t state, uint64_t word) { return RotateLeft(state ^ (word * kPrime2), 31) * kPrime1; }

uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

ContentHasher::ContentHasher() : lanes_{kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1}, pending_{} {}

void ContentHasher::Add(std::string_view piece) {
  const auto* p = reinterpret_cast<const unsigned char*>(piece.data());
  size_t size = piece.size();
  size_ += size;
  // Four independent lanes keep the multiplier pipeline busy on long inputs. They are held in locals while the
  // blocks are mixed: `p` may alias anything, so a member would be stored and reloaded for every word.
  uint64_t lane0 = lanes_[0], lane1 = lanes_[1], lane2 = lanes_[2], lane3 = lanes_[3];
  auto block = [&](const unsigned char* data) {
    lane0 = Mix(lane0, ReadWord(data));
    lane1 = Mix(lane1, ReadWord(data + 8));
    lane2 = Mix(lane2, ReadWord(data + 16));
    lane3 = Mix(lane3, ReadWord(data + 24));
  };
  if (pending_size_ > 0) {
    size_t take = std::min(size, sizeof pending_ - pending_size_);
    std::memcpy(pending_ + pending_size_, p, take);
    pending_size_ += take;
    p += take;
    size -= take;
    if (pending_size_ < sizeof pending_) return;
    block(pending_);
    pending_size_ = 0;
  }
  for (; size >= 32; p += 32, size -= 32) block(p);
  lanes_[0] = lane0;
  lanes_[1] = lane1;
  lanes_[2] = lane2;
  lanes_[3] = lane3;
  std::memcpy(pending_, p, size);
  pending_size_ = size;
}

uint64_t ContentHasher::Finish() const {
  uint64_t h =
      RotateLeft(lanes_[0], 1) + RotateLeft(lanes_[1], 7) + RotateLeft(lanes_[2], 12) + RotateLeft(lanes_[3], 18);
  h ^= static_cast<uint64_t>(size_) * kPrime3;
  const unsigned char* p = pending_;
  size_t i = 0;
  for (; i + 8 <= pending_size_; i += 8) h = Mix(h, ReadWord(p + i));
  uint64_t tail = 0;
  for (size_t k = pending_size_; k > i; --k) tail = (tail << 8) | p[k - 1];
  h = Mix(h, tail ^ (static_cast<uint64_t>(pending_size_ - i) << 56));
  return Avalanche(h);
}

uint64_t ContentHash(std::string_view contents) {
  ContentHasher hasher;
  hasher.Add(contents);
  return hasher.Finish();
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
