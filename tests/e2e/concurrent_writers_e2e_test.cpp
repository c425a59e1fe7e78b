// Two `sluice run` processes writing one relation at once, on the server engines (fixture project
// tests/projects/concurrent_writers, filled in for each engine): a day written by both holds its rows once, both runs succeed, and the
// ledger records both writes. PostgreSQL serializes the writers of a relation inside their transactions; ClickHouse
// swaps each day in from the run's own staging table, so the last writer wins.
//
// The race is deterministic: the first run pauses inside its first write (SLUICE_TEST_PAUSE_AT
// after_write_before_commit: its statements sent, before COMMIT or the swap), the second starts then, and the first
// goes on once the second has finished or waits on a lock (a lock the first holds: it cannot finish first).
//
// BigQuery cannot be reached: against the local double (which runs no SQL) the test checks at the request level that
// each run's write of a window is one job whose one MERGE deletes and inserts the window, and that a job BigQuery
// aborts for a concurrent update runs again whole. docs/bigquery.md explains why that cannot double rows on the
// service, and what is not tested.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "e2e/sluice_process.hpp"
#include "support/bigquery_double.hpp"
#include "support/clickhouse_test_server.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

// The fixture for one engine: `values` (placeholder → text) filled in, and the seeds written.
void WriteFixture(const ScratchProject& project, const std::map<std::string, std::string>& values) {
  for (const char* file :
       {"streambuild_project.toml", "pipelines/daily/slow_daily.sql", "pipelines/daily/daily_summary.sql"}) {
    std::string text = project.Read(file);
    for (const auto& [placeholder, value] : values) {
      for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size())) {
        text.replace(at, placeholder.size(), value);
      }
    }
    project.Write(file, text);
  }
  std::string numbers = "n\n";
  for (int n = 0; n < 1000; ++n) numbers += std::to_string(n) + "\n";
  project.Write("seeds/numbers.csv", numbers);
  std::string days = "day\n";
  for (int day = 1; day <= 30; ++day) days += "2026-11-" + std::string(day < 10 ? "0" : "") + std::to_string(day) + "\n";
  project.Write("seeds/days.csv", days);
}

// A server engine the test drives: how its project is written, its SQL and its way of showing a writer that waits.
class Engine {
 public:
  virtual ~Engine() = default;
  // The fixture's placeholders, filled in for the engine (WriteFixture).
  virtual std::map<std::string, std::string> Placeholders() const = 0;
  // The model's relation, qualified for the engine's SQL.
  virtual std::string Table(const std::string& model) const = 0;
  // The count of the warehouse ledger's rows for the model's relation.
  virtual std::string LedgerRows(const std::string& model) = 0;
  // Whether a connection of the project's warehouse waits on a lock.
  virtual bool AWriterWaits() = 0;

  // The first value of the first row, as text.
  std::string Scalar(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "<no rows>" : rows.rows[0][0].value_or("NULL");
  }

 protected:
  std::unique_ptr<Warehouse> warehouse_;
};

class PostgresEngine final : public Engine {
 public:
  PostgresEngine() : server_(RequirePostgresTestServer()), database_(CreatePostgresTestDatabase(server_, "conc")) {
    warehouse_ = OpenWarehouse(PostgresTestConfig(server_, database_));
  }
  std::map<std::string, std::string> Placeholders() const override {
    return {{"@ADAPTER@", "postgres"},
            {"@DATABASE@", "conc"},
            {"@CONNECTION@", PostgresTestConnectionToml(server_, database_)},
            {"@BIGINT@", "BIGINT"},
            {"@DATE@", "DATE"}};
  }
  std::string Table(const std::string& model) const override { return "conc." + model; }
  std::string LedgerRows(const std::string& model) override {
    return Scalar("SELECT count(*) FROM _sluice.ledger WHERE relation_schema = 'conc' AND relation_name = '" + model +
                  "'");
  }
  bool AWriterWaits() override {
    return Scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = "
                  "'Lock' AND pid <> pg_backend_pid()") != "0";
  }

 private:
  PostgresTestServer server_;
  std::string database_;
};

