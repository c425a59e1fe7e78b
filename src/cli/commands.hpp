// The CLI's command implementations. Each parses nothing (main.cpp owns flags), calls a layer and prints.
// Each returns the process exit code: 0 ok, 1 failure, 130 canceled by a signal. sluice::Error escapes to main, which
// renders it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "service/version.hpp"
#include "service/workspace.hpp"

namespace sluice::cli {

using service::kSluiceVersion;

// The exit code of a run canceled by a signal.
inline constexpr int kCanceledExit = 130;

// A finished run's exit code: 0 SUCCESS, 130 CANCELED, 1 otherwise.
inline int ExitCodeFor(RunStatus status) {
  return status == RunStatus::kSuccess ? 0 : status == RunStatus::kCanceled ? kCanceledExit : 1;
}

// --project-dir, --target, --vars and the connection flags.
using GlobalOptions = service::WorkspaceOptions;

// The opening sequence every command starts with (service/workspace.hpp).
using service::ActiveCodeProgram;
using service::CodeDefinitions;
using service::CodeProgram;
using service::DiagnosticJson;
using service::InspectCodeProgram;
using service::LoadProjectFor;
using service::LoadSettingsFor;
using service::OpenStateStoreFor;
using service::ProgramName;
using service::ProjectRootFor;
using service::UseCodeProgram;
using service::WarehouseConfigFor;

struct CompileOptions {
  std::string target_dir;
};

struct RunOptions {
  std::vector<std::string> select;
  std::optional<std::string> partition;
  std::optional<std::string> from;
  std::optional<std::string> to;
  int threads = 0;
  bool full_refresh = false;
  bool allow_missing_upstream = false;
  std::optional<double> wait_timeout_seconds;  // unset: wait for the warehouse as long as it takes
  bool json = false;
  int max_concurrent_runs = 0;  // a backfill's chunks run at once; 0: the default (kDefaultMaxConcurrentRuns)
};

struct BackfillResumeOptions {
  std::string backfill_id;
  int threads = 0;
  int max_concurrent_runs = 0;  // 0: as recorded when the backfill was created
  bool allow_missing_upstream = false;
  std::optional<double> wait_timeout_seconds;
  bool json = false;
};

struct CleanOptions {
  bool apply = false;
  bool json = false;
};

struct PlanOptions {
  std::vector<std::string> select;
  bool json = false;
  // Virtual pipelines only (StreamBuild's plan flags).
  std::string deployment_id;
  bool full_refresh = false;
  std::string start_time;
};

struct BuildOptions {
  std::vector<std::string> select;
  bool auto_approve = false;
  std::vector<std::string> confirm;  // protected pipelines' tokens
  bool json = false;
  bool events = false;
};

struct TestOptions {
  std::vector<std::string> paths;  // test files or folders (relative to the project or the working directory)
  std::vector<std::string> select;
  bool verbose = false;
  bool json = false;
};

struct StarlakeImportOptions {
  std::string file;  // a task_deps JSON or a generated Dagster DAG module (.py), relative to the working directory
  std::string output = "pipelines";  // the folder the pipeline file is written to, relative to the working directory
  bool force = false;                // replace a pipeline file that differs
  bool json = false;                 // print the job graph instead of writing
};

struct PipelinesValidateOptions {
  std::string dir = "pipelines";  // relative to the working directory
  bool json = false;
};

struct AuditOptions {
  std::vector<std::string> select;
  bool force = false;
  bool json = false;
};

int Discover(const GlobalOptions& global, bool json);
int Compile(const GlobalOptions& global, const CompileOptions& options);
int Run(const GlobalOptions& global, const RunOptions& options);
int Status(const GlobalOptions& global, bool json);
int Clean(const GlobalOptions& global, const CleanOptions& options);
int Runs(const GlobalOptions& global, bool json, int limit);
int Logs(const GlobalOptions& global, const std::string& run_id, bool json);
int Plan(const GlobalOptions& global, const PlanOptions& options);
// backfills: list, show, cancel, resume (backfill_commands.cpp).
int Backfills(const GlobalOptions& global, bool json, int limit);
int BackfillShow(const GlobalOptions& global, const std::string& backfill_id, bool json);
int BackfillCancel(const GlobalOptions& global, const std::string& backfill_id);
int BackfillResume(const GlobalOptions& global, const BackfillResumeOptions& options);
int Build(const GlobalOptions& global, const BuildOptions& options);
// 0 when every selected test passed, 1 when one failed or its SQL failed.
int Test(const GlobalOptions& global, const TestOptions& options);
// 1 only when an error-severity audit failed or its SQL failed.
int Audit(const GlobalOptions& global, const AuditOptions& options);
// 1 when an asset is rejected.
int Inspect(const GlobalOptions& global, bool json);

// starlake import: writes the Sluice pipeline file of a Starlake DAG file, or with --json prints its job graph
// (starlake_commands.cpp).
int StarlakeImport(const StarlakeImportOptions& options);
// pipelines validate: every pipeline file of a folder read; 1 when one has an error (starlake_commands.cpp).
int PipelinesValidate(const PipelinesValidateOptions& options);

// The whole command line: flags, dispatch, errors rendered; returns the exit code. `sluice` and code programs call it.
int Main(int argc, char** argv);

}  // namespace sluice::cli
