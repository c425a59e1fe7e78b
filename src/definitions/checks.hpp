// The SQL tests and audits of a project, compiled (StreamBuild reference §10): each one's identity, where it
// came from, what it checks and the SQL that runs it. project/checks/ compiles them from a project's files;
// compile/ writes them as artifacts; running them is the engine's job.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice {

enum class AuditSeverity { kError, kWarning };
std::string AuditSeverityName(AuditSeverity severity);  // error | warning

enum class TestMode { kModel, kMacro };
std::string TestModeName(TestMode mode);  // model | macro

// One compared case of a test, numbered from 1 in CTE order (the `_case_index` of its failing rows).
struct TestCase {
  std::string name;                  // the CTE: `__expected__<model>`, `__assert__<label>` or `__macro_expected__`
  std::vector<std::string> columns;  // the compared columns, in `_row_values` order; empty for an assertion,
                                     // whose `_row_values` hold one element: the whole row as text
};

struct TestSpec {
  std::string name;
  std::string file;                  // the test file, relative to the project root
  std::string path;                  // compiled path relative to target/, e.g. "compiled/tests/orders/x.sql"
  std::vector<std::string> targets;  // the `__expected__` models, sorted; for a macro test "macro <name>"
  TestMode mode = TestMode::kModel;
  std::string sql;  // the compiled statement, ending with exactly one newline; returns the failures
  std::vector<TestCase> cases;  // by `_case_index` - 1
  // The day (YYYY-MM-DD) whose bounds `@partition_start()` / `@partition_end()` render in the statement, as a run
  // of that day renders them: the TEST's `partition`, else the first day of the partitioned models it runs that use
  // the bounds; unset when the statement has none.
  std::optional<std::string> partition;
  // For ClickHouse projects only (empty otherwise): the same comparison for servers without the function
  // isNotDistinctFrom (ClickHouse before 21.x, e.g. 18.16), which also lack `WITH name AS (subquery)`: each CTE
  // is inlined as a subquery where it is read, and NULL-safe equality is spelled as two equalities a JOIN ON
  // accepts, `isNull(a) = isNull(b) AND assumeNotNull(a) = assumeNotNull(b)`. Returns the same rows as `sql`;
  // never written as an artifact.
  std::string legacy_clickhouse_sql;
  SourceLocation at;  // its TEST block in the file: where a failure of its statement is reported
};

enum class AuditOrigin { kConcrete, kGeneric };

inline constexpr int kAuditSampleRows = 5;

struct AuditSpec {
  std::string name;
  std::string file;                            // the audit file, or the model file for a generic invocation
  std::string path;                            // compiled path relative to target/
  std::vector<std::string> referenced_models;  // first-reference order
  AuditSeverity severity = AuditSeverity::kError;
  std::optional<int64_t> every_seconds;  // the cadence; set iff scheduled
  int64_t warmup_seconds = 0;
  bool scheduled = false;
  std::optional<std::string> description;
  AuditOrigin origin = AuditOrigin::kConcrete;
  std::optional<std::string> definition;  // the generic definition's name
  std::string sql;                        // the resolved audit query, ending with exactly one newline (the file)
  std::string failure_count_sql;          // one row, one column: the number of failing rows
  std::string sample_sql;                 // at most kAuditSampleRows failing rows
  // Its AUDIT block, or its invocation in the MODEL header: where a failure of its query is reported.
  SourceLocation at;
};

}  // namespace sluice
