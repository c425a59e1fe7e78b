// What the PostgreSQL state store does beyond the conformance suite: migrations (also two processes migrating a fresh
// database at once), errors that name the database without its password, lost connections, dead-run marking by host,
// and the daemon lease as a session-level advisory lock.
#include "state/postgres/postgres_state_store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/postgres/pg_connection.hpp"
#include "state/postgres/postgres_migrations.hpp"
#include "state/state_test_support.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice {
namespace {

using namespace std::chrono_literals;

class PostgresStateStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::RequirePostgresTestServer();
    database_ = testing::CreatePostgresTestDatabase(server_, "state");
    url_ = testing::PostgresTestUrl(server_, database_);
  }

  // A superuser connection to the test database, for looking at the store's tables and sessions from outside.
  std::unique_ptr<pg::Connection> Admin() { return pg::Connection::Open(url_, "sluice test admin"); }

  // Ends every session of this database whose application_name is `application`, as a crash would.
  void TerminateSessions(const std::string& application) {
    Admin()->Exec(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 "
        "AND pid <> pg_backend_pid()",
        {database_, application});
  }

  static RunRecord NewRun(const std::string& run_id, int64_t pid, int64_t pid_start_time) {
    RunRecord run;
    run.run_id = run_id;
    run.selection = "+gold.daily_revenue";
    run.created_at = "2026-03-01T10:00:00.000Z";
    run.pid = pid;
    run.pid_start_time = pid_start_time;
    return run;
  }

  testing::PostgresTestServer server_;
  std::string database_;
  std::string url_;
};

TEST_F(PostgresStateStoreTest, OpenAppliesEveryMigrationOnceAndReopeningAppliesNothing) {
  auto store = PostgresStateStore::Open(url_);
  EXPECT_EQ(store->SchemaVersion(), PostgresMigrations().back().version);
  store.reset();
  store = PostgresStateStore::Open(url_);
  pg::Result recorded = Admin()->Exec("SELECT version, name FROM schema_migrations ORDER BY version");
  ASSERT_EQ(recorded.rows.size(), PostgresMigrations().size());
  for (size_t i = 0; i < recorded.rows.size(); ++i) {
    EXPECT_EQ(recorded.rows[i][0], std::to_string(PostgresMigrations()[i].version));
    EXPECT_EQ(recorded.rows[i][1], std::string(PostgresMigrations()[i].name));
  }
}

TEST_F(PostgresStateStoreTest, ProcessesOpeningAFreshDatabaseAtOnceAllSucceed) {
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int status = 0;
      try {
        auto store = PostgresStateStore::Open(url_);
        store->CreateRun(NewRun("r" + std::to_string(i), getpid(), ProcessStartTime(getpid())));
        store->FinishRun("r" + std::to_string(i), RunStatus::kSuccess, "2026-03-01T10:00:01.000Z", "");
      } catch (const std::exception& error) {
        std::fprintf(stderr, "child %d: %s\n", i, error.what());
        status = 1;
      }
      _exit(status);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process failed to open the fresh database";
  }
  auto store = PostgresStateStore::Open(url_);
  EXPECT_EQ(store->ListRuns(-1).size(), static_cast<size_t>(kProcesses));
  EXPECT_EQ(Admin()->Exec("SELECT count(*) FROM schema_migrations").Scalar(),
            std::to_string(PostgresMigrations().size()));
}

TEST_F(PostgresStateStoreTest, ADatabaseFromANewerSluiceIsRefusedWithState001) {
  PostgresStateStore::Open(url_);
  Admin()->Exec("INSERT INTO schema_migrations VALUES (999, 'from the future', '2030-01-01T00:00:00.000Z')");
  try {
    PostgresStateStore::Open(url_);
    FAIL() << "expected SLU-STATE-001";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-STATE-001");
    EXPECT_NE(diagnostic.message.find("999"), std::string::npos) << diagnostic.message;
  }
}

