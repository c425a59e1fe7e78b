#include "sql/select_parser.hpp"

#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "sql/select_parser_internal.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {

namespace select_parser_internal {

namespace {

char ClosingFor(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

}  // namespace

SelectStatement Parser::Run() {
  tokens_ = TokenizeSignificant(text_, dialect_, file_);
  return Parse();
}

SelectStatement Parser::Run(std::vector<Token> significant_tokens) {
  tokens_ = std::move(significant_tokens);
  return Parse();
}

SelectStatement Parser::Parse() {
  std::vector<std::pair<size_t, size_t>> statements = MatchBrackets();
  for (const auto& [b, e] : statements) result_.statements.push_back(TextSpan{tokens_[b].begin, tokens_[e - 1].end});
  if (statements.empty()) return std::move(result_);
  auto [b, e] = statements.front();
  result_.first_token = TextSpan{tokens_[b].begin, tokens_[b].end};
  if (Word(b, e, "select") || Word(b, e, "with") || (Punct(b, e, '(') && is_query_[b])) {
    result_.kind = StatementKind::kQuery;
    ParseQuery(b, e, BlockRole::kOuter, 0);
  } else {
    result_.kind = StatementKind::kOther;
  }
  return std::move(result_);
}

// ---- token helpers (a token at or past `e` is outside the range being parsed) ----

std::string Parser::Describe(size_t i, size_t e) const {
  constexpr size_t kShown = 40;
  bool inside = i < e || (i < tokens_.size() && Has(i, token_class::kCloseBracket));
  if (!inside) return "the end of the statement";
  std::string_view t = tokens_[i].text;
  if (t.size() <= kShown) return "`" + std::string(t) + "`";
  return "`" + std::string(t.substr(0, kShown)) + "…`";
}

void Parser::Fail(const char* code, size_t offset, const std::string& message, std::string_view hint) const {
  std::string text(text_);
  throw Error(MakeDiagnostic(code, message, LocationAt(file_, text, offset), std::string(hint), text));
}

// ---- precomputation ----

// Fills match_ for every bracket and returns the token ranges of the non-empty statements. Throws
// SLU-SQL-101/102 for unbalanced or too deeply nested brackets.
std::vector<std::pair<size_t, size_t>> Parser::MatchBrackets() {
  const size_t count = tokens_.size();
  const Token* const tokens = tokens_.data();
  match_.resize(count);  // zero-filled at once; only the entries of brackets are set and read
  is_query_.assign(count, 0);
  std::vector<std::pair<size_t, size_t>> statements;
  size_t open[kMaxSelectNesting];  // the open brackets, innermost last
  size_t depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t classes = tokens[i].classes;
    if (!(classes & (token_class::kOpenBracket | token_class::kCloseBracket | token_class::kSemicolon))) continue;
    const Token& token = tokens[i];
    if (classes & token_class::kSemicolon) {
      if (depth > 0) UnclosedBracket(open[depth - 1]);
      if (i > start) statements.emplace_back(start, i);
      start = i + 1;
    } else if (classes & token_class::kOpenBracket) {
      if (depth >= kMaxSelectNesting) {
        Fail("SLU-SQL-102", token.begin, "brackets nested more than " + std::to_string(kMaxSelectNesting) + " deep",
             "simplify the expression: split it into CTEs or remove redundant brackets");
      }
      open[depth++] = i;
    } else {
      if (depth == 0) {
        Fail("SLU-SQL-101", token.begin, "`" + std::string(token.text) + "` closes no bracket",
             "remove it, or add the opening bracket it belongs to");
      }
      const size_t opened = open[depth - 1];
      const Token& opener = tokens[opened];
      char expected = ClosingFor(opener.text[0]);
      if (token.text[0] != expected) {
        std::string text(text_);
        SourceLocation at = LocationAt(file_, text, opener.begin);
        Fail("SLU-SQL-101", token.begin,
             "`" + std::string(token.text) + "` does not match the `" + std::string(opener.text) + "` opened at line " +
                 std::to_string(at.line) + ", column " + std::to_string(at.column),
             "close `" + std::string(opener.text) + "` with `" + std::string(1, expected) + "` first");
      }
      match_[opened] = i;
      match_[i] = opened;
      --depth;
      if (opener.classes & token_class::kOpenParen) MarkQueryGroup(opened, i);
    }
  }
  if (depth > 0) UnclosedBracket(open[depth - 1]);
  if (count > start) statements.emplace_back(start, count);
  return statements;
}

void Parser::UnclosedBracket(size_t index) const {
  const Token& opener = tokens_[index];
  std::string close(1, ClosingFor(opener.text[0]));
  Fail("SLU-SQL-101", opener.begin, "`" + std::string(opener.text) + "` is never closed",
       "close it with `" + close + "` before the statement ends");
}

// Brackets close inner ones first: the groups inside this one are marked already.
void Parser::MarkQueryGroup(size_t open, size_t close) {
  const size_t j = open + 1;
  if (j >= close) return;
  if (Has(j, token_class::kSelect | token_class::kWith) ||
      (Has(j, token_class::kValues) && Has(j + 1, close, token_class::kOpenParen))) {
    is_query_[open] = 1;
  } else if (Has(j, token_class::kOpenParen) && is_query_[j]) {
    size_t after = match_[j] + 1;
    is_query_[open] = after == close || IsSetOperator(after, close) || Word(after, close, "order") ||
                      Word(after, close, "limit") || Word(after, close, "offset") || Word(after, close, "settings") ||
                      Word(after, close, "format") || Word(after, close, "fetch");
  }
}

bool Parser::IsSetOperator(size_t i, size_t e) const {
  return Word(i, e, "union") || Word(i, e, "intersect") || Word(i, e, "except");
}

// ---- CTE scope ----

std::string Parser::ScopeKey(std::string_view name) const {
  return IsNamesCaseInsensitive() ? Lowercase(name) : std::string(name);
}

void Parser::PushCte(const std::string& name) {
  std::string key = ScopeKey(name);
  ++cte_scope_[key];
  cte_stack_.push_back(std::move(key));
}

void Parser::PopCtes(size_t mark) {
  while (cte_stack_.size() > mark) {
    auto it = cte_scope_.find(cte_stack_.back());
    if (--it->second == 0) cte_scope_.erase(it);
    cte_stack_.pop_back();
  }
}

bool Parser::IsVisibleCte(std::string_view name) const { return cte_scope_.count(ScopeKey(name)) > 0; }

// ---- queries ----

size_t Parser::NewBlock(BlockRole role, size_t depth, size_t first_token) {
  if (role == BlockRole::kOuter && outer_found_) role = BlockRole::kSetOperand;
  QueryBlock block;
  block.role = role;
  block.depth = depth;
  block.span = TextSpan{tokens_[first_token].begin, tokens_[first_token].end};
  result_.blocks.push_back(std::move(block));
  size_t index = result_.blocks.size() - 1;
  if (role == BlockRole::kOuter) {
    outer_found_ = true;
    result_.outer_block = index;
  }
  return index;
}

// Parses the query filling tokens [b, e) exactly.
BlockRange Parser::ParseQuery(size_t b, size_t e, BlockRole role, size_t depth) {
  bool statement_level = role == BlockRole::kOuter && depth == 0;
  size_t scope_mark = cte_stack_.size();
  std::vector<std::pair<size_t, size_t>> scalar_ctes;
  size_t p = b;
  if (Word(p, e, "with")) p = ParseWith(p, e, depth, statement_level, scalar_ctes);
  BlockRange range;
  BlockRole term_role = role;
  while (true) {
    size_t core = kNone;
    if (Punct(p, e, '(') && is_query_[p]) {
      size_t close = match_[p];
      BlockRange inner = ParseQuery(p + 1, close, term_role, depth);
      core = inner.last_core;
      if (range.first_core == kNone) range.first_core = inner.first_core;
      p = ParseClauses(close + 1, e, core, depth);
    } else if (Word(p, e, "select")) {
      core = ParseSelectCore(p, e, term_role, depth, p);
    } else if (Word(p, e, "values") && Punct(p + 1, e, '(')) {
      core = ParseValues(p, e, term_role, depth, p);
    } else {
      Fail("SLU-SQL-103", OffsetOf(p), "expected SELECT, found " + Describe(p, e),
           "a query is SELECT …, WITH … SELECT …, or a parenthesized query");
    }
    if (range.first_core == kNone) {
      range.first_core = core;
      for (const auto& [sb, se] : scalar_ctes) WalkExpression(sb, se, core, depth);
    }
    range.last_core = core;
    if (!IsSetOperator(p, e)) break;
    p = ParseSetOperator(p, e, statement_level);
    if (term_role == BlockRole::kOuter) term_role = BlockRole::kSetOperand;
  }
  if (p != e) {
    Fail("SLU-SQL-103", OffsetOf(p), "unexpected " + Describe(p, e) + " after the query",
         "end the statement here, or move the clause to its place (… FROM … WHERE … GROUP BY … ORDER BY … LIMIT)");
  }
  PopCtes(scope_mark);
  return range;
}

size_t Parser::ParseSetOperator(size_t p, size_t e, bool statement_level) {
  SetOperator op = Word(p, e, "union")       ? SetOperator::kUnion
                   : Word(p, e, "intersect") ? SetOperator::kIntersect
                                             : SetOperator::kExcept;
  size_t first = p++;
  if (Word(p, e, "all") || Word(p, e, "distinct")) ++p;
  if (Word(p, e, "by") && Word(p + 1, e, "name")) p += 2;
  if (statement_level) result_.set_operations.push_back(SetOperation{op, SpanOf(first, p)});
  if (p >= e) {
    Fail("SLU-SQL-103", OffsetOf(p),
         "expected a query after " + std::string(tokens_[first].text) + ", found the end of the statement",
         "write the second query, or remove the set operator");
  }
  return p;
}

// WITH [RECURSIVE] cte, … — all names are visible in every CTE body and in the rest of the query.
size_t Parser::ParseWith(size_t p, size_t e, size_t depth, bool statement_level,
                         std::vector<std::pair<size_t, size_t>>& scalar_ctes) {
  ++p;  // WITH
  if (Word(p, e, "recursive")) ++p;
  struct Body {
    size_t begin, end;
  };
  std::vector<CommonTableExpression> ctes;
  std::vector<Body> bodies;
  constexpr std::string_view hint = "write WITH name AS (SELECT …)";
  while (true) {
    if (p >= e) Fail("SLU-SQL-105", OffsetOf(p), "WITH needs a common table expression", hint);
    size_t after_name = p + 1;
    if (Punct(after_name, e, '(')) after_name = match_[after_name] + 1;
    bool named = IsName(p, e) && Word(after_name, e, "as");
    size_t open = after_name + 1;
    if (Word(open, e, "not") && Word(open + 1, e, "materialized")) {
      open += 2;
    } else if (Word(open, e, "materialized")) {
      open += 1;
    }
    if (named && Punct(open, e, '(') && match_[open] == open + 1) {
      Fail("SLU-SQL-105", OffsetOf(open + 1), "the body of CTE `" + std::string(tokens_[p].text) + "` is empty", hint);
    }
    bool standard = named && Punct(open, e, '(') && is_query_[open];
    if (named && !standard && dialect_ != Dialect::kClickHouse) {
      Fail("SLU-SQL-105", OffsetOf(open),
           "the body of CTE `" + std::string(tokens_[p].text) + "` must be a parenthesized query, found " +
               Describe(open, e),
           hint);
    }
    if (standard) {
      size_t close = match_[open];
      CommonTableExpression cte;
      cte.name = Decode(p);
      cte.name_span = SpanOf(p, p + 1);
      cte.body = open + 1 < close ? SpanOf(open + 1, close) : TextSpan{tokens_[close].begin, tokens_[close].begin};
      cte.span = SpanOf(p, close + 1);
      ctes.push_back(std::move(cte));
      bodies.push_back(Body{open + 1, close});
      p = close + 1;
    } else if (dialect_ == Dialect::kClickHouse) {
      size_t as = FindTopLevelAs(p, e);
      if (as == kNone || as == p || !IsName(as + 1, e)) {
        Fail("SLU-SQL-105", OffsetOf(p),
             "expected `name AS (query)` or `expression AS name` after WITH, found " + Describe(p, e),
             std::string(hint) + ", or WITH expression AS name");
      }
      CommonTableExpression cte;
      cte.name = Decode(as + 1);
      cte.name_span = SpanOf(as + 1, as + 2);
      cte.body = SpanOf(p, as);
      cte.span = SpanOf(p, as + 2);
      cte.scalar = true;
      ctes.push_back(std::move(cte));
      scalar_ctes.emplace_back(p, as);
      bodies.push_back(Body{kNone, kNone});
      p = as + 2;
    } else {
      Fail("SLU-SQL-105", OffsetOf(p), "expected `name AS (query)` after WITH, found " + Describe(p, e), hint);
    }
    if (!Punct(p, e, ',')) break;
    ++p;
  }
  for (const CommonTableExpression& cte : ctes) {
    if (!cte.scalar) PushCte(cte.name);
  }
  for (const Body& body : bodies) {
    if (body.begin == kNone) continue;
    ParseQuery(body.begin, body.end, BlockRole::kCommonTableExpression, depth + 1);
  }
  if (statement_level) result_.ctes = std::move(ctes);
  return p;
}

// The first word AS at the top level of [p, e), or kNone.
size_t Parser::FindTopLevelAs(size_t p, size_t e) const {
  for (size_t i = p; i < e;) {
    const uint32_t classes = tokens_[i].classes;
    if (classes & token_class::kOpenBracket) {
      i = match_[i] + 1;
      continue;
    }
    if (classes & token_class::kAs) return i;
    if (classes & token_class::kComma) return kNone;
    ++i;
  }
  return kNone;
}

size_t Parser::ParseSelectCore(size_t p, size_t e, BlockRole role, size_t depth, size_t& next) {
  size_t block = NewBlock(role, depth, p);
  ++p;  // SELECT
  if (Word(p, e, "distinct")) {
    ++p;
    if (Word(p, e, "on") && Punct(p + 1, e, '(')) {
      WalkExpression(p + 2, match_[p + 1], block, depth);
      p = match_[p + 1] + 1;
    }
  } else if (Word(p, e, "all")) {
    ++p;
  }
  if (Word(p, e, "top") && p + 1 < e && (tokens_[p + 1].kind == TokenKind::kNumber || Punct(p + 1, e, '('))) {
    p = Punct(p + 1, e, '(') ? match_[p + 1] + 1 : p + 2;
    if (Word(p, e, "with") && Word(p + 1, e, "ties")) p += 2;
  }
  if (Word(p, e, "as") && (Word(p + 1, e, "struct") || Word(p + 1, e, "value"))) p += 2;
  ScanContext context;
  context.stop_at_comma = true;
  context.projection = true;
  bool first = true;
  while (true) {
    size_t end = ScanExpression(p, e, context);
    if (end == p) {
      if (Punct(p, e, ',')) {
        Fail("SLU-SQL-104", OffsetOf(p), "empty item in the SELECT list", "remove the extra comma");
      }
      if (first) {
        Fail("SLU-SQL-104", OffsetOf(p), "SELECT has no projection before " + Describe(p, e),
             "list the columns to select: SELECT CAST(x AS Int64) AS x …");
      }
      if (dialect_ != Dialect::kDuckDb && dialect_ != Dialect::kClickHouse) {
        Fail("SLU-SQL-104", OffsetOf(p - 1), "trailing comma in the SELECT list",
             "remove the comma before " + Describe(p, e));
      }
      break;
    }
    AnalyzeItem(p, end, block, depth);
    first = false;
    p = end;
    if (!Punct(p, e, ',')) break;
    ++p;
  }
  p = ParseClauses(p, e, block, depth);
  result_.blocks[block].span.end = tokens_[p - 1].end;
  next = p;
  return block;
}

size_t Parser::ParseValues(size_t p, size_t e, BlockRole role, size_t depth, size_t& next) {
  size_t block = NewBlock(role, depth, p);
  result_.blocks[block].values = true;
  ScanContext context;
  context.stop_at_comma = true;
  p = ParseList(p + 1, e, context, block, depth, "VALUES");
  p = ParseClauses(p, e, block, depth);
  result_.blocks[block].span.end = tokens_[p - 1].end;
  next = p;
  return block;
}

// Comma-separated expressions; each must be non-empty.
size_t Parser::ParseList(size_t p, size_t e, ScanContext context, size_t block, size_t depth, std::string_view clause) {
  context.stop_at_comma = true;
  while (true) {
    size_t end = ScanExpression(p, e, context);
    if (end == p) MissingExpression(p, e, clause);
    WalkExpression(p, end, block, depth);
    p = end;
    if (!Punct(p, e, ',')) return p;
    ++p;
  }
}

size_t Parser::ParseCondition(size_t p, size_t e, ScanContext context, size_t block, size_t depth,
                              std::string_view clause) {
  size_t end = ScanExpression(p, e, context);
  if (end == p) MissingExpression(p, e, clause);
  WalkExpression(p, end, block, depth);
  return end;
}

void Parser::MarkClause(std::optional<TextSpan>& slot, size_t first, size_t end, std::string_view clause) {
  if (slot) {
    std::string name(clause);
    Fail("SLU-SQL-107", tokens_[first].begin, name + " appears twice in one SELECT", "combine them into one " + name);
  }
  slot = SpanOf(first, end);
}

// Kept out of line so the recursive parsing functions keep small stack frames.
void Parser::MissingExpression(size_t p, size_t e, std::string_view clause) const {
  std::string name(clause);
  Fail("SLU-SQL-104", OffsetOf(p), name + " needs an expression before " + Describe(p, e),
       Punct(p, e, ',') ? "remove the extra comma" : "write the expression, or remove " + name);
}

// The clauses after the SELECT list (or after a parenthesized query term); returns where they end.
size_t Parser::ParseClauses(size_t p, size_t e, size_t block, size_t depth) {
  ScanContext plain;
  plain.stop_at_comma = true;  // a top-level comma ends a condition (and is then reported as unexpected)
  bool from_seen = false;
  bool plain_limit = false;
  while (p < e) {
    QueryBlock* b = &result_.blocks[block];
    if (Word(p, e, "from")) {
      if (from_seen) {
        Fail("SLU-SQL-107", tokens_[p].begin, "FROM appears twice in one SELECT", "join the sources in one FROM");
      }
      from_seen = true;
      p = ParseFrom(p + 1, e, block, depth);
    } else if (Word(p, e, "prewhere")) {
      MarkClause(b->prewhere, p, p + 1, "PREWHERE");
      p = ParseCondition(p + 1, e, plain, block, depth, "PREWHERE");
    } else if (Word(p, e, "where")) {
      MarkClause(b->where, p, p + 1, "WHERE");
      p = ParseCondition(p + 1, e, plain, block, depth, "WHERE");
    } else if (Word(p, e, "having")) {
      MarkClause(b->having, p, p + 1, "HAVING");
      p = ParseCondition(p + 1, e, plain, block, depth, "HAVING");
    } else if (Word(p, e, "qualify")) {
      MarkClause(b->qualify, p, p + 1, "QUALIFY");
      p = ParseCondition(p + 1, e, plain, block, depth, "QUALIFY");
    } else if (Word(p, e, "group") && Word(p + 1, e, "by")) {
      MarkClause(b->group_by, p, p + 2, "GROUP BY");
      p = ParseList(p + 2, e, plain, block, depth, "GROUP BY");
    } else if (Word(p, e, "order") && Word(p + 1, e, "by")) {
      MarkClause(b->order_by, p, p + 2, "ORDER BY");
      ScanContext order;
      order.order_by = true;
      p = ParseList(p + 2, e, order, block, depth, "ORDER BY");
    } else if (Word(p, e, "limit")) {
      // ClickHouse `LIMIT n BY x` may precede a plain LIMIT; only plain LIMITs count as duplicates.
      size_t first = p;
      p = ParseList(p + 1, e, plain, block, depth, "LIMIT");
      bool by = false;
      for (size_t k = first + 1; k < p; k = Has(k, token_class::kOpenBracket) ? match_[k] + 1 : k + 1) {
        by = by || IsWordToken(tokens_[k], "by");
      }
      if (!by) {
        if (plain_limit) MarkClause(result_.blocks[block].limit, first, first + 1, "LIMIT");
        plain_limit = true;
      }
      if (!result_.blocks[block].limit) result_.blocks[block].limit = SpanOf(first, first + 1);
    } else if (Word(p, e, "fetch")) {
      if (!b->limit) MarkClause(b->limit, p, p + 1, "FETCH");
      p = ParseCondition(p + 1, e, plain, block, depth, "FETCH");
    } else if (Word(p, e, "offset")) {
      MarkClause(b->offset, p, p + 1, "OFFSET");
      p = ParseCondition(p + 1, e, plain, block, depth, "OFFSET");
    } else if (Word(p, e, "window") && IsName(p + 1, e) && Word(p + 2, e, "as")) {
      p = ParseList(p + 1, e, plain, block, depth, "WINDOW");
    } else if (dialect_ == Dialect::kClickHouse && Word(p, e, "settings") && !Punct(p + 1, e, '(')) {
      MarkClause(b->settings, p, p + 1, "SETTINGS");
      p = ParseList(p + 1, e, plain, block, depth, "SETTINGS");
    } else if (dialect_ == Dialect::kClickHouse && Word(p, e, "format") && !Punct(p + 1, e, '(')) {
      MarkClause(b->format, p, p + 1, "FORMAT");
      if (!IsName(p + 1, e)) {
        Fail("SLU-SQL-104", OffsetOf(p + 1), "FORMAT needs a format name, found " + Describe(p + 1, e),
             "e.g. FORMAT JSONEachRow");
      }
      p += 2;
    } else if (IsArrayJoin(p, e)) {
      p = ParseJoins(p, e, block, depth);
    } else {
      break;
    }
  }
  return p;
}

// ---- FROM and joins ----

// When [p, e) starts a join: the index after its JOIN keyword and whether it is a join at all, plus
// whether it is an ARRAY JOIN (via the first member: kNone for an ordinary join).
std::pair<size_t, bool> Parser::JoinStart(size_t p, size_t e) const {
  constexpr size_t kMaxPrefixWords = 5;
  size_t k = p;
  while (k < e && k - p < kMaxPrefixWords && Has(k, token_class::kJoinPrefix)) {
    ++k;
  }
  if (Word(k, e, "join")) return {k + 1, true};
  return {p, false};
}

bool Parser::IsArrayJoin(size_t p, size_t e) const {
  if (Word(p, e, "left") || Word(p, e, "inner")) ++p;
  return Word(p, e, "array") && Word(p + 1, e, "join");
}

size_t Parser::ParseFrom(size_t p, size_t e, size_t block, size_t depth) {
  while (true) {
    p = ParseTablePrimary(p, e, block, depth, false);
    p = ParseJoins(p, e, block, depth);
    if (!Punct(p, e, ',')) return p;
    ++p;
  }
}

size_t Parser::ParseJoins(size_t p, size_t e, size_t block, size_t depth) {
  ScanContext on;
  on.joins = true;
  on.stop_at_comma = true;
  while (p < e) {
    if (IsArrayJoin(p, e)) {
      size_t first = p;
      while (!Word(p, e, "join")) ++p;
      ++p;
      QueryBlock& b = result_.blocks[block];
      if (!b.array_join) b.array_join = SpanOf(first, p);
      p = ParseList(p, e, on, block, depth, "ARRAY JOIN");
      continue;
    }
    auto [after, is_join] = JoinStart(p, e);
    if (!is_join) return p;
    p = ParseTablePrimary(after, e, block, depth, true);
    if (Word(p, e, "on")) {
      p = ParseCondition(p + 1, e, on, block, depth, "ON");
    } else if (Word(p, e, "using")) {
      p = Punct(p + 1, e, '(') ? match_[p + 1] + 1 : ParseCondition(p + 1, e, on, block, depth, "USING");
    }
  }
  return p;
}

// Words that cannot be a bare source alias.
bool Parser::IsSourceKeyword(size_t i) const {
  const Token& token = tokens_[i];
  return token.kind == TokenKind::kWord && IsSourceKeywordWord(token.text, dialect_);
}

size_t Parser::ParseTablePrimary(size_t p, size_t e, size_t block, size_t depth, bool joined) {
  if (Word(p, e, "lateral")) ++p;
  constexpr std::string_view hint =
      "a source is a __source(…)/__ref(…) call, a CTE name, a (subquery) or a table function";
  if (p >= e) Fail("SLU-SQL-106", OffsetOf(p), "expected a source, found " + Describe(p, e), hint);
  TableSource source;
  source.joined = joined;
  const Token& first = tokens_[p];
  if (IsPunct(first, '(')) {
    size_t close = match_[p];
    if (is_query_[p]) {
      source.kind = SourceKind::kSubquery;
      source.span = SpanOf(p, close + 1);
      BlockRange inner = ParseQuery(p + 1, close, BlockRole::kFromSubquery, depth + 1);
      source.subquery_block = inner.first_core;
      p = close + 1;
    } else {
      if (p + 1 == close) {
        Fail("SLU-SQL-106", OffsetOf(close), "expected a source inside the brackets, found `)`", hint);
      }
      size_t end = ParseFrom(p + 1, close, block, depth);
      if (end != close) {
        Fail("SLU-SQL-103", OffsetOf(end), "unexpected " + Describe(end, close) + " in a bracketed join",
             "a bracketed FROM item holds sources and joins only");
      }
      p = ParseSourceModifiers(close + 1, e, source);
      return p;  // a bracketed join: its sources were recorded one by one
    }
  } else if (IsReferenceCallWord(first) && Punct(p + 1, e, '(')) {
    size_t close = match_[p + 1];
    source.kind = SourceKind::kReference;
    source.name = std::string(first.text);
    if (p + 2 < close && (tokens_[p + 2].kind == TokenKind::kWord || tokens_[p + 2].kind == TokenKind::kString ||
                          tokens_[p + 2].kind == TokenKind::kQuotedIdentifier)) {
      source.reference_name = Decode(p + 2);
    }
    source.span = SpanOf(p, close + 1);
    p = close + 1;
  } else if (IsName(p, e) && !IsSourceKeyword(p)) {
    size_t k = p;
    std::string name = Decode(k);
    size_t parts = 1;
    while (Punct(k + 1, e, '.') && IsName(k + 2, e)) {
      k += 2;
      name += "." + Decode(k);
      ++parts;
    }
    if (Punct(k + 1, e, '(')) {
      size_t close = match_[k + 1];
      source.kind = SourceKind::kTableFunction;
      source.name = std::string(text_.substr(first.begin, tokens_[k].end - first.begin));
      source.span = SpanOf(p, close + 1);
      WalkExpression(k + 2, close, block, depth);
      p = close + 1;
    } else {
      source.kind = SourceKind::kTable;
      source.name = std::move(name);
      source.names_cte = parts == 1 && IsVisibleCte(source.name);
      source.span = SpanOf(p, k + 1);
      p = k + 1;
    }
  } else {
    Fail("SLU-SQL-106", OffsetOf(p), "expected a source, found " + Describe(p, e), hint);
  }
  p = ParseSourceModifiers(p, e, source);
  result_.blocks[block].sources.push_back(std::move(source));
  return p;
}

// ClickHouse `SAMPLE k` / `OFFSET k` ratios: a number, or number/number.
size_t Parser::ParseRatio(size_t p, size_t e, const char* clause) const {
  if (!(p < e && tokens_[p].kind == TokenKind::kNumber)) {
    Fail("SLU-SQL-106", OffsetOf(p),
         std::string(clause) + " needs a number or a ratio such as 1/10, found " + Describe(p, e),
         "e.g. SAMPLE 0.1 or SAMPLE 1/10 OFFSET 1/2");
  }
  ++p;
  if (p + 1 < e && IsOperator(tokens_[p], "/") && tokens_[p + 1].kind == TokenKind::kNumber) p += 2;
  return p;
}

// FINAL, SAMPLE, TABLESAMPLE, WITH ORDINALITY/OFFSET and the alias, in any order.
size_t Parser::ParseSourceModifiers(size_t p, size_t e, TableSource& source) {
  bool clickhouse = dialect_ == Dialect::kClickHouse;
  while (p < e) {
    if (clickhouse && Word(p, e, "final")) {
      ++p;
    } else if (clickhouse && Word(p, e, "sample")) {
      p = ParseRatio(p + 1, e, "SAMPLE");
      if (Word(p, e, "offset")) p = ParseRatio(p + 1, e, "SAMPLE … OFFSET");
    } else if (Word(p, e, "tablesample")) {
      ++p;
      if (IsName(p, e) && !Punct(p, e, '(')) ++p;
      if (!Punct(p, e, '(')) {
        Fail("SLU-SQL-106", OffsetOf(p), "TABLESAMPLE needs its arguments in ( ), found " + Describe(p, e),
             "e.g. TABLESAMPLE BERNOULLI (10)");
      }
      p = match_[p] + 1;
      if (Word(p, e, "repeatable") && Punct(p + 1, e, '(')) p = match_[p + 1] + 1;
    } else if (Word(p, e, "with") && Word(p + 1, e, "ordinality")) {
      p += 2;
    } else if (Word(p, e, "with") && Word(p + 1, e, "offset")) {
      p += 2;
      if (Word(p, e, "as") && IsName(p + 1, e)) {
        p += 2;
      } else if (IsName(p, e) && !IsSourceKeyword(p)) {
        ++p;
      }
    } else if (!source.alias && Word(p, e, "as")) {
      if (!(IsName(p + 1, e) || (p + 1 < e && tokens_[p + 1].kind == TokenKind::kString))) {
        Fail("SLU-SQL-106", OffsetOf(p + 1), "expected an alias after AS, found " + Describe(p + 1, e),
             "write AS name");
      }
      source.alias = Decode(p + 1);
      p += 2;
      if (Punct(p, e, '(')) p = match_[p] + 1;
    } else if (!source.alias && IsName(p, e) && !IsSourceKeyword(p)) {
      source.alias = Decode(p);
      ++p;
      if (Punct(p, e, '(')) p = match_[p] + 1;
    } else {
      break;
    }
  }
  return p;
}

}  // namespace select_parser_internal

SelectStatement ParseSelect(std::string_view text, Dialect dialect, const std::string& file) {
  return select_parser_internal::Parser(text, dialect, file).Run();
}

SelectStatement ParseSelect(std::string_view text, std::vector<Token> significant_tokens, Dialect dialect,
                            const std::string& file) {
  return select_parser_internal::Parser(text, dialect, file).Run(std::move(significant_tokens));
}

}  // namespace sluice::sql
