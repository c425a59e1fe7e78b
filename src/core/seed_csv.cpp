#include "core/seed_csv.hpp"

#include <algorithm>
#include <cstring>

#include "core/diagnostic.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"

namespace sluice {

namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

enum class LineEnd { kNone, kLf, kCrLf };

const char* LineEndName(LineEnd end) { return end == LineEnd::kCrLf ? "CR LF" : "LF"; }

// `c` as a message shows it: the character in backticks when printable ASCII, else its byte value.
std::string Shown(char c) {
  const unsigned char byte = static_cast<unsigned char>(c);
  if (byte >= 0x21 && byte < 0x7F) return "`" + std::string(1, c) + "`";
  const char* digits = "0123456789ABCDEF";
  return std::string("byte 0x") + digits[byte >> 4] + digits[byte & 15];
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }


class CsvReader {
 public:
  CsvReader(const std::string& file, std::string_view text) : file_(file), text_(text) {}

  SeedCsv Read() {
    if (size_t bad = FindInvalidUtf8(text_); bad != std::string_view::npos) {
      Fail(bad, "SLU-SEED-001", Shown(text_[bad]) + " is not UTF-8 text", "save the file as UTF-8");
    }
    if (const void* nul = std::memchr(text_.data(), '\0', text_.size())) {
      Fail(static_cast<const char*>(nul) - text_.data(), "SLU-SEED-001", "a NUL byte in a seed file",
           "a seed is text: remove the NUL byte");
    }
    if (text_.starts_with(kByteOrderMark)) at_ = kByteOrderMark.size();
    if (at_ == text_.size()) {
      Fail(at_, "SLU-SEED-003", file_ + " is empty; a seed's first line is its header",
           "write the column names on the first line, e.g. id,name");
    }
    SeedCsv csv;
    ReadHeader(csv.columns);
    while (at_ < text_.size()) csv.rows.push_back(ReadRow(csv.columns.size()));
    return csv;
  }

 private:
  [[noreturn]] void Fail(size_t offset, std::string code, std::string message, std::string hint) const {
    throw Error(
        MakeDiagnostic(std::move(code), std::move(message), LocationAt(file_, text_, offset), std::move(hint), text_));
  }

  // Fails at `offset`, a misplaced `"` — or, when a quoted field of this row ran past the end of its line, at that
  // field's opening quote: such a field followed by a misplaced `"` is most often a quote left open, which the next
  // `"` of the file closed far from where it was meant to.
  [[noreturn]] void FailInRow(size_t offset, std::string code, std::string message, std::string hint) const {
    if (spanning_quote_ == std::string_view::npos) Fail(offset, std::move(code), std::move(message), std::move(hint));
    const SourceLocation closed = LocationAt(file_, text_, spanning_close_);
    Fail(spanning_quote_, "SLU-SEED-001",
         "the quoted field that starts here is not closed on its line: the `\"` at line " +
             std::to_string(closed.line) + ", column " + std::to_string(closed.column) +
             " closes it, and the row breaks after it (" + message + ")",
         "close the field with `\"` on this line; a `\"` inside a quoted field is written `\"\"`");
  }

  bool AtRowEnd() const { return at_ == text_.size() || text_[at_] == '\n' || text_[at_] == '\r'; }

  // One field from at_, up to its separator or row end (not consumed); appends its decoded text to `value`.
  // Returns whether it was quoted.
  bool ReadField(std::string& value) {
    const size_t begin = at_;
    if (at_ < text_.size() && text_[at_] == '"') {
      ++at_;
      while (true) {
        const size_t quote = text_.find('"', at_);
        if (quote == std::string_view::npos) {
          Fail(begin, "SLU-SEED-001", "the quoted field that starts here is never closed",
               "close it with `\"`; a `\"` inside a quoted field is written `\"\"`");
        }
        const std::string_view part = text_.substr(at_, quote - at_);
        value.append(part);
        const size_t breaks = static_cast<size_t>(std::count(part.begin(), part.end(), '\n'));
        if (spanning_quote_ == std::string_view::npos && breaks > 0) {
          spanning_quote_ = begin;
          spanning_close_ = quote;
        }
        line_ += breaks;
        at_ = quote + 1;
        if (at_ < text_.size() && text_[at_] == '"') {
          value.push_back('"');
          ++at_;
          continue;
        }
        break;
      }
      if (!AtRowEnd() && text_[at_] != ',') {
        FailInRow(at_, "SLU-SEED-001",
             Shown(text_[at_]) + " after the closing quote of a field; expected `,` or the row's end",
             "a `\"` inside a quoted field is written `\"\"`");
      }
      return true;
    }
    while (!AtRowEnd() && text_[at_] != ',') {
      if (text_[at_] == '"') {
        FailInRow(at_, "SLU-SEED-001", "a `\"` inside an unquoted field",
             "quote the whole field and double each `\"` inside it, e.g. \"ab\"\"c\"");
      }
      ++at_;
    }
    value.append(text_.substr(begin, at_ - begin));
    return false;
  }

