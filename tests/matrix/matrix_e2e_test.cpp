// The cross-engine matrix: every project shape under tests/matrix/shapes runs its steps (sluice commands, changes to
// its files or to the warehouse) on DuckDB, PostgreSQL and ClickHouse (the servers the suite starts) at once, and
// after each step the rows of its relations must equal DuckDB's after the same step, each exit code and error be the
// step's, and what a build or backfill sent be what the `plan` before it showed. A shape an engine cannot run
// declares the step and the located error that refuses it; the refusal must come with nothing written.
// tests/matrix/README.md describes a shape's files and steps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

const std::filesystem::path kShapes = std::filesystem::path(SLUICE_SOURCE_DIR) / "tests/matrix/shapes";
const std::vector<std::string> kEngines = {"duckdb", "postgres", "clickhouse"};

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Replace(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// A value as every engine prints it alike: numbers without trailing zeros (PostgreSQL's numeric 10.50, DuckDB's
// DECIMAL 10.50 and ClickHouse's Float64 10.5 are one value), everything else as is.
std::string Canonical(const std::optional<std::string>& value) {
  if (!value) return "NULL";
  const std::string& text = *value;
  if (text.empty() || text.find_first_not_of("0123456789.-+e") != std::string::npos) return text;
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(number)) return text;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", number);
  return buffer;
}

