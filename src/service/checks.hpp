// `test` and `audit`: the project's SQL tests and audits on the target's warehouse (engine/check_runner.hpp). The
// warehouse is opened read-only, or created when its file does not exist yet (tests need no materialized model).
// `test` writes each statement it ran under target/run/tests/ (the compiled path's tail), replacing that folder.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/check_runner.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct TestCommand {
  std::vector<std::string> paths;  // test files or folders, relative to the project or the working directory
  std::vector<std::string> select;
};

struct TestReport {
  std::vector<TestResult> results;  // in the order run
  std::filesystem::path statements_dir;
  bool passed() const;  // no test failed or errored
};

// Runs the selected tests, `on_result` after each. Throws RequestError for a path or selection naming nothing.
TestReport RunTests(const WorkspaceOptions& workspace, const TestCommand& command,
                    const std::function<void(const TestResult&)>& on_result = {});

// target/run/tests/<the compiled path's tail>, relative to target/run/tests/.
std::string RunPath(const TestSpec& test);
// The columns a failing row of `case_index` shows, and the case's name.
std::vector<std::string> CaseColumns(const TestSpec& test, int64_t case_index, size_t values);
std::string CaseName(const TestSpec& test, int64_t case_index);

// {name, file, path, run_path, targets, mode, partition, status, duration_ms, failures, errors}.
nlohmann::json ToJson(const TestResult& result);
// {status: pass|fail, counts, tests, statements_dir?}.
nlohmann::json ToJson(const TestReport& report);

struct AuditCommand {
  std::vector<std::string> select;
  bool force = false;  // run audits whose warm-up has not passed
};

struct AuditReport {
  std::vector<AuditResult> results;
  bool failed() const;  // an error-severity audit failed, or an audit's SQL failed
};

// Runs the selected audits, `on_result` after each. Throws RequestError for a selection naming nothing.
AuditReport RunAudits(const WorkspaceOptions& workspace, const AuditCommand& command,
                      const std::function<void(const AuditResult&)>& on_result = {});

nlohmann::json ToJson(const AuditResult& result);
// {status: pass|fail, counts?, audits}.
nlohmann::json ToJson(const AuditReport& report);

}  // namespace sluice::service
