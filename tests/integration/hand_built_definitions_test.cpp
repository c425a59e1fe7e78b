// A Definitions value built by hand in C++ — no project files, as the SDK builds one — is compiled and run like a
// loaded project: its artifacts are published, and a run materializes a seed, a daily-partitioned model (reading
// its window through @partition_start()/@partition_end()) and a view on the embedded DuckDB, recording history.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compile/artifacts.hpp"
#include "core/clock.hpp"
#include "definitions/definitions_test_support.hpp"
#include "engine/run_executor.hpp"
#include "engine/run_plan.hpp"
#include "state/open_state_store.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::HandBuiltModel;
using testing::HandBuiltSeed;

class HandBuiltProject : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sluice_hand_built_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "seeds");
    std::ofstream(root_ / "seeds" / "events.csv") << "id,day,amount\n1,2026-01-01,10\n2,2026-01-01,5\n"
                                                     "3,2026-01-02,7\n4,2026-01-03,1\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  static Definitions Build() {
    Definitions::Parts parts;
    parts.project = ProjectInfo{"hand_built", "dev", "duckdb"};
    parts.assets.push_back(HandBuiltSeed("raw", "events", "seeds/events.csv"));
    Asset daily = HandBuiltModel(
        "gold", "gold", "daily_amounts",
        "SELECT CAST(day AS DATE) AS day, CAST(sum(amount) AS BIGINT) AS amount\n"
        "FROM __ref(\"events\")\n"
        "WHERE CAST(day AS DATE) >= @partition_start() AND CAST(day AS DATE) < @partition_end()\n"
        "GROUP BY 1",
        {{"events", AssetKey::Of("raw", "events")}}, {{"day", "DATE"}, {"amount", "BIGINT"}});
    daily.partitions = PartitionSpec{"day", DailyPartitions(*Date::Parse("2026-01-01"))};
    parts.assets.push_back(std::move(daily));
    Asset total = HandBuiltModel("gold", "gold", "total", "SELECT sum(amount) AS amount FROM __ref(\"daily_amounts\")",
                                 {{"daily_amounts", AssetKey::Of("gold", "daily_amounts")}});
    std::get<SqlCompute>(total.compute).kind = ModelKind::kView;
    parts.assets.push_back(std::move(total));
    parts.pipelines.push_back(Pipeline{"gold", "pipelines/gold", "gold", {"daily_amounts", "total"}, "events"});
    return Definitions(std::move(parts));
  }

  fs::path root_;
};

TEST_F(HandBuiltProject, CompilesAndRunsLikeALoadedProject) {
  const Definitions definitions = Build();

  const ArtifactSummary compiled = WriteArtifacts(definitions, root_ / "target");
  EXPECT_EQ(compiled.models, 2u);
  EXPECT_TRUE(fs::exists(root_ / "target" / "manifest.json"));
  EXPECT_TRUE(fs::exists(root_ / "target" / "compiled" / "models" / "gold" / "daily_amounts.sql"));

  WarehouseConfig config;
  config.adapter = definitions.project().adapter;
  config.project_dir = root_;
  config.target = definitions.project().target;
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  std::unique_ptr<StateStore> state = OpenStateStore(root_);
  FixedClock clock(std::chrono::system_clock::time_point(std::chrono::hours(24 * 20458)));  // 2026-01-05
  RunExecutor executor(definitions, *warehouse, *state, *state, *state, clock, ExecutorOptions{2, root_.string()});

  const RunPlan plan = PlanRun(definitions, RunRequest{{}, "2026-01-01", "2026-01-02"}, clock.TodayUtc());
  ASSERT_EQ(plan.steps.size(), 3u);
  const RunOutcome outcome = executor.Execute(plan, "hand_built_1", {});
  ASSERT_EQ(outcome.status, RunStatus::kSuccess);
  for (const StepOutcome& step : outcome.steps) {
    EXPECT_EQ(step.status, StepStatus::kSuccess) << step.key.ToString();
    for (const Diagnostic& diagnostic : step.diagnostics) ADD_FAILURE() << FormatDiagnostic(diagnostic);
  }

  const Rows daily = warehouse->Query("SELECT day::VARCHAR, amount FROM gold.daily_amounts ORDER BY day");
  ASSERT_EQ(daily.rows.size(), 2u);  // 2026-01-03 is outside the window
  EXPECT_EQ(daily.rows[0][0], "2026-01-01");
  EXPECT_EQ(daily.rows[0][1], "15");
  EXPECT_EQ(daily.rows[1][1], "7");
  EXPECT_EQ(warehouse->Query("SELECT amount FROM gold.total").rows.at(0).at(0), "22");

  const std::vector<MaterializationRecord> materialized = state->LatestMaterializations();
  size_t daily_partitions = 0;
  for (const MaterializationRecord& record : materialized) daily_partitions += record.asset == "gold.daily_amounts";
  EXPECT_EQ(daily_partitions, 2u);
  EXPECT_EQ(warehouse->ReadLedger().size(), 3u);
  ASSERT_TRUE(state->GetRun("hand_built_1").has_value());
  EXPECT_EQ(state->GetRun("hand_built_1")->status, RunStatus::kSuccess);
}

}  // namespace
}  // namespace sluice
