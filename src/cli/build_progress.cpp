#include "cli/build_progress.hpp"

#include <cstdio>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "service/direct_deployment.hpp"

namespace sluice::cli {

using nlohmann::json;

std::string OutcomeLine(const BuildStepOutcome& step) {
  std::string line = BuildStepStatusName(step.status);
  line.resize(10, ' ');
  line += DeployPhaseName(step.phase);
  line.resize(23, ' ');
  line += step.step;
  if (step.rows >= 0 && step.phase != DeployPhase::kAudit) line += "  " + FormatCount(step.rows) + " rows";
  if (step.attempts > 1) line += "  (" + std::to_string(step.attempts) + " replay windows)";
  if (!step.note.empty()) line += "  (" + step.note + ")";
  line += "  " + Seconds(step.duration_ms);
  for (const Diagnostic& d : step.diagnostics) {
    std::string shown = FormatDiagnostic(d);  // file:line:col when known, the caret line, the hint
    while (!shown.empty() && shown.back() == '\n') shown.pop_back();
    for (size_t at = 0; at != std::string::npos;) {
      const size_t end = shown.find('\n', at);
      line += "\n    " + shown.substr(at, end == std::string::npos ? std::string::npos : end - at);
      at = end == std::string::npos ? end : end + 1;
    }
  }
  return line;
}

std::function<void(const BuildProgress&)> BuildProgressPrinter(std::string run_id, bool events, bool json_output,
                                                               json extra) {
  return [run_id = std::move(run_id), events, json_output, extra = std::move(extra)](const BuildProgress& progress) {
    if (events) {
      json event{{"event", progress.kind},
                 {"run_id", run_id},
                 {"step", progress.step},
                 {"phase", DeployPhaseName(progress.phase)}};
      event.update(extra);
      if (progress.kind == "statement") event["sha256"] = progress.detail;
      if (progress.kind == "replay_retry") event["reason"] = progress.detail;
      if (progress.outcome != nullptr) event["outcome"] = service::ToJson(*progress.outcome);
      std::printf("%s\n", event.dump().c_str());
      std::fflush(stdout);
    } else if (!json_output && progress.kind == "step_finished" && progress.outcome != nullptr) {
      std::printf("%s\n", OutcomeLine(*progress.outcome).c_str());
      std::fflush(stdout);
    } else if (!json_output && progress.kind == "replay_retry") {
      std::printf("note      %s\n", progress.detail.c_str());
      std::fflush(stdout);
    }
  };
}

}  // namespace sluice::cli
