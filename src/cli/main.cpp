// The command-line entry point of `sluice` and of code programs (sluice_add_pipeline): parses flags (CLI11),
// dispatches to cli/*_command.cpp, and renders sluice::Error. A code program offers the commands that work on
// definitions and history (run, status, clean, runs, logs, inspect, backfills), not those of SQL-model projects' files
// nor `starlake` and `pipelines`, which read files Starlake generates and the pipeline files made from them.
// Exit codes: 0 ok, 1 failure, 2 usage (a service::RequestError, cli::UsageError among them, or a CLI11 parse error), 130 canceled by a signal (run).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <limits>

#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/deployment_commands.hpp"
#include "cli/deployment_operations_commands.hpp"
#include "cli/orchestrate_commands.hpp"
#include "cli/usage_error.hpp"
#include "core/daily_partitions.hpp"
#include "core/diagnostic.hpp"
#include "core/phase_timer.hpp"
#include "project/config/project_config.hpp"
#include "cli/text_output.hpp"

namespace {

constexpr int kFailure = 1;
constexpr int kUsageError = 2;
constexpr int kMaxInt = std::numeric_limits<int>::max();

// An integer flag whose value is read by ParseIntegerFlag, so a bad one is a UsageError thrown from parse().
CLI::Option* AddIntegerOption(CLI::App& app, const std::string& name, int& value, int min, int max,
                              const std::string& description) {
  auto parse = [&value, name, min, max](const std::string& text) {
    value = sluice::cli::ParseIntegerFlag(name, text, min, max);
  };
  return app.add_option_function<std::string>(name, parse, description)->type_name("INT");
}

// A decimal flag (e.g. seconds) whose value is read by ParseDecimalFlag, like AddIntegerOption.
CLI::Option* AddDecimalOption(CLI::App& app, const std::string& name, double& value, int min, int max,
                              const std::string& description) {
  auto parse = [&value, name, min, max](const std::string& text) {
    value = sluice::cli::ParseDecimalFlag(name, text, min, max);
  };
  return app.add_option_function<std::string>(name, parse, description)->type_name("NUMBER");
}

// The first word among arguments CLI11 could not place: what the user meant as the command.
std::string FirstWord(const std::vector<std::string>& unplaced) {
  for (const std::string& arg : unplaced) {
    if (!arg.empty() && arg.front() != '-') return arg;
  }
  return "";
}

std::vector<std::string> CommandNames(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(command->get_name());
  }
  return names;
}

int Render(const sluice::Error& error, int exit_code) {
  const sluice::TextStyle style = sluice::cli::StyleFor(STDERR_FILENO);
  for (const sluice::Diagnostic& diagnostic : error.diagnostics()) {
    std::fprintf(stderr, "%s", sluice::FormatDiagnostic(diagnostic, style).c_str());
  }
  return exit_code;
}

}  // namespace

