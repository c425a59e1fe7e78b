#include "warehouse/seed_table.hpp"

#include <regex>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"

namespace sluice {

namespace {

[[noreturn]] void Malformed(const std::string& file, size_t line, const std::string& what) {
  throw Error(Diagnostic{"SLU-WAREHOUSE-015",
                         "seed file " + file + " is not valid CSV: " + what,
                         SourceLocation{file, static_cast<int>(line), 0},
                         "seeds are comma-separated with a header line; quote fields holding commas, quotes or line "
                         "breaks with \" and write a quote inside them as \"\"",
                         {}});
}

// Records of the file: fields, nullopt for an empty unquoted field; `lines` gets the line each record starts on.
std::vector<std::vector<std::optional<std::string>>> ParseRecords(const std::string& text, const std::string& file,
                                                                  std::vector<size_t>& lines) {
  std::vector<std::vector<std::optional<std::string>>> records;
  std::vector<std::optional<std::string>> record;
  std::string field;
  bool quoted = false;  // the current field was quoted
  bool in_quotes = false;
  bool field_started = false;
  size_t line = 1;
  auto end_field = [&] {
    if (!quoted && field.empty()) {
      record.emplace_back(std::nullopt);
    } else {
      record.emplace_back(field);
    }
    field.clear();
    quoted = false;
    field_started = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
          if (i + 1 < text.size() && text[i + 1] != ',' && text[i + 1] != '\n' && text[i + 1] != '\r') {
            Malformed(file, line, "text after a closing quote");
          }
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (lines.size() == records.size()) lines.push_back(line);  // the first character of a record
    if (c == '"') {
      if (field_started) Malformed(file, line, "a quote inside an unquoted field");
      quoted = in_quotes = field_started = true;
    } else if (c == ',') {
      end_field();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      continue;
    } else if (c == '\n') {
      end_field();
      records.push_back(std::move(record));
      record.clear();
      ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (in_quotes) Malformed(file, line, "an unterminated quoted field");
  if (field_started || !record.empty()) {
    end_field();
    records.push_back(std::move(record));
  }
  return records;
}

std::string InferType(const std::vector<std::vector<std::optional<std::string>>>& rows, size_t column,
                      const SeedTypeNames& names) {
  static const std::regex kInteger(R"(-?\d{1,18})");
  static const std::regex kNumber(R"(-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)");
  static const std::regex kDate(R"(\d{4}-\d{2}-\d{2})");
  bool integer = true, number = true, date = true, nullable = false, any = false;
  for (const auto& row : rows) {
    const std::optional<std::string>& value = row[column];
    if (!value) {
      nullable = true;
      continue;
    }
    any = true;
    integer = integer && std::regex_match(*value, kInteger);
    number = number && std::regex_match(*value, kNumber);
    date = date && std::regex_match(*value, kDate);
  }
  const std::string& type = !any      ? names.text
                            : integer ? names.integer
                            : number  ? names.number
                            : date    ? names.date
                                      : names.text;
  return nullable ? names.nullable_prefix + type + names.nullable_suffix : type;
}

// Whether `a` and `b` are equal ignoring ASCII case.
bool SameName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// The fields of the record starting at `at` in `text`, each as its offset and decoded value (quotes removed,
// `""` as `"`); the record ends at an unquoted line end or the end of the text.
std::vector<std::pair<size_t, std::string>> RecordAt(std::string_view text, size_t at) {
  std::vector<std::pair<size_t, std::string>> fields;
  fields.emplace_back(at, "");
  bool quoted = false;
  for (size_t i = at; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back().second += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().second += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back(i + 1, "");
    } else if (c == '\n' || c == '\r') {
      break;
    } else {
      fields.back().second += c;
    }
  }
  return fields;
}

}  // namespace

Error SeedValueError(const SeedFile& seed, const std::string& subject, size_t line, const std::string& column,
                     const std::string& problem) {
  const std::string file = seed.file.empty() ? seed.path : seed.file;
  std::string text;
  try {
    text = ReadFile(seed.path);
  } catch (const Error&) {
    // The value is then located at its line only.
  }
  size_t begin = 0;  // where line `line` starts
  for (size_t at = 1; at < line && begin != std::string::npos; ++at) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  SourceLocation where{file, static_cast<int>(line), 0};
  std::string value;
  if (!text.empty() && begin != std::string::npos && begin < text.size()) {
    const std::vector<std::pair<size_t, std::string>> header = RecordAt(text, text.starts_with("\xEF\xBB\xBF") ? 3 : 0);
    const std::vector<std::pair<size_t, std::string>> record = RecordAt(text, begin);
    size_t index = 0;
    while (index < header.size() && !SameName(header[index].second, column)) ++index;
    where = LocationAt(file, text, index < record.size() ? record[index].first : begin);
    if (index < record.size()) value = record[index].second;
  }
  std::string type;
  for (const auto& [name, listed] : seed.columns) {
    if (SameName(name, column)) type = listed;
  }
  const std::string shown = value.size() > 40 ? value.substr(0, 40) + "…" : value;
  return Error(MakeDiagnostic(
      "SLU-WAREHOUSE-025",
      "loading the seed " + subject + ": the value `" + shown + "` of column " + column +
          (type.empty() ? "" : " does not convert to " + type) + " (" + problem + ")",
      where,
      type.empty() ? "fix the value, or give the column a type that holds it under the seed's `columns`"
                   : "fix the value, or change the type of " + column + " under the seed's `columns`",
      text));
}

SeedTable ReadSeedCsv(const std::string& text, const std::string& file, const std::string& subject,
                      const std::vector<std::pair<std::string, std::string>>& listed, const SeedTypeNames& names) {
  std::vector<size_t> lines;
  std::vector<std::vector<std::optional<std::string>>> records = ParseRecords(text, file, lines);
  if (records.empty()) Malformed(file, 1, "no header line");
  SeedTable table;
  for (const std::optional<std::string>& name : records.front()) {
    if (!name || name->empty()) Malformed(file, 1, "an empty column name in the header");
    table.columns.push_back(*name);
  }
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].size() != table.columns.size()) {
      Malformed(file, i + 1,
                "record " + std::to_string(i) + " has " + std::to_string(records[i].size()) + " fields, the header " +
                    std::to_string(table.columns.size()));
    }
    table.rows.push_back(std::move(records[i]));
    table.lines.push_back(i < lines.size() ? lines[i] : 0);
  }
  for (const auto& [name, type] : listed) {
    bool present = false;
    for (const std::string& column : table.columns) present = present || column == name;
    if (!present) {
      throw Error(Diagnostic{"SLU-WAREHOUSE-011",
                             "seed column \"" + name + "\" of " + subject + " is not in " + file,
                             {},
                             "the CSV header must name every column listed under `columns`",
                             {}});
    }
  }
  for (size_t column = 0; column < table.columns.size(); ++column) {
    std::string type;
    for (const auto& [name, listed_type] : listed) {
      if (name == table.columns[column]) type = listed_type;
    }
    table.types.push_back(type.empty() ? InferType(table.rows, column, names) : type);
  }
  return table;
}

}  // namespace sluice
