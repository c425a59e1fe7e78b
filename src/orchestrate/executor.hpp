// Executors (Starlake reference §3 and §8): how one attempt of a Starlake command is run in each execution
// environment, as a value — the program, its argument vector, the variables it gets and its working directory. The
// local process (local_process.hpp) runs that value with execve; nothing here starts a process or touches a shell.
//
// - shell: the Starlake CLI itself, with the attempt's unquoted argument vector, the sl_env_var pairs as environment
//   and SL_ROOT as working directory.
// - cloud_run: `gcloud beta run jobs execute`, the arguments and variables handed to the job with gcloud's `^D^`
//   list syntax (D is a space, as the original, unless an item holds one).
// - dataproc: `gcloud dataproc jobs submit spark`. The original submitted through the Python client; this is Sluice's
//   command-line rendering of the same submission (cluster, job id, main class, jars, preset properties, arguments).
// - fargate: `aws ecs run-task` with the container overrides as JSON; polling the task until it stops is the
//   runner's business, not part of this invocation.
// Cloud invocations carry no variables for the local gcloud or aws process: the job receives sl_env through the
// command line (--update-env-vars, the container overrides).
// On every cloud executor the command's arguments get `--scheduledDate <date>` (unquoted) after the verb for all
// task types, as the original's cloud jobs; the shell gives it to load and transform only (starlake_command.hpp).
//
// Errors (sluice::Error, raised while resolving settings): SLU-EXECUTOR-001 a required option with no value (the
// message names the option and the executor); SLU-EXECUTOR-002 an option with a value it does not take (an unknown
// executor, an integer that is not a positive number, dataproc_cluster_metadata that is not a JSON object).
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "orchestrate/preload_gate.hpp"
#include "orchestrate/starlake_command.hpp"

namespace sluice::orchestrate {

struct ExecutorInvocation {
  std::string program;                 // absolute, or a name looked up in PATH
  std::vector<std::string> arguments;  // argv[1..]
  StarlakeOptionPairs environment;     // variables overlaid on the process environment
  std::optional<std::string> cwd;      // shell: SL_ROOT

  bool operator==(const ExecutorInvocation&) const = default;
};

struct ShellSettings {
  std::string starlake_path = "starlake";  // SL_STARLAKE_PATH

  bool operator==(const ShellSettings&) const = default;
};

struct CloudRunSettings {
  std::string job_name;                                  // cloud_run_job_name (required)
  std::string project_id;                                // cloud_run_project_id, default $GCP_PROJECT
  std::string region;                                    // cloud_run_job_region, default $GCP_REGION
  std::optional<std::string> service_account;            // cloud_run_service_account: --impersonate-service-account
  std::string sdk_path = "/usr/local/google-cloud-sdk";  // GOOGLE_CLOUD_SDK

  bool operator==(const CloudRunSettings&) const = default;
};

struct DataprocSettings {
  std::string cluster_id;                 // cluster_id (required; Sluice's key for the original's module global)
  std::string name = "dataproc-cluster";  // dataproc_name
  // The YYYY-MM-DD that ends the cluster's name. Not an option: the caller sets it (from its Clock) when it creates
  // the cluster, rather than freezing it when the definitions load as the original did. Required to render.
  std::string cluster_date;
  std::string jar_list;                             // spark_jar_list, comma-separated URIs (required)
  std::string bucket;                               // spark_bucket, without gs:// (required)
  std::string main_class = "ai.starlake.job.Main";  // spark_job_main_class
  int job_wait_timeout_seconds = 3600;              // dataproc_job_wait_timeout
  std::string project_id;                           // dataproc_project_id, default $GCP_PROJECT
  std::string region = "europe-west1";              // dataproc_region
  std::string subnet = "default";                   // dataproc_subnet
  std::optional<std::string> service_account;       // dataproc_service_account
  std::string image_version = "2.2-debian12";       // dataproc_image_version
  std::string master_machine_type = "n1-standard-4";
  std::string master_disk_type = "pd-standard";
  int master_disk_size = 1024;
  std::string worker_machine_type = "n1-standard-4";
  std::string worker_disk_type = "pd-standard";
  int worker_disk_size = 1024;
  int num_workers = 4;
  int idle_delete_ttl_seconds = 3600;
  nlohmann::json cluster_metadata = nlohmann::json::object();  // dataproc_cluster_metadata (a JSON object)
  std::optional<std::string> cluster_config_name;
  std::string executor_memory = "11g";                   // spark_executor_memory
  int executor_cores = 4;                                // spark_executor_cores
  int executor_instances = 1;                            // spark_executor_instances
  std::string sdk_path = "/usr/local/google-cloud-sdk";  // GOOGLE_CLOUD_SDK

  bool operator==(const DataprocSettings&) const = default;
};

struct FargateSettings {
  std::string cluster_name;                  // aws_cluster_name (required)
  std::string task_definition_name;          // aws_task_definition_name (required)
  std::string container_name;                // aws_task_definition_container_name (required)
  std::vector<std::string> private_subnets;  // aws_task_private_subnets, comma list (required)
  std::vector<std::string> security_groups;  // aws_task_security_groups, comma list (required)
  std::string profile = "default";           // aws_profile
  std::string region = "eu-west-3";          // aws_region
  int cpu = 1024;
  int memory = 2048;
  std::string sdk_path = "/usr/local/aws-cli";  // AWS_SDK

  bool operator==(const FargateSettings&) const = default;
};

// The executor of a pipeline and its resolved options. Only the member of `kind` is resolved; the others keep
// their defaults and are not read.
struct ExecutorSettings {
  ExecutorKind kind = ExecutorKind::kShell;
  ShellSettings shell;
  CloudRunSettings cloud_run;
  DataprocSettings dataproc;
  FargateSettings fargate;

  bool operator==(const ExecutorSettings&) const = default;
};

// Resolves the executor options of §3 from a pipeline's options dict. `executor` (shell | cloud_run | dataproc |
// fargate, any case; default shell) is Sluice's key, since the original chose the executor by its Python class. Each
// option follows §3's rule: the dict's value if present and not empty (numbers and booleans as JSON writes them),
// else the default, else the environment variable of the option's own name, else SLU-EXECUTOR-001. Optional options
// without a default (service accounts, cluster_config_name) are absent after the dict and the variable. Throws
// SLU-EXECUTOR-002 for a value the option does not take.
ExecutorSettings ResolveExecutorSettings(const nlohmann::json& options, const EnvironmentLookup& environment);

// The invocation of one attempt of `command` (for the shell, already through WithEnvironmentOptions) with the
// sl_env_var pairs `sl_env`. `task_id` and `attempt_id` (e.g. a fresh 8-hex suffix) name Dataproc's job
// `<task_id>_<attempt_id>`; they are passed in so the result is deterministic. Throws SLU-EXECUTOR-001 when a
// Dataproc cluster_date is not set.
ExecutorInvocation RenderInvocation(const ExecutorSettings& settings, const StarlakeCommand& command,
                                    const StarlakeAttempt& attempt, const StarlakeOptionPairs& sl_env,
                                    const std::string& task_id, const std::string& attempt_id);

// Dataproc's cluster name: `<name>-<cluster_id with '_' → '-'>-<cluster_date>` (§8).
std::string DataprocClusterName(const DataprocSettings& settings);

}  // namespace sluice::orchestrate
