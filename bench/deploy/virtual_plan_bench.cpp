// The virtual plan benchmark (docs/performance.md, Virtual plan): what a `plan` of a virtual project costs against a
// live ClickHouse server, in warehouse calls (a constant is the target, never one per object) and in wall time against
// the same project's compile.
//
// usage: SLUICE_TEST_CLICKHOUSE_DIR=DIR virtual_plan_bench ROUNDS PROJECT...
//   DIR      a server started by scripts/clickhouse_test_server.sh (its http_port and password files)
//   PROJECT  folders written by generate_virtual_project.py, each holding adopted_columns.txt
//
// Per project, in a database of its own (the project's target database with the process id and the project's
// position appended, dropped at the end; the metadata rows in `_sluice` stay): creates the adopted tables of its
// stream_table sources, then runs ROUNDS rounds of each of
//   compile   LoadProject + WriteArtifacts: `sluice compile` without process start, into a new folder (cold) and
//             over its own unchanged output (warm);
//   plan      LoadProject + ReadVirtualActualState + PlanVirtual: `sluice plan` without process start or printing,
//             once on an empty catalog (no view, no metadata row of the namespace; the metadata tables exist, as on
//             any server that saw a deployment: without them the read makes one query fewer) and once after two
//             pipelines are deployed (their physical objects created as stand-in tables, their metadata rows appended,
//             their logical views bound), so that no read is empty.
// Prints the medians per project and a `result {json}` line per project and case; exits 1 when a case's warehouse
// calls differ between the projects (or between rounds).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "compile/artifacts.hpp"
#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "core/virtual_names.hpp"
#include "deploy/deployment_metadata.hpp"
#include "deploy/view_binding.hpp"
#include "deploy/virtual_plan.hpp"
#include "project/project_loader.hpp"
#include "sql/dialect.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

using Seconds = std::chrono::duration<double>;
using nlohmann::json;

double Ms(Seconds seconds) { return seconds.count() * 1000; }

// Forwards every call to the warehouse it wraps and counts the calls per method; times each read (Query, ListRelations,
// CatalogOf, CatalogRowCounts) too. Single-threaded use only.
class CountingWarehouse final : public Warehouse {
 public:
  explicit CountingWarehouse(Warehouse& inner) : inner_(inner) {}

  const std::map<std::string, int>& calls() const { return calls_; }
  // Each read in call order: the method and its SQL (the middle cut when long), and its wall time in ms.
  const std::vector<std::pair<std::string, double>>& reads() const { return reads_; }

  const Capabilities& capabilities() const override { return inner_.capabilities(); }
  sql::Dialect dialect() const override { return inner_.dialect(); }
  std::string QualifiedName(const Relation& relation) const override { return inner_.QualifiedName(relation); }
  void Execute(const std::string& sql) override {
    Count("Execute");
    inner_.Execute(sql);
  }
  Rows Query(const std::string& sql) override {
    Count("Query");
    const auto start = std::chrono::steady_clock::now();
    Rows rows = inner_.Query(sql);
    reads_.emplace_back("Query " + (sql.size() <= 100 ? sql : sql.substr(0, 48) + " … " + sql.substr(sql.size() - 48)),
                        Ms(std::chrono::steady_clock::now() - start));
    return rows;
  }
  std::optional<TableInfo> Describe(const Relation& relation) override {
    Count("Describe");
    return inner_.Describe(relation);
  }
  std::vector<TableInfo> ListRelations() override {
    Count("ListRelations");
    const auto start = std::chrono::steady_clock::now();
    std::vector<TableInfo> relations = inner_.ListRelations();
    reads_.emplace_back("ListRelations", Ms(std::chrono::steady_clock::now() - start));
    return relations;
  }
  std::vector<CatalogEntry> CatalogOf(const std::string& name_space) override {
    Count("CatalogOf");
    const auto start = std::chrono::steady_clock::now();
    std::vector<CatalogEntry> entries = inner_.CatalogOf(name_space);
    reads_.emplace_back("CatalogOf " + name_space, Ms(std::chrono::steady_clock::now() - start));
    return entries;
  }
  std::vector<CatalogEntry> CatalogOf(const std::vector<Relation>& relations) override {
    Count("CatalogOf");
    const auto start = std::chrono::steady_clock::now();
    std::vector<CatalogEntry> entries = inner_.CatalogOf(relations);
    reads_.emplace_back("CatalogOf (relations)", Ms(std::chrono::steady_clock::now() - start));
    return entries;
  }
  std::optional<std::map<std::string, int64_t>> CatalogRowCounts(const std::string& name_space) override {
    Count("CatalogRowCounts");
    const auto start = std::chrono::steady_clock::now();
    auto counts = inner_.CatalogRowCounts(name_space);
    reads_.emplace_back("CatalogRowCounts " + name_space, Ms(std::chrono::steady_clock::now() - start));
    return counts;
  }
  std::string InsertWatermark(const Relation& relation) override {
    Count("InsertWatermark");
    return inner_.InsertWatermark(relation);
  }
  int64_t RunningInserts(std::chrono::duration<double> running_for) override {
    Count("RunningInserts");
    return inner_.RunningInserts(running_for);
  }
  void EnsureSchema(const std::string& name) override {
    Count("EnsureSchema");
    inner_.EnsureSchema(name);
  }
  WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override {
    Count("ReplaceTable");
    return inner_.ReplaceTable(relation, select_sql, std::move(ledger));
  }
  WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql, const std::string& date_column,
                               DateWindow window, LedgerEntry ledger, DateRangeMode mode) override {
    Count("ReplaceDateRange");
    return inner_.ReplaceDateRange(relation, select_sql, date_column, window, std::move(ledger), mode);
  }
  WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override {
    Count("ReplaceView");
    return inner_.ReplaceView(relation, select_sql, std::move(ledger));
  }
  WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) override {
    Count("LoadSeed");
    return inner_.LoadSeed(relation, seed, std::move(ledger));
  }
  std::vector<WriteResult> RecordMaterialized(const std::vector<std::pair<Relation, LedgerEntry>>& entries) override {
    Count("RecordMaterialized");
    return inner_.RecordMaterialized(entries);
  }
  std::vector<LedgerEntry> ReadLedger() override {
    Count("ReadLedger");
    return inner_.ReadLedger();
  }
  void DropRelation(const Relation& relation) override {
    Count("DropRelation");
    inner_.DropRelation(relation);
  }
  void Interrupt() override { inner_.Interrupt(); }
  void ObserveStatements(StatementObserver observer) override { inner_.ObserveStatements(std::move(observer)); }

 private:
  void Count(const std::string& method) { ++calls_[method]; }
  Warehouse& inner_;
  std::map<std::string, int> calls_;
  std::vector<std::pair<std::string, double>> reads_;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// "create 12, no_op 3": counts by name.
