// Parser members for expressions and projection items: where an expression ends, the calls and subqueries
// inside it, and each projection item's alias, `*` and outermost cast.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql/select_parser.hpp"
#include "sql/select_parser_internal.hpp"

namespace sluice::sql::select_parser_internal {

// ---- expressions ----

// True when token i (at the top level of an expression starting at `begin`) ends that expression.
bool Parser::IsBoundary(size_t i, size_t e, const ScanContext& context, size_t begin) const {
  const uint32_t classes = tokens_[i].classes;
  if (classes & token_class::kComma) return context.stop_at_comma;
  if (!(classes & token_class::kWord)) return false;
  if (i > begin && Has(i - 1, token_class::kDot)) return false;
  // `x AS from, …` / `x AS limit FROM t` name a column; `x AS FROM t` lacks its alias.
  if (i > begin && Has(i - 1, token_class::kAs)) {
    return i + 1 < e && !Has(i + 1, token_class::kComma) && !IsBoundary(i + 1, e, context, i + 1);
  }
  if (!(classes & (token_class::kBoundary | token_class::kJoinPrefix))) return false;  // most words
  std::string_view w = tokens_[i].text;
  if (EqualsIgnoreCase(w, "from")) {
    if (i >= begin + 2 && IsWordToken(tokens_[i - 1], "distinct") &&
        (IsWordToken(tokens_[i - 2], "is") || IsWordToken(tokens_[i - 2], "not"))) {
      return false;
    }
    return !(context.order_by && i > begin && IsWordToken(tokens_[i - 1], "fill"));
  }
  if (InList(w, {"where", "prewhere", "having", "qualify", "limit", "union", "intersect", "into"})) return true;
  if (EqualsIgnoreCase(w, "except")) return !(context.projection && i > begin && IsOperator(tokens_[i - 1], "*"));
  if (EqualsIgnoreCase(w, "group") || EqualsIgnoreCase(w, "order")) return Word(i + 1, e, "by");
  if (EqualsIgnoreCase(w, "offset")) return StartsOffsetValue(i + 1, e);
  if (EqualsIgnoreCase(w, "fetch")) return Word(i + 1, e, "first") || Word(i + 1, e, "next");
  if (EqualsIgnoreCase(w, "window")) return IsName(i + 1, e) && Word(i + 2, e, "as");
  if (EqualsIgnoreCase(w, "settings")) {
    return dialect_ == Dialect::kClickHouse && IsName(i + 1, e) && i + 2 < e && IsOperator(tokens_[i + 2], "=");
  }
  if (EqualsIgnoreCase(w, "format")) return dialect_ == Dialect::kClickHouse && IsName(i + 1, e) && i + 2 == e;
  if (EqualsIgnoreCase(w, "array")) return Word(i + 1, e, "join");
  if ((EqualsIgnoreCase(w, "left") || EqualsIgnoreCase(w, "inner")) && IsArrayJoin(i, e)) return true;
  if (context.joins) {
    if (InList(w, {"join", "on", "using"})) return true;
    if (classes & token_class::kJoinPrefix) return JoinStart(i, e).second;
  }
  return false;
}

// After OFFSET: a value (`OFFSET 10`, `OFFSET ?`, `OFFSET {n:UInt32}`, `OFFSET (…)`) rather than the end of an
// item (`SELECT offset FROM …`, `offset AS o`, `offset, x`), so a column named offset stays a column.
bool Parser::StartsOffsetValue(size_t i, size_t e) const {
  if (i >= e) return false;
  const Token& token = tokens_[i];
  if (token.kind == TokenKind::kNumber || IsPunct(token, '(') || IsPunct(token, '{')) return true;
  return token.kind == TokenKind::kOperator && InList(token.text, {"?", "$", "@", ":"});
}

// The end of the expression starting at p: the first boundary at its top level, or e.
size_t Parser::ScanExpression(size_t p, size_t e, const ScanContext& context) const {
  size_t i = p;
  while (i < e) {
    if (Has(i, token_class::kOpenBracket)) {
      i = match_[i] + 1;
      continue;
    }
    if (IsBoundary(i, e, context, p)) break;
    ++i;
  }
  return i;
}

// Skips the type after `::` at `i` (the token after `::`); returns the index after the type.
size_t Parser::SkipType(size_t i, size_t e) const {
  if (IsName(i, e)) ++i;
  while (i < e) {
    if (Has(i, token_class::kTypeContinuation)) {
      ++i;
    } else if (Punct(i, e, '(') || Punct(i, e, '[')) {
      i = match_[i] + 1;
    } else {
      break;
    }
  }
  return i;
}

// Visits every token of [b, e): records aggregate and reference calls for `block`, parses subqueries.
// Returns whether an aggregate call was seen (outside nested subqueries).
bool Parser::WalkExpression(size_t b, size_t e, size_t block, size_t depth) {
  bool aggregate = false;
  // This call's open CASTs are open_casts_[base, …): (AS of a CAST, its closing `)`), innermost last.
  // The innermost is the one whose AS comes first (an inner CAST closes before the outer one's AS): next_as.
  const size_t base = open_casts_.size();
  auto& casts = open_casts_;
  size_t next_as = kNone;  // casts.back().first while this call has an open cast, else kNone
  size_t i = b;
  while (i < e) {
    if (i >= next_as) {
      while (casts.size() > base && casts.back().first < i) casts.pop_back();
      const bool at_as = casts.size() > base && casts.back().first == i;
      if (at_as) {
        i = casts.back().second;
        casts.pop_back();
      }
      next_as = casts.size() > base ? casts.back().first : kNone;
      if (at_as) continue;
    }
    const Token& token = tokens_[i];
    const uint32_t classes = tokens_[i].classes;
    if ((classes & token_class::kOpenParen) && is_query_[i]) {
      ParseQuery(i + 1, match_[i], BlockRole::kExpressionSubquery, depth + 1);
      i = match_[i] + 1;
      continue;
    }
    if (classes & token_class::kDoubleColon) {
      if (dialect_ == Dialect::kBigQuery) {
        Fail("SLU-SQL-103", token.begin, "`::` casts are not BigQuery syntax", "write CAST(expr AS type)");
      }
      i = SkipType(i + 1, e);
      continue;
    }
    if ((classes & token_class::kWord) && Has(i + 1, e, token_class::kOpenParen)) {
      size_t close = match_[i + 1];
      auto call = [&] { return FunctionCall{std::string(token.text), TextSpan{token.begin, tokens_[close].end}}; };
      if (IsReferenceCallWord(token)) {
        result_.blocks[block].expression_references.push_back(call());
      } else if (classes & token_class::kCast) {  // first: every model column is a cast, and no cast name aggregates
        size_t as = FindTopLevelAs(i + 2, close);
        if (as != kNone) {
          casts.emplace_back(as, close);
          next_as = as;
        }
      } else if (IsAggregateFunction(token.text) && !IsQuantifiedComparison(i)) {
        result_.blocks[block].aggregates.push_back(call());
        aggregate = true;
      }
    }
    ++i;
  }
  casts.resize(base);
  return aggregate;
}

// `x = ANY (…)`: ANY/ALL/SOME after a comparison is a quantifier, not the ClickHouse `any` aggregate.
bool Parser::IsQuantifiedComparison(size_t i) const {
  if (!InList(tokens_[i].text, {"any", "all", "some"}) || i == 0) return false;
  const Token& previous = tokens_[i - 1];
  return previous.kind == TokenKind::kOperator && InList(previous.text, {"=", "<>", "!=", "<", ">", "<=", ">="});
}

// ---- projection items ----

// Flattened: GCC would otherwise call out of line for every push_back (the capacity is reserved, so none grows).
__attribute__((flatten)) void Parser::TopUnits(size_t b, size_t e, std::vector<Unit>& units) const {
  units.clear();
  units.reserve(e > b ? e - b : 0);  // at most one unit per token: at most one allocation
  size_t i = b;
  while (i < e) {
    if (Has(i, token_class::kOpenBracket)) {
      units.push_back(Unit{Unit::Kind::kGroup, i, match_[i] + 1});
      i = match_[i] + 1;
    } else if (Has(i, token_class::kCase)) {
      size_t end = FindCaseEnd(i, e);
      units.push_back(Unit{Unit::Kind::kCase, i, end});
      i = end;
    } else {
      units.push_back(Unit{Unit::Kind::kToken, i, i + 1});
      ++i;
    }
  }
}

// One past the END closing the CASE at `i` (CASE … END pairs counted at this bracket level).
size_t Parser::FindCaseEnd(size_t i, size_t e) const {
  size_t open = 0;
  for (size_t k = i; k < e;) {
    if (Has(k, token_class::kOpenBracket)) {
      k = match_[k] + 1;
      continue;
    }
    const bool after_dot = k > i && Has(k - 1, token_class::kDot);
    if (Has(k, token_class::kCase) && !after_dot) ++open;
    if (Has(k, token_class::kEnd) && !after_dot && --open == 0) return k + 1;
    ++k;
  }
  Fail("SLU-SQL-103", tokens_[i].begin, "CASE without a matching END", "close the CASE expression with END");
}

bool Parser::UnitIsToken(const Unit& unit, TokenKind kind) const {
  return unit.kind == Unit::Kind::kToken && tokens_[unit.first].kind == kind;
}

// A unit after which an expression can end (so a following name is a bare alias).
bool Parser::EndsOperand(const Unit& unit) const {
  if (unit.kind != Unit::Kind::kToken) return true;
  const Token& token = tokens_[unit.first];
  switch (token.kind) {
    case TokenKind::kWord:
      return !Has(unit.first, token_class::kExpressionKeyword) || Has(unit.first, token_class::kTypeEnd);
    case TokenKind::kQuotedIdentifier:
    case TokenKind::kString:
    case TokenKind::kNumber:
      return true;
    default:
      return false;
  }
}

void Parser::AnalyzeItem(size_t b, size_t e, size_t block, size_t depth) {
  constexpr size_t kTypicalProjection = 32;  // model SELECT lists are long; grow rarely
  std::vector<ProjectionItem>& projection = result_.blocks[block].projection;
  if (projection.capacity() == 0) projection.reserve(kTypicalProjection);
  // Built where it stays, so its strings are written once; WalkExpression below may add blocks (moving this
  // block), so the item is found again by its index after it.
  const size_t index = projection.size();
  ProjectionItem& item = projection.emplace_back();
  item.span = SpanOf(b, e);
  item.expression = item.span;
  std::vector<Unit>& units = item_units_;  // free again before WalkExpression below can nest an item
  TopUnits(b, e, units);
  // `*`, `t.*`, `s.t.*` (then modifiers such as EXCEPT (…), REPLACE (…)).
  size_t k = 0;
  std::string qualifier;
  while (k + 1 < units.size() &&
         (UnitIsToken(units[k], TokenKind::kWord) || UnitIsToken(units[k], TokenKind::kQuotedIdentifier)) &&
         units[k + 1].kind == Unit::Kind::kToken && IsPunct(tokens_[units[k + 1].first], '.')) {
    qualifier += (qualifier.empty() ? "" : ".") + Decode(units[k].first);
    k += 2;
  }
  if (k < units.size() && units[k].kind == Unit::Kind::kToken && IsOperator(tokens_[units[k].first], "*")) {
    item.star = true;
    if (!qualifier.empty()) item.star_qualifier = qualifier;
  } else {
    size_t n = units.size();
    size_t expression_units = n;
    if (n >= 2 && units[n - 2].kind == Unit::Kind::kToken && Has(units[n - 2].first, token_class::kAs) &&
        (UnitIsToken(units[n - 1], TokenKind::kWord) || UnitIsToken(units[n - 1], TokenKind::kQuotedIdentifier) ||
         UnitIsToken(units[n - 1], TokenKind::kString))) {
      expression_units = n - 2;
    } else if (n >= 2 && IsBareAlias(units)) {
      expression_units = n - 1;
    } else if (n >= 1 && units[n - 1].kind == Unit::Kind::kToken && Has(units[n - 1].first, token_class::kAs)) {
      // The item stopped at the word after AS (IsBoundary): either that word ends the list (`a AS FROM t`, no
      // alias) or it is the alias and the next item follows it without a comma (`a AS x b AS y`).
      if (e + 1 < tokens_.size() && IsName(e, tokens_.size()) && !Has(e, token_class::kBoundary)) {
        Fail("SLU-SQL-104", tokens_[e].end,
             "expected `,` after `AS " + std::string(tokens_[e].text) + "`, found " + Describe(e + 1, tokens_.size()) +
                 ": a comma may be missing between select items",
             "separate the select items with commas: … AS " + std::string(tokens_[e].text) + ", " +
                 std::string(tokens_[e + 1].text) + " …");
      }
      Fail("SLU-SQL-104", tokens_[units[n - 1].first].begin,
           "expected an alias after AS, found " + Describe(e, tokens_.size()), "write AS name");
    }
    if (expression_units == 0) {
      Fail("SLU-SQL-104", item.span.begin, "projection item has an alias but no expression", "write expr AS name");
    }
    if (expression_units < n) {
      const size_t alias_token = units[n - 1].first;
      const Token& alias = tokens_[alias_token];
      if (alias.kind == TokenKind::kWord) {
        item.alias.emplace(alias.text);  // a bare word is its own value
      } else {
        item.alias = Decode(alias_token);
      }
      item.alias_span = SpanOf(alias_token, alias_token + 1);
      item.expression = SpanOf(b, units[expression_units - 1].end);
    }
    units.resize(expression_units);
    DetectCast(units, item.cast);
  }
  const bool aggregate = WalkExpression(b, e, block, depth);
  result_.blocks[block].projection[index].has_aggregate = aggregate;
}

bool Parser::IsBareAlias(const std::vector<Unit>& units) const {
  size_t n = units.size();
  const Unit& last = units[n - 1];
  if (last.kind != Unit::Kind::kToken) return false;
  const Token& name = tokens_[last.first];
  if (name.kind == TokenKind::kWord) {
    if (Has(last.first, token_class::kExpressionKeyword)) return false;
  } else if (name.kind != TokenKind::kQuotedIdentifier) {
    return false;
  }
  if (!EndsOperand(units[n - 2])) return false;
  // INTERVAL 1 DAY: the unit word belongs to the interval.
  if (n >= 3 && UnitIsToken(units[n - 3], TokenKind::kWord) && IsWordToken(tokens_[units[n - 3].first], "interval")) {
    return false;
  }
  return true;
}

void Parser::DetectCast(std::vector<Unit>& units, std::optional<ExplicitCast>& cast) const {
  // Look through parentheses around the whole expression.
  while (units.size() == 1 && units[0].kind == Unit::Kind::kGroup && IsPunct(tokens_[units[0].first], '(') &&
         !is_query_[units[0].first]) {
    Unit group = units[0];
    TopUnits(group.first + 1, group.end - 1, units);
  }
  size_t n = units.size();
  size_t colon = kNone;
  for (size_t k = 0; k < n; ++k) {
    if (units[k].kind == Unit::Kind::kToken && Has(units[k].first, token_class::kDoubleColon)) colon = k;
  }
  if (colon != kNone) {
    DoubleColonCast(units, colon, cast);
    return;
  }
  if (n != 2 || !UnitIsToken(units[0], TokenKind::kWord) || units[1].kind != Unit::Kind::kGroup ||
      !IsPunct(tokens_[units[1].first], '(')) {
    return;
  }
  if (!Has(units[0].first, token_class::kCast)) return;
  std::string_view name = tokens_[units[0].first].text;
  // The word is CAST, TRY_CAST or SAFE_CAST (its kCast bit): the length tells which.
  CastSyntax syntax = name.size() == 4   ? CastSyntax::kCast
                      : name.size() == 8 ? CastSyntax::kTryCast
                                         : CastSyntax::kSafeCast;
  size_t open = units[1].first;
  size_t close = units[1].end - 1;
  size_t as = FindTopLevelAs(open + 1, close);
  if (as != kNone) {
    if (as == open + 1 || as + 1 >= close) return;
    size_t type_end = close;
    if (dialect_ == Dialect::kBigQuery) {  // CAST(x AS STRING FORMAT 'YYYY')
      for (size_t k = as + 1; k < close; k = Has(k, token_class::kOpenBracket) ? match_[k] + 1 : k + 1) {
        if (IsWordToken(tokens_[k], "format")) {
          type_end = k;
          break;
        }
      }
      if (type_end == as + 1) return;
    }
    SetCast(cast, syntax, SpanOf(as + 1, type_end));
    return;
  }
  // ClickHouse CAST(x, 'T').
  if (dialect_ == Dialect::kClickHouse && syntax == CastSyntax::kCast && close >= open + 4 &&
      IsPunct(tokens_[close - 2], ',') && tokens_[close - 1].kind == TokenKind::kString &&
      FindTopLevelComma(open + 1, close) == close - 2) {
    cast.emplace(ExplicitCast{syntax, Decode(close - 1), SpanOf(close - 1, close)});
  }
}

size_t Parser::FindTopLevelComma(size_t p, size_t e) const {
  for (size_t i = p; i < e; i = Has(i, token_class::kOpenBracket) ? match_[i] + 1 : i + 1) {
    if (Has(i, token_class::kComma)) return i;
  }
  return kNone;
}

// `operand :: type` where the last top-level `::` is at units[colon].
void Parser::DoubleColonCast(const std::vector<Unit>& units, size_t colon, std::optional<ExplicitCast>& cast) const {
  if (colon == 0 || colon + 1 >= units.size()) return;
  for (size_t k = 0; k < colon; ++k) {
    if (units[k].kind != Unit::Kind::kToken) continue;
    const Token& token = tokens_[units[k].first];
    if (token.kind == TokenKind::kOperator && token.text != "::" && token.text != "$") return;
    if (Has(units[k].first, token_class::kOperatorKeyword)) return;
    if (IsPunct(token, ',')) return;
  }
  // The type: a name, then continuation words, ( … ) arguments and [ ] suffixes.
  const Unit& head = units[colon + 1];
  if (!(UnitIsToken(head, TokenKind::kWord) || UnitIsToken(head, TokenKind::kQuotedIdentifier))) return;
  for (size_t k = colon + 2; k < units.size(); ++k) {
    const Unit& unit = units[k];
    bool arguments = IsPunct(tokens_[unit.first], '(') || IsPunct(tokens_[unit.first], '[');
    if (unit.kind == Unit::Kind::kGroup && arguments) continue;
    if (unit.kind == Unit::Kind::kToken && Has(unit.first, token_class::kTypeContinuation)) continue;
    return;
  }
  SetCast(cast, CastSyntax::kDoubleColon, SpanOf(head.first, units.back().end));
}

void Parser::SetCast(std::optional<ExplicitCast>& cast, CastSyntax syntax, TextSpan type_span) const {
  ExplicitCast& set = cast.emplace();
  set.syntax = syntax;
  set.type_text.assign(text_.data() + type_span.begin, type_span.end - type_span.begin);
  set.type_span = type_span;
}

}  // namespace sluice::sql::select_parser_internal
