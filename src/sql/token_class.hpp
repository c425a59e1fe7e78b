// The classes of a token: what SQL readers ask of a token most often, as bits the tokenizer computes once per
// token (Token::classes) — its bracket or separator role, and the keyword lists a bare word belongs to
// (case-insensitive). The lists, and WordClasses() that reads them, are in sql/keyword_table.hpp.
// Thread-safety: constants and a pure function.
#pragma once

#include <cstdint>

#include "sql/token.hpp"

namespace sluice::sql {

namespace token_class {
inline constexpr uint32_t kWord = 1u << 0;          // a bare word (TokenKind::kWord)
inline constexpr uint32_t kOpenParen = 1u << 1;     // (
inline constexpr uint32_t kOpenBracket = 1u << 2;   // ( [ {
inline constexpr uint32_t kCloseBracket = 1u << 3;  // ) ] }
inline constexpr uint32_t kComma = 1u << 4;
inline constexpr uint32_t kDot = 1u << 5;
inline constexpr uint32_t kDoubleColon = 1u << 6;  // the :: operator
inline constexpr uint32_t kSemicolon = 1u << 7;    // ; (ends a statement)
// Keyword lists of a bare word.
inline constexpr uint32_t kAs = 1u << 8;
inline constexpr uint32_t kCase = 1u << 9;
inline constexpr uint32_t kEnd = 1u << 10;
inline constexpr uint32_t kCast = 1u << 11;               // CAST, TRY_CAST, SAFE_CAST
inline constexpr uint32_t kBoundary = 1u << 12;           // may end an expression (the parser's IsBoundary)
inline constexpr uint32_t kJoinPrefix = 1u << 13;         // may come before JOIN (NATURAL, GLOBAL, ANY, ASOF …)
inline constexpr uint32_t kExpressionKeyword = 1u << 14;  // an operator or fixed part of an expression
inline constexpr uint32_t kOperatorKeyword = 1u << 15;    // a binary or prefix operator written as a word
inline constexpr uint32_t kTypeContinuation = 1u << 16;   // may follow a type name inside one type
inline constexpr uint32_t kTypeEnd = 1u << 17;            // may end a multi-word type
inline constexpr uint32_t kSelect = 1u << 18;
inline constexpr uint32_t kWith = 1u << 19;
inline constexpr uint32_t kValues = 1u << 20;
inline constexpr uint32_t kReferenceCall = 1u << 21;  // __source, __ref — and __SOURCE, __Ref …: compare the text
}  // namespace token_class

// The word of a reference call: `__source` or `__ref`, exactly so written (the class bit is set in any case; the
// text confirms).
inline bool IsReferenceCallWord(const Token& token) {
  return (token.classes & token_class::kReferenceCall) != 0 && (token.text == "__source" || token.text == "__ref");
}

}  // namespace sluice::sql