std::string CountsText(const std::map<std::string, int>& counts) {
  std::string text;
  int sum = 0;
  for (const auto& [name, count] : counts) {
    text += (text.empty() ? "" : ", ") + name + " " + std::to_string(count);
    sum += count;
  }
  return (text.empty() ? "none" : text) + " (" + std::to_string(sum) + " in all)";
}

// "name type" per line: the columns of every adopted table (written by generate_virtual_project.py).
std::vector<ColumnSpec> AdoptedColumns(const std::filesystem::path& project) {
  std::ifstream in(project / "adopted_columns.txt");
  if (!in) throw std::runtime_error("no adopted_columns.txt in " + project.string());
  std::vector<ColumnSpec> columns;
  std::string name, type;
  while (in >> name >> type) columns.push_back({name, type});
  return columns;
}

std::string ColumnList(const Warehouse& warehouse, const std::vector<ColumnSpec>& columns) {
  std::string list;
  for (const ColumnSpec& column : columns) {
    list += (list.empty() ? "" : ", ") + sql::QuoteIdentifier(warehouse.dialect(), column.name) + " " + column.type;
  }
  return list;
}

void CreateAdoptedTables(Warehouse& warehouse, const Definitions& definitions, const std::string& name_space,
                         const std::vector<ColumnSpec>& columns) {
  warehouse.EnsureSchema(name_space);
  for (const Asset& asset : definitions.assets()) {
    const auto* table = std::get_if<ExternalTable>(&asset.compute);
    if (table == nullptr) continue;
    warehouse.Execute("CREATE TABLE IF NOT EXISTS " + warehouse.QualifiedName({name_space, table->table_name}) + " (" +
                      ColumnList(warehouse, columns) +
                      ") ENGINE = MergeTree ORDER BY (_replay_partition, _replay_offset)");
  }
}