// One engine's copy of a shape: the project written for it, its warehouse, and how to run sluice on it.
class EngineProject {
 public:
  EngineProject(const std::string& shape, const std::string& engine) : engine_(engine), project_("tests/matrix/shapes/" + shape) {
    std::string connection;
    if (engine == "duckdb") {
      ns_ = "m";
      connection = "path = \"warehouse.duckdb\"\n";
    } else if (engine == "postgres") {
      postgres_ = RequirePostgresTestServer();
      ns_ = "m";
      database_ = CreatePostgresTestDatabase(postgres_, shape);
      connection = "host = \"" + postgres_.host + "\"\nport = " + std::to_string(postgres_.port) + "\nusername = \"" +
                   postgres_.user + "\"\npassword = \"${ENV:MATRIX_PASSWORD}\"\ndbname = \"" + database_ + "\"\n";
      env_["MATRIX_PASSWORD"] = postgres_.password;
    } else {
      clickhouse_ = RequireClickHouseTestServer();
      ns_ = UniqueClickHouseDatabase(shape);
      env_ = ClickHouseTestEnvironment(clickhouse_);
    }
    // Every text file: placeholders filled in; `name.<engine>.sql` replaces `name.sql` on that engine.
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(project_.root())) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    for (const std::filesystem::path& file : files) {
      const std::string name = file.filename().string();
      for (const std::string& other : kEngines) {
        if (!name.ends_with("." + other + ".sql")) continue;
        if (other == engine) {
          std::filesystem::rename(file, file.parent_path() / (name.substr(0, name.size() - other.size() - 5) + ".sql"));
        } else {
          std::filesystem::remove(file);
        }
      }
    }
    // The type names the shapes' casts use, as each engine spells them, and what ends a CREATE TABLE.
    const bool clickhouse = engine == "clickhouse";
    placeholders_ = {{"@NS@", ns_},
                     {"@ADAPTER@", engine},
                     {"@CONNECTION@", connection},
                     {"@BIGINT@", clickhouse ? "Int64" : "BIGINT"},
                     {"@INT@", clickhouse ? "Int32" : "INTEGER"},
                     {"@VARCHAR@", clickhouse ? "String" : "VARCHAR"},
                     {"@DATE@", clickhouse ? "Date" : "DATE"},
                     {"@TIMESTAMP@", clickhouse ? "DateTime" : "TIMESTAMP"},
                     {"@TABLE@", clickhouse ? "ENGINE = MergeTree() ORDER BY tuple()" : ""}};
    for (const auto& entry : std::filesystem::recursive_directory_iterator(project_.root())) {
      if (!entry.is_regular_file()) continue;
      std::string text = ReadText(entry.path());
      const std::string filled = Filled(text);
      if (filled != text) std::ofstream(entry.path(), std::ios::trunc) << filled;
    }
  }

  ~EngineProject() {
    if (engine_ != "clickhouse") return;  // PostgreSQL's database and DuckDB's file go with the test's folder
    try {
      std::unique_ptr<Warehouse> warehouse = Open(false);
      for (const auto& row : warehouse->Query("SELECT name FROM system.databases WHERE name = '" + ns_ +
                                              "' OR startsWith(name, '" + ns_ + "_')")
                                 .rows) {
        warehouse->Execute("DROP DATABASE IF EXISTS " + row[0].value_or(ns_));
      }
    } catch (const Error&) {
      // The server's databases of a failed test are left for the server's folder to take.
    }
  }

  // `text` with the shape's placeholders filled in for this engine.
  std::string Filled(std::string text) const {
    for (const auto& [placeholder, value] : placeholders_) Replace(text, placeholder, value);
    return text;
  }

  // Runs a `sql` step: each statement, placeholders filled in, in the target's namespace (created when missing).
  void Execute(const std::vector<std::string>& statements) const {
    std::unique_ptr<Warehouse> warehouse = Open(false);
    warehouse->EnsureSchema(ns_);
    for (const std::string& statement : statements) warehouse->Execute(Filled(statement));
  }

  ProcessResult Run(const std::vector<std::string>& args) const {
    ProcessResult result = project_.Run(args, env_);
    for (const auto& [name, value] : env_) {
      if (name.find("PASSWORD") == std::string::npos) continue;
      EXPECT_EQ(result.out.find(value), std::string::npos) << "a password in the output of " << args[0];
      EXPECT_EQ(result.err.find(value), std::string::npos) << "a password in the errors of " << args[0];
    }
    return result;
  }

  // relation (with @NS@ filled in) → its rows ordered by `order_by`, or "<missing>" when it cannot be read.
  std::vector<std::string> Rows(const std::string& relation, const std::string& order_by) const {
    if (engine_ == "duckdb" && !std::filesystem::exists(project_.root() / "warehouse.duckdb")) return {"<missing>"};
    std::unique_ptr<Warehouse> warehouse = Open(true);
    const std::string name = Filled(relation);
    std::vector<std::string> rows;
    try {
      for (const auto& row : warehouse->Query("SELECT * FROM " + name + " ORDER BY " + order_by).rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) line += (i ? "|" : "") + Canonical(row[i]);
        rows.push_back(line);
      }
    } catch (const Error&) {
      return {"<missing>"};
    }
    return rows;
  }

  const std::string& ns() const { return ns_; }
  const std::filesystem::path& root() const { return project_.root(); }

  void Copy(const std::string& from, const std::string& to) const { project_.Write(to, project_.Read(from)); }
  void Remove(const std::string& file) const { project_.Remove(file); }

 private:
  std::unique_ptr<Warehouse> Open(bool read_only) const {
    if (engine_ == "duckdb") return DuckDbWarehouse::Open(project_.root() / "warehouse.duckdb", read_only, {});
    if (engine_ == "postgres") return OpenWarehouse(PostgresTestConfig(postgres_, database_));
    return OpenWarehouse(ClickHouseTestConfig(clickhouse_, "default"));
  }

  std::string engine_;
  ScratchProject project_;
  std::string ns_;
  std::string database_;
  PostgresTestServer postgres_;
  ClickHouseTestServer clickhouse_;
  std::map<std::string, std::string> env_;
  std::map<std::string, std::string> placeholders_;
};

// One step of what `plan` showed: its name and the text of its step file (each statement followed by ";\n"; in a
// replay step, the boundary captured at run time is the placeholder {replay_boundary}).
struct PlannedStep {
  std::string name;
  std::string text;
};

