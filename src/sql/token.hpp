// Tokens of SQL text, as produced by Tokenize(). Offsets are byte offsets into the tokenized text.
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice::sql {

// The lexical rules in force. The adapter of a target selects it (duckdb → kDuckDb, clickhouse → kClickHouse).
enum class Dialect { kDuckDb, kClickHouse, kPostgres, kBigQuery };

enum class TokenKind {
  kWord,              // bare identifier or keyword: [A-Za-z_][A-Za-z0-9_$]* (and non-ASCII bytes)
  kQuotedIdentifier,  // "x" (all dialects but BigQuery), `x` (ClickHouse, BigQuery)
  kString,  // '...', E'...', $$...$$ / $tag$...$tag$ (DuckDB, PostgreSQL), "..." (BigQuery), r'...' / b'...' (BigQuery)
            // '''...''' / """...""" (BigQuery); X'...' / B'...' (not BigQuery); N'...' (DuckDB, PostgreSQL)
  kNumber,  // 42, 3.14, .5, 1e10, 0x1F
  kOperator,  // :: , <= , >= , <> , != , || , -> , ->> , => , and single-character operators + - * / % = < > ! ~ & | ^
              // ? : @ # and $; a byte that starts no other token (e.g. a control byte) is a one-byte kOperator
  kPunctuation,  // ( ) [ ] { } , ; .
  kComment,      // -- ... , /* ... */ , # ... (ClickHouse, BigQuery), // ... (ClickHouse)
};

struct Token {
  TokenKind kind;
  uint32_t classes;       // token_class bits (sql/token_class.hpp), computed by the tokenizer
  size_t begin;           // first byte
  size_t end;             // one past the last byte
  std::string_view text;  // view into the tokenized text (valid while that text lives)
};

}  // namespace sluice::sql
