// The public readers of the parser's keyword lists (declared in select_parser.hpp).
#include <algorithm>
#include <string_view>
#include <vector>

#include "sql/keyword_table.hpp"
#include "sql/select_parser.hpp"
#include "sql/select_parser_internal.hpp"
#include "sql/token_class.hpp"

namespace sluice::sql {

using select_parser_internal::InList;
using select_parser_internal::IsWordToken;

bool IsCastFunctionName(std::string_view word) { return (WordClasses(word) & token_class::kCast) != 0; }

bool IsTypeContinuationWord(std::string_view word) { return (WordClasses(word) & token_class::kTypeContinuation) != 0; }

bool IsSourceKeywordWord(std::string_view word, Dialect dialect) {
  if ((WordClasses(word) & token_class::kJoinPrefix) != 0) return true;
  if (InList(word, {"from",  "where",   "prewhere",    "group",     "having", "qualify", "order",  "limit", "offset",
                    "fetch", "window",  "union",       "intersect", "except", "into",    "array",  "join",  "on",
                    "using", "lateral", "tablesample", "with",      "as",     "for",     "select", "values"})) {
    return true;
  }
  return dialect == Dialect::kClickHouse && InList(word, {"final", "sample", "settings", "format"});
}

bool SourceHasAlias(const std::vector<Token>& significant, size_t end, Dialect dialect) {
  auto next = std::lower_bound(significant.begin(), significant.end(), end,
                               [](const Token& token, size_t offset) { return token.begin < offset; });
  if (next == significant.end()) return false;
  if (next->kind == TokenKind::kQuotedIdentifier) return true;
  if (next->kind != TokenKind::kWord) return false;
  return IsWordToken(*next, "as") || !IsSourceKeywordWord(next->text, dialect);
}

}  // namespace sluice::sql
