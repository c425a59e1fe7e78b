#include "service/checks.hpp"

#include <map>

#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

constexpr std::string_view kCompiledTests = "compiled/tests/";

// The project's warehouse for checks: read-only, or created read-write when its file does not exist yet.
std::unique_ptr<Warehouse> OpenForChecks(const Project& project) {
  try {
    return OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
  } catch (const Error& error) {
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  return OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadWrite));
}

// A path relative to the project root: as given when it names something there, else read from the working directory
// (or absolute) when it lies inside the project; otherwise as given (it then names nothing).
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

json Values(const std::vector<std::optional<std::string>>& values) {
  json cells = json::array();
  for (const std::optional<std::string>& value : values) cells.push_back(value ? json(*value) : json());
  return cells;
}

json Errors(const std::vector<Diagnostic>& diagnostics) {
  json errors = json::array();
  for (const Diagnostic& diagnostic : diagnostics) errors.push_back(DiagnosticJson(diagnostic));
  return errors;
}

}  // namespace

bool TestReport::passed() const {
  for (const TestResult& result : results) {
    if (result.status != TestStatus::kPass) return false;
  }
  return true;
}

TestReport RunTests(const WorkspaceOptions& workspace, const TestCommand& command,
                    const std::function<void(const TestResult&)>& on_result) {
  const Project& project = LoadProjectFor(workspace);
  TestRequest request;
  for (const std::string& path : command.paths) request.paths.push_back(ProjectRelative(project.root, path));
  request.select = command.select;
  const std::vector<const TestSpec*> tests =
      CheckingArguments([&] { return SelectTests(project.definitions, request); });
  TestReport report;
  if (tests.empty()) return report;
  std::unique_ptr<Warehouse> warehouse = OpenForChecks(project);
  report.statements_dir = project.root / "target" / "run" / "tests";
  std::map<std::string, std::string> files;
  for (const TestSpec* test : tests) {
    report.results.push_back(RunTest(*test, *warehouse));
    files[RunPath(*test)] = report.results.back().sql;
    if (on_result) on_result(report.results.back());
  }
  ReplaceFolder(report.statements_dir, files);
  return report;
}

std::string RunPath(const TestSpec& test) {
  std::string_view path = test.path;
  if (path.starts_with(kCompiledTests)) path.remove_prefix(kCompiledTests.size());
  return std::string(path);
}

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

json ToJson(const TestResult& result) {
  const TestSpec& test = *result.test;
  json failures = json::array();
  for (const TestDifference& difference : result.differences) {
    failures.push_back({{"case_index", difference.case_index},
                        {"case", CaseName(test, difference.case_index)},
                        {"diff_type", difference.diff_type},
                        {"columns", CaseColumns(test, difference.case_index, difference.values.size())},
                        {"values", Values(difference.values)},
                        {"multiplicity", difference.multiplicity}});
  }
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
          {"errors", Errors(result.errors)}};
}

json ToJson(const TestReport& report) {
  std::map<TestStatus, size_t> counts;
  json items = json::array();
  for (const TestResult& result : report.results) {
    ++counts[result.status];
    items.push_back(ToJson(result));
  }
  json out{{"status", report.passed() ? "pass" : "fail"},
           {"counts",
            {{"pass", counts[TestStatus::kPass]},
             {"fail", counts[TestStatus::kFail]},
             {"error", counts[TestStatus::kError]}}},
           {"tests", items}};
  if (!report.results.empty()) out["statements_dir"] = report.statements_dir.string();
  return out;
}

bool AuditReport::failed() const {
  for (const AuditResult& result : results) {
    if (FailsTheCommand(result)) return true;
  }
  return false;
}

AuditReport RunAudits(const WorkspaceOptions& workspace, const AuditCommand& command,
                      const std::function<void(const AuditResult&)>& on_result) {
  const Project& project = LoadProjectFor(workspace);
  const std::vector<const AuditSpec*> audits =
      CheckingArguments([&] { return SelectAudits(project.definitions, command.select); });
  AuditReport report;
  if (audits.empty()) return report;
  std::unique_ptr<Warehouse> warehouse = OpenForChecks(project);
  SystemClock clock;
  AuditRequest request;
  request.select = command.select;
  request.force = command.force;
  request.clock = &clock;
  request.on_result = on_result;
  report.results = RunAudits(project.definitions, *warehouse, request);
  return report;
}

json ToJson(const AuditResult& result) {
  const AuditSpec& audit = *result.audit;
  json sample = nullptr;
  if (result.status == AuditStatus::kFail) {
    json rows = json::array();
    for (const auto& row : result.sample.rows) rows.push_back(Values(row));
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
          {"errors", Errors(result.errors)}};
}

json ToJson(const AuditReport& report) {
  if (report.results.empty()) return json{{"status", "pass"}, {"audits", json::array()}};
  std::map<AuditStatus, size_t> counts;
  json items = json::array();
  for (const AuditResult& result : report.results) {
    ++counts[result.status];
    items.push_back(ToJson(result));
  }
  return json{{"status", report.failed() ? "fail" : "pass"},
              {"counts",
               {{"pass", counts[AuditStatus::kPass]},
                {"fail", counts[AuditStatus::kFail]},
                {"deferred", counts[AuditStatus::kDeferred]},
                {"error", counts[AuditStatus::kError]}}},
              {"audits", items}};
}

}  // namespace sluice::service
