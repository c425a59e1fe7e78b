// test, audit: run the project's SQL tests or its audits on the target's warehouse (engine/check_runner.hpp) and
// print a line per check (failing rows as a table under it), a summary, or with --json one document.
// `test` writes each statement it ran under target/run/tests/ (the compiled path's tail), replacing that folder.
// Exit codes: test — 0 all passed, 1 a test failed or its SQL failed; audit — 1 only when an error-severity
// audit failed or its SQL failed; 2 for an unknown path or selection.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "engine/check_runner.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

constexpr std::string_view kCompiledTests = "compiled/tests/";

// The project's warehouse for checks: read-only, or created read-write when its file does not exist yet (tests
// need no materialized model).
std::unique_ptr<Warehouse> OpenForChecks(const Project& project) {
  try {
    return OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
  } catch (const Error& error) {
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  return OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadWrite));
}

// A PATH argument relative to the project root: as typed when it names something there, else read from the
// working directory (or absolute) when it lies inside the project; otherwise as typed (it then names nothing).
std::string ProjectRelative(const std::filesystem::path& root, const std::string& typed) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  const fs::path path(typed);
  if (path.is_relative() && fs::exists(root / path, ignored)) return typed;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(path), ignored);
  const fs::path relative = absolute.lexically_relative(fs::weakly_canonical(fs::absolute(root), ignored));
  if (relative.empty() || *relative.begin() == "..") return typed;
  return relative.generic_string();
}

// target/run/tests/<the compiled path's tail>.
std::string RunPath(const TestSpec& test) {
  std::string_view path = test.path;
  if (path.starts_with(kCompiledTests)) path.remove_prefix(kCompiledTests.size());
  return std::string(path);
}

std::string Seconds(int64_t milliseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fs", static_cast<double>(milliseconds) / 1000.0);
  return text;
}

// A value as a table cell: NULL spelled out, line breaks and tabs escaped.
std::string Cell(const std::optional<std::string>& value) {
  if (!value) return "NULL";
  std::string cell;
  for (char c : *value) {
    if (c == '\n') {
      cell += "\\n";
    } else if (c == '\t') {
      cell += "\\t";
    } else {
      cell += c;
    }
  }
  return cell;
}

// Rows as an aligned table, each line indented by `indent`.
std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& indent) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) widths[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t c = 0; c < cells.size(); ++c) text += c + 1 < cells.size() ? Pad(cells[c], widths[c] + 2) : cells[c];
    return text + "\n";
  };
  std::string out = line(header);
  for (const auto& row : rows) out += line(row);
  return out;
}

// ---- test ----

// The columns a failing row of `case_index` shows.
std::vector<std::string> CaseColumns(const TestSpec& test, int64_t case_index, size_t values) {
  if (case_index >= 1 && static_cast<size_t>(case_index) <= test.cases.size()) {
    const TestCase& c = test.cases[case_index - 1];
    if (!c.columns.empty() && c.columns.size() == values) return c.columns;
    if (c.columns.empty() && values == 1) return {"row"};
  }
  std::vector<std::string> columns;
  for (size_t i = 1; i <= values; ++i) columns.push_back("value " + std::to_string(i));
  return columns;
}

std::string CaseName(const TestSpec& test, int64_t case_index) {
  if (case_index >= 1 && static_cast<size_t>(case_index) <= test.cases.size()) return test.cases[case_index - 1].name;
  return "";
}

std::string TestDetail(const TestResult& result) {
  const TestSpec& test = *result.test;
  std::string out;
  for (size_t i = 0; i < result.differences.size();) {
    const int64_t case_index = result.differences[i].case_index;
    std::vector<std::string> header = {"diff"};
    const std::vector<std::string> columns = CaseColumns(test, case_index, result.differences[i].values.size());
    header.insert(header.end(), columns.begin(), columns.end());
    header.push_back("count");
    std::vector<std::vector<std::string>> rows;
    for (; i < result.differences.size() && result.differences[i].case_index == case_index; ++i) {
      const TestDifference& difference = result.differences[i];
      std::vector<std::string> row = {difference.diff_type};
      for (const std::optional<std::string>& value : difference.values) row.push_back(Cell(value));
      row.push_back(std::to_string(difference.multiplicity));
      rows.push_back(std::move(row));
    }
    out += "  case " + std::to_string(case_index) + " " + CaseName(test, case_index) +
           " (missing: expected, not produced; unexpected: produced, not expected)\n";
    out += Table(header, rows, "    ");
  }
  for (const Diagnostic& diagnostic : result.errors) out += FormatDiagnostic(diagnostic, StyleFor(STDOUT_FILENO));
  return out;
}

