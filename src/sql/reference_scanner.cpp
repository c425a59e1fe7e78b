#include "sql/reference_scanner.hpp"

#include "core/diagnostic.hpp"
#include "sql/token_class.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {

namespace {

constexpr std::string_view kRefTypeHint = "write __ref(name, ref_type='reference') or __ref(name, ref_type='mutable')";

bool IsPunctuation(const Token& token, std::string_view text) {
  return token.kind == TokenKind::kPunctuation && token.text == text;
}

// Reads one reference call over the significant (non-comment) tokens and reports errors located at the
// token that breaks the expected shape.
class ReferenceReader {
 public:
  ReferenceReader(std::string_view text, Dialect dialect, const std::string& file, const std::vector<Token>& tokens)
      : text_(text), dialect_(dialect), file_(file), tokens_(tokens) {}

  // Reads the calls starting at the candidate words (indices of kReferenceCall tokens, ascending); a word inside
  // an earlier call's arguments starts none.
  std::vector<ReferenceCall> Run(const std::vector<size_t>& reference_words) {
    std::vector<ReferenceCall> calls;
    size_t after = 0;  // one past the last call read
    for (size_t i : reference_words) {
      if (i < after || !IsReferenceCallWord(tokens_[i])) continue;
      calls.push_back(ReadCall(i));
      after = i;
    }
    return calls;
  }

  // Run over every token's candidacy.
  std::vector<ReferenceCall> Run() {
    std::vector<size_t> reference_words;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].classes & token_class::kReferenceCall) reference_words.push_back(i);
    }
    return Run(reference_words);
  }

 private:
  // The token at `index`, or nullptr past the end.
  const Token* At(size_t index) const { return index < tokens_.size() ? &tokens_[index] : nullptr; }

  [[noreturn]] void Fail(const char* code, const std::string& message, const Token* at, std::string_view hint) const {
    std::string text(text_);
    size_t offset = at ? at->begin : text.size();
    throw Error(MakeDiagnostic(code, message, LocationAt(file_, text, offset), std::string(hint), text));
  }

  static std::string Describe(const Token* token) {
    constexpr size_t kShown = 40;
    if (!token) return "the end of the text";
    if (token->text.size() <= kShown) return "`" + std::string(token->text) + "`";
    return "`" + std::string(token->text.substr(0, kShown)) + "…`";
  }

  // Reads the call whose `__source`/`__ref` word is at `index` and moves `index` past its `)`.
  ReferenceCall ReadCall(size_t& index) {
    const Token& head = tokens_[index];
    ReferenceCall call{head.text == "__source" ? ReferenceKind::kSource : ReferenceKind::kRef, {}, {}, head.begin, 0};
    // The texts of an error, built only when one is reported.
    const std::string_view callee = head.text;
    const char* usage = call.kind == ReferenceKind::kSource ? "write __source(name)"
                                                            : "write __ref(name) or __ref(name, ref_type='reference')";

    const Token* open = At(index + 1);
    if (!open || !IsPunctuation(*open, "(")) {
      Fail("SLU-SQL-010", std::string(callee) + " must be followed by `(`, found " + Describe(open), open, usage);
    }
    const Token* name = At(index + 2);
    if (!name || IsPunctuation(*name, ")")) {
      Fail("SLU-SQL-010", std::string(callee) + "(...) has no argument", name, usage);
    }
    if (name->kind != TokenKind::kWord && name->kind != TokenKind::kString &&
        name->kind != TokenKind::kQuotedIdentifier) {
      Fail("SLU-SQL-010",
           std::string(callee) + "(...) expects a name (a string or an identifier), found " + Describe(name), name,
           usage);
    }
    call.name = TokenValue(*name, dialect_);
    if (call.name.empty()) Fail("SLU-SQL-010", std::string(callee) + "(...) has an empty name", name, usage);

    const Token* after_name = At(index + 3);
    if (after_name && IsPunctuation(*after_name, ")")) {
      call.end = after_name->end;
      index += 4;
      return call;
    }
    if (!after_name || !IsPunctuation(*after_name, ",")) {
      Fail("SLU-SQL-010",
           std::string(callee) + "(...) expects `,` or `)` after the name, found " + Describe(after_name) +
               (after_name ? "" : " (missing `)`)"),
           after_name, usage);
    }
    ReadRefType(call, callee, index + 4, usage);
    const Token* close = At(index + 7);
    call.end = close->end;
    index += 8;
    return call;
  }

  // Reads `ref_type = '<value>' )` starting at token `first`; the `)` is checked to exist.
  void ReadRefType(ReferenceCall& call, std::string_view callee, size_t first, const char* usage) {
    bool source = call.kind == ReferenceKind::kSource;
    const std::string_view hint = source ? "__source(...) takes only the source name; use __ref(name, ref_type=...) "
                                           "for a typed reference"
                                         : kRefTypeHint;
    const Token* key = At(first);
    if (!key || IsPunctuation(*key, ")")) {
      Fail("SLU-SQL-010", std::string(callee) + "(...) has an empty second argument", key, usage);
    }
    if (key->kind != TokenKind::kWord || key->text != "ref_type") {
      Fail("SLU-SQL-011",
           "the second argument of " + std::string(callee) + "(...) must be ref_type = '<value>', found " +
               Describe(key),
           key, hint);
    }
    const Token* equals = At(first + 1);
    if (!equals || equals->kind != TokenKind::kOperator || equals->text != "=") {
      Fail("SLU-SQL-011", "expected `=` after ref_type, found " + Describe(equals), equals, hint);
    }
    const Token* value = At(first + 2);
    if (!value || value->kind != TokenKind::kString) {
      Fail("SLU-SQL-011", "ref_type must be a quoted string, found " + Describe(value), value, hint);
    }
    const Token* close = At(first + 3);
    if (close && IsPunctuation(*close, ",")) {
      Fail("SLU-SQL-010", std::string(callee) + "(...) takes at most two arguments", close, usage);
    }
    if (!close) Fail("SLU-SQL-010", std::string(callee) + "(...) is missing its closing `)`", close, usage);
    if (!IsPunctuation(*close, ")")) {
      Fail("SLU-SQL-011",
           "the second argument of " + std::string(callee) + "(...) must be exactly ref_type = '<value>', found " +
               Describe(close) + " after the value",
           close, hint);
    }
    if (source) Fail("SLU-SQL-013", "__source(...) does not take a ref_type", key, hint);
    std::string type = TokenValue(*value, dialect_);
    if (type == "reference") {
      call.ref_type = RefType::kReference;
    } else if (type == "mutable") {
      call.ref_type = RefType::kMutable;
    } else {
      Fail("SLU-SQL-012", "ref_type " + Describe(value) + " is not 'reference' or 'mutable'", value, hint);
    }
  }

  std::string_view text_;
  Dialect dialect_;
  const std::string& file_;
  const std::vector<Token>& tokens_;
};

