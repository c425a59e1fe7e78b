// sluice: the command-line entry point. Parses flags (CLI11), dispatches to cli/*_command.cpp, and renders
// sluice::Error. Exit codes: 0 ok, 1 failure, 2 usage, 130 canceled by a signal (run).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "core/diagnostic.hpp"
#include "core/phase_timer.hpp"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::cli;
  sluice::MarkPhase("start");
  CLI::App app{"Sluice: declarative, partition-aware data pipelines (StreamBuild-compatible projects)", "sluice"};
  app.set_version_flag("--version", std::string("sluice 0.1.0"));
  app.require_subcommand(1);
  app.fallthrough();

  GlobalOptions global;
  std::string project_dir;
  std::string target;
  app.add_option("--project-dir", project_dir, "Project folder (default: nearest folder upward with streambuild_project.toml)");
  app.add_option("--target", target, "Target to use (default: streambuild_local.toml target, else default_target)");
  std::string vars, database, host, username, password;
  int port = 0;
  app.add_option("--vars", vars, "One JSON object of project variables; overrides every file's vars");
  auto* connection = app.add_option_group("connection", "Connection overrides (win over STREAMBUILD_CLICKHOUSE_* and the files)");
  connection->add_option("--database", database, "Target database (default namespace)");
  connection->add_option("--host", host, "Warehouse host");
  connection->add_option("--port", port, "Warehouse port")->check(CLI::Range(1, 65535));
  connection->add_option("--username", username, "Warehouse user");
  connection->add_option("--password", password, "Warehouse password");

  CLI::App* discover_cmd = app.add_subcommand("discover", "Analyse the project offline and print its pipelines as a JSON array");

  CompileOptions compile;
  CLI::App* compile_cmd = app.add_subcommand("compile", "Check the project and write target/manifest.json and target/streambuild_dag.json");
  compile_cmd->add_option("--target-dir", compile.target_dir, "Write artifacts here instead of <project>/target");

  RunOptions run;
  std::string partition, from, to;
  CLI::App* run_cmd = app.add_subcommand("run", "Materialize the selected assets (direct mode) into the warehouse");
  run_cmd->add_option("-s,--select", run.select,
                      "What to run: NAME (pipeline, then model, then source), pipeline:NAME, model:NAME, ns.name; "
                      "+NAME adds upstream, NAME+ downstream. Repeatable; default: everything");
  auto* partition_opt = run_cmd->add_option("--partition", partition, "Run one daily partition key (YYYY-MM-DD)");
  auto* from_opt = run_cmd->add_option("--from", from, "First partition key of an inclusive range");
  auto* to_opt = run_cmd->add_option("--to", to, "Last partition key of an inclusive range");
  partition_opt->excludes(from_opt)->excludes(to_opt);
  from_opt->needs(to_opt);
  to_opt->needs(from_opt);
  run_cmd->add_option("--threads", run.threads, "Steps run in parallel (default: one per core)")->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--full-refresh", run.full_refresh,
                    "Rebuild the selected tables whole: partitioned ones from their start date through the window's "
                    "end, seeds reloaded");
  run_cmd->add_flag("--allow-missing-upstream", run.allow_missing_upstream,
                    "Run a step even when an upstream outside the selection was never materialized");
  double wait_timeout = -1;
  auto* wait_opt = run_cmd->add_option("--wait-timeout", wait_timeout,
                                       "Seconds to wait for another process holding the warehouse file (default: "
                                       "as long as it takes; 0: do not wait)")
                       ->check(CLI::NonNegativeNumber);
  run_cmd->add_flag("--json", run.json, "Print one JSON summary of the run instead of a line per step");

  CleanOptions clean;
  CLI::App* clean_cmd = app.add_subcommand(
      "clean", "List the relations left in the warehouse by removed or renamed models; --apply drops them");
  clean_cmd->add_flag("--apply", clean.apply, "Drop them (default: only list them)");
  clean_cmd->add_flag("--json", clean.json, "Print JSON");

  bool status_json = false;
  CLI::App* status_cmd = app.add_subcommand("status", "Assets, their last materialization and partitions done/missing");
  status_cmd->add_flag("--json", status_json, "Print JSON");

  bool runs_json = false;
  int runs_limit = 20;
  CLI::App* runs_cmd = app.add_subcommand("runs", "Recent runs, newest first");
  runs_cmd->add_flag("--json", runs_json, "Print JSON");
  runs_cmd->add_option("--limit", runs_limit, "How many runs to list")->check(CLI::PositiveNumber);

  bool logs_json = false;
  std::string run_id;
  CLI::App* logs_cmd = app.add_subcommand("logs", "The event log of one run");
  logs_cmd->add_option("run_id", run_id, "Run id (see `sluice runs`)")->required();
  logs_cmd->add_flag("--json", logs_json, "Print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kUsageError;
  }
  if (!project_dir.empty()) global.project_dir = project_dir;
  if (!target.empty()) global.target = target;
  if (!vars.empty()) global.vars_json = vars;
  if (!database.empty()) global.database = database;
  if (!host.empty()) global.host = host;
  if (port != 0) global.port = port;
  if (!username.empty()) global.username = username;
  if (!password.empty()) global.password = password;
  if (!partition.empty()) run.partition = partition;
  if (!from.empty()) run.from = from;
  if (!to.empty()) run.to = to;
  if (wait_opt->count() > 0) run.wait_timeout_seconds = wait_timeout;

  try {
    if (discover_cmd->parsed()) return Discover(global);
    if (compile_cmd->parsed()) return Compile(global, compile);
    if (run_cmd->parsed()) return Run(global, run);
    if (status_cmd->parsed()) return Status(global, status_json);
    if (clean_cmd->parsed()) return Clean(global, clean);
    if (runs_cmd->parsed()) return Runs(global, runs_json, runs_limit);
    if (logs_cmd->parsed()) return Logs(global, run_id, logs_json);
  } catch (const sluice::Error& error) {
    for (const sluice::Diagnostic& diagnostic : error.diagnostics()) {
      std::fprintf(stderr, "%s", sluice::FormatDiagnostic(diagnostic).c_str());
    }
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error[SLU-INTERNAL-001]: %s\n", error.what());
    return 1;
  }
  return kUsageError;
}
