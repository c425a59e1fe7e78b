// A structural parser of one SELECT statement, built on Tokenize().
//
// It does not build an expression tree: it finds the shape a model compiler needs — statements, set
// operations, CTEs, every SELECT block (the outer one, those of CTEs, FROM subqueries and expression
// subqueries), each block's projection items (span, alias, `*`, outermost explicit cast and its type text as
// authored), its FROM/JOIN sources (name, subquery, table function or `__source`/`__ref` call, with alias),
// which clauses it has, and the aggregate and reference calls written in its expressions.
//
// Grammar accepted (all four dialects unless noted):
//   statement  := [WITH [RECURSIVE] cte {, cte}] term {(UNION|INTERSECT|EXCEPT) [ALL|DISTINCT] [BY NAME] term}
//                 then the clauses below; a term is a SELECT core, VALUES rows or a parenthesized query
//   cte        := name [(columns)] AS [[NOT] MATERIALIZED] (query)  |  expr AS name  (ClickHouse scalar WITH)
//   core       := SELECT [DISTINCT [ON (…)] | ALL] [TOP n] [AS STRUCT|VALUE] items
//                 [FROM source {join}] [PREWHERE e] [WHERE e] [GROUP BY … [WITH ROLLUP|CUBE|TOTALS]]
//                 [HAVING e] [WINDOW w AS (…)] [QUALIFY e] [ORDER BY … [WITH FILL …]] [LIMIT … [BY …]]
//                 [OFFSET …] [FETCH …] [SETTINGS …] [FORMAT name]
//   source     := [LATERAL] (name{.name} | function(args) | __source(…) | __ref(…) | (query) | (source {join}))
//                 [FINAL] [SAMPLE r [OFFSET r]] [[AS] alias [(columns)]] [FINAL] [SAMPLE …]
//                 [TABLESAMPLE …] [WITH ORDINALITY | WITH OFFSET [AS x]]           (FINAL/SAMPLE: ClickHouse)
//   join       := , source | [NATURAL|GLOBAL|ANY|ALL|ASOF|SEMI|ANTI|LEFT|RIGHT|FULL|INNER|OUTER|CROSS|PASTE|
//                 POSITIONAL]… JOIN source [ON e | USING (…) | USING a, b]  |  [LEFT|INNER] ARRAY JOIN e [AS a], …
// Expressions are not parsed into trees: they are token runs with balanced brackets, ended by a clause
// keyword at their own bracket level. Inside them the parser finds function calls (aggregates and reference
// calls), `CASE … END`, casts, and subqueries (a bracket whose content starts with SELECT, WITH or VALUES).
// `::` casts are accepted in DuckDB, PostgreSQL and ClickHouse (≥ 23) and rejected in BigQuery.
//
// A projection item's cast is its outermost operation: `CAST(e AS T)`, `TRY_CAST(e AS T)`,
// `SAFE_CAST(e AS T)`, ClickHouse `CAST(e, 'T')`, or `e::T` where `e` is a primary (column, literal, call,
// bracketed expression, possibly with `.field`, `[i]` or earlier `::` casts) — so `a + b::Int` is not a cast
// (`::` binds tighter than `+`) but `(a + b)::Int` is. Redundant parentheses around the whole item are
// looked through. An alias is `AS name` or a bare trailing name.
//
// Errors (sluice::Error, located in `file` at the offending token, with a caret line and a hint):
//   SLU-SQL-001      lexical errors (from Tokenize)
//   SLU-SQL-101      unbalanced brackets: an unclosed `(`/`[`/`{`, a stray or mismatched closing bracket
//   SLU-SQL-102      brackets nested more than kMaxSelectNesting deep
//   SLU-SQL-103      unexpected token (a clause out of place, text after the query, no query after UNION,
//                    CASE without END, `::` in BigQuery)
//   SLU-SQL-104      a clause or list item with no expression (`WHERE` then nothing, `SELECT a,, b`)
//   SLU-SQL-105      a malformed CTE (`WITH name AS (query)` expected)
//   SLU-SQL-106      a malformed FROM/JOIN source (a keyword or operator where a table is expected)
//   SLU-SQL-107      a clause written twice in one SELECT (two WHERE, two GROUP BY …)
// Only the first statement is parsed; later ones are counted (split at top-level `;`).
// The work is linear in the size of the text (bracket matching and subquery detection are precomputed; each
// token is visited a bounded number of times); recursion is bounded by kMaxSelectNesting.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql/token.hpp"