std::string StatusWord(TestStatus status) {
  switch (status) {
    case TestStatus::kPass:
      return "PASS";
    case TestStatus::kFail:
      return "FAIL";
    case TestStatus::kError:
      return "ERROR";
  }
  return "ERROR";
}

json TestJson(const TestResult& result) {
  const TestSpec& test = *result.test;
  json failures = json::array();
  for (const TestDifference& difference : result.differences) {
    json values = json::array();
    for (const std::optional<std::string>& value : difference.values) values.push_back(value ? json(*value) : json());
    failures.push_back({{"case_index", difference.case_index},
                        {"case", CaseName(test, difference.case_index)},
                        {"diff_type", difference.diff_type},
                        {"columns", CaseColumns(test, difference.case_index, difference.values.size())},
                        {"values", values},
                        {"multiplicity", difference.multiplicity}});
  }
  json errors = json::array();
  for (const Diagnostic& diagnostic : result.errors) errors.push_back(DiagnosticJson(diagnostic));
  return {{"name", test.name},
          {"file", test.file},
          {"path", test.path},
          {"run_path", "target/run/tests/" + RunPath(test)},
          {"targets", test.targets},
          {"mode", TestModeName(test.mode)},
          {"partition", test.partition ? json(*test.partition) : json(nullptr)},
          {"status", TestStatusName(result.status)},
          {"duration_ms", result.duration_ms},
          {"failures", failures},
          {"errors", errors}};
}

// ---- audit ----

std::string AuditWord(AuditStatus status) {
  switch (status) {
    case AuditStatus::kPass:
      return "PASS";
    case AuditStatus::kFail:
      return "FAIL";
    case AuditStatus::kDeferred:
      return "DEFERRED";
    case AuditStatus::kError:
      return "ERROR";
  }
  return "ERROR";
}

std::string AuditLine(const AuditResult& result) {
  const AuditSpec& audit = *result.audit;
  std::string line = Pad(AuditWord(result.status), 10) + audit.name + " (" + AuditSeverityName(audit.severity) + ")";
  switch (result.status) {
    case AuditStatus::kPass:
      line += "  " + Seconds(result.duration_ms);
      break;
    case AuditStatus::kFail:
      line += "  " + FormatCount(result.failing_rows) + " failing row" + (result.failing_rows == 1 ? "" : "s") + "  " +
              audit.file + "  " + Seconds(result.duration_ms);
      break;
    case AuditStatus::kDeferred:
      line += "  " + result.deferred_reason;
      break;
    case AuditStatus::kError:
      line += "  " + audit.file;
      break;
  }
  return line + "\n";
}

std::string AuditDetail(const AuditResult& result) {
  std::string out;
  if (result.status == AuditStatus::kFail && !result.sample.columns.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : result.sample.rows) {
      std::vector<std::string> cells;
      for (const std::optional<std::string>& value : row) cells.push_back(Cell(value));
      rows.push_back(std::move(cells));
    }
    if (result.failing_rows > static_cast<int64_t>(rows.size())) {
      out += "  the first " + std::to_string(rows.size()) + " of them:\n";
    }
    out += Table(result.sample.columns, rows, "    ");
  }
  for (const Diagnostic& diagnostic : result.errors) out += FormatDiagnostic(diagnostic, StyleFor(STDOUT_FILENO));
  return out;
}

json AuditJson(const AuditResult& result) {
  const AuditSpec& audit = *result.audit;
  json errors = json::array();
  for (const Diagnostic& diagnostic : result.errors) errors.push_back(DiagnosticJson(diagnostic));
  json sample = nullptr;
  if (result.status == AuditStatus::kFail) {
    json rows = json::array();
    for (const auto& row : result.sample.rows) {
      json cells = json::array();
      for (const std::optional<std::string>& value : row) cells.push_back(value ? json(*value) : json());
      rows.push_back(cells);
    }
    sample = {{"columns", result.sample.columns}, {"rows", rows}};
  }
  return {{"name", audit.name},
          {"file", audit.file},
          {"path", audit.path},
          {"severity", AuditSeverityName(audit.severity)},
          {"referenced_models", audit.referenced_models},
          {"warmup_seconds", audit.warmup_seconds},
          {"status", AuditStatusName(result.status)},
          {"duration_ms", result.duration_ms},
          {"failing_rows", result.status == AuditStatus::kFail ? json(result.failing_rows) : json()},
          {"sample", sample},
          {"reason", result.status == AuditStatus::kDeferred ? json(result.deferred_reason) : json()},
          {"errors", errors}};
}

}  // namespace

