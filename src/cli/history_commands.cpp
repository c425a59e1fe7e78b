// status, runs, logs, clean: the history operations of service/history.hpp, rendered as tables and lines, or with
// --json as the documents the service gives.
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "service/history.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

std::string EventLine(const RunEvent& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, RunStartedEvent>) {
          return "run started: " + std::to_string(e.assets.size()) + " step(s), selection " + e.selection;
        } else if constexpr (std::is_same_v<T, StepStartedEvent>) {
          return e.asset + " started";
        } else if constexpr (std::is_same_v<T, MaterializationEvent>) {
          std::string line = e.view ? e.asset + " view created or replaced"
                                    : e.asset + " materialized " + FormatCount(e.rows_written) +
                                          (e.rows_written == 1 ? " row" : " rows");
          if (e.window_start) line += " in [" + *e.window_start + ", " + e.window_end.value_or("") + ")";
          if (e.rows_dropped > 0) line += ", " + FormatCount(e.rows_dropped) + " outside the window dropped";
          return line + " (sql " + e.sql_hash.substr(0, 12) + ")";
        } else if constexpr (std::is_same_v<T, StepFailedEvent>) {
          std::string line = e.asset + " failed";
          for (const EventDiagnostic& d : e.diagnostics) {
            line += "\n    " + DiagnosticLine(d.code, d.message, SourceLocation{d.file, d.line, d.column});
          }
          return line;
        } else if constexpr (std::is_same_v<T, StepSkippedEvent>) {
          return e.asset + " skipped: " + e.reason;
        } else if constexpr (std::is_same_v<T, StepFinishedEvent>) {
          return e.asset + " finished in " + std::to_string(e.duration_ms) + " ms";
        } else if constexpr (std::is_same_v<T, RunWaitingEvent>) {
          return "run queued: " + e.reason;
        } else if constexpr (std::is_same_v<T, StatementEvent>) {
          return e.step + " ran statement " + e.sha256.substr(0, 12);
        } else if constexpr (std::is_same_v<T, StepNoteEvent>) {
          return e.step + ": " + e.note;
        } else {
          return "run finished: " + e.status + (e.message.empty() ? "" : " (" + e.message + ")");
        }
      },
      event);
}

std::string StatusDetail(const json& item) {
  const json& last = item["last_materialization"];
  if (!item["partitions"].is_null()) {
    const json& p = item["partitions"];
    std::string detail =
        std::to_string(p["done"].get<size_t>()) + "/" + std::to_string(p["total"].get<size_t>()) + " days done";
    if (p["failed"].get<size_t>() > 0) {
      detail += ", " + std::to_string(p["failed"].get<size_t>()) + " failed (";
      size_t shown = 0;
      for (const json& range : p["failed_ranges"]) {
        if (shown++ == 3) {
          detail += ", …";
          break;
        }
        std::string a = range[0], b = range[1];
        detail += (shown > 1 ? ", " : "") + (a == b ? a : a + ".." + b);
      }
      detail += ")";
    }
    if (p["missing"].get<size_t>() == 0) return detail;
    detail += ", missing ";
    size_t shown = 0;
    for (const json& range : p["missing_ranges"]) {
      if (shown++ == 3) {
        detail += ", …";
        break;
      }
      std::string a = range[0], b = range[1];
      detail += (shown > 1 ? ", " : "") + (a == b ? a : a + ".." + b);
    }
    return detail;
  }
  if (item["state"] == "missing") return "not in the warehouse";
  if (item.contains("partitions_recorded")) {
    return std::to_string(item["partitions_recorded"].get<size_t>()) + " days recorded";
  }
  if (item["kind"] == "view") return "view";
  if (!last.is_null() && !last["rows"].is_null()) return FormatCount(last["rows"].get<int64_t>()) + " rows";
  return "";
}

std::string DurationText(std::optional<int64_t> ms) {
  if (!ms) return "-";
  char text[32];
  if (*ms < 60000) {
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(*ms) / 1000.0);
  } else {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(*ms / 60000),
                  static_cast<long long>((*ms / 1000) % 60));
  }
  return text;
}

}  // namespace

