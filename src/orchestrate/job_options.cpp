#include "orchestrate/job_options.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/text.hpp"
#include "core/time_zone.hpp"

namespace sluice::orchestrate {

namespace {

Error OptionError(const char* code, const std::string& message, const std::string& hint) {
  return Error(Diagnostic{code, message, {}, hint, {}});
}

// The §3 rule with the environment step: only options without a default consult it.
std::optional<std::string> OptionOrEnvironment(const nlohmann::json& options, const std::string& key,
                                               const EnvironmentLookup& environment) {
  if (std::optional<std::string> text = OptionText(options, key)) return text;
  return OptionVariable(environment, key);
}

int64_t WholeNumber(const std::string& key, const std::string& text, int64_t minimum) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [rest, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || rest != end || value < minimum) {
    throw OptionError(
        "SLU-OPTIONS-001",
        "option " + key + " is \"" + text + "\"; expected a whole number of at least " + std::to_string(minimum),
        "write it as digits, e.g. " + key + ": 300");
  }
  return value;
}

std::chrono::seconds Seconds(const nlohmann::json& options, const std::string& key, std::chrono::seconds fallback,
                             int64_t minimum) {
  std::optional<std::string> text = OptionText(options, key);
  return text ? std::chrono::seconds(WholeNumber(key, *text, minimum)) : fallback;
}

bool LooseBool(const nlohmann::json& options, const std::string& key, bool fallback) {
  std::optional<std::string> text = OptionText(options, key);
  return text ? AsciiLower(*text) == "true" : fallback;
}

bool StrictBool(const nlohmann::json& options, const std::string& key, bool fallback) {
  std::optional<std::string> text = OptionText(options, key);
  if (!text) return fallback;
  std::string lowered = AsciiLower(*text);
  if (lowered == "true") return true;
  if (lowered == "false") return false;
  throw OptionError("SLU-OPTIONS-002", "option " + key + " is \"" + *text + "\"; expected true or false",
                    "the pre-load options are read strictly, so a typo does not silently turn a sensor off");
}

std::optional<std::string> DataCycle(const nlohmann::json& options) {
  if (!LooseBool(options, "data_cycle_enabled", false)) return std::nullopt;
  std::optional<std::string> text = OptionText(options, "data_cycle");
  if (!text) return std::nullopt;
  const std::string lowered = AsciiLower(*text);
  if (lowered == "none") return std::nullopt;
  if (lowered == "hourly") return "0 * * * *";
  if (lowered == "daily") return "0 0 * * *";
  if (lowered == "weekly") return "0 0 * * 0";
  if (lowered == "monthly") return "0 0 1 * *";
  if (lowered == "yearly") return "0 0 1 1 *";
  try {
    CronSchedule::Parse(*text);
  } catch (const Error& error) {
    throw OptionError("SLU-OPTIONS-003",
                      "option data_cycle is \"" + *text + "\": " + error.diagnostics().front().message,
                      "use none, hourly, daily, weekly, monthly, yearly or a 5-field cron");
  }
  return *text;
}

}  // namespace

