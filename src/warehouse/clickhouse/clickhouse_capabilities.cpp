#include "warehouse/clickhouse/clickhouse_capabilities.hpp"

#include <cstdlib>

#include <string>
#include <vector>

#include "core/text.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

// Error codes that mean "this server does not know that": a syntax error, an unknown function, an unknown type.
bool MeansLacks(const ClickHouseFailure& failure) {
  return failure.kind == ClickHouseFailure::Kind::kServer &&
         (failure.code == 62 || failure.code == 46 || failure.code == 50);
}

// How a probe's answer is read.
enum class Judge {
  kSucceeds,  // has the feature when the statement succeeds
  kParses,    // has the feature unless the server does not know the syntax (MeansLacks)
};

struct Probe {
  bool Capabilities::*flag;
  Judge judge;
  std::string sql;
};

std::string Absent(std::string_view name) { return "`" + std::string(kProbeDatabase) + "`." + std::string(name); }

std::string WhatToDo(ServerFeature feature) {
  switch (feature) {
    case ServerFeature::kDateTime64:
      return "use DateTime (whole seconds) on this server, or a ClickHouse server newer than 18.16";
    case ServerFeature::kTtl:
      return "remove the TTL (the model's `ttl`, or [defaults] model_ttl / managed_source_ttl), or use a ClickHouse "
             "server newer than 18.16";
    case ServerFeature::kDoubleColonCast:
      return "write CAST(expr AS Type) instead of expr::Type, or use a ClickHouse server newer than 18.16";
    case ServerFeature::kWindowFunctions:
      return "rewrite without OVER (…) (e.g. with arrays: groupArray / arrayEnumerate), or use a ClickHouse server "
             "newer than 18.16";
    case ServerFeature::kIsNotDistinctFrom:
      return "write (a = b OR (isNull(a) AND isNull(b))) instead, or use a ClickHouse server newer than 18.16";
    case ServerFeature::kDropSync:
    case ServerFeature::kAtomicDatabases:
    case ServerFeature::kCreateOrReplaceView:
    case ServerFeature::kExchangeTables:
      return "Sluice's own writes fall back without it (docs/clickhouse.md); for this use, a ClickHouse server newer "
             "than 18.16 is needed";
  }
  return "";
}

}  // namespace

std::string FeatureName(ServerFeature feature) {
  switch (feature) {
    case ServerFeature::kDateTime64: return "the DateTime64 type";
    case ServerFeature::kTtl: return "TTL clauses";
    case ServerFeature::kDoubleColonCast: return "the `::` cast";
    case ServerFeature::kWindowFunctions: return "window functions (OVER)";
    case ServerFeature::kIsNotDistinctFrom: return "the function isNotDistinctFrom";
    case ServerFeature::kDropSync: return "DROP … SYNC";
    case ServerFeature::kAtomicDatabases: return "Atomic databases";
    case ServerFeature::kCreateOrReplaceView: return "CREATE OR REPLACE VIEW";
    case ServerFeature::kExchangeTables: return "EXCHANGE TABLES";
  }
  return "";
}

bool HasFeature(const Capabilities& capabilities, ServerFeature feature) {
  switch (feature) {
    case ServerFeature::kDateTime64: return capabilities.datetime64;
    case ServerFeature::kTtl: return capabilities.ttl;
    case ServerFeature::kDoubleColonCast: return capabilities.double_colon_cast;
    case ServerFeature::kWindowFunctions: return capabilities.window_functions;
    case ServerFeature::kIsNotDistinctFrom: return capabilities.is_not_distinct_from;
    case ServerFeature::kDropSync: return capabilities.drop_sync;
    case ServerFeature::kAtomicDatabases: return capabilities.atomic_databases;
    case ServerFeature::kCreateOrReplaceView: return capabilities.create_or_replace_view;
    case ServerFeature::kExchangeTables: return capabilities.exchange_tables;
  }
  return false;
}

void RequireCapability(const Capabilities& capabilities, ServerFeature feature, const SourceLocation& where,
                       std::string_view needed_by) {
  if (HasFeature(capabilities, feature)) return;
  std::string version = capabilities.server_version.empty() ? "of unknown version" : capabilities.server_version;
  throw Error(Diagnostic{"SLU-CLICKHOUSE-001",
                         std::string(needed_by) + " uses " + FeatureName(feature) + ", which the ClickHouse server (" +
                             version + ") does not have",
                         where, WhatToDo(feature), {}});
}