namespace sluice::cli {

int Main(int argc, char** argv) {
  sluice::MarkPhase("start");
  const CodeProgram* code = ActiveCodeProgram();
  CLI::App app{code != nullptr
                   ? "A Sluice pipeline built from C++ definitions; its warehouse comes from SEGMENTSTREAM_WAREHOUSE_*"
                   : "Sluice: declarative, partition-aware data pipelines (StreamBuild-compatible projects)",
               code != nullptr ? code->name : "sluice"};
  app.set_version_flag("--version", std::string(kSluiceVersion));
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(
      "Exit codes: 0 success; 1 failure (diagnostics on stderr); 2 usage error (the command was typed wrong: an\n"
      "unknown command or flag, a value that is not valid, a selection or partition key that names nothing);\n"
      "130 canceled by a signal.\n"
      "Colour is used only on a terminal, and never when NO_COLOR is set to a non-empty value.");

  GlobalOptions global;
  std::string project_dir;
  std::string target;
  app.add_option("--project-dir", project_dir,
                 code != nullptr ? "Folder whose .sluice/ holds the run history (default: the working directory)"
                                 : "Project folder (default: nearest folder upward with streambuild_project.toml)");
  auto* target_opt =
      app.add_option("--target", target, "Target to use (default: streambuild_local.toml target, else default_target)");
  std::string vars, database, host, username, password;
  auto* vars_opt = app.add_option("--vars", vars, "One JSON object of project variables; overrides every file's vars");
  auto* connection = app.add_option_group("connection", "Connection overrides (win over STREAMBUILD_CLICKHOUSE_* and the files)");
  connection->add_option("--database", database, "Target database (default namespace)");
  connection->add_option("--host", host, "Warehouse host");
  int port = 0;
  auto* port_opt = AddIntegerOption(*connection, "--port", port, 1, 65535, "Warehouse port");
  connection->add_option("--username", username, "Warehouse user");
  connection->add_option("--password", password,
                         "Warehouse password. Other users of this machine can read it in `ps`: prefer "
                         "STREAMBUILD_CLICKHOUSE_PASSWORD, or `password = \"${ENV:NAME}\"` in the target's connection");

  CLI::App* discover_cmd = app.add_subcommand(
      "discover", "Analyse the project offline and print, per pipeline, its namespace, mode, source and models");
  bool discover_json = false;
  discover_cmd->add_flag("--json", discover_json, "Print the pipelines' names as one JSON array (StreamBuild's output)");

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
  AddIntegerOption(*run_cmd, "--threads", run.threads, 0, kMaxInt, "Steps run in parallel (default: one per core)");
  run_cmd->add_flag("--full-refresh", run.full_refresh,
                    "Rebuild the selected tables whole: partitioned ones from their start date through the last "
                    "complete day (no --partition, --from or --to), seeds reloaded");
  run_cmd->add_flag("--allow-missing-upstream", run.allow_missing_upstream,
                    "Run a step even when an upstream outside the selection was never materialized");
  double wait_timeout = -1;
  auto* wait_opt = AddDecimalOption(*run_cmd, "--wait-timeout", wait_timeout, 0, kMaxInt,
                                    "Seconds to wait for another process holding the warehouse file (default: "
                                    "as long as it takes; 0: do not wait)");
  run_cmd->add_flag("--json", run.json, "Print one JSON summary of the run (or backfill) instead of a line per step");
  AddIntegerOption(*run_cmd, "--max-concurrent-runs", run.max_concurrent_runs, 1, 64,
                   "With --from/--to: chunks of the backfill run at once (default: 2)");
  run_cmd->footer(
      "With --from A --to B over partitioned models, the run is a backfill: recorded with an id, split into runs by\n"
      "each model's backfill_policy (a model with `backfill_policy (multi_run N)` replaces at most N days per run),\n"
      "the runs executed a few at once. `sluice backfills` lists backfills; `sluice backfills resume ID` finishes one\n"
      "that was stopped. --partition, --full-refresh and unpartitioned selections run as one plain run.");

  PlanOptions plan;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "Show what `build` (direct pipelines) or `backfill` (virtual pipelines) would do, read from the warehouse; "
              "changes nothing");
  plan_cmd->add_option("-s,--select", plan.select,
                       "Pipelines or models to build (their downstream is always included); default: everything");
  plan_cmd->add_flag("--json", plan.json, "Print the plan as JSON");
  plan_cmd->add_option("--deployment-id", plan.deployment_id, "Virtual pipelines: plan under this deployment id");
  auto* plan_full = plan_cmd->add_flag("--full-refresh", plan.full_refresh,
                                       "Virtual pipelines: replay the selected roots' whole history (needs --select)");
  auto* plan_start = plan_cmd->add_option("--start-time", plan.start_time,
                                          "Virtual pipelines: keep the history before this UTC time (needs --select)");
  plan_full->excludes(plan_start);

  BuildOptions build;
  CLI::App* build_cmd = app.add_subcommand(
      "build", "Deploy the selected pipelines in direct mode: drop, recreate and replay them from their sources' history");
  build_cmd->add_option("-s,--select", build.select,
                        "Pipelines or models to build (their downstream is always included); default: everything");
  build_cmd->add_flag("--auto-approve", build.auto_approve, "Apply the plan without asking");
  build_cmd->add_option("--confirm", build.confirm, "Confirmation token of a protected pipeline (repeatable)");
  build_cmd->add_flag("--json", build.json, "Print one JSON summary at the end (needs --auto-approve)");
  build_cmd->add_flag("--events", build.events, "Print one JSON object per line as the build goes (needs --auto-approve)");

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
  AddIntegerOption(*runs_cmd, "--limit", runs_limit, 1, kMaxInt, "How many runs to list (default: 20)");