TEST_F(PostgresStateStoreTest, AnUnreachableServerIsState001NamingTheUrlWithoutThePassword) {
  const std::string url =
      "postgresql://" + server_.user + ":" + server_.password + "@127.0.0.1:1/" + database_ + "?connect_timeout=2";
  try {
    PostgresStateStore::Open(url);
    FAIL() << "expected SLU-STATE-001";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-STATE-001");
    EXPECT_EQ(diagnostic.location.file.find(server_.password), std::string::npos);
    EXPECT_EQ(diagnostic.message.find(server_.password), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.location.file.find("127.0.0.1:1"), std::string::npos) << diagnostic.location.file;
    EXPECT_FALSE(diagnostic.hint.empty());
  }
}

TEST_F(PostgresStateStoreTest, AWrongPasswordIsState001WithoutThePassword) {
  const std::string url = testing::PostgresTestUrl(
      testing::PostgresTestServer{server_.host, server_.port, server_.user, "not-the-password", server_.dir},
      database_);
  try {
    PostgresStateStore::Open(url);
    FAIL() << "expected SLU-STATE-001";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-STATE-001");
    EXPECT_EQ(std::string(error.what()).find("not-the-password"), std::string::npos) << error.what();
  }
}

TEST_F(PostgresStateStoreTest, AReadOnALostConnectionReconnectsAndAWriteReportsState003) {
  auto store = PostgresStateStore::Open(url_);
  store->CreateRun(NewRun("r1", getpid(), ProcessStartTime(getpid())));
  TerminateSessions("sluice state");
  EXPECT_TRUE(store->GetRun("r1")) << "a read is retried once on a new connection";

  TerminateSessions("sluice state");
  EXPECT_EQ(StateErrorCode([&] { store->MarkStarted("r1", "2026-03-01T10:00:01.000Z"); }), "SLU-STATE-003");
  // The next call works on a new connection.
  store->MarkStarted("r1", "2026-03-01T10:00:02.000Z");
  EXPECT_EQ(store->GetRun("r1")->status, RunStatus::kStarted);
}

TEST_F(PostgresStateStoreTest, AFailingStatementIsState003NamingTheDatabaseAndTheServersMessage) {
  auto store = PostgresStateStore::Open(url_);
  Admin()->Exec("DROP TABLE events");
  try {
    store->Append("r1", "2026-03-01T10:00:00.000Z", StepStartedEvent{"a.x"});
    FAIL() << "expected SLU-STATE-003";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-STATE-003");
    EXPECT_NE(diagnostic.message.find("events"), std::string::npos) << diagnostic.message;
    EXPECT_NE(diagnostic.location.file.find(database_), std::string::npos);
    EXPECT_EQ(diagnostic.location.file.find(server_.password), std::string::npos);
  }
}

TEST_F(PostgresStateStoreTest, UnreadableStoredRowsAreState006) {
  auto store = PostgresStateStore::Open(url_);
  store->CreateRun(NewRun("r1", getpid(), ProcessStartTime(getpid())));
  Admin()->Exec("UPDATE runs SET status = 'PAUSED'");
  EXPECT_EQ(StateErrorCode([&] { store->GetRun("r1"); }), "SLU-STATE-006");
  Admin()->Exec("INSERT INTO events (run_id, at, kind, payload) VALUES ('r2', 'x', 'teleported', '{}')");
  EXPECT_EQ(StateErrorCode([&] { store->EventsForRun("r2"); }), "SLU-STATE-006");
}

TEST_F(PostgresStateStoreTest, OpeningMarksDeadRunsOfThisHostOnlyAndLeavesLiveOnesAlone) {
  auto store = PostgresStateStore::Open(url_);
  store->CreateRun(NewRun("live", getpid(), ProcessStartTime(getpid())));
  store->CreateRun(NewRun("dead", 999999999, 1));
  store->CreateRun(NewRun("elsewhere", 999999999, 1));
  store->MarkStarted("dead", "2026-03-01T10:00:01.000Z");
  store->MarkStarted("elsewhere", "2026-03-01T10:00:01.000Z");
  // Another machine's process: its pid means nothing here.
  Admin()->Exec("UPDATE runs SET host = 'another-machine' WHERE run_id = 'elsewhere'");
  // A registered worker's run: the daemon recovers it (fails or retries it), opening leaves it alone.
  RunRecord queued = NewRun("worker-run", 0, 0);
  queued.job = "load";
  store->CreateRun(queued);
  WorkerRecord worker{"here:999999998:1",        HostName(), 999999998, 1, "2026-03-01T10:00:00.000Z",
                      "2026-03-01T10:00:00.000Z"};
  store->RegisterWorker(worker);
  ASSERT_EQ(store->ClaimQueuedRun(worker, 1, {}, "2026-03-01T10:00:01.000Z")->run_id, "worker-run");
  store.reset();

  store = PostgresStateStore::Open(url_, FixedClock(*ParseUtc("2026-03-02T00:00:00.000Z")));
  EXPECT_EQ(store->GetRun("live")->status, RunStatus::kQueued);
  RunRecord dead = *store->GetRun("dead");
  EXPECT_EQ(dead.status, RunStatus::kFailure);
  EXPECT_EQ(dead.error, "process died");
  EXPECT_EQ(dead.finished_at, "2026-03-02T00:00:00.000Z");
  EXPECT_EQ(store->GetRun("elsewhere")->status, RunStatus::kStarted);
  EXPECT_EQ(store->GetRun("worker-run")->status, RunStatus::kStarted);
}

