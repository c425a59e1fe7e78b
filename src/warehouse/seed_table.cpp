#include "warehouse/seed_table.hpp"

#include <regex>

#include "core/diagnostic.hpp"

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

// Records of the file: fields, nullopt for an empty unquoted field.
std::vector<std::vector<std::optional<std::string>>> ParseRecords(const std::string& text, const std::string& file) {
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

}  // namespace

SeedTable ReadSeedCsv(const std::string& text, const std::string& file, const std::string& subject,
                      const std::vector<std::pair<std::string, std::string>>& listed, const SeedTypeNames& names) {
  std::vector<std::vector<std::optional<std::string>>> records = ParseRecords(text, file);
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