// The steps of the plan that `plan` last wrote under target/run/plan/ (or target/run/plan/virtual/) for `mode`
// (direct | virtual), from its workflow.json and step files; empty when it wrote none.
std::vector<PlannedStep> PlannedSteps(const std::filesystem::path& root, const std::string& mode) {
  for (const char* folder : {"target/run/plan", "target/run/plan/virtual"}) {
    const std::filesystem::path dir = root / folder;
    if (!std::filesystem::exists(dir / "plan.json")) continue;
    const json plan = json::parse(ReadText(dir / "plan.json"), nullptr, false);
    if (!plan.is_object() || plan.value("mode", "") != mode) continue;
    std::vector<PlannedStep> steps;
    for (const json& step : json::parse(ReadText(dir / "workflow.json"))["steps"]) {
      steps.push_back({step["name"].get<std::string>(), ReadText(dir / step["file"].get<std::string>())});
    }
    return steps;
  }
  return {};
}

// statements.sql as a ClickHouse build or backfill writes it (`-- <step> (sha256 …)` then the statement and ";"),
// as step name → its statements, each followed by ";\n", in the order sent.
std::map<std::string, std::string> SentSteps(const std::string& text) {
  static const std::regex kHeader(R"(-- (\S+) \(sha256 [0-9a-f]{64}\))");
  std::map<std::string, std::string> steps;
  std::string* current = nullptr;
  std::string pending;  // the blank lines seen since the last statement line
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_match(line, match, kHeader)) {
      current = &steps[match[1].str()];
      pending.clear();
    } else if (current != nullptr && line.empty()) {
      pending += "\n";
    } else if (current != nullptr) {
      *current += pending + line + "\n";
      pending.clear();
    }
  }
  return steps;
}

// Whether `sent` is `planned` with each {replay_boundary} replaced by some text.
bool SameStatements(const std::string& planned, const std::string& sent) {
  const std::string placeholder = "{replay_boundary}";
  std::vector<std::string> pieces;
  size_t from = 0;
  for (size_t at = planned.find(placeholder); at != std::string::npos; at = planned.find(placeholder, from)) {
    pieces.push_back(planned.substr(from, at - from));
    from = at + placeholder.size();
  }
  pieces.push_back(planned.substr(from));
  if (pieces.size() == 1) return planned == sent;
  if (!sent.starts_with(pieces.front()) || !sent.ends_with(pieces.back())) return false;
  size_t at = pieces.front().size();
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    at = sent.find(pieces[i], at);
    if (at == std::string::npos) return false;
    at += pieces[i].size();
  }
  return at <= sent.size() - pieces.back().size();
}

// The identifiers of a quoted, dot-separated name ("a"."b"), in order; empty when `text` is not one.
std::vector<std::string> QuotedParts(const std::string& text) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < text.size() && text[i] == '"') {
    std::string part;
    for (++i; i < text.size(); ++i) {
      if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        part += '"';
        ++i;
      } else if (text[i] == '"') {
        break;
      } else {
        part += text[i];
      }
    }
    parts.push_back(part);
    if (++i < text.size() && text[i] == '.') ++i;
  }
  return i == text.size() ? parts : std::vector<std::string>{};
}

