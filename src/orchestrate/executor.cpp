#include "orchestrate/executor.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/diagnostic.hpp"
#include "core/text.hpp"

namespace sluice::orchestrate {

namespace {

constexpr const char* kMissing = "SLU-EXECUTOR-001";
constexpr const char* kInvalid = "SLU-EXECUTOR-002";

// Reads one executor's options by §3's rule; errors name the option and the executor.
class OptionReader {
 public:
  OptionReader(const nlohmann::json& options, const EnvironmentLookup& environment, ExecutorKind kind)
      : options_(options), environment_(environment), executor_(ExecutorKindName(kind)) {}

  std::optional<std::string> Given(const std::string& key) const { return OptionText(options_, key); }

  // The dict's value, else `fallback` (a default, possibly read from another variable), else the variable named
  // `key`, else SLU-EXECUTOR-001.
  std::string Required(const std::string& key, const std::optional<std::string>& fallback = std::nullopt,
                       const std::string& fallback_note = "") const {
    if (std::optional<std::string> value = Given(key)) return *value;
    if (fallback) return *fallback;
    if (std::optional<std::string> value = FromEnvironment(key)) return *value;
    throw Error(
        Diagnostic{kMissing,
                   "the " + executor_ + " executor needs option `" + key + "`, which has no value" + fallback_note,
                   {},
                   "set `" + key + "` in the pipeline's options, or the environment variable " + key,
                   {}});
  }

  std::string WithDefault(const std::string& key, const std::string& fallback) const {
    return Given(key).value_or(fallback);
  }

  std::optional<std::string> Optional(const std::string& key) const {
    if (std::optional<std::string> value = Given(key)) return value;
    return FromEnvironment(key);
  }

  int PositiveInt(const std::string& key, int fallback) const {
    const std::optional<std::string> text = Given(key);
    if (!text) return fallback;
    int value = 0;
    const char* end = text->data() + text->size();
    auto [stop, error] = std::from_chars(text->data(), end, value);
    if (error != std::errc() || stop != end || value <= 0) {
      Fail(key, *text, "a positive whole number, e.g. " + std::to_string(fallback));
    }
    return value;
  }

  std::vector<std::string> RequiredList(const std::string& key) const {
    const std::string text = Required(key);
    std::vector<std::string> items;
    size_t start = 0;
    while (start <= text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::string item(TrimBlanks(std::string_view(text).substr(start, comma - start)));
      if (!item.empty()) items.push_back(std::move(item));
      start = comma + 1;
    }
    if (items.empty()) Fail(key, text, "a comma-separated list with at least one item");
    return items;
  }

  [[noreturn]] void Fail(const std::string& key, const std::string& value, const std::string& expected) const {
    throw Error(
        Diagnostic{kInvalid,
                   "option `" + key + "` of the " + executor_ + " executor is `" + value + "`; expected " + expected,
                   {},
                   "fix `" + key + "` in the pipeline's options",
                   {}});
  }

 private:
  std::optional<std::string> FromEnvironment(const std::string& key) const { return OptionVariable(environment_, key); }

