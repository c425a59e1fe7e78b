#include "cli/run_output.hpp"

#include <cstdio>

#include "cli/project_context.hpp"

namespace sluice::cli {

using nlohmann::json;

std::string WindowText(const DateWindow& window) {
  std::string first = window.start.ToString();
  std::string last = window.end.AddDays(-1).ToString();
  return first == last ? first : first + " .. " + last;
}

std::string DescribeStep(const StepOutcome& step) {
  std::string line = StepStatusName(step.status);
  line.resize(10, ' ');
  line += step.key.ToString();
  if (step.window) line += " [" + WindowText(*step.window) + "]";
  if (step.status == StepStatus::kSuccess && !step.wrote_rows) line += "  view";
  if (step.status == StepStatus::kSuccess && step.wrote_rows) {
    line += "  " + FormatCount(step.rows_written) + " rows";
    if (step.rows_dropped > 0) line += " (" + FormatCount(step.rows_dropped) + " outside the window dropped)";
  }
  if (!step.note.empty()) line += "  (" + step.note + ")";
  if (step.status != StepStatus::kSkipped && step.note != "not started") {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "  %.2fs", static_cast<double>(step.duration_ms) / 1000.0);
    line += seconds;
  }
  return line;
}

json StepJson(const StepOutcome& step) {
  json diagnostics = json::array();
  for (const Diagnostic& d : step.diagnostics) diagnostics.push_back(DiagnosticJson(d));
  json out{{"asset", step.key.ToString()},
           {"status", StepStatusName(step.status)},
           {"duration_ms", step.duration_ms},
           {"note", step.note},
           {"diagnostics", diagnostics}};
  out["window"] = step.window ? json{{"start", step.window->start.ToString()},
                                     {"end", step.window->end.AddDays(-1).ToString()}}
                              : json(nullptr);
  out["rows_written"] = step.status == StepStatus::kSuccess && step.wrote_rows ? json(step.rows_written) : json(nullptr);
  out["rows_dropped"] = step.rows_dropped;
  return out;
}

}  // namespace sluice::cli
