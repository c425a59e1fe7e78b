// The SQL tokenizer: one pass over the text, lexical rules per dialect.
//
// Whitespace is dropped; comments are kept as kComment tokens (callers that scan for references or
// macros skip them). Errors (unterminated string, quoted identifier or block comment) throw
// sluice::Error with code SLU-SQL-001 located at the opening quote/comment (or its prefix) in `file`.
//
// Rules per dialect (the engine's own lexer decides where they differ from the SQL standard):
//   DuckDB, PostgreSQL  '…' with '' ; E'…' adds backslash escapes; $$…$$ / $tag$…$tag$; "…" identifiers
//                       with ""; nested /* */.
//   ClickHouse          '…', "…", `…` all take both backslash escapes and doubled quotes; # and // line
//                       comments; nested /* */ (as ClickHouse's lexer does); 1abc is one identifier.
//   BigQuery            '…' and "…" strings with backslash escapes (no doubling); r/b/rb/br prefixes;
//                       '''…''' / """…"""; `…` identifiers with backslash escapes; # comments; /* */ not nested.
// Any byte sequence is accepted (bytes >= 0x80 are identifier characters); the work is linear in its size.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sql/token.hpp"

namespace sluice::sql {

std::vector<Token> Tokenize(std::string_view text, Dialect dialect, const std::string& file = {});

// Tokenizes text[begin, end) as if text[0, begin) were blank: offsets stay absolute in `text` and errors are
// located there (a model file's SQL body, after its header). `begin` must be at a token boundary.
std::vector<Token> Tokenize(std::string_view text, size_t begin, Dialect dialect, const std::string& file = {});

// The same without the kComment tokens (what parsers and reference scanners read), dropped as they are scanned.
std::vector<Token> TokenizeSignificant(std::string_view text, Dialect dialect, const std::string& file = {});
std::vector<Token> TokenizeSignificant(std::string_view text, size_t begin, Dialect dialect,
                                       const std::string& file = {});

// The same, also listing in `reference_words` the indices (into the returned tokens) of the words with
// token_class::kReferenceCall (__source and __ref, in any case), so a reference scan reads only those tokens.
std::vector<Token> TokenizeSignificant(std::string_view text, size_t begin, Dialect dialect, const std::string& file,
                                       std::vector<size_t>& reference_words);

// One statement's text from `begin` (where it starts in `text`) to its end: its last significant token other
// than `;`, then the comments after it — the trailing `;` tokens among them dropped, trailing whitespace trimmed.
// `significant_tokens` are text's (TokenizeSignificant), with offsets into `text`. The one handling of a
// statement's trailing semicolons, so the SQL can be embedded as a subquery or written as a DDL's query.
std::string StripTrailingSemicolons(std::string_view text, size_t begin, const std::vector<Token>& significant_tokens);
// The same on `text` whole (tokenized here; SLU-SQL-001 for an unterminated string or comment).
std::string StripTrailingSemicolons(std::string_view text, Dialect dialect);

// The value a kString or kQuotedIdentifier token denotes: prefix (E, r, b, x, n …) and quotes removed,
// doubled quotes collapsed and backslash escapes decoded where the dialect (or an E'…' prefix) has them.
// Raw strings (BigQuery r'…') and dollar-quoted bodies are returned verbatim. Other tokens give their text.
// `token` must come from Tokenize() with the same dialect.
std::string TokenValue(const Token& token, Dialect dialect);

// The lexical classes of a byte, as bits of one table lookup (the lexer asks for them at every byte).
enum ByteClass : unsigned char {
  kSpaceByte = 1,                // ' ' \t \n \r \f \v
  kDigitByte = 2,                // 0-9
  kIdentifierStartByte = 4,      // A-Z a-z _ and any byte >= 0x80
  kIdentifierByte = 8,           // an identifier start, a digit or $
  kBracketOrSeparatorByte = 16,  // ( ) [ ] { } , ; — always a one-byte kPunctuation token
};

inline constexpr auto kByteClasses = [] {
  struct Table {
    unsigned char bits[256] = {};
  } table;
  for (int c = 0; c < 256; ++c) {
    unsigned char bits = 0;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') bits |= kSpaceByte;
    if (c >= '0' && c <= '9') bits |= kDigitByte | kIdentifierByte;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80) {
      bits |= kIdentifierStartByte | kIdentifierByte;
    }
    if (c == '$') bits |= kIdentifierByte;
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || c == ';') {
      bits |= kBracketOrSeparatorByte;
    }
    table.bits[c] = bits;
  }
  return table;
}();

inline bool HasByteClass(char c, ByteClass byte_class) {
  return (kByteClasses.bits[static_cast<unsigned char>(c)] & byte_class) != 0;
}

// True for a byte that may continue a bare identifier: [A-Za-z0-9_$] or any byte >= 0x80.
inline bool IsIdentifierChar(char c) { return HasByteClass(c, kIdentifierByte); }

// The dialect named by a warehouse adapter ("duckdb", "clickhouse", "postgres", "bigquery");
// unknown adapters give kClickHouse (StreamBuild's default).
Dialect DialectForAdapter(std::string_view adapter);

}  // namespace sluice::sql