  const nlohmann::json& options_;
  const EnvironmentLookup& environment_;
  std::string executor_;
};

ExecutorKind ResolveKind(const nlohmann::json& options) {
  const std::optional<std::string> given = OptionText(options, "executor");
  if (!given) return ExecutorKind::kShell;
  const std::string name = AsciiLower(*given);
  for (ExecutorKind kind :
       {ExecutorKind::kShell, ExecutorKind::kCloudRun, ExecutorKind::kDataproc, ExecutorKind::kFargate}) {
    if (name == ExecutorKindName(kind)) return kind;
  }
  throw Error(Diagnostic{kInvalid,
                         "option `executor` is `" + *given + "`, which is not an executor Sluice has",
                         {},
                         "valid values: shell, cloud_run, dataproc, fargate",
                         {}});
}

CloudRunSettings ResolveCloudRun(const OptionReader& reader, const EnvironmentLookup& environment) {
  CloudRunSettings settings;
  settings.job_name = reader.Required("cloud_run_job_name");
  settings.project_id =
      reader.Required("cloud_run_project_id", OptionVariable(environment, "GCP_PROJECT"), " (nor is GCP_PROJECT set)");
  settings.region =
      reader.Required("cloud_run_job_region", OptionVariable(environment, "GCP_REGION"), " (nor is GCP_REGION set)");
  settings.service_account = reader.Optional("cloud_run_service_account");
  settings.sdk_path = reader.WithDefault("GOOGLE_CLOUD_SDK", settings.sdk_path);
  return settings;
}

DataprocSettings ResolveDataproc(const OptionReader& reader, const EnvironmentLookup& environment) {
  DataprocSettings settings;
  settings.cluster_id = reader.Required("cluster_id");
  settings.name = reader.WithDefault("dataproc_name", settings.name);
  settings.jar_list = reader.Required("spark_jar_list");
  settings.bucket = reader.Required("spark_bucket");
  settings.main_class = reader.WithDefault("spark_job_main_class", settings.main_class);
  settings.job_wait_timeout_seconds =
      reader.PositiveInt("dataproc_job_wait_timeout", settings.job_wait_timeout_seconds);
  settings.project_id =
      reader.Required("dataproc_project_id", OptionVariable(environment, "GCP_PROJECT"), " (nor is GCP_PROJECT set)");
  settings.region = reader.WithDefault("dataproc_region", settings.region);
  settings.subnet = reader.WithDefault("dataproc_subnet", settings.subnet);
  settings.service_account = reader.Optional("dataproc_service_account");
  settings.image_version = reader.WithDefault("dataproc_image_version", settings.image_version);
  settings.master_machine_type = reader.WithDefault("dataproc_master_machine_type", settings.master_machine_type);
  settings.master_disk_type = reader.WithDefault("dataproc_master_disk_type", settings.master_disk_type);
  settings.master_disk_size = reader.PositiveInt("dataproc_master_disk_size", settings.master_disk_size);
  settings.worker_machine_type = reader.WithDefault("dataproc_worker_machine_type", settings.worker_machine_type);
  settings.worker_disk_type = reader.WithDefault("dataproc_worker_disk_type", settings.worker_disk_type);
  settings.worker_disk_size = reader.PositiveInt("dataproc_worker_disk_size", settings.worker_disk_size);
  settings.num_workers = reader.PositiveInt("dataproc_num_workers", settings.num_workers);
  settings.idle_delete_ttl_seconds = reader.PositiveInt("dataproc_idle_delete_ttl", settings.idle_delete_ttl_seconds);
  if (std::optional<std::string> metadata = reader.Given("dataproc_cluster_metadata")) {
    nlohmann::json parsed = nlohmann::json::parse(*metadata, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      reader.Fail("dataproc_cluster_metadata", *metadata, "a JSON object, e.g. {\"key\": \"value\"}");
    }
    settings.cluster_metadata = std::move(parsed);
  }
  settings.cluster_config_name = reader.Optional("cluster_config_name");
  settings.executor_memory = reader.WithDefault("spark_executor_memory", settings.executor_memory);
  settings.executor_cores = reader.PositiveInt("spark_executor_cores", settings.executor_cores);
  settings.executor_instances = reader.PositiveInt("spark_executor_instances", settings.executor_instances);
  settings.sdk_path = reader.WithDefault("GOOGLE_CLOUD_SDK", settings.sdk_path);
  return settings;
}

FargateSettings ResolveFargate(const OptionReader& reader) {
  FargateSettings settings;
  settings.cluster_name = reader.Required("aws_cluster_name");
  settings.task_definition_name = reader.Required("aws_task_definition_name");
  settings.container_name = reader.Required("aws_task_definition_container_name");
  settings.private_subnets = reader.RequiredList("aws_task_private_subnets");
  settings.security_groups = reader.RequiredList("aws_task_security_groups");
  settings.profile = reader.WithDefault("aws_profile", settings.profile);
  settings.region = reader.WithDefault("aws_region", settings.region);
  settings.cpu = reader.PositiveInt("cpu", settings.cpu);
  settings.memory = reader.PositiveInt("memory", settings.memory);
  settings.sdk_path = reader.WithDefault("AWS_SDK", settings.sdk_path);
  return settings;
}

// What a cloud job's CLI receives: the attempt's unquoted vector, with `--scheduledDate` after the verb for every
// task type (the shell vector has it for load and transform only).
std::vector<std::string> CloudArguments(const StarlakeCommand& command, const StarlakeAttempt& attempt) {
  std::vector<std::string> arguments = AttemptArguments(command, attempt, false);
  const bool dated = command.verb == StarlakeVerb::kLoad || command.verb == StarlakeVerb::kTransform;
  if (!dated && !arguments.empty()) {
    arguments.insert(arguments.begin() + 1, {"--scheduledDate", attempt.scheduled_date});
  }
  return arguments;
}

// gcloud's `^D^item1Ditem2` list syntax. D is a space as in the original, unless an item holds one; then the first
// of a few other characters no item holds, so that no item is ever split.
std::string GcloudList(const std::vector<std::string>& items) {
  for (std::string_view delimiter : {" ", "|", "~", ";", "@", "#", "!"}) {
    const bool free = std::none_of(items.begin(), items.end(),
                                   [&](const std::string& item) { return item.find(delimiter) != std::string::npos; });
    if (free) return "^" + std::string(delimiter) + "^" + Join(items, delimiter);
  }
  return "^\x1f^" + Join(items, "\x1f");
}

std::vector<std::string> PairTexts(const StarlakeOptionPairs& pairs) {
  std::vector<std::string> texts;
  for (const auto& [key, value] : pairs) texts.push_back(key + "=" + value);
  return texts;
}

std::string SdkProgram(const std::string& sdk_path, const char* name) {
  std::string program = sdk_path;
  if (!program.empty() && program.back() != '/') program += '/';
  return program + "bin/" + name;
}

ExecutorInvocation RenderShell(const ShellSettings& settings, const StarlakeCommand& command,
                               const StarlakeAttempt& attempt, const StarlakeOptionPairs& sl_env) {
  ExecutorInvocation invocation{settings.starlake_path, AttemptArguments(command, attempt, false), sl_env, {}};
  for (const auto& [key, value] : sl_env) {
    if (key != "SL_ROOT" || value.empty()) continue;
    invocation.cwd = value.rfind("file://", 0) == 0 ? value.substr(7) : value;
  }
  return invocation;
}

ExecutorInvocation RenderCloudRun(const CloudRunSettings& settings, const StarlakeCommand& command,
                                  const StarlakeAttempt& attempt, const StarlakeOptionPairs& sl_env) {
  std::vector<std::string> arguments{
      "beta", "run", "jobs", "execute", settings.job_name, "--args", GcloudList(CloudArguments(command, attempt))};
  if (!sl_env.empty()) arguments.insert(arguments.end(), {"--update-env-vars", GcloudList(PairTexts(sl_env))});
  arguments.insert(arguments.end(), {"--wait", "--region", settings.region, "--project", settings.project_id,
                                     "--format=get(metadata.name)"});
  if (settings.service_account) {
    arguments.insert(arguments.end(), {"--impersonate-service-account", *settings.service_account});
  }
  return {SdkProgram(settings.sdk_path, "gcloud"), std::move(arguments), {}, std::nullopt};
}

// The preset Spark properties of §8, in a fixed order.
std::vector<std::string> DataprocProperties(const DataprocSettings& settings) {
  return {"spark.hadoop.fs.defaultFS=gs://" + settings.bucket,
          "spark.eventLog.enabled=true",
          "spark.sql.sources.partitionOverwriteMode=DYNAMIC",
          "spark.datasource.bigquery.temporaryGcsBucket=" + settings.bucket,
          "spark.datasource.bigquery.allowFieldAddition=true",
          "spark.datasource.bigquery.allowFieldRelaxation=true",
          "spark.dynamicAllocation.enabled=false",
          "spark.executor.memory=" + settings.executor_memory,
          "spark.executor.cores=" + std::to_string(settings.executor_cores),
          "spark.executor.instances=" + std::to_string(settings.executor_instances)};
}

ExecutorInvocation RenderDataproc(const DataprocSettings& settings, const StarlakeCommand& command,
                                  const StarlakeAttempt& attempt, const std::string& task_id,
                                  const std::string& attempt_id) {
  std::vector<std::string> arguments{"dataproc",
                                     "jobs",
                                     "submit",
                                     "spark",
                                     "--cluster=" + DataprocClusterName(settings),
                                     "--region=" + settings.region,
                                     "--project=" + settings.project_id,
                                     "--id=" + task_id + "_" + attempt_id,
                                     "--class=" + settings.main_class,
                                     "--jars=" + settings.jar_list,
                                     "--properties=" + Join(DataprocProperties(settings), ","),
                                     "--"};
  for (std::string& argument : CloudArguments(command, attempt)) arguments.push_back(std::move(argument));
  return {SdkProgram(settings.sdk_path, "gcloud"), std::move(arguments), {}, std::nullopt};
}

// An `--options` value as a container variable: one level of enclosing single quotes (the interval options carry
// them for the CLI's option parser) is removed, since nothing parses an environment variable's value.
std::string VariableValue(const std::string& value) {
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') return value.substr(1, value.size() - 2);
  return value;
}

ExecutorInvocation RenderFargate(const FargateSettings& settings, const StarlakeCommand& command,
                                 const StarlakeAttempt& attempt, const StarlakeOptionPairs& sl_env) {
  const std::vector<std::string> command_arguments = CloudArguments(command, attempt);
  StarlakeOptionPairs variables = sl_env;
  auto flag = std::find(command_arguments.begin(), command_arguments.end(), "--options");
  if (flag != command_arguments.end() && flag + 1 != command_arguments.end()) {
    for (const auto& [key, value] : OptionPairs(*(flag + 1))) OverlayPair(variables, key, VariableValue(value));
  }
  nlohmann::ordered_json environment = nlohmann::ordered_json::array();
  for (const auto& [key, value] : variables) environment.push_back({{"name", key}, {"value", value}});
  nlohmann::ordered_json container{{"name", settings.container_name},
                                   {"command", command_arguments},
                                   {"environment", environment},
                                   {"cpu", settings.cpu},
                                   {"memory", settings.memory}};
  nlohmann::ordered_json overrides{{"containerOverrides", nlohmann::ordered_json::array({container})}};
  const std::string network = "awsvpcConfiguration={subnets=[" + Join(settings.private_subnets, ",") +
                              "],securityGroups=[" + Join(settings.security_groups, ",") + "],assignPublicIp=DISABLED}";
  std::vector<std::string> arguments{"ecs",
                                     "run-task",
                                     "--cluster",
                                     settings.cluster_name,
                                     "--launch-type",
                                     "FARGATE",
                                     "--task-definition",
                                     settings.task_definition_name,
                                     "--network-configuration",
                                     network,
                                     "--overrides",
                                     overrides.dump(),
                                     "--region",
                                     settings.region,
                                     "--profile",
                                     settings.profile};
  return {SdkProgram(settings.sdk_path, "aws"), std::move(arguments), {}, std::nullopt};
}

}  // namespace

ExecutorSettings ResolveExecutorSettings(const nlohmann::json& options, const EnvironmentLookup& environment) {
  ExecutorSettings settings;
  settings.kind = ResolveKind(options);
  const OptionReader reader(options, environment, settings.kind);
  switch (settings.kind) {
    case ExecutorKind::kShell:
      settings.shell.starlake_path = reader.WithDefault("SL_STARLAKE_PATH", settings.shell.starlake_path);
      break;
    case ExecutorKind::kCloudRun:
      settings.cloud_run = ResolveCloudRun(reader, environment);
      break;
    case ExecutorKind::kDataproc:
      settings.dataproc = ResolveDataproc(reader, environment);
      break;
    case ExecutorKind::kFargate:
      settings.fargate = ResolveFargate(reader);
      break;
  }
  return settings;
}

std::string DataprocClusterName(const DataprocSettings& settings) {
  if (settings.cluster_date.empty()) {
    throw Error(Diagnostic{kMissing,
                           "the dataproc executor's cluster date is not set",
                           {},
                           "set DataprocSettings::cluster_date (YYYY-MM-DD) before rendering a submission",
                           {}});
  }
  std::string cluster_id = settings.cluster_id;
  std::replace(cluster_id.begin(), cluster_id.end(), '_', '-');
  return settings.name + "-" + cluster_id + "-" + settings.cluster_date;
}

ExecutorInvocation RenderInvocation(const ExecutorSettings& settings, const StarlakeCommand& command,
                                    const StarlakeAttempt& attempt, const StarlakeOptionPairs& sl_env,
                                    const std::string& task_id, const std::string& attempt_id) {
  switch (settings.kind) {
    case ExecutorKind::kShell:
      return RenderShell(settings.shell, command, attempt, sl_env);
    case ExecutorKind::kCloudRun:
      return RenderCloudRun(settings.cloud_run, command, attempt, sl_env);
    case ExecutorKind::kDataproc:
      return RenderDataproc(settings.dataproc, command, attempt, task_id, attempt_id);
    case ExecutorKind::kFargate:
      return RenderFargate(settings.fargate, command, attempt, sl_env);
  }
  return {};
}

}  // namespace sluice::orchestrate
