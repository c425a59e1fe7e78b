// CheckRunner: runs a project's compiled SQL tests and audits (StreamBuild reference §10; compiled by
// project/checks/, definitions/checks.hpp) on a warehouse and returns what happened as plain values. Printing,
// and writing the statements run, are the caller's (`sluice test`, `sluice audit`, and the build command after a
// build).
//
// Tests (RunTests): each selected test is one query, TestSpec::sql — or, on a ClickHouse server without
// isNotDistinctFrom (Capabilities::is_not_distinct_from false), TestSpec::legacy_clickhouse_sql — whose rows are
// the test's failures; no rows is a pass. The test reads only its own mocks, so nothing needs to be
// materialized first. Tests run one after another, in name order.
//
// Audits (RunAudits): an audit fails when its query returns rows (AuditSpec::failure_count_sql counts them;
// AuditSpec::sample_sql returns up to kAuditSampleRows). An audit is deferred, and not run, unless forced, when
// one of the models it references
//   - has no row in the warehouse's ledger (Warehouse::ReadLedger): it was never materialized;
//   - has ledger rows but its relation is not in the catalog (Warehouse::ListRelations): it was dropped;
//   - or is warming: the audit's warmup_seconds have not passed since the latest ledger `written_at` of its
//     referenced models (Clock::Now() < latest + warmup).
// The ledger and the catalog are read once per call. Audits run one after another, in name order.
//
// Selection (both): items as engine/selection.hpp reads them (model names, `pipeline:<p>`, `+x` adds upstream,
// …); a test is kept when one of its targets is a selected model, an audit when it references a selected model.
// No items keeps everything. Tests can also be chosen by file: TestRequest::paths, each a test file or a folder
// relative to the project root.
//
// Errors: thrown before anything runs — SLU-SELECT-001/-002 (selection.hpp), SLU-SELECT-003 a test path that
// names no test file or folder holding one, and the warehouse's errors reading the ledger or the catalog. A test
// or audit whose SQL fails is a result (kError) holding the warehouse's diagnostics, located at the check's block
// (TestSpec::at, AuditSpec::at: its TEST or AUDIT header, or the generic audit's invocation in the MODEL header).
// Thread-safety: the functions are reentrant; each call uses the warehouse from the calling thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// ---- SQL tests ----

enum class TestStatus { kPass, kFail, kError };
std::string TestStatusName(TestStatus status);  // pass | fail | error

// One failing row of a test: a row one side of a case holds more often than the other.
struct TestDifference {
  int64_t case_index = 0;  // 1-based: TestSpec::cases[case_index - 1]
  std::string diff_type;   // missing (expected, not produced) | unexpected (produced, not expected)
  // The row's values as text, one per compared column of the case (an assertion's: one, the whole row); NULL is
  // nullopt. When the warehouse's rendering of the list cannot be read, one element holding it as rendered.
  std::vector<std::optional<std::string>> values;
  int64_t multiplicity = 0;  // how many more times the row occurs on its side
};

struct TestResult {
  const TestSpec* test = nullptr;  // points into the Definitions
  TestStatus status = TestStatus::kPass;
  std::vector<TestDifference> differences;  // kFail: by case, then missing before unexpected, then values
  std::vector<Diagnostic> errors;           // kError: the warehouse's, located at the test file
  std::string sql;                          // the statement run
  int64_t duration_ms = 0;
};

struct TestRequest {
  std::vector<std::string> paths;   // test files or folders relative to the project root; empty: every test
  std::vector<std::string> select;  // selection items; empty: every test
  std::function<void(const TestResult&)> on_result;  // called after each test, in run order; may be empty
};

// The tests `request` chooses (paths and selection both apply), in name order. Throws the errors above.
std::vector<const TestSpec*> SelectTests(const Definitions& definitions, const TestRequest& request);

// The statement that runs `test` on a server with `capabilities`.
const std::string& TestSqlFor(const TestSpec& test, const Capabilities& capabilities);

// Runs one test; never throws for a failing statement (kError).
TestResult RunTest(const TestSpec& test, Warehouse& warehouse);

// SelectTests, then RunTest on each. The results are in run order.
std::vector<TestResult> RunTests(const Definitions& definitions, Warehouse& warehouse, const TestRequest& request);

// The elements of a list value as Warehouse::Query renders it — DuckDB `[a, 'b, c', NULL]`, ClickHouse
// `['a','b',NULL]` — with quoted elements unescaped (backslash escapes, `'` or `"` quotes) and a bare NULL as
// nullopt; nullopt when `text` is not such a list. A quote not followed by `,` or the closing `]` is part of the
// element (ClickHouse's TabSeparated arrays reach Rows with their inner escapes removed: `['('ada')']`).
std::optional<std::vector<std::optional<std::string>>> ListElements(std::string_view text);

// ---- Audits ----

enum class AuditStatus { kPass, kFail, kDeferred, kError };
std::string AuditStatusName(AuditStatus status);  // pass | fail | deferred | error

struct AuditResult {
  const AuditSpec* audit = nullptr;  // points into the Definitions
  AuditStatus status = AuditStatus::kPass;
  int64_t failing_rows = 0;        // kFail: how many rows the audit query returned
  Rows sample;                     // kFail: up to kAuditSampleRows of them
  std::string deferred_reason;     // kDeferred: which model is not ready and why, one sentence
  std::vector<Diagnostic> errors;  // kError: the warehouse's, located at the audit file
  int64_t duration_ms = 0;
};

struct AuditRequest {
  std::vector<std::string> select;                    // selection items; empty: every audit
  bool force = false;                                 // run audits that would be deferred
  const Clock* clock = nullptr;                       // "now" for warmup; null: the system clock
  std::function<void(const AuditResult&)> on_result;  // called after each audit, in run order; may be empty
};

// The audits `request` selects, in name order. Throws SLU-SELECT-001/-002.
std::vector<const AuditSpec*> SelectAudits(const Definitions& definitions, const std::vector<std::string>& select);

// Runs the selected audits against the materialized relations; the entry point for `sluice audit` and for the
// build command after a build. Results in run order. Throws only before anything runs (see above).
std::vector<AuditResult> RunAudits(const Definitions& definitions, Warehouse& warehouse, const AuditRequest& request);

// Runs one audit now, whatever its models' readiness; never throws for a failing statement (kError).
AuditResult RunAudit(const AuditSpec& audit, Warehouse& warehouse);

// Whether `result` fails the command: an error-severity audit that failed or errored (warnings never do).
bool FailsTheCommand(const AuditResult& result);

}  // namespace sluice
