// The orchestrator's commands: `daemon`, `worker`, `workers`, `schedules list|start|stop|preview`, `sensors list|show`
// and `starlake run`. They read the project's pipeline files (`pipelines/*.yml`, orchestrate/pipeline_file.hpp) and its
// state store (`.sluice/state.db`). Registered on `sluice` only: a code program has no pipeline files.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace sluice::cli {

class OrchestrateCommands {
 public:
  // Adds the commands to `app`, and `run` to the `starlake` group.
  OrchestrateCommands(CLI::App& app, CLI::App& starlake);
  // Runs the parsed command, if it is one of these; its exit code.
  std::optional<int> Dispatch(const GlobalOptions& global);

 private:
  void AddDaemon(CLI::App& app);
  void AddWorkers(CLI::App& app);  // worker and workers
  void AddSchedules(CLI::App& app);
  void AddSensors(CLI::App& app);
  void AddStarlakeRun(CLI::App& starlake);

  struct DaemonFlags {
    std::string pipelines;
    int interval_ms = 1000;
    int sensor_interval_s = 30;
    int max_concurrent_runs = 4;
    std::vector<std::string> tag_limits;
    bool wait = false;
    std::string now;
    std::string until;
    bool external_workers = false;
    int worker_stale_after_s = 60;
    int lost_run_retries = 0;
  } daemon_;
  struct WorkerFlags {
    std::string pipelines;
    int max_concurrent_runs = 4;
    std::vector<std::string> tag_limits;
    int heartbeat_ms = 1000;
    bool until_idle = false;
    bool json = false;
  } worker_;
  struct ScheduleFlags {
    std::string pipelines;
    std::string name;
    int count = 5;
    bool json = false;
    int ticks = 10;
  } schedule_;
  struct StarlakeRunFlags {
    std::string pipelines;
    std::string job;
    std::string logical_datetime;
    std::string previous_logical_datetime;
    bool dry_run = false;
    std::string sl_options;
    bool queue = false;
    bool json = false;
  } run_;

  CLI::App* daemon_cmd_ = nullptr;
  CLI::App* worker_cmd_ = nullptr;
  CLI::App* workers_cmd_ = nullptr;
  CLI::App* schedules_list_ = nullptr;
  CLI::App* schedules_start_ = nullptr;
  CLI::App* schedules_stop_ = nullptr;
  CLI::App* schedules_preview_ = nullptr;
  CLI::App* sensors_list_ = nullptr;
  CLI::App* sensors_show_ = nullptr;
  CLI::App* starlake_run_ = nullptr;
};

}  // namespace sluice::cli
