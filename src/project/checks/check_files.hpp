// Private to tests_audits.cpp, tests.cpp, test_comparison.cpp and audits.cpp: the pieces the test and audit
// compilers share — located failures in one file, `KEYWORD (…);` block splitting, macro expansion of a range,
// reference scanning and span replacement — and the column inference and comparison SQL of tests.
// Thread-safety: pure functions over the values passed in.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "project/header_grammar.hpp"
#include "project/checks/checks.hpp"
#include "sql/reference_scanner.hpp"
#include "sql/token.hpp"

namespace sluice::checks {

// One file being compiled; every diagnostic about it points into `text`.
struct CheckFile {
  std::string file;  // relative to the project root
  std::string text;

  [[noreturn]] void Fail(size_t offset, std::string code, std::string message, std::string hint) const;
  Diagnostic Warning(size_t offset, std::string code, std::string message, std::string hint) const;
};

// The significant (non-comment) tokens of text[begin, end), with absolute offsets and views into `text`;
// lexical errors are located in the file.
std::vector<sql::Token> TokenizeRange(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect);

bool IsPunctuation(const sql::Token& token, std::string_view text);
bool IsWord(const sql::Token& token, std::string_view upper_word);  // case-insensitive keyword match

// `KEYWORD (…);` followed by SQL, up to the next block or the end of the file. A block starts where a
// `KEYWORD` word is the first token on its line, outside parentheses, and is followed by `(`.
struct SqlBlock {
  HeaderBlock header;
  size_t body_begin = 0;  // == header.end
  size_t body_end = 0;
  std::vector<sql::Token> tokens;  // significant tokens of the body
};
std::vector<SqlBlock> SplitBlocks(const CheckFile& file, std::string_view keyword, sql::Dialect dialect);

// The SQL of text[begin, end) after macro expansion, with its references.
struct ExpandedSql {
  std::string text;
  size_t origin = 0;                           // file offset of the range
  bool expanded = false;                       // macros changed the text, so its offsets no longer map into the file
  std::vector<sql::ReferenceCall> references;  // offsets relative to `text`

  // The file offset to blame for text[offset] (the range start when the text came from macros).
  size_t Locate(size_t offset) const { return expanded ? origin : origin + offset; }
};

// Whether `name` is a built-in macro rendered by Sluice itself: `partition_start` or `partition_end`.
bool IsPartitionBound(std::string_view name);

// Expands macro calls (if any) through `expander`; without an expander a macro call fails with
// `not_configured_code`. With `scan_references`, references are scanned in the result (errors relocated to
// the range start when the text came from macros). With `keep_partition_bounds`, `@partition_start()` and
// `@partition_end()` are no macro calls here: they stay in the text for the caller to render.
ExpandedSql ExpandRange(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect,
                        const MacroExpander& expander, const char* not_configured_code, bool scan_references = true,
                        bool keep_partition_bounds = false);

// The significant tokens of `sql.text` (offsets relative to it); lexical errors are located in the file.
std::vector<sql::Token> TokenizeExpanded(const CheckFile& file, const ExpandedSql& sql, sql::Dialect dialect);

// The first macro call in text[begin, end) (offsets are file offsets); with `skip_partition_bounds`, the first
// that is not `@partition_start()` / `@partition_end()`.
std::optional<sql::MacroCall> FirstMacroCall(const CheckFile& file, size_t begin, size_t end, sql::Dialect dialect,
                                             bool skip_partition_bounds = false);

// `text` with each reference span replaced by `replacement(call)` (sql::ReplaceSpans).
std::string ReplaceReferences(std::string_view text, const std::vector<sql::ReferenceCall>& references,
                              const std::function<std::string(const sql::ReferenceCall&)>& replacement);

std::string_view TrimSpace(std::string_view text);

// A test or audit name made safe for a file name: trimmed; empty string when it cannot be one.
std::string CheckedName(std::string_view name);

// The effective audit defaults of one model (pipeline > project > built-in).
struct EffectiveAuditDefaults {
  AuditSeverity severity = AuditSeverity::kError;
  std::optional<int64_t> every_seconds;
  int64_t warmup_seconds = 0;
};
EffectiveAuditDefaults EffectiveDefaults(const ChecksInput& input, const ModelCheckInput& model);

// The input's models by name (views of the inputs' names), indexed on the first lookup: a project without
// tests or model-reading audits never builds the index.
// Not thread-safe: the checks compile on one thread.
class ModelIndex {
 public:
  explicit ModelIndex(const std::vector<ModelCheckInput>& models) : models_(models) {}

