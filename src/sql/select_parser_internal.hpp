// Private to select_parser.cpp, select_parser_expressions.cpp and aggregate_functions.cpp: the Parser
// behind ParseSelect() and the token predicates its parts share.
// Thread-safety: a Parser is used by one thread for one parse; the free functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sql/select_parser.hpp"
#include "sql/token.hpp"
#include "sql/token_class.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql::select_parser_internal {

inline constexpr size_t kNone = static_cast<size_t>(-1);

inline char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

inline bool IsPunct(const Token& token, char c) {
  return token.kind == TokenKind::kPunctuation && token.text.size() == 1 && token.text[0] == c;
}

inline bool IsOperator(const Token& token, std::string_view op) {
  return token.kind == TokenKind::kOperator && token.text == op;
}

inline bool IsWordToken(const Token& token, std::string_view keyword) {
  return token.kind == TokenKind::kWord && EqualsIgnoreCase(token.text, keyword);
}

inline bool InList(std::string_view word, std::initializer_list<std::string_view> list) {
  for (std::string_view item : list) {
    if (EqualsIgnoreCase(word, item)) return true;
  }
  return false;
}

// Where an expression ends, besides the end of its range.
struct ScanContext {
  bool stop_at_comma = false;
  bool projection = false;  // `* EXCEPT (…)` continues the item
  bool joins = false;       // JOIN keywords, ON and USING end the expression (an ON condition)
  bool order_by = false;    // `WITH FILL FROM` continues the item
};

struct BlockRange {
  size_t first_core = kNone;
  size_t last_core = kNone;
};

// One top-level element of an expression: a token, a bracket group or a CASE … END.
struct Unit {
  enum class Kind { kToken, kGroup, kCase };
  Kind kind;
  size_t first;  // first token
  size_t end;    // one past the last token
};

// Parses one statement's text into a SelectStatement. Member functions are defined in select_parser.cpp
// (statements, clauses, FROM sources) and select_parser_expressions.cpp (expressions, projection items).
class Parser {
 public:
  Parser(std::string_view text, Dialect dialect, const std::string& file)
      : text_(text), dialect_(dialect), file_(file) {}

  SelectStatement Run();                                       // tokenizes the text itself
  SelectStatement Run(std::vector<Token> significant_tokens);  // the caller's tokens (no comments)

 private:
  SelectStatement Parse();  // the statement in tokens_
  // ---- token helpers (a token at or past `e` is outside the range being parsed) ----

  bool Word(size_t i, size_t e, std::string_view keyword) const { return i < e && IsWordToken(tokens_[i], keyword); }
  bool Punct(size_t i, size_t e, char c) const { return i < e && IsPunct(tokens_[i], c); }
  bool IsName(size_t i, size_t e) const {
    return i < e && (tokens_[i].kind == TokenKind::kWord || tokens_[i].kind == TokenKind::kQuotedIdentifier);
  }
  // Token i (before `e`) has one of the token_class bits.
  bool Has(size_t i, uint32_t classes) const { return (tokens_[i].classes & classes) != 0; }
  bool Has(size_t i, size_t e, uint32_t classes) const { return i < e && Has(i, classes); }
  bool IsNamesCaseInsensitive() const { return dialect_ == Dialect::kDuckDb || dialect_ == Dialect::kPostgres; }

  size_t OffsetOf(size_t i) const {
    if (i < tokens_.size()) return tokens_[i].begin;
    return tokens_.empty() ? 0 : tokens_.back().end;
  }

  std::string Describe(size_t i, size_t e) const;

  [[noreturn]] void Fail(const char* code, size_t offset, const std::string& message, std::string_view hint) const;

  TextSpan SpanOf(size_t first, size_t end) const { return TextSpan{tokens_[first].begin, tokens_[end - 1].end}; }

  std::string Decode(size_t i) const { return TokenValue(tokens_[i], dialect_); }

  // ---- precomputation ----

  // Fills match_ for every bracket and is_query_ for every `(`, and returns the token ranges of the non-empty
  // statements. Throws SLU-SQL-101/102 for unbalanced or too deeply nested brackets.
  std::vector<std::pair<size_t, size_t>> MatchBrackets();

  [[noreturn]] void UnclosedBracket(size_t index) const;

  // is_query_[open]: the `(` at `open` (closed at `close`) holds a query — it starts with SELECT/WITH/VALUES (…),
  // or is a parenthesized query followed by nothing or by a set operator or a trailing clause.
  void MarkQueryGroup(size_t open, size_t close);

  bool IsSetOperator(size_t i, size_t e) const;

  // ---- CTE scope ----

  std::string ScopeKey(std::string_view name) const;
  void PushCte(const std::string& name);
  void PopCtes(size_t mark);
  bool IsVisibleCte(std::string_view name) const;

  // ---- queries ----

  size_t NewBlock(BlockRole role, size_t depth, size_t first_token);

  // Parses the query filling tokens [b, e) exactly.
  BlockRange ParseQuery(size_t b, size_t e, BlockRole role, size_t depth);

  size_t ParseSetOperator(size_t p, size_t e, bool statement_level);

  // WITH [RECURSIVE] cte, … — all names are visible in every CTE body and in the rest of the query.
  size_t ParseWith(size_t p, size_t e, size_t depth, bool statement_level,
                   std::vector<std::pair<size_t, size_t>>& scalar_ctes);

  // The first word AS at the top level of [p, e), or kNone.
  size_t FindTopLevelAs(size_t p, size_t e) const;

