// What a seed's ledger row records as its sql_hash: the sha256 of its file's bytes followed by its declared column
// types, so that every writer (a run, a ClickHouse build) loads a seed again exactly when its file or its columns
// changed since the load its latest ledger row records.
// Errors: core's SLU-IO-* when the file cannot be read.
// Thread-safety: pure function (reads the file).
#pragma once

#include <string>

#include "definitions/definitions.hpp"

namespace sluice {

std::string SeedHash(const std::string& project_root, const SeedCompute& seed);

}  // namespace sluice
