#include "sql/dialect.hpp"

#include "core/diagnostic.hpp"

namespace sluice::sql {

namespace {

bool UsesBackslashEscapes(Dialect dialect) { return dialect == Dialect::kClickHouse || dialect == Dialect::kBigQuery; }

[[noreturn]] void FailUnrenderable(const std::string& message, const std::string& hint) {
  throw Error(MakeDiagnostic("SLU-SQL-020", message, SourceLocation{}, hint));
}

// `text` between `quote`s with backslash escapes: the quote, the backslash and control bytes are escaped
// (BigQuery rejects a raw line break inside a one-line literal); other bytes, UTF-8 included, pass as is.
std::string BackslashQuoted(std::string_view text, char quote) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() + 2);
  out += quote;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0x0F];
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

// `text` between `quote`s with the quote doubled; a NUL byte has no spelling there.
std::string DoubledQuoted(std::string_view text, char quote, std::string_view what) {
  if (text.find('\0') != std::string_view::npos) {
    FailUnrenderable(std::string(what) + " contains a NUL byte, which DuckDB and PostgreSQL cannot represent",
                     "remove the NUL byte from the value");
  }
  std::string out;
  out.reserve(text.size() + 2);
  out += quote;
  for (char c : text) {
    out += c;
    if (c == quote) out += quote;
  }
  out += quote;
  return out;
}

}  // namespace

std::string QuoteIdentifier(Dialect dialect, std::string_view name) {
  if (name.empty()) FailUnrenderable("an identifier is empty", "give the schema, table or column a name");
  if (UsesBackslashEscapes(dialect)) return BackslashQuoted(name, '`');
  return DoubledQuoted(name, '"', "identifier");
}

std::string QualifiedName(Dialect dialect, std::string_view schema, std::string_view name) {
  return QuoteIdentifier(dialect, schema) + "." + QuoteIdentifier(dialect, name);
}

std::string QuoteString(Dialect dialect, std::string_view text) {
  if (UsesBackslashEscapes(dialect)) return BackslashQuoted(text, '\'');
  return DoubledQuoted(text, '\'', "string value");
}

std::string DateLiteral(Dialect dialect, Date date) {
  // ClickHouse 18.16 reads no `DATE '…'` literal; toDate('…') reads the same on every version.
  if (dialect == Dialect::kClickHouse) return "toDate('" + date.ToString() + "')";
  return "DATE '" + date.ToString() + "'";
}

bool SameColumnName(Dialect dialect, std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (dialect == Dialect::kClickHouse) return a == b;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace sluice::sql
