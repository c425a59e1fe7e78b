// What a ClickHouse server can do, probed once when a warehouse opens, and the one error for a missing feature.
//
// Each feature is probed with the cheapest statement that shows it: a SELECT for functions and syntax, and for DDL
// a statement naming a database that does not exist (kProbeDatabase), which a server that knows the syntax parses
// and then refuses with "unknown database" while an older one answers with a syntax error (code 62) — nothing is
// created either way. Unknown functions (46) and types (50) mean "lacks" too.
// Thread-safety: pure functions, except ProbeCapabilities, which sends statements through `http`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.hpp"
#include "warehouse/clickhouse/clickhouse_http.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// A database the probes name and Sluice never creates.
inline constexpr std::string_view kProbeDatabase = "_sluice_capability_probe_absent";

// The server features Capabilities records, for RequireCapability.
enum class ServerFeature {
  kDateTime64,
  kTtl,
  kDoubleColonCast,
  kWindowFunctions,
  kIsNotDistinctFrom,
  kDropSync,
  kAtomicDatabases,
  kCreateOrReplaceView,
  kExchangeTables,
};

// How a feature is written, e.g. "the `::` cast".
std::string FeatureName(ServerFeature feature);
bool HasFeature(const Capabilities& capabilities, ServerFeature feature);

// Returns when the server has `feature`; otherwise throws SLU-CLICKHOUSE-001 located at `where` (a model file and
// line, or no location), naming the server's version, the feature, what needs it (`needed_by`, e.g. "model
// silver.orders") and what to do instead.
void RequireCapability(const Capabilities& capabilities, ServerFeature feature, const SourceLocation& where,
                       std::string_view needed_by);

// Where a ClickHouse SELECT uses a feature of its SQL that `capabilities` lacks: the first `::` cast, window
// (`f(…) OVER (`) or `DateTime64` type, found by the ClickHouse tokenizer (so never in a string or a
// comment), as the feature and its byte offset in `select_sql`; nullopt when it uses none the server lacks, or when
// the text does not tokenize (the server then says what is wrong with it).
struct FeatureUse {
  ServerFeature feature;
  size_t offset = 0;
};
std::optional<FeatureUse> LackingFeatureIn(const Capabilities& capabilities, std::string_view select_sql);

// `SELECT version()` and one probe per flag. Throws nothing: returns the failure of `SELECT version()` (the
// connection or the credentials are wrong) in `failure` and leaves the flags false.
struct CapabilityProbe {
  Capabilities capabilities;
  std::optional<ClickHouseFailure> failure;
};
CapabilityProbe ProbeCapabilities(const ClickHouseHttp& http);

}  // namespace sluice
