// Tests of the backfill coordinator on a real DuckDB file and SQLite state store: chunks run and are recorded, one
// failed chunk fails the backfill without stopping the others, cancel requests stop it, and resume runs exactly what
// the ledger says is not written yet.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "definitions/definitions_test_support.hpp"
#include "engine/backfill_coordinator.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice {
namespace {

using testing::HandBuiltModel;
using testing::HandBuiltSeed;

Date D(const std::string& text) { return *Date::Parse(text); }

const char* kGood = "SELECT CAST(event_date AS DATE) AS event_date, CAST(n AS BIGINT) AS n FROM __ref(\"a\")";
// Fails for 2026-01-03 only (its chunk's window holds that day).
const char* kFailsOnJan3 =
    "SELECT CAST(event_date AS DATE) AS event_date, "
    "CAST(CASE WHEN event_date = DATE '2026-01-03' THEN error('boom') ELSE n END AS BIGINT) AS n FROM __ref(\"a\") "
    "WHERE event_date >= @partition_start() AND event_date < @partition_end()";

// raw.events (seed, 8 days, day i has i rows) → daily.a (multi_run 2) → daily.b (partitioned, body given) →
// daily.total (unpartitioned).
Definitions Graph(const std::string& b_body) {
  const AssetKey events = AssetKey::Of("raw", "events");
  auto daily = [](Asset asset, std::optional<int> n) {
    asset.partitions = PartitionSpec{"event_date", DailyPartitions(D("2026-01-01"))};
    asset.backfill_policy.max_partitions_per_run = n;
    return asset;
  };
  std::vector<Asset> assets{
      HandBuiltSeed("raw", "events", "events.csv"),
      daily(HandBuiltModel("daily", "daily", "a",
                           "SELECT CAST(event_date AS DATE) AS event_date, CAST(n AS BIGINT) AS n "
                           "FROM __source(\"events\")",
                           {{"events", events}}),
            2),
      daily(HandBuiltModel("daily", "daily", "b", b_body, {{"a", AssetKey::Of("daily", "a")}}), std::nullopt),
      HandBuiltModel("daily", "daily", "total", "SELECT CAST(count(*) AS BIGINT) AS rows FROM __ref(\"b\")",
                     {{"b", AssetKey::Of("daily", "b")}}),
  };
  return Definitions(std::move(assets), {});
}

class BackfillCoordinatorTest : public ::testing::Test {
 protected:
  BackfillCoordinatorTest() {
    folder_ = std::filesystem::temp_directory_path() / ("sluice_backfill_test_" + std::to_string(::getpid()) + "_" +
                                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
    std::ofstream csv(folder_ / "events.csv");
    csv << "event_date,n\n";
    for (int day = 1; day <= 8; ++day) {
      for (int i = 0; i < day; ++i) csv << "2026-01-0" << day << "," << i << "\n";
    }
    csv.close();
    warehouse_ = DuckDbWarehouse::Open(folder_ / "w.duckdb", false, {});
    state_ = SqliteStateStore::Open(folder_ / "state.db");
  }
  ~BackfillCoordinatorTest() override {
    warehouse_.reset();
    state_.reset();
    std::filesystem::remove_all(folder_);
  }

  // Plans and records a backfill of 2026-01-01..08 over everything.
  std::string Create(const Definitions& definitions) {
    std::vector<Date> keys;
    for (int day = 1; day <= 8; ++day) keys.push_back(D("2026-01-0" + std::to_string(day)));
    BackfillPlan plan = PlanBackfill(definitions, {{}, keys}, clock_.TodayUtc());
    std::string id = NewBackfillId(clock_);
    CreateBackfill(*state_, plan, id, 2, clock_);
    return id;
  }

  BackfillOutcome Run(const Definitions& definitions, const std::string& id,
                      std::function<void(const ChunkOutcome&, const BackfillProgress&)> on_chunk = {}) {
    BackfillOptions options;
    options.executor.threads = 2;
    options.executor.project_root = folder_.string();
    options.poll_interval = std::chrono::milliseconds(10);
    options.on_chunk = std::move(on_chunk);
    BackfillCoordinator coordinator(definitions, *warehouse_, *state_, clock_, options);
    return coordinator.Run(id);
  }

  // How many ledger rows each (asset, day) of daily.a and daily.b has.
  std::map<std::string, int> WritesPerPartition() {
    std::map<std::string, int> writes;
    for (const LedgerEntry& entry : warehouse_->ReadLedger()) {
      if (!entry.window) continue;
      for (Date day = entry.window->start; day < entry.window->end; day = day.AddDays(1)) {
        ++writes[entry.asset + " " + day.ToString()];
      }
    }
    return writes;
  }

  std::string One(const std::string& sql) { return warehouse_->Query(sql).rows.at(0).at(0).value_or("NULL"); }

  SystemClock clock_;
  std::filesystem::path folder_;
  std::unique_ptr<DuckDbWarehouse> warehouse_;
  std::unique_ptr<SqliteStateStore> state_;
};

TEST_F(BackfillCoordinatorTest, RunsEveryChunkOnceAndCompletes) {
  Definitions definitions = Graph(kGood);
  std::string id = Create(definitions);
  BackfillOutcome outcome = Run(definitions, id);
  EXPECT_EQ(outcome.status, BackfillStatus::kCompletedSuccess) << outcome.message;
  BackfillRecord stored = *state_->GetBackfill(id);
  EXPECT_EQ(stored.status, BackfillStatus::kCompletedSuccess);
  ASSERT_EQ(stored.chunks.size(), 6u);  // events, four 2-day chunks, total
  for (const BackfillChunk& chunk : stored.chunks) EXPECT_EQ(chunk.status, ChunkStatus::kSuccess);
  EXPECT_EQ(outcome.progress.partitions_total, 16u);
  EXPECT_EQ(outcome.progress.partitions_done, 16u);
  EXPECT_EQ(One("SELECT count(*) FROM daily.b"), "36");
  EXPECT_EQ(One("SELECT rows FROM daily.total"), "36");
  std::map<std::string, int> writes = WritesPerPartition();
  EXPECT_EQ(writes.size(), 16u);
  for (const auto& [partition, count] : writes) EXPECT_EQ(count, 1) << partition;
  // Every run is tagged with the backfill.
  EXPECT_EQ(state_->RunsOfBackfill(id).size(), 6u);
  size_t materialized = 0;
  for (const PartitionStatusRecord& record : state_->PartitionStatuses()) {
    materialized += record.state == PartitionState::kMaterialized && record.backfill_id == id;
  }
  EXPECT_EQ(materialized, 16u);
}

TEST_F(BackfillCoordinatorTest, AFailedChunkFailsTheBackfillButTheOthersRunAndResumeRunsOnlyWhatFailed) {
  std::string id;
  {
    Definitions failing = Graph(kFailsOnJan3);
    id = Create(failing);
    BackfillOutcome outcome = Run(failing, id);
    EXPECT_EQ(outcome.status, BackfillStatus::kCompletedFailed);
    EXPECT_NE(outcome.message.find("1 chunk(s) failed"), std::string::npos) << outcome.message;
    EXPECT_NE(outcome.message.find("1 chunk(s) not run"), std::string::npos) << outcome.message;
    BackfillRecord stored = *state_->GetBackfill(id);
    std::vector<ChunkStatus> statuses;
    for (const BackfillChunk& chunk : stored.chunks) statuses.push_back(chunk.status);
    EXPECT_EQ(statuses, (std::vector<ChunkStatus>{ChunkStatus::kSuccess, ChunkStatus::kSuccess, ChunkStatus::kFailed,
                                                  ChunkStatus::kSuccess, ChunkStatus::kSuccess,
                                                  ChunkStatus::kPending}));
    std::map<std::string, PartitionState> states;
    for (const PartitionStatusRecord& record : state_->PartitionStatuses()) {
      states[record.asset + " " + record.partition] = record.state;
    }
    EXPECT_EQ(states["daily.b 2026-01-03"], PartitionState::kFailed);
    EXPECT_EQ(states["daily.b 2026-01-04"], PartitionState::kFailed);
    EXPECT_EQ(states["daily.a 2026-01-03"], PartitionState::kMaterialized);
    EXPECT_EQ(states["daily.b 2026-01-05"], PartitionState::kMaterialized);
  }
  // Fixed and resumed: chunk 2 runs only daily.b (daily.a's dates were written), then the last phase.
  Definitions fixed = Graph(kGood);
  BackfillRecord before = *state_->GetBackfill(id);
  ASSERT_TRUE(state_->ClaimBackfill(id, before.pid, before.pid_start_time, before.pid, before.pid_start_time));
  BackfillOutcome resumed = Run(fixed, id);
  EXPECT_EQ(resumed.status, BackfillStatus::kCompletedSuccess) << resumed.message;
  ASSERT_EQ(resumed.chunks.size(), 2u);
  EXPECT_EQ(resumed.chunks[0].index, 2);
  ASSERT_EQ(resumed.chunks[0].steps.size(), 1u);
  EXPECT_EQ(resumed.chunks[0].steps[0].key.ToString(), "daily.b");
  for (const auto& [partition, count] : WritesPerPartition()) EXPECT_EQ(count, 1) << partition;
  EXPECT_EQ(One("SELECT rows FROM daily.total"), "36");
}

TEST_F(BackfillCoordinatorTest, ACancelRequestStopsLaunchingAndResumeFinishes) {
  Definitions definitions = Graph(kGood);
  std::string id = Create(definitions);
  BackfillOutcome outcome = Run(definitions, id, [&](const ChunkOutcome& chunk, const BackfillProgress&) {
    if (chunk.index == 1) {
      EXPECT_EQ(state_->RequestCancel(id), BackfillStatus::kCanceling);
    }
  });
  EXPECT_EQ(outcome.status, BackfillStatus::kCanceled);
  EXPECT_TRUE(outcome.cancel_requested);
  BackfillRecord stored = *state_->GetBackfill(id);
  EXPECT_EQ(stored.status, BackfillStatus::kCanceled);
  EXPECT_EQ(stored.chunks.back().status, ChunkStatus::kPending);

  ASSERT_TRUE(state_->ClaimBackfill(id, stored.pid, stored.pid_start_time, stored.pid, stored.pid_start_time));
  EXPECT_EQ(Run(definitions, id).status, BackfillStatus::kCompletedSuccess);
  std::map<std::string, int> writes = WritesPerPartition();
  EXPECT_EQ(writes.size(), 16u);
  for (const auto& [partition, count] : writes) EXPECT_EQ(count, 1) << partition;
}

TEST_F(BackfillCoordinatorTest, AChunkWrittenButNotRecordedIsReconciledFromTheLedger) {
  Definitions definitions = Graph(kGood);
  std::string id = Create(definitions);
  ASSERT_EQ(Run(definitions, id).status, BackfillStatus::kCompletedSuccess);
  // As if killed after chunk 3's commit and before the store heard of it.
  BackfillRecord stored = *state_->GetBackfill(id);
  state_->UpdateChunk(id, 3, ChunkStatus::kRunning, stored.chunks[3].run_id);
  ASSERT_TRUE(state_->ClaimBackfill(id, stored.pid, stored.pid_start_time, stored.pid, stored.pid_start_time));
  size_t ledger_rows = warehouse_->ReadLedger().size();
  BackfillOutcome resumed = Run(definitions, id);
  EXPECT_EQ(resumed.status, BackfillStatus::kCompletedSuccess);
  ASSERT_EQ(resumed.chunks.size(), 1u);
  EXPECT_TRUE(resumed.chunks[0].reconciled);
  EXPECT_EQ(warehouse_->ReadLedger().size(), ledger_rows);
}

TEST_F(BackfillCoordinatorTest, AnUnknownBackfillIsAnError) {
  Definitions definitions = Graph(kGood);
  try {
    Run(definitions, "bf_missing");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-BACKFILL-003");
  }
}

}  // namespace
}  // namespace sluice