// ---- the daemon lease ----

const int64_t kMe = getpid();

TEST_F(PostgresStateStoreTest, OneOfTwoStoresHoldsTheLeaseAndTheRowSaysWho) {
  auto first = PostgresStateStore::Open(url_);
  auto second = PostgresStateStore::Open(url_);
  const int64_t start = ProcessStartTime(kMe);
  EXPECT_TRUE(first->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:00.000Z", "2026-03-01T09:59:00.000Z").acquired);
  DaemonLease other = second->AcquireDaemonLease(getppid(), ProcessStartTime(getppid()), "2026-03-01T10:00:01.000Z",
                                                 "2026-03-01T09:59:01.000Z");
  EXPECT_FALSE(other.acquired);
  EXPECT_EQ(other.holder_pid, kMe);
  EXPECT_EQ(other.heartbeat_at, "2026-03-01T10:00:00.000Z");
  pg::Result held = Admin()->Exec(
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
      "database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND "  // tests run side by side
      "((classid::bigint << 32) | objid::bigint) = $1",
      {std::to_string(kDaemonLeaseLockKey)});
  EXPECT_EQ(held.Scalar(), "1");
  // The holder releases it: the other store takes it.
  first->ReleaseDaemonLease(kMe, start);
  EXPECT_TRUE(second
                  ->AcquireDaemonLease(getppid(), ProcessStartTime(getppid()), "2026-03-01T10:00:02.000Z",
                                       "2026-03-01T09:59:02.000Z")
                  .acquired);
  EXPECT_FALSE(first->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:03.000Z", "2026-03-01T09:59:03.000Z").acquired);
}

TEST_F(PostgresStateStoreTest, TheLeaseIsTakenOverWhenTheHoldersSessionEnds) {
  auto first = PostgresStateStore::Open(url_);
  auto second = PostgresStateStore::Open(url_);
  const int64_t start = ProcessStartTime(kMe);
  ASSERT_TRUE(first->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:00.000Z", "2026-03-01T09:59:00.000Z").acquired);
  // The holder's heartbeat is fresh; only its session ends (its machine was lost).
  TerminateSessions("sluice daemon lease");
  DaemonLease taken = second->AcquireDaemonLease(getppid(), ProcessStartTime(getppid()), "2026-03-01T10:00:01.000Z",
                                                 "2026-03-01T09:59:01.000Z");
  EXPECT_TRUE(taken.acquired);
  // The old holder learns it lost the lease at its next heartbeat.
  EXPECT_FALSE(first->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:02.000Z", "2026-03-01T09:59:02.000Z").acquired);
}

TEST_F(PostgresStateStoreTest, TheLeaseOfAProcessKilledWithSigkillIsTakenOverAtOnce) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    try {
      auto store = PostgresStateStore::Open(url_);
      // A heartbeat far in the future: only the end of the session can hand the lease over.
      DaemonLease lease = store->AcquireDaemonLease(getpid(), ProcessStartTime(getpid()), "2099-01-01T00:00:00.000Z",
                                                    "2098-01-01T00:00:00.000Z");
      char byte = lease.acquired ? 'y' : 'n';
      if (write(ready[1], &byte, 1) != 1) _exit(2);
      pause();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "child: %s\n", error.what());
    }
    _exit(1);
  }
  close(ready[1]);
  // Whatever fails below, the child does not outlive the test.
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() {
      if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } guard{child};
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y') << "the child could not take the lease";

  auto store = PostgresStateStore::Open(url_);
  const int64_t start = ProcessStartTime(kMe);
  DaemonLease denied = store->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:00.000Z", "2026-03-01T09:59:00.000Z");
  EXPECT_FALSE(denied.acquired);
  EXPECT_EQ(denied.holder_pid, child);

  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  // The server notices the closed socket at once; allow it a moment to end the session.
  bool acquired = false;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!acquired && std::chrono::steady_clock::now() < deadline) {
    acquired = store->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:01.000Z", "2026-03-01T09:59:01.000Z").acquired;
    if (!acquired) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(acquired);
}

TEST_F(PostgresStateStoreTest, AHungHolderWithAStaleHeartbeatLosesTheLease) {
  auto hung = PostgresStateStore::Open(url_);
  auto taker = PostgresStateStore::Open(url_);
  const int64_t start = ProcessStartTime(kMe);
  ASSERT_TRUE(hung->AcquireDaemonLease(kMe, start, "2026-03-01T10:00:00.000Z", "2026-03-01T09:59:00.000Z").acquired);
  EXPECT_FALSE(taker
                   ->AcquireDaemonLease(getppid(), ProcessStartTime(getppid()), "2026-03-01T10:00:30.000Z",
                                        "2026-03-01T09:59:30.000Z")
                   .acquired);
  DaemonLease taken = taker->AcquireDaemonLease(getppid(), ProcessStartTime(getppid()), "2026-03-01T10:05:00.000Z",
                                                "2026-03-01T10:04:00.000Z");
  EXPECT_TRUE(taken.acquired);
  EXPECT_FALSE(hung->AcquireDaemonLease(kMe, start, "2026-03-01T10:05:01.000Z", "2026-03-01T10:04:01.000Z").acquired);
}

// ---- the run queue ----

// A QUEUED job run nobody owns, tagged for the tag-limit tests.
RunRecord QueuedJobRun(int index, const std::map<std::string, std::string>& tags = {}) {
  char created[40];
  std::snprintf(created, sizeof created, "2026-03-01T10:%02d:%02d.%03dZ", index / 3600 % 60, index / 60 % 60,
                index % 60);
  RunRecord run;
  run.run_id = "run" + std::to_string(1000 + index);
  run.selection = "load";
  run.created_at = created;
  run.job = "load";
  run.tags = tags;
  return run;
}

// A worker on another machine: its liveness can only be its heartbeat and its session.
WorkerRecord WorkerElsewhere(const std::string& name, int64_t pid) {
  return WorkerRecord{"elsewhere-" + name + ":" + std::to_string(pid) + ":1",
                      "elsewhere-" + name,
                      pid,
                      1,
                      "2026-03-01T10:00:00.000Z",
                      "2026-03-01T10:00:00.000Z"};
}

TEST_F(PostgresStateStoreTest, WorkerProcessesClaimEachOf200RunsExactlyOnce) {
  constexpr int kRuns = 200;
  constexpr int kProcesses = 4;
  {
    auto store = PostgresStateStore::Open(url_);
    for (int i = 0; i < kRuns; ++i) store->CreateRun(QueuedJobRun(i));
  }
  ScratchDirectory scratch;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int status = 0;
      try {
        auto store = PostgresStateStore::Open(url_);
        WorkerRecord worker = ThisProcessAsWorker("2026-03-01T11:00:00.000Z");
        store->RegisterWorker(worker);
        std::ofstream claimed(scratch.path() / ("claims" + std::to_string(p)));
        while (std::optional<RunRecord> run = store->ClaimQueuedRun(worker, 1, {}, "2026-03-01T11:00:01.000Z")) {
          // FinishRun refuses a run that is not QUEUED or STARTED: a run claimed twice would fail here.
          store->FinishRun(run->run_id, RunStatus::kSuccess, "2026-03-01T11:00:02.000Z", "");
          claimed << run->run_id << "\n";
        }
        store->UnregisterWorker(worker.worker_id);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "worker %d: %s\n", p, error.what());
        status = 1;
      }
      _exit(status);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::map<std::string, int> claims;
  int processes_that_claimed = 0;
  for (int p = 0; p < kProcesses; ++p) {
    std::ifstream file(scratch.path() / ("claims" + std::to_string(p)));
    int mine = 0;
    for (std::string id; std::getline(file, id);) ++claims[id], ++mine;
    processes_that_claimed += mine > 0 ? 1 : 0;
  }
  EXPECT_EQ(claims.size(), static_cast<size_t>(kRuns));
  for (const auto& [run_id, count] : claims) EXPECT_EQ(count, 1) << run_id;
  EXPECT_GT(processes_that_claimed, 1) << "the claims were not spread over the workers";
  EXPECT_EQ(Admin()->Exec("SELECT count(*) FROM runs WHERE status = 'SUCCESS'").Scalar(), std::to_string(kRuns));
}