// What `plan` showed against what the next build or backfill sent (written under `sent`: its target/run/build/ or
// target/run/backfill/): one line per difference. ClickHouse: each step's statements exactly as planned, the replay
// boundary aside, and no step sent that was not planned. DuckDB and PostgreSQL write through the engine's run path,
// whose statements (statements/<namespace>/<relation>.sql) embed the SELECT: each planned
// `CREATE OR REPLACE TABLE|VIEW <relation> AS <SELECT>` must have its SELECT, byte for byte, in its relation's.
std::vector<std::string> PlanMismatches(const std::vector<PlannedStep>& planned, const std::filesystem::path& sent) {
  std::vector<std::string> problems;
  size_t compared = 0;  // planned steps held against what was sent: none would make the check vacuous
  auto result = [&] {
    if (compared == 0) problems.push_back("no planned statement was compared with " + sent.string());
    return problems;
  };
  const std::string statements = ReadText(sent / "statements.sql");
  if (!statements.empty()) {
    const std::map<std::string, std::string> steps = SentSteps(statements);
    std::set<std::string> names;
    for (const PlannedStep& step : planned) {
      names.insert(step.name);
      if (step.text.empty()) continue;
      ++compared;
      const auto it = steps.find(step.name);
      if (it == steps.end()) {
        problems.push_back(step.name + ": planned, never sent");
      } else if (!SameStatements(step.text, it->second)) {
        problems.push_back(step.name + ": planned\n" + step.text + "but sent\n" + it->second);
      }
    }
    for (const auto& [name, text] : steps) {
      if (!names.count(name)) problems.push_back(name + ": sent, never planned:\n" + text);
    }
    return result();
  }
  for (const PlannedStep& step : planned) {
    const size_t as = step.text.find(" AS\n");
    std::string head = as == std::string::npos ? "" : step.text.substr(0, as);
    for (const char* prefix : {"CREATE OR REPLACE TABLE ", "CREATE OR REPLACE VIEW "}) {
      if (head.starts_with(prefix)) head = head.substr(std::string(prefix).size());
    }
    const std::vector<std::string> relation = QuotedParts(head);
    if (relation.size() < 2) continue;  // not a write: the schemas, the audits
    std::string select = step.text.substr(as + 4);
    if (select.ends_with(";\n")) select.resize(select.size() - 2);
    const std::filesystem::path file =
        sent / "statements" / relation[relation.size() - 2] / (relation.back() + ".sql");
    const std::string written = ReadText(file);
    ++compared;
    if (written.empty()) {
      problems.push_back(step.name + ": planned, never sent (no " + file.string() + ")");
    } else if (written.find(select) == std::string::npos) {
      problems.push_back(step.name + ": planned\n" + select + "\nbut sent\n" + written);
    }
  }
  return result();
}

std::vector<std::string> Shapes() {
  std::vector<std::string> shapes;
  for (const auto& entry : std::filesystem::directory_iterator(kShapes)) {
    if (entry.is_directory()) shapes.push_back(entry.path().filename().string());
  }
  std::sort(shapes.begin(), shapes.end());
  return shapes;
}

// The parameter names the shape; each test runs it on every engine at once, one thread each.
class Matrix : public ::testing::TestWithParam<std::string> {};

// What a shape's steps left in its relations, after each step.
struct Trace {
  std::vector<std::map<std::string, std::vector<std::string>>> rows;  // per step: relation → rows
};

