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

// The value a kString or kQuotedIdentifier token denotes: prefix (E, r, b, x, n …) and quotes removed,
// doubled quotes collapsed and backslash escapes decoded where the dialect (or an E'…' prefix) has them.
// Raw strings (BigQuery r'…') and dollar-quoted bodies are returned verbatim. Other tokens give their text.
// `token` must come from Tokenize() with the same dialect.
std::string TokenValue(const Token& token, Dialect dialect);

// True for a byte that may continue a bare identifier: [A-Za-z0-9_$] or any byte >= 0x80.
bool IsIdentifierChar(char c);

// The dialect named by a warehouse adapter ("duckdb", "clickhouse", "postgres", "bigquery");
// unknown adapters give kClickHouse (StreamBuild's default).
Dialect DialectForAdapter(std::string_view adapter);

}  // namespace sluice::sql