TEST_F(PostgresStateStoreTest, TagLimitsHoldAcrossConcurrentClaimersOnTheirOwnConnections) {
  constexpr int kRuns = 60;
  constexpr int kLimit = 2;
  {
    auto store = PostgresStateStore::Open(url_);
    for (int i = 0; i < kRuns; ++i) store->CreateRun(QueuedJobRun(i, {{"sluice/job", "kpi"}}));
  }
  const std::vector<TagLimit> limits{{"sluice/job", std::string("kpi"), kLimit}};
  std::atomic<int> claimed{0};
  std::atomic<int> most_started{0};
  std::vector<std::thread> claimers;
  for (int w = 0; w < 6; ++w) {
    claimers.emplace_back([&, w] {
      auto store = PostgresStateStore::Open(url_);
      auto observer = Admin();
      WorkerRecord worker = WorkerElsewhere(std::to_string(w), 100 + w);
      store->RegisterWorker(worker);
      while (claimed.load() < kRuns) {
        std::optional<RunRecord> run = store->ClaimQueuedRun(worker, 4, limits, "2026-03-01T11:00:00.000Z");
        if (!run) {
          std::this_thread::sleep_for(1ms);
          continue;
        }
        ++claimed;
        const int started = std::stoi(*observer->Exec("SELECT count(*) FROM runs WHERE status = 'STARTED'").Scalar());
        for (int seen = most_started.load(); started > seen && !most_started.compare_exchange_weak(seen, started);) {
        }
        std::this_thread::sleep_for(2ms);
        store->FinishRun(run->run_id, RunStatus::kSuccess, "2026-03-01T11:00:01.000Z", "");
      }
    });
  }
  for (std::thread& claimer : claimers) claimer.join();
  EXPECT_EQ(claimed.load(), kRuns);
  EXPECT_LE(most_started.load(), kLimit);
  EXPECT_EQ(most_started.load(), kLimit) << "the limit was never reached: the claims did not overlap";
}

