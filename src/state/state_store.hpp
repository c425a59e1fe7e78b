// Run history storage, split by concern. One conformance suite (state_conformance_test.cpp) runs against
// every implementation (today: SQLite in sqlite/).
//
// Thread-safety: every method may be called from several threads at once; implementations serialize.
// Errors: storage failures throw sluice::Error with code SLU-STATE-NNN:
//   001 the store cannot be opened or migrated      002 a run with that id exists
//   003 any other storage failure                   004 no run with that id
//   005 the run is not in a state that allows the transition (e.g. starting a run twice)
//   006 a stored row cannot be read back (unknown status or event kind, malformed payload)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/run_event.hpp"

namespace sluice {

enum class RunStatus { kQueued, kStarted, kSuccess, kFailure, kCanceled };
std::string RunStatusName(RunStatus status);  // QUEUED, STARTED, SUCCESS, FAILURE, CANCELED
std::optional<RunStatus> ParseRunStatus(const std::string& name);

struct RunRecord {
  std::string run_id;
  std::string selection;                       // the selection as typed, e.g. "+gold.daily_revenue"
  std::optional<std::string> partition_start;  // first key, inclusive (YYYY-MM-DD)
  std::optional<std::string> partition_end;    // last key, inclusive
  RunStatus status = RunStatus::kQueued;
  std::string created_at;                      // ISO-8601 UTC
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
  int64_t pid = 0;                             // process that owns the run
  int64_t pid_start_time = 0;                  // that process's start time (/proc/<pid>/stat field 22)
  std::string error;                           // why it failed, when it did

  bool operator==(const RunRecord&) const = default;
};

// /proc/<pid>/stat field 22 of a live process, or 0 when it does not exist. A zombie (exited, not yet
// reaped) counts as not existing: it can no longer finish a run.
int64_t ProcessStartTime(int64_t pid);

// Field 22 (starttime) of the text of a /proc/<pid>/stat file, or 0 when the text is not one (or the process
// is a zombie). The second field, the command name in parentheses, may itself hold spaces and parentheses,
// so fields are counted from the last ')'.
int64_t ParseProcessStartTime(std::string_view stat);

// True for SUCCESS, FAILURE and CANCELED.
bool IsTerminal(RunStatus status);

class RunStore {
 public:
  virtual ~RunStore() = default;
  // Inserts a QUEUED run. Throws SLU-STATE-002 when the id exists, SLU-STATE-005 when `run.status` is not
  // QUEUED.
  virtual void CreateRun(const RunRecord& run) = 0;
  // QUEUED → STARTED. Only one caller can start a given run: SLU-STATE-005 when it is not QUEUED,
  // SLU-STATE-004 when it does not exist.
  virtual void MarkStarted(const std::string& run_id, const std::string& at) = 0;
  // → SUCCESS / FAILURE / CANCELED with the finish time and error text, from QUEUED or STARTED.
  // SLU-STATE-005 when the run has already finished or `status` is not terminal; SLU-STATE-004 when it
  // does not exist.
  virtual void FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                         const std::string& error) = 0;
  virtual std::optional<RunRecord> GetRun(const std::string& run_id) = 0;
  // Newest first (by created_at, then run_id), at most `limit` runs; a negative limit means all.
  virtual std::vector<RunRecord> ListRuns(int limit) = 0;
};

struct StoredEvent {
  int64_t sequence = 0;   // increasing across the whole log
  std::string run_id;
  std::string at;         // ISO-8601 UTC
  RunEvent event;

  bool operator==(const StoredEvent&) const = default;
};

class EventLog {
 public:
  virtual ~EventLog() = default;
  // Append-only.
  virtual void Append(const std::string& run_id, const std::string& at, const RunEvent& event) = 0;
  // In append order; empty for a run without events (or an unknown run).
  virtual std::vector<StoredEvent> EventsForRun(const std::string& run_id) = 0;
};

// The latest materialization of one asset partition. `partition` is the partition key (YYYY-MM-DD) or
// "" for unpartitioned assets.
struct MaterializationRecord {
  std::string asset;
  std::string partition;
  std::string run_id;
  int64_t rows = 0;  // rows of the write that produced it (for a window, the whole window's rows)
  std::string sql_hash;
  std::string written_at;

  bool operator==(const MaterializationRecord&) const = default;
};

class MaterializationStore {
 public:
  virtual ~MaterializationStore() = default;
  // Upserts by (asset, partition): the later record replaces the earlier. All records in one transaction.
  virtual void RecordMaterializations(const std::vector<MaterializationRecord>& records) = 0;
  // Sorted by asset, then partition.
  virtual std::vector<MaterializationRecord> LatestMaterializations() = 0;
  virtual bool HasMaterializations() = 0;
};

// Every store a run records into, as one object: what each backend implements.
class StateStore : public RunStore, public EventLog, public MaterializationStore {};

}  // namespace sluice
