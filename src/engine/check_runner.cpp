#include "engine/check_runner.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include "engine/asset_status.hpp"
#include "engine/selection.hpp"

namespace sluice {

namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t MillisecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start).count();
}

int64_t ParseCount(const std::optional<std::string>& text) {
  int64_t value = 0;
  if (!text) return 0;
  std::from_chars(text->data(), text->data() + text->size(), value);
  return value;
}

// The warehouse's diagnostics of a failed statement, pointed at the check: its block in its file (`at`), or the
// file when the block's place is not known (a TestSpec or AuditSpec built by hand).
std::vector<Diagnostic> AtCheck(const Error& error, const SourceLocation& at, const std::string& file) {
  std::vector<Diagnostic> diagnostics = error.diagnostics();
  for (Diagnostic& diagnostic : diagnostics) {
    diagnostic.location = at.known() ? at : SourceLocation{file, 0, 0};
    diagnostic.source_line.clear();
  }
  return diagnostics;
}

// The selected models' names; empty when `select` is.
std::set<std::string> SelectedModels(const Definitions& definitions, const std::vector<std::string>& select) {
  std::set<std::string> names;
  for (const AssetKey& key : ResolveSelection(definitions, select)) {
    const Asset* asset = definitions.Find(key);
    if (asset != nullptr && !asset->is_source()) names.insert(asset->name());
  }
  return names;
}

// A test path as compared with TestSpec::file: lexically normal, '/'-separated, no trailing '/'; "" for the
// project root.
std::string NormalPath(const std::string& path) {
  std::string normal = std::filesystem::path(path).lexically_normal().generic_string();
  while (!normal.empty() && normal.back() == '/') normal.pop_back();
  return normal == "." ? "" : normal;
}

bool UnderPath(const std::string& file, const std::string& path) {
  return path.empty() || file == path ||
         (file.size() > path.size() && file.starts_with(path) && file[path.size()] == '/');
}

// ---- Test results ----

size_t ColumnIndex(const Rows& rows, std::string_view name, size_t fallback) {
  for (size_t i = 0; i < rows.columns.size(); ++i) {
    if (rows.columns[i] == name) return i;
  }
  return fallback;
}

std::vector<TestDifference> Differences(const Rows& rows) {
  const size_t case_index = ColumnIndex(rows, "_case_index", 0);
  const size_t diff_type = ColumnIndex(rows, "_diff_type", 1);
  const size_t row_values = ColumnIndex(rows, "_row_values", 2);
  const size_t multiplicity = ColumnIndex(rows, "_multiplicity", 3);
  std::vector<TestDifference> differences;
  for (const std::vector<std::optional<std::string>>& row : rows.rows) {
    auto at = [&](size_t column) { return column < row.size() ? row[column] : std::nullopt; };
    TestDifference difference;
    difference.case_index = ParseCount(at(case_index));
    difference.diff_type = at(diff_type).value_or("");
    std::optional<std::string> values = at(row_values);
    if (auto elements = values ? ListElements(*values) : std::nullopt) {
      difference.values = std::move(*elements);
    } else {
      difference.values = {values};
    }
    difference.multiplicity = ParseCount(at(multiplicity));
    differences.push_back(std::move(difference));
  }
  std::sort(differences.begin(), differences.end(), [](const TestDifference& a, const TestDifference& b) {
    return std::tie(a.case_index, a.diff_type, a.values) < std::tie(b.case_index, b.diff_type, b.values);
  });
  return differences;
}

// ---- Audits ----

// "1d 2h", "30m", "45s".
std::string DurationText(int64_t seconds) {
  static const std::pair<int64_t, const char*> kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string text;
  for (const auto& [size, unit] : kUnits) {
    if (seconds >= size) {
      text += (text.empty() ? "" : " ") + std::to_string(seconds / size) + unit;
      seconds %= size;
    }
  }
  return text.empty() ? "0s" : text;
}

// What the warehouse holds of the models audits read: read once per RunAudits.
struct Readiness {
  std::map<std::string, std::chrono::system_clock::time_point> written;  // asset key text → latest written_at
  std::set<std::string> in_ledger;                                       // asset key text
  std::set<std::string> relations;                                       // RelationKey of every relation

  static Readiness Read(Warehouse& warehouse) {
    Readiness readiness;
    for (const LedgerEntry& entry : warehouse.ReadLedger()) {
      readiness.in_ledger.insert(entry.asset);
      if (std::optional<std::chrono::system_clock::time_point> at = ParseUtc(entry.written_at)) {
        auto [it, inserted] = readiness.written.emplace(entry.asset, *at);
        if (!inserted) it->second = std::max(it->second, *at);
      }
    }
    for (const TableInfo& table : warehouse.ListRelations()) readiness.relations.insert(RelationKey(table.relation));
    return readiness;
  }