TEST_F(PostgresStateStoreTest, AClaimLooksPastMoreBlockedRunsThanOnePageToOneTheLimitsAllow) {
  auto store = PostgresStateStore::Open(url_);
  constexpr int kBlocked = 250;  // more than one page of candidates
  for (int i = 0; i < kBlocked; ++i) store->CreateRun(QueuedJobRun(i, {{"sluice/job", "kpi"}}));
  store->CreateRun(QueuedJobRun(kBlocked, {{"sluice/job", "load"}}));
  const std::vector<TagLimit> limits{{"sluice/job", std::string("kpi"), 1}};
  WorkerRecord worker = WorkerElsewhere("a", 7);
  store->RegisterWorker(worker);
  EXPECT_EQ(store->ClaimQueuedRun(worker, 10, limits, "2026-03-01T11:00:00.000Z")->run_id, "run1000");
  EXPECT_EQ(store->ClaimQueuedRun(worker, 10, limits, "2026-03-01T11:00:01.000Z")->run_id,
            "run" + std::to_string(1000 + kBlocked));
  EXPECT_FALSE(store->ClaimQueuedRun(worker, 10, limits, "2026-03-01T11:00:02.000Z"));
}

TEST_F(PostgresStateStoreTest, AWorkerWhoseSessionWasTerminatedIsReapedWithItsRun) {
  auto worker_store = PostgresStateStore::Open(url_);
  auto daemon = PostgresStateStore::Open(url_);
  worker_store->CreateRun(QueuedJobRun(1));
  worker_store->CreateRun(QueuedJobRun(2));
  WorkerRecord lost = WorkerElsewhere("lost", 41);
  WorkerRecord healthy = WorkerElsewhere("healthy", 42);
  worker_store->RegisterWorker(lost);
  daemon->RegisterWorker(healthy);
  ASSERT_EQ(worker_store->ClaimQueuedRun(lost, 1, {}, "2026-03-01T10:01:00.000Z")->run_id, "run1001");
  ASSERT_EQ(daemon->ClaimQueuedRun(healthy, 1, {}, "2026-03-01T10:01:00.000Z")->run_id, "run1002");
  // Heartbeats are recent; only the session of the first worker ends, as when its machine drops off the network.
  EXPECT_TRUE(daemon->ReapDeadWorkers("2026-03-01T09:00:00.000Z").empty());
  Admin()->Exec("SELECT pg_terminate_backend($1, 5000)", {std::to_string(worker_store->BackendPid())});
  std::vector<RunRecord> orphaned = daemon->ReapDeadWorkers("2026-03-01T09:00:00.000Z");
  ASSERT_EQ(orphaned.size(), 1u);
  EXPECT_EQ(orphaned[0].run_id, "run1001");
  EXPECT_EQ(orphaned[0].host, "elsewhere-lost");
  EXPECT_EQ(daemon->ListWorkers(), (std::vector<WorkerRecord>{healthy}));
  // The lost worker's next write finds its connection gone (SLU-STATE-003); reconnected, it learns it was reaped.
  EXPECT_EQ(StateErrorCode([&] { worker_store->HeartbeatWorker(lost.worker_id, "2026-03-01T10:02:00.000Z"); }),
            "SLU-STATE-003");
  EXPECT_EQ(StateErrorCode([&] { worker_store->HeartbeatWorker(lost.worker_id, "2026-03-01T10:02:01.000Z"); }),
            "SLU-STATE-010");
}

