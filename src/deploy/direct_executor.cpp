#include "deploy/direct_executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/pause_point.hpp"
#include "core/sha256.hpp"
#include "deploy/actual_state.hpp"
#include "deploy/desired_objects.hpp"
#include "deploy/fingerprints.hpp"
#include "engine/check_runner.hpp"
#include "engine/run_executor.hpp"
#include "engine/run_plan.hpp"
#include "engine/seed_hash.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t MillisSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start).count();
}

std::string ChString(const std::string& text) { return sql::QuoteString(sql::Dialect::kClickHouse, text); }
std::string ChQualified(const std::string& db, const std::string& name) {
  return sql::QualifiedName(sql::Dialect::kClickHouse, db, name);
}

std::vector<EventDiagnostic> EventDiagnostics(const std::vector<Diagnostic>& diagnostics) {
  std::vector<EventDiagnostic> out;
  for (const Diagnostic& d : diagnostics) {
    out.push_back(ToEventDiagnostic(d));
  }
  return out;
}

const PlanStep* FindStep(const DirectPlan& plan, DeployPhase phase, const AssetKey& key) {
  for (const PlanStep& step : plan.steps) {
    if (step.phase == phase && step.asset == key) return &step;
  }
  return nullptr;
}

}  // namespace

std::string BuildStepStatusName(BuildStepStatus status) {
  switch (status) {
    case BuildStepStatus::kSuccess:
      return "OK";
    case BuildStepStatus::kFailed:
      return "FAILED";
    case BuildStepStatus::kSkipped:
      return "SKIPPED";
    case BuildStepStatus::kCanceled:
      return "CANCELED";
  }
  return "OK";
}

DirectExecutor::DirectExecutor(const Definitions& definitions, Warehouse& warehouse, RunStore& runs, EventLog& events,
                               MaterializationStore& materializations, const Clock& clock,
                               DirectExecutorOptions options)
    : definitions_(definitions),
      warehouse_(warehouse),
      runs_(runs),
      events_(events),
      materializations_(materializations),
      clock_(clock),
      options_(std::move(options)) {}

void DirectExecutor::Record(const std::string& run_id, const RunEvent& event) {
  events_.Append(run_id, FormatUtc(clock_.Now()), event);
}

BuildOutcome DirectExecutor::Execute(const DirectPlan& plan, const std::string& run_id) {
  if (options_.statements_file) statements_.open(*options_.statements_file, std::ios::app);
  BuildOutcome outcome;
  outcome.run_id = run_id;
  if (plan.adapter != "clickhouse") {  // DuckDB, PostgreSQL: the engine's transactional writes
    ExecuteDuckDb(plan, run_id, outcome);
    return outcome;
  }
  RunRecord record;
  record.run_id = run_id;
  record.selection = options_.command + " " + options_.selection_text;
  record.created_at = FormatUtc(clock_.Now());
  record.pid = getpid();
  record.pid_start_time = ProcessStartTime(record.pid);
  runs_.CreateRun(record);
  runs_.MarkStarted(run_id, FormatUtc(clock_.Now()));
  std::vector<std::string> names;
  for (const PlanStep& step : plan.steps) names.push_back(step.name);
  Record(run_id, RunStartedEvent{record.selection, names});
  std::string error;
  try {
    ExecuteClickHouse(plan, run_id, outcome);
  } catch (const Error& e) {
    error = e.diagnostics().front().message;
  }
  bool failed = !error.empty();
  bool canceled = false;
  for (const BuildStepOutcome& step : outcome.steps) {
    failed = failed || step.status == BuildStepStatus::kFailed || step.audit_failed_error;
    canceled = canceled || step.status == BuildStepStatus::kCanceled;
    if (error.empty() && !step.diagnostics.empty() && step.status == BuildStepStatus::kFailed) {
      error = step.step + ": " + step.diagnostics.front().message;
    }
  }
  outcome.status = canceled ? RunStatus::kCanceled : failed ? RunStatus::kFailure : RunStatus::kSuccess;
  Record(run_id, RunFinishedEvent{RunStatusName(outcome.status), error});
  runs_.FinishRun(run_id, outcome.status, FormatUtc(clock_.Now()), error);
  return outcome;
}