  // Why `audit` must wait, or nullopt when it can run now.
  std::optional<std::string> Deferral(const Definitions& definitions, const AuditSpec& audit,
                                      std::chrono::system_clock::time_point now) const {
    std::optional<std::chrono::system_clock::time_point> latest;
    for (const std::string& model : audit.referenced_models) {
      const Asset* asset = definitions.FindByName(model);
      if (asset == nullptr) continue;
      const std::string key = asset->key.ToString();
      if (!in_ledger.count(key)) {
        return "model '" + model + "' is not materialized yet (the warehouse's ledger records no write of " + key +
               "); run it first: sluice run --select +" + model;
      }
      const Relation relation = RelationOf(*asset);
      if (!relations.count(RelationKey(relation))) {
        return "model '" + model + "' is recorded as materialized but the warehouse has no " + relation.ToString() +
               " (dropped?); run it again: sluice run --select " + model;
      }
      if (auto it = written.find(key); it != written.end() && (!latest || it->second > *latest)) latest = it->second;
    }
    if (audit.warmup_seconds > 0 && latest) {
      const auto ready = *latest + std::chrono::seconds(audit.warmup_seconds);
      if (now < ready) {
        return "warming up: its models were last materialized at " + FormatUtc(*latest) + ", and its warmup of " +
               DurationText(audit.warmup_seconds) + " ends at " + FormatUtc(ready);
      }
    }
    return std::nullopt;
  }
};

}  // namespace

std::string TestStatusName(TestStatus status) {
  switch (status) {
    case TestStatus::kPass:
      return "pass";
    case TestStatus::kFail:
      return "fail";
    case TestStatus::kError:
      return "error";
  }
  return "error";
}

std::string AuditStatusName(AuditStatus status) {
  switch (status) {
    case AuditStatus::kPass:
      return "pass";
    case AuditStatus::kFail:
      return "fail";
    case AuditStatus::kDeferred:
      return "deferred";
    case AuditStatus::kError:
      return "error";
  }
  return "error";
}

std::vector<const TestSpec*> SelectTests(const Definitions& definitions, const TestRequest& request) {
  std::vector<std::string> paths;
  for (const std::string& raw : request.paths) {
    std::string path = NormalPath(raw);
    bool any = std::any_of(definitions.tests().begin(), definitions.tests().end(),
                           [&](const TestSpec& test) { return UnderPath(test.file, path); });
    if (!any) {
      throw Error(Diagnostic{"SLU-SELECT-003",
                             "test path " + raw + ": no test file is there",
                             {},
                             "give a test file or a folder of them, relative to the project root (e.g. tests/ or "
                             "tests/orders/totals.sql)",
                             {}});
    }
    paths.push_back(std::move(path));
  }
  const std::set<std::string> models =
      request.select.empty() ? std::set<std::string>{} : SelectedModels(definitions, request.select);
  std::vector<const TestSpec*> selected;
  for (const TestSpec& test : definitions.tests()) {
    if (!paths.empty() &&
        std::none_of(paths.begin(), paths.end(), [&](const std::string& path) { return UnderPath(test.file, path); })) {
      continue;
    }
    if (!request.select.empty() && std::none_of(test.targets.begin(), test.targets.end(),
                                                [&](const std::string& target) { return models.count(target) > 0; })) {
      continue;
    }
    selected.push_back(&test);
  }
  return selected;
}

const std::string& TestSqlFor(const TestSpec& test, const Capabilities& capabilities) {
  if (!capabilities.is_not_distinct_from && !test.legacy_clickhouse_sql.empty()) return test.legacy_clickhouse_sql;
  return test.sql;
}

TestResult RunTest(const TestSpec& test, Warehouse& warehouse) {
  TestResult result;
  result.test = &test;
  result.sql = TestSqlFor(test, warehouse.capabilities());
  const auto start = SteadyClock::now();
  try {
    result.differences = Differences(warehouse.Query(result.sql));
    result.status = result.differences.empty() ? TestStatus::kPass : TestStatus::kFail;
  } catch (const Error& error) {
    result.status = TestStatus::kError;
    result.errors = AtCheck(error, test.at, test.file);
  }
  result.duration_ms = MillisecondsSince(start);
  return result;
}

std::vector<TestResult> RunTests(const Definitions& definitions, Warehouse& warehouse, const TestRequest& request) {
  std::vector<TestResult> results;
  for (const TestSpec* test : SelectTests(definitions, request)) {
    results.push_back(RunTest(*test, warehouse));
    if (request.on_result) request.on_result(results.back());
  }
  return results;
}