JobOptions ResolveJobOptions(const nlohmann::json& options, const EnvironmentLookup& environment) {
  JobOptions resolved;
  // Runs one option's resolution; its error becomes a JobOptionError naming the option.
  auto option = [](const char* key, auto&& resolve) {
    try {
      resolve();
    } catch (const JobOptionError&) {
      throw;
    } catch (const Error& error) {
      throw JobOptionError(key, error.diagnostics());
    }
  };
  option("sl_env_var", [&] {
    if (std::optional<std::string> env = OptionText(options, "sl_env_var")) resolved.sl_env = ParseSlEnvVar(*env);
  });
  // The original reads a retries value that is not a number as 1; a negative one is an error here.
  option("retries", [&] {
    std::optional<std::string> retries = OptionText(options, "retries");
    if (!retries) return;
    int64_t value = 0;
    const char* end = retries->data() + retries->size();
    auto [rest, error] = std::from_chars(retries->data(), end, value);
    resolved.retry.retries =
        error == std::errc() && rest == end ? static_cast<int>(WholeNumber("retries", *retries, 0)) : 1;
  });
  option("retry_delay", [&] { resolved.retry.delay = Seconds(options, "retry_delay", std::chrono::seconds(300), 0); });
  // Sluice's keys: Dagster's RetryPolicy backoff and jitter, which the original never set.
  resolved.retry.exponential = LooseBool(options, "retry_exponential_backoff", false);
  option("retry_max_delay", [&] {
    resolved.retry.max_delay = Seconds(options, "retry_max_delay", std::chrono::seconds(3600), 0);
    resolved.retry.Validate();
  });
  option("retry_jitter", [&] {
    std::optional<std::string> jitter = OptionText(options, "retry_jitter");
    if (!jitter) return;
    const std::string lowered = AsciiLower(*jitter);
    if (lowered == "none") {
      resolved.retry.jitter = RetryJitter::kNone;
    } else if (lowered == "full") {
      resolved.retry.jitter = RetryJitter::kFull;
    } else if (lowered == "plus_minus") {
      resolved.retry.jitter = RetryJitter::kPlusMinus;
    } else {
      throw OptionError("SLU-OPTIONS-006", "option retry_jitter is \"" + *jitter + "\"",
                        "use none, full (a delay drawn in [0, d]) or plus_minus (d ± d/2)");
    }
  });

  PreloadSettings& preload = resolved.preload;
  option("pre_load_sensor", [&] { preload.sensor = StrictBool(options, "pre_load_sensor", false); });
  option("pre_load_poke_interval",
         [&] { preload.poke_interval = Seconds(options, "pre_load_poke_interval", std::chrono::seconds(300), 1); });
  option("pre_load_timeout", [&] {
    preload.timeout = Seconds(options, "pre_load_timeout", std::chrono::seconds(3600), 1);
    PokeOffsets(preload.poke_interval, preload.timeout);  // throws SLU-PRELOAD-004 for a timeout below the interval
  });
  option("pre_load_sensor_soft_fail",
         [&] { preload.soft_fail = StrictBool(options, "pre_load_sensor_soft_fail", false); });
  preload.sentinel_location = OptionText(options, "pre_load_not_ready_sentinel_path");
  option("pre_load_not_ready_sentinel_path", [&] {
    // The scheme and absoluteness rules (SLU-PRELOAD-001/-002); the executor's scheme gate applies when a job runs.
    if (preload.sentinel_location && preload.sentinel_location->find("://") == std::string::npos) {
      ResolveSentinelPath(preload.sentinel_location, "domain", ExecutorKind::kShell);
    }
  });
  preload.ack_file_path = OptionText(options, "global_ack_file_path");
  option("ack_wait_timeout",
         [&] { preload.ack_wait_timeout = Seconds(options, "ack_wait_timeout", std::chrono::seconds(3600), 0); });

  if (std::optional<std::string> strategy = OptionText(options, "dataset_triggering_strategy")) {
    resolved.triggering_strategy = AsciiLower(*strategy) == "all" ? "all" : "any";
  }
  option("max_parallel_tasks", [&] {
    if (std::optional<std::string> text = OptionText(options, "max_parallel_tasks")) {
      resolved.max_parallel_tasks = static_cast<int>(WholeNumber("max_parallel_tasks", *text, 1));
    }
  });
  option("data_cycle", [&] { resolved.data_cycle = DataCycle(options); });
  resolved.beyond_data_cycle_enabled = LooseBool(options, "beyond_data_cycle_enabled", true);
  resolved.optional_dataset_enabled = LooseBool(options, "optional_dataset_enabled", false);
  option("start_date", [&] {
    if (std::optional<std::string> start = OptionOrEnvironment(options, "start_date", environment)) {
      resolved.start_date = Date::Parse(*start);
      if (!resolved.start_date) {
        throw OptionError("SLU-OPTIONS-004", "option start_date is \"" + *start + "\"; expected a date YYYY-MM-DD",
                          "e.g. start_date: 2026-01-01");
      }
    }
  });
  option("timezone", [&] {
    std::optional<std::string> zone = OptionText(options, "timezone");
    if (!zone) return;
    try {
      TimeZone::Named(*zone);
    } catch (const Error&) {
      throw OptionError("SLU-OPTIONS-005", "option timezone is \"" + *zone + "\", which the time-zone database lacks",
                        "use an IANA name such as UTC or Europe/Paris");
    }
    resolved.timezone = *zone;
  });
  return resolved;
}

std::string StarlakeRoot(const JobOptions& options) {
  std::string root = "file://tmp";
  for (const auto& [key, value] : options.sl_env) {
    if (key == "SL_ROOT" && !value.empty()) root = value;
  }
  constexpr std::string_view kFileScheme = "file://";
  if (root.starts_with(kFileScheme)) {
    root = root.substr(kFileScheme.size());
    if (!root.starts_with("/")) root = "/" + root;
  }
  return root;
}

std::string AckFilePath(const JobOptions& options, const std::string& domain, Date logical_date) {
  if (options.preload.ack_file_path) return *options.preload.ack_file_path;
  std::string datasets = StarlakeRoot(options) + "/datasets";
  for (const auto& [key, value] : options.sl_env) {
    if (key == "SL_DATASETS" && !value.empty()) datasets = value;
  }
  return datasets + "/pending/" + domain + "/" + logical_date.ToString() + ".ack";
}

}  // namespace sluice::orchestrate
