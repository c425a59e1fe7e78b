// The closed set of events a run records. Stored as JSON in the event log (EventToJson / EventFromJson, written with
// nlohmann-json's type macros in run_event.cpp; testdata/run_events.golden is the stored form).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostic.hpp"

namespace sluice {

struct RunStartedEvent {
  std::string selection;
  std::vector<std::string> assets;  // in execution order

  bool operator==(const RunStartedEvent&) const = default;
};

struct StepStartedEvent {
  std::string asset;

  bool operator==(const StepStartedEvent&) const = default;
};

struct MaterializationEvent {
  std::string asset;
  std::optional<std::string> window_start;  // YYYY-MM-DD, inclusive; empty for unpartitioned
  std::optional<std::string> window_end;    // YYYY-MM-DD, exclusive
  int64_t rows_written = 0;
  int64_t rows_dropped = 0;                 // rows outside the window, dropped before the write
  std::string sql_hash;
  bool view = false;                        // a view was created or replaced: it holds no rows of its own

  bool operator==(const MaterializationEvent&) const = default;
};

// One diagnostic as data (mirrors sluice::Diagnostic, without depending on it for storage).
struct EventDiagnostic {
  std::string code;
  std::string message;
  std::string file;
  int line = 0;
  int column = 0;
  std::string hint;

  bool operator==(const EventDiagnostic&) const = default;
};

// A Diagnostic as stored in an event.
EventDiagnostic ToEventDiagnostic(const Diagnostic& diagnostic);

struct StepFailedEvent {
  std::string asset;
  std::vector<EventDiagnostic> diagnostics;

  bool operator==(const StepFailedEvent&) const = default;
};

struct StepSkippedEvent {
  std::string asset;
  std::string reason;  // e.g. "upstream gold.x failed"

  bool operator==(const StepSkippedEvent&) const = default;
};

struct StepFinishedEvent {
  std::string asset;
  int64_t duration_ms = 0;

  bool operator==(const StepFinishedEvent&) const = default;
};

struct RunFinishedEvent {
  std::string status;  // SUCCESS | FAILURE | CANCELED
  std::string message;

  bool operator==(const RunFinishedEvent&) const = default;
};

// The run is queued behind something it must wait for (another process holding the warehouse).
struct RunWaitingEvent {
  std::string reason;  // e.g. "waiting for the writer lock on /p/warehouse.duckdb (held by pid 123)"

  bool operator==(const RunWaitingEvent&) const = default;
};

// One statement a build ran: which step, its sha256 and its text (secrets redacted).
struct StatementEvent {
  std::string step;
  std::string sha256;
  std::string sql;

  bool operator==(const StatementEvent&) const = default;
};

// A note on a step that is neither a failure nor its end, e.g. a replay window reopened because rows arrived.
struct StepNoteEvent {
  std::string step;
  std::string note;

  bool operator==(const StepNoteEvent&) const = default;
};

using RunEvent = std::variant<RunStartedEvent, StepStartedEvent, MaterializationEvent, StepFailedEvent,
                              StepSkippedEvent, StepFinishedEvent, RunFinishedEvent, RunWaitingEvent, StatementEvent,
                              StepNoteEvent>;

// The stable kind name stored beside the payload: "run_started", "step_started", "materialization",
// "step_failed", "step_skipped", "step_finished", "run_finished", "run_waiting", "statement", "step_note".
std::string EventKindName(const RunEvent& event);
nlohmann::json EventToJson(const RunEvent& event);
// Throws std::invalid_argument for an unknown kind.
// Also throws std::invalid_argument when the payload is not an object or a field has the wrong JSON type.
// Fields missing from the payload (or null) take their default value, so payloads written before a field
// was added still read.
RunEvent EventFromJson(const std::string& kind, const nlohmann::json& payload);

}  // namespace sluice
