// The comparison a SQL test compiles to: the output columns of the compared SELECTs, found on their tokens,
// and the multiset comparison statement, written for the project's dialect.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "project/checks/check_files.hpp"
#include "sql/dialect.hpp"
#include "sql/token_class.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::checks {

namespace {

using sql::Token;
using sql::TokenKind;

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Output columns of a SELECT (for the comparison), found on its tokens.

class ColumnInference {
 public:
  // Columns of a CTE by name: a test CTE's text, or the known columns of an assembled model.
  using Lookup = ColumnLookup;

  ColumnInference(sql::Dialect dialect, Lookup lookup) : dialect_(dialect), lookup_(std::move(lookup)) {}

  // Output column names of `text`, or false with `problem` set.
  bool Infer(std::string_view text, std::vector<std::string>& names, std::string& problem, int depth = 0) {
    constexpr int kMaxDepth = 32;
    if (depth > kMaxDepth) {
      problem = "`*` expands through too many CTEs";
      return false;
    }
    std::vector<Token> tokens = sql::TokenizeSignificant(text, dialect_);
    return InferRange(text, tokens, 0, tokens.size(), names, problem, depth);
  }

 private:
  static bool IsClause(const Token& token) {
    static const std::string_view kClauses[] = {"FROM",   "WHERE",     "GROUP",    "HAVING", "ORDER",  "LIMIT",
                                                "UNION",  "EXCEPT",    "INTERSECT", "SETTINGS", "FORMAT", "WINDOW",
                                                "QUALIFY", "INTO",     "PREWHERE", "OFFSET", "FETCH"};
    for (std::string_view clause : kClauses) {
      if (IsWord(token, clause)) return true;
    }
    return IsPunctuation(token, ";");
  }

  // Words that end an expression rather than name it (`x IS NULL`, `CASE … END`, `INTERVAL 1 DAY`).
  static bool IsKeyword(const Token& token) {
    static const std::string_view kKeywords[] = {
        "NULL", "TRUE",   "FALSE",  "END",  "AND",  "OR",     "NOT",     "IS",    "IN",     "LIKE", "ILIKE",
        "BETWEEN", "THEN", "ELSE",  "WHEN", "CASE", "AS",     "DISTINCT", "ASC",  "DESC",   "SECOND", "MINUTE",
        "HOUR", "DAY",    "WEEK",   "MONTH", "QUARTER", "YEAR"};
    for (std::string_view keyword : kKeywords) {
      if (IsWord(token, keyword)) return true;
    }
    return false;
  }

  std::string ItemText(std::string_view text, const std::vector<Token>& tokens, size_t a, size_t b) const {
    constexpr size_t kShown = 60;
    std::string item(text.substr(tokens[a].begin, tokens[b - 1].end - tokens[a].begin));
    return item.size() > kShown ? item.substr(0, kShown) + "…" : item;
  }

