#include "sql/tokenizer.hpp"

#include <algorithm>
#include <string>

#include "core/diagnostic.hpp"
#include "core/utf8.hpp"
#include "sql/keyword_table.hpp"
#include "sql/token_class.hpp"

namespace sluice::sql {

namespace {

// The lexical differences between dialects, as data.
struct LexicalRules {
  bool nested_block_comments;      // /* /* */ */ is one comment
  bool hash_line_comments;         // # to end of line
  bool slash_line_comments;        // // to end of line
  bool backslash_escapes;          // \x escapes in '...' (and in every quoted form of the dialect)
  bool doubled_quotes;             // '' inside '...' (and "" inside "...") is one quote
  bool double_quote_is_string;     // "..." is a string, not an identifier
  bool backtick_identifiers;       // `...` is a quoted identifier
  bool dollar_quotes;              // $$...$$ and $tag$...$tag$
  bool escape_string_prefix;       // E'...' has backslash escapes
  bool national_string_prefix;     // N'...'
  bool hex_bit_string_prefixes;    // X'...' and B'...'
  bool raw_bytes_string_prefixes;  // r, b, rb, br before '...' or "..." (and triple-quoted forms)
  bool triple_quoted_strings;      // '''...''' and """..."""
  bool digits_may_start_words;     // 1abc is one identifier
};

constexpr LexicalRules kPostgresRules{
    .nested_block_comments = true,
    .hash_line_comments = false,
    .slash_line_comments = false,
    .backslash_escapes = false,
    .doubled_quotes = true,
    .double_quote_is_string = false,
    .backtick_identifiers = false,
    .dollar_quotes = true,
    .escape_string_prefix = true,
    .national_string_prefix = true,
    .hex_bit_string_prefixes = true,
    .raw_bytes_string_prefixes = false,
    .triple_quoted_strings = false,
    .digits_may_start_words = false,
};

// DuckDB's scanner is PostgreSQL's.
constexpr LexicalRules kDuckDbRules = kPostgresRules;

// ClickHouse nests block comments (its lexer follows the SQL standard there) and accepts both backslash
// escapes and doubled quotes in all three quoted forms.
constexpr LexicalRules kClickHouseRules{
    .nested_block_comments = true,
    .hash_line_comments = true,
    .slash_line_comments = true,
    .backslash_escapes = true,
    .doubled_quotes = true,
    .double_quote_is_string = false,
    .backtick_identifiers = true,
    .dollar_quotes = false,
    .escape_string_prefix = false,
    .national_string_prefix = false,
    .hex_bit_string_prefixes = true,
    .raw_bytes_string_prefixes = false,
    .triple_quoted_strings = false,
    .digits_may_start_words = true,
};

constexpr LexicalRules kBigQueryRules{
    .nested_block_comments = false,
    .hash_line_comments = true,
    .slash_line_comments = false,
    .backslash_escapes = true,
    .doubled_quotes = false,
    .double_quote_is_string = true,
    .backtick_identifiers = true,
    .dollar_quotes = false,
    .escape_string_prefix = false,
    .national_string_prefix = false,
    .hex_bit_string_prefixes = false,
    .raw_bytes_string_prefixes = true,
    .triple_quoted_strings = true,
    .digits_may_start_words = false,
};

const LexicalRules& RulesFor(Dialect dialect) {
  switch (dialect) {
    case Dialect::kDuckDb:
      return kDuckDbRules;
    case Dialect::kClickHouse:
      return kClickHouseRules;
    case Dialect::kPostgres:
      return kPostgresRules;
    case Dialect::kBigQuery:
      return kBigQueryRules;
  }
  return kClickHouseRules;
}

bool IsDigit(char c) { return HasByteClass(c, kDigitByte); }

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool IsIdentifierStart(char c) { return HasByteClass(c, kIdentifierStartByte); }

bool IsSpace(char c) { return HasByteClass(c, kSpaceByte); }

// The token classes of a one-byte bracket or separator token (kBracketOrSeparatorByte).
inline constexpr auto kPunctuationClasses = [] {
  struct Table {
    uint32_t bits[256] = {};
  } table;
  table.bits[static_cast<unsigned char>('(')] = token_class::kOpenParen | token_class::kOpenBracket;
  table.bits[static_cast<unsigned char>('[')] = token_class::kOpenBracket;
  table.bits[static_cast<unsigned char>('{')] = token_class::kOpenBracket;
  table.bits[static_cast<unsigned char>(')')] = token_class::kCloseBracket;
  table.bits[static_cast<unsigned char>(']')] = token_class::kCloseBracket;
  table.bits[static_cast<unsigned char>('}')] = token_class::kCloseBracket;
  table.bits[static_cast<unsigned char>(',')] = token_class::kComma;
  table.bits[static_cast<unsigned char>(';')] = token_class::kSemicolon;
  return table;
}();

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

// How the body of one quoted token is delimited.
struct QuoteForm {
  char quote;
  bool backslash_escapes;
  bool doubled_quotes;
};

// One pass over the text; each scan method starts at the token's first byte and returns one past its last.
class Lexer {
 public:
  Lexer(std::string_view text, Dialect dialect, const std::string& file, size_t begin, bool keep_comments,
        std::vector<size_t>* reference_words = nullptr)
      : text_(text),
        rules_(RulesFor(dialect)),
        file_(file),
        pos_(std::min(begin, text.size())),
        keep_comments_(keep_comments),
        reference_words_(reference_words) {}

