// Reading the PostgreSQL state store's rows (text values from pg::Result) into records, shared by its .cpp files.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/postgres/pg_connection.hpp"
#include "state/postgres/postgres_store_connection.hpp"
#include "state/state_store.hpp"

namespace sluice::pg_rows {

using Row = std::vector<std::optional<std::string>>;

inline std::string Text(const Row& row, size_t column) { return row.at(column).value_or(""); }
inline std::optional<std::string> OptionalText(const Row& row, size_t column) { return row.at(column); }
inline int64_t Int(const Row& row, size_t column) {
  const std::optional<std::string>& value = row.at(column);
  return value ? std::stoll(*value) : 0;
}
inline std::string Param(int64_t value) { return std::to_string(value); }
// A LIMIT parameter: NULL (no limit) for a negative limit.
inline std::optional<std::string> LimitParam(int limit) {
  return limit < 0 ? std::nullopt : std::optional<std::string>(std::to_string(limit));
}

// The columns RunFromRow reads, in its order.
inline constexpr const char* kRunColumns =
    "run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, "
    "pid_start_time, error, backfill_id, job, tags::text, host";
inline const std::string kSelectRuns = std::string("SELECT ") + kRunColumns + " FROM runs ";

// Throws SLU-STATE-006 (located by `db`) for an unknown status or tags that are not an object of strings.
inline RunRecord RunFromRow(const PostgresStoreConnection& db, const Row& row) {
  RunRecord run;
  run.run_id = Text(row, 0);
  run.selection = Text(row, 1);
  run.partition_start = OptionalText(row, 2);
  run.partition_end = OptionalText(row, 3);
  const std::string status = Text(row, 4);
  std::optional<RunStatus> parsed = ParseRunStatus(status);
  if (!parsed) {
    throw db.StateError("SLU-STATE-006", "run " + run.run_id + " has an unknown status \"" + status + "\"",
                        "the database was probably written by a newer Sluice");
  }
  run.status = *parsed;
  run.created_at = Text(row, 5);
  run.started_at = OptionalText(row, 6);
  run.finished_at = OptionalText(row, 7);
  run.pid = Int(row, 8);
  run.pid_start_time = Int(row, 9);
  run.error = Text(row, 10);
  run.backfill_id = Text(row, 11);
  run.job = Text(row, 12);
  nlohmann::json tags = nlohmann::json::parse(Text(row, 13), nullptr, /*allow_exceptions=*/false);
  if (!tags.is_object()) throw db.StateError("SLU-STATE-006", "run " + run.run_id + " has tags that are not an object");
  for (const auto& [key, value] : tags.items()) {
    if (!value.is_string()) throw db.StateError("SLU-STATE-006", "run " + run.run_id + " has a tag that is not text");
    run.tags[key] = value.get<std::string>();
  }
  run.host = Text(row, 14);
  return run;
}

inline std::vector<RunRecord> RunsFromResult(const PostgresStoreConnection& db, const pg::Result& result) {
  std::vector<RunRecord> runs;
  runs.reserve(result.rows.size());
  for (const Row& row : result.rows) runs.push_back(RunFromRow(db, row));
  return runs;
}

}  // namespace sluice::pg_rows