  bool InferRange(std::string_view text, const std::vector<Token>& tokens, size_t lo, size_t hi,
                  std::vector<std::string>& names, std::string& problem, int depth) {
    size_t i = lo;
    if (i < hi && IsPunctuation(tokens[i], "(")) {
      size_t close = MatchingParenthesis(tokens, i, hi);
      if (close == tokens.size()) {
        problem = "its parentheses do not balance";
        return false;
      }
      return InferRange(text, tokens, i + 1, close, names, problem, depth);
    }
    if (i < hi && IsWord(tokens[i], "WITH")) {
      int level = 0;
      for (; i < hi; ++i) {
        if (IsPunctuation(tokens[i], "(")) ++level;
        if (IsPunctuation(tokens[i], ")")) --level;
        if (level == 0 && IsWord(tokens[i], "SELECT")) break;
      }
    }
    if (i >= hi || !IsWord(tokens[i], "SELECT")) {
      problem = "it is not a SELECT";
      return false;
    }
    ++i;
    if (i < hi && (IsWord(tokens[i], "DISTINCT") || IsWord(tokens[i], "ALL"))) ++i;
    size_t end = i;
    int level = 0;
    std::vector<std::pair<size_t, size_t>> items;
    size_t item_begin = i;
    for (; end < hi; ++end) {
      const Token& token = tokens[end];
      if (IsPunctuation(token, "(") || IsPunctuation(token, "[") || IsPunctuation(token, "{")) ++level;
      if (IsPunctuation(token, ")") || IsPunctuation(token, "]") || IsPunctuation(token, "}")) --level;
      if (level != 0) continue;
      if (IsClause(token)) break;
      if (IsPunctuation(token, ",")) {
        items.emplace_back(item_begin, end);
        item_begin = end + 1;
      }
    }
    items.emplace_back(item_begin, end);
    for (size_t n = 0; n < items.size(); ++n) {
      auto [a, b] = items[n];
      if (a >= b) {
        problem = "select item " + std::to_string(n + 1) + " is empty";
        return false;
      }
      size_t count = b - a;
      const Token& last = tokens[b - 1];
      bool star = last.kind == TokenKind::kOperator && last.text == "*" &&
                  (count == 1 || (count == 3 && IsPunctuation(tokens[a + 1], ".")));
      if (star) {
        if (!ExpandStar(text, tokens, end, hi, names, problem, depth)) return false;
      } else if (count >= 3 && IsWord(tokens[b - 2], "AS") && IsName(last)) {
        names.push_back(sql::TokenValue(last, dialect_));
      } else if (count == 1 && IsName(last) && !IsKeyword(last)) {
        names.push_back(sql::TokenValue(last, dialect_));
      } else if (count % 2 == 1 && IsName(last) && IsQualifiedName(tokens, a, b)) {
        names.push_back(sql::TokenValue(last, dialect_));
      } else if (count >= 2 && IsName(last) && !IsKeyword(last) && AllowsImplicitAlias(tokens[b - 2])) {
        names.push_back(sql::TokenValue(last, dialect_));
      } else {
        problem = "select item " + std::to_string(n + 1) + " (`" + ItemText(text, tokens, a, b) +
                  "`) has no name; write `… AS name`";
        return false;
      }
    }
    std::set<std::string> seen;
    for (const std::string& name : names) {
      if (!seen.insert(name).second) {
        problem = "column '" + name + "' appears twice";
        return false;
      }
    }
    return true;
  }

  static bool IsQualifiedName(const std::vector<Token>& tokens, size_t a, size_t b) {
    for (size_t k = a; k < b; ++k) {
      bool even = (k - a) % 2 == 0;
      if (even ? !IsName(tokens[k]) : !IsPunctuation(tokens[k], ".")) return false;
    }
    return true;
  }

  static bool AllowsImplicitAlias(const Token& before) {
    switch (before.kind) {
      case TokenKind::kString:
      case TokenKind::kNumber:
      case TokenKind::kQuotedIdentifier:
        return true;
      case TokenKind::kPunctuation:
        return before.text == ")";
      case TokenKind::kWord:
        return !IsKeyword(before) && !IsWord(before, "INTERVAL");
      default:
        return false;
    }
  }

  // `SELECT * FROM <one CTE> [alias] …`: the columns of that CTE.
  bool ExpandStar(std::string_view text, const std::vector<Token>& tokens, size_t from, size_t hi,
                  std::vector<std::string>& names, std::string& problem, int depth) {
    const std::string unsupported = "`*` can be expanded only over a single CTE of the test; list the columns";
    if (from + 1 >= hi || !IsWord(tokens[from], "FROM") || !IsName(tokens[from + 1])) {
      problem = unsupported;
      return false;
    }
    int level = 0;
    for (size_t k = from + 2; k < hi; ++k) {
      if (IsPunctuation(tokens[k], "(")) ++level;
      if (IsPunctuation(tokens[k], ")")) --level;
      if (level != 0) continue;
      if (IsClause(tokens[k])) break;
      if (IsPunctuation(tokens[k], ",") || IsPunctuation(tokens[k], ".") || IsPunctuation(tokens[k], "(") ||
          IsWord(tokens[k], "JOIN") || IsWord(tokens[k], "ARRAY")) {
        problem = unsupported;
        return false;
      }
    }
    std::string source = sql::TokenValue(tokens[from + 1], dialect_);
    std::string source_text;
    std::vector<std::string> columns;
    if (!lookup_(source, source_text, columns)) {
      problem = "`*` reads " + source + ", whose columns are unknown; list the columns";
      return false;
    }
    if (columns.empty() && !Infer(source_text, columns, problem, depth + 1)) return false;
    names.insert(names.end(), columns.begin(), columns.end());
    return true;
  }

