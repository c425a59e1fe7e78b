// SHA-256 (FIPS 180-4) of bytes, as 64 lowercase hex characters. Thread-safe.
//
// Implemented here rather than taken from OpenSSL: linking libcrypto cost every sluice process about 5 ms of
// start-up (17,000 relocations), twice when sluice re-executes itself for huge pages, and SHA-256 was all it
// was used for. The digests hashed here (DAG identities, macro fingerprints, run SQL) are small.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

std::string Sha256Hex(std::string_view bytes);

}  // namespace sluice
