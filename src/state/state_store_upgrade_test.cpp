// Databases an earlier Sluice wrote open and read back as the current code writes them. testdata/ holds one such
// database per backend as SQL text (testdata/README.md): WriteOneOfEveryRecord's records as the stores of that schema
// version stored them. Each test loads its fixture, opens it with the current store, and compares every read with a
// new store that WriteOneOfEveryRecord filled; then writes to the loaded one. The fixtures are never regenerated: a
// schema change adds a migration, and these files stay what older stores left behind.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/postgres/pg_connection.hpp"
#include "state/postgres/postgres_state_store.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "state/state_test_support.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice {
namespace {

constexpr const char* kAt = "2026-03-01T10:00:00.000Z";
constexpr const char* kLater = "2026-03-01T10:05:00.000Z";
// A process of another machine owns every unfinished run and the worker, so opening never judges them dead.
constexpr const char* kElsewhere = "golden-elsewhere";

RunRecord GoldenRun(const std::string& id, const std::string& created_at) {
  RunRecord run;
  run.run_id = id;
  run.selection = "+gold.daily_revenue";
  run.partition_start = "2026-01-01";
  run.partition_end = "2026-01-31";
  run.created_at = created_at;
  run.pid = 4242;
  run.pid_start_time = 17;
  return run;
}

// One record of every kind each store keeps, through the interfaces only, with fixed values.
void WriteOneOfEveryRecord(StateStore& store) {
  RunRecord finished = GoldenRun("r1", "2026-03-01T10:00:00.000Z");
  finished.tags = {{"logical_datetime", "2026-03-01T00:00:00"}, {"trigger", "schedule \"daily\" ü"}};
  store.CreateRun(finished);
  store.MarkStarted("r1", kAt);
  for (const RunEvent& event : OneEventOfEveryKind()) store.Append("r1", kAt, event);
  store.Append("r1", kAt, MaterializationEvent{"gold.totals", std::nullopt, std::nullopt, 3, 0, "h", true});
  store.FinishRun("r1", RunStatus::kFailure, kLater, "1 step failed");

  RunRecord unpartitioned = GoldenRun("r2", "2026-03-01T10:01:00.000Z");
  unpartitioned.partition_start.reset();
  unpartitioned.partition_end.reset();
  unpartitioned.backfill_id = "b1";
  store.CreateRun(unpartitioned);
  store.FinishRun("r2", RunStatus::kCanceled, kLater, "");

  RunRecord queued = GoldenRun("q1", "2026-03-01T10:02:00.000Z");
  queued.pid = 0;
  queued.pid_start_time = 0;
  queued.job = "load_orders";
  queued.tags = {{"dagster/priority", "1"}};
  store.CreateRun(queued);
  RunRecord claimed = queued;
  claimed.run_id = "q2";
  claimed.created_at = "2026-03-01T10:03:00.000Z";
  store.CreateRun(claimed);
  WorkerRecord worker{std::string(kElsewhere) + ":7:1", kElsewhere, 7, 1, kAt, kLater};
  store.RegisterWorker(worker);
  store.ClaimQueuedRun(worker, 5, {}, kLater);  // q1, the oldest

  store.RecordMaterializations({{"silver.orders", "2026-01-01", "r1", 1200, "ab12cd", kLater},
                                {"gold.totals", "", "r1", 3, "ef34", kLater}});

  BackfillRecord backfill;
  backfill.backfill_id = "b1";
  backfill.created_at = kAt;
  backfill.selection = "*";
  backfill.partition_from = "2026-01-01";
  backfill.partition_to = "2026-01-12";
  backfill.pid = 4242;
  backfill.pid_start_time = 17;
  backfill.max_concurrent_runs = 2;
  backfill.chunks = {
      BackfillChunk{0, std::nullopt, std::nullopt, {"raw.orders"}, ChunkStatus::kPending, ""},
      BackfillChunk{1, "2026-01-01", "2026-01-12", {"silver.orders", "gold.daily_revenue"}, ChunkStatus::kPending, ""},
  };
  store.CreateBackfill(backfill);
  store.UpdateChunk("b1", 0, ChunkStatus::kCanceled, "r2");
  store.SetBackfillStatus("b1", BackfillStatus::kCompletedFailed, kLater, "a chunk was canceled");
  BackfillRecord requested = backfill;
  requested.backfill_id = "b2";
  requested.created_at = kLater;
  requested.chunks.clear();
  store.CreateBackfill(requested);
  store.RecordPartitionStatuses({{"silver.orders", "2026-01-01", PartitionState::kMaterialized, "r1", "b1", kLater},
                                 {"gold.daily_revenue", "2026-01-01", PartitionState::kFailed, "r1", "b1", kLater}});

  store.SetInstigatorStatus("daily", InstigatorKind::kSchedule, InstigatorStatus::kRunning, kAt);
  store.SetInstigatorStatus("orders_landed", InstigatorKind::kSensor, InstigatorStatus::kStopped, kAt);
  store.RecordTick(TickRecord{0, "daily", InstigatorKind::kSchedule, kAt, kLater, TickStatus::kSuccess,
                              {"daily:2026-03-01"}, {"q1"}, "", ""},
                   "2026-03-01T00:00:00.000Z");
  store.RecordTick(TickRecord{0, "orders_landed", InstigatorKind::kSensor, kAt, kLater, TickStatus::kSkipped, {}, {},
                              "no new events", ""},
                   "{\"orders\": 3}");
  store.RecordTick(TickRecord{0, "daily", InstigatorKind::kSchedule, kLater, kLater, TickStatus::kFailure, {}, {}, "",
                              "cron failed"},
                   "2026-03-01T00:00:00.000Z");
  store.ClaimRunKey("daily:2026-03-01", "q1", kLater);

  store.RecordAssetMaterialization(
      AssetMaterializationRecord{0, "starbake_orders", "2026-03-01T00:00:00", "q1", kLater,
                                 nlohmann::json{{"sl_uri", "starbake.orders"}, {"sl_options", {{"a", 1}}}}});
  store.RecordAssetMaterialization(AssetMaterializationRecord{0, "starbake_orders", "", "q1", kLater, nullptr});
  store.RecordAssetMaterialization(AssetMaterializationRecord{0, "kpi_revenue", "", "r1", kLater, {}});
  store.AcquireDaemonLease(4242, 17, kAt, kAt);
}

// Every read of `actual` equals the same read of `expected`.
void ExpectSameReads(StateStore& actual, StateStore& expected) {
  EXPECT_EQ(actual.ListRuns(-1), expected.ListRuns(-1));
  EXPECT_EQ(actual.ListRuns(-1).size(), 4u);
  EXPECT_EQ(actual.RunsOfBackfill("b1"), expected.RunsOfBackfill("b1"));
  EXPECT_EQ(actual.RunsOfJob("load_orders", -1), expected.RunsOfJob("load_orders", -1));
  EXPECT_EQ(actual.UnclaimedQueuedRuns(), expected.UnclaimedQueuedRuns());

  std::vector<StoredEvent> events = actual.EventsForRun("r1");
  std::vector<StoredEvent> expected_events = expected.EventsForRun("r1");
  ASSERT_EQ(events.size(), expected_events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].event, expected_events[i].event) << i;
    EXPECT_EQ(events[i].at, expected_events[i].at);
    EXPECT_EQ(events[i].run_id, "r1");
  }

  EXPECT_EQ(actual.LatestMaterializations(), expected.LatestMaterializations());
  EXPECT_TRUE(actual.HasMaterializations());
  EXPECT_EQ(actual.ListBackfills(-1), expected.ListBackfills(-1));
  EXPECT_EQ(actual.PartitionStatuses(), expected.PartitionStatuses());
  EXPECT_EQ(actual.ListInstigators(), expected.ListInstigators());
  for (const char* instigator : {"daily", "orders_landed"}) {
    std::vector<TickRecord> ticks = actual.TicksOf(instigator, -1);
    std::vector<TickRecord> expected_ticks = expected.TicksOf(instigator, -1);
    ASSERT_EQ(ticks.size(), expected_ticks.size());
    for (size_t i = 0; i < ticks.size(); ++i) {
      expected_ticks[i].tick_id = ticks[i].tick_id;  // identities are the store's own
      EXPECT_EQ(ticks[i], expected_ticks[i]);
    }
  }
  EXPECT_EQ(actual.ClaimRunKey("daily:2026-03-01", "other", kLater), "q1");
  EXPECT_EQ(actual.RecentAssetMaterializations("starbake_orders", 10),
            expected.RecentAssetMaterializations("starbake_orders", 10));
  EXPECT_EQ(actual.LatestAssetMaterializations(), expected.LatestAssetMaterializations());
  EXPECT_EQ(actual.LastAssetSequence(), expected.LastAssetSequence());
  EXPECT_EQ(actual.ListWorkers(), expected.ListWorkers());

  // And the loaded database takes new writes of every kind.
  RunRecord next = GoldenRun("r9", kLater);
  actual.CreateRun(next);
  actual.Append("r9", kLater, StepStartedEvent{"a.x"});
  EXPECT_EQ(actual.EventsForRun("r9").front().sequence, actual.EventsForRun("r1").back().sequence + 1);
  EXPECT_GT(actual.RecordAssetMaterialization({0, "kpi_revenue", "", "r9", kLater, {}}), expected.LastAssetSequence());
  EXPECT_TRUE(actual.AcquireDaemonLease(99, 1, kLater, kAt).acquired);
}