  sql::Dialect dialect_;
  Lookup lookup_;
};

// ---------------------------------------------------------------------------------------------------------
// The comparison statement.

// How a dialect spells the pieces of the multiset comparison.
struct CompareSyntax {
  std::string_view count;       // rows in a group
  std::string_view left_join;
  bool null_safe_function;      // isNotDistinctFrom(a, b), else a IS NOT DISTINCT FROM b
  std::string_view text_open;   // a value as nullable text: text_open + value + text_close
  std::string_view text_close;
  std::string_view array_open;  // list literal: array_open + items + "]"
  std::string_view int64_type;
  std::string_view row_text;    // the whole row of `__assert_row` as text
};

CompareSyntax SyntaxFor(sql::Dialect dialect) {
  switch (dialect) {
    case sql::Dialect::kClickHouse:
      return {"count()", "ALL LEFT JOIN", true, "toNullable(toString(", "))", "[", "Int64",
              "toNullable(toString(tuple(*)))"};
    case sql::Dialect::kDuckDb:
      return {"count(*)", "LEFT JOIN", false, "CAST(", " AS VARCHAR)", "[", "BIGINT",
              "CAST(__assert_row AS VARCHAR)"};
    case sql::Dialect::kPostgres:
      return {"count(*)", "LEFT JOIN", false, "CAST(", " AS TEXT)", "ARRAY[", "BIGINT", "CAST(__assert_row AS TEXT)"};
    case sql::Dialect::kBigQuery:
      return {"count(*)", "LEFT JOIN", false, "CAST(", " AS STRING)", "[", "INT64", "TO_JSON_STRING(__assert_row)"};
  }
  return SyntaxFor(sql::Dialect::kClickHouse);
}

class ComparisonWriter {
 public:
  ComparisonWriter(sql::Dialect dialect, NullSafeSpelling spelling)
      : dialect_(dialect), syntax_(SyntaxFor(dialect)), spelling_(spelling) {}

  void AddComparison(size_t index, const ComparisonCase& c, std::vector<NamedSql>& ctes,
                     std::vector<std::string>& branches) const {
    std::string prefix = std::string(kCasePrefix) + std::to_string(index);
    std::vector<std::string> quoted;
    for (const std::string& column : c.columns) quoted.push_back(sql::QuoteIdentifier(dialect_, column));
    std::vector<std::string> expected_items, actual_items;
    for (size_t k = 0; k < quoted.size(); ++k) {
      std::string value = "__case_rows." + quoted[k];
      if (c.types.empty()) {
        expected_items.push_back(Text(value) + " AS " + quoted[k]);
        actual_items.push_back(Text(value) + " AS " + quoted[k]);
      } else {
        expected_items.push_back("CAST(" + value + " AS " + c.types[k] + ") AS " + quoted[k]);
        actual_items.push_back(value + " AS " + quoted[k]);
      }
    }
    std::string columns = Joined(quoted, ", ");
    ctes.push_back({prefix + "_expected", "SELECT " + Joined(expected_items, ", ") + "\nFROM " + c.expected +
                                              " AS __case_rows"});
    ctes.push_back({prefix + "_actual", "SELECT " + Joined(actual_items, ", ") + "\nFROM " + c.actual +
                                            " AS __case_rows"});
    for (const char* side : {"_expected", "_actual"}) {
      ctes.push_back({prefix + side + "_counts", "SELECT " + columns + ", " + std::string(syntax_.count) +
                                                     " AS __case_count\nFROM " + prefix + side + "\nGROUP BY " + columns});
    }
    branches.push_back(Difference(index, "missing", prefix + "_expected_counts", prefix + "_actual_counts", quoted));
    branches.push_back(Difference(index, "unexpected", prefix + "_actual_counts", prefix + "_expected_counts", quoted));
  }