// Deploys the first two pipelines as two deployments, the way `backfill` + `publish` leave them for the catalog and
// the metadata: each object's physical relation (a stand-in Memory table with its columns), its object rows, a
// backfilled deployment row, and the logical views bound to the physical relations.
void DeployTwoPipelines(Warehouse& warehouse, const Definitions& definitions, const std::string& name_space) {
  const VirtualPlan first = PlanVirtual(definitions, ReadVirtualActualState(warehouse, name_space),
                                        warehouse.capabilities(), {}, SystemClock());
  DeploymentMetadata metadata(warehouse);
  metadata.EnsureTables();
  for (size_t p = 0; p < 2 && p < definitions.pipelines().size(); ++p) {
    const std::string& pipeline = definitions.pipelines()[p].name;
    const auto day = std::chrono::system_clock::time_point(std::chrono::hours(24 * (20666 + p)));
    const std::string id = NewDeploymentId(FixedClock(day));
    const std::string at = FormatUtc(day);
    std::vector<ObjectRow> rows;
    std::vector<ViewBinding> bindings;
    for (const VirtualObject& object : first.objects) {
      if (definitions.Find(object.model)->pipeline != pipeline) continue;
      const std::string physical = PhysicalName(object.logical, id);
      warehouse.Execute("CREATE TABLE " + warehouse.QualifiedName({name_space, physical}) + " (" +
                        ColumnList(warehouse, object.columns) + ") ENGINE = Memory");
      json columns = json::array();
      for (const ColumnSpec& column : object.columns) columns.push_back({column.name, column.type});
      rows.push_back(ObjectRow{id, "deployment", name_space, object.logical, object.object_type, physical,
                               object.model.name(), "create", false, object.fingerprint, columns.dump(),
                               object.canonical_query, at});
      bindings.push_back({object.logical, physical});
    }
    metadata.Append(rows);
    metadata.Append(DeploymentRow{id, name_space, DeploymentState::kBackfilled, first.fingerprint, "offsets", at,
                                  VirtualPlanJson(first), at, "bench"});
    BindViews(warehouse, name_space, bindings);
  }
}

struct CaseResult {
  std::string name;
  std::map<std::string, int> calls;
  bool calls_stable = true;  // equal in every round
  size_t relations = 0, bindings = 0, objects = 0, deployments = 0;
  std::map<std::string, int> actions;
  std::vector<std::vector<std::pair<std::string, double>>> reads;  // per round
  std::vector<double> load_ms, read_ms, plan_ms, total_ms;
};

CaseResult RunPlan(const std::string& name, Warehouse& warehouse, const std::filesystem::path& project,
                   const LoadOptions& options, int rounds) {
  CaseResult result;
  result.name = name;
  for (int round = 0; round < rounds; ++round) {
    CountingWarehouse counting(warehouse);
    const auto t0 = std::chrono::steady_clock::now();
    const Project loaded = LoadProject(project, options);
    const auto t1 = std::chrono::steady_clock::now();
    const VirtualActualState state = ReadVirtualActualState(counting, loaded.target.database);
    const auto t2 = std::chrono::steady_clock::now();
    const VirtualPlan plan = PlanVirtual(loaded.definitions, state, counting.capabilities(), {}, SystemClock());
    const auto t3 = std::chrono::steady_clock::now();
    result.load_ms.push_back(Ms(t1 - t0));
    result.read_ms.push_back(Ms(t2 - t1));
    result.plan_ms.push_back(Ms(t3 - t2));
    result.total_ms.push_back(Ms(t3 - t0));
    result.reads.push_back(counting.reads());
    if (round == 0) {
      result.calls = counting.calls();
      result.relations = state.relations.size();
      result.bindings = state.bindings.size();
      result.objects = state.objects.size();
      result.deployments = state.deployments.size();
      for (const VirtualObject& object : plan.objects) ++result.actions[ObjectActionName(object.action)];
    } else if (counting.calls() != result.calls) {
      result.calls_stable = false;
    }
  }
  return result;
}

struct ProjectResult {
  std::string project;
  size_t models = 0, pipelines = 0;
  std::vector<double> compile_ms;       // warm: over its own unchanged output
  std::vector<double> compile_cold_ms;  // into a new folder
  std::vector<CaseResult> cases;
};