void DirectExecutor::Run(const PlanStep& step, const PlanStatement& statement, const std::string& run_id) {
  if (Canceled()) {
    throw Error(Diagnostic{"SLU-WAREHOUSE-008", "the build was canceled", {}, "", {}});
  }
  const std::string sha = Sha256Hex(statement.sql);
  if (statements_.is_open()) {
    statements_ << "-- " << step.name << " (sha256 " << sha << ")\n" << statement.shown << ";\n\n";
    statements_.flush();
  }
  Record(run_id, StatementEvent{step.name, sha, statement.shown});
  if (options_.on_progress) options_.on_progress({"statement", step.name, step.phase, sha, nullptr});
  if (step.name_space) {
    // Through the warehouse, which then runs later statements (the landing views' unqualified reads) in it.
    warehouse_.EnsureSchema(*step.name_space);
    return;
  }
  warehouse_.Execute(statement.sql);
}

void DirectExecutor::RunStatements(const PlanStep& step, const std::string& run_id) {
  for (const PlanStatement& statement : step.statements) Run(step, statement, run_id);
}

void DirectExecutor::LoadSeed(const PlanStep& step, const std::string& run_id, BuildStepOutcome& outcome) {
  if (Canceled()) throw Error(Diagnostic{"SLU-WAREHOUSE-008", "the build was canceled", {}, "", {}});
  const Asset& asset = *definitions_.Find(*step.seed);
  const auto& seed = std::get<SeedCompute>(asset.compute);
  LedgerEntry ledger{asset.key.ToString(), std::nullopt, run_id, 0, SeedHash(options_.project_root, seed), "", {}};
  const Relation relation{asset.key.name_space(), asset.relation_name};
  std::optional<std::string> loaded;  // the hash of its latest load
  for (const LedgerEntry& entry : warehouse_.ReadLedger()) {
    if (entry.asset == ledger.asset) loaded = entry.sql_hash;
  }
  if (loaded == ledger.sql_hash && warehouse_.Describe(relation)) {
    outcome.note = "seed file unchanged";
    return;
  }
  const WriteResult written = warehouse_.LoadSeed(
      relation, SeedFile{(std::filesystem::path(options_.project_root) / seed.path).string(), seed.columns}, ledger);
  outcome.rows = written.rows_written;
  Record(run_id, MaterializationEvent{ledger.asset, std::nullopt, std::nullopt, written.rows_written, 0, ledger.sql_hash});
  materializations_.RecordMaterializations({{ledger.asset, "", run_id, written.rows_written, ledger.sql_hash,
                                             written.written_at.empty() ? FormatUtc(clock_.Now()) : written.written_at}});
}