namespace sluice::sql {

// The deepest bracket nesting accepted (any mix of ( [ {); deeper input is SLU-SQL-102, so hostile input
// cannot exhaust the stack.
inline constexpr size_t kMaxSelectNesting = 256;

// A half-open byte range [begin, end) of the parsed text.
struct TextSpan {
  size_t begin = 0;
  size_t end = 0;
  bool operator==(const TextSpan&) const = default;
};

enum class CastSyntax { kCast, kTryCast, kSafeCast, kDoubleColon };

struct ExplicitCast {
  CastSyntax syntax;
  std::string type_text;  // the type exactly as written (`DateTime64(3)`, `DECIMAL(12, 2)`); for ClickHouse
                          // `CAST(e, 'T')` the decoded string
  TextSpan type_span;     // where the type (or the type string) is written
};

struct ProjectionItem {
  TextSpan span;                     // the whole item, alias included
  TextSpan expression;               // the item without its alias
  std::optional<std::string> alias;  // decoded (`"a b"` → a b)
  std::optional<TextSpan> alias_span;
  bool star = false;                          // `*` or `t.*` (with EXCEPT/EXCLUDE/REPLACE… modifiers)
  std::optional<std::string> star_qualifier;  // "t" for `t.*`, "s.t" for `s.t.*`
  std::optional<ExplicitCast> cast;           // when the outermost operation is an explicit cast
  bool has_aggregate = false;                 // an aggregate call in the item (not counting nested subqueries)
};

enum class SourceKind { kTable, kSubquery, kTableFunction, kReference };

struct TableSource {
  SourceKind kind = SourceKind::kTable;
  std::string name;  // kTable: decoded parts joined with '.'; kTableFunction: the function name as written;
                     // kReference: `__source` or `__ref`; kSubquery: empty
  std::optional<std::string> reference_name;  // kReference: the decoded first argument, when a name
  std::optional<std::string> alias;
  TextSpan span;              // the source itself: the name, the call or the bracketed subquery (alias excluded)
  bool joined = false;        // written after JOIN (false: the first FROM item or a comma-separated one)
  bool names_cte = false;     // kTable: an unqualified name of a CTE visible at this point
  size_t subquery_block = 0;  // kSubquery: index in SelectStatement::blocks of its first SELECT block
};

struct FunctionCall {
  std::string name;  // as written (for `a.b(…)` the last part)
  TextSpan span;     // from the name to the closing `)`
};

enum class BlockRole {
  kOuter,                  // the statement's first SELECT block
  kSetOperand,             // a later operand of a top-level UNION/INTERSECT/EXCEPT
  kCommonTableExpression,  // a block of a CTE body (at any level)
  kFromSubquery,           // a block of a subquery in FROM/JOIN (or of a set operation inside one)
  kExpressionSubquery,     // a block of a subquery in an expression (scalar, IN, EXISTS, table function arg)
};

// One SELECT (or VALUES) block.
struct QueryBlock {
  BlockRole role = BlockRole::kOuter;
  size_t depth = 0;     // enclosing queries: 0 for the statement's own blocks
  TextSpan span;        // from SELECT/VALUES to the block's last token
  bool values = false;  // a VALUES list (no projection)
  std::vector<ProjectionItem> projection;
  std::vector<TableSource> sources;  // FROM/JOIN sources in text order (parenthesized joins flattened)
  // Clause keywords present in this block (span of the keyword(s), e.g. `GROUP BY`).
  std::optional<TextSpan> where, prewhere, group_by, having, qualify, order_by, limit, offset, array_join, settings,
      format;
  std::vector<FunctionCall> aggregates;             // aggregate calls in this block's own expressions
  std::vector<FunctionCall> expression_references;  // `__source(`/`__ref(` calls used as expressions here
};

enum class SetOperator { kUnion, kIntersect, kExcept };

struct SetOperation {
  SetOperator op;
  TextSpan span;  // the keyword and its ALL/DISTINCT/BY NAME modifiers
};

struct CommonTableExpression {
  std::string name;  // decoded
  TextSpan name_span;
  TextSpan body;        // inside the parentheses (for a ClickHouse scalar `WITH expr AS name`: the expression)
  TextSpan span;        // from the name to the closing `)` (scalar: from the expression to the name)
  bool scalar = false;  // ClickHouse `WITH expr AS name`: a named value, not a relation
};

enum class StatementKind {
  kEmpty,  // no statement at all (only comments, whitespace or `;`)
  kQuery,  // SELECT, WITH … SELECT or a parenthesized query (possibly with set operations)
  kOther,  // anything else (INSERT, CREATE, DuckDB's FROM-first …); not parsed further
};

struct SelectStatement {
  std::vector<TextSpan> statements;            // every non-empty statement, split at top-level `;`
  StatementKind kind = StatementKind::kEmpty;  // of the first statement
  TextSpan first_token;                        // the first statement's first token (when not kEmpty)
  std::vector<SetOperation> set_operations;    // top-level ones of the first statement
  std::vector<CommonTableExpression> ctes;     // the first statement's top-level WITH
  std::vector<QueryBlock> blocks;              // every block of the first statement, in parse order
  size_t outer_block = 0;                      // index of the kOuter block (kind == kQuery)