  std::vector<Token> Run() {
    // SQL averages over 2 bytes per token (`CAST(x AS T)`): one allocation.
    tokens_.reserve((text_.size() - pos_) / 2 + 8);
    const char* const data = text_.data();
    const size_t size = text_.size();
    size_t i = pos_;
    while (true) {
      while (i < size && IsSpace(data[i])) ++i;
      if (i >= size) break;
      const size_t begin = i;
      const unsigned char c = static_cast<unsigned char>(data[begin]);
      const unsigned char bits = kByteClasses.bits[c];
      Scanned scanned;
      // The common tokens inline: brackets and separators (one byte), and words not followed by a quote (a
      // word before a quote may be a string prefix such as E'…': Next reads it).
      if (bits & kBracketOrSeparatorByte) {
        scanned = {TokenKind::kPunctuation, kPunctuationClasses.bits[c]};
        i = begin + 1;
      } else if ((bits & kIdentifierStartByte) &&
                 (i = SkipIdentifierChars(begin + 1), i >= size || (data[i] != '\'' && data[i] != '"'))) {
        scanned = {TokenKind::kWord, token_class::kWord | WordClasses(std::string_view(data + begin, i - begin))};
      } else {
        pos_ = begin;
        scanned = Next(data[begin]);
        i = pos_;
        // A dropped comment leaves no token: a '.' right after it follows no operand (DotFollowsOperand).
        if (scanned.kind == TokenKind::kComment && !keep_comments_) continue;
      }
      if ((scanned.classes & token_class::kReferenceCall) && reference_words_ != nullptr) {
        reference_words_->push_back(tokens_.size());
      }
      tokens_.push_back(Token{scanned.kind, scanned.classes, begin, i, std::string_view(data + begin, i - begin)});
    }
    pos_ = i;
    return std::move(tokens_);
  }

 private:
  char At(size_t index) const { return index < text_.size() ? text_[index] : '\0'; }
  bool HasAt(size_t index, char c) const { return index < text_.size() && text_[index] == c; }

  struct Scanned {
    TokenKind kind;
    uint32_t classes;  // Token::classes
  };

  // Scans the token starting at pos_ — not whitespace, a bracket or a separator, which Run() reads itself —
  // advances pos_ past it and returns its kind and classes.
  Scanned Next(char c) {
    // A word here is followed by a quote: ScanWord tells a string prefix such as E'…' from a word.
    const size_t begin = pos_;
    const TokenKind kind = HasByteClass(c, kIdentifierStartByte) ? ScanWord() : NextRare(c);
    if (kind == TokenKind::kWord) return {kind, token_class::kWord | WordClasses(text_.substr(begin, pos_ - begin))};
    if (kind == TokenKind::kPunctuation) return {kind, token_class::kDot};
    if (kind == TokenKind::kOperator && pos_ - begin == 2 && text_[begin] == ':' && text_[begin + 1] == ':') {
      return {kind, token_class::kDoubleColon};
    }
    return {kind, 0};
  }