std::optional<std::vector<std::optional<std::string>>> ListElements(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::vector<std::optional<std::string>> elements;
  size_t i = 1;
  const size_t end = text.size() - 1;
  auto skip_spaces = [&] {
    while (i < end && text[i] == ' ') ++i;
  };
  skip_spaces();
  if (i == end) return elements;
  while (true) {
    skip_spaces();
    if (i < end && (text[i] == '\'' || text[i] == '"')) {
      const char quote = text[i++];
      std::string value;
      bool closed = false;
      while (i < end) {
        char c = text[i++];
        if (c == quote) {
          size_t next = i;
          while (next < end && text[next] == ' ') ++next;
          if (next == end || text[next] == ',') {
            closed = true;
            break;
          }
          // A quote inside the element whose escape was lost: ClickHouse does not escape an array's text again
          // for TabSeparated, so the backend's unescaping leaves `['('ada')']`.
        }
        if (c == '\\' && i < end) {
          char escaped = text[i++];
          switch (escaped) {
            case 'n':
              c = '\n';
              break;
            case 't':
              c = '\t';
              break;
            case 'r':
              c = '\r';
              break;
            case '0':
              c = '\0';
              break;
            default:
              c = escaped;
          }
        }
        value += c;
      }
      if (!closed) return std::nullopt;
      elements.emplace_back(std::move(value));
      skip_spaces();
    } else {
      size_t comma = text.find(',', i);
      if (comma == std::string_view::npos || comma > end) comma = end;
      std::string_view bare = text.substr(i, comma - i);
      while (!bare.empty() && bare.back() == ' ') bare.remove_suffix(1);
      if (bare.find_first_of("'\"[]") != std::string_view::npos) return std::nullopt;
      if (bare == "NULL") {
        elements.emplace_back(std::nullopt);
      } else {
        elements.emplace_back(std::string(bare));
      }
      i = comma;
    }
    if (i == end) return elements;
    if (text[i] != ',') return std::nullopt;
    ++i;
  }
}

std::vector<const AuditSpec*> SelectAudits(const Definitions& definitions, const std::vector<std::string>& select) {
  const std::set<std::string> models = select.empty() ? std::set<std::string>{} : SelectedModels(definitions, select);
  std::vector<const AuditSpec*> selected;
  for (const AuditSpec& audit : definitions.audits()) {
    if (select.empty() || std::any_of(audit.referenced_models.begin(), audit.referenced_models.end(),
                                      [&](const std::string& model) { return models.count(model) > 0; })) {
      selected.push_back(&audit);
    }
  }
  return selected;
}

AuditResult RunAudit(const AuditSpec& audit, Warehouse& warehouse) {
  AuditResult result;
  result.audit = &audit;
  const auto start = SteadyClock::now();
  try {
    Rows count = warehouse.Query(audit.failure_count_sql);
    result.failing_rows = count.rows.empty() || count.rows.front().empty() ? 0 : ParseCount(count.rows.front().front());
    if (result.failing_rows > 0) {
      result.status = AuditStatus::kFail;
      result.sample = warehouse.Query(audit.sample_sql);
    }
  } catch (const Error& error) {
    result.status = AuditStatus::kError;
    result.errors = AtCheck(error, audit.at, audit.file);
  }
  result.duration_ms = MillisecondsSince(start);
  return result;
}


std::vector<AuditResult> RunAudits(const Definitions& definitions, Warehouse& warehouse, const AuditRequest& request) {
  const std::vector<const AuditSpec*> selected = SelectAudits(definitions, request.select);
  std::vector<AuditResult> results;
  if (selected.empty()) return results;
  const SystemClock system_clock;
  const Clock& clock = request.clock != nullptr ? *request.clock : system_clock;
  const std::optional<Readiness> readiness =
      request.force ? std::nullopt : std::optional<Readiness>(Readiness::Read(warehouse));
  const auto now = clock.Now();
  for (const AuditSpec* audit : selected) {
    std::optional<std::string> deferral = readiness ? readiness->Deferral(definitions, *audit, now) : std::nullopt;
    if (deferral) {
      AuditResult result;
      result.audit = audit;
      result.status = AuditStatus::kDeferred;
      result.deferred_reason = std::move(*deferral);
      results.push_back(std::move(result));
    } else {
      results.push_back(RunAudit(*audit, warehouse));
    }
    if (request.on_result) request.on_result(results.back());
  }
  return results;
}

bool FailsTheCommand(const AuditResult& result) {
  return result.audit != nullptr && result.audit->severity == AuditSeverity::kError &&
         (result.status == AuditStatus::kFail || result.status == AuditStatus::kError);
}

}  // namespace sluice
