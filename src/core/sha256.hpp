// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex characters. Thread-safe.
//
// Implemented here rather than taken from OpenSSL: linking libcrypto cost every sluice process about 5 ms of
// start-up (17,000 relocations), twice when sluice re-executes itself for huge pages, and SHA-256 was all it
// was used for. The digests hashed here are macro fingerprints, run SQL and DAG identities (the compact JSON of
// every node and edge: ~20 MB at 100,000 models).
#pragma once

#include <string>
#include <string_view>

namespace sluice {

std::string Sha256Hex(std::string_view bytes);

// Which code compresses the blocks: kAuto uses the CPU's SHA extensions where it has them (about five times
// faster: a 100,000-model DAG identity hashes ~20 MB), kPortable never does. Both give the same digest.
enum class Sha256Engine { kAuto, kPortable };
std::string Sha256Hex(std::string_view bytes, Sha256Engine engine);

// Whether kAuto uses the SHA extensions on this machine.
bool Sha256HasHardware();

}  // namespace sluice
