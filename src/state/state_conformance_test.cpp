// The behaviour every state store must have, written against RunStore, EventLog and MaterializationStore
// only. A backend joins by adding one StateBackend entry to INSTANTIATE_TEST_SUITE_P at the bottom.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

#include "state/postgres/postgres_state_store.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "state/state_store.hpp"
#include "state/state_test_support.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice {
namespace {

// The three interfaces of one new, empty store.
class StoreUnderTest {
 public:
  virtual ~StoreUnderTest() = default;
  virtual RunStore& runs() = 0;
  virtual EventLog& events() = 0;
  virtual MaterializationStore& materializations() = 0;
  virtual BackfillStore& backfills() = 0;
  virtual TickStore& ticks() = 0;
  virtual AssetEventStore& asset_events() = 0;
  virtual RunQueue& queue() = 0;
};

// A backend whose one object implements all three interfaces.
template <class Store>
class SingleObjectStore final : public StoreUnderTest {
 public:
  explicit SingleObjectStore(std::unique_ptr<Store> store) : store_(std::move(store)) {}
  RunStore& runs() override { return *store_; }
  EventLog& events() override { return *store_; }
  MaterializationStore& materializations() override { return *store_; }
  BackfillStore& backfills() override { return *store_; }
  TickStore& ticks() override { return *store_; }
  AssetEventStore& asset_events() override { return *store_; }
  RunQueue& queue() override { return *store_; }

 private:
  std::unique_ptr<Store> store_;
};

struct StateBackend {
  std::string name;
  // Opens a new, empty store keeping any files in `scratch`; nullptr skips the suite (e.g. no server).
  std::function<std::unique_ptr<StoreUnderTest>(const std::filesystem::path& scratch)> open;
};

void PrintTo(const StateBackend& backend, std::ostream* out) { *out << backend.name; }

class StateConformanceTest : public ::testing::TestWithParam<StateBackend> {
 protected:
  void SetUp() override {
    store_ = GetParam().open(scratch_.path());
    if (!store_) GTEST_SKIP() << GetParam().name << " is not available here";
  }

  RunStore& runs() { return store_->runs(); }
  EventLog& events() { return store_->events(); }
  MaterializationStore& materializations() { return store_->materializations(); }
  BackfillStore& backfills() { return store_->backfills(); }
  TickStore& ticks() { return store_->ticks(); }
  AssetEventStore& asset_events() { return store_->asset_events(); }
  RunQueue& queue() { return store_->queue(); }

  // A QUEUED run of `job` waiting for a worker (no owner), with `tags`.
  static RunRecord QueuedJobRun(const std::string& run_id, const std::string& created_at, const std::string& job,
                                std::map<std::string, std::string> tags = {}) {
    RunRecord run = NewRun(run_id, created_at);
    run.pid = 0;
    run.pid_start_time = 0;
    run.job = job;
    run.tags = std::move(tags);
    return run;
  }

  // A worker on another machine (its pid means nothing here), registered with heartbeat `at`.
  WorkerRecord RemoteWorker(const std::string& name, const std::string& at = "2026-03-01T10:00:00.000Z") {
    WorkerRecord worker{"elsewhere-" + name + ":7:1", "elsewhere-" + name, 7, 1, at, at};
    queue().RegisterWorker(worker);
    return worker;
  }

  // A REQUESTED backfill of three chunks owned by this (live) process.
  static BackfillRecord NewBackfill(const std::string& id, const std::string& created_at = "2026-03-01T10:00:00.000Z") {
    BackfillRecord backfill;
    backfill.backfill_id = id;
    backfill.created_at = created_at;
    backfill.selection = "+gold.daily_revenue";
    backfill.partition_from = "2026-01-01";
    backfill.partition_to = "2026-01-12";
    backfill.pid = getpid();
    backfill.pid_start_time = ProcessStartTime(getpid());
    backfill.max_concurrent_runs = 2;
    backfill.chunks = {
        BackfillChunk{0, std::nullopt, std::nullopt, {"raw.orders"}, ChunkStatus::kPending, ""},
        BackfillChunk{1, "2026-01-01", "2026-01-10", {"silver.orders", "gold.daily_revenue"}, ChunkStatus::kPending, ""},
        BackfillChunk{2, "2026-01-11", "2026-01-12", {"silver.orders", "gold.daily_revenue"}, ChunkStatus::kPending, ""},
    };
    return backfill;
  }

  // A QUEUED run owned by this (live) process.
  static RunRecord NewRun(const std::string& run_id,
                          const std::string& created_at = "2026-03-01T10:00:00.000Z") {
    RunRecord run;
    run.run_id = run_id;
    run.selection = "+gold.daily_revenue";
    run.partition_start = "2026-01-01";
    run.partition_end = "2026-01-31";
    run.created_at = created_at;
    run.pid = getpid();
    run.pid_start_time = ProcessStartTime(getpid());
    return run;
  }

  static std::vector<std::string> Ids(const std::vector<RunRecord>& listed) {
    std::vector<std::string> ids;
    for (const RunRecord& run : listed) ids.push_back(run.run_id);
    return ids;
  }