TEST_F(PostgresStateStoreTest, AWorkerProcessKilledWithSigkillMidRunIsReapedAndNothingElseIsAffected) {
  {
    auto store = PostgresStateStore::Open(url_);
    for (int i = 1; i <= 3; ++i) store->CreateRun(QueuedJobRun(i));
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    try {
      auto store = PostgresStateStore::Open(url_);
      // Registered as if on another machine, so only its session can tell that it died.
      WorkerRecord worker = WorkerElsewhere("doomed", getpid());
      store->RegisterWorker(worker);
      std::optional<RunRecord> run = store->ClaimQueuedRun(worker, 1, {}, "2026-03-01T10:01:00.000Z");
      char byte = run ? 'y' : 'n';
      if (write(ready[1], &byte, 1) != 1) _exit(2);
      pause();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "child: %s\n", error.what());
    }
    _exit(1);
  }
  close(ready[1]);
  struct KillOnExit {
    pid_t pid;
    ~KillOnExit() {
      if (kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
    }
  } guard{child};
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ASSERT_EQ(byte, 'y');

  auto daemon = PostgresStateStore::Open(url_);
  WorkerRecord survivor = WorkerElsewhere("survivor", 43);
  daemon->RegisterWorker(survivor);
  ASSERT_EQ(daemon->ClaimQueuedRun(survivor, 1, {}, "2026-03-01T10:01:01.000Z")->run_id, "run1002");
  EXPECT_TRUE(daemon->ReapDeadWorkers("2026-03-01T09:00:00.000Z").empty());

  ASSERT_EQ(kill(child, SIGKILL), 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::vector<RunRecord> orphaned;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (orphaned.empty() && std::chrono::steady_clock::now() < deadline) {
    orphaned = daemon->ReapDeadWorkers("2026-03-01T09:00:00.000Z");
    if (orphaned.empty()) std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(orphaned.size(), 1u);
  EXPECT_EQ(orphaned[0].run_id, "run1001");
  EXPECT_EQ(orphaned[0].status, RunStatus::kStarted);
  EXPECT_EQ(daemon->GetRun("run1002")->status, RunStatus::kStarted);
  EXPECT_EQ(daemon->GetRun("run1003")->status, RunStatus::kQueued);
  EXPECT_EQ(daemon->ListWorkers(), (std::vector<WorkerRecord>{survivor}));
}

}  // namespace
}  // namespace sluice
