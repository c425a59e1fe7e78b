// SQL tests and audits (StreamBuild reference §10): loads `tests/**/*.sql`, `audits/**/*.sql`,
// `audits/generic/**/*.sql` and the generic-audit invocations written in MODEL headers, validates them and
// compiles each to SQL. Running the compiled SQL is the engine's job.
//
// In:  ChecksInput — the project root, the dialect, every model (body, references, header audits), the
//      declared source names, audit defaults and an optional macro expander.
// Out: CompiledChecks — TestSpec and AuditSpec values (definitions/checks.hpp) sorted by name, and warnings.
//
// SQL tests (`tests/**/*.sql`): one or more `TEST (name "…", mode model|macro, partition "YYYY-MM-DD");` blocks (an empty header
// names the test after the file stem; several blocks in one file must each have a name; names are unique
// across the project), each followed by `WITH <ctes> SELECT 1`. CTEs are found with the tokenizer, so
// comments and strings never confuse them. Macro calls are allowed only inside CTE bodies (each body is
// expanded on its own, which keeps diagnostics located in the file).
//   Model mode: mocks `__ref__<name>` / `__source__<name>` (at least one), `__expected__<model>` and/or
//   `__assert__<label>` (at least one), any other CTE is a helper. Every `__ref(x)` / `__source(x)` in a test
//   CTE, and every reference of an assembled model, resolves to the mock of `x` when there is one, else to
//   `__model__x`: the model's SQL (definitions/model_sql.hpp) inlined as a CTE (recursively). An expected model's output is compared
//   with the expected CTE on the expected CTE's columns only, as multisets (row counts per distinct row,
//   NULL-safe). When the model's output column types are known (ModelCheckInput::columns) the expected
//   columns are CAST to them; otherwise both sides are compared as text. An `__assert__` CTE passes when
//   it returns no rows. All cases are UNION ALL-ed into one statement returning the failures:
//     _case_index (1-based, CTE order) · _diff_type ('missing' | 'unexpected') ·
//     _row_values (ClickHouse Array(Nullable(String)); a list of text elsewhere; for an assert, one element
//     holding the whole row as text) · _multiplicity (Int64: how many more times the row occurs)
//   An empty result means the test passed.
//   Macro mode: exactly `__macro_actual__` and `__macro_expected__` (same column names, compared as text as
//   above), helpers allowed, macro calls only inside `__macro_actual__`, no references.
//   Partition bounds: a test has a window of one day, in which `@partition_start()` / `@partition_end()` render
//   as a run of that day renders them (sql::DateLiteral: DATE '…', toDate('…') on ClickHouse), in the models it
//   inlines and in its own CTEs: the day `TEST (partition "YYYY-MM-DD")` names, else the first day of every inlined
//   model that uses the bounds (the latest of their start dates), so that a compiled test is the same every day;
//   a macro test's window is its `partition` alone. Inputs are not filtered to the window: the mocks are the rows.
//   TestSpec::partition records the day.
//   Targets: the `__expected__` models (sorted); for a macro test the single label "macro <test name>".
//   Compiled path: `compiled/tests/<target>/<name>.sql`, `compiled/tests/_chain_/<a__b>/<name>.sql` for
//   several targets, `compiled/tests/<name>/<name>.sql` for none.
//
// Audits. Concrete (`audits/**/*.sql` outside `audits/generic/`): one or more `AUDIT (…);` blocks, each
// followed by one SELECT (a trailing `;` is allowed); keys severity (error|warning), description, name
// (required when a file has several blocks), every, warmup (durations: integer seconds or "<n>[smhd]"),
// scheduled (true|false); the name defaults to the file stem. Only `__ref(model)` may appear, at least once.
// Generic (`audits/generic/<definition>.sql`): exactly one empty `AUDIT ();` block and a query with
// parameters `@p` (raw text; a list is comma-joined) and `@'p'` (a string literal, or comma-joined literals
// for a list); parameters inside string literals and quoted identifiers (`__ref("@model")`) are raw; comments
// are left alone. Invoked from MODEL headers: `audits [def, def (arg value, …)]` adds the implicit argument
// `model`, `columns (c (audits […]))` adds `model` and `column`; implicit arguments cannot be overridden
// (an explicit equal value is accepted) and are ignored when the definition does not use them. Every
// parameter is required; reserved arguments are severity, description, name, every, warmup, scheduled; any
// other argument that is not a parameter is rejected. Default name `<model>[.<column>].<def>.<index>`, the
// index counting from 1 within its list.
// Policy: severity = explicit, else `error` when any referenced model's effective default severity is error
// (pipeline audit_defaults > project defaults.audits > error), else `warning`; warmup = explicit, else the
// largest effective default of the referenced models (pipeline > project > 0); cadence (every) = explicit,
// else the one inherited value (two different inherited cadences are an error unless the audit says
// `scheduled false`); `scheduled false` clears the cadence, `scheduled true` without one is an error;
// scheduled = a cadence remains; a scheduled concrete audit needs an explicit `name`.
// Compiled path: `compiled/audits/<dir>/<stem>[__<name>].sql`, where <dir> is the file's folder relative to
// `audits/` (concrete) or to the project (generic invocations: the model file, e.g.
// `compiled/audits/pipelines/pl__order_events/orders__orders.status.accepted_values.1.sql`); `__<name>` is
// added for an explicit name and always for generic invocations.
// Audit SQL: references become `<namespace>.<relation>` (quoted by the dialect when not plain identifiers).
// AuditSpec::sql holds that query (the compiled file), failure_count_sql counts its rows and sample_sql
// returns at most kAuditSampleRows of them; the audit fails when the count is above zero.
//
// Names: test and audit names are trimmed and must be non-empty, without `/`, `\` or control characters and
// not `.` or `..` (they become file names). Model bodies are inlined as given (ModelCheckInput::body is
// expected to be macro-expanded already).
//
// Errors: sluice::Error with one located Diagnostic (file:line:col, caret line, hint), plus the codes of the
// header grammar (SLU-HEADER-*), the tokenizer and reference scanner (SLU-SQL-*) and file reading (SLU-IO-*).
//   SLU-TEST-001  TEST header: unknown key, or `name`/`mode`/`partition` of the wrong type or value
//   SLU-TEST-002  the body is not `WITH name AS (…), … SELECT 1` (missing WITH, CTE name, AS, parenthesis,
//                 ceremonial SELECT 1, or something after it; CTE column lists; empty CTE body)
//   SLU-TEST-003  several TEST blocks without a name each, or a test name used twice in the project
//   SLU-TEST-004  a test name that cannot be a file name
//   SLU-TEST-005  two CTEs with one name in a test
//   SLU-TEST-006  a reserved CTE name (__actual, __expected__typed, __actual__projected, __missing__,
//                 __unexpected__, `__model__*`, `__case_*`), a foreign prefix or name (__macro__, __seed__,
//                 __dbt_ref__, __udf_*__, __table_fn_*__), or a prefix without its suffix (`__ref__`)
//   SLU-TEST-007  model mode without a `__ref__*` / `__source__*` mock
//   SLU-TEST-008  model mode without an `__expected__*` or `__assert__*` CTE
//   SLU-TEST-009  model mode with `__macro_actual__` / `__macro_expected__` (hint: TEST (mode macro))
//   SLU-TEST-010  `__expected__<x>` where x is not a model, or the expected model is itself mocked
//   SLU-TEST-011  a reference (in a test CTE or an assembled model) that is neither mocked nor a model;
//                 the hint names the mock to add
//   SLU-TEST-012  columns of an expected (or macro) CTE cannot be inferred: an expression without alias,
//                 a `*` not over a test CTE, duplicate names, no SELECT
//   SLU-TEST-013  an expected column the model does not produce (only when its column types are known)
//   SLU-TEST-014  macro mode: missing or duplicate __macro_actual__/__macro_expected__, a model-mode CTE,
//                 or a __ref/__source reference
//   SLU-TEST-015  macro mode: a macro call outside __macro_actual__
//   SLU-TEST-016  macro mode: actual and expected have different column names
//   SLU-TEST-017  a macro call while no macro expander is configured
//   SLU-TEST-018  (warning) a mock that nothing reads
//   SLU-TEST-019  one name mocked twice (`__ref__x` and `__source__x`)
//   SLU-TEST-020  a reference cycle while assembling models
//   SLU-TEST-021  more than 256 unmocked models inlined in a chain (mock one part-way)
//   SLU-TEST-022  the window: a `partition` before the start date of a model whose bounds it renders, or
//                 `@partition_start()` / `@partition_end()` in a test that has no window
//   SLU-AUDIT-001 AUDIT header: unknown key or a value of the wrong type (severity, description, name,
//                 every, warmup, scheduled)
//   SLU-AUDIT-002 no query after an AUDIT header, a query that is not a SELECT/WITH, or several statements
//   SLU-AUDIT-003 several AUDIT blocks without a name each, or an audit name used twice in the project
//   SLU-AUDIT-004 an audit name that cannot be a file name
//   SLU-AUDIT-005 references: no `__ref`, a `__source`, or a `__ref` to something that is not a model
//   SLU-AUDIT-006 generic definition: a non-empty header, not exactly one block, a reserved parameter name
//   SLU-AUDIT-007 two generic definitions with one name
//   SLU-AUDIT-008 a malformed invocation (`audits` not a list, an item not `def` or `def (…)`)
//   SLU-AUDIT-009 an invocation of an unknown generic definition
//   SLU-AUDIT-010 an invocation missing a parameter, passing an unknown argument, or overriding an
//                 implicit one
//   SLU-AUDIT-011 an invocation argument of the wrong type (reserved arguments as in -001; `@'p'` needs a
//                 string or a list of strings; `@p` a scalar or a list of scalars)
//   SLU-AUDIT-012 the referenced models inherit different cadences and the audit sets no `every`
//   SLU-AUDIT-013 `scheduled true` without a cadence
//   SLU-AUDIT-014 a scheduled concrete audit without an explicit name
//   SLU-AUDIT-015 a macro call while no macro expander is configured
//   SLU-AUDIT-016 two audits compile to the same path
//
// Thread-safety: CompileTestsAndAudits reads files and is otherwise pure; the expander is called on the
// calling thread only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "project/header_grammar.hpp"
#include "project/config/project_config.hpp"
#include "sql/token.hpp"