  size_t ParseSelectCore(size_t p, size_t e, BlockRole role, size_t depth, size_t& next);

  size_t ParseValues(size_t p, size_t e, BlockRole role, size_t depth, size_t& next);

  // Comma-separated expressions; each must be non-empty.
  size_t ParseList(size_t p, size_t e, ScanContext context, size_t block, size_t depth, std::string_view clause);

  size_t ParseCondition(size_t p, size_t e, ScanContext context, size_t block, size_t depth, std::string_view clause);

  void MarkClause(std::optional<TextSpan>& slot, size_t first, size_t end, std::string_view clause);

  // Kept out of line so the recursive parsing functions keep small stack frames.
  [[noreturn]] void MissingExpression(size_t p, size_t e, std::string_view clause) const;

  // The clauses after the SELECT list (or after a parenthesized query term); returns where they end.
  size_t ParseClauses(size_t p, size_t e, size_t block, size_t depth);

  // ---- FROM and joins ----

  // When [p, e) starts a join: the index after its JOIN keyword and whether it is a join at all, plus
  // whether it is an ARRAY JOIN (via the first member: kNone for an ordinary join).
  std::pair<size_t, bool> JoinStart(size_t p, size_t e) const;

  bool IsArrayJoin(size_t p, size_t e) const;

  size_t ParseFrom(size_t p, size_t e, size_t block, size_t depth);

  size_t ParseJoins(size_t p, size_t e, size_t block, size_t depth);

  // Token i is a word that cannot be a bare source alias.
  bool IsSourceKeyword(size_t i) const;

  size_t ParseTablePrimary(size_t p, size_t e, size_t block, size_t depth, bool joined);

  // ClickHouse `SAMPLE k` / `OFFSET k` ratios: a number, or number/number.
  size_t ParseRatio(size_t p, size_t e, const char* clause) const;

  // FINAL, SAMPLE, TABLESAMPLE, WITH ORDINALITY/OFFSET and the alias, in any order.
  size_t ParseSourceModifiers(size_t p, size_t e, TableSource& source);

  // ---- expressions ----

  // True when token i (at the top level of an expression starting at `begin`) ends that expression.
  bool IsBoundary(size_t i, size_t e, const ScanContext& context, size_t begin) const;

  // After OFFSET: a value (`OFFSET 10`, `OFFSET ?`, `OFFSET {n:UInt32}`, `OFFSET (…)`) rather than the end of an
  // item (`SELECT offset FROM …`, `offset AS o`, `offset, x`), so a column named offset stays a column.
  bool StartsOffsetValue(size_t i, size_t e) const;

  // The end of the expression starting at p: the first boundary at its top level, or e.
  size_t ScanExpression(size_t p, size_t e, const ScanContext& context) const;

  // Skips the type after `::` at `i` (the token after `::`); returns the index after the type.
  size_t SkipType(size_t i, size_t e) const;

  // Visits every token of [b, e): records aggregate and reference calls for `block`, parses subqueries.
  // Returns whether an aggregate call was seen (outside nested subqueries).
  bool WalkExpression(size_t b, size_t e, size_t block, size_t depth);

  // `x = ANY (…)`: ANY/ALL/SOME after a comparison is a quantifier, not the ClickHouse `any` aggregate.
  bool IsQuantifiedComparison(size_t i) const;

  // ---- projection items ----

  // The top-level units of [b, e) into `units` (cleared first; its capacity is reused).
  void TopUnits(size_t b, size_t e, std::vector<Unit>& units) const;

  // One past the END closing the CASE at `i` (CASE … END pairs counted at this bracket level).
  size_t FindCaseEnd(size_t i, size_t e) const;

  bool UnitIsToken(const Unit& unit, TokenKind kind) const;

  // A unit after which an expression can end (so a following name is a bare alias).
  bool EndsOperand(const Unit& unit) const;

  void AnalyzeItem(size_t b, size_t e, size_t block, size_t depth);

  bool IsBareAlias(const std::vector<Unit>& units) const;

  // Sets `cast` to the cast of an item's expression units, if any; may replace `units` with those inside enclosing
  // brackets.
  void DetectCast(std::vector<Unit>& units, std::optional<ExplicitCast>& cast) const;

  size_t FindTopLevelComma(size_t p, size_t e) const;

  // Sets `cast` to `operand :: type` where the last top-level `::` is at units[colon], when that is a cast.
  void DoubleColonCast(const std::vector<Unit>& units, size_t colon, std::optional<ExplicitCast>& cast) const;

  // Sets `cast` to the cast whose type is written at type_span.
  void SetCast(std::optional<ExplicitCast>& cast, CastSyntax syntax, TextSpan type_span) const;

  std::string_view text_;
  Dialect dialect_;
  const std::string& file_;
  std::vector<Token> tokens_;
  std::vector<size_t> match_;  // of a bracket token: the index of its partner (other entries unused)
  std::vector<char> is_query_;
  std::unordered_map<std::string, size_t> cte_scope_;  // visible CTE name → how many WITHs define it
  std::vector<std::string> cte_stack_;                 // in definition order, for popping
  bool outer_found_ = false;
  SelectStatement result_;
  // Scratch buffers kept across projection items so a long SELECT list allocates them once: the units of the
  // item being analyzed, and the open CASTs of the WalkExpression calls in progress (each call pushes above
  // the entries it found and pops back to them before returning).
  std::vector<Unit> item_units_;
  std::vector<std::pair<size_t, size_t>> open_casts_;
};

}  // namespace sluice::sql::select_parser_internal
