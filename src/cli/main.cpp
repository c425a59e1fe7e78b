// The command-line entry point of `sluice` and of code programs (sluice_add_pipeline): registers every command's
// flags (CLI11), dispatches to cli/*_command.cpp, and renders sluice::Error. A code program offers the commands that
// work on definitions and history (run, status, clean, runs, logs, inspect, backfills), not those of SQL-model
// projects' files nor `starlake` and `pipelines`, which read files Starlake generates and the pipeline files made from
// them. Exit codes: 0 ok, 1 failure, 2 usage (a service::RequestError, cli::UsageError among them, or a CLI11 parse
// error), 130 canceled by a signal.
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
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/daily_partitions.hpp"
#include "core/diagnostic.hpp"
#include "core/phase_timer.hpp"

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

namespace {

// Every flag of the commands registered here, as parsed, and the commands themselves (nullptr when not offered:
// a code program has no project-file commands).
struct Flags {
  std::string project_dir, target, vars, database, host, username, password;
  int port = 0;
  CLI::Option* port_option = nullptr;

  CLI::App* discover = nullptr;
  bool discover_json = false;
  CLI::App* compile = nullptr;
  CompileOptions compile_options;

  CLI::App* run = nullptr;
  RunOptions run_options;
  std::string partition, from, to;
  double wait_timeout = -1;
  CLI::Option *partition_option = nullptr, *from_option = nullptr, *to_option = nullptr, *wait_option = nullptr;

  CLI::App* plan = nullptr;
  PlanOptions plan_options;
  CLI::App* build = nullptr;
  BuildOptions build_options;

  CLI::App *clean = nullptr, *status = nullptr, *runs = nullptr, *logs = nullptr;
  CleanOptions clean_options;
  bool status_json = false, runs_json = false, logs_json = false;
  int runs_limit = 20;
  std::string run_id;

  CLI::App *backfills = nullptr, *backfill_show = nullptr, *backfill_cancel = nullptr, *backfill_resume = nullptr;
  bool backfills_json = false, show_json = false;
  int backfills_limit = 20;
  std::string backfill_id;
  BackfillResumeOptions resume;
  double resume_wait_timeout = -1;
  CLI::Option* resume_wait_option = nullptr;

  CLI::App *test = nullptr, *audit = nullptr, *inspect = nullptr;
  TestOptions test_options;
  AuditOptions audit_options;
  bool inspect_json = false;

