#include "state/run_event.hpp"

#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace sluice {

namespace {

using nlohmann::json;

// Reads `key` into `out` when present and not null; otherwise `out` keeps its default.
template <class T>
void Read(const json& payload, const char* key, T& out) {
  auto found = payload.find(key);
  if (found == payload.end() || found->is_null()) return;
  out = found->template get<T>();
}

void Read(const json& payload, const char* key, std::optional<std::string>& out) {
  auto found = payload.find(key);
  if (found == payload.end() || found->is_null()) return;
  out = found->get<std::string>();
}

json OptionalToJson(const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); }

json DiagnosticToJson(const EventDiagnostic& diagnostic) {
  return {{"code", diagnostic.code}, {"message", diagnostic.message}, {"file", diagnostic.file},
          {"line", diagnostic.line}, {"column", diagnostic.column},   {"hint", diagnostic.hint}};
}

EventDiagnostic DiagnosticFromJson(const json& payload) {
  if (!payload.is_object()) throw std::invalid_argument("a diagnostic must be a JSON object");
  EventDiagnostic diagnostic;
  Read(payload, "code", diagnostic.code);
  Read(payload, "message", diagnostic.message);
  Read(payload, "file", diagnostic.file);
  Read(payload, "line", diagnostic.line);
  Read(payload, "column", diagnostic.column);
  Read(payload, "hint", diagnostic.hint);
  return diagnostic;
}

// One specialization per RunEvent alternative: its stored kind name and its JSON form. An alternative
// without a specialization fails to compile in EventKindName, EventToJson and EventFromJson.
template <class Event>
struct EventCodec;

template <>
struct EventCodec<RunStartedEvent> {
  static constexpr std::string_view kKind = "run_started";
  static json ToJson(const RunStartedEvent& event) {
    return {{"selection", event.selection}, {"assets", event.assets}};
  }
  static RunStartedEvent FromJson(const json& payload) {
    RunStartedEvent event;
    Read(payload, "selection", event.selection);
    Read(payload, "assets", event.assets);
    return event;
  }
};

template <>
struct EventCodec<StepStartedEvent> {
  static constexpr std::string_view kKind = "step_started";
  static json ToJson(const StepStartedEvent& event) { return {{"asset", event.asset}}; }
  static StepStartedEvent FromJson(const json& payload) {
    StepStartedEvent event;
    Read(payload, "asset", event.asset);
    return event;
  }
};

template <>
struct EventCodec<MaterializationEvent> {
  static constexpr std::string_view kKind = "materialization";
  static json ToJson(const MaterializationEvent& event) {
    return {{"asset", event.asset},
            {"window_start", OptionalToJson(event.window_start)},
            {"window_end", OptionalToJson(event.window_end)},
            {"rows_written", event.rows_written},
            {"rows_dropped", event.rows_dropped},
            {"sql_hash", event.sql_hash},
            {"view", event.view}};
  }
  static MaterializationEvent FromJson(const json& payload) {
    MaterializationEvent event;
    Read(payload, "asset", event.asset);
    Read(payload, "window_start", event.window_start);
    Read(payload, "window_end", event.window_end);
    Read(payload, "rows_written", event.rows_written);
    Read(payload, "rows_dropped", event.rows_dropped);
    Read(payload, "sql_hash", event.sql_hash);
    Read(payload, "view", event.view);
    return event;
  }
};

template <>
struct EventCodec<StepFailedEvent> {
  static constexpr std::string_view kKind = "step_failed";
  static json ToJson(const StepFailedEvent& event) {
    json diagnostics = json::array();
    for (const EventDiagnostic& diagnostic : event.diagnostics)
      diagnostics.push_back(DiagnosticToJson(diagnostic));
    return {{"asset", event.asset}, {"diagnostics", std::move(diagnostics)}};
  }
  static StepFailedEvent FromJson(const json& payload) {
    StepFailedEvent event;
    Read(payload, "asset", event.asset);
    auto diagnostics = payload.find("diagnostics");
    if (diagnostics != payload.end() && !diagnostics->is_null()) {
      if (!diagnostics->is_array()) throw std::invalid_argument("\"diagnostics\" must be a JSON array");
      for (const json& diagnostic : *diagnostics) event.diagnostics.push_back(DiagnosticFromJson(diagnostic));
    }
    return event;
  }
};

template <>
struct EventCodec<StepSkippedEvent> {
  static constexpr std::string_view kKind = "step_skipped";
  static json ToJson(const StepSkippedEvent& event) {
    return {{"asset", event.asset}, {"reason", event.reason}};
  }
  static StepSkippedEvent FromJson(const json& payload) {
    StepSkippedEvent event;
    Read(payload, "asset", event.asset);
    Read(payload, "reason", event.reason);
    return event;
  }
};