  // The tokens that start with neither an identifier byte nor a bracket or separator.
  TokenKind NextRare(char c) {
    if ((c == '-' && HasAt(pos_ + 1, '-')) || (c == '#' && rules_.hash_line_comments) ||
        (c == '/' && HasAt(pos_ + 1, '/') && rules_.slash_line_comments)) {
      ScanLineComment();
      return TokenKind::kComment;
    }
    if (c == '/' && HasAt(pos_ + 1, '*')) {
      ScanBlockComment();
      return TokenKind::kComment;
    }
    if (c == '\'') {
      ScanStringBody(pos_);
      return TokenKind::kString;
    }
    if (c == '"') {
      if (rules_.double_quote_is_string) {
        ScanStringBody(pos_);
        return TokenKind::kString;
      }
      ScanQuotedIdentifier('"');
      return TokenKind::kQuotedIdentifier;
    }
    if (c == '`' && rules_.backtick_identifiers) {
      ScanQuotedIdentifier('`');
      return TokenKind::kQuotedIdentifier;
    }
    if (c == '$' && rules_.dollar_quotes && ScanDollarQuoted()) return TokenKind::kString;
    if (IsDigit(c) || (c == '.' && IsDigit(At(pos_ + 1)) && !DotFollowsOperand())) return ScanNumber();
    if (c == '.') {
      ++pos_;
      return TokenKind::kPunctuation;
    }
    ScanOperator();
    return TokenKind::kOperator;
  }

  [[noreturn]] void Fail(size_t offset, const std::string& message, const std::string& hint) const {
    std::string text(text_);
    throw Error(MakeDiagnostic("SLU-SQL-001", message, LocationAt(file_, text, offset), hint, text));
  }

  // Ends before the line break, which is whitespace.
  void ScanLineComment() {
    while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
  }

  void ScanBlockComment() {
    size_t begin = pos_;
    size_t depth = 1;
    size_t i = pos_ + 2;
    while (i + 1 < text_.size()) {
      if (text_[i] == '*' && text_[i + 1] == '/') {
        i += 2;
        if (--depth == 0) {
          pos_ = i;
          return;
        }
      } else if (rules_.nested_block_comments && text_[i] == '/' && text_[i + 1] == '*') {
        i += 2;
        ++depth;
      } else {
        ++i;
      }
    }
    Fail(begin, "unterminated block comment",
         rules_.nested_block_comments
             ? "close the comment with */ (comments nest in this dialect: each /* inside needs its own */)"
             : "close the comment with */");
  }

  // Returns one past the closing quote of the body opening at `open`, or npos when it never closes.
  size_t FindClose(size_t open, QuoteForm form) const {
    size_t i = open + 1;
    while (i < text_.size()) {
      char c = text_[i];
      if (c == '\\' && form.backslash_escapes) {
        i += 2;
      } else if (c == form.quote) {
        if (form.doubled_quotes && HasAt(i + 1, form.quote)) {
          i += 2;
        } else {
          return i + 1;
        }
      } else {
        ++i;
      }
    }
    return std::string_view::npos;
  }

  // A string whose opening quote (' or, in BigQuery, ") is at `open`; the token began at pos_, which is
  // before `open` when a prefix such as E, r or X precedes the quote.
  void ScanStringBody(size_t open, bool escape_prefix = false) {
    char quote = text_[open];
    if (rules_.triple_quoted_strings && HasAt(open + 1, quote) && HasAt(open + 2, quote)) {
      ScanTripleQuoted(open);
      return;
    }
    QuoteForm form{quote, rules_.backslash_escapes || escape_prefix, rules_.doubled_quotes};
    size_t end = FindClose(open, form);
    if (end == std::string_view::npos) {
      std::string q(1, quote);
      Fail(pos_, "unterminated string literal",
           form.backslash_escapes && form.doubled_quotes
               ? "close the string with " + q + " (write " + q + q + " or \\" + q + " for a quote inside it)"
           : form.backslash_escapes ? "close the string with " + q + " (write \\" + q + " for a quote inside it)"
                                    : "close the string with " + q + " (write " + q + q + " for a quote inside it)");
    }
    pos_ = end;
  }

  void ScanTripleQuoted(size_t open) {
    char quote = text_[open];
    size_t i = open + 3;
    while (i < text_.size()) {
      if (text_[i] == '\\') {
        i += 2;
      } else if (text_[i] == quote && HasAt(i + 1, quote) && HasAt(i + 2, quote)) {
        pos_ = i + 3;
        return;
      } else {
        ++i;
      }
    }
    std::string closing(3, quote);
    Fail(pos_, "unterminated triple-quoted string literal", "close the string with " + closing);
  }

  void ScanQuotedIdentifier(char quote) {
    QuoteForm form{quote, rules_.backslash_escapes, quote == '"' || rules_.doubled_quotes};
    size_t end = FindClose(pos_, form);
    if (end == std::string_view::npos) {
      std::string q(1, quote);
      Fail(pos_, "unterminated quoted identifier",
           "close the identifier with " + q +
               (form.backslash_escapes ? " (write \\" + q + " for a " + q + " inside it)"
                                       : " (write " + q + q + " for a " + q + " inside it)"));
    }
    pos_ = end;
  }

