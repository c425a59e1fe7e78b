// Unit tests of backfill planning: ranges, chunking by policy, where unpartitioned assets run, chunk runs.
#include <gtest/gtest.h>

#include "definitions/definitions_test_support.hpp"
#include "engine/backfill_plan.hpp"

namespace sluice {
namespace {

using testing::HandBuiltModel;
using testing::HandBuiltSeed;

Date D(const std::string& text) { return *Date::Parse(text); }

std::vector<Date> Days(const std::string& first, const std::string& last) {
  std::vector<Date> days;
  for (Date day = D(first); day <= D(last); day = day.AddDays(1)) days.push_back(day);
  return days;
}

Asset Daily(Asset asset, std::optional<int> max_partitions_per_run) {
  asset.partitions = PartitionSpec{"event_date", DailyPartitions(D("2026-01-01"))};
  asset.backfill_policy.max_partitions_per_run = max_partitions_per_run;
  return asset;
}

// raw.events (seed) → daily.a (multi_run a_n) → daily.b (multi_run b_n) → daily.c (unpartitioned);
// raw.events → daily.d (unpartitioned, reads no partitioned asset).
Definitions Graph(std::optional<int> a_n, std::optional<int> b_n) {
  const AssetKey events = AssetKey::Of("raw", "events");
  const AssetKey a = AssetKey::Of("daily", "a"), b = AssetKey::Of("daily", "b");
  std::vector<Asset> assets{
      HandBuiltSeed("raw", "events", "seeds/events.csv"),
      Daily(HandBuiltModel("daily", "daily", "a", "SELECT * FROM __source(\"events\")", {{"events", events}}), a_n),
      Daily(HandBuiltModel("daily", "daily", "b", "SELECT * FROM __ref(\"a\")", {{"a", a}}), b_n),
      HandBuiltModel("daily", "daily", "c", "SELECT * FROM __ref(\"b\")", {{"b", b}}),
      HandBuiltModel("daily", "daily", "d", "SELECT * FROM __source(\"events\")", {{"events", events}}),
  };
  return Definitions(std::move(assets), {});
}

std::vector<std::string> Names(const std::vector<AssetKey>& keys) {
  std::vector<std::string> names;
  for (const AssetKey& key : keys) names.push_back(key.ToString());
  return names;
}

// Each chunk as "first..last:assets" or "-:assets".
std::vector<std::string> Describe(const BackfillPlan& plan) {
  std::vector<std::string> lines;
  for (const BackfillChunkPlan& chunk : plan.chunks) {
    std::string line = chunk.window ? chunk.window->start.ToString().substr(5) + ".." +
                                          chunk.window->end.AddDays(-1).ToString().substr(5)
                                    : "-";
    line += ":";
    for (const std::string& name : Names(chunk.assets)) line += name.substr(name.find('.') + 1);
    lines.push_back(line);
  }
  return lines;
}

std::string ErrorCode(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.diagnostics().front().code;
  }
  return "no error";
}

const Date kToday = *Date::Parse("2026-06-01");

TEST(BackfillRanges, KeysBecomeMaximalRunsOfConsecutiveDays) {
  std::vector<Date> keys = {D("2026-01-06"), D("2026-01-02"), D("2026-01-01"), D("2026-01-03"), D("2026-01-02"),
                            D("2026-01-07"), D("2026-01-10")};
  EXPECT_EQ(ContiguousRanges(keys),
            (std::vector<DayRange>{{D("2026-01-01"), D("2026-01-03")},
                                   {D("2026-01-06"), D("2026-01-07")},
                                   {D("2026-01-10"), D("2026-01-10")}}));
  EXPECT_TRUE(ContiguousRanges({}).empty());
}

TEST(BackfillRanges, MultiRunWalksARangeInStepsOfN) {
  DayRange days35{D("2026-01-01"), D("2026-02-04")};
  std::vector<DayRange> chunks = ChunkRange(days35, 10);
  ASSERT_EQ(chunks.size(), 4u);
  std::vector<int> sizes;
  for (const DayRange& chunk : chunks) sizes.push_back(chunk.last.days_since_epoch() - chunk.first.days_since_epoch() + 1);
  EXPECT_EQ(sizes, (std::vector<int>{10, 10, 10, 5}));
  EXPECT_EQ(chunks[3], (DayRange{D("2026-01-31"), D("2026-02-04")}));
  EXPECT_EQ(ChunkRange(days35, std::nullopt), std::vector<DayRange>{days35});
  EXPECT_EQ(ChunkRange({D("2026-01-01"), D("2026-01-03")}, 1).size(), 3u);
}

TEST(BackfillPlanning, TheSmallestNWinsAndUnpartitionedAssetsRunBeforeOrAfter) {
  Definitions definitions = Graph(10, std::nullopt);
  BackfillPlan plan = PlanBackfill(definitions, {{}, Days("2026-01-01", "2026-02-04")}, kToday);
  EXPECT_EQ(plan.max_partitions_per_run, 10);
  EXPECT_EQ(plan.selection_text, "*");
  EXPECT_EQ(Describe(plan), (std::vector<std::string>{"-:events", "01-01..01-10:ab", "01-11..01-20:ab",
                                                      "01-21..01-30:ab", "01-31..02-04:ab", "-:cd"}));
  Definitions both = Graph(10, 4);
  EXPECT_EQ(PlanBackfill(both, {{}, Days("2026-01-01", "2026-01-10")}, kToday).max_partitions_per_run, 4);
}

TEST(BackfillPlanning, AGapSplitsTheRangesFirst) {
  Definitions definitions = Graph(std::nullopt, std::nullopt);
  std::vector<Date> keys = Days("2026-01-01", "2026-01-03");
  for (Date day : Days("2026-01-06", "2026-01-07")) keys.push_back(day);
  BackfillPlan plan = PlanBackfill(definitions, {{"+b"}, keys}, kToday);
  EXPECT_EQ(Describe(plan), (std::vector<std::string>{"-:events", "01-01..01-03:ab", "01-06..01-07:ab"}));
  EXPECT_EQ(plan.first, D("2026-01-01"));
  EXPECT_EQ(plan.last, D("2026-01-07"));
}

TEST(BackfillPlanning, OneChunkHoldsEverySelectedAssetLikeAPlainRun) {
  Definitions definitions = Graph(std::nullopt, std::nullopt);
  BackfillPlan plan = PlanBackfill(definitions, {{}, Days("2026-01-01", "2026-01-20")}, kToday);
  EXPECT_EQ(Describe(plan), (std::vector<std::string>{"01-01..01-20:eventsabcd"}));
}

TEST(BackfillPlanning, RejectsWhatCannotBeBackfilled) {
  Definitions definitions = Graph(2, std::nullopt);
  EXPECT_EQ(ErrorCode([&] { PlanBackfill(definitions, {{"d"}, Days("2026-01-01", "2026-01-05")}, kToday); }),
            "SLU-BACKFILL-002");
  EXPECT_EQ(ErrorCode([&] { PlanBackfill(definitions, {{}, {}}, kToday); }), "SLU-BACKFILL-002");
  EXPECT_EQ(ErrorCode([&] { PlanBackfill(definitions, {{}, Days("2025-12-30", "2026-01-05")}, kToday); }),
            "SLU-PARTITION-002");

  // daily.a → daily.u (unpartitioned) → daily.p (partitioned): u fits neither before nor after.
  const AssetKey events = AssetKey::Of("raw", "events");
  std::vector<Asset> assets{
      HandBuiltSeed("raw", "events", "seeds/events.csv"),
      Daily(HandBuiltModel("daily", "daily", "a", "SELECT * FROM __source(\"events\")", {{"events", events}}), 2),
      HandBuiltModel("daily", "daily", "u", "SELECT * FROM __ref(\"a\")", {{"a", AssetKey::Of("daily", "a")}}),
      Daily(HandBuiltModel("daily", "daily", "p", "SELECT * FROM __ref(\"u\")", {{"u", AssetKey::Of("daily", "u")}}),
            std::nullopt),
  };
  Definitions sandwich(std::move(assets), {});
  EXPECT_EQ(ErrorCode([&] { PlanBackfill(sandwich, {{}, Days("2026-01-01", "2026-01-05")}, kToday); }),
            "SLU-BACKFILL-001");
}

TEST(BackfillPlanning, AChunkRunOwnsItsWindowAndReadsEarlierChunksFromTheWarehouse) {
  Definitions definitions = Graph(5, std::nullopt);
  RunPlan run = PlanChunkRun(definitions, "+b", DateWindow{D("2026-01-06"), D("2026-01-11")},
                             {AssetKey::Of("daily", "b")}, kToday);
  EXPECT_EQ(run.selection_text, "+b");
  ASSERT_EQ(run.steps.size(), 1u);
  EXPECT_EQ(run.steps[0].window, (DateWindow{D("2026-01-06"), D("2026-01-11")}));
  EXPECT_EQ(Names(run.steps[0].outside_upstreams), (std::vector<std::string>{"daily.a"}));
  RunPlan unpartitioned = PlanChunkRun(definitions, "*", std::nullopt, {AssetKey::Of("raw", "events")}, kToday);
  ASSERT_EQ(unpartitioned.steps.size(), 1u);
  EXPECT_FALSE(unpartitioned.steps[0].window);
}

}  // namespace
}  // namespace sluice
