// The Starlake options a job runs with (reference §3), resolved once from a pipeline's `options` into values: the
// environment of the CLI, retries, pre-load gating, and what its dataset sensor needs. Where the CLI runs (the
// executor and its options, SL_STARLAKE_PATH among them) is executor.hpp's.
//
// Resolution (§3): an option's value when present and not an empty string; else its default; else, for options that
// have no default, the environment variable of the same name. Option values may be YAML strings, numbers or booleans;
// a number or boolean reads as its text. Booleans compare case-insensitively with "true" (the original's rule) except
// the pre-load ones, which the original parses strictly: exactly true or false.
//
// Fixes of the original (§12): `ack_wait_timeout` is real (an ACK pre-load waits for the acknowledgement that long,
// see PreloadSettings); the default ACK path's date is the run's logical date, computed per run (AckFilePath), not
// the day the file was loaded.
//
// Errors (sluice::Error, the caller adds the file location): SLU-OPTIONS-001 a value that is not a whole number where
// one is expected, or out of range; SLU-OPTIONS-002 a pre-load boolean that is not true or false; SLU-OPTIONS-003 a
// data_cycle that is neither a preset nor a cron; SLU-OPTIONS-004 a start_date that is not YYYY-MM-DD; SLU-OPTIONS-005
// an unknown time zone; SLU-OPTIONS-006 a retry_jitter that is not none, full or plus_minus; plus ParseSlEnvVar's
// SLU-STARLAKE-007 and preload_gate's SLU-PRELOAD-001…004. Thread-safety: immutable values and pure functions.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sluice/date.hpp"
#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "orchestrate/preload_gate.hpp"
#include "orchestrate/retry_policy.hpp"
#include "orchestrate/starlake_command.hpp"

namespace sluice::orchestrate {

// An error in one option's value, naming the option so a pipeline file can point at it.
class JobOptionError : public Error {
 public:
  JobOptionError(std::string key, std::vector<Diagnostic> diagnostics)
      : Error(std::move(diagnostics)), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

struct PreloadSettings {
  bool sensor = false;                           // pre_load_sensor: poke until ready or timed out
  std::chrono::seconds poke_interval{300};       // pre_load_poke_interval
  std::chrono::seconds timeout{3600};            // pre_load_timeout
  bool soft_fail = false;                        // pre_load_sensor_soft_fail
  std::optional<std::string> sentinel_location;  // pre_load_not_ready_sentinel_path (options only, never env)
  std::optional<std::string> ack_file_path;      // global_ack_file_path; unset: the per-run default (AckFilePath)
  std::chrono::seconds ack_wait_timeout{3600};   // an ACK pre-load not in sensor mode pokes for this long, then skips
};

struct JobOptions {
  StarlakeOptionPairs sl_env;  // sl_env_var, in written order
  // retries (default 1; a value that is not a number gives 1), retry_delay (300 s), and Sluice's
  // retry_exponential_backoff (false), retry_max_delay (3600 s), retry_jitter (none | full | plus_minus)
  RetryPolicy retry;
  PreloadSettings preload;
  std::string triggering_strategy =
      "any";  // dataset_triggering_strategy: any | all (anything else: any, as the original)
  std::optional<std::string> data_cycle;  // a cron: presets hourly/daily/weekly/monthly/yearly mapped; unset when
                                          // data_cycle_enabled is not true or the value is none
  bool beyond_data_cycle_enabled = true;
  bool optional_dataset_enabled = false;
  std::optional<Date> start_date;  // start_date
  std::string timezone = "UTC";    // timezone: the zone of schedules
  int max_parallel_tasks = 4;      // Sluice's: tasks of one run at once (a domain's tables load in parallel)
};

// Resolves `options` (the pipeline's `options` object). Throws the errors above as JobOptionError.
JobOptions ResolveJobOptions(const nlohmann::json& options, const EnvironmentLookup& environment);

// The value of `SL_ROOT` in sl_env (a `file://` prefix removed), else `file://tmp`'s path `/tmp`.
std::string StarlakeRoot(const JobOptions& options);

// The ACK file a run of `domain` waits for: the global_ack_file_path option, else
// `<SL_DATASETS>/pending/<domain>/<logical date>.ack` where SL_DATASETS defaults to `<SL_ROOT>/datasets`.
std::string AckFilePath(const JobOptions& options, const std::string& domain, Date logical_date);

}  // namespace sluice::orchestrate