std::string Fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(SLUICE_SOURCE_DIR) / "src/state/testdata" / name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(StateStoreUpgrade, ASqliteFileOfSchemaVersion5ReadsBackAsTheCurrentStoreWritesIt) {
  ScratchDirectory scratch;
  const std::filesystem::path file = scratch.path() / "loaded.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, Fixture("state_sqlite_v5.sql").c_str(), nullptr, nullptr, &message);
  const std::string error = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << error;

  auto loaded = SqliteStateStore::Open(file);
  EXPECT_EQ(loaded->SchemaVersion(), 5);
  auto written = SqliteStateStore::Open(scratch.path() / "written.db");
  WriteOneOfEveryRecord(*written);
  ExpectSameReads(*loaded, *written);
}

TEST(StateStoreUpgrade, APostgresDatabaseOfSchemaVersion1ReadsBackAsTheCurrentStoreWritesIt) {
  testing::PostgresTestServer server = testing::RequirePostgresTestServer();
  const std::string url = testing::PostgresTestUrl(server, testing::CreatePostgresTestDatabase(server, "loaded"));
  pg::Connection::Open(url)->Exec(Fixture("state_postgres_v1.sql"));

  auto loaded = PostgresStateStore::Open(url);
  EXPECT_EQ(loaded->SchemaVersion(), 1);
  auto written =
      PostgresStateStore::Open(testing::PostgresTestUrl(server, testing::CreatePostgresTestDatabase(server, "written")));
  WriteOneOfEveryRecord(*written);
  ExpectSameReads(*loaded, *written);
}

}  // namespace
}  // namespace sluice
