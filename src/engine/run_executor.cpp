#include "engine/run_executor.hpp"

#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "core/file_system.hpp"
#include "core/sha256.hpp"
#include "engine/asset_status.hpp"
#include "engine/code_asset_sql.hpp"
#include "engine/run_sql.hpp"
#include "engine/seed_hash.hpp"
#include "state/state_store.hpp"

namespace sluice {

std::string StepStatusName(StepStatus status) {
  switch (status) {
    case StepStatus::kSuccess: return "OK";
    case StepStatus::kUnchanged: return "UNCHANGED";
    case StepStatus::kFailed: return "FAILED";
    case StepStatus::kSkipped: return "SKIPPED";
    case StepStatus::kCanceled: return "CANCELED";
  }
  return "?";
}

namespace {

std::vector<std::string> PartitionKeys(const std::optional<DateWindow>& window) {
  if (!window) return {""};
  return window->DayKeys();
}

// A write's error with no place in the SQL, pointed at the model's file.
Error AtModelFile(const Asset& asset, const Error& error) {
  std::vector<Diagnostic> diagnostics = error.diagnostics();
  for (Diagnostic& diagnostic : diagnostics) {
    if (!diagnostic.location.known()) diagnostic.location = SourceLocation{asset.defined_at.file, 0, 0};
  }
  return Error(std::move(diagnostics));
}

// A seed load's error with no place in the file, pointed at the seed's declaration (its entry in sources/*.yml).
Error AtDeclaration(const Asset& asset, const Error& error) {
  std::vector<Diagnostic> diagnostics = error.diagnostics();
  for (Diagnostic& diagnostic : diagnostics) {
    if (!diagnostic.location.known()) diagnostic.location = asset.defined_at;
  }
  return Error(std::move(diagnostics));
}

}  // namespace

void QueueRun(RunStore& runs, const RunPlan& plan, const std::string& run_id, const Clock& clock,
              const std::string& backfill_id) {
  RunRecord record;
  record.run_id = run_id;
  record.backfill_id = backfill_id;
  record.selection = plan.selection_text;
  if (plan.window) {
    record.partition_start = plan.window->start.ToString();
    record.partition_end = plan.window->end.AddDays(-1).ToString();
  }
  record.created_at = FormatUtc(clock.Now());
  record.pid = ::getpid();
  record.pid_start_time = ProcessStartTime(record.pid);
  runs.CreateRun(record);
}

void AbandonRun(RunStore& runs, EventLog& events, const std::string& run_id, const Clock& clock, bool canceled,
                const std::string& message) {
  RunStatus status = canceled ? RunStatus::kCanceled : RunStatus::kFailure;
  events.Append(run_id, FormatUtc(clock.Now()), RunFinishedEvent{RunStatusName(status), message});
  runs.FinishRun(run_id, status, FormatUtc(clock.Now()), message);
}

void RunExecutor::Record(const std::string& run_id, const RunEvent& event) {
  std::lock_guard<std::mutex> lock(record_mutex_);
  events_.Append(run_id, FormatUtc(clock_.Now()), event);
}

void RunExecutor::SaveStatements(const Relation& relation, const std::vector<std::string>& statements) const {
  std::string text = "-- the statements sluice ran for " + relation.ToString() + ", in order\n";
  for (const std::string& statement : statements) text += statement + ";\n\n";
  std::filesystem::path folder = *options_.statements_dir / relation.name_space;
  std::error_code ignored;
  std::filesystem::create_directories(folder, ignored);
  // Written in place, not through a renamed temporary file: it is a record of what ran, read after the run, and a
  // temporary file would double the file operations of every write.
  int fd = ::open((folder / (relation.name + ".sql")).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  WriteAll(fd, text);
  ::close(fd);
}

std::optional<std::string> RunExecutor::MissingUpstream(const StepPlan& step) const {
  for (const AssetKey& key : step.outside_upstreams) {
    const Asset* upstream = definitions_.Find(key);
    if (upstream == nullptr) continue;
    Relation relation = RelationOf(*upstream);
    std::string hint = "; run it first (--select +" + step.key.name() + ") or pass --allow-missing-upstream";
    if (!relations_.count(RelationKey(relation))) {
      return "upstream " + key.ToString() + " was never materialized (the warehouse has no " +
             relation.ToString() + ")" + hint;
    }
    if (upstream->partitions && step.window) {
      std::vector<Date> days;
      for (Date day = step.window->start; day < step.window->end; day = day.AddDays(1)) days.push_back(day);
      std::vector<std::string> covered;  // the keys of those days the ledger's windows own
      if (auto written = written_windows_.find(key.ToString()); written != written_windows_.end()) {
        for (const DateWindow& window : written->second) {
          for (Date day = std::max(window.start, step.window->start); day < std::min(window.end, step.window->end);
               day = day.AddDays(1)) {
            covered.push_back(day.ToString());
          }
        }
      }
      std::string gaps;
      for (const DayRange& gap : MissingRanges(days, covered)) {
        gaps += (gaps.empty() ? "" : ", ") + (gap.first == gap.last ? gap.first.ToString()
                                                                    : gap.first.ToString() + " .. " + gap.last.ToString());
      }
      if (!gaps.empty()) return "upstream " + key.ToString() + " was never materialized for " + gaps + hint;
    }
  }
  return std::nullopt;
}

Error RunExecutor::LocatedInModel(const Asset& asset, const RunSql& sql, const SqlError& error) const {
  const Diagnostic& failed = error.diagnostics().front();
  const std::string& text = ModelFileText(asset);
  const SqlCompute& model = std::get<SqlCompute>(asset.compute);
  SourceLocation at = sql.LocationOf(model, asset.defined_at.file, text, error.offset());
  if (text.empty()) return Error(Diagnostic{failed.code, failed.message, at, failed.hint, {}});
  std::string expanded = text.substr(0, std::min(model.body_offset, text.size())) + model.body;
  return Error(MakeDiagnostic(failed.code, failed.message, at, failed.hint, expanded));
}

void RunExecutor::CheckRunnable(const RunPlan& plan) const {
  for (const StepPlan& step : plan.steps) {
    const Asset& asset = *definitions_.Find(step.key);
    if (!std::holds_alternative<SqlCompute>(asset.compute)) continue;
    const RunSql run_sql = RenderRunSql(definitions_, asset, step.window, warehouse_);
    try {
      warehouse_.CheckRunnable(run_sql.text);
    } catch (const SqlError& error) {
      throw LocatedInModel(asset, run_sql, error);
    }
  }
}

RunExecutor::RunExecutor(const Definitions& definitions, Warehouse& warehouse, RunStore& runs, EventLog& events,
                         MaterializationStore& materializations, const Clock& clock, ExecutorOptions options)
    : definitions_(definitions),
      warehouse_(warehouse),
      runs_(runs),
      events_(events),
      materializations_(materializations),
      clock_(clock),
      options_(std::move(options)) {}

std::string RunExecutor::NewRunId(const Clock& clock) { return sluice::NewRunId(clock); }

WriteResult RunExecutor::WriteSelect(const Asset& asset, const Relation& relation, const StepPlan& step,
                                     const std::string& sql, bool view, LedgerEntry& ledger) {
  ledger.sql_hash = Sha256Hex(sql);
  if (view) return warehouse_.ReplaceView(relation, sql, ledger);
  if (asset.partitions) {
    return warehouse_.ReplaceDateRange(relation, sql, asset.partitions->column, *step.window, ledger,
                                       step.full_refresh ? Warehouse::DateRangeMode::kWholeTable
                                                         : Warehouse::DateRangeMode::kWindow);
  }
  return warehouse_.ReplaceTable(relation, sql, ledger);
}

StepOutcome RunExecutor::ExecuteStep(const StepPlan& step, const std::string& run_id) {
  const Asset& asset = *definitions_.Find(step.key);
  StepOutcome outcome{step.key};
  outcome.window = step.window;
  Relation relation{asset.key.name_space(), asset.relation_name};
  LedgerEntry ledger{asset.key.ToString(), step.window, run_id, 0, "", ""};
  std::unique_lock<std::mutex> write_lock;
  if (options_.write_locks != nullptr) write_lock = options_.write_locks->Lock(RelationKey(RelationOf(asset)));

  WriteResult written;
  bool wrote = std::visit(
      [&](const auto& compute) -> bool {
        using T = std::decay_t<decltype(compute)>;
        if constexpr (std::is_same_v<T, SqlCompute>) {
          const RunSql run_sql = RenderRunSql(definitions_, asset, step.window, warehouse_);
          try {
            written = WriteSelect(asset, relation, step, run_sql.text, compute.kind == ModelKind::kView, ledger);
          } catch (const SqlError& error) {
            throw LocatedInModel(asset, run_sql, error);
          } catch (const Error& error) {
            throw AtModelFile(asset, error);
          }
          outcome.wrote_rows = compute.kind != ModelKind::kView;
          return true;
        } else if constexpr (std::is_same_v<T, SeedCompute>) {
          ledger.sql_hash = SeedHash(options_.project_root, compute);
          auto previous = seed_hashes_.find(ledger.asset);
          if (!step.full_refresh && previous != seed_hashes_.end() && previous->second == ledger.sql_hash &&
              relations_.count(RelationKey(relation))) {
            outcome.status = StepStatus::kUnchanged;
            outcome.note = "seed file unchanged";
            return false;
          }
          SeedFile seed{(std::filesystem::path(options_.project_root) / compute.path).string(), compute.columns,
                        compute.path};
          try {
            written = warehouse_.LoadSeed(relation, seed, ledger);
          } catch (const Error& error) {
            throw AtDeclaration(asset, error);
          }
          return true;
        } else if constexpr (std::is_same_v<T, KafkaSource> || std::is_same_v<T, PostgresSource>) {
          throw Error(Diagnostic{"SLU-RUN-004",
                                 std::string(std::is_same_v<T, KafkaSource> ? "kafka" : "postgres") + " source " +
                                     asset.key.ToString() + " cannot run on the " +
                                     (warehouse_.dialect() == sql::Dialect::kDuckDb ? "duckdb" : "current") +
                                     " warehouse",
                                 asset.defined_at,
                                 "managed Kafka and Postgres sources need adapter = \"clickhouse\" (at the top of "
                                 "streambuild_project.toml); run the other pipelines with --select",
                                 {}});
        } else if constexpr (std::is_same_v<T, CodeCompute>) {
          auto log = [&](const std::string& line) { Record(run_id, StepNoteEvent{asset.key.ToString(), line}); };
          const std::string sql = RenderCodeSql(definitions_, asset, compute, step.window, run_id, warehouse_, log);
          try {
            written = WriteSelect(asset, relation, step, sql, false, ledger);
          } catch (const Error& error) {
            throw AtModelFile(asset, error);
          }
          return true;
        } else {
          static_assert(std::is_same_v<T, ExternalTable>);
          if (!relations_.count(RelationKey(RelationOf(asset)))) {
            throw Error(Diagnostic{"SLU-RUN-003",
                                   "adopted table " + asset.key.name_space() + "." + compute.table_name +
                                       " does not exist",
                                   asset.defined_at, "create the table before running its pipeline", {}});
          }
          outcome.status = StepStatus::kUnchanged;
          outcome.note = "adopted table present";
          return false;
        }
      },
      asset.compute);
  if (!wrote) return outcome;

  outcome.rows_written = written.rows_written;
  outcome.rows_dropped = written.rows_dropped;
  const auto* sql_model = std::get_if<SqlCompute>(&asset.compute);
  MaterializationEvent event{asset.key.ToString(), std::nullopt, std::nullopt, written.rows_written,
                             written.rows_dropped, ledger.sql_hash, sql_model != nullptr && sql_model->kind == ModelKind::kView};
  if (step.window) {
    event.window_start = step.window->start.ToString();
    event.window_end = step.window->end.ToString();
  }
  std::string now = written.written_at.empty() ? FormatUtc(clock_.Now()) : written.written_at;
  Record(run_id, event);
  std::vector<MaterializationRecord> records;
  for (const std::string& key : PartitionKeys(step.window)) {
    records.push_back({asset.key.ToString(), key, run_id, written.rows_written, ledger.sql_hash, now});
  }
  materializations_.RecordMaterializations(records);
  return outcome;
}

struct RunExecutor::Scheduling {
  explicit Scheduling(size_t steps)
      : results(steps), waiting_on(steps), downstream(steps), skipped(steps, false), total(steps) {}

  std::mutex mutex;  // guards everything below
  std::condition_variable changed;
  std::vector<std::optional<StepOutcome>> results;
  std::vector<size_t> waiting_on;
  std::vector<std::vector<size_t>> downstream;
  std::vector<bool> skipped;
  std::vector<size_t> ready;
  size_t finished = 0;
  size_t blocked = 0;  // steps skipped because an upstream outside the run is missing
  const size_t total;
  std::function<void(const StepOutcome&, size_t, size_t)> on_step;

  void Finish(size_t index, StepOutcome result) {
    results[index] = std::move(result);
    ++finished;
    if (on_step) on_step(*results[index], finished, total);
  }
};

RunOutcome RunExecutor::Execute(const RunPlan& plan, const std::string& run_id,
                                const std::function<void(const StepOutcome&, size_t, size_t)>& on_step) {
  if (!runs_.GetRun(run_id)) QueueRun(runs_, plan, run_id, clock_);
  runs_.MarkStarted(run_id, FormatUtc(clock_.Now()));
  RunStartedEvent started{plan.selection_text, {}};
  for (const StepPlan& step : plan.steps) started.assets.push_back(step.key.ToString());
  Record(run_id, started);
  Prepare(plan, run_id);
  Scheduling scheduling(plan.steps.size());
  scheduling.on_step = on_step;
  Schedule(plan, run_id, scheduling);
  return Conclude(plan, run_id, scheduling);
}

void RunExecutor::Prepare(const RunPlan& plan, const std::string& run_id) {
  try {
    CheckRunnable(plan);
    for (const LedgerEntry& entry : warehouse_.ReadLedger()) {
      seed_hashes_[entry.asset] = entry.sql_hash;
      if (entry.window) written_windows_[entry.asset].push_back(*entry.window);
    }
    for (const TableInfo& info : warehouse_.ListRelations()) relations_.insert(RelationKey(info.relation));
    std::set<std::string> namespaces;
    for (const StepPlan& step : plan.steps) namespaces.insert(step.key.name_space());
    for (const std::string& name : namespaces) warehouse_.EnsureSchema(name);
    if (options_.statements_dir) {
      warehouse_.ObserveStatements([this](const Relation& relation, const std::vector<std::string>& statements) {
        SaveStatements(relation, statements);
      });
    }
  } catch (const Error& error) {
    AbandonRun(runs_, events_, run_id, clock_, Canceled(), error.diagnostics().front().message);
    throw;
  }
}

void RunExecutor::Schedule(const RunPlan& plan, const std::string& run_id, Scheduling& s) {
  auto skip = [&](size_t index, const std::string& reason) {  // called with s.mutex held
    s.skipped[index] = true;
    StepOutcome result{plan.steps[index].key, StepStatus::kSkipped};
    result.window = plan.steps[index].window;
    result.note = reason;
    Record(run_id, StepSkippedEvent{result.key.ToString(), result.note});
    s.Finish(index, std::move(result));
  };
  auto skip_downstream = [&](size_t failed, const std::string& verb) {  // called with s.mutex held
    std::vector<size_t> stack(s.downstream[failed].begin(), s.downstream[failed].end());
    while (!stack.empty()) {
      size_t index = stack.back();
      stack.pop_back();
      if (s.skipped[index]) continue;
      skip(index, "upstream " + plan.steps[failed].key.ToString() + " " + verb);
      for (size_t down : s.downstream[index]) stack.push_back(down);
    }
  };
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      s.waiting_on[i] = plan.steps[i].upstream_steps.size();
      for (size_t up : plan.steps[i].upstream_steps) s.downstream[up].push_back(i);
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (s.skipped[i] || options_.allow_missing_upstream) continue;
      if (std::optional<std::string> missing = MissingUpstream(plan.steps[i])) {
        ++s.blocked;
        skip(i, *missing);
        skip_downstream(i, "was skipped");
      }
    }
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (s.waiting_on[i] == 0 && !s.skipped[i]) s.ready.push_back(i);
    }
    std::reverse(s.ready.begin(), s.ready.end());  // pop_back takes plan order
  }
  auto worker = [&] {
    std::unique_lock<std::mutex> lock(s.mutex);
    while (true) {
      s.changed.wait(lock, [&] { return Canceled() || !s.ready.empty() || s.finished == s.total; });
      if (Canceled() || s.ready.empty()) return;
      size_t index = s.ready.back();
      s.ready.pop_back();
      lock.unlock();
      StepOutcome result = RunStep(plan.steps[index], run_id);
      lock.lock();
      bool failed = result.status == StepStatus::kFailed;
      s.Finish(index, std::move(result));
      if (failed) {
        skip_downstream(index, "failed");
      } else {
        for (size_t down : s.downstream[index]) {
          if (--s.waiting_on[down] == 0 && !s.skipped[down]) s.ready.push_back(down);
        }
      }
      s.changed.notify_all();
    }
  };
  int threads = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(s.total, 1))));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
}