int Status(const GlobalOptions& global, bool as_json) {
  const service::StatusReport report = service::ReadStatus(global);
  const json document = service::ToJson(report);
  if (as_json) {
    PrintJson(document);
    return 0;
  }
  const json& assets = document["assets"];
  const json& datasets = document["datasets"];
  for (const std::string& note : report.notes) std::printf("note: %s\n", note.c_str());
  if (!assets.empty() || datasets.empty()) {  // a project of orchestrated jobs only shows its datasets
    std::printf("%s  %s  %s  %s  %s\n", Pad("ASSET", 36).c_str(), Pad("KIND", 8).c_str(), Pad("STATE", 12).c_str(),
                Pad("LAST MATERIALIZED", 26).c_str(), "ROWS / PARTITIONS");
  }
  for (const json& item : assets) {
    const json& last = item["last_materialization"];
    std::string kind = item["kind"].is_null() ? "?" : item["kind"].get<std::string>();
    std::string written = last.is_null() ? "never" : last["written_at"].get<std::string>();
    std::printf("%s  %s  %s  %s  %s\n", Pad(item["asset"], 36).c_str(), Pad(kind, 8).c_str(),
                Pad(item["state"], 12).c_str(), Pad(written, 26).c_str(), StatusDetail(item).c_str());
  }
  if (!datasets.empty()) {
    std::printf("%s%s  %s  %s  %s\n", assets.empty() ? "" : "\n", Pad("DATASET (orchestrated jobs)", 36).c_str(),
                Pad("LAST MATERIALIZED", 26).c_str(), Pad("PARTITION", 26).c_str(), "RUN");
    for (const json& item : datasets) {
      std::printf("%s  %s  %s  %s\n", Pad(item["dataset"], 36).c_str(), Pad(item["materialized_at"], 26).c_str(),
                  Pad(item["partition"], 26).c_str(), item["run_id"].get<std::string>().c_str());
    }
  }
  if (!report.orphans.empty()) {
    std::printf("\nleft behind by removed or renamed models (`sluice clean --apply` drops them):\n");
    for (const TableInfo& info : report.orphans) {
      std::printf("  %s  %s\n", Pad(info.relation.ToString(), 36).c_str(), info.is_view ? "view" : "table");
    }
  }
  return 0;
}

int Clean(const GlobalOptions& global, const CleanOptions& options) {
  const service::CleanResult result = service::Clean(global, options.apply, [&](const TableInfo& info) {
    if (options.json) return;
    std::printf("%s %s %s\n", options.apply ? "dropped" : "would drop", info.is_view ? "view" : "table",
                info.relation.ToString().c_str());
  });
  if (options.json) {
    PrintJson(service::ToJson(result));
  } else if (result.relations.empty()) {
    std::printf("nothing to clean: every relation Sluice wrote belongs to a model or source\n");
  } else if (!options.apply) {
    std::printf("dry run: %s; run `sluice clean --apply` to drop them\n",
                Plural(result.relations.size(), "relation").c_str());
  }
  return 0;
}

int Runs(const GlobalOptions& global, bool as_json, int limit) {
  const std::vector<service::RunSummary> runs = service::ListRuns(global, limit);
  if (as_json) {
    PrintJson(service::ToJson(runs));
    return 0;
  }
  std::printf("%s  %s  %s  %s  %s  %s  %s\n", Pad("RUN", 26).c_str(), Pad("STATUS", 8).c_str(),
              Pad("STARTED", 24).c_str(), Pad("DURATION", 8).c_str(), Pad("STEPS", 18).c_str(),
              Pad("PARTITIONS", 22).c_str(), "SELECTION");
  for (const service::RunSummary& summary : runs) {
    const RunRecord& run = summary.run;
    const service::RunProgress& p = summary.progress;
    const bool waiting = summary.waiting();
    std::string steps = "-";
    if (p.steps > 0) {
      steps = std::to_string(p.ok) + "/" + std::to_string(p.steps) + " ok";
      if (p.failed > 0) steps += ", " + std::to_string(p.failed) + " failed";
      if (p.skipped > 0) steps += ", " + std::to_string(p.skipped) + " skipped";
    }
    std::string partitions = run.partition_start ? *run.partition_start + ".." + run.partition_end.value_or("") : "-";
    std::string line = Pad(run.run_id, 26) + "  " + Pad(waiting ? "WAITING" : RunStatusName(run.status), 8) + "  " +
                       Pad(run.started_at.value_or(run.created_at), 24) + "  " +
                       Pad(DurationText(summary.duration_ms), 8) + "  " + Pad(steps, 18) + "  " + Pad(partitions, 22) +
                       "  " + run.selection;
    if (waiting) line += "  (" + p.waiting_for + ")";
    if (!run.error.empty()) line += "  (" + run.error + ")";
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

int Logs(const GlobalOptions& global, const std::string& run_id, bool as_json) {
  const service::RunLog log = service::ReadRunLog(global, run_id);
  if (as_json) {
    PrintJson(service::ToJson(log));
    return 0;
  }
  const RunRecord& run = log.run;
  std::printf("run %s  %s  selection %s\n", run_id.c_str(), RunStatusName(run.status).c_str(), run.selection.c_str());
  for (const StoredEvent& event : log.events) std::printf("%s  %s\n", event.at.c_str(), EventLine(event.event).c_str());
  if (!run.error.empty()) std::printf("error: %s\n", run.error.c_str());
  return 0;
}

}  // namespace sluice::cli
