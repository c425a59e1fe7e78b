// The orchestrator's benchmark (docs/performance.md, The orchestrator benchmark): the cost of one daemon pass.
//
// 1. Scheduler tick: 10,000 cron schedules (a mix of every-5-minutes, hourly, daily and weekly) on a SQLite state
//    store, evaluated by Daemon::EvaluateInstigators at an instant where none is due (the steady state) and at one
//    where half of them each fire one tick (5,000 runs queued and ticks recorded). The floor does no orchestration
//    work: it reads the state the pass needs, the instigator rows.
// 2. Sensor evaluation: one sensor over 1,000 monitored datasets, all materialized and consistent, evaluated once
//    (gate, consistency, run request). The floor reads the newest materialization of each dataset.
// Each measurement is repeated; medians and ratios are printed. Usage: orchestrate_bench [rounds]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/logical_datetime.hpp"
#include "orchestrate/daemon.hpp"
#include "orchestrate/dataset_sensor.hpp"
#include "state/sqlite/sqlite_state_store.hpp"

namespace {

using namespace sluice;
using namespace sluice::orchestrate;
using std::chrono::system_clock;

class ManualClock final : public Clock {
 public:
  system_clock::time_point now;
  system_clock::time_point Now() const override { return now; }
};

double Millis(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::filesystem::path ScratchFolder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sluice_orchestrate_bench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

RunnableJob ScheduledJob(int index) {
  static const char* kCrons[] = {"*/5 * * * *", "0 * * * *", "0 0 * * *", "0 6 * * 1"};
  RunnableJob job;
  job.job.name = "job_" + std::to_string(index);
  job.job.cron = kCrons[index % 4];
  job.job.nodes = {"start", "end"};
  job.job.tasks = {StarlakeTask{"start", StarlakeTaskKind::kStart, "", {}, "", StarlakePreLoadStrategy::kNone, {}},
                   StarlakeTask{"end", StarlakeTaskKind::kEnd, "", {}, "", StarlakePreLoadStrategy::kNone, {}}};
  job.job.edges = {{"start", "end"}};
  return job;
}

void SchedulerTick(int rounds) {
  constexpr int kSchedules = 10'000;
  std::vector<double> idle;
  std::vector<double> due;
  std::vector<double> floor;
  for (int round = 0; round < rounds; ++round) {
    const std::filesystem::path folder = ScratchFolder();
    auto store = SqliteStateStore::Open(folder / "state.db");
    ManualClock clock;
    clock.now = ParseLogicalDatetime("2026-07-17T12:02:30Z");
    std::vector<RunnableJob> jobs;
    for (int i = 0; i < kSchedules; ++i) jobs.push_back(ScheduledJob(i));
    Daemon daemon(*store, clock, jobs, DaemonSettings{}, nullptr);
    daemon.EvaluateInstigators();  // first sight: every schedule is created, nothing fires

    clock.now = ParseLogicalDatetime("2026-07-17T12:03:30Z");  // no tick in (12:02:30, 12:03:30]
    idle.push_back(Millis([&] { daemon.EvaluateInstigators(); }));
    floor.push_back(Millis([&] { store->ListInstigators(); }));
    clock.now = ParseLogicalDatetime("2026-07-17T12:59:30Z");  // the */5 schedules catch up (not measured)
    daemon.EvaluateInstigators();
    clock.now = ParseLogicalDatetime("2026-07-17T13:00:30Z");  // every */5 and hourly schedule fires one tick
    size_t fired = 0;
    due.push_back(Millis([&] { fired = daemon.EvaluateInstigators().size(); }));
    if (round == 0) std::printf("scheduler: %d schedules, %zu ticks fired in the due pass\n", kSchedules, fired);
    std::filesystem::remove_all(folder);
  }
  const double floor_ms = Median(floor);
  std::printf("scheduler tick, nothing due:   median %7.1f ms  (floor: reading the instigators %6.1f ms, ratio %.2f)\n",
              Median(idle), floor_ms, Median(idle) / floor_ms);
  std::printf("scheduler tick, 5,000 fire:    median %7.1f ms  (ratio to the floor %.1f)\n", Median(due),
              Median(due) / floor_ms);
}

void SensorPass(int rounds) {
  constexpr int kDatasets = 1'000;
  std::vector<double> evaluation;
  std::vector<double> floor;
  for (int round = 0; round < rounds; ++round) {
    const std::filesystem::path folder = ScratchFolder();
    auto store = SqliteStateStore::Open(folder / "state.db");
    std::vector<SensorDataset> datasets;
    for (int i = 0; i < kDatasets; ++i) {
      const std::string uri = "domain_table_" + std::to_string(i);
      datasets.push_back(SensorDataset{uri, "0 0 * * *", 0});
      for (const char* day : {"2026-07-16T00:00:00+0000", "2026-07-17T00:00:00+0000"}) {
        AssetMaterializationRecord record;
        record.asset = uri;
        record.partition = QuoteDatetime(day);
        record.run_id = "r";
        record.at = "2026-07-17T00:00:01.000Z";
        record.metadata = {{"sl_cron", "0 0 * * *"}, {"sl_freshness", 0}, {"sl_scheduled_date", day}};
        store->RecordAssetMaterialization(record);
      }
    }
    RunnableJob job;
    job.job.name = "consumer";
    for (const SensorDataset& dataset : datasets) {
      job.job.sensor_datasets.push_back(StarlakeDatasetRef{dataset.uri, dataset.uri, dataset.cron, 0});
    }
    job.resolved.triggering_strategy = "all";
    job.resolved.start_date = Date::Parse("2026-01-01");
    ManualClock clock;
    clock.now = ParseLogicalDatetime("2026-07-17T00:05:00Z");
    size_t requested = 0;
    evaluation.push_back(Millis([&] {
      Daemon daemon(*store, clock, {job}, DaemonSettings{}, nullptr);
      requested = daemon.EvaluateInstigators().size();
    }));
    floor.push_back(Millis([&] {
      for (const SensorDataset& dataset : datasets) store->LatestAssetMaterialization(dataset.uri, 0);
    }));
    if (round == 0) std::printf("sensor: %d datasets, %zu run requested\n", kDatasets, requested);
    std::filesystem::remove_all(folder);
  }
  std::printf(
      "sensor evaluation:             median %7.1f ms  (floor: reading each dataset's latest %6.1f ms, "
      "ratio %.2f)\n",
      Median(evaluation), Median(floor), Median(evaluation) / Median(floor));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  SchedulerTick(rounds);
  SensorPass(rounds);
  return 0;
}