  // $$...$$ or $tag$...$tag$ (tag: an identifier without $). Returns false, leaving pos_ alone, when the
  // `$` opens no delimiter (a positional parameter such as $1, or a lone $).
  bool ScanDollarQuoted() {
    size_t begin = pos_;
    size_t i = begin + 1;
    if (i < text_.size() && IsIdentifierStart(text_[i])) {
      while (i < text_.size() && text_[i] != '$' && IsIdentifierChar(text_[i])) ++i;
    }
    if (!HasAt(i, '$')) return false;
    std::string_view delimiter = text_.substr(begin, i + 1 - begin);
    // The delimiter holds no `$` but its ends, so a candidate match fails at the latest on the next `$`
    // of the text: the search stays linear however long the tag is.
    size_t k = i + 1;
    while ((k = text_.find('$', k)) != std::string_view::npos) {
      size_t matched = 1;
      while (matched < delimiter.size() && k + matched < text_.size() && text_[k + matched] == delimiter[matched]) {
        ++matched;
      }
      if (matched == delimiter.size()) {
        pos_ = k + matched;
        return true;
      }
      ++k;
    }
    Fail(begin, "unterminated dollar-quoted string",
         "close the string with " + std::string(delimiter) + " (the same tag that opened it)");
  }

  // True when the previous token ends right here and is something a `.` can follow as member access
  // (t.1 in ClickHouse is tuple access, not the number .1).
  bool DotFollowsOperand() const {
    if (tokens_.empty() || tokens_.back().end != pos_) return false;
    const Token& previous = tokens_.back();
    switch (previous.kind) {
      case TokenKind::kWord:
      case TokenKind::kQuotedIdentifier:
      case TokenKind::kNumber:
        return true;
      case TokenKind::kPunctuation:
        return previous.text == ")" || previous.text == "]";
      default:
        return false;
    }
  }

  bool AfterMemberDot() const {
    return !tokens_.empty() && tokens_.back().end == pos_ && tokens_.back().text == "." &&
           tokens_.back().kind == TokenKind::kPunctuation;
  }

  // The index of the first byte at or after `i` that cannot continue an identifier (or the end of the text).
  size_t SkipIdentifierChars(size_t i) const {
    const char* const data = text_.data();
    const size_t size = text_.size();
    while (i < size && IsIdentifierChar(data[i])) ++i;
    return i;
  }

  void SkipDigits() {
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  }

  TokenKind ScanNumber() {
    bool starts_with_digit = IsDigit(text_[pos_]);
    if (text_[pos_] == '0' && (HasAt(pos_ + 1, 'x') || HasAt(pos_ + 1, 'X')) && IsHexDigit(At(pos_ + 2))) {
      pos_ += 2;
      while (pos_ < text_.size() && IsHexDigit(text_[pos_])) ++pos_;
    } else if (starts_with_digit && AfterMemberDot()) {
      SkipDigits();  // x.1.2 is two member accesses, not x . 1.2
    } else {
      SkipDigits();
      if (HasAt(pos_, '.')) {
        ++pos_;
        SkipDigits();
      }
      if (HasAt(pos_, 'e') || HasAt(pos_, 'E')) {
        size_t exponent = pos_ + 1;
        if (HasAt(exponent, '+') || HasAt(exponent, '-')) ++exponent;
        if (IsDigit(At(exponent))) {
          pos_ = exponent;
          SkipDigits();
        }
      }
    }
    if (rules_.digits_may_start_words && starts_with_digit && pos_ < text_.size() && IsIdentifierChar(text_[pos_])) {
      pos_ = SkipIdentifierChars(pos_);
      return TokenKind::kWord;
    }
    return TokenKind::kNumber;
  }

