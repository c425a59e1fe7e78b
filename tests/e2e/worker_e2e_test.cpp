// End-to-end tests of distributed runs (issue 27 point 3): `sluice worker` processes claiming the queued runs of one
// state store, `sluice daemon --external-workers` recovering the runs of a worker killed with SIGKILL, tag limits held
// across workers, and one active daemon per store. Each test runs on the SQLite store (workers of one machine) and on
// the PostgreSQL test server (a fresh database, SLUICE_STATE_URL), the job's command being the Starlake test double.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/clock.hpp"
#include "e2e/sluice_process.hpp"
#include "state/open_state_store.hpp"
#include "state/state_store.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A project with one transform job, `trivial`, of one task that calls the Starlake test double.
class QueueProject {
 public:
  explicit QueueProject(const std::string& backend) : project_("examples/starbake") {
    project_.Write("pipelines/trivial.yml", "pipeline: trivial\nkind: transform\noptions:\n  SL_STARLAKE_PATH: \"" +
                                                std::string(STARLAKE_DOUBLE) +
                                                "\"\n  retries: \"0\"\ndependencies:\n  - name: work.step\n"
                                                "    type: task\n");
    if (backend == "postgres") {
      PostgresTestServer server = RequirePostgresTestServer();
      state_url_ = PostgresTestUrl(server, CreatePostgresTestDatabase(server, "queue"));
    }
  }

  const ScratchProject& project() const { return project_; }
  std::string log() const { return (project_.root() / "starlake_calls.jsonl").string(); }
  std::string script() const { return (project_.root() / "double_script.txt").string(); }

  std::map<std::string, std::string> Env() const {
    std::map<std::string, std::string> env{{"STARLAKE_DOUBLE_LOG", log()}, {"STARLAKE_DOUBLE_SCRIPT", script()}};
    if (!state_url_.empty()) env["SLUICE_STATE_URL"] = state_url_;
    return env;
  }

  // The project's state store, opened in this process as `sluice` opens it.
  std::unique_ptr<StateStore> Store() const {
    if (state_url_.empty()) return OpenStateStore(project_.root());
    setenv("SLUICE_STATE_URL", state_url_.c_str(), 1);
    std::unique_ptr<StateStore> store = OpenStateStore(project_.root());
    unsetenv("SLUICE_STATE_URL");
    return store;
  }

  // Queues `count` runs of `trivial`, oldest first, as `sluice starlake run trivial --queue` does.
  std::vector<std::string> Queue(int count) const {
    std::unique_ptr<StateStore> store = Store();
    SystemClock clock;
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      RunRecord run;
      run.run_id = NewRunId(clock);
      run.selection = "trivial";
      run.job = "trivial";
      run.created_at = FormatUtc(clock.Now());
      run.tags = {{"sluice/job", "trivial"}, {"sluice/trigger", "manual"}};
      store->CreateRun(run);
      ids.push_back(run.run_id);
    }
    return ids;
  }

  size_t Calls() const {
    std::ifstream in(log());
    size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

  std::string Output(const std::string& stem) const { return project_.Read("../" + stem + ".err"); }

 private:
  ScratchProject project_;
  std::string state_url_;
};

class WorkerE2E : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkerE2E, ThreeWorkersRunEveryRunOfAQueueOf200ExactlyOnce) {
  QueueProject queue(GetParam());
  queue.project().Write("double_script.txt", "transform sleep_ms=10\n");
  const std::vector<std::string> ids = queue.Queue(200);
  std::vector<pid_t> workers;
  for (const char* name : {"w1", "w2", "w3"}) {
    workers.push_back(queue.project().Start(
        {"worker", "--until-idle", "--max-concurrent-runs", "3", "--heartbeat", "100"}, queue.Env(), name));
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    EXPECT_EQ(WaitFor(workers[i]), 0) << queue.Output("w" + std::to_string(i + 1));
  }

  EXPECT_EQ(queue.Calls(), 200u) << "each run called the double once: none ran twice";
  std::unique_ptr<StateStore> store = queue.Store();
  std::set<int64_t> owners;
  for (const std::string& id : ids) {
    std::optional<RunRecord> run = store->GetRun(id);
    ASSERT_TRUE(run) << id;
    EXPECT_EQ(run->status, RunStatus::kSuccess) << id << ": " << run->error;
    EXPECT_EQ(run->host, HostName());
    owners.insert(run->pid);
  }
  EXPECT_EQ(owners, (std::set<int64_t>(workers.begin(), workers.end()))) << "every worker took a share";
  EXPECT_TRUE(store->ListWorkers().empty()) << "workers unregister when they exit";
}

TEST_P(WorkerE2E, ATagLimitHoldsAcrossWorkers) {
  QueueProject queue(GetParam());
  queue.project().Write("double_script.txt", "transform sleep_ms=150\n");
  const std::vector<std::string> ids = queue.Queue(8);
  std::vector<pid_t> workers;
  for (const char* name : {"w1", "w2"}) {
    workers.push_back(queue.project().Start({"worker", "--until-idle", "--max-concurrent-runs", "4", "--tag-limit",
                                             "sluice/job:trivial=1", "--heartbeat", "50"},
                                            queue.Env(), name));
  }
  for (pid_t worker : workers) EXPECT_EQ(WaitFor(worker), 0);
  std::unique_ptr<StateStore> store = queue.Store();
  std::vector<std::pair<std::string, std::string>> spans;
  for (const std::string& id : ids) {
    std::optional<RunRecord> run = store->GetRun(id);
    ASSERT_TRUE(run && run->status == RunStatus::kSuccess) << id;
    spans.emplace_back(*run->started_at, *run->finished_at);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_LE(spans[i - 1].second, spans[i].first) << "two runs of the job overlapped: the limit is 1";
  }
}