template <>
struct EventCodec<StepFinishedEvent> {
  static constexpr std::string_view kKind = "step_finished";
  static json ToJson(const StepFinishedEvent& event) {
    return {{"asset", event.asset}, {"duration_ms", event.duration_ms}};
  }
  static StepFinishedEvent FromJson(const json& payload) {
    StepFinishedEvent event;
    Read(payload, "asset", event.asset);
    Read(payload, "duration_ms", event.duration_ms);
    return event;
  }
};

template <>
struct EventCodec<RunFinishedEvent> {
  static constexpr std::string_view kKind = "run_finished";
  static json ToJson(const RunFinishedEvent& event) {
    return {{"status", event.status}, {"message", event.message}};
  }
  static RunFinishedEvent FromJson(const json& payload) {
    RunFinishedEvent event;
    Read(payload, "status", event.status);
    Read(payload, "message", event.message);
    return event;
  }
};

template <>
struct EventCodec<RunWaitingEvent> {
  static constexpr std::string_view kKind = "run_waiting";
  static json ToJson(const RunWaitingEvent& event) { return {{"reason", event.reason}}; }
  static RunWaitingEvent FromJson(const json& payload) {
    RunWaitingEvent event;
    Read(payload, "reason", event.reason);
    return event;
  }
};

template <>
struct EventCodec<StatementEvent> {
  static constexpr std::string_view kKind = "statement";
  static json ToJson(const StatementEvent& event) {
    return {{"step", event.step}, {"sha256", event.sha256}, {"sql", event.sql}};
  }
  static StatementEvent FromJson(const json& payload) {
    StatementEvent event;
    Read(payload, "step", event.step);
    Read(payload, "sha256", event.sha256);
    Read(payload, "sql", event.sql);
    return event;
  }
};

template <>
struct EventCodec<StepNoteEvent> {
  static constexpr std::string_view kKind = "step_note";
  static json ToJson(const StepNoteEvent& event) { return {{"step", event.step}, {"note", event.note}}; }
  static StepNoteEvent FromJson(const json& payload) {
    StepNoteEvent event;
    Read(payload, "step", event.step);
    Read(payload, "note", event.note);
    return event;
  }
};

template <size_t... I>
constexpr bool KindsAreDistinct(std::index_sequence<I...>) {
  constexpr std::string_view kinds[] = {EventCodec<std::variant_alternative_t<I, RunEvent>>::kKind...};
  for (size_t a = 0; a < sizeof...(I); ++a) {
    for (size_t b = a + 1; b < sizeof...(I); ++b) {
      if (kinds[a] == kinds[b]) return false;
    }
  }
  return true;
}
static_assert(KindsAreDistinct(std::make_index_sequence<std::variant_size_v<RunEvent>>()),
              "every RunEvent alternative needs its own kind name");

// Decodes `payload` as the alternative whose kind name is `kind`; nullopt when no alternative has it.
template <size_t... I>
std::optional<RunEvent> DecodeKind(std::string_view kind, const json& payload, std::index_sequence<I...>) {
  std::optional<RunEvent> event;
  auto try_one = [&]<size_t Index>(std::integral_constant<size_t, Index>) {
    using Codec = EventCodec<std::variant_alternative_t<Index, RunEvent>>;
    if (kind != Codec::kKind) return false;
    event.emplace(std::in_place_index<Index>, Codec::FromJson(payload));
    return true;
  };
  (try_one(std::integral_constant<size_t, I>()) || ...);
  return event;
}

}  // namespace

EventDiagnostic ToEventDiagnostic(const Diagnostic& d) {
  return EventDiagnostic{d.code, d.message, d.location.file, d.location.line, d.location.column, d.hint};
}

std::string EventKindName(const RunEvent& event) {
  return std::visit([]<class Event>(const Event&) { return std::string(EventCodec<Event>::kKind); }, event);
}

nlohmann::json EventToJson(const RunEvent& event) {
  return std::visit(
      []<class Event>(const Event& alternative) { return EventCodec<Event>::ToJson(alternative); }, event);
}

RunEvent EventFromJson(const std::string& kind, const nlohmann::json& payload) {
  if (!payload.is_object()) {
    throw std::invalid_argument("the payload of a \"" + kind + "\" event must be a JSON object");
  }
  std::optional<RunEvent> event;
  try {
    event = DecodeKind(kind, payload, std::make_index_sequence<std::variant_size_v<RunEvent>>());
  } catch (const json::exception& error) {
    throw std::invalid_argument("malformed \"" + kind + "\" event payload: " + error.what());
  }
  if (!event) throw std::invalid_argument("unknown run event kind \"" + kind + "\"");
  return std::move(*event);
}

}  // namespace sluice