  // A bare word, or a prefixed string when the word is a string prefix of the dialect directly followed
  // by its quote (E'…', X'…', r"…").
  TokenKind ScanWord() {
    size_t begin = pos_;
    pos_ = SkipIdentifierChars(pos_);
    char next = At(pos_);
    if (pos_ >= text_.size() || (next != '\'' && next != '"')) return TokenKind::kWord;
    std::string prefix = LowerAscii(text_.substr(begin, pos_ - begin));
    size_t open = pos_;
    pos_ = begin;
    if (rules_.raw_bytes_string_prefixes && (prefix == "r" || prefix == "b" || prefix == "rb" || prefix == "br")) {
      ScanStringBody(open);
      return TokenKind::kString;
    }
    if (next == '\'') {
      if (rules_.escape_string_prefix && prefix == "e") {
        ScanStringBody(open, /*escape_prefix=*/true);
        return TokenKind::kString;
      }
      if ((rules_.national_string_prefix && prefix == "n") ||
          (rules_.hex_bit_string_prefixes && (prefix == "x" || prefix == "b"))) {
        ScanStringBody(open);
        return TokenKind::kString;
      }
    }
    pos_ = open;
    return TokenKind::kWord;
  }

  // One of ->> :: <= >= <> != || -> => (the longest that matches), else one byte.
  void ScanOperator() {
    const char next = At(pos_ + 1);
    size_t length = 1;
    switch (text_[pos_]) {
      case '-':
        if (next == '>') length = HasAt(pos_ + 2, '>') ? 3 : 2;
        break;
      case ':':
        if (next == ':') length = 2;
        break;
      case '<':
        if (next == '=' || next == '>') length = 2;
        break;
      case '>':
      case '!':
        if (next == '=') length = 2;
        break;
      case '|':
        if (next == '|') length = 2;
        break;
      case '=':
        if (next == '>') length = 2;
        break;
      default:
        break;
    }
    pos_ += length;
  }