  // The model named `name`; null when there is none.
  const ModelCheckInput* Find(std::string_view name) const;
  // The model named `name`, which the caller knows exists (std::out_of_range when it does not).
  const ModelCheckInput& At(std::string_view name) const;

 private:
  const std::vector<ModelCheckInput>& models_;
  mutable std::optional<std::unordered_map<std::string_view, size_t>> index_;
};

struct CompiledTests {
  std::vector<TestSpec> tests;
  std::vector<Diagnostic> warnings;
};
CompiledTests CompileTests(const ChecksInput& input, const ModelIndex& models);
std::vector<AuditSpec> CompileAudits(const ChecksInput& input, const ModelIndex& models);

// `root/<folder>/**/*.sql`, as relative paths sorted; `skip` (relative) excludes a subtree.
std::vector<std::string> DiscoverSqlFiles(const std::filesystem::path& root, const std::string& folder,
                                          const std::string& skip = {});

// ---- SQL tests: tests.cpp and test_comparison.cpp ----

// The prefix of the CTEs a comparison adds (`__case_<n>_expected`, …); test CTEs may not start with it.
inline constexpr std::string_view kCasePrefix = "__case_";

bool IsName(const sql::Token& token);  // a word or a quoted identifier

// Index of the `)` matching the `(` at `open`, or tokens.size().
size_t MatchingParenthesis(const std::vector<sql::Token>& tokens, size_t open, size_t end);

// Columns of a CTE by name: a test CTE's text, or the known columns of an assembled model.
using ColumnLookup = std::function<bool(const std::string& cte, std::string& text, std::vector<std::string>& columns)>;

// Output column names of the SELECT `text`, found on its tokens (`SELECT * FROM <cte>` expands through
// `lookup`), or false with `problem` set.
bool InferColumns(std::string_view text, sql::Dialect dialect, ColumnLookup lookup, std::vector<std::string>& names,
                  std::string& problem);

struct NamedSql {
  std::string name;  // as written in the statement
  std::string text;
};

// One `__expected__` (or macro) comparison: `expected` vs `actual` on `columns`, casting the expected side to
// `types` when given (else comparing both sides as text).
struct ComparisonCase {
  std::string expected;
  std::string actual;
  std::vector<std::string> columns;
  std::vector<std::string> types;  // empty, or one per column
};

// How a comparison spells NULL-safe equality of `a` and `b`: the dialect's own (`isNotDistinctFrom(a, b)`,
// `a IS NOT DISTINCT FROM b`), or as two equalities that a JOIN ON of any ClickHouse server accepts,
// `isNull(a) = isNull(b) AND assumeNotNull(a) = assumeNotNull(b)` (ClickHouse only: servers without
// isNotDistinctFrom, whose JOIN ON takes only conjunctions of equalities).
enum class NullSafeSpelling { kNative, kKeyEqualities };

// Adds comparison `index` to the statement: its CTEs (`__case_<index>_…`) to `ctes`, and to `branches` the
// rows missing from `actual` and those it has in excess.
void AddComparison(sql::Dialect dialect, size_t index, const ComparisonCase& c, std::vector<NamedSql>& ctes,
                   std::vector<std::string>& branches, NullSafeSpelling spelling = NullSafeSpelling::kNative);

// The branch of `__assert__` case `index`: every row of `assert_cte` is an unexpected row.
std::string AssertionBranch(sql::Dialect dialect, size_t index, const std::string& assert_cte);

// `WITH <ctes> <branches joined by UNION ALL>`: the one statement a test runs.
std::string ComparisonStatement(const std::vector<NamedSql>& ctes, const std::vector<std::string>& branches);

// The same statement without a WITH clause, for servers without `WITH name AS (subquery)`: `ctes` (each after
// the CTEs it reads) are inlined, recursively, where a FROM or JOIN reads them (`FROM x AS a` becomes
// `FROM (<x's query>) AS a`, `FROM x` becomes `FROM (<x's query>) AS x`); other mentions are left alone.
std::string InlinedComparisonStatement(sql::Dialect dialect, const std::vector<NamedSql>& ctes,
                                       const std::vector<std::string>& branches);

}  // namespace sluice::checks