// kill -9 of a worker in the middle of a run: the daemon marks that run FAILURE (the worker died), another worker runs
// the rest of the queue, and with --retry-lost-runs the lost run is queued again and succeeds.
TEST_P(WorkerE2E, AWorkerKilledMidRunHasItsRunMarkedAndNothingElseIsAffected) {
  QueueProject queue(GetParam());
  queue.project().Write("double_script.txt", "transform sleep_ms=1500\n");
  const pid_t daemon = queue.project().Start({"daemon", "--external-workers", "--interval", "100",
                                              "--worker-stale-after", "30", "--retry-lost-runs", "1"},
                                             queue.Env(), "daemon");
  const std::vector<std::string> ids = queue.Queue(4);
  const pid_t victim = queue.project().Start({"worker", "--max-concurrent-runs", "1", "--heartbeat", "100"},
                                             queue.Env(), "victim");
  std::unique_ptr<StateStore> store = queue.Store();
  // The victim's first run is in flight once the double has been called.
  std::string lost;
  for (int i = 0; i < 200 && lost.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (queue.Calls() == 0) continue;
    for (const std::string& id : ids) {
      std::optional<RunRecord> run = store->GetRun(id);
      if (run->status == RunStatus::kStarted && run->pid == victim) lost = id;
    }
  }
  ASSERT_FALSE(lost.empty()) << queue.Output("victim");
  ProcessResult listed = queue.project().Run({"workers", "--json"}, queue.Env());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const json registered = json::parse(listed.out)["workers"];
  ASSERT_EQ(registered.size(), 1u) << "the victim; the daemon runs no runs itself\n" << listed.out;
  EXPECT_EQ(registered[0]["pid"], victim);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  EXPECT_EQ(WaitFor(victim), 128 + SIGKILL);

  const pid_t survivor = queue.project().Start(
      {"worker", "--until-idle", "--max-concurrent-runs", "2", "--heartbeat", "100"}, queue.Env(), "survivor");
  // The daemon finds the victim dead (its process is gone here; on PostgreSQL its session ended) long before the
  // 30 s heartbeat limit, marks the run and queues it again.
  std::optional<RunRecord> marked;
  for (int i = 0; i < 200; ++i) {
    marked = store->GetRun(lost);
    if (marked->status == RunStatus::kFailure) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(marked->status, RunStatus::kFailure) << queue.Output("daemon");
  EXPECT_TRUE(Has(marked->error, "died")) << marked->error;
  EXPECT_EQ(WaitFor(survivor), 0) << queue.Output("survivor");
  // --until-idle may end before the retry was queued: a second pass catches it.
  EXPECT_EQ(queue.project().Run({"worker", "--until-idle", "--heartbeat", "100"}, queue.Env()).exit_code, 0);
  ASSERT_EQ(kill(daemon, SIGTERM), 0);
  EXPECT_EQ(WaitFor(daemon), 0) << queue.Output("daemon");
  EXPECT_TRUE(Has(queue.Output("daemon"), "run " + lost + " failed")) << queue.Output("daemon");

  int retried = 0;
  for (const RunRecord& run : store->ListRuns(-1)) {
    if (run.run_id == lost) continue;
    EXPECT_EQ(run.status, RunStatus::kSuccess) << run.run_id << ": " << run.error;
    auto retry_of = run.tags.find("sluice/retry_of");
    if (retry_of != run.tags.end()) {
      EXPECT_EQ(retry_of->second, lost);
      EXPECT_EQ(run.tags.at("sluice/attempt"), "2");
      ++retried;
    }
  }
  EXPECT_EQ(retried, 1);
  EXPECT_EQ(store->ListRuns(-1).size(), ids.size() + 1);
}

// Two daemons on one store: one is active; the other waits with --wait and takes over when the first is killed.
TEST_P(WorkerE2E, OfTwoDaemonsOneIsActiveAndTheOtherTakesOverWhenItIsKilled) {
  QueueProject queue(GetParam());
  const pid_t first = queue.project().Start({"daemon", "--interval", "100"}, queue.Env(), "first");
  for (int i = 0; i < 200 && !Has(queue.Output("first"), "daemon started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(Has(queue.Output("first"), "daemon started")) << queue.Output("first");
  ProcessResult second = queue.project().Run({"daemon", "--interval", "100"}, queue.Env());
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_TRUE(Has(second.err, "another daemon (pid " + std::to_string(first))) << second.err;

  const pid_t waiting = queue.project().Start({"daemon", "--wait", "--interval", "100"}, queue.Env(), "waiting");
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_FALSE(Has(queue.Output("waiting"), "daemon started")) << queue.Output("waiting");
  ASSERT_EQ(kill(first, SIGKILL), 0);
  EXPECT_EQ(WaitFor(first), 128 + SIGKILL);
  bool took_over = false;
  for (int i = 0; i < 200 && !took_over; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    took_over = Has(queue.Output("waiting"), "daemon started");
  }
  EXPECT_TRUE(took_over) << queue.Output("waiting");
  // The active daemon runs queued runs.
  const std::vector<std::string> ids = queue.Queue(1);
  std::unique_ptr<StateStore> store = queue.Store();
  for (int i = 0; i < 200 && store->GetRun(ids[0])->status != RunStatus::kSuccess; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(store->GetRun(ids[0])->status, RunStatus::kSuccess);
  ASSERT_EQ(kill(waiting, SIGTERM), 0);
  EXPECT_EQ(WaitFor(waiting), 0) << queue.Output("waiting");
}

INSTANTIATE_TEST_SUITE_P(Stores, WorkerE2E, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace sluice::testing
