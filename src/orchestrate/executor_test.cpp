// Executors: the settings each resolves from a pipeline's options (§3's rule and its errors) and the whole argument
// vector of an attempt on each (§8), for a load, a transform and a preload.
#include "orchestrate/executor.hpp"

#include <gtest/gtest.h>

#include <map>

#include "core/diagnostic.hpp"

namespace sluice::orchestrate {
namespace {

using Args = std::vector<std::string>;

const StarlakeOptionPairs kSlEnv = ParseSlEnvVar(R"({"SL_ROOT":"file:///p","SL_ENV":"BQ"})");
const StarlakeAttempt kAttempt{"2026-07-18T00:00:00+0000",
                               "sl_data_interval_start='2026-07-17T00:00:00+0000',"
                               "sl_data_interval_end='2026-07-18T00:00:00+0000'",
                               {}};
constexpr const char* kInterval =
    "sl_data_interval_start='2026-07-17T00:00:00+0000',sl_data_interval_end='2026-07-18T00:00:00+0000'";

EnvironmentLookup Variables(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

std::string ErrorCode(const nlohmann::json& options, const EnvironmentLookup& environment = Variables({})) {
  try {
    ResolveExecutorSettings(options, environment);
  } catch (const Error& error) {
    return error.diagnostics().front().code + ": " + error.diagnostics().front().message;
  }
  return "no error";
}

const StarlakeCommand kPreload =
    PreLoadCommand("starbake", {"customers", "orders"}, StarlakePreLoadStrategy::kImported, std::nullopt, std::nullopt);

TEST(AttemptArguments, AreTheShellLineWithoutItsQuotes) {
  const StarlakeCommand transform = WithEnvironmentOptions(TransformCommand("kpi.x", "", ""), kSlEnv);
  EXPECT_EQ(AttemptArguments(transform, kAttempt, false),
            (Args{"transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "kpi.x", "--options",
                  std::string("SL_ROOT=file:///p,SL_ENV=BQ,") + kInterval}));
  EXPECT_EQ(AttemptArguments(transform, kAttempt, true),
            (Args{"transform", "--scheduledDate", "'2026-07-18T00:00:00+0000'", "--name", "kpi.x", "--options",
                  std::string("\"SL_ROOT=file:///p,SL_ENV=BQ,") + kInterval + "\""}));
  const StarlakeCommand preload = PreLoadCommand("d", {"t"}, StarlakePreLoadStrategy::kPending, std::nullopt, "/s/x");
  EXPECT_EQ(AttemptArguments(preload, kAttempt, false),
            (Args{"preload", "--domain", "d", "--tables", "t", "--strategy", "pending", "--options",
                  "SL_RUN_MODE=main,SL_LOG_LEVEL=info", "--notReadySentinel", "/s/x"}));
  // A value with shell syntax is one argument, untouched.
  const StarlakeCommand hostile = WithEnvironmentOptions(LoadCommand("d", "t"), {{"X", "a b;$(rm -rf /)"}});
  EXPECT_EQ(AttemptArguments(hostile, kAttempt, false).back(), "X=a b;$(rm -rf /)");
}

TEST(AttemptArguments, TransformWithoutOptionsGetsThemAppendedOnlyWhenTheAttemptAddsSome) {
  const StarlakeCommand bare = TransformCommand("n", "", "");
  EXPECT_EQ(AttemptArguments(bare, kAttempt, false),
            (Args{"transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "n", "--options", kInterval}));
  EXPECT_EQ(AttemptArguments(bare, StarlakeAttempt{"d", "", {}}, false),
            (Args{"transform", "--scheduledDate", "d", "--name", "n"}));
  EXPECT_EQ(AttemptArguments(TransformCommand("n", "a=1", ""), StarlakeAttempt{"d", "", {{"k", "v"}}}, false),
            (Args{"transform", "--scheduledDate", "d", "--name", "n", "--options", "a=1,k=v"}));
  // A transform with no options of its own and no SL_* environment options gets an empty `--options` value; the
  // attempt's options never follow an empty first one.
  const StarlakeCommand empty = WithEnvironmentOptions(TransformCommand("n", "", ""), {});
  ASSERT_EQ(empty.arguments.back(), "");
  EXPECT_EQ(AttemptArguments(empty, kAttempt, false),
            (Args{"transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "n", "--options", kInterval}));
  EXPECT_EQ(AttemptArguments(empty, StarlakeAttempt{"d", "", {}}, false),
            (Args{"transform", "--scheduledDate", "d", "--name", "n"}));
}

TEST(ExecutorSettings, ShellIsTheDefault) {
  EXPECT_EQ(ResolveExecutorSettings(nlohmann::json::object(), Variables({})), ExecutorSettings{});
  EXPECT_EQ(ResolveExecutorSettings({{"executor", ""}}, Variables({})).kind, ExecutorKind::kShell);
  EXPECT_EQ(ResolveExecutorSettings({{"executor", "Shell"}, {"SL_STARLAKE_PATH", "/opt/sl/starlake.sh"}}, Variables({}))
                .shell.starlake_path,
            "/opt/sl/starlake.sh");
}

TEST(Executor, ShellRunsTheCliWithTheUnquotedVectorInSlRoot) {
  const ExecutorSettings settings = ResolveExecutorSettings(nlohmann::json::object(), Variables({}));
  const StarlakeCommand load = WithEnvironmentOptions(LoadCommand("starbake", "orders"), kSlEnv);
  EXPECT_EQ(RenderInvocation(settings, load, kAttempt, kSlEnv, "load_starbake_orders", "0a1b2c3d"),
            (ExecutorInvocation{"starlake",
                                {"load", "--scheduledDate", "2026-07-18T00:00:00+0000", "--domains", "starbake",
                                 "--tables", "orders", "--options", "SL_ROOT=file:///p,SL_ENV=BQ"},
                                kSlEnv,
                                "/p"}));
  const StarlakeCommand preload = WithEnvironmentOptions(kPreload, kSlEnv);
  EXPECT_EQ(RenderInvocation(settings, preload, kAttempt, kSlEnv, "t", "a").arguments,
            (Args{"preload", "--domain", "starbake", "--tables", "customers,orders", "--strategy", "imported",
                  "--options", "SL_ROOT=file:///p,SL_ENV=BQ,SL_RUN_MODE=main,SL_LOG_LEVEL=info"}));
  const StarlakeCommand transform = WithEnvironmentOptions(TransformCommand("kpi.x", "", ""), kSlEnv);
  EXPECT_EQ(RenderInvocation(settings, transform, kAttempt, kSlEnv, "t", "a").arguments,
            (Args{"transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "kpi.x", "--options",
                  std::string("SL_ROOT=file:///p,SL_ENV=BQ,") + kInterval}));
  EXPECT_EQ(RenderInvocation(settings, load, kAttempt, {}, "t", "a").cwd, std::nullopt);  // no SL_ROOT, no cwd
}

const nlohmann::json kCloudRunOptions{{"executor", "cloud_run"}, {"cloud_run_job_name", "starlake-job"}};

TEST(Executor, CloudRunExecutesTheJobWithGcloudListsAndNoShell) {
  ExecutorSettings settings =
      ResolveExecutorSettings(kCloudRunOptions, Variables({{"GCP_PROJECT", "acme"}, {"GCP_REGION", "europe-west1"}}));
  EXPECT_EQ(settings.cloud_run,
            (CloudRunSettings{"starlake-job", "acme", "europe-west1", std::nullopt, "/usr/local/google-cloud-sdk"}));
  const std::vector<std::string> tail{"--wait",    "--region", "europe-west1",
                                      "--project", "acme",     "--format=get(metadata.name)"};
  auto expected = [&](const std::string& args, bool with_env) {
    Args out{"beta", "run", "jobs", "execute", "starlake-job", "--args", args};
    if (with_env) out.insert(out.end(), {"--update-env-vars", "^ ^SL_ROOT=file:///p SL_ENV=BQ"});
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  };
  const ExecutorInvocation load =
      RenderInvocation(settings, LoadCommand("starbake", "orders"), kAttempt, kSlEnv, "t", "a");
  EXPECT_EQ(load.program, "/usr/local/google-cloud-sdk/bin/gcloud");
  EXPECT_EQ(load.arguments,
            expected("^ ^load --scheduledDate 2026-07-18T00:00:00+0000 --domains starbake --tables orders", true));
  EXPECT_TRUE(load.environment.empty());
  EXPECT_EQ(load.cwd, std::nullopt);
  // sl_env is not merged into --options; the transform still gets its interval options.
  EXPECT_EQ(
      RenderInvocation(settings, TransformCommand("kpi.x", "", ""), kAttempt, kSlEnv, "t", "a").arguments,
      expected(std::string("^ ^transform --scheduledDate 2026-07-18T00:00:00+0000 --name kpi.x --options ") + kInterval,
               true));
  // Every task type gets the date on a cloud executor; no pairs, no --update-env-vars.
  EXPECT_EQ(RenderInvocation(settings, kPreload, kAttempt, {}, "t", "a").arguments,
            expected("^ ^preload --scheduledDate 2026-07-18T00:00:00+0000 --domain starbake --tables customers,orders "
                     "--strategy imported --options SL_RUN_MODE=main,SL_LOG_LEVEL=info",
                     false));
}

TEST(Executor, CloudRunPicksAnotherListDelimiterWhenAnItemHoldsASpaceAndImpersonates) {
  nlohmann::json options = kCloudRunOptions;
  options["cloud_run_project_id"] = "p";
  options["cloud_run_job_region"] = "r";
  options["cloud_run_service_account"] = "sa@p.iam.gserviceaccount.com";
  options["GOOGLE_CLOUD_SDK"] = "/sdk";
  const ExecutorSettings settings = ResolveExecutorSettings(options, Variables({}));
  const ExecutorInvocation invocation =
      RenderInvocation(settings, LoadCommand("d", "t"), kAttempt, {{"NOTE", "two words"}}, "t", "a");
  EXPECT_EQ(invocation.program, "/sdk/bin/gcloud");
  EXPECT_EQ(invocation.arguments,
            (Args{"beta", "run", "jobs", "execute", "starlake-job", "--args",
                  "^ ^load --scheduledDate 2026-07-18T00:00:00+0000 --domains d --tables t", "--update-env-vars",
                  "^|^NOTE=two words", "--wait", "--region", "r", "--project", "p", "--format=get(metadata.name)",
                  "--impersonate-service-account", "sa@p.iam.gserviceaccount.com"}));
}

const nlohmann::json kDataprocOptions{{"executor", "dataproc"},
                                      {"cluster_id", "starbake_daily"},
                                      {"spark_jar_list", "gs://b/starlake.jar,gs://b/bq.jar"},
                                      {"spark_bucket", "b"},
                                      {"dataproc_project_id", "acme"}};

TEST(Executor, DataprocSubmitsASparkJobToTheDatedCluster) {
  ExecutorSettings settings = ResolveExecutorSettings(kDataprocOptions, Variables({}));
  settings.dataproc.cluster_date = "2026-07-18";
  EXPECT_EQ(DataprocClusterName(settings.dataproc), "dataproc-cluster-starbake-daily-2026-07-18");
  const Args head{"dataproc",
                  "jobs",
                  "submit",
                  "spark",
                  "--cluster=dataproc-cluster-starbake-daily-2026-07-18",
                  "--region=europe-west1",
                  "--project=acme",
                  "--id=load_starbake_orders_0a1b2c3d",
                  "--class=ai.starlake.job.Main",
                  "--jars=gs://b/starlake.jar,gs://b/bq.jar",
                  "--properties=spark.hadoop.fs.defaultFS=gs://b,spark.eventLog.enabled=true,"
                  "spark.sql.sources.partitionOverwriteMode=DYNAMIC,spark.datasource.bigquery.temporaryGcsBucket=b,"
                  "spark.datasource.bigquery.allowFieldAddition=true,"
                  "spark.datasource.bigquery.allowFieldRelaxation=true,spark.dynamicAllocation.enabled=false,"
                  "spark.executor.memory=11g,spark.executor.cores=4,spark.executor.instances=1",
                  "--"};
  auto with = [&](Args tail) {
    Args out = head;
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
  };
  const ExecutorInvocation load = RenderInvocation(settings, LoadCommand("starbake", "orders"), kAttempt, kSlEnv,
                                                   "load_starbake_orders", "0a1b2c3d");
  EXPECT_EQ(load.program, "/usr/local/google-cloud-sdk/bin/gcloud");
  EXPECT_EQ(load.arguments, with({"load", "--scheduledDate", "2026-07-18T00:00:00+0000", "--domains", "starbake",
                                  "--tables", "orders"}));
  EXPECT_EQ(
      RenderInvocation(settings, TransformCommand("kpi.x", "", ""), kAttempt, kSlEnv, "load_starbake_orders",
                       "0a1b2c3d")
          .arguments,
      with({"transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "kpi.x", "--options", kInterval}));
  EXPECT_EQ(RenderInvocation(settings, kPreload, kAttempt, kSlEnv, "load_starbake_orders", "0a1b2c3d").arguments,
            with({"preload", "--scheduledDate", "2026-07-18T00:00:00+0000", "--domain", "starbake", "--tables",
                  "customers,orders", "--strategy", "imported", "--options", "SL_RUN_MODE=main,SL_LOG_LEVEL=info"}));
}

TEST(Executor, DataprocResolvesItsOptionsAndDefaults) {
  nlohmann::json options = kDataprocOptions;
  options["dataproc_cluster_metadata"] = R"({"team": "data"})";
  options["dataproc_num_workers"] = 2;
  options["spark_executor_memory"] = "4g";
  const DataprocSettings settings = ResolveExecutorSettings(options, Variables({})).dataproc;
  EXPECT_EQ(settings.cluster_metadata, (nlohmann::json{{"team", "data"}}));
  EXPECT_EQ(settings.num_workers, 2);
  EXPECT_EQ(settings.executor_memory, "4g");
  EXPECT_EQ(settings.job_wait_timeout_seconds, 3600);
  EXPECT_EQ(settings.image_version, "2.2-debian12");
  nlohmann::json from_environment = kDataprocOptions;
  from_environment.erase("dataproc_project_id");
  EXPECT_EQ(ResolveExecutorSettings(from_environment, Variables({{"GCP_PROJECT", "env-project"}})).dataproc.project_id,
            "env-project");
}

const nlohmann::json kFargateOptions{{"executor", "fargate"},
                                     {"aws_cluster_name", "sl-cluster"},
                                     {"aws_task_definition_name", "starlake-task"},
                                     {"aws_task_definition_container_name", "starlake"},
                                     {"aws_task_private_subnets", "subnet-1, subnet-2"},
                                     {"aws_task_security_groups", "sg-1"}};

TEST(Executor, FargateRunsTheTaskWithContainerOverrides) {
  const ExecutorSettings settings = ResolveExecutorSettings(kFargateOptions, Variables({}));
  auto expected = [](const std::string& overrides) {
    return Args{"ecs",
                "run-task",
                "--cluster",
                "sl-cluster",
                "--launch-type",
                "FARGATE",
                "--task-definition",
                "starlake-task",
                "--network-configuration",
                "awsvpcConfiguration={subnets=[subnet-1,subnet-2],securityGroups=[sg-1],assignPublicIp=DISABLED}",
                "--overrides",
                overrides,
                "--region",
                "eu-west-3",
                "--profile",
                "default"};
  };
  const ExecutorInvocation load =
      RenderInvocation(settings, LoadCommand("starbake", "orders"), kAttempt, kSlEnv, "t", "a");
  EXPECT_EQ(load.program, "/usr/local/aws-cli/bin/aws");
  EXPECT_EQ(load.arguments,
            expected(R"({"containerOverrides":[{"name":"starlake","command":["load","--scheduledDate",)"
                     R"("2026-07-18T00:00:00+0000","--domains","starbake","--tables","orders"],"environment":[)"
                     R"({"name":"SL_ROOT","value":"file:///p"},{"name":"SL_ENV","value":"BQ"}],"cpu":1024,)"
                     R"("memory":2048}]})"));
  // The --options pairs join the variables (interval values without their quotes).
  EXPECT_EQ(RenderInvocation(settings, TransformCommand("kpi.x", "SL_ENV=SNOWFLAKE", ""), kAttempt, kSlEnv, "t", "a")
                .arguments,
            expected(R"({"containerOverrides":[{"name":"starlake","command":["transform","--scheduledDate",)"
                     R"("2026-07-18T00:00:00+0000","--name","kpi.x","--options","SL_ENV=SNOWFLAKE,)"
                     R"(sl_data_interval_start='2026-07-17T00:00:00+0000',)"
                     R"(sl_data_interval_end='2026-07-18T00:00:00+0000'"],"environment":[)"
                     R"({"name":"SL_ROOT","value":"file:///p"},{"name":"SL_ENV","value":"SNOWFLAKE"},)"
                     R"({"name":"sl_data_interval_start","value":"2026-07-17T00:00:00+0000"},)"
                     R"({"name":"sl_data_interval_end","value":"2026-07-18T00:00:00+0000"}],"cpu":1024,)"
                     R"("memory":2048}]})"));
  nlohmann::json sized = kFargateOptions;
  sized["cpu"] = "512";
  sized["memory"] = 1024;
  sized["aws_region"] = "us-east-1";
  sized["aws_profile"] = "ops";
  sized["AWS_SDK"] = "/opt/aws/";
  const ExecutorInvocation preload =
      RenderInvocation(ResolveExecutorSettings(sized, Variables({})), kPreload, kAttempt, {}, "t", "a");
  EXPECT_EQ(preload.program, "/opt/aws/bin/aws");
  Args preload_expected =
      expected(R"({"containerOverrides":[{"name":"starlake","command":["preload","--scheduledDate",)"
               R"("2026-07-18T00:00:00+0000","--domain","starbake","--tables","customers,orders","--strategy",)"
               R"("imported","--options","SL_RUN_MODE=main,SL_LOG_LEVEL=info"],"environment":[)"
               R"({"name":"SL_RUN_MODE","value":"main"},{"name":"SL_LOG_LEVEL","value":"info"}],"cpu":512,)"
               R"("memory":1024}]})");
  preload_expected[13] = "us-east-1";
  preload_expected[15] = "ops";
  EXPECT_EQ(preload.arguments, preload_expected);
}

TEST(ExecutorErrors, MissingRequiredOptionsNameTheOptionAndTheExecutor) {
  EXPECT_EQ(ErrorCode({{"executor", "cloud_run"}}),
            "SLU-EXECUTOR-001: the cloud_run executor needs option `cloud_run_job_name`, which has no value");
  EXPECT_EQ(ErrorCode(kCloudRunOptions, Variables({{"GCP_REGION", "r"}})),
            "SLU-EXECUTOR-001: the cloud_run executor needs option `cloud_run_project_id`, which has no value (nor "
            "is GCP_PROJECT set)");
  EXPECT_EQ(ErrorCode(kCloudRunOptions, Variables({{"GCP_PROJECT", "p"}})),
            "SLU-EXECUTOR-001: the cloud_run executor needs option `cloud_run_job_region`, which has no value (nor "
            "is GCP_REGION set)");
  // The variable of the option's own name is the last resort.
  EXPECT_EQ(ResolveExecutorSettings(kCloudRunOptions, Variables({{"cloud_run_project_id", "p"}, {"GCP_REGION", "r"}}))
                .cloud_run.project_id,
            "p");
  for (const char* key : {"cluster_id", "spark_jar_list", "spark_bucket", "dataproc_project_id"}) {
    nlohmann::json options = kDataprocOptions;
    options[key] = "";  // an empty string counts as absent
    const std::string prefix =
        std::string("SLU-EXECUTOR-001: the dataproc executor needs option `") + key + "`, which has no value";
    EXPECT_EQ(ErrorCode(options).substr(0, prefix.size()), prefix);
  }
  for (const char* key : {"aws_cluster_name", "aws_task_definition_name", "aws_task_definition_container_name",
                          "aws_task_private_subnets", "aws_task_security_groups"}) {
    nlohmann::json options = kFargateOptions;
    options.erase(key);
    EXPECT_EQ(ErrorCode(options),
              std::string("SLU-EXECUTOR-001: the fargate executor needs option `") + key + "`, which has no value");
  }
  ExecutorSettings undated = ResolveExecutorSettings(kDataprocOptions, Variables({}));
  try {
    RenderInvocation(undated, LoadCommand("d", "t"), kAttempt, {}, "t", "a");
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-EXECUTOR-001");
  }
}

TEST(ExecutorErrors, InvalidValuesSayWhatWasExpected) {
  EXPECT_EQ(ErrorCode({{"executor", "kubernetes"}}),
            "SLU-EXECUTOR-002: option `executor` is `kubernetes`, which is not an executor Sluice has");
  nlohmann::json options = kDataprocOptions;
  options["dataproc_job_wait_timeout"] = 0;
  EXPECT_EQ(ErrorCode(options),
            "SLU-EXECUTOR-002: option `dataproc_job_wait_timeout` of the dataproc executor is `0`; "
            "expected a positive whole number, e.g. 3600");
  for (const nlohmann::json& bad :
       {nlohmann::json("-5"), nlohmann::json("ten"), nlohmann::json(2.5), nlohmann::json("99999999999")}) {
    options = kDataprocOptions;
    options["dataproc_num_workers"] = bad;
    EXPECT_EQ(ErrorCode(options).substr(0, 16), "SLU-EXECUTOR-002") << bad.dump();
  }
  options = kDataprocOptions;
  options["dataproc_cluster_metadata"] = "{not json";
  EXPECT_EQ(ErrorCode(options),
            "SLU-EXECUTOR-002: option `dataproc_cluster_metadata` of the dataproc executor is "
            "`{not json`; expected a JSON object, e.g. {\"key\": \"value\"}");
  options["dataproc_cluster_metadata"] = "[1]";
  EXPECT_EQ(ErrorCode(options).substr(0, 16), "SLU-EXECUTOR-002");
  nlohmann::json fargate = kFargateOptions;
  fargate["memory"] = "-1";
  EXPECT_EQ(ErrorCode(fargate).substr(0, 16), "SLU-EXECUTOR-002");
  fargate = kFargateOptions;
  fargate["aws_task_security_groups"] = " , ";
  EXPECT_EQ(ErrorCode(fargate),
            "SLU-EXECUTOR-002: option `aws_task_security_groups` of the fargate executor is "
            "` , `; expected a comma-separated list with at least one item");
}

}  // namespace
}  // namespace sluice::orchestrate