  bool backfills_json = false;
  int backfills_limit = 20;
  CLI::App* backfills_cmd = app.add_subcommand(
      "backfills", "Backfills (`run --from A --to B` over partitioned models), newest first; or show, cancel, resume one");
  backfills_cmd->require_subcommand(0, 1);
  backfills_cmd->add_flag("--json", backfills_json, "Print JSON");
  AddIntegerOption(*backfills_cmd, "--limit", backfills_limit, 1, kMaxInt, "How many backfills to list (default: 20)");
  std::string backfill_id;
  bool show_json = false;
  CLI::App* backfill_show_cmd =
      backfills_cmd->add_subcommand("show", "One backfill: its status, range and every chunk with its run");
  backfill_show_cmd->add_option("backfill_id", backfill_id, "Backfill id (see `sluice backfills`)")->required();
  backfill_show_cmd->add_flag("--json", show_json, "Print JSON");
  CLI::App* backfill_cancel_cmd = backfills_cmd->add_subcommand(
      "cancel",
      "Ask the process running a backfill to stop: it launches no more chunks and lets running ones finish; a "
      "backfill whose process died is canceled at once");
  backfill_cancel_cmd->add_option("backfill_id", backfill_id, "Backfill id")->required();
  BackfillResumeOptions resume;
  CLI::App* backfill_resume_cmd = backfills_cmd->add_subcommand(
      "resume",
      "Run what a stopped, canceled or failed backfill has left: chunks the warehouse ledger shows written are not "
      "run again, and of a chunk only its steps not written yet run");
  backfill_resume_cmd->add_option("backfill_id", resume.backfill_id, "Backfill id")->required();
  AddIntegerOption(*backfill_resume_cmd, "--threads", resume.threads, 0, kMaxInt,
                   "Steps of one chunk run in parallel (default: one per core)");
  AddIntegerOption(*backfill_resume_cmd, "--max-concurrent-runs", resume.max_concurrent_runs, 1, 64,
                   "Chunks run at once (default: as when the backfill was created)");
  backfill_resume_cmd->add_flag("--allow-missing-upstream", resume.allow_missing_upstream,
                                "Run a step even when an upstream outside the selection was never materialized");
  double resume_wait_timeout = -1;
  auto* resume_wait_opt = AddDecimalOption(*backfill_resume_cmd, "--wait-timeout", resume_wait_timeout, 0, kMaxInt,
                                           "Seconds to wait for another process holding the warehouse file");
  backfill_resume_cmd->add_flag("--json", resume.json, "Print one JSON summary at the end");

  bool logs_json = false;
  std::string run_id;
  CLI::App* logs_cmd = app.add_subcommand("logs", "The event log of one run");
  logs_cmd->add_option("run_id", run_id, "Run id (see `sluice runs`)")->required();
  logs_cmd->add_flag("--json", logs_json, "Print JSON");

  TestOptions test;
  CLI::App* test_cmd = app.add_subcommand(
      "test",
      "Run the project's SQL tests (tests/**/*.sql) on the target's warehouse, one query each; print each test's "
      "result and the rows that differ; write the statements run to target/run/tests/. Nothing needs to be "
      "materialized first");
  test_cmd->add_option("paths", test.paths,
                       "Run only the tests in these files or folders (e.g. tests/orders), relative to the project or "
                       "the working directory");
  test_cmd
      ->add_option("-s,--select", test.select,
                   "Run only the tests whose expected models are selected: NAME, pipeline:NAME, model:NAME, "
                   "+NAME (adds upstream). One value per --select (quote several: --select \"a b\"), so "
                   "paths may follow it")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  test_cmd->add_flag("-v,--verbose", test.verbose, "Also print each test's target models and the file it ran");
  test_cmd->add_flag("--json", test.json, "Print one JSON document: every test, its status and its failing rows");
  test_cmd->footer(
      "Exit codes: 0 every test passed; 1 a test failed, or its SQL failed; 2 a path or selection "
      "that names nothing.");

  AuditOptions audit;
  CLI::App* audit_cmd = app.add_subcommand(
      "audit",
      "Run the project's audits (audits/**/*.sql and the audits of MODEL headers) against the materialized "
      "relations; an audit fails when its query returns rows");
  audit_cmd->add_option("-s,--select", audit.select,
                        "Run only the audits that read a selected model: NAME, pipeline:NAME, model:NAME, +NAME "
                        "(adds upstream). Repeatable; default: every audit");
  audit_cmd->add_flag("--force", audit.force,
                      "Also run audits that are deferred: those reading a model not materialized yet, or still "
                      "within its warmup since the last write");
  audit_cmd->add_flag("--json", audit.json, "Print one JSON document: every audit, its status, sample rows, reasons");
  audit_cmd->footer(
      "Exit codes: 0 unless an audit of severity error failed or its SQL failed (then 1); warnings "
      "and deferred audits never fail the command; 2 a selection that names nothing.");