  std::string_view text_;
  const LexicalRules& rules_;
  const std::string& file_;
  size_t pos_ = 0;
  const bool keep_comments_;
  std::vector<size_t>* const reference_words_;  // when set, the indices of kReferenceCall words are appended
  std::vector<Token> tokens_;
};


int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  return Lower(c) - 'a' + 10;
}

// Decodes the escape starting at body[i] == '\\'; returns the index after it.
size_t DecodeEscape(std::string_view body, size_t i, std::string& out) {
  if (i + 1 >= body.size()) return i + 1;  // a lone trailing backslash cannot come from a closed token
  char c = body[i + 1];
  auto count_hex = [&](size_t from, size_t limit) {
    size_t n = 0;
    while (n < limit && from + n < body.size() && IsHexDigit(body[from + n])) ++n;
    return n;
  };
  auto hex_value = [&](size_t from, size_t n) {
    unsigned long value = 0;
    for (size_t k = 0; k < n; ++k) value = value * 16 + static_cast<unsigned long>(HexValue(body[from + k]));
    return value;
  };
  switch (c) {
    case 'n':
      out += '\n';
      return i + 2;
    case 't':
      out += '\t';
      return i + 2;
    case 'r':
      out += '\r';
      return i + 2;
    case 'b':
      out += '\b';
      return i + 2;
    case 'f':
      out += '\f';
      return i + 2;
    case 'v':
      out += '\v';
      return i + 2;
    case 'a':
      out += '\a';
      return i + 2;
    case 'x':
    case 'X': {
      size_t n = count_hex(i + 2, 2);
      if (n == 0) break;
      out += static_cast<char>(hex_value(i + 2, n));
      return i + 2 + n;
    }
    case 'u':
    case 'U': {
      size_t want = c == 'u' ? 4 : 8;
      size_t n = count_hex(i + 2, want);
      if (n != want) break;
      unsigned long code_point = hex_value(i + 2, n);
      if (code_point > 0x10FFFF) break;
      AppendUtf8(out, code_point);
      return i + 2 + n;
    }
    default:
      if (c >= '0' && c <= '7') {
        size_t n = 0;
        unsigned value = 0;
        while (n < 3 && i + 1 + n < body.size() && body[i + 1 + n] >= '0' && body[i + 1 + n] <= '7') {
          value = value * 8 + static_cast<unsigned>(body[i + 1 + n] - '0');
          ++n;
        }
        out += static_cast<char>(value & 0xFF);
        return i + 1 + n;
      }
      break;
  }
  out += c;  // \\ \' \" \` and unknown escapes stand for the character itself
  return i + 2;
}

std::string DecodeBody(std::string_view body, QuoteForm form) {
  std::string out;
  out.reserve(body.size());
  size_t i = 0;
  while (i < body.size()) {
    char c = body[i];
    if (c == '\\' && form.backslash_escapes) {
      i = DecodeEscape(body, i, out);
    } else if (c == form.quote && form.doubled_quotes && i + 1 < body.size() && body[i + 1] == form.quote) {
      out += c;
      i += 2;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::string StringValue(std::string_view text, const LexicalRules& rules) {
  if (text.front() == '$') {
    size_t tag_end = text.find('$', 1);
    size_t delimiter = tag_end + 1;
    return std::string(text.substr(delimiter, text.size() - 2 * delimiter));
  }
  size_t open = 0;
  while (open < text.size() && text[open] != '\'' && text[open] != '"') ++open;
  std::string prefix = LowerAscii(text.substr(0, open));
  char quote = text[open];
  std::string_view quoted = text.substr(open);
  bool raw = rules.raw_bytes_string_prefixes && prefix.find('r') != std::string::npos;
  if (rules.triple_quoted_strings && quoted.size() >= 6 && quoted[1] == quote && quoted[2] == quote) {
    std::string_view body = quoted.substr(3, quoted.size() - 6);
    return raw ? std::string(body) : DecodeBody(body, QuoteForm{quote, true, false});
  }
  std::string_view body = quoted.substr(1, quoted.size() - 2);
  if (raw) return std::string(body);
  bool escapes = rules.backslash_escapes || (rules.escape_string_prefix && prefix == "e");
  return DecodeBody(body, QuoteForm{quote, escapes, rules.doubled_quotes});
}

}  // namespace

std::vector<Token> Tokenize(std::string_view text, Dialect dialect, const std::string& file) {
  return Lexer(text, dialect, file, 0, /*keep_comments=*/true).Run();
}

std::vector<Token> Tokenize(std::string_view text, size_t begin, Dialect dialect, const std::string& file) {
  return Lexer(text, dialect, file, begin, /*keep_comments=*/true).Run();
}

std::vector<Token> TokenizeSignificant(std::string_view text, Dialect dialect, const std::string& file) {
  return Lexer(text, dialect, file, 0, /*keep_comments=*/false).Run();
}

std::vector<Token> TokenizeSignificant(std::string_view text, size_t begin, Dialect dialect, const std::string& file) {
  return Lexer(text, dialect, file, begin, /*keep_comments=*/false).Run();
}

std::vector<Token> TokenizeSignificant(std::string_view text, size_t begin, Dialect dialect, const std::string& file,
                                       std::vector<size_t>& reference_words) {
  reference_words.clear();
  return Lexer(text, dialect, file, begin, /*keep_comments=*/false, &reference_words).Run();
}

std::string TokenValue(const Token& token, Dialect dialect) {
  const LexicalRules& rules = RulesFor(dialect);
  std::string_view text = token.text;
  switch (token.kind) {
    case TokenKind::kString:
      return StringValue(text, rules);
    case TokenKind::kQuotedIdentifier: {
      char quote = text.front();
      QuoteForm form{quote, rules.backslash_escapes, quote == '"' || rules.doubled_quotes};
      return DecodeBody(text.substr(1, text.size() - 2), form);
    }
    default:
      return std::string(text);
  }
}

Dialect DialectForAdapter(std::string_view adapter) {
  std::string name = LowerAscii(adapter);
  if (name == "duckdb") return Dialect::kDuckDb;
  if (name == "postgres" || name == "postgresql") return Dialect::kPostgres;
  if (name == "bigquery") return Dialect::kBigQuery;
  return Dialect::kClickHouse;
}

std::string StripTrailingSemicolons(std::string_view text, size_t begin,
                                    const std::vector<Token>& significant_tokens) {
  auto is_semicolon = [](const Token& token) { return token.kind == TokenKind::kPunctuation && token.text == ";"; };
  size_t last = significant_tokens.size();
  while (last > 0 && is_semicolon(significant_tokens[last - 1])) --last;
  const size_t end = last == 0 ? begin : std::max(begin, significant_tokens[last - 1].end);
  std::string statement;
  statement.reserve(text.size() - begin);  // what the pieces below can add up to: the string never grows
  statement.append(text.substr(begin, end - begin));
  size_t at = end;
  for (size_t t = last; t < significant_tokens.size(); ++t) {
    if (significant_tokens[t].begin < at) continue;
    statement.append(text.substr(at, significant_tokens[t].begin - at));
    at = significant_tokens[t].end;
  }
  statement.append(text.substr(at));
  while (!statement.empty() && HasByteClass(statement.back(), kSpaceByte)) statement.pop_back();
  return statement;
}

std::string StripTrailingSemicolons(std::string_view text, Dialect dialect) {
  return StripTrailingSemicolons(text, 0, TokenizeSignificant(text, dialect));
}

}  // namespace sluice::sql