  CLI::App *starlake = nullptr, *starlake_import = nullptr, *pipelines_validate = nullptr;
  StarlakeImportOptions starlake_import_options;
  PipelinesValidateOptions pipelines_validate_options;
};

void ConfigureApp(CLI::App& app) {
  app.set_version_flag("--version", std::string(kSluiceVersion));
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(
      "Exit codes: 0 success; 1 failure (diagnostics on stderr); 2 usage error (the command was typed wrong: an\n"
      "unknown command or flag, a value that is not valid, a selection or partition key that names nothing);\n"
      "130 canceled by a signal.\n"
      "Colour is used only on a terminal, and never when NO_COLOR is set to a non-empty value.");
}

void AddGlobalFlags(CLI::App& app, Flags& flags, bool code_program) {
  app.add_option("--project-dir", flags.project_dir,
                 code_program ? "Folder whose .sluice/ holds the run history (default: the working directory)"
                              : "Project folder (default: nearest folder upward with streambuild_project.toml)");
  if (code_program) return;  // the target, vars and connection of a code program come from SEGMENTSTREAM_WAREHOUSE_*
  app.add_option("--target", flags.target,
                 "Target to use (default: streambuild_local.toml target, else default_target)");
  app.add_option("--vars", flags.vars, "One JSON object of project variables; overrides every file's vars");
  auto* connection =
      app.add_option_group("connection", "Connection overrides (win over STREAMBUILD_CLICKHOUSE_* and the files)");
  connection->add_option("--database", flags.database, "Target database (default namespace)");
  connection->add_option("--host", flags.host, "Warehouse host");
  flags.port_option = AddIntegerOption(*connection, "--port", flags.port, 1, 65535, "Warehouse port");
  connection->add_option("--username", flags.username, "Warehouse user");
  connection->add_option("--password", flags.password,
                         "Warehouse password. Other users of this machine can read it in `ps`: prefer "
                         "STREAMBUILD_CLICKHOUSE_PASSWORD, or `password = \"${ENV:NAME}\"` in the target's connection");
}

void AddProjectFileCommands(CLI::App& app, Flags& flags) {
  flags.discover = app.add_subcommand(
      "discover", "Analyse the project offline and print, per pipeline, its namespace, mode, source and models");
  flags.discover->add_flag("--json", flags.discover_json,
                           "Print the pipelines' names as one JSON array (StreamBuild's output)");
  flags.compile =
      app.add_subcommand("compile", "Check the project and write target/manifest.json and target/streambuild_dag.json");
  flags.compile->add_option("--target-dir", flags.compile_options.target_dir,
                            "Write artifacts here instead of <project>/target");
}

void AddRunCommand(CLI::App& app, Flags& flags) {
  RunOptions& run = flags.run_options;
  CLI::App* command = flags.run =
      app.add_subcommand("run", "Materialize the selected assets (direct mode) into the warehouse");
  command->add_option("-s,--select", run.select,
                      "What to run: NAME (pipeline, then model, then source), pipeline:NAME, model:NAME, ns.name; "
                      "+NAME adds upstream, NAME+ downstream. Repeatable; default: everything");
  flags.partition_option =
      command->add_option("--partition", flags.partition, "Run one daily partition key (YYYY-MM-DD)");
  flags.from_option = command->add_option("--from", flags.from, "First partition key of an inclusive range");
  flags.to_option = command->add_option("--to", flags.to, "Last partition key of an inclusive range");
  flags.partition_option->excludes(flags.from_option)->excludes(flags.to_option);
  flags.from_option->needs(flags.to_option);
  flags.to_option->needs(flags.from_option);
  AddIntegerOption(*command, "--threads", run.threads, 0, kMaxInt, "Steps run in parallel (default: one per core)");
  command->add_flag("--full-refresh", run.full_refresh,
                    "Rebuild the selected tables whole: partitioned ones from their start date through the last "
                    "complete day (no --partition, --from or --to), seeds reloaded");
  command->add_flag("--allow-missing-upstream", run.allow_missing_upstream,
                    "Run a step even when an upstream outside the selection was never materialized");
  flags.wait_option = AddDecimalOption(*command, "--wait-timeout", flags.wait_timeout, 0, kMaxInt,
                                       "Seconds to wait for another process holding the warehouse file (default: "
                                       "as long as it takes; 0: do not wait)");
  command->add_flag("--json", run.json, "Print one JSON summary of the run (or backfill) instead of a line per step");
  AddIntegerOption(*command, "--max-concurrent-runs", run.max_concurrent_runs, 1, 64,
                   "With --from/--to: chunks of the backfill run at once (default: 2)");
  command->footer(
      "With --from A --to B over partitioned models, the run is a backfill: recorded with an id, split into runs by\n"
      "each model's backfill_policy (a model with `backfill_policy (multi_run N)` replaces at most N days per run),\n"
      "the runs executed a few at once. `sluice backfills` lists backfills; `sluice backfills resume ID` finishes one\n"
      "that was stopped. --partition, --full-refresh and unpartitioned selections run as one plain run.");
}

void AddDirectDeployCommands(CLI::App& app, Flags& flags) {
  PlanOptions& plan = flags.plan_options;
  flags.plan = app.add_subcommand(
      "plan",
      "Show what `build` (direct pipelines) or `backfill` (virtual pipelines) would do, read from the warehouse; "
      "changes nothing");
  flags.plan->add_option("-s,--select", plan.select,
                         "Pipelines or models to build (their downstream is always included); default: everything");
  flags.plan->add_flag("--json", plan.json, "Print the plan as JSON");
  flags.plan->add_option("--deployment-id", plan.deployment_id, "Virtual pipelines: plan under this deployment id");
  auto* full = flags.plan->add_flag("--full-refresh", plan.full_refresh,
                                    "Virtual pipelines: replay the selected roots' whole history (needs --select)");
  auto* start = flags.plan->add_option("--start-time", plan.start_time,
                                       "Virtual pipelines: keep the history before this UTC time (needs --select)");
  full->excludes(start);

  BuildOptions& build = flags.build_options;
  flags.build = app.add_subcommand(
      "build",
      "Deploy the selected pipelines in direct mode: drop, recreate and replay them from their sources' history");
  flags.build->add_option("-s,--select", build.select,
                          "Pipelines or models to build (their downstream is always included); default: everything");
  flags.build->add_flag("--auto-approve", build.auto_approve, "Apply the plan without asking");
  flags.build->add_option("--confirm", build.confirm, "Confirmation token of a protected pipeline (repeatable)");
  flags.build->add_flag("--json", build.json, "Print one JSON summary at the end (needs --auto-approve)");
  flags.build->add_flag("--events", build.events,
                        "Print one JSON object per line as the build goes (needs --auto-approve)");
}

void AddHistoryCommands(CLI::App& app, Flags& flags) {  // clean, status, runs
  flags.clean = app.add_subcommand(
      "clean", "List the relations left in the warehouse by removed or renamed models; --apply drops them");
  flags.clean->add_flag("--apply", flags.clean_options.apply, "Drop them (default: only list them)");
  flags.clean->add_flag("--json", flags.clean_options.json, "Print JSON");
  flags.status = app.add_subcommand("status", "Assets, their last materialization and partitions done/missing");
  flags.status->add_flag("--json", flags.status_json, "Print JSON");
  flags.runs = app.add_subcommand("runs", "Recent runs, newest first");
  flags.runs->add_flag("--json", flags.runs_json, "Print JSON");
  AddIntegerOption(*flags.runs, "--limit", flags.runs_limit, 1, kMaxInt, "How many runs to list (default: 20)");
}

void AddLogsCommand(CLI::App& app, Flags& flags) {
  flags.logs = app.add_subcommand("logs", "The event log of one run");
  flags.logs->add_option("run_id", flags.run_id, "Run id (see `sluice runs`)")->required();
  flags.logs->add_flag("--json", flags.logs_json, "Print JSON");
}

void AddBackfillCommands(CLI::App& app, Flags& flags) {
  CLI::App* group = flags.backfills = app.add_subcommand(
      "backfills",
      "Backfills (`run --from A --to B` over partitioned models), newest first; or show, cancel, resume one");
  group->require_subcommand(0, 1);
  group->add_flag("--json", flags.backfills_json, "Print JSON");
  AddIntegerOption(*group, "--limit", flags.backfills_limit, 1, kMaxInt, "How many backfills to list (default: 20)");
  flags.backfill_show = group->add_subcommand("show", "One backfill: its status, range and every chunk with its run");
  flags.backfill_show->add_option("backfill_id", flags.backfill_id, "Backfill id (see `sluice backfills`)")->required();
  flags.backfill_show->add_flag("--json", flags.show_json, "Print JSON");
  flags.backfill_cancel = group->add_subcommand(
      "cancel",
      "Ask the process running a backfill to stop: it launches no more chunks and lets running ones finish; a "
      "backfill whose process died is canceled at once");
  flags.backfill_cancel->add_option("backfill_id", flags.backfill_id, "Backfill id")->required();
  BackfillResumeOptions& resume = flags.resume;
  CLI::App* command = flags.backfill_resume = group->add_subcommand(
      "resume",
      "Run what a stopped, canceled or failed backfill has left: chunks the warehouse ledger shows written are not "
      "run again, and of a chunk only its steps not written yet run");
  command->add_option("backfill_id", resume.backfill_id, "Backfill id")->required();
  AddIntegerOption(*command, "--threads", resume.threads, 0, kMaxInt,
                   "Steps of one chunk run in parallel (default: one per core)");
  AddIntegerOption(*command, "--max-concurrent-runs", resume.max_concurrent_runs, 1, 64,
                   "Chunks run at once (default: as when the backfill was created)");
  command->add_flag("--allow-missing-upstream", resume.allow_missing_upstream,
                    "Run a step even when an upstream outside the selection was never materialized");
  flags.resume_wait_option = AddDecimalOption(*command, "--wait-timeout", flags.resume_wait_timeout, 0, kMaxInt,
                                              "Seconds to wait for another process holding the warehouse file");
  command->add_flag("--json", resume.json, "Print one JSON summary at the end");
}

void AddTestCommand(CLI::App& app, Flags& flags) {
  TestOptions& test = flags.test_options;
  flags.test = app.add_subcommand(
      "test",
      "Run the project's SQL tests (tests/**/*.sql) on the target's warehouse, one query each; print each test's "
      "result and the rows that differ; write the statements run to target/run/tests/. Nothing needs to be "
      "materialized first");
  flags.test->add_option("paths", test.paths,
                         "Run only the tests in these files or folders (e.g. tests/orders), relative to the project "
                         "or the working directory");
  flags.test
      ->add_option("-s,--select", test.select,
                   "Run only the tests whose expected models are selected: NAME, pipeline:NAME, model:NAME, "
                   "+NAME (adds upstream). One value per --select (quote several: --select \"a b\"), so "
                   "paths may follow it")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  flags.test->add_flag("-v,--verbose", test.verbose, "Also print each test's target models and the file it ran");
  flags.test->add_flag("--json", test.json, "Print one JSON document: every test, its status and its failing rows");
  flags.test->footer(
      "Exit codes: 0 every test passed; 1 a test failed, or its SQL failed; 2 a path or selection "
      "that names nothing.");
}

void AddAuditAndInspectCommands(CLI::App& app, Flags& flags, bool code_program) {
  if (!code_program) {
    AuditOptions& audit = flags.audit_options;
    flags.audit = app.add_subcommand(
        "audit",
        "Run the project's audits (audits/**/*.sql and the audits of MODEL headers) against the materialized "
        "relations; an audit fails when its query returns rows");
    flags.audit->add_option("-s,--select", audit.select,
                            "Run only the audits that read a selected model: NAME, pipeline:NAME, model:NAME, +NAME "
                            "(adds upstream). Repeatable; default: every audit");
    flags.audit->add_flag("--force", audit.force,
                          "Also run audits that are deferred: those reading a model not materialized yet, or still "
                          "within its warmup since the last write");
    flags.audit->add_flag("--json", audit.json,
                          "Print one JSON document: every audit, its status, sample rows, reasons");
    flags.audit->footer(
        "Exit codes: 0 unless an audit of severity error failed or its SQL failed (then 1); warnings "
        "and deferred audits never fail the command; 2 a selection that names nothing.");
  }
  flags.inspect = app.add_subcommand(
      "inspect",
      "Deployment inspection: list the assets and reject what the warehouse IO cannot write exactly; "
      "never connects");
  flags.inspect->add_flag("--json", flags.inspect_json, "Print JSON");
  flags.inspect->footer("Exit codes: 0 every asset passes; 1 an asset is rejected (each rule named).");
}

void AddStarlakeImportCommand(CLI::App& app, Flags& flags) {
  StarlakeImportOptions& options = flags.starlake_import_options;
  flags.starlake = app.add_subcommand(
      "starlake", "Starlake projects: import what `starlake dag-generate` produces, run one of their jobs");
  flags.starlake->require_subcommand(1);
  CLI::App* command = flags.starlake_import = flags.starlake->add_subcommand(
      "import",
      "Read a task_deps JSON or a generated Dagster DAG module (.py, read without running Python) and write its "
      "Sluice pipeline file, <DIR>/<pipeline id>.yml (docs/starlake.md), then print where and its job graph: per "
      "job its trigger, nodes and edges, honouring the options the file sets (run_dependencies_first, "
      "pre_load_strategy). With --json, print the job graph as JSON and write nothing");
  command->add_option("file", options.file, "The file (relative to the working directory)")->required();
  command->add_option("--output", options.output,
                      "Folder of the pipeline file, created if missing (default: pipelines, relative to the working "
                      "directory)");
  command->add_flag("--force", options.force, "Replace a pipeline file that already exists with other contents");
  command->add_flag("--json", options.json,
                    "Print {\"jobs\": [{\"name\", \"nodes\", \"edges\": [[from, to], ...], \"sensor_assets\", "
                    "\"cron\"}]} and write nothing");
  command->footer(
      "Exit codes: 0 the file was written (or was already up to date), or the graph printed; 1 the file cannot be "
      "read (the error is located), its pipeline file exists with other contents (without --force), or it cannot "
      "be written. Nothing is written on an error.");
}

void AddPipelinesValidateCommand(CLI::App& app, Flags& flags) {
  PipelinesValidateOptions& options = flags.pipelines_validate_options;
  CLI::App* group = app.add_subcommand("pipelines", "Sluice pipeline files (what `sluice starlake import` writes)");
  group->require_subcommand(1);
  flags.pipelines_validate = group->add_subcommand(
      "validate",
      "Read every *.yml and *.yaml file of a folder as a pipeline file and print each one's jobs, or every file's "
      "errors, located file:line:col");
  flags.pipelines_validate->add_option("dir", options.dir,
                                       "The folder (default: pipelines, relative to the working directory)");
  flags.pipelines_validate->add_flag("--json", options.json,
                                     "Print the job graph of all the files as one {\"jobs\": [...]} document");
  flags.pipelines_validate->footer(
      "Exit codes: 0 every file is valid; 1 a file has an error, or the folder cannot be read.");
}

// The global options, and the run flags whose meaning depends on whether they were given. Throws UsageError for a
// malformed --vars or partition key.
GlobalOptions ReadFlags(Flags& flags) {
  GlobalOptions global;
  if (!flags.project_dir.empty()) global.project_dir = flags.project_dir;
  if (!flags.target.empty()) global.target = flags.target;
  if (!flags.vars.empty()) {
    service::CheckVarsOverride(flags.vars);
    global.vars_json = flags.vars;
  }
  if (!flags.database.empty()) global.database = flags.database;
  if (!flags.host.empty()) global.host = flags.host;
  if (flags.port_option != nullptr && flags.port_option->count() > 0) global.port = flags.port;
  if (!flags.username.empty()) global.username = flags.username;
  if (!flags.password.empty()) global.password = flags.password;
  RunOptions& run = flags.run_options;
  if (flags.partition_option->count() > 0) run.partition = flags.partition;
  if (flags.from_option->count() > 0) run.from = flags.from;
  if (flags.to_option->count() > 0) run.to = flags.to;
  if (flags.wait_option->count() > 0) run.wait_timeout_seconds = flags.wait_timeout;
  if (flags.resume_wait_option->count() > 0) flags.resume.wait_timeout_seconds = flags.resume_wait_timeout;
  if (run.partition || run.from) {  // their form and order; each model checks its own range when it runs
    CheckingArguments([&] {
      return sluice::KeyRangeWindow(run.partition.value_or(run.from.value_or("")),
                                    run.partition.value_or(run.to.value_or("")));
    });
  }
  return global;
}

bool Parsed(const CLI::App* command) { return command != nullptr && command->parsed(); }

// The exit code of the command registered in `flags` that was parsed, if one was.
std::optional<int> Dispatch(Flags& flags, const GlobalOptions& global) {
  if (Parsed(flags.discover)) return Discover(global, flags.discover_json);
  if (Parsed(flags.compile)) return Compile(global, flags.compile_options);
  if (Parsed(flags.run)) return Run(global, flags.run_options);
  if (Parsed(flags.status)) return Status(global, flags.status_json);
  if (Parsed(flags.clean)) return Clean(global, flags.clean_options);
  if (Parsed(flags.runs)) return Runs(global, flags.runs_json, flags.runs_limit);
  if (Parsed(flags.logs)) return Logs(global, flags.run_id, flags.logs_json);
  if (Parsed(flags.backfill_show))
    return BackfillShow(global, flags.backfill_id, flags.show_json || flags.backfills_json);
  if (Parsed(flags.backfill_cancel)) return BackfillCancel(global, flags.backfill_id);
  if (Parsed(flags.backfill_resume)) return BackfillResume(global, flags.resume);
  if (Parsed(flags.backfills)) return Backfills(global, flags.backfills_json, flags.backfills_limit);
  if (Parsed(flags.plan)) return Plan(global, flags.plan_options);
  if (Parsed(flags.build)) return Build(global, flags.build_options);
  if (Parsed(flags.test)) return Test(global, flags.test_options);
  if (Parsed(flags.audit)) return Audit(global, flags.audit_options);
  if (Parsed(flags.inspect)) return Inspect(global, flags.inspect_json);
  if (Parsed(flags.starlake_import)) return StarlakeImport(flags.starlake_import_options);
  if (Parsed(flags.pipelines_validate)) return PipelinesValidate(flags.pipelines_validate_options);
  return std::nullopt;
}

// Parses the command line; the exit code when parsing ends the process (help, version, a usage error).
std::optional<int> Parse(CLI::App& app, int argc, char** argv) {
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
  return std::nullopt;
}

}  // namespace