  ScratchDirectory scratch_;
  std::unique_ptr<StoreUnderTest> store_;
};

// ---- runs ----

TEST_P(StateConformanceTest, CreatedRunReadsBackWithEveryField) {
  RunRecord run = NewRun("r1");
  run.error = "";
  runs().CreateRun(run);
  EXPECT_EQ(runs().GetRun("r1"), run);
}

TEST_P(StateConformanceTest, RunWithoutPartitionsReadsBackWithoutThem) {
  RunRecord run = NewRun("r1");
  run.partition_start.reset();
  run.partition_end.reset();
  runs().CreateRun(run);
  std::optional<RunRecord> stored = runs().GetRun("r1");
  ASSERT_TRUE(stored);
  EXPECT_FALSE(stored->partition_start);
  EXPECT_FALSE(stored->partition_end);
  EXPECT_FALSE(stored->started_at);
  EXPECT_FALSE(stored->finished_at);
}

TEST_P(StateConformanceTest, UnknownRunReadsAsNothing) { EXPECT_FALSE(runs().GetRun("missing")); }

TEST_P(StateConformanceTest, CreatingAnExistingRunIdFailsWithState002) {
  runs().CreateRun(NewRun("r1"));
  RunRecord again = NewRun("r1");
  again.selection = "other";
  EXPECT_EQ(StateErrorCode([&] { runs().CreateRun(again); }), "SLU-STATE-002");
  EXPECT_EQ(runs().GetRun("r1")->selection, "+gold.daily_revenue");
}

TEST_P(StateConformanceTest, CreatingARunThatIsNotQueuedFailsWithState005) {
  RunRecord run = NewRun("r1");
  run.status = RunStatus::kStarted;
  EXPECT_EQ(StateErrorCode([&] { runs().CreateRun(run); }), "SLU-STATE-005");
  EXPECT_FALSE(runs().GetRun("r1"));
}

TEST_P(StateConformanceTest, MarkStartedMovesAQueuedRunToStarted) {
  runs().CreateRun(NewRun("r1"));
  runs().MarkStarted("r1", "2026-03-01T10:00:01.000Z");
  RunRecord stored = *runs().GetRun("r1");
  EXPECT_EQ(stored.status, RunStatus::kStarted);
  EXPECT_EQ(stored.started_at, "2026-03-01T10:00:01.000Z");
  EXPECT_FALSE(stored.finished_at);
}

TEST_P(StateConformanceTest, StartingARunTwiceFailsWithState005) {
  runs().CreateRun(NewRun("r1"));
  runs().MarkStarted("r1", "2026-03-01T10:00:01.000Z");
  EXPECT_EQ(StateErrorCode([&] { runs().MarkStarted("r1", "2026-03-01T10:00:09.000Z"); }), "SLU-STATE-005");
  EXPECT_EQ(runs().GetRun("r1")->started_at, "2026-03-01T10:00:01.000Z");
}

TEST_P(StateConformanceTest, OnlyOneOfManyThreadsStartsARun) {
  runs().CreateRun(NewRun("r1"));
  std::atomic<int> started = 0;
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      std::string code = StateErrorCode([&] { runs().MarkStarted("r1", "2026-03-01T10:00:01.000Z"); });
      if (code == "no error") ++started;
      if (code == "SLU-STATE-005") ++refused;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(started, 1);
  EXPECT_EQ(refused, 7);
}

TEST_P(StateConformanceTest, FinishRunRecordsStatusTimeAndError) {
  for (RunStatus status : {RunStatus::kSuccess, RunStatus::kFailure, RunStatus::kCanceled}) {
    std::string id = "run-" + RunStatusName(status);
    runs().CreateRun(NewRun(id));
    runs().MarkStarted(id, "2026-03-01T10:00:01.000Z");
    std::string error = status == RunStatus::kSuccess ? "" : "step gold.x failed";
    runs().FinishRun(id, status, "2026-03-01T10:05:00.000Z", error);
    RunRecord stored = *runs().GetRun(id);
    EXPECT_EQ(stored.status, status);
    EXPECT_EQ(stored.started_at, "2026-03-01T10:00:01.000Z");
    EXPECT_EQ(stored.finished_at, "2026-03-01T10:05:00.000Z");
    EXPECT_EQ(stored.error, error);
  }
}

TEST_P(StateConformanceTest, AQueuedRunCanBeCanceledWithoutStarting) {
  runs().CreateRun(NewRun("r1"));
  runs().FinishRun("r1", RunStatus::kCanceled, "2026-03-01T10:01:00.000Z", "canceled by user");
  RunRecord stored = *runs().GetRun("r1");
  EXPECT_EQ(stored.status, RunStatus::kCanceled);
  EXPECT_FALSE(stored.started_at);
  EXPECT_EQ(stored.error, "canceled by user");
}

TEST_P(StateConformanceTest, AFinishedRunCannotChangeAgain) {
  runs().CreateRun(NewRun("r1"));
  runs().FinishRun("r1", RunStatus::kSuccess, "2026-03-01T10:05:00.000Z", "");
  EXPECT_EQ(
      StateErrorCode([&] { runs().FinishRun("r1", RunStatus::kFailure, "2026-03-01T10:06:00.000Z", "x"); }),
      "SLU-STATE-005");
  EXPECT_EQ(StateErrorCode([&] { runs().MarkStarted("r1", "2026-03-01T10:06:00.000Z"); }), "SLU-STATE-005");
  RunRecord stored = *runs().GetRun("r1");
  EXPECT_EQ(stored.status, RunStatus::kSuccess);
  EXPECT_EQ(stored.finished_at, "2026-03-01T10:05:00.000Z");
}

TEST_P(StateConformanceTest, FinishingWithANonTerminalStatusFailsWithState005) {
  runs().CreateRun(NewRun("r1"));
  EXPECT_EQ(
      StateErrorCode([&] { runs().FinishRun("r1", RunStatus::kStarted, "2026-03-01T10:05:00.000Z", ""); }),
      "SLU-STATE-005");
  EXPECT_EQ(
      StateErrorCode([&] { runs().FinishRun("r1", RunStatus::kQueued, "2026-03-01T10:05:00.000Z", ""); }),
      "SLU-STATE-005");
  EXPECT_EQ(runs().GetRun("r1")->status, RunStatus::kQueued);
}

TEST_P(StateConformanceTest, ChangingAnUnknownRunFailsWithState004) {
  EXPECT_EQ(StateErrorCode([&] { runs().MarkStarted("missing", "2026-03-01T10:00:00.000Z"); }),
            "SLU-STATE-004");
  EXPECT_EQ(StateErrorCode(
                [&] { runs().FinishRun("missing", RunStatus::kSuccess, "2026-03-01T10:00:00.000Z", ""); }),
            "SLU-STATE-004");
}

TEST_P(StateConformanceTest, ListRunsIsNewestFirstWithinTheLimit) {
  runs().CreateRun(NewRun("b", "2026-03-02T00:00:00.000Z"));
  runs().CreateRun(NewRun("c", "2026-03-01T00:00:00.000Z"));
  runs().CreateRun(NewRun("a", "2026-03-03T00:00:00.000Z"));
  runs().CreateRun(NewRun("d", "2026-03-02T00:00:00.000Z"));  // same time as "b": the larger id first
  EXPECT_EQ(Ids(runs().ListRuns(10)), (std::vector<std::string>{"a", "d", "b", "c"}));
  EXPECT_EQ(Ids(runs().ListRuns(2)), (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(Ids(runs().ListRuns(0)), std::vector<std::string>{});
  EXPECT_EQ(Ids(runs().ListRuns(-1)), (std::vector<std::string>{"a", "d", "b", "c"}));
}

TEST_P(StateConformanceTest, TextIsStoredVerbatim) {
  RunRecord run = NewRun("r'1\"; DROP TABLE runs; --");
  run.selection = "gold.\"umsätze\" + 'x' \\ %_";
  runs().CreateRun(run);
  runs().FinishRun(run.run_id, RunStatus::kFailure, "2026-03-01T10:05:00.000Z", "line 1\nline 2\t'quoted'");
  run.status = RunStatus::kFailure;
  run.finished_at = "2026-03-01T10:05:00.000Z";
  run.error = "line 1\nline 2\t'quoted'";
  EXPECT_EQ(runs().GetRun(run.run_id), run);
  EXPECT_EQ(runs().ListRuns(10).size(), 1u);
}

TEST_P(StateConformanceTest, RunsSortByteWiseWhateverTheDatabaseLocale) {
  for (const char* id : {"b", "B", "a", "_z", "A"}) runs().CreateRun(NewRun(id));
  EXPECT_EQ(Ids(runs().ListRuns(-1)), (std::vector<std::string>{"b", "a", "_z", "B", "A"}));
}

TEST_P(StateConformanceTest, PlaceholderCharactersInValuesAreStoredVerbatim) {
  RunRecord run = NewRun("r?1 $1 :a");
  run.selection = "? $2 ?1 '?'";
  run.tags = {{"why?", "$1 or ?"}};
  runs().CreateRun(run);
  EXPECT_EQ(runs().GetRun(run.run_id), run);
  events().Append(run.run_id, "2026-03-01T10:00:00.000Z", StepNoteEvent{"a.x", "what? $1"});
  EXPECT_EQ(events().EventsForRun(run.run_id).at(0).event, RunEvent(StepNoteEvent{"a.x", "what? $1"}));
}

// ---- events ----

TEST_P(StateConformanceTest, EventsComeBackInAppendOrderWithIncreasingSequence) {
  events().Append("r1", "2026-03-01T10:00:00.000Z", StepStartedEvent{"a.x"});
  events().Append("r1", "2026-03-01T10:00:01.000Z", StepFinishedEvent{"a.x", 1000});
  events().Append("r1", "2026-03-01T10:00:01.000Z", StepStartedEvent{"a.y"});
  std::vector<StoredEvent> stored = events().EventsForRun("r1");
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(stored[0].event, RunEvent(StepStartedEvent{"a.x"}));
  EXPECT_EQ(stored[1].event, RunEvent(StepFinishedEvent{"a.x", 1000}));
  EXPECT_EQ(stored[2].event, RunEvent(StepStartedEvent{"a.y"}));
  EXPECT_EQ(stored[1].at, "2026-03-01T10:00:01.000Z");
  EXPECT_LT(stored[0].sequence, stored[1].sequence);
  EXPECT_LT(stored[1].sequence, stored[2].sequence);
}

TEST_P(StateConformanceTest, EventsAreKeptPerRunInOneGlobalSequence) {
  events().Append("r1", "2026-03-01T10:00:00.000Z", StepStartedEvent{"a.x"});
  events().Append("r2", "2026-03-01T10:00:00.000Z", StepStartedEvent{"b.x"});
  events().Append("r1", "2026-03-01T10:00:00.000Z", StepStartedEvent{"a.y"});
  std::vector<StoredEvent> first = events().EventsForRun("r1");
  std::vector<StoredEvent> second = events().EventsForRun("r2");
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(first[0].run_id, "r1");
  EXPECT_EQ(second[0].run_id, "r2");
  EXPECT_LT(first[0].sequence, second[0].sequence);
  EXPECT_LT(second[0].sequence, first[1].sequence);
  EXPECT_TRUE(events().EventsForRun("missing").empty());
}

TEST_P(StateConformanceTest, EveryEventKindRoundTripsThroughTheStore) {
  std::vector<RunEvent> sent = OneEventOfEveryKind();
  sent.push_back(MaterializationEvent{"gold.totals", std::nullopt, std::nullopt, 3, 0, "h"});
  for (const RunEvent& event : sent) events().Append("r1", "2026-03-01T10:00:00.000Z", event);
  std::vector<StoredEvent> stored = events().EventsForRun("r1");
  ASSERT_EQ(stored.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(stored[i].event, sent[i]) << EventKindName(sent[i]);
    EXPECT_EQ(stored[i].run_id, "r1");
    EXPECT_EQ(stored[i].at, "2026-03-01T10:00:00.000Z");
  }
}

TEST_P(StateConformanceTest, ConcurrentAppendsFromEightThreadsLoseNothing) {
  constexpr int kThreads = 8;
  constexpr int kEachThread = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kEachThread; ++i) {
        events().Append("shared", "2026-03-01T10:00:00.000Z",
                        StepFinishedEvent{"thread." + std::to_string(t), i});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<StoredEvent> stored = events().EventsForRun("shared");
  ASSERT_EQ(stored.size(), static_cast<size_t>(kThreads * kEachThread));
  std::vector<int64_t> next(kThreads, 0);  // each thread's events appear in the order it appended them
  for (size_t i = 0; i < stored.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(stored[i - 1].sequence, stored[i].sequence);
    }
    const auto& finished = std::get<StepFinishedEvent>(stored[i].event);
    int thread = std::stoi(finished.asset.substr(std::string("thread.").size()));
    EXPECT_EQ(finished.duration_ms, next[thread]++);
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(next[t], kEachThread);
}

// ---- materializations ----

MaterializationRecord Materialized(std::string asset, std::string partition, std::string run_id,
                                   int64_t rows) {
  return MaterializationRecord{std::move(asset), std::move(partition),      std::move(run_id), rows,
                               "hash-" + run_id, "2026-03-01T10:00:00.000Z"};
}

TEST_P(StateConformanceTest, ANewStoreHasNoMaterializations) {
  EXPECT_FALSE(materializations().HasMaterializations());
  EXPECT_TRUE(materializations().LatestMaterializations().empty());
  materializations().RecordMaterializations({});
  EXPECT_FALSE(materializations().HasMaterializations());
}

TEST_P(StateConformanceTest, MaterializationsAreSortedByAssetThenPartition) {
  materializations().RecordMaterializations({Materialized("silver.orders", "2026-01-02", "r1", 5),
                                             Materialized("gold.totals", "", "r1", 1),
                                             Materialized("silver.orders", "2026-01-01", "r1", 4)});
  EXPECT_TRUE(materializations().HasMaterializations());
  EXPECT_EQ(materializations().LatestMaterializations(),
            (std::vector<MaterializationRecord>{Materialized("gold.totals", "", "r1", 1),
                                                Materialized("silver.orders", "2026-01-01", "r1", 4),
                                                Materialized("silver.orders", "2026-01-02", "r1", 5)}));
}

TEST_P(StateConformanceTest, ALaterMaterializationReplacesTheEarlierOne) {
  materializations().RecordMaterializations({Materialized("silver.orders", "2026-01-01", "r1", 4),
                                             Materialized("silver.orders", "2026-01-02", "r1", 5)});
  MaterializationRecord later = Materialized("silver.orders", "2026-01-01", "r2", 9);
  later.written_at = "2026-03-02T00:00:00.000Z";
  materializations().RecordMaterializations({later});
  EXPECT_EQ(
      materializations().LatestMaterializations(),
      (std::vector<MaterializationRecord>{later, Materialized("silver.orders", "2026-01-02", "r1", 5)}));
}

TEST_P(StateConformanceTest, WithinOneCallTheLastRecordForAPartitionWins) {
  materializations().RecordMaterializations(
      {Materialized("gold.totals", "", "r1", 1), Materialized("gold.totals", "", "r2", 2)});
  EXPECT_EQ(materializations().LatestMaterializations(),
            std::vector<MaterializationRecord>{Materialized("gold.totals", "", "r2", 2)});
}

// ---- backfills ----

TEST_P(StateConformanceTest, RunsRecordTheBackfillTheyBelongTo) {
  RunRecord plain = NewRun("r1", "2026-03-01T10:00:00.000Z");
  RunRecord second = NewRun("r3", "2026-03-01T10:00:02.000Z");
  second.backfill_id = "b1";
  RunRecord first = NewRun("r2", "2026-03-01T10:00:01.000Z");
  first.backfill_id = "b1";
  RunRecord other = NewRun("r4");
  other.backfill_id = "b2";
  for (const RunRecord& run : {plain, second, first, other}) runs().CreateRun(run);
  EXPECT_EQ(runs().GetRun("r2")->backfill_id, "b1");
  EXPECT_EQ(runs().GetRun("r1")->backfill_id, "");
  EXPECT_EQ(Ids(runs().RunsOfBackfill("b1")), (std::vector<std::string>{"r2", "r3"}));
  EXPECT_TRUE(runs().RunsOfBackfill("").empty());
}

TEST_P(StateConformanceTest, CreatedBackfillReadsBackWithItsChunks) {
  BackfillRecord backfill = NewBackfill("b1");
  backfills().CreateBackfill(backfill);
  EXPECT_EQ(backfills().GetBackfill("b1"), backfill);
  EXPECT_FALSE(backfills().GetBackfill("missing"));
}

TEST_P(StateConformanceTest, CreatingAnExistingBackfillIdFailsWithState007) {
  backfills().CreateBackfill(NewBackfill("b1"));
  EXPECT_EQ(StateErrorCode([&] { backfills().CreateBackfill(NewBackfill("b1")); }), "SLU-STATE-007");
}

TEST_P(StateConformanceTest, ListBackfillsIsNewestFirstWithinTheLimit) {
  backfills().CreateBackfill(NewBackfill("b1", "2026-03-01T10:00:00.000Z"));
  backfills().CreateBackfill(NewBackfill("b3", "2026-03-01T12:00:00.000Z"));
  backfills().CreateBackfill(NewBackfill("b2", "2026-03-01T11:00:00.000Z"));
  std::vector<BackfillRecord> listed = backfills().ListBackfills(2);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].backfill_id, "b3");
  EXPECT_EQ(listed[1].backfill_id, "b2");
  EXPECT_EQ(listed[1].chunks.size(), 3u);
  EXPECT_EQ(backfills().ListBackfills(-1).size(), 3u);
}

TEST_P(StateConformanceTest, ChunkUpdatesAreKeptPerChunk) {
  backfills().CreateBackfill(NewBackfill("b1"));
  backfills().UpdateChunk("b1", 1, ChunkStatus::kRunning, "r7");
  backfills().UpdateChunk("b1", 2, ChunkStatus::kFailed, "r8");
  BackfillRecord stored = *backfills().GetBackfill("b1");
  EXPECT_EQ(stored.chunks[0].status, ChunkStatus::kPending);
  EXPECT_EQ(stored.chunks[1].status, ChunkStatus::kRunning);
  EXPECT_EQ(stored.chunks[1].run_id, "r7");
  EXPECT_EQ(stored.chunks[2].status, ChunkStatus::kFailed);
  EXPECT_EQ(StateErrorCode([&] { backfills().UpdateChunk("b1", 9, ChunkStatus::kSuccess, "r9"); }), "SLU-STATE-008");
  EXPECT_EQ(StateErrorCode([&] { backfills().UpdateChunk("nope", 0, ChunkStatus::kSuccess, "r9"); }),
            "SLU-STATE-008");
}

TEST_P(StateConformanceTest, CancelRequestMovesRequestedToCanceling) {
  backfills().CreateBackfill(NewBackfill("b1"));
  EXPECT_EQ(backfills().RequestCancel("b1"), BackfillStatus::kCanceling);
  EXPECT_EQ(backfills().RequestCancel("b1"), BackfillStatus::kCanceling);
  backfills().SetBackfillStatus("b1", BackfillStatus::kCanceled, "2026-03-01T11:00:00.000Z", "canceled");
  EXPECT_EQ(backfills().RequestCancel("b1"), BackfillStatus::kCanceled);
  BackfillRecord stored = *backfills().GetBackfill("b1");
  EXPECT_EQ(stored.finished_at, "2026-03-01T11:00:00.000Z");
  EXPECT_EQ(stored.error, "canceled");
  EXPECT_EQ(StateErrorCode([&] { backfills().RequestCancel("nope"); }), "SLU-STATE-008");
}

TEST_P(StateConformanceTest, AFinishedBackfillChangesOnlyByAClaim) {
  BackfillRecord backfill = NewBackfill("b1");
  backfills().CreateBackfill(backfill);
  backfills().SetBackfillStatus("b1", BackfillStatus::kCompletedFailed, "2026-03-01T11:00:00.000Z", "1 chunk failed");
  EXPECT_EQ(StateErrorCode([&] {
              backfills().SetBackfillStatus("b1", BackfillStatus::kCompletedSuccess, "2026-03-01T12:00:00.000Z", "");
            }),
            "SLU-STATE-005");
  EXPECT_EQ(StateErrorCode([&] {
              backfills().SetBackfillStatus("nope", BackfillStatus::kFailed, "2026-03-01T12:00:00.000Z", "");
            }),
            "SLU-STATE-008");
  // Only a claim naming the current owner wins.
  EXPECT_FALSE(backfills().ClaimBackfill("b1", backfill.pid + 1, backfill.pid_start_time, 42, 43));
  EXPECT_TRUE(backfills().ClaimBackfill("b1", backfill.pid, backfill.pid_start_time, 42, 43));
  EXPECT_FALSE(backfills().ClaimBackfill("b1", backfill.pid, backfill.pid_start_time, 44, 45));
  BackfillRecord stored = *backfills().GetBackfill("b1");
  EXPECT_EQ(stored.status, BackfillStatus::kRequested);
  EXPECT_EQ(stored.pid, 42);
  EXPECT_EQ(stored.pid_start_time, 43);
  EXPECT_FALSE(stored.finished_at);
  EXPECT_EQ(stored.error, "");
  EXPECT_FALSE(OwnerAlive(stored));
  EXPECT_TRUE(OwnerAlive(backfill));
  EXPECT_EQ(StateErrorCode([&] { backfills().ClaimBackfill("nope", 1, 1, 2, 2); }), "SLU-STATE-008");
}

TEST_P(StateConformanceTest, OfManyThreadsClaimingABackfillOneWins) {
  BackfillRecord backfill = NewBackfill("b1");
  backfills().CreateBackfill(backfill);
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (backfills().ClaimBackfill("b1", backfill.pid, backfill.pid_start_time, 100 + i, 1)) ++wins;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wins.load(), 1);
}