namespace sluice {

// Expands the `@name(…)` macro calls of text[body_begin, body_end) and returns that range's new text
// (only the range, not the whole file). `file` is relative to the project root; `text` is the whole file, so
// the expander can locate its own errors. Must not return text that still contains a macro call.
using MacroExpander =
    std::function<std::string(const std::string& file, const std::string& text, size_t body_begin, size_t body_end)>;

// TestSpec and AuditSpec are definitions/checks.hpp's; AuditDefaults (`audit_defaults` of a pipeline.toml or
// `[defaults.audits]` of the project; unset fields inherit) comes from project_config.hpp.

// A duration as audits write it: "<digits>" (seconds) or "<digits>s|m|h|d". Returns seconds, or nullopt
// when the text has another shape or overflows.
std::optional<int64_t> ParseAuditDuration(std::string_view text);

// The generic-audit invocations of one MODEL header: its `audits [...]` value and each column's
// `audits [...]` value, as parsed (offsets point into the model file).
struct ColumnAudits {
  std::string column;
  HeaderValue audits;
};
struct ModelAuditDeclarations {
  std::optional<HeaderValue> audits;
  std::vector<ColumnAudits> columns;  // header order
};

// Picks `audits` and `columns (<c> (audits …))` out of a parsed MODEL header; other keys are ignored.
ModelAuditDeclarations AuditDeclarationsFromHeader(const HeaderMap& header);

// What the compiler needs to know of one model: views of, and pointers to, what the caller owns (the project
// loader: the model's asset and what it read of the file), valid during CompileTestsAndAudits.
struct ModelCheckInput {
  std::string_view name;
  std::string_view pipeline;
  std::string_view file;  // relative to the project root, e.g. "pipelines/orders/orders.sql"
  ModelKind kind = ModelKind::kTable;
  std::string_view relation_name;  // unqualified physical relation
  std::string_view name_space;     // the database / schema holding the relation
  // The model's SQL: its statement, references and output columns (empty: not known).
  const SqlCompute* sql = nullptr;
  // The generic-audit invocations its header declares (null: none), and the whole model file they are written
  // in, for located diagnostics (needed only with audits).
  const ModelAuditDeclarations* audits = nullptr;
  std::string_view text;
  // Its daily partitions (null: not partitioned), for the window a test renders its partition bounds in.
  const PartitionSpec* partitions = nullptr;
};

struct ChecksInput {
  std::filesystem::path root;  // the project root
  sql::Dialect dialect = sql::Dialect::kClickHouse;
  std::vector<ModelCheckInput> models;
  std::vector<std::string> sources;  // declared source names (to suggest `__source__x` mocks)
  AuditDefaults project_audit_defaults;
  std::map<std::string, AuditDefaults, std::less<>> pipeline_audit_defaults;  // by pipeline name
  MacroExpander expand_macros;  // may be empty: then any macro call is an error
};

struct CompiledChecks {
  std::vector<TestSpec> tests;       // sorted by name
  std::vector<AuditSpec> audits;     // sorted by name
  std::vector<Diagnostic> warnings;  // e.g. SLU-TEST-018; file order
};

// Loads, validates and compiles every test and audit of the project. Throws sluice::Error (see above).
CompiledChecks CompileTestsAndAudits(const ChecksInput& input);

}  // namespace sluice
