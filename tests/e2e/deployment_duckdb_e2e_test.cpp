// Staged (virtual) deployments on the embedded DuckDB, through the sluice binary on the duck_virtual fixture: plan,
// backfill, audit backfill, publish and rollback with the data the stable views show at each step; a kill -9 inside
// publish and inside backfill, two publishes at once, and a deployment whose staged audit fails.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"
#include "e2e/warehouse_queries.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

// The stable views the fixture's models get (namespace `shop`, the default table prefix).
constexpr const char* kPaidOrders = "shop.tbl__paid_orders";
constexpr const char* kCustomerTiers = "shop.tbl__customer_tiers";
constexpr const char* kDailyTotals = "shop.tbl__daily_totals";

void Execute(const ScratchProject& project, const std::string& sql) {
  auto warehouse = DuckDbWarehouse::Open(project.root() / "warehouse.duckdb", false, {});
  warehouse->Execute(sql);
}

// The adopted source table with two partitions: three paid orders (one on another day), two tier events, a refund.
void CreateEvents(const ScratchProject& project) {
  Execute(
      project,
      "CREATE SCHEMA IF NOT EXISTS shop;\n"
      "CREATE TABLE shop.events_raw (order_id BIGINT, customer VARCHAR, amount DOUBLE, status VARCHAR, tier VARCHAR, "
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
std::string BoundTo(const ScratchProject& project, const std::string& view) {
  const size_t dot = view.find('.');
  return One(project, "SELECT sql FROM duckdb_views() WHERE schema_name = '" + view.substr(0, dot) +
                          "' AND view_name = '" + view.substr(dot + 1) + "'");
}

std::string PaidOrders(const ScratchProject& project) {
  std::string text;
  for (const std::string& row :
       Rows(project, std::string("SELECT order_id, customer, amount FROM ") + kPaidOrders + " ORDER BY order_id")) {
    text += row + "\n";
  }
  return text;
}

std::string DailyTotals(const ScratchProject& project) {
  std::string text;
  for (const std::string& row :
       Rows(project, std::string("SELECT day, tier, orders, amount FROM ") + kDailyTotals + " ORDER BY day, tier")) {
    text += row + "\n";
  }
  return text;
}

int64_t PublicationsOf(const ScratchProject& project, const std::string& deployment_id, bool rows) {
  return std::stoll(One(project, std::string("SELECT ") + (rows ? "count(*)" : "count(DISTINCT publication_id)") +
                                     " FROM _sluice.publications WHERE deployment_id = '" + deployment_id + "'"));
}

const std::string kFirstPaidOrders = "1|ann|10.0\n2|bob|20.0\n3|ann|5.0\n";
const std::string kFirstDailyTotals = "2026-08-01|gold|1|10.0\n2026-08-01|silver|1|20.0\n2026-08-02|gold|1|5.0\n";

// The same model with one more column: an add-only (non-breaking, seedable) change.
const char* kPaidOrdersWithCode = R"(MODEL (
  description "Paid orders, one row per event",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(upper(customer) AS VARCHAR) AS customer_code,
  CAST(amount AS DOUBLE) AS amount,
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

TEST(DeploymentDuckDb, PlanBackfillPublishChangeAndRollBack) {
  ScratchProject project("duck_virtual");
  CreateEvents(project);
  const std::vector<std::string> before = Rows(project,
                                               "SELECT table_schema || '.' || table_name FROM "
                                               "information_schema.tables ORDER BY 1");

  // plan: every object created, nothing changed in the warehouse.
  const json planned = MustRunJson(project, {"plan", "--json"});
  EXPECT_EQ(planned["mode"], "virtual") << planned.dump(2);
  for (const char* model : {"paid_orders", "customer_tiers", "daily_totals"})
    EXPECT_EQ(ActionOf(planned, model), "create");
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/plan.json"));
  EXPECT_EQ(Rows(project, "SELECT table_schema || '.' || table_name FROM information_schema.tables ORDER BY 1"),
            before);

  // backfill → audit → publish.
  const json first = Backfill(project);
  const std::string d1 = first["deployment_id"];
  EXPECT_EQ(first["resumed"], false);
  EXPECT_EQ(first["staged_rows"]["tbl__paid_orders"], 3) << first.dump(2);
  EXPECT_EQ(One(project, "SELECT count(*) FROM shop.tbl__paid_orders__" + d1), "3");
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

  // New source rows; a DuckDB deployment is a snapshot, so the views show them once a deployment rebuilds.
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
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders + "5|bob|30.0\n");
  EXPECT_EQ(Rows(project, std::string("SELECT customer_code FROM ") + kPaidOrders + " ORDER BY order_id"),
            (std::vector<std::string>{"ANN", "BOB", "ANN", "BOB"}));
  EXPECT_EQ(DailyTotals(project),
            "2026-08-01|gold|1|10.0\n2026-08-01|silver|1|20.0\n2026-08-02|gold|1|5.0\n"
            "2026-08-02|silver|1|30.0\n");
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
  EXPECT_EQ(One(project, std::string("SELECT typeof(amount) FROM ") + kPaidOrders + " LIMIT 1"), "DECIMAL(18,2)");
  EXPECT_EQ(DailyTotals(project),
            "2026-08-01|gold|1|10.0\n2026-08-01|silver|1|20.0\n2026-08-02|gold|1|5.0\n"
            "2026-08-02|silver|1|30.0\n");

  // Roll back to the previous publication, then to the first deployment.
  const json back = MustRunJson(project, {"deployment", "rollback", "--previous", "--json"});
  EXPECT_EQ(back["operation"], "rollback");
  EXPECT_EQ(back["deployment_id"], d2) << back.dump(2);
  EXPECT_EQ(One(project, std::string("SELECT typeof(amount) FROM ") + kPaidOrders + " LIMIT 1"), "DOUBLE");
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
std::string PlannedDeploymentId(const ScratchProject& project) {
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
  ScratchProject project("duck_virtual");
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

INSTANTIATE_TEST_SUITE_P(DeploymentDuckDb, KilledPublish, ::testing::Values("bind_before_switch", "bind_after_switch"));

class KilledBackfill : public ::testing::TestWithParam<const char*> {};

TEST_P(KilledBackfill, PublishRefusesItAndRerunningBackfillResumesTheSameDeployment) {
  ScratchProject project("duck_virtual");
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

INSTANTIATE_TEST_SUITE_P(DeploymentDuckDb, KilledBackfill,
                         ::testing::Values("backfill_after_preparation", "backfill_before_complete"));

TEST(DeploymentDuckDb, RollbackBeforeAnyPublicationSaysNothingWasPublished) {
  ScratchProject project("duck_virtual");
  CreateEvents(project);
  Backfill(project);
  const ProcessResult rollback = project.Run({"deployment", "rollback", "--previous"});
  EXPECT_EQ(rollback.exit_code, 1) << rollback.out << rollback.err;
  EXPECT_NE(rollback.err.find("SLU-DEPLOY-036"), std::string::npos) << rollback.err;
}

TEST(DeploymentDuckDb, ASecondPublishWhileOneIsSwitchingIsRefused) {
  ScratchProject project("duck_virtual");
  CreateEvents(project);
  const std::string id = Backfill(project)["deployment_id"];
  const pid_t first = StartPaused(project, {"publish", id}, "bind_before_switch", "first");
  ASSERT_GT(first, 0);
  const ProcessResult second = project.Run({"publish", id});
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  // DuckDB lets one process open the file: the second publish cannot even open it, and says who holds it.
  EXPECT_NE(second.err.find("SLU-WAREHOUSE-007"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("open read-write by another sluice process"), std::string::npos) << second.err;
  std::ofstream(project.root() / "first.resume") << "go\n";
  EXPECT_EQ(WaitFor(first), 0) << project.Read("../first.err");
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
}

TEST(DeploymentDuckDb, ADeploymentWhoseStagedAuditFailsIsPublishedOnlyWithForce) {
  ScratchProject project("duck_virtual");
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


TEST(DeploymentDuckDb, ThePlannedDeploymentIdIsTheOneBackfillCreates) {
  ScratchProject project("duck_virtual");
  CreateEvents(project);
  const std::string planned = MustRunJson(project, {"plan", "--json"})["deployment_id"];
  EXPECT_EQ(MustRunJson(project, {"plan", "--json"})["deployment_id"], planned) << "a second plan of the same project";
  const ProcessResult text = MustRun(project, {"plan"});
  EXPECT_NE(text.out.find("virtual deployment " + planned + " of shop"), std::string::npos) << text.out;
  EXPECT_EQ(Backfill(project)["deployment_id"], planned);
  MustRun(project, {"publish"});

  // Another plan (a changed model) gets another id, and backfill creates that one.
  project.Write("pipelines/pl__shop/paid_orders.sql", kPaidOrdersWithCode);
  const std::string changed = MustRunJson(project, {"plan", "--json"})["deployment_id"];
  EXPECT_NE(changed, planned);
  EXPECT_EQ(Backfill(project)["deployment_id"], changed);
}

TEST(DeploymentDuckDb, APublishKilledAfterItsSwitchIsFinishedByRerunningPublish) {
  ScratchProject project("duck_virtual");
  CreateEvents(project);
  const std::string id = Backfill(project)["deployment_id"];
  Kill(StartPaused(project, {"publish"}, "bind_after_switch", "publish"));

  const ProcessResult rerun = project.Run({"publish", "--json"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_EQ(JsonOf(rerun)["deployment_id"], id);
  EXPECT_EQ(PaidOrders(project), kFirstPaidOrders);
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
  EXPECT_EQ(PublicationsOf(project, id, true), 3);
  EXPECT_EQ(One(project,
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = '_sluice' AND "
                "table_name LIKE 'publish_lock%'"),
            "0");
  const ProcessResult again = project.Run({"publish"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("already published"), std::string::npos) << again.out;
  EXPECT_EQ(PublicationsOf(project, id, false), 1);
}

// The adopted table of duck_clicks: the replay roles live in part, ofs and ts.
void CreateClicks(const ScratchProject& project) {
  Execute(project,
          "CREATE SCHEMA IF NOT EXISTS h10;\n"
          "CREATE TABLE h10.clicks_raw (part INTEGER, ofs BIGINT, ts TIMESTAMP, url VARCHAR, user_id BIGINT);\n"
          "INSERT INTO h10.clicks_raw VALUES\n"
          "  (0, 1, '2026-08-01 10:00:00', '/a', 1),\n"
          "  (0, 2, '2026-08-01 11:00:00', '/b', 2),\n"
          "  (1, 1, '2026-08-02 10:00:00', '/a', 3),\n"
          "  (1, 2, '2026-08-02 11:00:00', '', 4)");
}

// The SELECT a plan step creates its table with: the statement after its first "AS\n", without the ";\n" ending it.
std::string PlannedSelect(const std::string& step_file) {
  const size_t as = step_file.find(" AS\n");
  std::string select = as == std::string::npos ? step_file : step_file.substr(as + 4);
  while (!select.empty() && (select.back() == '\n' || select.back() == ';')) select.pop_back();
  return select;
}

TEST(DeploymentDuckDb, AnAdoptedTableWithMappedRoleColumnsIsBackfilledWithTheSqlThePlanShows) {
  ScratchProject project("duck_clicks");
  CreateClicks(project);
  const json plan = MustRunJson(project, {"plan", "--json"});
  const std::string id = plan["deployment_id"];
  std::string planned;
  for (const auto& entry : std::filesystem::directory_iterator(project.root() / "target/run/plan/steps")) {
    if (entry.path().filename().string().find("tbl__click_events") != std::string::npos) {
      planned = PlannedSelect(project.Read("target/run/plan/steps/" + entry.path().filename().string()));
    }
  }
  ASSERT_FALSE(planned.empty());
  EXPECT_NE(planned.find("ofs"), std::string::npos) << planned;

  const json backfill = Backfill(project);
  ASSERT_EQ(backfill["deployment_id"], id);
  const std::string executed =
      project.Read("target/run/backfill/statements/h10/tbl__click_events__" + id + ".sql");
  EXPECT_NE(executed.find(planned), std::string::npos) << "planned:\n" << planned << "\nexecuted:\n" << executed;

  MustRun(project, {"publish"});
  EXPECT_EQ(Rows(project, "SELECT url, _replay_partition, _replay_offset FROM h10.tbl__click_events ORDER BY 2, 3"),
            (std::vector<std::string>{"/a|0|1", "/b|0|2", "/a|1|1"}));
  EXPECT_EQ(Rows(project, "SELECT url, clicks FROM h10.tbl__clicks_per_url ORDER BY url"),
            (std::vector<std::string>{"/a|2", "/b|1"}));
}

// duck_databases: the target's database is raw (the seed lands there); the virtual pipeline's is silver.
TEST(DeploymentDuckDb, DeploymentsOfAPipelineWithItsOwnDatabaseAreListedAndDiagnosed) {
  ScratchProject project("duck_databases");
  const std::string id = Backfill(project)["deployment_id"];
  MustRun(project, {"publish", id});
  EXPECT_EQ(Rows(project, "SELECT day, orders, revenue FROM silver.tbl__daily_revenue ORDER BY day"),
            (std::vector<std::string>{"2026-01-01|1|10.0", "2026-01-02|1|7.5", "2026-01-03|1|2.5"}));

  const ProcessResult list = MustRun(project, {"deployment", "list"});
  EXPECT_NE(list.out.find(id), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("no deployments"), std::string::npos) << list.out;
  const json listed = MustRunJson(project, {"deployment", "list", "--json"});
  EXPECT_EQ(listed["database"], "silver") << listed.dump(2);
  ASSERT_EQ(listed["deployments"].size(), 1u) << listed.dump(2);
  EXPECT_EQ(listed["deployments"][0]["state"], "active");
  EXPECT_NE(MustRun(project, {"deployment", "show", id}).out.find("tbl__paid_orders__" + id), std::string::npos);

  const json doctor = MustRunJson(project, {"doctor"});
  EXPECT_EQ(doctor["database"], "silver") << doctor.dump(2);
  std::vector<std::string> kinds;
  for (const json& logical : doctor["logicals"]) {
    kinds.push_back(logical["logical"].get<std::string>() + " " + logical["state_kind"].get<std::string>());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"tbl__daily_revenue active_view_present",
                                             "tbl__paid_orders active_view_present"}));
}

TEST(DeploymentDuckDb, ADailyModelOfAPublishedVirtualPipelineRunsByDayIntoItsActiveTable) {
  ScratchProject project("duck_databases");
  const std::string id = Backfill(project)["deployment_id"];
  MustRun(project, {"publish", id});
  // A paid order reaches the active paid_orders table on 2026-01-02 (as live ingestion would bring it).
  Execute(project, "INSERT INTO silver.tbl__paid_orders__" + id + " VALUES (5, 4.5, DATE '2026-01-02')");

  const ProcessResult day = project.Run({"run", "--select", "daily_revenue", "--partition", "2026-01-02"});
  ASSERT_EQ(day.exit_code, 0) << day.out << day.err;
  EXPECT_EQ(Rows(project, "SELECT day, orders, revenue FROM silver.tbl__daily_revenue ORDER BY day"),
            (std::vector<std::string>{"2026-01-01|1|10.0", "2026-01-02|2|12.0", "2026-01-03|1|2.5"}));
  EXPECT_NE(BoundTo(project, "silver.tbl__daily_revenue").find("tbl__daily_revenue__" + id), std::string::npos)
      << "the day was written into the table the stable view reads, which stays bound: "
      << BoundTo(project, "silver.tbl__daily_revenue");
  EXPECT_EQ(One(project, "SELECT count(*) FROM _sluice.ledger WHERE asset = 'silver.daily_revenue' AND "
                         "window_start = DATE '2026-01-02' AND window_end = DATE '2026-01-03'"),
            "1");

  // The whole table, or a model without days, stays the deployments' to rebuild.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--select", "daily_revenue", "--full-refresh"},
        std::vector<std::string>{"run", "--select", "paid_orders"}}) {
    const ProcessResult refused = project.Run(args);
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("SLU-DEPLOY-001"), std::string::npos) << refused.err;
  }
}

}  // namespace
}  // namespace sluice::testing
