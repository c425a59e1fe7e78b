// Staged (virtual) deployments on the PostgreSQL test server, through the sluice binary on the duck_virtual fixture
// switched to adapter = "postgres" (its models' DOUBLE spelled DOUBLE PRECISION): plan, backfill, audit backfill,
// publish and rollback with the data the stable views show at each step; a kill -9 inside publish and inside backfill,
// two publishes at once, and a deployment whose staged audit fails. Each test works in a database of its own.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

// The stable views the fixture's models get (namespace `shop`, the default table prefix).
constexpr const char* kPaidOrders = "shop.tbl__paid_orders";
constexpr const char* kCustomerTiers = "shop.tbl__customer_tiers";
constexpr const char* kDailyTotals = "shop.tbl__daily_totals";

// The fixture, switched to this test's PostgreSQL database. Its models say DOUBLE, which PostgreSQL spells DOUBLE
// PRECISION.
class PostgresProject : public ScratchProject {
 public:
  PostgresProject() : ScratchProject("duck_virtual") {
    server_ = RequirePostgresTestServer();
    database_ = CreatePostgresTestDatabase(server_, "deploy");
    Write("streambuild_project.toml", R"(name = "duck_virtual"
adapter = "postgres"
default_target = "test"

[defaults]
pipeline_mode = "virtual"

[targets.test]
database = "shop"

[targets.test.connection]
)" + PostgresTestConnectionToml(server_, database_));
    for (const char* model : {"paid_orders", "daily_totals"}) {
      const std::string file = std::string("pipelines/pl__shop/") + model + ".sql";
      Write(file, ForPostgres(Read(file)));
    }
  }
  static std::string ForPostgres(std::string sql) {
    for (size_t at = sql.find("AS DOUBLE)"); at != std::string::npos; at = sql.find("AS DOUBLE)", at + 1)) {
      sql.replace(at, 10, "AS DOUBLE PRECISION)");
    }
    return sql;
  }
  Warehouse& warehouse() const {
    if (!warehouse_) warehouse_ = OpenWarehouse(PostgresTestConfig(server_, database_));
    return *warehouse_;
  }

 private:
  PostgresTestServer server_;
  std::string database_;
  mutable std::unique_ptr<Warehouse> warehouse_;
};

void Execute(const PostgresProject& project, const std::string& sql) { project.warehouse().Execute(sql); }

std::vector<std::string> Rows(const PostgresProject& project, const std::string& sql) {
  std::vector<std::string> rows;
  for (const auto& row : project.warehouse().Query(sql).rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "|" : "") + row[i].value_or("NULL");
    rows.push_back(line);
  }
  return rows;
}

std::string One(const PostgresProject& project, const std::string& sql) {
  std::vector<std::string> rows = Rows(project, sql);
  return rows.empty() ? "<no rows>" : rows.front();
}

ProcessResult MustRun(const ScratchProject& project, const std::vector<std::string>& args) {
  ProcessResult result = project.Run(args);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  return result;
}

// The adopted source table with two partitions: three paid orders (one on another day), two tier events, a refund.
void CreateEvents(const PostgresProject& project) {
  Execute(project,
          "CREATE SCHEMA IF NOT EXISTS shop;\n"
          "CREATE TABLE shop.events_raw (order_id BIGINT, customer VARCHAR, amount DOUBLE PRECISION, status VARCHAR, "
          "tier VARCHAR, "
          "_replay_partition INTEGER, _replay_offset BIGINT, _replay_timestamp TIMESTAMP);\n"
          "INSERT INTO shop.events_raw VALUES\n"
          "  (NULL, 'ann', NULL, 'tier', 'gold',   0, 1, '2026-08-01 09:00:00'),\n"
          "  (1,    'ann', 10.0, 'paid', NULL,     0, 2, '2026-08-01 10:00:00'),\n"
          "  (2,    'bob', 20.0, 'paid', NULL,     0, 3, '2026-08-01 11:00:00'),\n"
          "  (NULL, 'bob', NULL, 'tier', 'silver', 1, 1, '2026-08-01 09:30:00'),\n"
          "  (3,    'ann', 5.0,  'paid', NULL,     1, 2, '2026-08-02 08:00:00'),\n"
          "  (4,    'cat', 7.0,  'refunded', NULL, 1, 3, '2026-08-02 09:00:00')");
}