class ClickHouseEngine final : public Engine {
 public:
  ClickHouseEngine() : server_(RequireClickHouseTestServer()), database_(UniqueClickHouseDatabase("conc")) {
    warehouse_ = OpenWarehouse(ClickHouseTestConfig(server_, "default"));
  }
  ~ClickHouseEngine() override { warehouse_->Execute("DROP DATABASE IF EXISTS " + database_); }
  std::map<std::string, std::string> Placeholders() const override {
    return {{"@ADAPTER@", "clickhouse"},
            {"@DATABASE@", database_},
            {"@CONNECTION@", "host = \"" + server_.host + "\"\nport = " + std::to_string(server_.port) +
                                 "\nusername = \"" + server_.username + "\"\npassword = \"" + server_.password +
                                 "\"\n"},
            {"@BIGINT@", "Int64"},
            {"@DATE@", "Date"}};
  }
  std::string Table(const std::string& model) const override { return database_ + "." + model; }
  // `_sluice.ledger` is the server's, shared by every test: only this test's database counts.
  std::string LedgerRows(const std::string& model) override {
    return Scalar("SELECT count() FROM _sluice.ledger WHERE relation_schema = '" + database_ +
                  "' AND relation_name = '" + model + "'");
  }
  // ClickHouse has no locks: a second writer never waits, it finishes.
  bool AWriterWaits() override { return false; }

 private:
  ClickHouseTestServer server_;
  std::string database_;
};