  bool inspect_json = false;
  CLI::App* inspect_cmd = app.add_subcommand(
      "inspect", "Deployment inspection: list the assets and reject what the warehouse IO cannot write exactly; "
                 "never connects");
  inspect_cmd->add_flag("--json", inspect_json, "Print JSON");
  inspect_cmd->footer("Exit codes: 0 every asset passes; 1 an asset is rejected (each rule named).");

  StarlakeImportOptions starlake_import;
  CLI::App* starlake_cmd =
      app.add_subcommand("starlake", "Starlake projects: import what `starlake dag-generate` produces, run one of their jobs");
  starlake_cmd->require_subcommand(1);
  CLI::App* starlake_import_cmd = starlake_cmd->add_subcommand(
      "import",
      "Read a task_deps JSON or a generated Dagster DAG module (.py, read without running Python) and write its "
      "Sluice pipeline file, <DIR>/<pipeline id>.yml (docs/starlake.md), then print where and its job graph: per "
      "job its trigger, nodes and edges, honouring the options the file sets (run_dependencies_first, "
      "pre_load_strategy). With --json, print the job graph as JSON and write nothing");
  starlake_import_cmd->add_option("file", starlake_import.file, "The file (relative to the working directory)")
      ->required();
  starlake_import_cmd->add_option("--output", starlake_import.output,
                                  "Folder of the pipeline file, created if missing (default: pipelines, relative to "
                                  "the working directory)");
  starlake_import_cmd->add_flag("--force", starlake_import.force,
                                "Replace a pipeline file that already exists with other contents");
  starlake_import_cmd->add_flag(
      "--json", starlake_import.json,
      "Print {\"jobs\": [{\"name\", \"nodes\", \"edges\": [[from, to], ...], \"sensor_assets\", \"cron\"}]} and "
      "write nothing");
  starlake_import_cmd->footer(
      "Exit codes: 0 the file was written (or was already up to date), or the graph printed; 1 the file cannot be "
      "read (the error is located), its pipeline file exists with other contents (without --force), or it cannot "
      "be written. Nothing is written on an error.");

  PipelinesValidateOptions pipelines_validate;
  CLI::App* pipelines_cmd =
      app.add_subcommand("pipelines", "Sluice pipeline files (what `sluice starlake import` writes)");
  pipelines_cmd->require_subcommand(1);
  CLI::App* pipelines_validate_cmd = pipelines_cmd->add_subcommand(
      "validate",
      "Read every *.yml and *.yaml file of a folder as a pipeline file and print each one's jobs, or every file's "
      "errors, located file:line:col");
  pipelines_validate_cmd->add_option("dir", pipelines_validate.dir,
                                     "The folder (default: pipelines, relative to the working directory)");
  pipelines_validate_cmd->add_flag("--json", pipelines_validate.json,
                                   "Print the job graph of all the files as one {\"jobs\": [...]} document");
  pipelines_validate_cmd->footer("Exit codes: 0 every file is valid; 1 a file has an error, or the folder cannot be read.");

  std::optional<OrchestrateCommands> orchestrate_commands;
  if (code == nullptr) orchestrate_commands.emplace(app, *starlake_cmd);
  CLI::App* deployment_cmd =
      app.add_subcommand("deployment", "Staged deployments: list, show, diff, audit, promote, rollback");
  deployment_cmd->require_subcommand(1);
  std::optional<DeploymentCommands> deployment_commands;
  std::optional<DeploymentOperationsCommands> deployment_operations_commands;
  if (code == nullptr) {
    deployment_commands.emplace(app, *audit_cmd, *deployment_cmd);
    deployment_operations_commands.emplace(app, *deployment_cmd);
  }