StepOutcome RunExecutor::RunStep(const StepPlan& step, const std::string& run_id) {
  auto begin = std::chrono::steady_clock::now();
  Record(run_id, StepStartedEvent{step.key.ToString()});
  if (options_.on_start) options_.on_start(step.key);
  StepOutcome result{step.key};
  try {
    result = ExecuteStep(step, run_id);
  } catch (const Error& error) {
    result.status = StepStatus::kFailed;
    result.diagnostics = error.diagnostics();
  } catch (const std::exception& error) {
    result.status = StepStatus::kFailed;
    result.diagnostics = {Diagnostic{"SLU-RUN-001", error.what(), {}, "", {}}};
  }
  result.window = step.window;
  result.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count();
  if (result.status == StepStatus::kFailed && Canceled()) {
    // Interrupted: its write rolled back. Any other error it met is moot once the run is canceled.
    result.status = StepStatus::kCanceled;
    result.note = "interrupted, its write rolled back";
    result.diagnostics.clear();
    Record(run_id, StepSkippedEvent{step.key.ToString(), "run canceled: " + result.note});
  } else if (result.status == StepStatus::kFailed) {
    StepFailedEvent failed{step.key.ToString(), {}};
    for (const Diagnostic& d : result.diagnostics) failed.diagnostics.push_back(ToEventDiagnostic(d));
    Record(run_id, failed);
  } else {
    Record(run_id, StepFinishedEvent{step.key.ToString(), result.duration_ms});
  }
  return result;
}

