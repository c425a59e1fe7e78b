// test, audit (service/checks.hpp): a line per check (failing rows as a table under it), a summary, or with --json
// one document.
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
#include "service/checks.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

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

std::string TestDetail(const TestResult& result) {
  const TestSpec& test = *result.test;
  std::string out;
  for (size_t i = 0; i < result.differences.size();) {
    const int64_t case_index = result.differences[i].case_index;
    std::vector<std::string> header = {"diff"};
    const std::vector<std::string> columns =
        service::CaseColumns(test, case_index, result.differences[i].values.size());
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
    out += "  case " + std::to_string(case_index) + " " + service::CaseName(test, case_index) +
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

}  // namespace

int Test(const GlobalOptions& global, const TestOptions& options) {
  const service::TestReport report =
      service::RunTests(global, {options.paths, options.select}, [&](const TestResult& result) {
        if (options.json) return;
        const TestSpec& test = *result.test;
        std::string line = Pad(StatusWord(result.status), 6) + test.name + "  (" + test.file +
                           (test.partition ? ", partition " + *test.partition : "") + ")  " +
                           Seconds(result.duration_ms) + "\n";
        if (options.verbose) {
          const std::string targets = Join(test.targets, ", ");
          line += "      targets: " + (targets.empty() ? "(none)" : targets) + "; ran target/run/tests/" +
                  service::RunPath(test) + "\n";
        }
        std::printf("%s%s", line.c_str(), TestDetail(result).c_str());
        std::fflush(stdout);
      });
  if (options.json) {
    PrintJson(service::ToJson(report));
  } else if (report.results.empty()) {
    std::printf("no tests selected\n");
  } else {
    std::map<TestStatus, size_t> counts;
    for (const TestResult& result : report.results) ++counts[result.status];
    std::printf("tests: %zu passed, %zu failed, %zu with errors, of %s; the statements run are in target/run/tests/\n",
                counts[TestStatus::kPass], counts[TestStatus::kFail], counts[TestStatus::kError],
                Plural(report.results.size(), "test").c_str());
  }
  return report.passed() ? 0 : 1;
}

int Audit(const GlobalOptions& global, const AuditOptions& options) {
  const service::AuditReport report =
      service::RunAudits(global, {options.select, options.force}, [&](const AuditResult& result) {
        if (options.json) return;
        std::printf("%s%s", AuditLine(result).c_str(), AuditDetail(result).c_str());
        std::fflush(stdout);
      });
  if (options.json) {
    PrintJson(service::ToJson(report));
  } else if (report.results.empty()) {
    std::printf("no audits selected\n");
  } else {
    std::map<AuditStatus, size_t> counts;
    for (const AuditResult& result : report.results) ++counts[result.status];
    std::printf("audits: %zu passed, %zu failed, %zu deferred, %zu with errors, of %s%s\n", counts[AuditStatus::kPass],
                counts[AuditStatus::kFail], counts[AuditStatus::kDeferred], counts[AuditStatus::kError],
                Plural(report.results.size(), "audit").c_str(),
                report.failed() ? "; an error-severity audit did not pass" : "");
  }
  return report.failed() ? 1 : 0;
}

}  // namespace sluice::cli