  std::string Assertion(size_t index, const std::string& assert_cte) const {
    return "SELECT " + std::to_string(index) + " AS _case_index, " + sql::QuoteString(dialect_, "unexpected") +
           " AS _diff_type, " + std::string(syntax_.array_open) + std::string(syntax_.row_text) +
           "] AS _row_values, CAST(1 AS " + std::string(syntax_.int64_type) + ") AS _multiplicity\nFROM " +
           assert_cte + " AS __assert_row";
  }

 private:
  std::string Text(const std::string& value) const {
    return std::string(syntax_.text_open) + value + std::string(syntax_.text_close);
  }

  std::string NotDistinct(const std::string& a, const std::string& b) const {
    if (spelling_ == NullSafeSpelling::kKeyEqualities) {
      return "isNull(" + a + ") = isNull(" + b + ") AND assumeNotNull(" + a + ") = assumeNotNull(" + b + ")";
    }
    return syntax_.null_safe_function ? "isNotDistinctFrom(" + a + ", " + b + ")" : a + " IS NOT DISTINCT FROM " + b;
  }

  // Rows of `left` (per distinct row) that occur more often than in `right`.
  std::string Difference(size_t index, const char* type, const std::string& left, const std::string& right,
                         const std::vector<std::string>& quoted) const {
    std::vector<std::string> values, keys;
    for (const std::string& column : quoted) {
      values.push_back(Text("l." + column));
      keys.push_back(NotDistinct("l." + column, "r." + column));
    }
    return "SELECT " + std::to_string(index) + " AS _case_index, " + sql::QuoteString(dialect_, type) +
           " AS _diff_type, " + std::string(syntax_.array_open) + Joined(values, ", ") +
           "] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS " + std::string(syntax_.int64_type) +
           ") AS _multiplicity\nFROM " + left + " AS l\n" + std::string(syntax_.left_join) + " " + right +
           " AS r ON " + Joined(keys, " AND ") + "\nWHERE l.__case_count > coalesce(r.__case_count, 0)";
  }

  sql::Dialect dialect_;
  CompareSyntax syntax_;
  NullSafeSpelling spelling_;
};

// Inlines CTEs where FROM or JOIN reads them (InlinedComparisonStatement).
class CteInliner {
 public:
  explicit CteInliner(sql::Dialect dialect) : dialect_(dialect) {}

  void Add(const NamedSql& cte) {
    std::vector<Token> name = sql::TokenizeSignificant(cte.name, dialect_);
    std::string key = name.size() == 1 ? sql::TokenValue(name.front(), dialect_) : cte.name;
    inlined_[key] = Inline(cte.text);
  }

  // `text` with every CTE that a FROM or JOIN reads replaced by its parenthesized query.
  std::string Inline(const std::string& text) const {
    std::vector<Token> tokens = sql::TokenizeSignificant(text, dialect_);
    std::vector<bool> in_from{false};  // per parenthesis depth: whether a FROM clause is open (for `FROM a, b`)
    std::string out;
    size_t copied = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const Token& token = tokens[i];
      if (IsPunctuation(token, "(")) in_from.push_back(false);
      if (IsPunctuation(token, ")") && in_from.size() > 1) in_from.pop_back();
      if (token.kind == TokenKind::kWord) {
        if (IsWord(token, "FROM")) {
          in_from.back() = true;
        } else if (IsClauseAfterFrom(token)) {
          in_from.back() = false;
        }
      }
      if (!IsName(token) || i == 0) continue;
      const Token& before = tokens[i - 1];
      bool read = IsWord(before, "FROM") || IsWord(before, "JOIN") || (IsPunctuation(before, ",") && in_from.back());
      const Token* after = i + 1 < tokens.size() ? &tokens[i + 1] : nullptr;
      if (!read || (after != nullptr && (IsPunctuation(*after, ".") || IsPunctuation(*after, "(")))) continue;
      auto cte = inlined_.find(sql::TokenValue(token, dialect_));
      if (cte == inlined_.end()) continue;
      out.append(text, copied, token.begin - copied);
      out += "(\n" + cte->second + "\n)";
      if (!HasAlias(after)) out += " AS " + std::string(token.text);
      copied = token.end;
    }
    out.append(text, copied, std::string::npos);
    return out;
  }