  size_t statement_count() const { return statements.size(); }
  const QueryBlock& outer() const { return blocks.at(outer_block); }
};

// Parses `text` (offsets in the result are offsets into it). Errors are located in `file`.
SelectStatement ParseSelect(std::string_view text, Dialect dialect, const std::string& file = {});

// The same, on the tokens of `text` the caller already has: Tokenize(text, dialect) without its kComment
// tokens.
SelectStatement ParseSelect(std::string_view text, std::vector<Token> significant_tokens, Dialect dialect,
                            const std::string& file = {});

// True for a ClickHouse or standard aggregate function name (case-insensitive), after stripping ClickHouse
// combinator suffixes (If, Array, Map, State, Merge, MergeState, ForEach, OrNull, OrDefault, Resample,
// Distinct, SimpleState) as often as they occur: sumIf, uniqMerge, countState, quantilesTimingArrayIf.
// The list follows StreamBuild's (which counts window functions such as row_number too) plus standard and
// DuckDB/PostgreSQL/BigQuery aggregates (string_agg, bool_and, countif, approx_count_distinct …).
// `name` is a function name as the tokenizer reads it (a bare word: letters, digits, '_', '$', bytes >= 0x80).
bool IsAggregateFunction(std::string_view name);

// The parser's keyword lists, for other readers of SQL (case-insensitive; `word` is a bare word token's text):
// CAST, TRY_CAST or SAFE_CAST, and a word that may follow a type name inside one type (`double precision`,
// `timestamp with time zone`).
bool IsCastFunctionName(std::string_view word);
bool IsTypeContinuationWord(std::string_view word);
// A bare word that cannot be a source's alias in the dialect (WHERE, JOIN, LEFT, ON, ClickHouse's FINAL …): after a
// source, such a word starts the next clause instead.
bool IsSourceKeywordWord(std::string_view word, Dialect dialect);
// True when the source that ends at byte `end` is followed by an alias (`AS x`, or a bare name that is not a source
// keyword); `significant` are the SQL's tokens (TokenizeSignificant). What the engine asks before it puts a source
// into a subquery, which PostgreSQL accepts only with an alias.
bool SourceHasAlias(const std::vector<Token>& significant, size_t end, Dialect dialect);

}  // namespace sluice::sql