int Test(const GlobalOptions& global, const TestOptions& options) {
  const Project& project = LoadProjectFor(global);
  TestRequest request;
  for (const std::string& path : options.paths) request.paths.push_back(ProjectRelative(project.root, path));
  request.select = options.select;
  const std::vector<const TestSpec*> tests =
      CheckingArguments([&] { return SelectTests(project.definitions, request); });
  if (tests.empty()) {
    if (options.json) {
      std::printf(
          "%s\n",
          json{{"status", "pass"}, {"counts", {{"pass", 0}, {"fail", 0}, {"error", 0}}}, {"tests", json::array()}}
              .dump(2)
              .c_str());
    } else {
      std::printf("no tests selected\n");
    }
    return 0;
  }
  std::unique_ptr<Warehouse> warehouse = OpenForChecks(project);
  const std::filesystem::path statements = project.root / "target" / "run" / "tests";
  std::map<TestStatus, size_t> counts;
  std::map<std::string, std::string> files;
  json items = json::array();
  for (const TestSpec* test : tests) {
    TestResult result = RunTest(*test, *warehouse);
    ++counts[result.status];
    files[RunPath(*test)] = result.sql;
    if (options.json) {
      items.push_back(TestJson(result));
      continue;
    }
    std::string line = Pad(StatusWord(result.status), 6) + test->name + "  (" + test->file +
                       (test->partition ? ", partition " + *test->partition : "") + ")  " +
                       Seconds(result.duration_ms) + "\n";
    if (options.verbose) {
      std::string targets;
      for (const std::string& target : test->targets) targets += (targets.empty() ? "" : ", ") + target;
      line += "      targets: " + (targets.empty() ? "(none)" : targets) + "; ran target/run/tests/" + RunPath(*test) +
              "\n";
    }
    std::printf("%s%s", line.c_str(), TestDetail(result).c_str());
    std::fflush(stdout);
  }
  ReplaceFolder(statements, files);
  const size_t failed = counts[TestStatus::kFail], errored = counts[TestStatus::kError];
  const bool ok = failed == 0 && errored == 0;
  if (options.json) {
    std::printf("%s\n", json{{"status", ok ? "pass" : "fail"},
                             {"counts", {{"pass", counts[TestStatus::kPass]}, {"fail", failed}, {"error", errored}}},
                             {"tests", items},
                             {"statements_dir", statements.string()}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("tests: %zu passed, %zu failed, %zu with errors, of %s; the statements run are in target/run/tests/\n",
                counts[TestStatus::kPass], failed, errored, Plural(tests.size(), "test").c_str());
  }
  return ok ? 0 : 1;
}

int Audit(const GlobalOptions& global, const AuditOptions& options) {
  const Project& project = LoadProjectFor(global);
  const std::vector<const AuditSpec*> audits =
      CheckingArguments([&] { return SelectAudits(project.definitions, options.select); });
  if (audits.empty()) {
    if (options.json) {
      std::printf("%s\n", json{{"status", "pass"}, {"audits", json::array()}}.dump(2).c_str());
    } else {
      std::printf("no audits selected\n");
    }
    return 0;
  }
  std::unique_ptr<Warehouse> warehouse = OpenForChecks(project);
  SystemClock clock;
  AuditRequest request;
  request.select = options.select;
  request.force = options.force;
  request.clock = &clock;
  if (!options.json) {
    request.on_result = [](const AuditResult& result) {
      std::printf("%s%s", AuditLine(result).c_str(), AuditDetail(result).c_str());
      std::fflush(stdout);
    };
  }
  const std::vector<AuditResult> results = RunAudits(project.definitions, *warehouse, request);
  std::map<AuditStatus, size_t> counts;
  bool failed = false;
  json items = json::array();
  for (const AuditResult& result : results) {
    ++counts[result.status];
    failed = failed || FailsTheCommand(result);
    items.push_back(AuditJson(result));
  }
  if (options.json) {
    std::printf("%s\n", json{{"status", failed ? "fail" : "pass"},
                             {"counts",
                              {{"pass", counts[AuditStatus::kPass]},
                               {"fail", counts[AuditStatus::kFail]},
                               {"deferred", counts[AuditStatus::kDeferred]},
                               {"error", counts[AuditStatus::kError]}}},
                             {"audits", items}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("audits: %zu passed, %zu failed, %zu deferred, %zu with errors, of %s%s\n", counts[AuditStatus::kPass],
                counts[AuditStatus::kFail], counts[AuditStatus::kDeferred], counts[AuditStatus::kError],
                Plural(results.size(), "audit").c_str(), failed ? "; an error-severity audit did not pass" : "");
  }
  return failed ? 1 : 0;
}

}  // namespace sluice::cli
