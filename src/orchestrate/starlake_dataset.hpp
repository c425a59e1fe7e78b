// The Starlake dataset naming convention (reference §7): how a sink such as `starbake.orders` becomes the
// dataset URI `starbake_orders` that load jobs materialize and sensors watch, and how task ids are made safe.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace sluice::orchestrate {

// Starlake's `sanitize_id`: `$` becomes `S`; every other character outside [A-Za-z0-9_-] becomes one `_`.
// Characters are Unicode code points of the UTF-8 text, so `é` (two bytes) becomes a single `_`; a byte that
// does not start a well-formed UTF-8 sequence also becomes one `_`. Case is kept.
std::string SanitizeId(std::string_view id);

// A dataset's URI: SanitizeId(sink) in ASCII lower case (`Starbake.Orders` → `starbake_orders`).
std::string DatasetUri(std::string_view sink);

}  // namespace sluice::orchestrate