std::optional<FeatureUse> LackingFeatureIn(const Capabilities& capabilities, std::string_view select_sql) {
  if (capabilities.double_colon_cast && capabilities.window_functions && capabilities.datetime64) return std::nullopt;
  std::vector<sql::Token> tokens;
  try {
    tokens = sql::TokenizeSignificant(select_sql, sql::Dialect::kClickHouse);
  } catch (const Error&) {
    return std::nullopt;
  }
  auto word = [&](size_t i, std::string_view lower) {
    return i < tokens.size() && tokens[i].kind == sql::TokenKind::kWord && AsciiLower(std::string(tokens[i].text)) == lower;
  };
  for (size_t i = 0; i < tokens.size(); ++i) {
    const sql::Token& token = tokens[i];
    if (!capabilities.double_colon_cast && token.kind == sql::TokenKind::kOperator && token.text == "::") {
      return FeatureUse{ServerFeature::kDoubleColonCast, token.begin};
    }
    // `f(…) OVER (`: a window, not a column or an alias named over.
    if (!capabilities.window_functions && word(i, "over") && i > 0 && tokens[i - 1].text == ")" &&
        i + 1 < tokens.size() && tokens[i + 1].text == "(") {
      return FeatureUse{ServerFeature::kWindowFunctions, token.begin};
    }
    if (!capabilities.datetime64 && word(i, "datetime64")) return FeatureUse{ServerFeature::kDateTime64, token.begin};
  }
  return std::nullopt;
}

CapabilityProbe ProbeCapabilities(const ClickHouseHttp& http) {
  CapabilityProbe probe;
  ClickHouseResponse version = http.Post({"SELECT version()", {}, "", "", {}});
  if (!version.ok) {
    probe.failure = version.failure;
    return probe;
  }
  Capabilities& capabilities = probe.capabilities;
  capabilities.server_version = version.body;
  while (!capabilities.server_version.empty() && capabilities.server_version.back() == '\n') {
    capabilities.server_version.pop_back();
  }
  capabilities.native_date_partitioning = true;  // MergeTree PARTITION BY, every supported version
  capabilities.materialized_views = true;        // CREATE MATERIALIZED VIEW … TO, every supported version
  capabilities.table_engines = true;
  capabilities.replace_view_changes_columns = true;  // where CREATE OR REPLACE VIEW exists at all
  // Not probed (a probe would create objects): read from the version, see Capabilities.
  capabilities.materialized_view_cascade = std::atoi(capabilities.server_version.c_str()) >= 19;
  capabilities.kafka_virtual_columns = capabilities.materialized_view_cascade;
  const Probe probes[] = {
      {&Capabilities::double_colon_cast, Judge::kSucceeds, "SELECT CAST(1 AS Int32)::Int32"},
      {&Capabilities::datetime64, Judge::kSucceeds, "SELECT toDateTime64('2026-01-01 00:00:00', 3, 'UTC')"},
      {&Capabilities::is_not_distinct_from, Judge::kParses, "SELECT isNotDistinctFrom(1, 1)"},
      {&Capabilities::window_functions, Judge::kSucceeds, "SELECT row_number() OVER ()"},
      {&Capabilities::atomic_databases, Judge::kSucceeds,
       "SELECT 1 FROM system.databases WHERE engine = 'Atomic' LIMIT 1"},
      {&Capabilities::ttl, Judge::kParses,
       "CREATE TABLE " + Absent("t") + " (d Date) ENGINE = MergeTree() ORDER BY d TTL d + INTERVAL 1 DAY"},
      {&Capabilities::drop_sync, Judge::kParses, "DROP TABLE IF EXISTS " + Absent("t") + " SYNC"},
      {&Capabilities::create_or_replace_view, Judge::kParses,
       "CREATE OR REPLACE VIEW " + Absent("v") + " AS SELECT 1"},
      {&Capabilities::exchange_tables, Judge::kParses, "EXCHANGE TABLES " + Absent("a") + " AND " + Absent("b")},
  };
  for (const Probe& each : probes) {
    ClickHouseResponse answer = http.Post({each.sql, {}, "", "", {}});
    bool has = each.judge == Judge::kSucceeds
                   ? answer.ok
                   : answer.ok || (answer.failure.kind == ClickHouseFailure::Kind::kServer && !MeansLacks(answer.failure));
    // A SELECT that returns no row (no Atomic database) does not show the feature.
    if (each.judge == Judge::kSucceeds && answer.ok && answer.body.empty()) has = false;
    capabilities.*each.flag = has;
  }
  return probe;
}

}  // namespace sluice