RunOutcome RunExecutor::Conclude(const RunPlan& plan, const std::string& run_id, Scheduling& s) {
  // Steps that never started: the run was canceled before their turn.
  for (size_t i = 0; i < s.results.size(); ++i) {
    if (s.results[i]) continue;
    StepOutcome result{plan.steps[i].key, StepStatus::kCanceled};
    result.window = plan.steps[i].window;
    result.note = "not started";
    Record(run_id, StepSkippedEvent{result.key.ToString(), "run canceled: not started"});
    s.Finish(i, std::move(result));
  }
  warehouse_.ObserveStatements(nullptr);
  RunOutcome outcome{run_id, RunStatus::kSuccess, {}};
  for (std::optional<StepOutcome>& result : s.results) outcome.steps.push_back(std::move(*result));
  size_t failures = 0, stopped = 0, done = 0;
  for (const StepOutcome& step : outcome.steps) {
    failures += step.status == StepStatus::kFailed ? 1 : 0;
    stopped += step.status == StepStatus::kCanceled ? 1 : 0;
    done += step.status == StepStatus::kSuccess || step.status == StepStatus::kUnchanged ? 1 : 0;
  }
  std::string message;
  if (Canceled()) {
    outcome.status = RunStatus::kCanceled;
    message = "canceled: " + std::to_string(done) + " step(s) finished and kept, " + std::to_string(stopped) +
              " interrupted or not started";
  } else if (failures > 0 || s.blocked > 0) {
    outcome.status = RunStatus::kFailure;
    if (failures > 0) message = std::to_string(failures) + " step(s) failed";
    if (s.blocked > 0) {
      message += (message.empty() ? "" : "; ") + std::to_string(s.blocked) +
                 " step(s) skipped: an upstream outside the run was never materialized";
    }
  }
  Record(run_id, RunFinishedEvent{RunStatusName(outcome.status), message});
  runs_.FinishRun(run_id, outcome.status, FormatUtc(clock_.Now()), message);
  return outcome;
}

}  // namespace sluice