json JsonOf(const ProcessResult& result) {
  json parsed = json::parse(result.out, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << result.out << result.err;
  return parsed;
}

json MustRunJson(const ScratchProject& project, const std::vector<std::string>& args) {
  return JsonOf(MustRun(project, args));
}

// `backfill --json`, expected complete; returns its summary.
json Backfill(const ScratchProject& project, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"backfill", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  json summary = MustRunJson(project, args);
  EXPECT_EQ(summary["complete"], true) << summary.dump(2);
  return summary;
}

const json* ObjectOf(const json& plan, const std::string& model) {
  for (const json& object : plan["objects"]) {
    if (object["model"] == model) return &object;
  }
  ADD_FAILURE() << "no object " << model << " in " << plan.dump(2);
  return nullptr;
}

std::string ActionOf(const json& plan, const std::string& model) {
  const json* object = ObjectOf(plan, model);
  return object ? object->value("action", "") : "";
}

// The physical relation a stable view reads now.
std::string BoundTo(const PostgresProject& project, const std::string& view) {
  return One(project, "SELECT pg_get_viewdef('" + view + "'::regclass)");
}

std::string PaidOrders(const PostgresProject& project) {
  std::string text;
  for (const std::string& row :
       Rows(project, std::string("SELECT order_id, customer, amount FROM ") + kPaidOrders + " ORDER BY order_id")) {
    text += row + "\n";
  }
  return text;
}

std::string DailyTotals(const PostgresProject& project) {
  std::string text;
  for (const std::string& row :
       Rows(project, std::string("SELECT day, tier, orders, amount FROM ") + kDailyTotals + " ORDER BY day, tier")) {
    text += row + "\n";
  }
  return text;
}

int64_t PublicationsOf(const PostgresProject& project, const std::string& deployment_id, bool rows) {
  return std::stoll(One(project, std::string("SELECT ") + (rows ? "count(*)" : "count(DISTINCT publication_id)") +
                                     " FROM _sluice.publications WHERE deployment_id = '" + deployment_id + "'"));
}

const std::string kFirstPaidOrders = "1|ann|10\n2|bob|20\n3|ann|5\n";
const std::string kFirstDailyTotals = "2026-08-01|gold|1|10\n2026-08-01|silver|1|20\n2026-08-02|gold|1|5\n";

// The same model with one more column: an add-only (non-breaking, seedable) change.
const char* kPaidOrdersWithCode = R"(MODEL (
  description "Paid orders, one row per event",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(upper(customer) AS VARCHAR) AS customer_code,
  CAST(amount AS DOUBLE PRECISION) AS amount,
  CAST(_replay_partition AS INTEGER) AS _replay_partition,
  CAST(_replay_offset AS BIGINT) AS _replay_offset,
  CAST(_replay_timestamp AS TIMESTAMP) AS _replay_timestamp
FROM __source("events")
WHERE status = 'paid'
)";

// `amount` retyped: a breaking, non-seedable change.
const char* kPaidOrdersDecimal = R"(MODEL (
  description "Paid orders, one row per event",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(upper(customer) AS VARCHAR) AS customer_code,
  CAST(amount AS DECIMAL(18, 2)) AS amount,
  CAST(_replay_partition AS INTEGER) AS _replay_partition,
  CAST(_replay_offset AS BIGINT) AS _replay_offset,
  CAST(_replay_timestamp AS TIMESTAMP) AS _replay_timestamp
FROM __source("events")
WHERE status = 'paid'
)";