int Main(int argc, char** argv) {
  sluice::MarkPhase("start");
  const CodeProgram* code = ActiveCodeProgram();
  CLI::App app{code != nullptr
                   ? "A Sluice pipeline built from C++ definitions; its warehouse comes from SEGMENTSTREAM_WAREHOUSE_*"
                   : "Sluice: declarative, partition-aware data pipelines (StreamBuild-compatible projects)",
               code != nullptr ? code->name : "sluice"};
  ConfigureApp(app);
  Flags flags;
  AddGlobalFlags(app, flags, code != nullptr);
  // A code program offers the commands over definitions and history, not those over a project's files.
  if (code == nullptr) AddProjectFileCommands(app, flags);
  AddRunCommand(app, flags);
  if (code == nullptr) AddDirectDeployCommands(app, flags);
  AddHistoryCommands(app, flags);
  AddBackfillCommands(app, flags);
  AddLogsCommand(app, flags);
  if (code == nullptr) AddTestCommand(app, flags);
  AddAuditAndInspectCommands(app, flags, code != nullptr);
  std::optional<OrchestrateCommands> orchestrate_commands;
  std::optional<DeploymentCommands> deployment_commands;
  std::optional<DeploymentOperationsCommands> deployment_operations_commands;
  if (code == nullptr) {
    AddStarlakeImportCommand(app, flags);
    AddPipelinesValidateCommand(app, flags);
    orchestrate_commands.emplace(app, *flags.starlake);
    CLI::App* deployment =
        app.add_subcommand("deployment", "Staged deployments: list, show, diff, audit, promote, rollback");
    deployment->require_subcommand(1);
    deployment_commands.emplace(app, *flags.audit, *deployment);
    deployment_operations_commands.emplace(app, *deployment);
  }
  try {
    if (std::optional<int> exit_code = Parse(app, argc, argv)) return *exit_code;
    const GlobalOptions global = ReadFlags(flags);
    std::optional<int> exit_code;
    if (deployment_commands) exit_code = deployment_commands->Dispatch(global);  // before `audit`: `audit backfill`
    if (!exit_code) exit_code = Dispatch(flags, global);
    if (!exit_code && orchestrate_commands) exit_code = orchestrate_commands->Dispatch(global);
    if (!exit_code && deployment_operations_commands) exit_code = deployment_operations_commands->Dispatch(global);
    return exit_code.value_or(kUsageError);
  } catch (const service::RequestError& error) {  // a UsageError, or an operation refusing the request's values
    return Render(error, kUsageError);
  } catch (const sluice::Error& error) {
    return Render(error, kFailure);
  } catch (const std::exception& error) {
    return Render(sluice::Error(sluice::Diagnostic{"SLU-INTERNAL-001", error.what(), {}, "", {}}), kFailure);
  }
}

}  // namespace sluice::cli