std::string_view Trim(std::string_view text) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

std::vector<ReferenceCall> FindReferences(std::string_view text, Dialect dialect, const std::string& file) {
  std::vector<size_t> reference_words;
  std::vector<Token> tokens = TokenizeSignificant(text, 0, dialect, file, reference_words);
  return ReferenceReader(text, dialect, file, tokens).Run(reference_words);
}

std::vector<ReferenceCall> FindReferences(std::string_view text, const std::vector<Token>& significant_tokens,
                                          Dialect dialect, const std::string& file) {
  return ReferenceReader(text, dialect, file, significant_tokens).Run();
}

std::vector<ReferenceCall> FindReferences(std::string_view text, const std::vector<Token>& significant_tokens,
                                          const std::vector<size_t>& reference_words, Dialect dialect,
                                          const std::string& file) {
  return ReferenceReader(text, dialect, file, significant_tokens).Run(reference_words);
}

std::vector<MacroCall> FindMacroCalls(std::string_view text, Dialect dialect, const std::string& file) {
  std::vector<Token> tokens = Tokenize(text, dialect, file);
  std::vector<MacroCall> calls;
  size_t i = 0;
  while (i < tokens.size()) {
    const Token& at = tokens[i];
    bool is_call = at.kind == TokenKind::kOperator && at.text == "@" && i + 2 < tokens.size() &&
                   (at.begin == 0 || !IsIdentifierChar(text[at.begin - 1]));
    if (is_call) {
      const Token& name = tokens[i + 1];
      const Token& open = tokens[i + 2];
      is_call = name.kind == TokenKind::kWord && name.begin == at.end &&
                !(name.text.front() >= '0' && name.text.front() <= '9') && IsPunctuation(open, "(") &&
                open.begin == name.end;
    }
    if (!is_call) {
      ++i;
      continue;
    }
    size_t depth = 0;
    size_t close = i + 2;
    for (; close < tokens.size(); ++close) {
      if (IsPunctuation(tokens[close], "(")) ++depth;
      if (IsPunctuation(tokens[close], ")") && --depth == 0) break;
    }
    std::string name(tokens[i + 1].text);
    if (close == tokens.size()) {
      std::string owned(text);
      throw Error(MakeDiagnostic("SLU-SQL-014", "macro call @" + name + "( is never closed",
                                 LocationAt(file, owned, at.begin),
                                 "add the missing `)`; parentheses inside strings and comments do not count", owned));
    }
    size_t args_begin = tokens[i + 2].end;
    calls.push_back(MacroCall{name, at.begin, tokens[close].end,
                              std::string(Trim(text.substr(args_begin, tokens[close].begin - args_begin)))});
    i = close + 1;
  }
  return calls;
}

std::string ReplaceSpans(std::string_view text, const std::vector<SpanReplacement>& replacements) {
  std::string out;
  size_t at = 0;
  for (const SpanReplacement& replacement : replacements) {
    out.append(text.substr(at, replacement.begin - at));
    out += replacement.text;
    at = replacement.end;
  }
  out.append(text.substr(at));
  return out;
}

size_t OriginalOffset(const std::vector<SpanReplacement>& replacements, size_t offset) {
  size_t original = 0;  // where the current stretch of kept bytes starts, in the text and in the result
  size_t replaced = 0;
  for (const SpanReplacement& replacement : replacements) {
    const size_t kept = replacement.begin - original;
    if (offset < replaced + kept) return original + (offset - replaced);
    if (offset < replaced + kept + replacement.text.size()) return replacement.begin;
    replaced += kept + replacement.text.size();
    original = replacement.end;
  }
  return original + (offset - replaced);
}

}  // namespace sluice::sql