TEST_P(Matrix, RunsEveryStepLikeDuckDb) {
  const std::string shape_name = GetParam();
  const json shape = json::parse(ReadText(kShapes / shape_name / "matrix.json"));
  const size_t steps = shape["steps"].size();
  auto refusal_on = [&](const std::string& engine) {
    return engine != "duckdb" && shape.contains("refused") && shape["refused"].contains(engine)
               ? shape["refused"][engine]
               : json(nullptr);
  };

  auto read_rows = [&](const EngineProject& project) {
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& [relation, order_by] : shape["relations"].items()) {
      rows[relation] = project.Rows(relation, order_by.get<std::string>());
    }
    return rows;
  };
  // Runs the steps on `engine` (up to a refusal), checking each exit code, error and plan on the way.
  auto trace = [&](const std::string& engine) {
    const json refusal = refusal_on(engine);
    const size_t last = refusal.is_null() ? steps : refusal["step"].get<size_t>() + 1;
    EngineProject project(shape_name, engine);
    Trace result;
    std::map<std::string, std::vector<PlannedStep>> planned;  // mode → the steps the latest `plan` showed
    for (size_t i = 0; i < last; ++i) {
      const json& step = shape["steps"][i];
      const std::string what = engine + ": step " + std::to_string(i) + " " + step.dump();
      const bool skipped = step.contains("engines") && !std::count(step["engines"].begin(), step["engines"].end(), engine);
      if (skipped) {
        // Not for this engine: what the others do here, it does by other means (e.g. materialized views).
      } else if (step.contains("copy")) {  // a change to the project, e.g. a model edited between two deployments
        project.Copy(step["copy"][0].get<std::string>(), step["copy"][1].get<std::string>());
      } else if (step.contains("remove")) {
        project.Remove(step["remove"].get<std::string>());
      } else if (step.contains("sql")) {  // a change to the warehouse, e.g. rows landing in an adopted table
        project.Execute(step["sql"].get<std::vector<std::string>>());
      }
      if (skipped || !step.contains("args")) {
        result.rows.push_back(read_rows(project));
        continue;
      }
      const std::vector<std::string> args = step["args"].get<std::vector<std::string>>();
      const ProcessResult run = project.Run(args);
      const std::string output = run.out + run.err;
      if (std::getenv("MATRIX_VERBOSE") != nullptr) std::printf("== %s\n%s", what.c_str(), output.c_str());
      if (!refusal.is_null() && i + 1 == last) {
        EXPECT_EQ(run.exit_code, 1) << what << " is not refused\n" << output;
        EXPECT_NE(output.find(refusal["code"].get<std::string>()), std::string::npos) << what << "\n" << output;
        EXPECT_NE(output.find(refusal["file"].get<std::string>()), std::string::npos) << what << "\n" << output;
      } else {
        EXPECT_EQ(run.exit_code, step.value("exit", 0)) << what << "\n" << output;
        for (const json& part : step.value("error", json::array())) {
          EXPECT_NE(output.find(project.Filled(part.get<std::string>())), std::string::npos)
              << what << ": no " << part << " in\n" << output;
        }
      }
      // plan's SQL is the SQL executed: a build (direct plan) or a backfill (virtual plan) sends what `plan` showed.
      if (args[0] == "plan" && run.exit_code == 0) {
        for (const char* mode : {"direct", "virtual"}) planned[mode] = PlannedSteps(project.root(), mode);
      } else if ((args[0] == "build" || args[0] == "backfill") && run.exit_code == 0) {
        const std::string mode = args[0] == "build" ? "direct" : "virtual";
        if (!planned[mode].empty()) {
          for (const std::string& problem : PlanMismatches(planned[mode], project.root() / "target/run" / args[0])) {
            ADD_FAILURE() << what << ": what ran is not what `plan` showed: " << problem;
          }
        }
        planned[mode].clear();
      }
      result.rows.push_back(read_rows(project));
    }
    return result;
  };

  // The engines at once: each waits on its server (or DuckDB's file) more than on the CPU.
  std::map<std::string, Trace> traces;
  std::mutex traces_mutex;
  std::vector<std::thread> threads;
  for (const std::string& engine : kEngines) {
    threads.emplace_back([&, engine] {
      try {
        Trace traced = trace(engine);
        std::lock_guard<std::mutex> lock(traces_mutex);
        traces[engine] = std::move(traced);
      } catch (const std::exception& error) {
        ADD_FAILURE() << engine << ": " << error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (traces.size() != kEngines.size()) return;

  const Trace& reference = traces.at("duckdb");
  // The reference itself: every relation was written by the end, so an engine that writes nothing cannot pass.
  for (const auto& [relation, rows] : reference.rows.back()) {
    EXPECT_FALSE(rows.empty() || rows.front() == "<missing>") << "DuckDB left " << relation << " empty or missing";
  }
  for (const std::string& engine : kEngines) {
    const json refusal = refusal_on(engine);
    const Trace& actual = traces.at(engine);
    for (size_t i = 0; i < actual.rows.size(); ++i) {
      const json& step = shape["steps"][i];
      const std::string what = engine + ": step " + std::to_string(i) + " (" + step.dump() + ")";
      if (!step.contains("args") && !step.contains("sql")) continue;
      if (!step.value("compare", true)) continue;  // the rows arrive by the next step's means
      if (!refusal.is_null() && i + 1 == actual.rows.size()) {
        // Refused: the relations are as the step before left them.
        if (i > 0) {
          EXPECT_EQ(actual.rows[i], actual.rows[i - 1]) << what << " was refused but wrote";
        }
        continue;
      }
      for (const auto& [relation, rows] : reference.rows[i]) {
        EXPECT_EQ(actual.rows[i].at(relation), rows) << what << ": " << relation;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Matrix, ::testing::ValuesIn(Shapes()), [](const auto& info) {
  std::string name = info.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
});

}  // namespace
}  // namespace sluice::testing