void DirectExecutor::ExecuteClickHouse(const DirectPlan& plan, const std::string& run_id, BuildOutcome& outcome) {
  bool stop = false;
  bool paused_after_teardown = false, paused_after_realization = false, models_recorded = false;
  for (const PlanStep& step : plan.steps) {
    if (step.phase == DeployPhase::kRealization && !paused_after_teardown) {
      PausePoint("build_after_teardown");
      paused_after_teardown = true;
    }
    if ((step.phase == DeployPhase::kReplay || step.phase == DeployPhase::kAudit) && !paused_after_realization) {
      PausePoint("build_after_realization");
      paused_after_realization = true;
    }
    if (step.phase == DeployPhase::kAudit && !models_recorded && !stop) {
      PausePoint("build_after_replay");
      RecordModels(plan, run_id);
      models_recorded = true;
    }
    BuildStepOutcome result;
    result.step = step.name;
    result.phase = step.phase;
    if ((stop && !step.always) || Canceled()) {
      result.status = Canceled() ? BuildStepStatus::kCanceled : BuildStepStatus::kSkipped;
      result.note = Canceled() ? "canceled" : "an earlier step failed";
      if (!Canceled()) Record(run_id, StepSkippedEvent{step.name, result.note});
      outcome.steps.push_back(std::move(result));
      continue;
    }
    Record(run_id, StepStartedEvent{step.name});
    if (options_.on_progress) options_.on_progress({"step_started", step.name, step.phase, "", nullptr});
    const auto start = SteadyClock::now();
    try {
      if (step.phase == DeployPhase::kReplay) {
        Replay(plan, step, run_id, result);
      } else if (step.seed) {
        LoadSeed(step, run_id, result);
      } else if (step.phase == DeployPhase::kAudit) {
        RunAudit(step, result);
      } else {
        RunStatements(step, run_id);
      }
    } catch (const Error& error) {
      result.status = Canceled() ? BuildStepStatus::kCanceled : BuildStepStatus::kFailed;
      result.diagnostics = error.diagnostics();
      if (const Asset* asset = step.asset ? definitions_.Find(*step.asset) : nullptr) {
        for (Diagnostic& diagnostic : result.diagnostics) {
          // The server's error says nothing of where it came from: the file of the model or source the step builds (no
          // line: the statement is Sluice's, not the model's text).
          if (!diagnostic.location.known()) diagnostic.location = SourceLocation{asset->defined_at.file, 0, 0};
          if (diagnostic.hint.empty() && step.phase == DeployPhase::kPrepare && !asset->is_source()) {
            diagnostic.hint = "the server refused to create " + asset->key.ToString() +
                              "'s objects (checked under other names in _sluice): nothing was dropped; fix the model "
                              "and build again";
          }
        }
      }
      // Audits continue on error; every other failure ends the build.
      if (step.phase != DeployPhase::kAudit) stop = true;
      if (!Canceled()) Record(run_id, StepFailedEvent{step.name, EventDiagnostics(result.diagnostics)});
    }
    result.duration_ms = MillisSince(start);
    if (result.status == BuildStepStatus::kSuccess) Record(run_id, StepFinishedEvent{step.name, result.duration_ms});
    outcome.steps.push_back(std::move(result));
    if (options_.on_progress) options_.on_progress({"step_finished", step.name, step.phase, "", &outcome.steps.back()});
  }
  if (!models_recorded && !stop && !Canceled()) {
    if (!paused_after_realization) PausePoint("build_after_realization");
    PausePoint("build_after_replay");
    RecordModels(plan, run_id);
  }
}

std::pair<std::string, std::string> DirectExecutor::Watermark(const ReplaySpec& spec) {
  const std::string blocks = warehouse_.InsertWatermark(Relation{spec.driving_namespace, spec.driving_table});
  Rows count = warehouse_.Query("SELECT toString(count()) FROM " + ChQualified(spec.driving_namespace, spec.driving_table));
  return {blocks, count.rows.empty() ? "" : count.rows[0][0].value_or("")};
}

namespace {

// "YYYY-MM-DD HH:MM:SS" of a time point, UTC: what a DateTime column compares with.
std::string DateTimeLiteral(std::chrono::system_clock::time_point time) {
  const std::string iso = FormatUtc(time);  // 2026-12-02T16:27:25.123Z
  return iso.substr(0, 10) + " " + iso.substr(11, 8);
}

// Per-partition maxima of `relation` (offsets mode), optionally of the rows matching `where`; `anchor`, when set, is
// the asset `relation` is the replay anchor of, whose role columns the query reads by their physical names.
std::vector<BoundaryValue> PartitionMaxima(Warehouse& warehouse, const std::string& relation, const std::string& where,
                                           const Asset* anchor = nullptr) {
  const std::string sql = "SELECT toString(_replay_partition), toString(max(_replay_offset)) FROM " + relation +
                          " WHERE _replay_partition IS NOT NULL AND _replay_offset IS NOT NULL" +
                          (where.empty() ? "" : " AND (" + where + ")") +
                          " GROUP BY _replay_partition ORDER BY _replay_partition";
  Rows rows = warehouse.Query(anchor != nullptr ? RoleColumnsRenamed(*anchor, sql) : sql);
  std::vector<BoundaryValue> values;
  for (const auto& row : rows.rows) values.push_back({row[0].value_or("0"), row[1].value_or("0")});
  return values;
}

}  // namespace

