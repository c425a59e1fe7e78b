#include "sql/source_columns.hpp"

#include <algorithm>
#include <optional>

#include "core/asset_key.hpp"
#include "sql/dialect.hpp"
#include "sql/select_parser.hpp"
#include "sql/token_class.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {

namespace {

bool Inside(const TextSpan& span, size_t offset) { return offset >= span.begin && offset < span.end; }

bool IsName(const Token& token) {
  return token.kind == TokenKind::kWord || token.kind == TokenKind::kQuotedIdentifier;
}

bool IsPunct(const Token& token, char c) {
  return token.kind == TokenKind::kPunctuation && token.text.size() == 1 && token.text[0] == c;
}

}  // namespace

std::vector<SpanReplacement> RenameSourceColumns(std::string_view text, Dialect dialect, size_t source_begin,
                                                 const std::map<std::string, std::string>& physical_of,
                                                 const std::string& file) {
  std::vector<std::pair<std::string, std::string>> renamed;  // canonical → physical, the ones that differ
  for (const auto& [canonical, physical] : physical_of) {
    if (canonical != physical) renamed.emplace_back(canonical, physical);
  }
  if (renamed.empty()) return {};
  std::vector<Token> tokens = TokenizeSignificant(text, dialect, file);
  const SelectStatement statement = ParseSelect(text, tokens, dialect, file);

  const QueryBlock* block = nullptr;
  const TableSource* source = nullptr;
  for (const QueryBlock& candidate : statement.blocks) {
    for (const TableSource& item : candidate.sources) {
      if (item.span.begin == source_begin) {
        block = &candidate;
        source = &item;
      }
    }
  }
  if (block == nullptr) return {};

  // What the block holds that is not its own expressions: its nested blocks, its sources, its projection aliases.
  std::vector<TextSpan> skipped;
  for (const QueryBlock& other : statement.blocks) {
    if (&other != block && other.span.begin >= block->span.begin && other.span.end <= block->span.end) {
      skipped.push_back(other.span);
    }
  }
  for (const TableSource& item : block->sources) skipped.push_back(item.span);
  for (const ProjectionItem& item : block->projection) {
    if (item.alias_span) skipped.push_back(*item.alias_span);
  }
  auto physical = [&](std::string_view name) -> std::optional<std::string> {
    for (const auto& [canonical, target] : renamed) {
      if (SameColumnName(dialect, name, canonical)) return IsIdentifier(target) ? target : QuoteIdentifier(dialect, target);
    }
    return std::nullopt;
  };
  auto same_as_alias = [&](const Token& qualifier) {
    return source->alias && IsName(qualifier) && SameColumnName(dialect, TokenValue(qualifier, dialect), *source->alias);
  };

  std::vector<SpanReplacement> replacements;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (!Inside(block->span, token.begin) || !IsName(token)) continue;
    if (std::any_of(skipped.begin(), skipped.end(), [&](const TextSpan& span) { return Inside(span, token.begin); })) {
      continue;
    }
    const std::optional<std::string> target = physical(TokenValue(token, dialect));
    if (!target) continue;
    const Token* next = i + 1 < tokens.size() ? &tokens[i + 1] : nullptr;
    const Token* previous = i > 0 ? &tokens[i - 1] : nullptr;
    if (next != nullptr && (IsPunct(*next, '(') || IsPunct(*next, '.'))) continue;  // a function, a qualifier
    if (previous != nullptr && (previous->classes & token_class::kAs) != 0) continue;  // an alias being defined
    if (previous != nullptr && IsPunct(*previous, '.')) {
      if (i < 2 || !same_as_alias(tokens[i - 2]) || (i >= 3 && IsPunct(tokens[i - 3], '.'))) continue;
    }
    replacements.push_back({token.begin, token.end, *target});
  }
  for (const ProjectionItem& item : block->projection) {
    if (!item.star) continue;
    if (item.star_qualifier && !(source->alias && SameColumnName(dialect, *item.star_qualifier, *source->alias))) continue;
    const std::string qualifier =
        source->alias ? (IsIdentifier(*source->alias) ? *source->alias : QuoteIdentifier(dialect, *source->alias)) + "."
                      : "";
    std::string added;
    for (const auto& [canonical, target] : renamed) {
      added += ", " + qualifier + (IsIdentifier(target) ? target : QuoteIdentifier(dialect, target)) + " AS " +
               (IsIdentifier(canonical) ? canonical : QuoteIdentifier(dialect, canonical));
    }
    replacements.push_back({item.span.end, item.span.end, added});
  }
  std::sort(replacements.begin(), replacements.end(),
            [](const SpanReplacement& a, const SpanReplacement& b) { return a.begin < b.begin; });
  return replacements;
}

}  // namespace sluice::sql