 private:
  static bool IsClauseAfterFrom(const Token& token) {
    static const std::string_view kClauses[] = {"SELECT", "WHERE",   "PREWHERE", "GROUP",    "HAVING",   "ORDER",
                                                "LIMIT",  "UNION",   "ON",       "USING",    "SETTINGS", "FORMAT",
                                                "WINDOW", "QUALIFY", "EXCEPT",   "INTERSECT"};
    for (std::string_view clause : kClauses) {
      if (IsWord(token, clause)) return true;
    }
    return false;
  }

  // Whether the token after a relation name starts its alias (`AS a`, or a word that is not a keyword).
  static bool HasAlias(const Token* after) {
    if (after == nullptr) return false;
    if (IsWord(*after, "AS") || after->kind == TokenKind::kQuotedIdentifier) return true;
    constexpr uint32_t kKeyword = sql::token_class::kBoundary | sql::token_class::kJoinPrefix |
                                  sql::token_class::kExpressionKeyword | sql::token_class::kOperatorKeyword;
    if (after->kind != TokenKind::kWord || (after->classes & kKeyword) != 0) return false;
    static const std::string_view kNotAliases[] = {"FINAL", "SAMPLE", "ARRAY", "LEFT",  "RIGHT", "INNER",
                                                   "FULL",  "CROSS",  "JOIN",  "OUTER", "SEMI",  "ANTI"};
    for (std::string_view word : kNotAliases) {
      if (IsWord(*after, word) || IsClauseAfterFrom(*after)) return false;
    }
    return true;
  }

  sql::Dialect dialect_;
  std::map<std::string, std::string> inlined_;  // CTE name (unquoted) → its query, inlined
};

}  // namespace

bool InferColumns(std::string_view text, sql::Dialect dialect, ColumnLookup lookup, std::vector<std::string>& names,
                  std::string& problem) {
  return ColumnInference(dialect, std::move(lookup)).Infer(text, names, problem);
}

void AddComparison(sql::Dialect dialect, size_t index, const ComparisonCase& c, std::vector<NamedSql>& ctes,
                   std::vector<std::string>& branches, NullSafeSpelling spelling) {
  ComparisonWriter(dialect, spelling).AddComparison(index, c, ctes, branches);
}

std::string AssertionBranch(sql::Dialect dialect, size_t index, const std::string& assert_cte) {
  return ComparisonWriter(dialect, NullSafeSpelling::kNative).Assertion(index, assert_cte);
}

std::string InlinedComparisonStatement(sql::Dialect dialect, const std::vector<NamedSql>& ctes,
                                       const std::vector<std::string>& branches) {
  CteInliner inliner(dialect);
  for (const NamedSql& cte : ctes) inliner.Add(cte);
  std::vector<std::string> inlined;
  for (const std::string& branch : branches) inlined.push_back(inliner.Inline(branch));
  return Joined(inlined, "\nUNION ALL\n") + "\n";
}

std::string ComparisonStatement(const std::vector<NamedSql>& ctes, const std::vector<std::string>& branches) {
  std::string out = "WITH\n";
  for (size_t i = 0; i < ctes.size(); ++i) {
    out += ctes[i].name + " AS (\n" + ctes[i].text + "\n)" + (i + 1 < ctes.size() ? ",\n" : "\n");
  }
  out += Joined(branches, "\nUNION ALL\n");
  out += "\n";
  return out;
}

}  // namespace sluice::checks
