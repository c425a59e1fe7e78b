// Test support for e2e tests of runs on the `shop` fixture: the DuckDB file's data, and commands that must succeed.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {

// Every row of a query on the project's warehouse.duckdb (opened read-only), each row's values joined by '|'.
inline std::vector<std::string> Rows(const ScratchProject& project, const std::string& sql) {
  auto warehouse = DuckDbWarehouse::Open(project.root() / "warehouse.duckdb", true, {});
  std::vector<std::string> rows;
  for (const auto& row : warehouse->Query(sql).rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "|" : "") + row[i].value_or("NULL");
    rows.push_back(line);
  }
  return rows;
}

// The first row of a query, or "<no rows>".
inline std::string One(const ScratchProject& project, const std::string& sql) {
  std::vector<std::string> rows = Rows(project, sql);
  return rows.empty() ? "<no rows>" : rows.front();
}

// Runs sluice and expects exit 0.
inline ProcessResult MustRun(const ScratchProject& project, const std::vector<std::string>& args) {
  ProcessResult result = project.Run(args);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  return result;
}

// `sluice runs --json`'s list, newest first.
inline nlohmann::json RunsJson(const ScratchProject& project) {
  return nlohmann::json::parse(MustRun(project, {"runs", "--json"}).out)["runs"];
}

}  // namespace sluice::testing
