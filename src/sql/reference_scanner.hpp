// Finds `__source(...)` / `__ref(...)` reference calls and `@name(...)` macro calls in SQL text,
// using the tokenizer (so occurrences inside comments and strings are ignored).
//
// Reference syntax: `__source(name)` and `__ref(name[, ref_type='reference'|'mutable'])`; the name is a
// string literal or a bare identifier; whitespace and comments may appear between tokens.
// Errors throw sluice::Error located in `file`:
//   SLU-SQL-010  malformed call (missing parenthesis, no argument, more than two arguments, empty name)
//   SLU-SQL-011  second argument is not `ref_type = '<value>'`
//   SLU-SQL-012  ref_type value is not 'reference' or 'mutable'
//   SLU-SQL-013  __source(...) given a ref_type
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sql/token.hpp"

namespace sluice::sql {

enum class ReferenceKind { kSource, kRef };
enum class RefType { kReference, kMutable };

struct ReferenceCall {
  ReferenceKind kind;
  std::string name;                 // the referenced name, unquoted
  std::optional<RefType> ref_type;  // only for __ref with a second argument
  size_t begin;                     // offset of `__source` / `__ref`
  size_t end;                       // one past the closing `)`
  bool operator==(const ReferenceCall&) const = default;
};

// All reference calls in text order.
std::vector<ReferenceCall> FindReferences(std::string_view text, Dialect dialect, const std::string& file = {});

// The same, on the tokens of `text` the caller already has: Tokenize(text, dialect) without its kComment
// tokens (so one tokenization serves the reference scan and the SELECT parser).
std::vector<ReferenceCall> FindReferences(std::string_view text, const std::vector<Token>& significant_tokens,
                                          Dialect dialect, const std::string& file = {});

// The same, reading only the tokens at `reference_words`, ascending: the indices of the significant tokens
// with token_class::kReferenceCall, as TokenizeSignificant lists them.
std::vector<ReferenceCall> FindReferences(std::string_view text, const std::vector<Token>& significant_tokens,
                                          const std::vector<size_t>& reference_words, Dialect dialect,
                                          const std::string& file = {});

struct MacroCall {
  std::string name;       // without the `@`
  size_t begin;           // offset of `@`
  size_t end;             // one past the closing `)` that matches the call's `(`
  std::string arguments;  // raw text between the parentheses, trimmed
};

// All top-level `@name(...)` calls in text order: `@` not preceded by an identifier character, followed
// directly by an identifier and `(`. Nested calls inside another call's arguments are part of that call's
// `arguments` text, not separate entries. An unclosed call throws SLU-SQL-014.
std::vector<MacroCall> FindMacroCalls(std::string_view text, Dialect dialect, const std::string& file = {});

// One span of SQL text to replace: [begin, end) becomes `text`.
struct SpanReplacement {
  size_t begin;
  size_t end;
  std::string text;
};

// `text` with each span replaced, every other byte kept: the one substitution of reference (and macro) spans.
// `replacements` are in text order and do not overlap; each lies within `text`.
std::string ReplaceSpans(std::string_view text, const std::vector<SpanReplacement>& replacements);

// Where a byte of ReplaceSpans' result came from in `text`: a kept byte maps to itself, a byte of a replacement to
// the start of the span it replaced.
size_t OriginalOffset(const std::vector<SpanReplacement>& replacements, size_t offset);

}  // namespace sluice::sql