TEST_P(StateConformanceTest, PartitionStatusesUpsertByAssetAndPartition) {
  EXPECT_TRUE(backfills().PartitionStatuses().empty());
  PartitionStatusRecord failed{"silver.orders", "2026-01-02", PartitionState::kFailed, "r1", "b1",
                               "2026-03-01T10:00:00.000Z"};
  PartitionStatusRecord done{"silver.orders", "2026-01-01", PartitionState::kMaterialized, "r1", "b1",
                             "2026-03-01T10:00:00.000Z"};
  backfills().RecordPartitionStatuses({failed, done});
  EXPECT_EQ(backfills().PartitionStatuses(), (std::vector<PartitionStatusRecord>{done, failed}));
  PartitionStatusRecord retried{"silver.orders", "2026-01-02", PartitionState::kMaterialized, "r2", "b1",
                                "2026-03-01T11:00:00.000Z"};
  backfills().RecordPartitionStatuses({retried});
  EXPECT_EQ(backfills().PartitionStatuses(), (std::vector<PartitionStatusRecord>{done, retried}));
}

TEST_P(StateConformanceTest, InstigatorsKeepTheirStatusAndTheCursorOfTheirLastTick) {
  EXPECT_FALSE(ticks().GetInstigator("nightly"));
  ticks().SetInstigatorStatus("nightly", InstigatorKind::kSchedule, InstigatorStatus::kRunning, "2026-03-01T10:00:00.000Z");
  ticks().SetInstigatorStatus("orders_ready", InstigatorKind::kSensor, InstigatorStatus::kStopped,
                              "2026-03-01T10:00:00.000Z");
  TickRecord tick;
  tick.instigator = "nightly";
  tick.kind = InstigatorKind::kSchedule;
  tick.tick_time = "2026-03-02T00:00:00.000Z";
  tick.evaluated_at = "2026-03-02T00:00:01.000Z";
  tick.status = TickStatus::kSuccess;
  tick.run_keys = {"nightly:2026-03-02T00:00:00Z"};
  tick.run_ids = {"r1"};
  int64_t first = ticks().RecordTick(tick, "2026-03-02T00:00:00.000Z");
  TickRecord skipped = tick;
  skipped.tick_time = "2026-03-03T00:00:00.000Z";
  skipped.evaluated_at = "2026-03-03T00:00:02.000Z";
  skipped.status = TickStatus::kSkipped;
  skipped.run_keys = {};
  skipped.run_ids = {};
  skipped.skip_reason = "missed while the daemon was down";
  int64_t second = ticks().RecordTick(skipped, "2026-03-03T00:00:00.000Z");
  EXPECT_GT(second, first);

  std::optional<InstigatorState> nightly = ticks().GetInstigator("nightly");
  ASSERT_TRUE(nightly);
  EXPECT_EQ(nightly->status, InstigatorStatus::kRunning);
  EXPECT_EQ(nightly->cursor, "2026-03-03T00:00:00.000Z");
  EXPECT_EQ(nightly->updated_at, "2026-03-03T00:00:02.000Z");
  std::vector<TickRecord> recorded = ticks().TicksOf("nightly", -1);
  ASSERT_EQ(recorded.size(), 2u);
  tick.tick_id = first;
  skipped.tick_id = second;
  EXPECT_EQ(recorded[0], skipped);
  EXPECT_EQ(recorded[1], tick);
  EXPECT_EQ(ticks().TicksOf("nightly", 1).size(), 1u);
  // Stopping keeps the cursor; the list is by name.
  ticks().SetInstigatorStatus("nightly", InstigatorKind::kSchedule, InstigatorStatus::kStopped, "2026-03-04T00:00:00.000Z");
  std::vector<InstigatorState> all = ticks().ListInstigators();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "nightly");
  EXPECT_EQ(all[0].status, InstigatorStatus::kStopped);
  EXPECT_EQ(all[0].cursor, "2026-03-03T00:00:00.000Z");
  EXPECT_EQ(all[1].kind, InstigatorKind::kSensor);
}