TEST(DeploymentPostgres, PlanBackfillPublishChangeAndRollBack) {
  PostgresProject project;
  CreateEvents(project);
  const std::string kRelations =
      "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_schema NOT IN "
      "('pg_catalog', 'information_schema') ORDER BY 1";
  const std::vector<std::string> before = Rows(project, kRelations);

  // plan: every object created, nothing changed in the warehouse.
  const json planned = MustRunJson(project, {"plan", "--json"});
  EXPECT_EQ(planned["mode"], "virtual") << planned.dump(2);
  for (const char* model : {"paid_orders", "customer_tiers", "daily_totals"})
    EXPECT_EQ(ActionOf(planned, model), "create");
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/plan.json"));
  EXPECT_EQ(Rows(project, kRelations), before);

  // backfill → audit → publish.
  const json first = Backfill(project);
  const std::string d1 = first["deployment_id"];
  EXPECT_EQ(first["resumed"], false);
  EXPECT_EQ(first["staged_rows"]["tbl__paid_orders"], 3) << first.dump(2);
  EXPECT_EQ(One(project, "SELECT count(*) FROM shop.\"tbl__paid_orders__" + d1 + "\""), "3");
  EXPECT_EQ(One(project, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'tbl__paid_orders'"), "0")
      << "backfill publishes nothing";
  const json audit = MustRunJson(project, {"audit", "backfill", "--json"});
  EXPECT_EQ(audit["deployment_id"], d1);
  EXPECT_NE(audit["verdict"], "not_ready") << audit.dump(2);
  const json published = MustRunJson(project, {"publish", "--json"});
  EXPECT_EQ(published["deployment_id"], d1);
  EXPECT_EQ(published["bindings"].size(), 3u) << published.dump(2);

  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(Rows(project, std::string("SELECT customer, tier FROM ") + kCustomerTiers + " ORDER BY 1"),
            (std::vector<std::string>{"ann|gold", "bob|silver"}));
  EXPECT_EQ(DailyTotals(project), kFirstDailyTotals);
  EXPECT_EQ(PublicationsOf(project, d1, false), 1);

  // Published and unchanged: nothing to deploy, and nothing earlier to roll back to.
  const json unchanged = MustRunJson(project, {"plan", "--json"});
  for (const char* model : {"paid_orders", "customer_tiers", "daily_totals"}) {
    EXPECT_EQ(ActionOf(unchanged, model), "no_op");
  }
  EXPECT_EQ(MustRunJson(project, {"backfill", "--json"})["status"], "NOTHING_TO_DO");
  const ProcessResult nothing_earlier = project.Run({"deployment", "rollback", "--previous"});
  EXPECT_EQ(nothing_earlier.exit_code, 1) << nothing_earlier.out << nothing_earlier.err;
  EXPECT_NE(nothing_earlier.err.find("SLU-DEPLOY-036"), std::string::npos) << nothing_earlier.err;

  // New source rows; a PostgreSQL deployment is a snapshot, as on DuckDB, so the views show them once a deployment
  // rebuilds.
  Execute(project, "INSERT INTO shop.events_raw VALUES (5, 'bob', 30.0, 'paid', NULL, 0, 4, '2026-08-02 12:00:00')");
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);

  // An added column: paid_orders rebuilt non-breaking and seedable, daily_totals with it, customer_tiers kept.
  project.Write("pipelines/pl__shop/paid_orders.sql", kPaidOrdersWithCode);
  const json added = MustRunJson(project, {"plan", "--json"});
  EXPECT_EQ(ActionOf(added, "paid_orders"), "rebuild") << added.dump(2);
  const json* paid = ObjectOf(added, "paid_orders");
  ASSERT_NE(paid, nullptr);
  EXPECT_EQ((*paid)["column_diff"]["impact"], "non_breaking");
  EXPECT_EQ((*paid)["column_diff"]["seedability"], "seedable");
  EXPECT_EQ((*paid)["column_diff"]["added"], json::array({"customer_code"}));
  EXPECT_EQ(ActionOf(added, "daily_totals"), "rebuild");
  EXPECT_EQ(ObjectOf(added, "daily_totals")->value("reason", ""), "upstream paid_orders is rebuilt");
  EXPECT_EQ(ActionOf(added, "customer_tiers"), "no_op");
  const ProcessResult added_text = MustRun(project, {"plan"});
  EXPECT_NE(added_text.out.find("+customer_code non_breaking, seedable"), std::string::npos) << added_text.out;

  const std::string d2 = Backfill(project)["deployment_id"];
  EXPECT_NE(d2, d1);
  const json second = MustRunJson(project, {"publish", d2, "--json"});
  EXPECT_EQ(second["previous_deployment_id"], d1);
  EXPECT_EQ(second["bindings"].size(), 2u) << "only rebuilt relations are bound again: " << second.dump(2);
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders + "5|bob|30\n");
  EXPECT_EQ(Rows(project, std::string("SELECT customer_code FROM ") + kPaidOrders + " ORDER BY order_id"),
            (std::vector<std::string>{"ANN", "BOB", "ANN", "BOB"}));
  EXPECT_EQ(DailyTotals(project),
            "2026-08-01|gold|1|10\n2026-08-01|silver|1|20\n2026-08-02|gold|1|5\n"
            "2026-08-02|silver|1|30\n");
  EXPECT_NE(BoundTo(project, kCustomerTiers).find("tbl__customer_tiers__" + d1), std::string::npos)
      << BoundTo(project, kCustomerTiers);

  // A retyped column: breaking and not seedable.
  project.Write("pipelines/pl__shop/paid_orders.sql", kPaidOrdersDecimal);
  const json retyped = MustRunJson(project, {"plan", "--json"});
  ASSERT_NE(ObjectOf(retyped, "paid_orders"), nullptr);
  EXPECT_EQ((*ObjectOf(retyped, "paid_orders"))["column_diff"]["impact"], "breaking") << retyped.dump(2);
  EXPECT_EQ((*ObjectOf(retyped, "paid_orders"))["column_diff"]["seedability"], "non_seedable");
  const std::string d3 = Backfill(project)["deployment_id"];
  EXPECT_NE(MustRunJson(project, {"deployment", "audit", d3, "--json"})["verdict"], "not_ready");
  EXPECT_EQ(MustRunJson(project, {"deployment", "promote", d3, "--json"})["previous_deployment_id"], d2);
  EXPECT_EQ(One(project, std::string("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '") +
                             kPaidOrders + "'::regclass AND attname = 'amount'"),
            "numeric(18,2)");
  EXPECT_EQ(DailyTotals(project),
            "2026-08-01|gold|1|10\n2026-08-01|silver|1|20\n2026-08-02|gold|1|5\n"
            "2026-08-02|silver|1|30\n");

  // Roll back to the previous publication, then to the first deployment.
  const json back = MustRunJson(project, {"deployment", "rollback", "--previous", "--json"});
  EXPECT_EQ(back["operation"], "rollback");
  EXPECT_EQ(back["deployment_id"], d2) << back.dump(2);
  EXPECT_EQ(One(project, std::string("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '") +
                             kPaidOrders + "'::regclass AND attname = 'amount'"),
            "double precision");
  EXPECT_NE(BoundTo(project, kPaidOrders).find("tbl__paid_orders__" + d2), std::string::npos);
  EXPECT_NE(BoundTo(project, kDailyTotals).find("tbl__daily_totals__" + d2), std::string::npos);

  const json to_first = MustRunJson(project, {"deployment", "rollback", d1, "--json"});
  EXPECT_EQ(to_first["deployment_id"], d1);
  EXPECT_EQ(to_first["previous_deployment_id"], d2) << "customer_tiers stays on d1; the views that switch were on d2";
  for (const char* view : {kPaidOrders, kCustomerTiers, kDailyTotals}) {
    EXPECT_NE(BoundTo(project, view).find("__" + d1), std::string::npos) << view << ": " << BoundTo(project, view);
  }
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders) << "the first deployment's tables, as they were staged";
  EXPECT_EQ(DailyTotals(project), kFirstDailyTotals);
  EXPECT_EQ(Rows(project,
                 "SELECT column_name FROM information_schema.columns WHERE table_schema = 'shop' AND "
                 "table_name = 'tbl__paid_orders' AND column_name = 'customer_code'"),
            std::vector<std::string>{});
}