CapturedBoundary DirectExecutor::CaptureBoundary(const ReplaySpec& spec) {
  const Asset& driving = *definitions_.Find(spec.driving);
  const std::string relation = UpstreamRelation(driving, true);
  CapturedBoundary boundary;
  if (spec.mode == "snapshot") {  // no lineage columns: every row, the watermark proving none arrived meanwhile
    boundary.keep = "1";
    return boundary;
  }
  if (spec.mode == "offsets") {
    boundary.values = PartitionMaxima(warehouse_, relation, "", &driving);
    std::string condition;
    for (const BoundaryValue& value : boundary.values) {
      condition += (condition.empty() ? "" : " OR ") + std::string("(_replay_partition = ") + *value.partition +
                   " AND _replay_offset <= " + value.value + ")";
    }
    if (condition.empty()) condition = "0";
    boundary.keep =
        RoleColumnsRenamed(driving, "(" + condition + ") OR _replay_partition IS NULL OR _replay_offset IS NULL");
    return boundary;
  }
  const std::string column = ReplayColumn(driving, LineageColumns(spec.mode).front());
  Rows rows = warehouse_.Query("SELECT toString(max(" + column + ")), toString(count()) FROM " + relation);
  std::optional<std::string> max = rows.rows.empty() ? std::nullopt : rows.rows[0][0];
  if (!max || rows.rows[0][1].value_or("0") == "0") {
    boundary.keep = column + " IS NULL";
    return boundary;
  }
  boundary.values.push_back({std::nullopt, *max});
  const std::string literal = spec.mode == "cursor" ? *max : ChString(*max);
  boundary.keep = column + " <= " + literal + " OR " + column + " IS NULL";
  return boundary;
}

CapturedBoundary DirectExecutor::CaptureLowerBound(const ReplaySpec& spec) {
  const BoundedReplay& bounded = *spec.bounded;
  const Asset& driving = *definitions_.Find(spec.driving);
  const std::string anchor = UpstreamRelation(driving, true);
  std::string time = bounded.lower_time;
  if (!bounded.at_active_frontier && bounded.lookback_seconds) {
    time = DateTimeLiteral(clock_.Now() - std::chrono::seconds(*bounded.lookback_seconds));
  }
  CapturedBoundary lower;
  if (spec.mode == "offsets") {
    lower.values = bounded.at_active_frontier
                       ? PartitionMaxima(warehouse_, bounded.active_table, "")
                       : PartitionMaxima(warehouse_, anchor, "_replay_timestamp <= " + ChString(time), &driving);
    std::string keep, seed, listed;
    for (const BoundaryValue& value : lower.values) {
      keep += " OR (_replay_partition = " + *value.partition + " AND _replay_offset > " + value.value + ")";
      seed += (seed.empty() ? "" : " OR ") + std::string("(_replay_partition = ") + *value.partition +
              " AND _replay_offset <= " + value.value + ")";
      listed += (listed.empty() ? "" : ", ") + *value.partition;
    }
    lower.keep = listed.empty() ? "1" : RoleColumnsRenamed(driving, "_replay_partition NOT IN (" + listed + ")" + keep);
    lower.seed = seed.empty() ? "0" : seed;
    return lower;
  }
  const std::string column = LineageColumns(spec.mode).front();
  if (bounded.at_active_frontier) {
    Rows rows = warehouse_.Query("SELECT toString(max(" + column + ")), toString(count()) FROM " + bounded.active_table);
    if (rows.rows.empty() || !rows.rows[0][0] || rows.rows[0][1].value_or("0") == "0") {
      lower.keep = "1";
      lower.seed = "0";
      return lower;
    }
    time = *rows.rows[0][0];
  }
  if (spec.mode == "cursor" && !bounded.at_active_frontier) {
    // The first cursor at or after the time: it and everything above it is replayed.
    Rows rows = warehouse_.Query(RoleColumnsRenamed(driving, "SELECT toString(min(_replay_cursor)), toString(count()) FROM " +
                                                              anchor + " WHERE _replay_timestamp >= " + ChString(time)));
    if (rows.rows.empty() || !rows.rows[0][0] || rows.rows[0][1].value_or("0") == "0") {
      lower.keep = "0";
      lower.seed = "1";
      return lower;
    }
    lower.values.push_back({std::nullopt, *rows.rows[0][0]});
    lower.keep = RoleColumnsRenamed(driving, "_replay_cursor >= " + *rows.rows[0][0]);
    lower.seed = "_replay_cursor < " + *rows.rows[0][0];
    return lower;
  }
  const std::string literal = spec.mode == "cursor" ? time : ChString(time);
  lower.values.push_back({std::nullopt, time});
  lower.keep = ReplayColumn(driving, column) + " > " + literal;
  lower.seed = column + " <= " + literal;
  return lower;
}

