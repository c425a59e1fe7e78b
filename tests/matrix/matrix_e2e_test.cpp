// The cross-engine matrix: every project shape under tests/matrix/shapes runs its steps (sluice commands) on
// DuckDB, PostgreSQL and ClickHouse (the servers the suite starts), and after each step the rows of its relations
// must equal DuckDB's after the same step, and each exit code DuckDB's. A shape an engine cannot run declares the
// step and the located error that refuses it; the refusal must come with nothing written. tests/matrix/README.md
// describes a shape's files and steps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
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
      env_ = {{"STREAMBUILD_CLICKHOUSE_HOST", clickhouse_.host},
              {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(clickhouse_.port)},
              {"STREAMBUILD_CLICKHOUSE_USERNAME", clickhouse_.username},
              {"STREAMBUILD_CLICKHOUSE_PASSWORD", clickhouse_.password}};
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
    // The type names the shapes' casts use, as each engine spells them.
    const bool clickhouse = engine == "clickhouse";
    const std::map<std::string, std::string> placeholders = {
        {"@NS@", ns_},
        {"@ADAPTER@", engine},
        {"@CONNECTION@", connection},
        {"@BIGINT@", clickhouse ? "Int64" : "BIGINT"},
        {"@VARCHAR@", clickhouse ? "String" : "VARCHAR"},
        {"@DATE@", clickhouse ? "Date" : "DATE"}};
    for (const auto& entry : std::filesystem::recursive_directory_iterator(project_.root())) {
      if (!entry.is_regular_file()) continue;
      std::string text = ReadText(entry.path());
      std::string filled = text;
      for (const auto& [placeholder, value] : placeholders) Replace(filled, placeholder, value);
      if (filled != text) std::ofstream(entry.path(), std::ios::trunc) << filled;
    }
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
    std::unique_ptr<Warehouse> warehouse;
    if (engine_ == "duckdb") {
      if (!std::filesystem::exists(project_.root() / "warehouse.duckdb")) return {"<missing>"};
      warehouse = DuckDbWarehouse::Open(project_.root() / "warehouse.duckdb", true, {});
    } else if (engine_ == "postgres") {
      warehouse = OpenWarehouse(PostgresTestConfig(postgres_, database_));
    } else {
      warehouse = OpenWarehouse(ClickHouseTestConfig(clickhouse_, "default"));
    }
    std::string name = relation;
    Replace(name, "@NS@", ns_);
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

  void Copy(const std::string& from, const std::string& to) const { project_.Write(to, project_.Read(from)); }

 private:
  std::string engine_;
  ScratchProject project_;
  std::string ns_;
  std::string database_;
  PostgresTestServer postgres_;
  ClickHouseTestServer clickhouse_;
  std::map<std::string, std::string> env_;
};

struct Cell {
  std::string shape;
  std::string engine;
};

std::vector<Cell> Cells() {
  std::vector<Cell> cells;
  std::vector<std::string> shapes;
  for (const auto& entry : std::filesystem::directory_iterator(kShapes)) {
    if (entry.is_directory()) shapes.push_back(entry.path().filename().string());
  }
  std::sort(shapes.begin(), shapes.end());
  for (const std::string& shape : shapes) {
    for (const std::string& engine : kEngines) {
      if (engine != "duckdb") cells.push_back({shape, engine});
    }
  }
  return cells;
}

void PrintTo(const Cell& cell, std::ostream* out) { *out << cell.shape << " on " << cell.engine; }

class Matrix : public ::testing::TestWithParam<Cell> {};

// What a shape's steps left in its relations, after each step, and each step's exit code.
struct Trace {
  std::vector<int> exit_codes;
  std::vector<std::map<std::string, std::vector<std::string>>> rows;  // per step: relation → rows
};

TEST_P(Matrix, RunsEveryStepLikeDuckDb) {
  const Cell& cell = GetParam();
  const json shape = json::parse(ReadText(kShapes / cell.shape / "matrix.json"));
  const json refusal = shape.contains("refused") && shape["refused"].contains(cell.engine)
                           ? shape["refused"][cell.engine]
                           : json(nullptr);

  auto trace = [&](const std::string& engine, size_t steps) {
    EngineProject project(cell.shape, engine);
    Trace result;
    for (size_t i = 0; i < steps; ++i) {
      const json& step = shape["steps"][i];
      if (step.contains("copy")) {  // a change to the project, e.g. a model edited between two deployments
        project.Copy(step["copy"][0].get<std::string>(), step["copy"][1].get<std::string>());
        result.exit_codes.push_back(0);
        result.rows.push_back(result.rows.empty() ? std::map<std::string, std::vector<std::string>>{}
                                                  : result.rows.back());
        continue;
      }
      const std::vector<std::string> args = step["args"].get<std::vector<std::string>>();
      ProcessResult run = project.Run(args);
      result.exit_codes.push_back(run.exit_code);
      const bool refused = engine != "duckdb" && !refusal.is_null() && i == refusal["step"].get<size_t>();
      if (!refused) EXPECT_EQ(run.exit_code, step.value("exit", 0)) << engine << ": sluice " << step["args"].dump()
                                                                    << "\n" << run.out << run.err;
      std::map<std::string, std::vector<std::string>> rows;
      for (const auto& [relation, order_by] : shape["relations"].items()) {
        rows[relation] = project.Rows(relation, order_by.get<std::string>());
      }
      result.rows.push_back(rows);
      if (refused) {
        EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
        EXPECT_NE(run.err.find(refusal["code"].get<std::string>()), std::string::npos) << run.err;
        EXPECT_NE(run.err.find(refusal["file"].get<std::string>()), std::string::npos) << run.err;
      }
    }
    return result;
  };

  const size_t steps = shape["steps"].size();
  const Trace reference = trace("duckdb", steps);
  // The reference itself: every relation was written by the end, so an engine that writes nothing cannot pass.
  for (const auto& [relation, rows] : reference.rows.back()) {
    EXPECT_FALSE(rows.empty() || rows.front() == "<missing>") << "DuckDB left " << relation << " empty or missing";
  }
  const size_t engine_steps = refusal.is_null() ? steps : refusal["step"].get<size_t>() + 1;
  const Trace actual = trace(cell.engine, engine_steps);
  for (size_t i = 0; i < engine_steps; ++i) {
    const std::string step = "step " + std::to_string(i) + " (" + shape["steps"][i].dump() + ")";
    if (shape["steps"][i].contains("copy")) continue;
    if (!refusal.is_null() && i == refusal["step"].get<size_t>()) {
      // Refused: the relations are as the step before left them.
      if (i > 0) EXPECT_EQ(actual.rows[i], actual.rows[i - 1]) << step << " was refused but wrote";
      continue;
    }
    for (const auto& [relation, rows] : reference.rows[i]) {
      EXPECT_EQ(actual.rows[i].at(relation), rows) << step << ": " << relation;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Matrix, ::testing::ValuesIn(Cells()), [](const auto& info) {
  std::string name = info.param.shape + "_on_" + info.param.engine;
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
});

}  // namespace
}  // namespace sluice::testing