// The deployment id a (killed) backfill planned: it writes its plan before it changes anything.
std::string PlannedDeploymentId(const PostgresProject& project) {
  return json::parse(project.Read("target/run/backfill/plan.json"))["deployment_id"];
}

pid_t StartPaused(const ScratchProject& project, const std::vector<std::string>& args, const std::string& pause_at,
                  const std::string& stem) {
  const std::string marker = (project.root() / (stem + ".paused")).string();
  pid_t pid = project.Start(args,
                            {{"SLUICE_TEST_PAUSE_AT", pause_at},
                             {"SLUICE_TEST_PAUSE_MARKER", marker},
                             {"SLUICE_TEST_PAUSE_RESUME", (project.root() / (stem + ".resume")).string()}},
                            stem);
  if (!WaitForFile(marker, 120)) {
    ::kill(pid, SIGKILL);
    WaitFor(pid);
    ADD_FAILURE() << "never paused at " << pause_at << ": " << project.Read("../" + stem + ".err");
    return -1;
  }
  return pid;
}

void Kill(pid_t pid) {
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);
  EXPECT_EQ(WaitFor(pid), 128 + SIGKILL);
}

class KilledPublish : public ::testing::TestWithParam<const char*> {};

TEST_P(KilledPublish, RerunningPublishConvergesAndRecordsThePublicationOnce) {
  PostgresProject project;
  CreateEvents(project);
  const std::string id = Backfill(project)["deployment_id"];
  Kill(StartPaused(project, {"publish", id}, GetParam(), "publish"));

  const json rerun = MustRunJson(project, {"publish", id, "--json"});
  EXPECT_EQ(rerun["deployment_id"], id);
  for (const char* view : {kPaidOrders, kCustomerTiers, kDailyTotals}) {
    EXPECT_NE(BoundTo(project, view).find("__" + id), std::string::npos) << view << ": " << BoundTo(project, view);
  }
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(DailyTotals(project), kFirstDailyTotals);
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
  EXPECT_EQ(PublicationsOf(project, id, true), 3);
  EXPECT_EQ(One(project,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = '_sluice' AND "
                "table_name LIKE 'publish_lock%'"),
            "0")
      << "the dead publisher's lock is taken over and released";
}

INSTANTIATE_TEST_SUITE_P(DeploymentPostgres, KilledPublish,
                         ::testing::Values("bind_before_switch", "bind_after_switch"));