void DirectExecutor::Seed(const PlanStep& step, const ReplaySpec& spec, const CapturedBoundary& lower,
                          const std::string& run_id) {
  const BoundedReplay& bounded = *spec.bounded;
  if (!bounded.seeded || bounded.seed_columns.empty()) return;
  std::string columns;
  for (const std::string& column : bounded.seed_columns) {
    columns += (columns.empty() ? "" : ", ") + sql::QuoteIdentifier(sql::Dialect::kClickHouse, column);
  }
  const Asset& root = *definitions_.Find(spec.root);
  const std::string sql = "INSERT INTO " + ChQualified(spec.root.name_space(), root.relation_name) + " (" + columns +
                          ")\nSELECT " + columns + " FROM " + bounded.active_table + " WHERE " + lower.seed;
  Run(step, {sql, sql}, run_id);
}

void DirectExecutor::WaitForInsertsOlderThan(SteadyClock::time_point since) {
  for (;;) {
    const std::chrono::duration<double> running = SteadyClock::now() - since;
    if (warehouse_.RunningInserts(running - std::chrono::milliseconds(500)) == 0) return;
    if (Canceled()) throw Error(Diagnostic{"SLU-WAREHOUSE-008", "the build was canceled", {}, "", {}});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void DirectExecutor::RebuildSubtree(const DirectPlan& plan, const ReplaySpec& spec, const std::string& run_id) {
  for (auto it = spec.subtree.rbegin(); it != spec.subtree.rend(); ++it) {
    if (const PlanStep* drop = FindStep(plan, DeployPhase::kTeardown, *it)) RunStatements(*drop, run_id);
  }
  for (const AssetKey& key : spec.subtree) {
    if (const PlanStep* create = FindStep(plan, DeployPhase::kRealization, key)) RunStatements(*create, run_id);
  }
}

void DirectExecutor::Replay(const DirectPlan& plan, const PlanStep& step, const std::string& run_id,
                            BuildStepOutcome& outcome) {
  const ReplaySpec& spec = *step.replay;
  const Asset& root = *definitions_.Find(spec.root);
  if (spec.driving_table.empty()) {  // a Postgres-driven model: its view refreshes on schedule
    RunStatements(step, run_id);
    outcome.note = "no history to replay";
    return;
  }
  const std::string detach = spec.landing_view ? "DETACH TABLE " + ChQualified(spec.driving_namespace, *spec.landing_view) : "";
  const std::string attach = spec.landing_view ? "ATTACH TABLE " + ChQualified(spec.driving_namespace, *spec.landing_view) : "";
  for (int attempt = 1; attempt <= kReplayAttempts; ++attempt) {
    outcome.attempts = attempt;
    if (attempt > 1) RebuildSubtree(plan, spec, run_id);
    if (!detach.empty()) Run(step, {detach, detach}, run_id);
    bool quiet = false;
    CapturedBoundary cutoff;
    std::optional<CapturedBoundary> lower;
    try {
      const auto before = Watermark(spec);
      cutoff = CaptureBoundary(spec);
      if (spec.bounded) lower = CaptureLowerBound(spec);
      outcome.boundary = "(" + cutoff.keep + ")" + (lower ? " AND (" + lower->keep + ")" : "");
      const auto view_created = SteadyClock::now();
      for (const PlanStatement& statement : step.statements) {
        if (statement.sql.find(kReplayBoundaryPlaceholder) == std::string::npos) {
          Run(step, statement, run_id);
          continue;
        }
        PausePoint("build_before_replay_insert");
        if (lower) Seed(step, spec, *lower, run_id);
        std::string sql = statement.sql;
        sql.replace(sql.find(kReplayBoundaryPlaceholder), std::string(kReplayBoundaryPlaceholder).size(),
                    "(" + outcome.boundary + ")");
        std::string shown = statement.shown;
        if (size_t at = shown.find(kReplayBoundaryPlaceholder); at != std::string::npos) {
          shown.replace(at, std::string(kReplayBoundaryPlaceholder).size(), "(" + outcome.boundary + ")");
        }
        Run(step, {sql, shown}, run_id);
      }
      WaitForInsertsOlderThan(view_created);
      const auto after = Watermark(spec);
      quiet = before == after;
      if (!quiet) {
        const std::string note = "rows reached " + spec.driving_namespace + "." + spec.driving_table +
                                 " while the replay window was open (attempt " + std::to_string(attempt) +
                                 "): its subtree is rebuilt and replayed again";
        Record(run_id, StepNoteEvent{step.name, note});
        if (options_.on_progress) options_.on_progress({"replay_retry", step.name, step.phase, note, nullptr});
      }
    } catch (...) {
      if (!attach.empty()) {
        try {
          warehouse_.Execute(attach);
        } catch (const Error&) {
          // The next build's prepare re-attaches it (the plan's landing view is created IF NOT EXISTS).
        }
      }
      throw;
    }
    if (!attach.empty()) Run(step, {attach, attach}, run_id);
    if (quiet) {
      if (options_.on_boundary) options_.on_boundary(spec, cutoff, lower ? &*lower : nullptr);
      Rows count = warehouse_.Query("SELECT toString(count()) FROM " +
                                    ChQualified(spec.root.name_space(), root.relation_name));
      outcome.rows = count.rows.empty() ? 0 : std::stoll(count.rows[0][0].value_or("0"));
      return;
    }
  }
  throw Error(Diagnostic{"SLU-DEPLOY-010",
                         "rows kept arriving in " + spec.driving_namespace + "." + spec.driving_table + " during " +
                             std::to_string(kReplayAttempts) + " replay windows of '" + root.name() +
                             "'; the replay cannot prove that no row was doubled",
                         root.defined_at, "build again when the source is quieter, or pause its writers during the build",
                         {}});
}

void DirectExecutor::RecordModels(const DirectPlan& plan, const std::string& run_id) {
  std::vector<std::pair<Relation, LedgerEntry>> entries;
  std::vector<std::string> sqls;
  for (const AssetKey& key : plan.scope) {
    const Asset& model = *definitions_.Find(key);
    sqls.push_back(FingerprintSql(definitions_, model));
    LedgerEntry ledger;
    ledger.asset = key.ToString();
    ledger.run_id = run_id;
    ledger.sql_hash = Sha256Hex(sqls.back());
    // A daily model was filled from the whole history: every complete day is done, as after `run --full-refresh`.
    const Date today = clock_.TodayUtc();
    if (model.partitions && model.partitions->partitions.start_date() < today) {
      ledger.window = DateWindow{model.partitions->partitions.start_date(),
                                 model.partitions->partitions.LastComplete(today).AddDays(1)};
    }
    entries.emplace_back(Relation{key.name_space(), model.relation_name}, std::move(ledger));
  }
  const std::vector<WriteResult> written = warehouse_.RecordMaterialized(entries);
  std::vector<Fingerprint> fingerprints;
  std::vector<MaterializationRecord> records;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LedgerEntry& ledger = entries[i].second;
    fingerprints.push_back({ledger.asset, sqls[i], ledger.sql_hash, run_id, written[i].written_at});
    for (const std::string& partition : ledger.window ? ledger.window->DayKeys() : std::vector<std::string>{""}) {
      records.push_back({ledger.asset, partition, run_id, written[i].rows_written, ledger.sql_hash, written[i].written_at});
    }
    const auto* sql_model = std::get_if<SqlCompute>(&definitions_.Find(plan.scope[i])->compute);
    MaterializationEvent event{ledger.asset, std::nullopt, std::nullopt, written[i].rows_written, 0, ledger.sql_hash,
                               sql_model != nullptr && sql_model->kind == ModelKind::kView};
    if (ledger.window) {
      event.window_start = ledger.window->start.ToString();
      event.window_end = ledger.window->end.ToString();
    }
    Record(run_id, event);
  }
  WriteFingerprints(warehouse_, fingerprints);
  materializations_.RecordMaterializations(records);
}

void DirectExecutor::RunAudit(const PlanStep& step, BuildStepOutcome& outcome) {
  const AuditSpec* audit = nullptr;
  for (const AuditSpec& candidate : definitions_.audits()) {
    if (step.audit && candidate.name == *step.audit) audit = &candidate;
  }
  if (audit == nullptr) return;
  const AuditResult result = sluice::RunAudit(*audit, warehouse_);
  outcome.rows = result.failing_rows;
  if (result.status == AuditStatus::kError) {
    outcome.status = BuildStepStatus::kFailed;
    outcome.audit_failed_error = FailsTheCommand(result);
    outcome.diagnostics = result.errors;
    return;
  }
  if (result.status == AuditStatus::kPass) {
    outcome.note = "pass";
    return;
  }
  outcome.note = std::to_string(result.failing_rows) + " failing row(s), severity " + AuditSeverityName(audit->severity);
  if (FailsTheCommand(result)) {
    outcome.audit_failed_error = true;
    outcome.status = BuildStepStatus::kFailed;
    outcome.diagnostics.push_back(Diagnostic{"SLU-AUDIT-001",
                                             "audit '" + audit->name + "' found " + std::to_string(result.failing_rows) +
                                                 " failing row(s)",
                                             SourceLocation{audit->file, 0, 0}, "run `sluice audit` to see them", {}});
  }
}

void DirectExecutor::ExecuteDuckDb(const DirectPlan& plan, const std::string& run_id, BuildOutcome& outcome) {
  for (const PlanStep& step : plan.steps) {
    if (step.phase != DeployPhase::kPrepare) continue;
    const auto start = SteadyClock::now();
    warehouse_.EnsureSchema(*step.name_space);
    outcome.steps.push_back({step.name, step.phase, BuildStepStatus::kSuccess, MillisSince(start)});
  }
  RunRequest request;
  for (const AssetKey& key : plan.scope) request.selection.push_back(key.ToString());
  for (const AssetKey& key : plan.sources) {
    if (std::holds_alternative<SeedCompute>(definitions_.Find(key)->compute)) request.selection.push_back(key.ToString());
  }
  request.full_refresh = true;
  const RunPlan run_plan = PlanRun(definitions_, request, clock_.TodayUtc());
  ExecutorOptions executor_options;
  executor_options.project_root = options_.project_root;
  executor_options.cancel = options_.cancel;
  // Each write's statements, as the warehouse ran them, next to the statements file of a ClickHouse build.
  if (options_.statements_file) executor_options.statements_dir = options_.statements_file->parent_path() / "statements";
  RunExecutor executor(definitions_, warehouse_, runs_, events_, materializations_, clock_, executor_options);
  RunOutcome run = executor.Execute(run_plan, run_id, [&](const StepOutcome& step, size_t, size_t) {
    BuildStepOutcome result;
    const Asset* asset = definitions_.Find(step.key);
    result.step = (asset && !asset->is_source() ? "replace_" : "load_") + step.key.ToString();
    result.phase = DeployPhase::kRealization;
    result.status = step.status == StepStatus::kFailed     ? BuildStepStatus::kFailed
                    : step.status == StepStatus::kSkipped  ? BuildStepStatus::kSkipped
                    : step.status == StepStatus::kCanceled ? BuildStepStatus::kCanceled
                                                           : BuildStepStatus::kSuccess;
    result.duration_ms = step.duration_ms;
    result.rows = step.wrote_rows ? step.rows_written : -1;
    result.note = step.note;
    result.diagnostics = step.diagnostics;
    outcome.steps.push_back(result);
    if (options_.on_progress) options_.on_progress({"step_finished", result.step, result.phase, "", &outcome.steps.back()});
  });
  outcome.status = run.status;
  if (run.status != RunStatus::kSuccess) return;
  std::vector<Fingerprint> fingerprints;
  for (const AssetKey& key : plan.scope) {
    const std::string sql = FingerprintSql(definitions_, *definitions_.Find(key));
    fingerprints.push_back({key.ToString(), sql, Sha256Hex(sql), run_id, FormatUtc(clock_.Now())});
  }
  WriteFingerprints(warehouse_, fingerprints);
  for (const PlanStep& step : plan.steps) {
    if (step.phase != DeployPhase::kAudit) continue;
    BuildStepOutcome result;
    result.step = step.name;
    result.phase = step.phase;
    const auto start = SteadyClock::now();
    try {
      RunAudit(step, result);
    } catch (const Error& error) {
      result.status = BuildStepStatus::kFailed;
      result.diagnostics = error.diagnostics();
    }
    result.duration_ms = MillisSince(start);
    outcome.steps.push_back(std::move(result));
    if (options_.on_progress) options_.on_progress({"step_finished", step.name, step.phase, "", &outcome.steps.back()});
  }
  for (const BuildStepOutcome& step : outcome.steps) {
    if (step.audit_failed_error || (step.phase == DeployPhase::kAudit && step.status == BuildStepStatus::kFailed)) {
      outcome.status = RunStatus::kFailure;
    }
  }
}

}  // namespace sluice