// A sluice process started in the background; Finished polls it without waiting. Killed if still running when the
// object goes, so a failing test leaves no process behind.
class Background {
 public:
  explicit Background(pid_t pid) : pid_(pid) {}
  ~Background() {
    if (!exit_code_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  bool Finished() {
    if (exit_code_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  int Wait() {
    if (!exit_code_) exit_code_ = WaitFor(pid_);
    return *exit_code_;
  }

 private:
  pid_t pid_;
  std::optional<int> exit_code_;
};

// The parameter names the engine: "postgres" or "clickhouse".
class ConcurrentWriters : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      engine_ = std::make_unique<PostgresEngine>();
    } else {
      engine_ = std::make_unique<ClickHouseEngine>();
    }
    project_ = std::make_unique<ScratchProject>("concurrent_writers");
    WriteFixture(*project_, engine_->Placeholders());
    MustRun({"run", "--select", "numbers", "days"});  // the seeds slow_daily reads
  }

  ProcessResult MustRun(const std::vector<std::string>& args) {
    ProcessResult result = project_->Run(args);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return result;
  }

  // Runs `first` and `second` (sluice arguments) so that they write one relation at once: `first` pauses inside its
  // first write, `second` starts then, and `first` goes on once `second` has finished or waits on a lock. Both exit 0.
  void Race(const std::vector<std::string>& first_args, const std::vector<std::string>& second_args) {
    const std::filesystem::path marker = project_->root() / "paused";
    const std::filesystem::path resume = project_->root() / "resume";
    Background first(project_->Start(first_args,
                                     {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"},
                                      {"SLUICE_TEST_PAUSE_MARKER", marker.string()},
                                      {"SLUICE_TEST_PAUSE_RESUME", resume.string()}},
                                     "first"));
    ASSERT_TRUE(WaitForFile(marker, 120)) << project_->Read("../first.out") << project_->Read("../first.err");
    Background second(project_->Start(second_args, {}, "second"));
    // A hang guard only: the second either finishes or waits on the first's lock long before this.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    bool overlapped = false;
    while (!overlapped && std::chrono::steady_clock::now() < give_up) {
      overlapped = second.Finished() || engine_->AWriterWaits();
      if (!overlapped) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(overlapped) << project_->Read("../second.out") << project_->Read("../second.err");
    std::ofstream(resume) << "go\n";
    EXPECT_EQ(first.Wait(), 0) << project_->Read("../first.out") << project_->Read("../first.err");
    EXPECT_EQ(second.Wait(), 0) << project_->Read("../second.out") << project_->Read("../second.err");
  }

  // "count|min|max" of the model's rows per day.
  std::string RowsPerDay(const std::string& model) {
    const std::string per_day =
        "(SELECT event_date, count(*) AS c FROM " + engine_->Table(model) + " GROUP BY event_date) AS days";
    return engine_->Scalar("SELECT count(*) FROM " + per_day) + "|" +
           engine_->Scalar("SELECT min(c) FROM " + per_day) + "|" + engine_->Scalar("SELECT max(c) FROM " + per_day);
  }

  // Every run in the state store, and that each succeeded.
  void ExpectRunsSucceeded(size_t count) {
    json runs = json::parse(MustRun({"runs", "--json"}).out)["runs"];
    EXPECT_EQ(runs.size(), count) << runs.dump(2);
    for (const json& run : runs) EXPECT_EQ(run["status"], "SUCCESS") << run.dump(2);
  }

  // `sluice status --json`'s entry for the model (its asset key ends with its name, whatever the namespace).
  json StatusOf(const std::string& model) {
    json status = json::parse(MustRun({"status", "--json"}).out);
    for (const json& asset : status["assets"]) {
      if (asset["asset"].get<std::string>().ends_with("." + model)) return asset;
    }
    ADD_FAILURE() << "no asset " << model << " in " << status.dump(2);
    return json();
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ScratchProject> project_;
};

TEST_P(ConcurrentWriters, TwoRunsOfOneDayOfANewTableWriteItOnce) {
  const std::vector<std::string> run = {"run", "--select", "slow_daily", "--partition", "2026-11-05"};
  Race(run, run);
  EXPECT_EQ(engine_->Scalar("SELECT count(*) FROM " + engine_->Table("slow_daily")), "1000");
  EXPECT_EQ(RowsPerDay("slow_daily"), "1|1000|1000");
  EXPECT_EQ(engine_->LedgerRows("slow_daily"), "2");  // two writes, each of the whole day
  ExpectRunsSucceeded(3);  // the seeds', and the two
  json status = StatusOf("slow_daily");
  EXPECT_EQ(status["state"], "materialized") << status.dump(2);
  EXPECT_EQ(status["partitions"]["done"], 1) << status.dump(2);
  EXPECT_EQ(status["last_materialization"]["rows"], 1000) << status.dump(2);
}

TEST_P(ConcurrentWriters, TwoRunsOfANewDayOfAnExistingTableWriteItOnce) {
  MustRun({"run", "--select", "slow_daily", "--partition", "2026-11-04"});
  const std::vector<std::string> run = {"run", "--select", "slow_daily", "--partition", "2026-11-05"};
  Race(run, run);
  EXPECT_EQ(engine_->Scalar("SELECT count(*) FROM " + engine_->Table("slow_daily")), "2000");
  EXPECT_EQ(RowsPerDay("slow_daily"), "2|1000|1000");
  EXPECT_EQ(engine_->LedgerRows("slow_daily"), "3");
  ExpectRunsSucceeded(4);
  EXPECT_EQ(StatusOf("slow_daily")["partitions"]["done"], 2);
}

// The day already holds its rows: each writer deletes them and inserts its own.
TEST_P(ConcurrentWriters, TwoRunsRewritingADayWriteItOnce) {
  MustRun({"run", "--select", "slow_daily", "--partition", "2026-11-04"});
  MustRun({"run", "--select", "slow_daily", "--partition", "2026-11-05"});
  const std::vector<std::string> run = {"run", "--select", "slow_daily", "--partition", "2026-11-05"};
  Race(run, run);
  EXPECT_EQ(engine_->Scalar("SELECT count(*) FROM " + engine_->Table("slow_daily")), "2000");
  EXPECT_EQ(RowsPerDay("slow_daily"), "2|1000|1000");
  EXPECT_EQ(engine_->LedgerRows("slow_daily"), "4");
  ExpectRunsSucceeded(5);
  json status = StatusOf("slow_daily");
  EXPECT_EQ(status["partitions"]["done"], 2) << status.dump(2);
  EXPECT_EQ(status["last_materialization"]["rows"], 1000) << status.dump(2);
}

TEST_P(ConcurrentWriters, OverlappingBackfillsWriteEachDayAndItsDownstreamOnce) {
  Race({"run", "--select", "slow_daily+", "--from", "2026-11-01", "--to", "2026-11-06"},
       {"run", "--select", "slow_daily+", "--from", "2026-11-04", "--to", "2026-11-09"});
  EXPECT_EQ(engine_->Scalar("SELECT count(*) FROM " + engine_->Table("slow_daily")), "9000");
  EXPECT_EQ(RowsPerDay("slow_daily"), "9|1000|1000");
  // The downstream model counts its upstream's rows per day: 1,000 on each of the nine days, none doubled.
  const std::string summary = engine_->Table("daily_summary");
  EXPECT_EQ(engine_->Scalar("SELECT count(*) FROM " + summary), "9");
  EXPECT_EQ(engine_->Scalar("SELECT min(row_count) FROM " + summary), "1000");
  EXPECT_EQ(engine_->Scalar("SELECT max(row_count) FROM " + summary), "1000");
  EXPECT_EQ(engine_->LedgerRows("slow_daily"), "2");  // one write per backfill (one chunk each)
  EXPECT_EQ(engine_->LedgerRows("daily_summary"), "2");
  ExpectRunsSucceeded(3);
  EXPECT_EQ(StatusOf("slow_daily")["partitions"]["done"], 9);
  EXPECT_EQ(StatusOf("daily_summary")["partitions"]["done"], 9);
}

INSTANTIATE_TEST_SUITE_P(Engines, ConcurrentWriters, ::testing::Values("postgres", "clickhouse"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// BigQuery, at the request level: the double answers every job (and aborts one MERGE for a concurrent update, as
// BigQuery does when two mutating statements of one table's partitions overlap).
TEST(ConcurrentWritersOnBigQuery, EachRunWritesTheWindowWithOneMergeAndAnAbortedOneRunsAgainWhole) {
  using test::BigQueryDouble;
  using test::ErrorBody;
  using test::JobBody;
  using test::RecordedRequest;
  using test::ResultsBody;
  BigQueryDouble bq;
  ScratchProject project("concurrent_writers");
  WriteFixture(project, {{"@ADAPTER@", "bigquery"},
                         {"@DATABASE@", "conc"},
                         {"@CONNECTION@", test::DoubleConnectionToml(bq)},
                         {"@BIGINT@", "INT64"},
                         {"@DATE@", "DATE"}});
  project.Write("adc.json", test::kAuthorizedUserCredentials);
  const json fields = json::array({{{"name", "event_date"}, {"type", "DATE"}}, {{"name", "n"}, {"type", "INTEGER"}}});
  const std::string dry_run = json{{"jobReference", {{"jobId", "dry"}}},
                                   {"status", {{"state", "DONE"}}},
                                   {"statistics", {{"query", {{"schema", {{"fields", fields}}}}}}}}
                                  .dump();
  bq.Respond("POST", "/token", 200, R"({"access_token": "tok", "expires_in": 3600})", -1);
  bq.Respond("GET", "/tables/", 404, ErrorBody(404, "notFound", "Not found: Table"), -1);
  bq.Respond("GET", "/datasets/", 200, R"({"location": "EU"})", -1);
  bq.RespondTo("POST", "/jobs", "\"dryRun\":true", 200, dry_run, -1);
  // The first MERGE sent (the first run's, before it pauses) is aborted as BigQuery aborts the later of two
  // overlapping mutations of one table.
  bq.RespondTo("POST", "/jobs", "MERGE `proj.conc.slow_daily`", 200,
               JobBody("x", "invalidQuery",
                       "Could not serialize access to table proj:conc.slow_daily due to concurrent update"),
               1);
  bq.Respond("POST", "/jobs", 200, JobBody("x"), -1);
  bq.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"in_window", "selected"}, {{"1000", "1000"}}), -1);
  bq.Respond("POST", "/queries", 200, ResultsBody("q", true), -1);

  // The first run pauses after its MERGE, before its ledger row; the second writes the same day meanwhile.
  // The double holds no tables, so the seeds slow_daily reads are never found: the runs do not check for them.
  const std::vector<std::string> run = {"run",    "--select", "slow_daily", "--partition", "2026-11-05",
                                        "--json", "--allow-missing-upstream"};
  const std::filesystem::path marker = project.root() / "paused";
  const std::filesystem::path resume = project.root() / "resume";
  Background first(project.Start(run,
                                 {{"SLUICE_TEST_PAUSE_AT", "after_swap_before_ledger"},
                                  {"SLUICE_TEST_PAUSE_MARKER", marker.string()},
                                  {"SLUICE_TEST_PAUSE_RESUME", resume.string()}},
                                 "first"));
  ASSERT_TRUE(WaitForFile(marker, 120)) << project.Read("../first.out") << project.Read("../first.err");
  ProcessResult second = project.Run(run);
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  std::ofstream(resume) << "go\n";
  ASSERT_EQ(first.Wait(), 0) << project.Read("../first.out") << project.Read("../first.err");
  const std::string first_run = json::parse(project.Read("../first.out"))["run_id"];
  const std::string second_run = json::parse(second.out)["run_id"];
  ASSERT_NE(first_run, second_run);

  struct Job {
    std::string id;
    std::string query;
  };
  std::vector<Job> jobs;
  for (const RecordedRequest& insert : bq.Requests("POST", "/jobs")) {
    json body = json::parse(insert.body);
    if (body["configuration"].value("dryRun", false)) continue;
    jobs.push_back({body["jobReference"]["jobId"], body["configuration"]["query"]["query"]});
  }
  auto occurrences = [](const std::string& text, const std::string& part) {
    size_t count = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
    return count;
  };
  for (const std::string& run_id : {first_run, second_run}) {
    SCOPED_TRACE(run_id);
    std::vector<Job> writes;  // the jobs of this run that name the table
    size_t ledger_rows = 0;
    for (const Job& job : jobs) {
      if (job.id.find(run_id) == std::string::npos) continue;
      if (job.query.find("`proj.conc.slow_daily`") != std::string::npos) writes.push_back(job);
      ledger_rows += job.query.rfind("INSERT INTO `proj._sluice.ledger`", 0) == 0 ? 1 : 0;
      // Rows are never deleted or inserted by a statement of their own.
      EXPECT_EQ(job.query.find("DELETE FROM"), std::string::npos) << job.query;
      EXPECT_EQ(job.query.find("INSERT INTO `proj.conc."), std::string::npos) << job.query;
    }
    EXPECT_EQ(ledger_rows, 1u);
    // The table is created empty (if it does not exist yet), then the window changes in one job's one MERGE: its
    // old rows deleted and the new ones inserted by one atomic statement.
    ASSERT_GE(writes.size(), 2u);
    EXPECT_EQ(writes[0].query.rfind("CREATE TABLE IF NOT EXISTS `proj.conc.slow_daily`", 0), 0u) << writes[0].query;
    EXPECT_NE(writes[0].query.find("WHERE FALSE"), std::string::npos) << writes[0].query;
    const Job& merge = writes[1];
    EXPECT_EQ(occurrences(merge.query, "MERGE `proj.conc.slow_daily`"), 1u) << merge.query;
    EXPECT_EQ(occurrences(merge.query, "`proj.conc.slow_daily`"), 1u) << merge.query;
    EXPECT_NE(merge.query.find("WHEN NOT MATCHED BY SOURCE AND target.`event_date` >= DATE '2026-11-05' AND "
                               "target.`event_date` < DATE '2026-11-06' THEN DELETE"),
              std::string::npos)
        << merge.query;
    if (run_id == first_run) {
      // Aborted by the concurrent update: the whole script runs again under a new job id, the SELECT included, so
      // it deletes what the other writer committed meanwhile.
      ASSERT_EQ(writes.size(), 3u);
      EXPECT_EQ(writes[2].id, merge.id + "_r2");
      EXPECT_EQ(writes[2].query, merge.query);
    } else {
      EXPECT_EQ(writes.size(), 2u);
    }
  }
}

}  // namespace
}  // namespace sluice::testing