class KilledBackfill : public ::testing::TestWithParam<const char*> {};

TEST_P(KilledBackfill, PublishRefusesItAndRerunningBackfillResumesTheSameDeployment) {
  PostgresProject project;
  CreateEvents(project);
  Kill(StartPaused(project, {"backfill"}, GetParam(), "backfill"));
  const std::string id = PlannedDeploymentId(project);

  const ProcessResult refused = project.Run({"publish", id});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("SLU-DEPLOY-032"), std::string::npos) << refused.err;

  const json resumed = Backfill(project);
  EXPECT_EQ(resumed["deployment_id"], id);
  EXPECT_EQ(resumed["resumed"], true);
  MustRun(project, {"audit", "backfill", id});
  MustRun(project, {"publish", id});
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(DailyTotals(project), kFirstDailyTotals);
}

INSTANTIATE_TEST_SUITE_P(DeploymentPostgres, KilledBackfill,
                         ::testing::Values("backfill_after_preparation", "backfill_before_complete"));

TEST(DeploymentPostgres, RollbackBeforeAnyPublicationSaysNothingWasPublished) {
  PostgresProject project;
  CreateEvents(project);
  Backfill(project);
  const ProcessResult rollback = project.Run({"deployment", "rollback", "--previous"});
  EXPECT_EQ(rollback.exit_code, 1) << rollback.out << rollback.err;
  EXPECT_NE(rollback.err.find("SLU-DEPLOY-036"), std::string::npos) << rollback.err;
}

TEST(DeploymentPostgres, ASecondPublishWhileOneIsSwitchingIsRefused) {
  PostgresProject project;
  CreateEvents(project);
  const std::string id = Backfill(project)["deployment_id"];
  const pid_t first = StartPaused(project, {"publish", id}, "bind_before_switch", "first");
  ASSERT_GT(first, 0);
  const ProcessResult second = project.Run({"publish", id});
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  // A server: the second publish connects and finds the first one's lock.
  EXPECT_NE(second.err.find("SLU-DEPLOY-031"), std::string::npos) << second.err;
  std::ofstream(project.root() / "first.resume") << "go\n";
  EXPECT_EQ(WaitFor(first), 0) << project.Read("../first.err");
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
}

TEST(DeploymentPostgres, ADeploymentWhoseStagedAuditFailsIsPublishedOnlyWithForce) {
  PostgresProject project;
  CreateEvents(project);
  Execute(project, "INSERT INTO shop.events_raw VALUES (6, 'dan', -1.0, 'paid', NULL, 0, 5, '2026-08-02 13:00:00')");
  const std::string id = Backfill(project)["deployment_id"];

  const ProcessResult audit = project.Run({"audit", "backfill", id, "--json"});
  EXPECT_EQ(audit.exit_code, 1) << audit.out << audit.err;
  const json report = JsonOf(audit);
  EXPECT_EQ(report["verdict"], "not_ready") << report.dump(2);

  const ProcessResult refused = project.Run({"publish", id});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("SLU-DEPLOY-034"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("paid amounts are positive"), std::string::npos) << refused.err;
  EXPECT_EQ(One(project, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'tbl__paid_orders'"), "0");

  const json forced = MustRunJson(project, {"publish", id, "--force", "--json"});
  EXPECT_EQ(forced["deployment_id"], id);
  EXPECT_EQ(One(project, std::string("SELECT count(*) FROM ") + kPaidOrders + " WHERE amount <= 0"), "1");
}


TEST(DeploymentPostgres, ThePlannedIdIsBackfilledAndAPublishKilledAfterItsSwitchIsFinishedByRerunningIt) {
  PostgresProject project;
  CreateEvents(project);
  const std::string planned = MustRunJson(project, {"plan", "--json"})["deployment_id"];
  const std::string id = Backfill(project)["deployment_id"];
  EXPECT_EQ(id, planned);
  Kill(StartPaused(project, {"publish"}, "bind_after_switch", "publish"));

  const ProcessResult rerun = project.Run({"publish", "--json"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_EQ(JsonOf(rerun)["deployment_id"], id);
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
  EXPECT_EQ(One(project,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = '_sluice' AND "
                "table_name LIKE 'publish_lock%'"),
            "0");
  const json listed = MustRunJson(project, {"deployment", "list", "--json"});
  EXPECT_EQ(listed["database"], "shop");
  ASSERT_EQ(listed["deployments"].size(), 1u) << listed.dump(2);
  EXPECT_EQ(listed["deployments"][0]["state"], "active");
}

}  // namespace
}  // namespace sluice::testing
