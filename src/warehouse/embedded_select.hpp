// The caller's SELECT embedded in a statement of the backend's, as every backend embeds it: the one place that
// knows where the SELECT sits in the statement, so an error the server places inside it becomes a SqlError at its
// offset in the caller's text.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sql/token.hpp"

namespace sluice {

// A statement, and where in it the caller's SELECT is embedded (when it is).
struct EmbeddedStatement {
  std::string sql;
  size_t select_begin = std::string::npos;
  size_t select_size = 0;
};

// `before` + "(\n" + the caller's SELECT + "\n)" + `after`. The newlines keep a trailing `-- comment` from
// swallowing the closing parenthesis; trailing semicolons (legal at top level, not inside parentheses) are dropped
// by `dialect`'s tokenizer, comments after them kept. Everything else is passed byte for byte, so an offset in the
// embedded SELECT is an offset in `select_sql`.
EmbeddedStatement Embedding(sql::Dialect dialect, std::string before, const std::string& select_sql,
                            std::string_view after = {});

}  // namespace sluice
