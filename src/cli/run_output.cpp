#include "cli/run_output.hpp"

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"

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
  if (step.status != StepStatus::kSkipped && step.note != "not started") line += "  " + Seconds(step.duration_ms);
  return line;
}

}  // namespace sluice::cli
