#include "warehouse/seed_table.hpp"

#include <filesystem>
#include <regex>
#include <system_error>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/seed_csv.hpp"
#include "core/text.hpp"

namespace sluice {

namespace {

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

Error SeedValueError(const SeedFile& seed, const std::string& subject, size_t line, const std::string& column,
                     const std::string& problem) {
  const std::string file = SeedFileName(seed);
  std::string text;
  try {
    text = ReadFile(seed.path);
  } catch (const Error&) {
    // The value is then located at its line only.
  }
  SourceLocation where{file, static_cast<int>(line), 0};
  std::string value;
  try {
    const SeedCsv csv = ReadSeedCsv(file, text);
    size_t index = 0;
    while (index < csv.columns.size() && !EqualsIgnoringAsciiCase(csv.columns[index], column)) ++index;
    for (const SeedCsvRow& row : csv.rows) {
      if (row.line != line) continue;
      where = LocationAt(file, text, index < row.offsets.size() ? row.offsets[index] : row.offsets.front());
      if (index < row.values.size()) value = row.values[index].value_or("");
    }
  } catch (const Error&) {
    // A file changed since the load no longer reads: the value is located at its line only.
  }
  std::string type;
  for (const auto& [name, listed] : seed.columns) {
    if (EqualsIgnoringAsciiCase(name, column)) type = listed;
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

std::string SeedFileName(const SeedFile& seed) { return seed.file.empty() ? seed.path : seed.file; }

std::string ReadSeedFile(const Relation& relation, const SeedFile& seed) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(seed.path, error)) {
    throw Error(Diagnostic{"SLU-WAREHOUSE-012", "seed file " + seed.path + " for " + relation.ToString() + " does not exist",
                           {}, "check the seed's path (relative to the project root)", {}});
  }
  return ReadFile(seed.path);
}

SeedTable ReadSeedTable(const Relation& relation, const SeedFile& seed, const SeedTypeNames& names) {
  const std::string file = SeedFileName(seed);
  const std::string subject = relation.ToString();
  SeedCsv csv = ReadSeedCsv(file, ReadSeedFile(relation, seed));
  SeedTable table;
  table.columns = std::move(csv.columns);
  for (SeedCsvRow& row : csv.rows) {
    table.rows.push_back(std::move(row.values));
    table.lines.push_back(row.line);
  }
  for (const auto& [name, type] : seed.columns) {
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
    for (const auto& [name, listed_type] : seed.columns) {
      if (name == table.columns[column]) type = listed_type;
    }
    table.types.push_back(type.empty() ? InferType(table.rows, column, names) : type);
  }
  return table;
}

}  // namespace sluice