  // Consumes the row end at at_ (none at the end of the text); every row ends as the header does.
  void ReadRowEnd() {
    if (at_ == text_.size()) return;
    const size_t begin = at_;
    LineEnd end = LineEnd::kLf;
    if (text_[at_] == '\r') {
      if (at_ + 1 == text_.size() || text_[at_ + 1] != '\n') {
        Fail(at_, "SLU-SEED-001", "a carriage return (CR) not followed by a line feed (LF)",
             "end every row with LF or CR LF; a CR inside a value needs the field quoted");
      }
      end = LineEnd::kCrLf;
      ++at_;
    }
    ++at_;
    ++line_;
    if (line_end_ == LineEnd::kNone) {
      line_end_ = end;
    } else if (end != line_end_) {
      Fail(begin, "SLU-SEED-001",
           std::string("this row ends with ") + LineEndName(end) + ", the header with " + LineEndName(line_end_),
           "end every row of the file the same way");
    }
  }

  void ReadHeader(std::vector<std::string>& columns) {
    while (true) {
      const size_t begin = at_;
      std::string name;
      ReadField(name);
      const std::string number = std::to_string(columns.size() + 1);
      if (name.empty()) {
        Fail(begin, "SLU-SEED-003", "column " + number + " of the header has no name",
             "name every column on the first line, e.g. id,name");
      }
      if (IsSpace(name.front()) || IsSpace(name.back())) {
        Fail(begin, "SLU-SEED-003", "header name '" + name + "' has whitespace around it",
             "fields are separated by `,` alone: remove the spaces");
      }
      for (size_t i = 0; i < columns.size(); ++i) {
        if (EqualsIgnoringAsciiCase(columns[i], name)) {  // as DuckDB compares column names
          Fail(begin, "SLU-SEED-003",
               "header name '" + name + "' repeats column " + std::to_string(i + 1) + " '" + columns[i] + "'",
               "column names are unique, ignoring case");
        }
      }
      columns.push_back(std::move(name));
      if (AtRowEnd()) break;
      ++at_;  // ,
    }
    ReadRowEnd();
  }

  SeedCsvRow ReadRow(size_t expected) {
    const size_t begin = at_;
    spanning_quote_ = std::string_view::npos;
    SeedCsvRow row;
    row.line = line_;
    size_t first_extra = 0;  // the separator before the first field past `expected`
    while (true) {
      row.offsets.push_back(at_);
      std::string value;
      const bool quoted = ReadField(value);
      if (quoted || !value.empty()) {
        row.values.emplace_back(std::move(value));
      } else {
        row.values.emplace_back(std::nullopt);
      }
      if (AtRowEnd()) break;
      if (row.values.size() == expected) first_extra = at_;
      ++at_;  // ,
    }
    const size_t end = at_;
    const size_t fields = row.values.size();
    if (fields != expected) {
      const std::string counts = "this row has " + std::to_string(fields) + (fields == 1 ? " field" : " fields") +
                                 "; the header has " + std::to_string(expected);
      if (fields > expected) {
        Fail(first_extra, "SLU-SEED-002", counts,
             "quote a value that holds a `,`, e.g. \"a, b\", or add the column to the header");
      }
      Fail(end, "SLU-SEED-002", counts,
           end == begin ? "remove the empty line" : "add the missing fields; an empty field is NULL");
    }
    ReadRowEnd();
    return row;
  }

  const std::string& file_;
  std::string_view text_;
  size_t at_ = 0;
  LineEnd line_end_ = LineEnd::kNone;
  size_t line_ = 1;  // the line at_ is on
  // The opening quote of this row's first quoted field holding a line break, and the quote that closed it.
  size_t spanning_quote_ = std::string_view::npos;
  size_t spanning_close_ = 0;
};

}  // namespace

SeedCsv ReadSeedCsv(const std::string& file, std::string_view text) { return CsvReader(file, text).Read(); }

}  // namespace sluice