TEST_P(StateConformanceTest, ATickOfAnUnknownInstigatorIsRefusedAndChangesNothing) {
  TickRecord tick;
  tick.instigator = "nobody";
  try {
    ticks().RecordTick(tick, "c");
    FAIL() << "expected SLU-STATE-009";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-STATE-009");
  }
  EXPECT_TRUE(ticks().TicksOf("nobody", -1).empty());
}

TEST_P(StateConformanceTest, ARunKeyLaunchesOneRunEvenWhenManyClaimIt) {
  EXPECT_EQ(ticks().ClaimRunKey("nightly:2026-03-02", "r1", "2026-03-02T00:00:01.000Z"), std::nullopt);
  EXPECT_EQ(ticks().ClaimRunKey("nightly:2026-03-02", "r2", "2026-03-02T00:00:02.000Z"), std::optional<std::string>("r1"));
  std::atomic<int> free{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (!ticks().ClaimRunKey("sensor:k", "run" + std::to_string(i), "2026-03-02T00:00:03.000Z")) ++free;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(free.load(), 1);
}

TEST_P(StateConformanceTest, OneDaemonHoldsTheLeaseUntilItGoesOrGoesStale) {
  const int64_t me = getpid();
  const int64_t my_start = ProcessStartTime(me);
  DaemonLease first = ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:00:00.000Z", "2026-03-01T09:59:00.000Z");
  EXPECT_TRUE(first.acquired);
  // Another live process (this one under another start time stands for it: the check is pid and start time).
  const int64_t parent = getppid();
  const int64_t parent_start = ProcessStartTime(parent);
  DaemonLease other = ticks().AcquireDaemonLease(parent, parent_start, "2026-03-01T10:00:10.000Z",
                                                 "2026-03-01T09:59:10.000Z");
  EXPECT_FALSE(other.acquired);
  EXPECT_EQ(other.holder_pid, me);
  EXPECT_EQ(other.heartbeat_at, "2026-03-01T10:00:00.000Z");
  // The holder's heartbeat renews it.
  EXPECT_TRUE(ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:00:20.000Z", "2026-03-01T09:59:20.000Z").acquired);
  // A heartbeat older than the staleness bound lets another take over.
  DaemonLease taken = ticks().AcquireDaemonLease(parent, parent_start, "2026-03-01T10:05:00.000Z",
                                                 "2026-03-01T10:04:00.000Z");
  EXPECT_TRUE(taken.acquired);
  EXPECT_FALSE(ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:05:01.000Z", "2026-03-01T10:04:01.000Z").acquired);
  // Releasing by anyone but the holder does nothing; the holder's release frees it.
  ticks().ReleaseDaemonLease(me, my_start);
  EXPECT_FALSE(ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:05:02.000Z", "2026-03-01T10:04:02.000Z").acquired);
  ticks().ReleaseDaemonLease(parent, parent_start);
  EXPECT_TRUE(ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:05:03.000Z", "2026-03-01T10:04:03.000Z").acquired);
  // A holder whose process is gone (a pid no process has) loses it at once.
  ticks().ReleaseDaemonLease(me, my_start);
  EXPECT_TRUE(ticks().AcquireDaemonLease(999999999, 1, "2026-03-01T10:06:00.000Z", "2026-03-01T10:05:00.000Z").acquired);
  EXPECT_TRUE(ticks().AcquireDaemonLease(me, my_start, "2026-03-01T10:06:01.000Z", "2026-03-01T10:05:01.000Z").acquired);
}

TEST_P(StateConformanceTest, OldTicksOfOneStatusArePurged) {
  ticks().SetInstigatorStatus("s", InstigatorKind::kSensor, InstigatorStatus::kRunning, "2026-03-01T00:00:00.000Z");
  auto tick = [](const std::string& at, TickStatus status) {
    TickRecord record;
    record.instigator = "s";
    record.kind = InstigatorKind::kSensor;
    record.tick_time = at;
    record.evaluated_at = at;
    record.status = status;
    return record;
  };
  ticks().RecordTick(tick("2026-03-01T00:00:00.000Z", TickStatus::kSkipped), "");
  ticks().RecordTick(tick("2026-03-01T00:00:00.000Z", TickStatus::kSuccess), "1");
  ticks().RecordTick(tick("2026-03-09T00:00:00.000Z", TickStatus::kSkipped), "1");
  EXPECT_EQ(ticks().PurgeTicks(TickStatus::kSkipped, "2026-03-02T00:00:00.000Z"), 1);
  std::vector<TickRecord> left = ticks().TicksOf("s", -1);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].evaluated_at, "2026-03-09T00:00:00.000Z");
  EXPECT_EQ(left[1].status, TickStatus::kSuccess);
  EXPECT_EQ(ticks().GetInstigator("s")->cursor, "1") << "the cursor stays";
}

// ---- orchestrated runs and the asset materialization log ----

TEST_P(StateConformanceTest, RunsKeepTheirJobAndTags) {
  RunRecord run = NewRun("r1", "2026-03-01T10:00:00.000Z");
  run.job = "shop_kpi";
  run.tags = {{"logical_datetime", "2026-03-01T00:00:00+0000"}, {"schedule", "shop_kpi_schedule"}};
  RunRecord later = NewRun("r2", "2026-03-01T10:00:01.000Z");
  later.job = "shop_kpi";
  RunRecord other = NewRun("r3", "2026-03-01T10:00:02.000Z");
  other.job = "load";
  for (const RunRecord& created : {run, later, other, NewRun("r4")}) runs().CreateRun(created);
  EXPECT_EQ(runs().GetRun("r1"), run);
  EXPECT_EQ(Ids(runs().RunsOfJob("shop_kpi", -1)), (std::vector<std::string>{"r2", "r1"}));
  EXPECT_EQ(Ids(runs().RunsOfJob("shop_kpi", 1)), (std::vector<std::string>{"r2"}));
  EXPECT_TRUE(runs().RunsOfJob("", -1).empty());
}

TEST_P(StateConformanceTest, AQueuedRunWithoutOwnerIsStartedByOneClaimer) {
  RunRecord queued = NewRun("q1", "2026-03-01T10:00:00.000Z");
  queued.pid = 0;
  queued.pid_start_time = 0;
  RunRecord owned = NewRun("r1", "2026-03-01T10:00:01.000Z");
  runs().CreateRun(queued);
  runs().CreateRun(owned);
  EXPECT_EQ(Ids(runs().UnclaimedQueuedRuns()), (std::vector<std::string>{"q1"}));

  const int64_t me = getpid();
  std::atomic<int> won{0};
  std::vector<std::thread> claimers;
  for (int i = 0; i < 4; ++i) {
    claimers.emplace_back([&] {
      if (runs().StartQueuedRun("q1", me, ProcessStartTime(me), "2026-03-01T10:00:05.000Z")) ++won;
    });
  }
  for (std::thread& claimer : claimers) claimer.join();
  EXPECT_EQ(won.load(), 1);
  std::optional<RunRecord> started = runs().GetRun("q1");
  ASSERT_TRUE(started);
  EXPECT_EQ(started->status, RunStatus::kStarted);
  EXPECT_EQ(started->pid, me);
  EXPECT_EQ(started->started_at, "2026-03-01T10:00:05.000Z");
  EXPECT_TRUE(runs().UnclaimedQueuedRuns().empty());
  EXPECT_FALSE(runs().StartQueuedRun("r1", me, ProcessStartTime(me), "2026-03-01T10:00:06.000Z"));
  EXPECT_EQ(StateErrorCode([&] { runs().StartQueuedRun("missing", me, 1, "2026-03-01T10:00:06.000Z"); }),
            "SLU-STATE-004");
}

TEST_P(StateConformanceTest, AssetMaterializationsAreKeptInSequenceWithTheirMetadata) {
  EXPECT_EQ(asset_events().LastAssetSequence(), 0);
  EXPECT_FALSE(asset_events().LatestAssetMaterialization("starbake_orders", 0));
  AssetMaterializationRecord first{0, "starbake_orders", "2026-03-01T00.00.00_00.00", "r1", "2026-03-01T10:00:00.000Z",
                                   {{"sl_cron", "0 0 * * *"}, {"sl_freshness", 0}}};
  AssetMaterializationRecord other{0, "starbake_customers", "", "r1", "2026-03-01T10:00:01.000Z", {}};
  AssetMaterializationRecord second = first;
  second.partition = "2026-03-02T00.00.00_00.00";
  second.run_id = "r2";
  const int64_t s1 = asset_events().RecordAssetMaterialization(first);
  const int64_t s2 = asset_events().RecordAssetMaterialization(other);
  const int64_t s3 = asset_events().RecordAssetMaterialization(second);
  EXPECT_LT(s1, s2);
  EXPECT_LT(s2, s3);
  EXPECT_EQ(asset_events().LastAssetSequence(), s3);

  std::optional<AssetMaterializationRecord> latest = asset_events().LatestAssetMaterialization("starbake_orders", 0);
  ASSERT_TRUE(latest);
  second.sequence = s3;
  EXPECT_EQ(*latest, second);
  EXPECT_FALSE(asset_events().LatestAssetMaterialization("starbake_orders", s3));
  EXPECT_EQ(asset_events().LatestAssetMaterialization("starbake_customers", s1)->sequence, s2);

  first.sequence = s1;
  EXPECT_EQ(asset_events().RecentAssetMaterializations("starbake_orders", 10),
            (std::vector<AssetMaterializationRecord>{first, second}));
  EXPECT_EQ(asset_events().RecentAssetMaterializations("starbake_orders", 1),
            (std::vector<AssetMaterializationRecord>{second}));
  other.sequence = s2;
  other.metadata = nlohmann::json::object();
  EXPECT_EQ(asset_events().LatestAssetMaterializations(),
            (std::vector<AssetMaterializationRecord>{other, second}));
}

// ---- the run queue ----

TEST_P(StateConformanceTest, WorkersRegisterHeartbeatAndLeave) {
  WorkerRecord here = ThisProcessAsWorker("2026-03-01T10:00:00.000Z");
  queue().RegisterWorker(here);
  WorkerRecord remote = RemoteWorker("b");
  queue().HeartbeatWorker(here.worker_id, "2026-03-01T10:00:07.000Z");
  here.heartbeat_at = "2026-03-01T10:00:07.000Z";
  std::vector<WorkerRecord> expected{remote, here};
  std::sort(expected.begin(), expected.end(),
            [](const WorkerRecord& a, const WorkerRecord& b) { return a.worker_id < b.worker_id; });
  EXPECT_EQ(queue().ListWorkers(), expected);
  queue().UnregisterWorker(remote.worker_id);
  queue().UnregisterWorker(remote.worker_id);
  EXPECT_EQ(queue().ListWorkers(), (std::vector<WorkerRecord>{here}));
  EXPECT_EQ(StateErrorCode([&] { queue().HeartbeatWorker(remote.worker_id, "2026-03-01T10:00:08.000Z"); }),
            "SLU-STATE-010");
}

TEST_P(StateConformanceTest, AWorkerClaimsTheOldestJobRunUpToItsLimit) {
  runs().CreateRun(QueuedJobRun("q2", "2026-03-01T10:00:02.000Z", "load"));
  runs().CreateRun(QueuedJobRun("q1", "2026-03-01T10:00:01.000Z", "load"));
  runs().CreateRun(QueuedJobRun("q3", "2026-03-01T10:00:03.000Z", "load"));
  RunRecord plain = QueuedJobRun("p0", "2026-03-01T10:00:00.000Z", "");  // not a job run: never claimed
  runs().CreateRun(plain);
  WorkerRecord worker = RemoteWorker("a");
  std::optional<RunRecord> first = queue().ClaimQueuedRun(worker, 2, {}, "2026-03-01T10:01:00.000Z");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->run_id, "q1");
  EXPECT_EQ(first->status, RunStatus::kStarted);
  EXPECT_EQ(runs().GetRun("q1"), first);
  EXPECT_EQ(first->host, worker.host);
  EXPECT_EQ(first->pid, worker.pid);
  EXPECT_EQ(first->started_at, "2026-03-01T10:01:00.000Z");
  EXPECT_EQ(queue().ClaimQueuedRun(worker, 2, {}, "2026-03-01T10:01:01.000Z")->run_id, "q2");
  EXPECT_FALSE(queue().ClaimQueuedRun(worker, 2, {}, "2026-03-01T10:01:02.000Z")) << "at its limit of 2";
  EXPECT_EQ(queue().ClaimQueuedRun(RemoteWorker("b"), 2, {}, "2026-03-01T10:01:03.000Z")->run_id, "q3");
  runs().FinishRun("q1", RunStatus::kSuccess, "2026-03-01T10:02:00.000Z", "");
  EXPECT_FALSE(queue().ClaimQueuedRun(worker, 2, {}, "2026-03-01T10:02:01.000Z")) << "nothing left but a plain run";
  EXPECT_EQ(runs().GetRun("p0")->status, RunStatus::kQueued);
  WorkerRecord unknown{"ghost:1:1", "ghost", 1, 1, "", ""};
  EXPECT_EQ(StateErrorCode([&] { queue().ClaimQueuedRun(unknown, 1, {}, "2026-03-01T10:02:02.000Z"); }),
            "SLU-STATE-010");
}

TEST_P(StateConformanceTest, TagLimitsHoldAcrossWorkersAndSkipToARunTheyAllow) {
  runs().CreateRun(QueuedJobRun("k1", "2026-03-01T10:00:01.000Z", "kpi", {{"sluice/job", "kpi"}}));
  runs().CreateRun(QueuedJobRun("k2", "2026-03-01T10:00:02.000Z", "kpi", {{"sluice/job", "kpi"}}));
  runs().CreateRun(QueuedJobRun("l1", "2026-03-01T10:00:03.000Z", "load", {{"sluice/job", "load"}}));
  const std::vector<TagLimit> limits{{"sluice/job", std::string("kpi"), 1}};
  EXPECT_EQ(queue().ClaimQueuedRun(RemoteWorker("a"), 4, limits, "2026-03-01T10:01:00.000Z")->run_id, "k1");
  EXPECT_EQ(queue().ClaimQueuedRun(RemoteWorker("b"), 4, limits, "2026-03-01T10:01:01.000Z")->run_id, "l1")
      << "k2 waits: one kpi run is started on worker a";
  EXPECT_FALSE(queue().ClaimQueuedRun(RemoteWorker("c"), 4, limits, "2026-03-01T10:01:02.000Z"));
  runs().FinishRun("k1", RunStatus::kFailure, "2026-03-01T10:02:00.000Z", "boom");
  EXPECT_EQ(queue().ClaimQueuedRun(RemoteWorker("c"), 4, limits, "2026-03-01T10:02:01.000Z")->run_id, "k2");
}

TEST_P(StateConformanceTest, ConcurrentClaimsTakeEveryRunExactlyOnce) {
  constexpr int kRuns = 120;
  for (int i = 0; i < kRuns; ++i) {
    char created[40];
    std::snprintf(created, sizeof created, "2026-03-01T10:%02d:%02d.000Z", i / 60, i % 60);
    runs().CreateRun(QueuedJobRun("run" + std::to_string(i), created, "load", {{"sluice/job", "load"}}));
  }
  std::vector<WorkerRecord> workers;
  for (const char* name : {"a", "b", "c", "d"}) workers.push_back(RemoteWorker(name));
  std::mutex mutex;
  std::map<std::string, int> claims;
  std::vector<std::thread> threads;
  for (const WorkerRecord& worker : workers) {
    threads.emplace_back([&, worker] {
      while (auto run = queue().ClaimQueuedRun(worker, 1, {}, "2026-03-01T11:00:00.000Z")) {
        runs().FinishRun(run->run_id, RunStatus::kSuccess, "2026-03-01T11:00:01.000Z", "");
        std::lock_guard lock(mutex);
        ++claims[run->run_id];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(claims.size(), static_cast<size_t>(kRuns));
  for (const auto& [run_id, count] : claims) EXPECT_EQ(count, 1) << run_id;
}

TEST_P(StateConformanceTest, DeadWorkersAreReapedWithTheirStartedRuns) {
  runs().CreateRun(QueuedJobRun("q1", "2026-03-01T10:00:01.000Z", "load"));
  runs().CreateRun(QueuedJobRun("q2", "2026-03-01T10:00:02.000Z", "load"));
  WorkerRecord silent = RemoteWorker("silent", "2026-03-01T10:00:00.000Z");
  WorkerRecord alive = ThisProcessAsWorker("2026-03-01T10:05:00.000Z");
  queue().RegisterWorker(alive);
  ASSERT_EQ(queue().ClaimQueuedRun(silent, 1, {}, "2026-03-01T10:01:00.000Z")->run_id, "q1");
  ASSERT_EQ(queue().ClaimQueuedRun(alive, 1, {}, "2026-03-01T10:05:01.000Z")->run_id, "q2");

  EXPECT_TRUE(queue().ReapDeadWorkers("2026-03-01T09:00:00.000Z").empty()) << "every heartbeat is recent enough";
  std::vector<RunRecord> orphaned = queue().ReapDeadWorkers("2026-03-01T10:02:00.000Z");
  ASSERT_EQ(Ids(orphaned), (std::vector<std::string>{"q1"}));
  EXPECT_EQ(orphaned.front().status, RunStatus::kStarted) << "the caller decides: fail or retry";
  EXPECT_EQ(queue().ListWorkers(), (std::vector<WorkerRecord>{alive}));
  EXPECT_EQ(StateErrorCode([&] { queue().HeartbeatWorker(silent.worker_id, "2026-03-01T10:03:00.000Z"); }),
            "SLU-STATE-010");

  // A worker of this machine whose process is gone is dead whatever its heartbeat says.
  WorkerRecord gone = ThisProcessAsWorker("2026-03-01T10:05:00.000Z");
  gone.pid_start_time += 1;  // the pid is this process's, the start time another's: a reused pid
  gone.worker_id = gone.host + ":" + std::to_string(gone.pid) + ":" + std::to_string(gone.pid_start_time);
  queue().RegisterWorker(gone);
  EXPECT_TRUE(queue().ReapDeadWorkers("2026-03-01T10:02:00.000Z").empty());
  EXPECT_EQ(queue().ListWorkers(), (std::vector<WorkerRecord>{alive}));
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StateConformanceTest,
    ::testing::Values(StateBackend{"Sqlite",
                                 [](const std::filesystem::path& scratch) -> std::unique_ptr<StoreUnderTest> {
                                   return std::make_unique<SingleObjectStore<SqliteStateStore>>(
                                       SqliteStateStore::Open(scratch / "state.db"));
                                 }},
                    // A fresh database per test; without a server RequirePostgresTestServer throws, failing the test.
                    StateBackend{"Postgres",
                                 [](const std::filesystem::path&) -> std::unique_ptr<StoreUnderTest> {
                                   testing::PostgresTestServer server = testing::RequirePostgresTestServer();
                                   return std::make_unique<SingleObjectStore<PostgresStateStore>>(
                                       PostgresStateStore::Open(testing::PostgresTestUrl(
                                           server, testing::CreatePostgresTestDatabase(server, "conformance"))));
                                 }}),
    [](const ::testing::TestParamInfo<StateBackend>& info) { return info.param.name; });

}  // namespace
}  // namespace sluice