  if (code != nullptr) {  // the commands over a project's files, and their flags, are sluice's
    // Removing destroys them (and their children): each pointer is cleared so nothing reads them after.
    for (CLI::App** command : {&discover_cmd, &compile_cmd, &plan_cmd, &build_cmd, &test_cmd, &audit_cmd, &starlake_cmd,
                               &pipelines_cmd, &deployment_cmd}) {
      app.remove_subcommand(*command);
      *command = nullptr;
    }
    starlake_import_cmd = nullptr;
    pipelines_validate_cmd = nullptr;
    app.remove_option(target_opt);
    app.remove_option(vars_opt);
    app.remove_subcommand(connection);  // an option group is a subcommand to CLI11
    port_opt = nullptr;
  }
  auto parsed = [](const CLI::App* command) { return command != nullptr && command->parsed(); };

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::RequiredError& e) {
      if (!app.get_subcommands().empty()) {
        app.exit(e);
        return kUsageError;
      }
      throw UnknownCommand(FirstWord(app.remaining()), CommandNames(app));
    } catch (const CLI::ParseError& e) {
      app.exit(e);
      return kUsageError;
    }
    if (!project_dir.empty()) global.project_dir = project_dir;
    if (!target.empty()) global.target = target;
    if (!vars.empty()) {
      CheckingArguments([&] { return ParseVarsOverride(vars); });
      global.vars_json = vars;
    }
    if (!database.empty()) global.database = database;
    if (!host.empty()) global.host = host;
    if (port_opt != nullptr && port_opt->count() > 0) global.port = port;
    if (!username.empty()) global.username = username;
    if (!password.empty()) global.password = password;
    if (partition_opt->count() > 0) run.partition = partition;
    if (from_opt->count() > 0) run.from = from;
    if (to_opt->count() > 0) run.to = to;
    if (wait_opt->count() > 0) run.wait_timeout_seconds = wait_timeout;
    if (resume_wait_opt->count() > 0) resume.wait_timeout_seconds = resume_wait_timeout;
    if (run.partition || run.from) {  // their form and order; each model checks its own range when it runs
      CheckingArguments([&] {
        return sluice::KeyRangeWindow(run.partition.value_or(run.from.value_or("")),
                                      run.partition.value_or(run.to.value_or("")));
      });
    }

    if (deployment_commands) {  // before `audit`, whose `backfill` subcommand is theirs
      if (std::optional<int> exit_code = deployment_commands->Dispatch(global)) return *exit_code;
    }
    if (parsed(discover_cmd)) return Discover(global, discover_json);
    if (parsed(compile_cmd)) return Compile(global, compile);
    if (parsed(run_cmd)) return Run(global, run);
    if (parsed(status_cmd)) return Status(global, status_json);
    if (parsed(clean_cmd)) return Clean(global, clean);
    if (parsed(runs_cmd)) return Runs(global, runs_json, runs_limit);
    if (parsed(logs_cmd)) return Logs(global, run_id, logs_json);
    if (parsed(backfill_show_cmd)) return BackfillShow(global, backfill_id, show_json || backfills_json);
    if (parsed(backfill_cancel_cmd)) return BackfillCancel(global, backfill_id);
    if (parsed(backfill_resume_cmd)) return BackfillResume(global, resume);
    if (parsed(backfills_cmd)) return Backfills(global, backfills_json, backfills_limit);
    if (parsed(plan_cmd)) return Plan(global, plan);
    if (parsed(build_cmd)) return Build(global, build);
    if (parsed(test_cmd)) return Test(global, test);
    if (parsed(audit_cmd)) return Audit(global, audit);
    if (parsed(inspect_cmd)) return Inspect(global, inspect_json);
    // A code program removed (and so destroyed) the starlake and pipelines groups: their pointers are read only in
    // `sluice`.
    if (parsed(starlake_import_cmd)) return StarlakeImport(starlake_import);
    if (parsed(pipelines_validate_cmd)) return PipelinesValidate(pipelines_validate);
    if (orchestrate_commands) {
      if (std::optional<int> exit_code = orchestrate_commands->Dispatch(global)) return *exit_code;
    }
    if (deployment_operations_commands) {
      if (std::optional<int> exit_code = deployment_operations_commands->Dispatch(global)) return *exit_code;
    }
  } catch (const service::RequestError& error) {  // a UsageError, or an operation refusing the request's values
    return Render(error, kUsageError);
  } catch (const sluice::Error& error) {
    return Render(error, kFailure);
  } catch (const std::exception& error) {
    return Render(sluice::Error(sluice::Diagnostic{"SLU-INTERNAL-001", error.what(), {}, "", {}}), kFailure);
  }
  return kUsageError;
}

}  // namespace sluice::cli