// `index` makes the database (and so the namespace of the metadata rows) the project's own within this process.
ProjectResult RunProject(const std::filesystem::path& project, int index, int rounds,
                         const testing::ClickHouseTestServer& server) {
  ProjectResult result;
  result.project = project.string();
  LoadOptions options;
  options.database =
      LoadProjectSettings(project, {}).target.database + "_" + std::to_string(::getpid()) + "_" + std::to_string(index);
  const auto compile = [&](const std::filesystem::path& target_dir) {
    const auto start = std::chrono::steady_clock::now();
    const Project loaded = LoadProject(project, options);
    const ArtifactSummary summary = WriteArtifacts(loaded.definitions, target_dir);
    result.models = summary.models;
    result.pipelines = summary.pipelines;
    return Ms(std::chrono::steady_clock::now() - start);
  };
  // Cold: into a folder never used before (removed only after the rounds: creating files where files were just
  // deleted costs ext4 several times more). Warm: over its own unchanged output, which it leaves as it is.
  std::vector<std::filesystem::path> cold_dirs;
  for (int round = 0; round < rounds; ++round) {
    cold_dirs.push_back(project / ("target_cold_" + std::to_string(round)));
    std::filesystem::remove_all(cold_dirs.back());
    result.compile_cold_ms.push_back(compile(cold_dirs.back()));
  }
  for (const std::filesystem::path& dir : cold_dirs) std::filesystem::remove_all(dir);
  compile(project / "target");
  for (int round = 0; round < rounds; ++round) result.compile_ms.push_back(compile(project / "target"));

  const Project loaded = LoadProject(project, options);
  const std::string& name_space = loaded.target.database;
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(testing::ClickHouseTestConfig(server, name_space));
  const std::string drop = "DROP DATABASE IF EXISTS " + sql::QuoteIdentifier(warehouse->dialect(), name_space);
  warehouse->Execute(drop);
  try {
    CreateAdoptedTables(*warehouse, loaded.definitions, name_space, AdoptedColumns(project));
    DeploymentMetadata(*warehouse).EnsureTables();
    result.cases.push_back(RunPlan("empty", *warehouse, project, options, rounds));
    DeployTwoPipelines(*warehouse, loaded.definitions, name_space);
    result.cases.push_back(RunPlan("deployed", *warehouse, project, options, rounds));
  } catch (...) {
    warehouse->Execute(drop);
    throw;
  }
  warehouse->Execute(drop);
  return result;
}

void Print(const ProjectResult& result) {
  const double compile = Median(result.compile_ms);
  std::printf("%s: %zu models, %zu pipelines\n", result.project.c_str(), result.models, result.pipelines);
  std::printf("  compile (load + artifacts): warm %9.1f ms, cold %9.1f ms\n", compile, Median(result.compile_cold_ms));
  for (const CaseResult& c : result.cases) {
    const double read = Median(c.read_ms), plan = Median(c.plan_ms), total = Median(c.total_ms);
    std::printf(
        "  plan, %-8s catalog: load %9.1f ms + read %7.1f ms + plan %7.1f ms = %9.1f ms  (%.2fx warm compile; "
        "read + plan %.2fx)\n",
        c.name.c_str(), Median(c.load_ms), read, plan, total, total / compile, (read + plan) / compile);
    std::printf(
        "    warehouse calls: %s%s; read %zu relations, %zu bindings, %zu object rows, %zu deployment rows; "
        "objects: %s\n",
        CountsText(c.calls).c_str(), c.calls_stable ? "" : ", NOT equal in every round", c.relations, c.bindings,
        c.objects, c.deployments, CountsText(c.actions).c_str());
    for (size_t r = 0; r < c.reads.front().size(); ++r) {
      std::vector<double> times;
      for (const auto& round : c.reads) times.push_back(round[r].second);
      std::printf("      %7.1f ms  %s\n", Median(times), c.reads.front()[r].first.c_str());
    }
    json line{{"project", result.project},
              {"models", result.models},
              {"case", c.name},
              {"compile_ms", compile},
              {"compile_cold_ms", Median(result.compile_cold_ms)},
              {"load_ms", Median(c.load_ms)},
              {"read_ms", read},
              {"plan_ms", plan},
              {"total_ms", total},
              {"calls", c.calls},
              {"relations", c.relations},
              {"bindings", c.bindings},
              {"object_rows", c.objects},
              {"actions", c.actions}};
    std::printf("result %s\n", line.dump().c_str());
  }
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: SLUICE_TEST_CLICKHOUSE_DIR=DIR virtual_plan_bench ROUNDS PROJECT...\n");
    return 2;
  }
  const int rounds = std::max(1, std::atoi(argv[1]));
  const testing::ClickHouseTestServer server = testing::RequireClickHouseTestServer();
  std::vector<ProjectResult> results;
  for (int i = 2; i < argc; ++i) {
    results.push_back(RunProject(argv[i], i - 1, rounds, server));
    Print(results.back());
  }
  bool constant = true;
  for (size_t c = 0; c < results.front().cases.size(); ++c) {
    for (const ProjectResult& result : results) {
      const CaseResult& mine = result.cases[c];
      if (!mine.calls_stable || mine.calls != results.front().cases[c].calls) constant = false;
    }
  }
  if (!constant) {
    std::printf("warehouse calls differ between project sizes (or rounds): not a constant\n");
    return 1;
  }
  std::printf("warehouse calls equal across %zu project sizes, %d rounds\n", results.size(), rounds);
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) {
  try {
    return sluice::Main(argc, argv);
  } catch (const sluice::Error& error) {
    for (const sluice::Diagnostic& diagnostic : error.diagnostics()) {
      std::fprintf(stderr, "%s: %s\n", diagnostic.code.c_str(), diagnostic.message.c_str());
    }
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 2;
  }
}
