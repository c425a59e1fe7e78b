#include "state/run_event.hpp"

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>

// An optional text field is JSON null when empty.
template <>
struct nlohmann::adl_serializer<std::optional<std::string>> {
  static void to_json(json& out, const std::optional<std::string>& value) {
    out = value ? json(*value) : json(nullptr);
  }
  static void from_json(const json& in, std::optional<std::string>& value) {
    value = in.is_null() ? std::nullopt : std::optional<std::string>(in.get<std::string>());
  }
};

namespace sluice {

// Each event's JSON form: an object of its fields under their member names. Reading, a field that is missing takes
// the value of a default-constructed event (EventFromJson removes null members first, so null reads as missing).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EventDiagnostic, code, message, file, line, column, hint)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunStartedEvent, selection, assets)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepStartedEvent, asset)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MaterializationEvent, asset, window_start, window_end, rows_written,
                                                rows_dropped, sql_hash, view)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepFailedEvent, asset, diagnostics)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepSkippedEvent, asset, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepFinishedEvent, asset, duration_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunFinishedEvent, status, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RunWaitingEvent, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StatementEvent, step, sha256, sql)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepNoteEvent, step, note)

namespace {

using nlohmann::json;

// The stored kind name of each RunEvent alternative, in variant order.
constexpr std::array<std::string_view, std::variant_size_v<RunEvent>> kKindNames = {
    "run_started",  "step_started", "materialization", "step_failed", "step_skipped",
    "step_finished", "run_finished", "run_waiting",    "statement",   "step_note",
};

constexpr bool KindNamesAreGivenAndDistinct() {
  for (size_t a = 0; a < kKindNames.size(); ++a) {
    if (kKindNames[a].empty()) return false;
    for (size_t b = a + 1; b < kKindNames.size(); ++b) {
      if (kKindNames[a] == kKindNames[b]) return false;
    }
  }
  return true;
}
static_assert(KindNamesAreGivenAndDistinct(), "every RunEvent alternative needs its own kind name");

template <size_t Index>
RunEvent Decode(const json& payload) {
  return RunEvent(std::in_place_index<Index>, payload.get<std::variant_alternative_t<Index, RunEvent>>());
}

template <size_t... Index>
constexpr auto Decoders(std::index_sequence<Index...>) {
  return std::array<RunEvent (*)(const json&), sizeof...(Index)>{&Decode<Index>...};
}

// `value` without its null object members, at every depth (array elements are kept as they are).
json WithoutNullMembers(const json& value) {
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, member] : value.items()) {
      if (!member.is_null()) out[key] = WithoutNullMembers(member);
    }
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    for (const json& element : value) out.push_back(WithoutNullMembers(element));
    return out;
  }
  return value;
}

}  // namespace

EventDiagnostic ToEventDiagnostic(const Diagnostic& d) {
  return EventDiagnostic{d.code, d.message, d.location.file, d.location.line, d.location.column, d.hint};
}

std::string EventKindName(const RunEvent& event) { return std::string(kKindNames[event.index()]); }

nlohmann::json EventToJson(const RunEvent& event) {
  return std::visit([](const auto& alternative) { return json(alternative); }, event);
}

RunEvent EventFromJson(const std::string& kind, const nlohmann::json& payload) {
  if (!payload.is_object()) {
    throw std::invalid_argument("the payload of a \"" + kind + "\" event must be a JSON object");
  }
  static constexpr auto kDecoders = Decoders(std::make_index_sequence<std::variant_size_v<RunEvent>>());
  for (size_t index = 0; index < kKindNames.size(); ++index) {
    if (kKindNames[index] != kind) continue;
    try {
      return kDecoders[index](WithoutNullMembers(payload));
    } catch (const json::exception& error) {
      throw std::invalid_argument("malformed \"" + kind + "\" event payload: " + error.what());
    }
  }
  throw std::invalid_argument("unknown run event kind \"" + kind + "\"");
}

}  // namespace sluice
