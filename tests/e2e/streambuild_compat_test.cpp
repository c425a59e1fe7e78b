// Compatibility: a project in StreamBuild's format using every compiler feature (managed Kafka and adopted
// sources, aggregates on SummingMergeTree, a `reference` side ref, macros with ctx, concrete and generic
// audits, model- and macro-mode tests) compiles unchanged, and its artifacts match StreamBuild §9 key by key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <tuple>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

std::set<std::string> Keys(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

class StreamBuildCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    ProcessResult result = project_.Run({"compile"}, {{"CLICKHOUSE_PASSWORD", "s3cr3t-value"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    manifest_ = json::parse(project_.Read("target/manifest.json"));
    dag_ = json::parse(project_.Read("target/streambuild_dag.json"));
  }

  ScratchProject project_{"streambuild_compat"};
  json manifest_;
  json dag_;
};

TEST_F(StreamBuildCompat, ManifestHasStreamBuildsKeysAndSluiceAdditionsApart) {
  EXPECT_EQ(Keys(manifest_), (std::set<std::string>{"artifacts", "audits", "macros", "metadata", "models", "pipelines",
                                                     "sluice", "sources", "tests"}));
  EXPECT_EQ(manifest_["metadata"], (json{{"manifest_version", 1}, {"tool", "sluice"}}));
  for (const auto& [name, model] : manifest_["models"].items()) {
    EXPECT_EQ(Keys(model), (std::set<std::string>{"logical_key", "name", "pipeline", "query_path", "refs",
                                                  "relation_name", "resources", "source", "spec"}))
        << name;
  }
  for (const auto& [name, pipeline] : manifest_["pipelines"].items()) {
    EXPECT_EQ(Keys(pipeline), (std::set<std::string>{"file", "models", "name", "replay_lineage_mode", "relations",
                                                     "resolved_database", "source_name"}))
        << name;
  }
  for (const auto& [name, source] : manifest_["sources"].items()) {
    EXPECT_EQ(Keys(source), (std::set<std::string>{"logical_key", "name", "name_origin", "relation_name",
                                                   "replay_lineage_mode", "resources"}))
        << name;
  }
  for (const auto& [name, audit] : manifest_["audits"].items()) {
    EXPECT_EQ(Keys(audit), (std::set<std::string>{"file", "name", "path", "referenced_models", "severity"})) << name;
  }
  for (const auto& [name, test] : manifest_["tests"].items()) {
    EXPECT_EQ(Keys(test), (std::set<std::string>{"file", "name", "path", "targets"})) << name;
  }
  for (const auto& [name, macro] : manifest_["macros"].items()) {
    EXPECT_EQ(Keys(macro), (std::set<std::string>{"file", "source"})) << name;
  }
  EXPECT_TRUE(manifest_["sluice"].contains("dag_identity"));
}

TEST_F(StreamBuildCompat, ModelsSourcesAndPipelinesResolveAsStreamBuildDoes) {
  const json& orders = manifest_["models"]["orders"];
  EXPECT_EQ(orders["relation_name"], "tbl__orders");
  EXPECT_EQ(orders["source"], "order_events");
  EXPECT_EQ(orders["spec"]["engine"], "MergeTree()");
  // The macro @replay_columns() expanded into three typed lineage columns.
  json columns = json::array();
  for (const json& column : orders["spec"]["columns"]) columns.push_back(column["name"]);
  EXPECT_EQ(columns, json::array({"order_id", "status", "region", "event_at", "_replay_partition", "_replay_offset",
                                  "_replay_timestamp"}));
  EXPECT_EQ(orders["spec"]["columns"][3]["type"], "DateTime64(3)");
  const json& revenue = manifest_["models"]["daily_revenue"];
  EXPECT_EQ(revenue["spec"]["engine"], "SummingMergeTree()");
  EXPECT_EQ(revenue["spec"]["settings"]["index_granularity"], "8192");
  EXPECT_EQ(revenue["refs"][1]["ref_type"], "reference");
  EXPECT_EQ(manifest_["models"]["enriched_orders"]["spec"], nullptr);
  EXPECT_EQ(manifest_["models"]["enriched_orders"]["source"], nullptr);
  EXPECT_EQ(manifest_["sources"]["order_events"]["relation_name"], "raw__order_events");
  EXPECT_EQ(manifest_["sources"]["order_events"]["resources"].size(), 3u);
  EXPECT_EQ(manifest_["sources"]["legacy_clicks"]["resources"], json::array());
  EXPECT_EQ(manifest_["pipelines"]["pl__order_events"]["replay_lineage_mode"], "offsets");
  EXPECT_EQ(manifest_["pipelines"]["pl__legacy"]["replay_lineage_mode"], "timestamp");
  EXPECT_EQ(manifest_["pipelines"]["pl__legacy"]["source_name"], "legacy_clicks");
  EXPECT_EQ(manifest_["pipelines"]["pl__order_events"]["resolved_database"], "orders_demo");
  // The adopted source exposes its physical timestamp column under the canonical replay name.
  EXPECT_EQ(project_.Read("target/compiled/models/pl__legacy/legacy_sessions.sql"),
            "SELECT\n  CAST(session_id AS String) AS session_id,\n"
            "  CAST(_replay_timestamp AS DateTime64(3)) AS _replay_timestamp\n"
            "FROM (SELECT *, event_timestamp AS _replay_timestamp FROM clicks_existing)\n");
  EXPECT_NE(project_.Read("target/compiled/resources/sources/order_events/kafka__order_events.sql")
                .find("kafka_group_name = 'streambuild_orders_demo_demo_order_events_orders_demo'"),
            std::string::npos);
  EXPECT_EQ(project_.Read("target/compiled/resources/models/pl__order_events/daily_revenue.mv.sql")
                .rfind("CREATE MATERIALIZED VIEW orders_demo.mv__daily_revenue\nTO orders_demo.tbl__daily_revenue AS\n", 0),
            0u);
}

TEST_F(StreamBuildCompat, TestsAuditsAndMacrosAreCompiled) {
  EXPECT_EQ(Keys(manifest_["macros"]),
            (std::set<std::string>{"line_total_expression", "pipeline_name", "qualified", "replay_columns",
                                   "source_name_from_topic", "timestamp_literal"}));
  // A Kafka source without a name takes the one defaults.sources.kafka.naming_macro derives from its topic.
  const json& refunds = manifest_["sources"]["refunds"];
  EXPECT_EQ(refunds["name_origin"]["kind"], "derived");
  EXPECT_EQ(refunds["name_origin"]["macro"], "source_name_from_topic");
  EXPECT_EQ(refunds["name_origin"]["macro_fingerprint"].get<std::string>().size(), 64u);
  EXPECT_EQ(manifest_["sources"]["order_events"]["name_origin"]["kind"], "declared");
  EXPECT_EQ(manifest_["tests"]["order items keep one row per sku"]["targets"], json::array({"order_items"}));
  EXPECT_EQ(manifest_["tests"]["line total expression handles nulls"]["path"],
            "compiled/tests/macro line total expression handles nulls/line total expression handles nulls.sql");
  EXPECT_EQ(Keys(manifest_["audits"]),
            (std::set<std::string>{"order_items.not_null.1", "order_items.not_null.2", "orders.not_null.1",
                                   "orders.status.accepted_values.1", "revenue_is_positive"}));
  EXPECT_EQ(manifest_["audits"]["revenue_is_positive"]["severity"], "warning");
  EXPECT_EQ(manifest_["audits"]["orders.status.accepted_values.1"]["path"],
            "compiled/audits/pipelines/pl__order_events/orders__orders.status.accepted_values.1.sql");
}

TEST_F(StreamBuildCompat, DagNodesAndEdgesFollowStreamBuildOrder) {
  EXPECT_EQ(dag_["metadata"], (json{{"dag_version", 1}, {"tool", "sluice"}}));
  json ids = json::array();
  for (const json& node : dag_["nodes"]) ids.push_back(node["id"]);
  EXPECT_EQ(ids, json::array({"source:legacy_clicks", "source:order_events", "source:refunds", "model:daily_revenue",
                              "model:enriched_orders", "model:legacy_sessions", "model:order_items", "model:orders",
                              "model:region_lookup", "test:line total expression handles nulls",
                              "test:order items keep one row per sku", "audit:order_items.not_null.1",
                              "audit:order_items.not_null.2", "audit:orders.not_null.1",
                              "audit:orders.status.accepted_values.1", "audit:revenue_is_positive"}));
  std::set<std::string> edge_types;
  for (const json& edge : dag_["edges"]) {
    EXPECT_EQ(Keys(edge), (std::set<std::string>{"edge_type", "from_id", "to_id"}));
    edge_types.insert(edge["edge_type"]);
  }
  EXPECT_EQ(edge_types, (std::set<std::string>{"audit", "driving_input", "reference", "test"}));
  EXPECT_EQ(dag_["edges"].size(), 14u);  // 5 driving_input, 3 reference, 1 test, 5 audit
  EXPECT_EQ(dag_["edges"], [&] {
    json sorted = dag_["edges"];
    std::sort(sorted.begin(), sorted.end(), [](const json& a, const json& b) {
      return std::tie(a["edge_type"].get_ref<const std::string&>(), a["from_id"].get_ref<const std::string&>(),
                      a["to_id"].get_ref<const std::string&>()) <
             std::tie(b["edge_type"].get_ref<const std::string&>(), b["from_id"].get_ref<const std::string&>(),
                      b["to_id"].get_ref<const std::string&>());
    });
    return sorted;
  }());
  EXPECT_EQ(dag_["macros"], json::array({"line_total_expression", "pipeline_name", "qualified", "replay_columns",
                                         "source_name_from_topic", "timestamp_literal"}));
  EXPECT_EQ(project_.Read("target/streambuild_dag.json").find("SELECT"), std::string::npos) << "no SQL text in the DAG";
}

TEST_F(StreamBuildCompat, ArtifactsAreListedDeterministicAndFreeOfSecrets) {
  std::set<std::string> written;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(project_.root() / "target")) {
    std::string relative = std::filesystem::relative(entry.path(), project_.root() / "target").generic_string();
    if (!entry.is_regular_file() || relative.rfind(".sluice-", 0) == 0) continue;  // Sluice's own bookkeeping
    written.insert(relative);
  }
  std::set<std::string> listed;
  for (const json& path : manifest_["artifacts"]) listed.insert(path);
  EXPECT_EQ(listed, written);
  EXPECT_EQ(manifest_["artifacts"][0], "manifest.json");
  EXPECT_EQ(manifest_["artifacts"][1], "streambuild_dag.json");
  for (const std::string& path : written) {
    EXPECT_EQ(project_.Read("target/" + path).find("s3cr3t-value"), std::string::npos) << path;
    if (path.size() > 4 && path.substr(path.size() - 4) == ".sql") {
      std::string sql = project_.Read("target/" + path);
      EXPECT_TRUE(sql.size() >= 2 && sql.back() == '\n' && sql[sql.size() - 2] != '\n') << path;
    }
  }
  std::string manifest_bytes = project_.Read("target/manifest.json");
  ASSERT_EQ(project_.Run({"compile"}).exit_code, 0);
  EXPECT_EQ(project_.Read("target/manifest.json"), manifest_bytes);
}

}  // namespace
}  // namespace sluice::testing
