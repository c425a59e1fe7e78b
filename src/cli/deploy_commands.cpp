// plan and build (direct mode; service/direct_deployment.hpp): plan changes nothing; build shows the same plan, asks
// for approval (and each protected pipeline's confirmation token), then executes it. Output: text, --json (one
// document at the end) or, for build, --events (one JSON object per line as the build goes). Exit 0 ok, 1 failure
// (a failed step, a failed error-severity audit, a declined prompt), 2 usage, 130 canceled by a signal.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/build_progress.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "service/direct_deployment.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

// Reads one line from the terminal after `prompt`; empty when stdin is closed.
std::string Ask(const std::string& prompt) {
  std::fprintf(stderr, "%s", prompt.c_str());
  std::fflush(stderr);
  std::string answer;
  std::getline(std::cin, answer);
  return answer;
}

void ShowWritten(const std::filesystem::path& directory, const std::filesystem::path& root) {
  std::printf("plan written to %s/ (nothing was changed in the warehouse)\n",
              std::filesystem::relative(directory, root).c_str());
}

// Whether the build may go on: every protected pipeline confirmed (by --confirm, or typed at the prompt), and the
// plan approved. Throws when a token is missing and nobody can be asked.
bool Approved(const service::DirectBuild& build, const BuildOptions& options) {
  for (const PipelineScope* pipeline : build.Unconfirmed(options.confirm)) {
    if (!options.auto_approve && isatty(STDIN_FILENO)) {
      if (!pipeline->protection_warning.empty()) {
        std::fprintf(stderr, "warning: %s\n", pipeline->protection_warning.c_str());
      }
      if (Ask("pipeline " + pipeline->name + " is protected: type " + *pipeline->confirmation + " to rebuild it: ") ==
          *pipeline->confirmation) {
        continue;
      }
      return false;
    }
    throw Error(Diagnostic{"SLU-DEPLOY-005",
                           "pipeline '" + pipeline->name + "' is protected and its confirmation token was not given" +
                               (pipeline->protection_warning.empty() ? "" : ": " + pipeline->protection_warning),
                           {},
                           "pass --confirm " + *pipeline->confirmation + " to rebuild it",
                           {}});
  }
  if (options.auto_approve) return true;
  if (!isatty(STDIN_FILENO)) {
    throw UsageError(Diagnostic{"SLU-CLI-005",
                                "build needs approval and standard input is not a terminal",
                                {},
                                "pass --auto-approve to build without a prompt",
                                {}});
  }
  const std::string answer = Ask("Apply this plan? [y/N] ");
  return answer == "y" || answer == "yes";
}

}  // namespace

int Plan(const GlobalOptions& global, const PlanOptions& options) {
  const service::PlanReport report = service::PlanProject(
      global, {options.select, options.deployment_id, options.full_refresh, options.start_time}, !options.json);
  if (report.direct) {
    const service::DirectPlanView& direct = *report.direct;
    if (options.json) {
      std::printf("%s", direct.plan_json.c_str());
    } else {
      std::printf("%s", PlanText(direct.plan, &direct.state).c_str());
      ShowWritten(direct.directory, report.project_root);
    }
    if (!direct.state.blockers.empty()) throw Error(direct.state.blockers);  // build would stop here: exit 1
  }
  if (report.virtual_part) {
    const service::VirtualPlanView& part = *report.virtual_part;
    if (options.json) {
      std::printf("%s", part.plan_json.c_str());
    } else {
      std::printf("%s", VirtualPlanText(part.plan).c_str());
      ShowWritten(part.directory, report.project_root);
    }
    if (!part.blockers.empty()) throw Error(part.blockers);  // backfill would stop here: exit 1
  }
  return 0;
}

int Build(const GlobalOptions& global, const BuildOptions& options) {
  if ((options.json || options.events) && !options.auto_approve) {
    throw UsageError(Diagnostic{"SLU-CLI-004",
                                "--json and --events need --auto-approve",
                                {},
                                "a build that prints machine-readable output cannot prompt for approval",
                                {}});
  }
  CancelOnSignal cancel(CancelOnSignal::Arming::kWhenAsked);
  std::unique_ptr<service::DirectBuild> build = service::DirectBuild::Prepare(global, options.select, cancel);
  const bool quiet = options.json || options.events;
  if (!quiet) std::printf("%s", PlanText(build->plan(), &build->state()).c_str());
  if (!Approved(*build, options)) {
    std::fprintf(stderr, "build declined: nothing was changed\n");
    return 1;
  }
  std::function<void(const BuildProgress&)> printer;
  service::DirectBuild::Observer observer;
  observer.on_started = [&](const std::string& run_id, size_t steps) {
    printer = BuildProgressPrinter(run_id, options.events, options.json, json::object());
    if (!quiet) std::printf("build %s: %zu step(s)\n", run_id.c_str(), steps);
  };
  observer.on_progress = [&](const BuildProgress& progress) { printer(progress); };
  const service::DirectBuild::Result result = build->Execute(observer);
  const RunStatus status = result.outcome.status;
  const int exit_code = ExitCodeFor(status);
  if (options.json) {
    PrintJson(result.execution);
  } else if (options.events) {
    std::printf(
        "%s\n",
        json{{"event", "build_finished"}, {"run_id", result.run_id}, {"status", RunStatusName(status)}}.dump().c_str());
  } else {
    size_t failed = 0;
    for (const BuildStepOutcome& step : result.outcome.steps) failed += step.status == BuildStepStatus::kFailed ? 1 : 0;
    std::printf("build %s %s: %zu step(s), %zu failed\n", result.run_id.c_str(), RunStatusName(status).c_str(),
                result.outcome.steps.size(), failed);
    std::printf("the statements sent: %s\n",
                std::filesystem::relative(result.statements_file, result.project_root).c_str());
  }
  return exit_code;
}

}  // namespace sluice::cli
