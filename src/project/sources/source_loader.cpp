#include "project/sources/source_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>

#include "core/asset_key.hpp"
#include "core/file_system.hpp"
#include "core/seed_csv.hpp"
#include "project/sources/yaml_plain_scalar.hpp"
#include "sql/dialect.hpp"
#include "sql/duckdb_type_name.hpp"

namespace sluice {

namespace {

// ---- YAML access -----------------------------------------------------------------------------------------

struct YamlFile {
  std::string file;  // relative path
  std::string text;
};

SourceLocation At(const YamlFile& yaml, const YAML::Mark& mark) {
  if (mark.line < 0) return {yaml.file, 0, 0};
  return {yaml.file, mark.line + 1, mark.column + 1};
}

[[noreturn]] void Fail(const YamlFile& yaml, const YAML::Mark& mark, std::string code, std::string message,
                       std::string hint) {
  throw Error(MakeDiagnostic(std::move(code), std::move(message), At(yaml, mark), std::move(hint), yaml.text));
}

// The type PyYAML's safe_load gives a node (StreamBuild reads sources with it), so that a value StreamBuild
// rejects for its type is rejected here too (plain scalars: yaml_plain_scalar.hpp).
enum class YamlType { kNull, kBool, kInt, kFloat, kTimestamp, kString, kList, kMapping, kOther };

YamlType PlainScalarTypeOf(const std::string& text) {
  switch (ResolvePlainScalar(text)) {
    case PlainScalarType::kBool:
      return YamlType::kBool;
    case PlainScalarType::kInt:
      return YamlType::kInt;
    case PlainScalarType::kFloat:
      return YamlType::kFloat;
    case PlainScalarType::kTimestamp:
      return YamlType::kTimestamp;
    case PlainScalarType::kString:
      return YamlType::kString;
  }
  return YamlType::kString;
}

YamlType TypeOf(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return YamlType::kNull;
  if (node.IsSequence()) return YamlType::kList;
  if (node.IsMap()) return YamlType::kMapping;
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return YamlType::kString;
  if (tag == "?") return PlainScalarTypeOf(node.Scalar());
  if (tag == "tag:yaml.org,2002:int") return YamlType::kInt;
  if (tag == "tag:yaml.org,2002:bool") return YamlType::kBool;
  if (tag == "tag:yaml.org,2002:float") return YamlType::kFloat;
  return YamlType::kOther;
}

std::string TypeName(YamlType type) {
  switch (type) {
    case YamlType::kNull:
      return "empty";
    case YamlType::kBool:
      return "a boolean";
    case YamlType::kInt:
      return "an integer";
    case YamlType::kFloat:
      return "a number";
    case YamlType::kTimestamp:
      return "a date";
    case YamlType::kString:
      return "a string";
    case YamlType::kList:
      return "a list";
    case YamlType::kMapping:
      return "a mapping";
    case YamlType::kOther:
      return "a tagged value";
  }
  return "a value";
}

// Whether `text` is a postgres refresh interval: `<digits><whitespace><unit>`, unit SECOND, MINUTE, HOUR or
// DAY with an optional S, any case.
bool IsRefreshInterval(std::string_view text) {
  size_t at = 0;
  auto take_while = [&text, &at](auto accept) {
    size_t begin = at;
    while (at < text.size() && accept(static_cast<unsigned char>(text[at]))) ++at;
    return at - begin;
  };
  if (take_while([](unsigned char c) { return std::isdigit(c) != 0; }) == 0) return false;
  if (take_while([](unsigned char c) { return std::isspace(c) != 0; }) == 0) return false;
  std::string unit;
  for (char c : text.substr(at)) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'S') unit.pop_back();
  return unit == "SECOND" || unit == "MINUTE" || unit == "HOUR" || unit == "DAY";
}

// `text` as digits of `base`; nullopt when empty, on a foreign digit, or past the range of int.
std::optional<int> Digits(std::string_view text, int base) {
  if (text.empty()) return std::nullopt;
  long long value = 0;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    int digit = std::isdigit(byte) ? c - '0' : std::isalpha(byte) ? std::tolower(byte) - 'a' + 10 : base;
    if (digit >= base) return std::nullopt;
    value = value * base + digit;
    if (value > std::numeric_limits<int>::max()) return std::nullopt;
  }
  return static_cast<int>(value);
}

// The value of a plain scalar PyYAML reads as an int (decimal, 0x, 0b, leading-0 octal, `_` separators,
// sexagesimal `1:30`); nullopt when it does not fit in an int.
std::optional<int> YamlInt(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.erase(0, 1);
  std::optional<int> value;
  if (text.rfind("0b", 0) == 0) {
    value = Digits(std::string_view(text).substr(2), 2);
  } else if (text.rfind("0x", 0) == 0) {
    value = Digits(std::string_view(text).substr(2), 16);
  } else if (text.find(':') != std::string::npos) {
    long long total = 0;
    size_t begin = 0;
    while (true) {
      size_t colon = text.find(':', begin);
      std::optional<int> part = Digits(std::string_view(text).substr(begin, colon - begin), 10);
      if (!part) return std::nullopt;
      total = total * 60 + *part;
      if (total > std::numeric_limits<int>::max()) return std::nullopt;
      if (colon == std::string::npos) break;
      begin = colon + 1;
    }
    value = static_cast<int>(total);
  } else if (text.size() > 1 && text[0] == '0') {
    value = Digits(std::string_view(text).substr(1), 8);
  } else {
    value = Digits(text, 10);
  }
  if (value && negative) value = -*value;
  return value;
}

// One `key: value` of a mapping. A key written with no value (or `~`, `null`) has a null value, which
// StreamBuild treats as absent.
struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;

  bool has_value() const { return TypeOf(value) != YamlType::kNull; }
  // Where a problem with the value is reported: the value, or its key when the value is empty.
  YAML::Mark mark() const { return has_value() ? value.Mark() : key_node.Mark(); }
};

// A YAML mapping, checked on construction: string keys, none repeated, none templated.
class Mapping {
 public:
  Mapping(const YamlFile& yaml, const YAML::Node& node, const YAML::Mark& at, const std::string& what,
          const std::string& code, const std::string& hint)
      : mark_(at) {
    if (!node.IsMap()) Fail(yaml, at, code, what + " must be a mapping, not " + TypeName(TypeOf(node)), hint);
    for (const auto& entry : node) {
      if (TypeOf(entry.first) != YamlType::kString) {
        Fail(yaml, entry.first.Mark(), "SLU-SOURCE-001", "keys of " + what + " must be strings",
             "write the key as a plain word");
      }
      std::string key = entry.first.Scalar();
      if (key.find("${") != std::string::npos) {
        Fail(yaml, entry.first.Mark(), "SLU-SOURCE-011", "key '" + key + "' of " + what + " is templated",
             "only values may use ${…}; write the key literally");
      }
      if (Find(key) != nullptr) {
        Fail(yaml, entry.first.Mark(), "SLU-SOURCE-001", "key '" + key + "' appears twice in " + what,
             "keep one of them");
      }
      fields_.push_back(Field{key, entry.first, entry.second});
    }
  }

  const Field* Find(std::string_view key) const {
    for (const Field& field : fields_) {
      if (field.key == key) return &field;
    }
    return nullptr;
  }
  // The field when it is present with a value, else nullptr.
  const Field* Value(std::string_view key) const {
    const Field* field = Find(key);
    return field != nullptr && field->has_value() ? field : nullptr;
  }
  const std::vector<Field>& fields() const { return fields_; }
  const YAML::Mark& mark() const { return mark_; }

 private:
  YAML::Mark mark_;
  std::vector<Field> fields_;
};

std::string Listed(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// "a", "a or b", "a, b or c" (with `conjunction` = "or").
std::string Enumerated(const std::vector<std::string>& items, const std::string& conjunction) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " " + conjunction + " " : ", ";
    out += items[i];
  }
  return out;
}

// ---- source kinds ------------------------------------------------------------------------------------------

const std::set<std::string> kCommonKeys = {"kind", "name", "description"};
const std::map<std::string, std::set<std::string>> kKindKeys = {
    {"seed", {"path", "columns"}},
    {"stream_table", {"table_name", "replay_boundary", "freshness"}},
    {"kafka", {"topic", "broker_list", "consumer_group", "format", "ttl", "settings", "replay_boundary", "freshness"}},
    {"postgres", {"host", "port", "database", "table", "user", "password_env", "refresh", "append", "freshness"}},
};
const std::set<std::string> kReplayRoles = {"_replay_partition", "_replay_offset", "_replay_timestamp",
                                            "_replay_landed_at", "_replay_cursor"};
const std::set<std::string> kTypedKafkaSettings = {"kafka_broker_list", "kafka_topic_list", "kafka_group_name",
                                                   "kafka_format"};
constexpr std::string_view kKafkaFormat = "JSONAsString";

std::set<std::string> AllSourceKeys() {
  std::set<std::string> keys = kCommonKeys;
  for (const auto& [kind, own] : kKindKeys) keys.insert(own.begin(), own.end());
  return keys;
}

// The kind that owns `key` other than `kind` (for "belongs to another kind" errors).
std::string OwnerOf(const std::string& key, const std::string& kind) {
  std::vector<std::string> owners;
  for (const auto& [other, keys] : kKindKeys) {
    if (other != kind && keys.count(key)) owners.push_back(other);
  }
  return Enumerated(owners, "and");
}

struct LoadedEntry {
  SourceDeclaration source;
  YAML::Mark name_mark;
  std::optional<YAML::Mark> boundary_mark;  // stream_table: where its replay_boundary is written
};

class EntryParser {
 public:
  // A seed CSV file's own errors are appended to `csv_errors` and do not stop the entry.
  EntryParser(const YamlFile& yaml, const std::filesystem::path& root, const SourceLoadOptions& options,
              std::vector<Diagnostic>& csv_errors)
      : yaml_(yaml), root_(root), options_(options), csv_errors_(csv_errors) {}

  LoadedEntry Parse(const YAML::Node& node) {
    Mapping entry(yaml_, node, node.Mark(), "a source entry", "SLU-SOURCE-001",
                  "write `- kind: <kind>` followed by the source's keys");
    static const std::set<std::string> kAllKeys = AllSourceKeys();
    const std::string kinds = "kind is one of: seed, stream_table, kafka, postgres";
    std::string kind = RequiredString(entry, "kind", "source without `kind`", kinds);
    if (!kKindKeys.count(kind)) {
      Fail(yaml_, entry.Find("kind")->mark(), "SLU-SOURCE-005", "unknown source kind '" + kind + "'", kinds);
    }
    std::set<std::string> own = kKindKeys.at(kind);
    own.insert(kCommonKeys.begin(), kCommonKeys.end());
    for (const Field& field : entry.fields()) {
      if (own.count(field.key)) continue;
      if (!kAllKeys.count(field.key)) {
        Fail(yaml_, field.key_node.Mark(), "SLU-SOURCE-002", "unknown key '" + field.key + "' in a " + kind + " source",
             "known keys: " + Listed(own));
      }
      Fail(yaml_, field.key_node.Mark(), "SLU-SOURCE-007",
           "'" + field.key + "' is a field of " + OwnerOf(field.key, kind) + " sources, not of a " + kind + " source",
           ForeignFieldHint(kind, field.key));
    }

    LoadedEntry loaded{SourceDeclaration{}, entry.mark(), std::nullopt};
    SourceDeclaration& source = loaded.source;
    source.at = At(yaml_, entry.mark());
    source.description = OptionalString(entry, "description").value_or("");
    if (kind != "seed") source.freshness = Freshness(entry);
    if (kind == "kafka") {
      source.compute = Kafka(entry, loaded);
      return loaded;
    }
    source.name = RequiredString(entry, "name", "source without `name`", "add name: <identifier>");
    loaded.name_mark = entry.Find("name")->mark();
    CheckName(source.name, loaded.name_mark, "source name");
    if (kind == "seed") {
      source.compute = Seed(entry);
    } else if (kind == "stream_table") {
      source.compute = StreamTable(entry, loaded);
    } else {
      source.compute = Postgres(entry);
    }
    return loaded;
  }

 private:
  static std::string ForeignFieldHint(const std::string& kind, const std::string& key) {
    if (kind == "kafka" && key == "table_name") {
      return "a kafka source lands into its own raw__ table; to adopt an existing table use kind: stream_table";
    }
    if (kind == "postgres") return "a postgres source has no streaming fields; remove it";
    return "remove it, or change `kind`";
  }

  // The scalar's text after templating. Errors from `expand` that carry no source line get this file's.
  std::string Expand(const Field& field) {
    std::string text = field.value.Scalar();
    if (!options_.expand) return text;
    try {
      return options_.expand(text, At(yaml_, field.value.Mark()));
    } catch (const Error& error) {
      std::vector<Diagnostic> diagnostics = error.diagnostics();
      for (Diagnostic& diagnostic : diagnostics) {
        if (diagnostic.source_line.empty() && diagnostic.location.file == yaml_.file) {
          diagnostic =
              MakeDiagnostic(diagnostic.code, diagnostic.message, diagnostic.location, diagnostic.hint, yaml_.text);
        }
      }
      throw Error(std::move(diagnostics));
    }
  }

  // A present string value, templated; rejects other YAML types and an empty result.
  std::string StringOf(const Field& field, const std::string& what) {
    YamlType type = TypeOf(field.value);
    if (type != YamlType::kString) {
      Fail(yaml_, field.mark(), "SLU-SOURCE-003", what + " must be a string, not " + TypeName(type),
           type == YamlType::kList || type == YamlType::kMapping
               ? "write a single value"
               : "quote it: " + field.key + ": '" + field.value.Scalar() + "'");
    }
    std::string text = Expand(field);
    if (text.empty()) Fail(yaml_, field.mark(), "SLU-SOURCE-003", what + " must not be empty", "give it a value");
    return text;
  }

  std::optional<std::string> OptionalString(const Mapping& map, const std::string& key,
                                            const std::string& prefix = "") {
    const Field* field = map.Value(key);
    if (field == nullptr) return std::nullopt;
    return StringOf(*field, "`" + prefix + key + "`");
  }

  // A required string; `missing` is the message when it is absent or empty.
  std::string RequiredString(const Mapping& map, const std::string& key, const std::string& missing,
                             const std::string& hint, const std::string& prefix = "") {
    const Field* field = map.Value(key);
    if (field == nullptr) {
      const Field* empty = map.Find(key);
      Fail(yaml_, empty != nullptr ? empty->mark() : map.mark(), "SLU-SOURCE-003", missing, hint);
    }
    return StringOf(*field, "`" + prefix + key + "`");
  }

  void CheckName(const std::string& name, const YAML::Mark& mark, const std::string& what) {
    if (!IsIdentifier(name)) {
      Fail(yaml_, mark, "SLU-SOURCE-003", what + " '" + name + "' is not an identifier", "use [A-Za-z_][A-Za-z0-9_]*");
    }
  }

  std::optional<FreshnessPolicy> Freshness(const Mapping& entry) {
    const Field* field = entry.Value("freshness");
    if (field == nullptr) return options_.default_freshness;
    Mapping map(yaml_, field->value, field->mark(), "freshness", "SLU-SOURCE-010",
                "e.g. freshness: {warn_after: 15m, error_after: 1h}");
    for (const Field& threshold : map.fields()) {
      if (threshold.key != "warn_after" && threshold.key != "error_after") {
        Fail(yaml_, threshold.key_node.Mark(), "SLU-SOURCE-002", "unknown key '" + threshold.key + "' in freshness",
             "known keys: error_after, warn_after");
      }
    }
    FreshnessPolicy policy;
    std::optional<int64_t> seconds[2];
    const char* keys[2] = {"warn_after", "error_after"};
    for (int i = 0; i < 2; ++i) {
      const Field* threshold = map.Value(keys[i]);
      if (threshold == nullptr) continue;
      std::string text;
      if (TypeOf(threshold->value) == YamlType::kString) text = Expand(*threshold);
      seconds[i] = FreshnessDurationSeconds(text);
      if (!seconds[i]) {
        Fail(yaml_, threshold->mark(), "SLU-SOURCE-010",
             std::string("freshness.") + keys[i] + " must be a duration like 15m, 2h or 1d",
             "write <integer><unit> with unit s, m, h or d");
      }
      (i == 0 ? policy.warn_after : policy.error_after) = text;
    }
    if (!seconds[0] && !seconds[1]) {
      Fail(yaml_, field->mark(), "SLU-SOURCE-010", "freshness must set warn_after or error_after",
           "e.g. freshness: {warn_after: 15m}");
    }
    if (seconds[0] && seconds[1] && *seconds[0] > *seconds[1]) {
      Fail(yaml_, map.Find("warn_after")->mark(), "SLU-SOURCE-010",
           "freshness.warn_after (" + *policy.warn_after + ") exceeds error_after (" + *policy.error_after + ")",
           "a source must warn no later than it errors");
    }
    return policy;
  }

  SeedCompute Seed(const Mapping& entry) {
    SeedCompute seed;
    seed.path = RequiredString(entry, "path", "a seed source needs `path`", "e.g. path: seeds/orders.csv");
    const Field& path = *entry.Find("path");
    if (std::filesystem::path(seed.path).is_absolute() || seed.path.find("..") != std::string::npos) {
      Fail(yaml_, path.mark(), "SLU-SOURCE-003", "seed path '" + seed.path + "' must stay inside the project",
           "give a path relative to the project root, e.g. seeds/orders.csv");
    }
    std::error_code error;  // e.g. a name too long for the file system: the file does not exist either
    if (!std::filesystem::is_regular_file(root_ / seed.path, error)) {
      Fail(yaml_, path.mark(), "SLU-SOURCE-003", "seed file '" + seed.path + "' does not exist",
           "paths are relative to the project root");
    }
    std::vector<YAML::Mark> column_marks;  // each column's key, in seed.columns order
    if (const Field* field = entry.Value("columns")) {
      if (!field->value.IsMap()) {
        Fail(yaml_, field->mark(), "SLU-SOURCE-003", "`columns` must map column names to types",
             "e.g. columns: {order_id: BIGINT, order_date: DATE}");
      }
      Mapping columns(yaml_, field->value, field->mark(), "`columns`", "SLU-SOURCE-003",
                      "map column names to types, e.g. columns: {order_id: BIGINT, order_date: DATE}");
      for (const Field& column : columns.fields()) {
        CheckName(column.key, column.key_node.Mark(), "column name");
        if (!column.has_value()) {
          Fail(yaml_, column.mark(), "SLU-SOURCE-003", "column " + column.key + " has no type",
               "e.g. " + column.key + ": VARCHAR");
        }
        std::string type = StringOf(column, "the type of column " + column.key);
        if (std::optional<sql::TypeNameProblem> problem = sql::CheckDuckDbTypeName(type)) {
          Fail(yaml_, MarkInside(column, type, problem->offset), "SLU-SOURCE-013",
               "the type of seed column " + column.key + " is not a DuckDB type: " + problem->message,
               "write a DuckDB type, e.g. BIGINT, VARCHAR, DATE, TIMESTAMP or DECIMAL(12,2)");
        }
        seed.columns.emplace_back(column.key, std::move(type));
        column_marks.push_back(column.key_node.Mark());
      }
    }
    std::optional<SeedCsv> csv;
    try {
      csv = ReadSeedCsv(seed.path, ReadFileInside(root_, seed.path));
    } catch (const Error& error) {
      // The CSV file's own error: reported with the other files' errors, while this file's entries go on.
      csv_errors_.insert(csv_errors_.end(), error.diagnostics().begin(), error.diagnostics().end());
      return seed;
    }
    for (size_t c = 0; c < seed.columns.size(); ++c) {
      const std::string& name = seed.columns[c].first;
      auto same_name = [&name](const std::string& header) {
        return sql::SameColumnName(sql::Dialect::kDuckDb, header, name);
      };
      if (std::none_of(csv->columns.begin(), csv->columns.end(), same_name)) {
        std::string header;
        for (const std::string& column : csv->columns) header += (header.empty() ? "" : ", ") + column;
        Fail(yaml_, column_marks[c], "SLU-SOURCE-012", "seed column " + name + " is not in the header of " + seed.path,
             "list only columns of the header (" + header + "); names are compared ignoring case");
      }
    }
    return seed;
  }

  // Where byte `offset` of a scalar's (templated) `value` is written: exact when the value's text up to that byte
  // is written as is right at the scalar's start (after its opening quote, if any); else the scalar's start.
  YAML::Mark MarkInside(const Field& field, const std::string& value, size_t offset) const {
    YAML::Mark mark = field.value.Mark();
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= yaml_.text.size()) return mark;
    std::string_view written = std::string_view(yaml_.text).substr(static_cast<size_t>(mark.pos));
    const size_t quote = written.starts_with('"') || written.starts_with('\'') ? 1 : 0;
    std::string_view before = std::string_view(value).substr(0, offset);
    if (before.find('\n') != std::string_view::npos || !written.substr(quote).starts_with(before)) return mark;
    mark.pos += static_cast<int>(quote + before.size());
    mark.column += static_cast<int>(quote + before.size());
    return mark;
  }

  // The `replay_boundary` mapping: its mode (one of `modes`) and its role columns.
  std::pair<std::string, std::map<std::string, std::string>> Boundary(const Mapping& entry, const std::string& kind,
                                                                      const std::vector<std::string>& modes,
                                                                      const std::string& example) {
    const Field* field = entry.Value("replay_boundary");
    if (field == nullptr) {
      const Field* empty = entry.Find("replay_boundary");
      Fail(yaml_, empty != nullptr ? empty->mark() : entry.mark(), "SLU-SOURCE-003",
           "a " + kind + " source needs `replay_boundary` with a `mode`", "e.g. " + example);
    }
    Mapping boundary(yaml_, field->value, field->mark(), "`replay_boundary`", "SLU-SOURCE-003", "e.g. " + example);
    for (const Field& key : boundary.fields()) {
      if (key.key != "mode" && key.key != "columns") {
        Fail(yaml_, key.key_node.Mark(), "SLU-SOURCE-002", "unknown key '" + key.key + "' in replay_boundary",
             "known keys: columns, mode");
      }
    }
    std::string mode = RequiredString(boundary, "mode", "replay_boundary needs a `mode`",
                                      "mode is one of: " + Enumerated(modes, "or"), "replay_boundary.");
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
      Fail(yaml_, boundary.Find("mode")->mark(), "SLU-SOURCE-006",
           "replay_boundary.mode must be " + Enumerated(modes, "or"),
           (kind == "kafka" ? "kafka sources" : "adopted tables") + std::string(" support these three modes"));
    }
    std::map<std::string, std::string> columns;
    if (const Field* mapped = boundary.Value("columns")) {
      if (kind == "kafka") {
        Fail(yaml_, boundary.Find("columns")->key_node.Mark(), "SLU-SOURCE-006",
             "replay_boundary.columns is only for stream_table sources",
             "a kafka source's raw__ table always has the canonical _replay_* columns; remove `columns`");
      }
      Mapping roles(yaml_, mapped->value, mapped->mark(), "replay_boundary.columns", "SLU-SOURCE-003",
                    "map _replay_* roles to physical columns, e.g. {_replay_timestamp: event_time}");
      for (const Field& role : roles.fields()) {
        if (!kReplayRoles.count(role.key)) {
          Fail(yaml_, role.key_node.Mark(), "SLU-SOURCE-002",
               "unknown key '" + role.key + "' in replay_boundary.columns", "known keys: " + Listed(kReplayRoles));
        }
        if (role.has_value()) columns[role.key] = StringOf(role, "replay_boundary.columns." + role.key);
      }
    }
    return {mode, columns};
  }

  ExternalTable StreamTable(const Mapping& entry, LoadedEntry& loaded) {
    ExternalTable table;
    table.table_name = RequiredString(entry, "table_name", "a stream_table source needs `table_name`",
                                      "name the existing table in the target database");
    if (!IsIdentifier(table.table_name)) {
      Fail(yaml_, entry.Find("table_name")->mark(), "SLU-SOURCE-003", "table_name must be a bare table name",
           "the table must be in the target database; write only its name");
    }
    std::tie(table.replay_mode, table.replay_columns) =
        Boundary(entry, "stream_table", {"offsets", "timestamp", "cursor"},
                 "replay_boundary: {mode: timestamp, columns: {_replay_timestamp: event_time}}");
    loaded.boundary_mark = entry.Find("replay_boundary")->mark();
    const YAML::Mark& at = *loaded.boundary_mark;
    auto has = [&](const char* role) { return table.replay_columns.count(role) > 0; };
    auto require = [&](const char* role) {
      if (!has(role)) {
        Fail(yaml_, at, "SLU-SOURCE-006", "mode " + table.replay_mode + " requires replay_boundary.columns." + role,
             "map it to a physical column");
      }
    };
    auto forbid = [&](const char* role) {
      if (has(role)) {
        Fail(yaml_, at, "SLU-SOURCE-006",
             "mode " + table.replay_mode + " does not allow replay_boundary.columns." + role, "remove it");
      }
    };
    if (table.replay_mode == "offsets") {
      require("_replay_partition"), require("_replay_offset"), require("_replay_timestamp");
      forbid("_replay_cursor"), forbid("_replay_landed_at");
    } else if (table.replay_mode == "timestamp") {
      require("_replay_timestamp");
      forbid("_replay_partition"), forbid("_replay_offset"), forbid("_replay_cursor"), forbid("_replay_landed_at");
    } else {
      require("_replay_cursor"), require("_replay_timestamp");
      forbid("_replay_partition"), forbid("_replay_offset"), forbid("_replay_landed_at");
    }
    return table;
  }

  KafkaSource Kafka(const Mapping& entry, LoadedEntry& loaded) {
    SourceDeclaration& source = loaded.source;
    KafkaSource kafka;
    kafka.topic =
        RequiredString(entry, "topic", "a kafka source needs `topic`", "name the topic to land, e.g. topic: orders.v1");
    if (std::optional<std::string> name = OptionalString(entry, "name")) {
      source.name = *name;
      loaded.name_mark = entry.Find("name")->mark();
      CheckName(source.name, loaded.name_mark, "source name");
    } else {
      std::optional<std::string> derived;
      loaded.name_mark = entry.Find("topic")->mark();
      if (options_.derive_name) derived = options_.derive_name(kafka.topic, At(yaml_, loaded.name_mark));
      if (!derived) {
        Fail(yaml_, entry.mark(), "SLU-SOURCE-009", "kafka source for topic '" + kafka.topic + "' has no `name`",
             "add name: <identifier>, or set defaults.sources.kafka.naming_macro to derive names from topics");
      }
      source.name = *derived;
      kafka.name_origin = "derived";
      if (!IsIdentifier(source.name)) {
        Fail(yaml_, loaded.name_mark, "SLU-SOURCE-003",
             "the naming macro derived '" + source.name + "' from topic '" + kafka.topic +
                 "', which is not an identifier",
             "set `name` on this source, or make the macro return [A-Za-z_][A-Za-z0-9_]*");
      }
    }
    std::tie(kafka.replay_mode, std::ignore) =
        Boundary(entry, "kafka", {"offsets", "timestamp", "landed_at"}, "replay_boundary: {mode: offsets}");
    if (const Field* field = entry.Value("settings")) {
      Mapping settings(yaml_, field->value, field->mark(), "`settings`", "SLU-SOURCE-003",
                       "map Kafka engine setting names to values, e.g. settings: {kafka_num_consumers: '2'}");
      for (const Field& setting : settings.fields()) {
        if (kTypedKafkaSettings.count(setting.key)) {
          Fail(yaml_, setting.key_node.Mark(), "SLU-SOURCE-008",
               "settings may not redefine " + setting.key + ", which the source's own fields set",
               "use broker_list, topic, consumer_group or format instead");
        }
        if (!IsIdentifier(setting.key)) {
          Fail(yaml_, setting.key_node.Mark(), "SLU-SOURCE-003",
               "setting name '" + setting.key + "' is not an identifier", "ClickHouse setting names are identifiers");
        }
        if (!setting.has_value()) {
          Fail(yaml_, setting.mark(), "SLU-SOURCE-003", "setting " + setting.key + " has no value", "give it a value");
        }
        kafka.settings.emplace_back(setting.key, StringOf(setting, "settings." + setting.key));
      }
    }
    if (std::optional<std::string> brokers = OptionalString(entry, "broker_list")) {
      kafka.broker_list = *brokers;
    } else if (options_.default_kafka_broker_list && !options_.default_kafka_broker_list->empty()) {
      kafka.broker_list = *options_.default_kafka_broker_list;
    } else {
      Fail(yaml_, entry.mark(), "SLU-SOURCE-009", "kafka source '" + source.name + "' has no broker list",
           "add broker_list: host:9092 to the source, or set defaults.kafka_broker_list in streambuild_project.toml");
    }
    kafka.ttl = OptionalString(entry, "ttl");
    if (!kafka.ttl) kafka.ttl = options_.default_managed_source_ttl;
    std::string group =
        OptionalString(entry, "consumer_group")
            .value_or(DefaultKafkaConsumerGroup(options_.project_name, options_.target_name, source.name));
    kafka.consumer_group =
        DatabaseScopedConsumerGroup(group, options_.database.empty() ? "default" : options_.database);
    if (std::optional<std::string> format = OptionalString(entry, "format")) {
      if (*format != kKafkaFormat) {
        Fail(yaml_, entry.Find("format")->mark(), "SLU-SOURCE-003",
             "format '" + *format + "' is not supported; Kafka sources land JSONAsString",
             "remove `format` or write format: JSONAsString");
      }
    }
    kafka.format = std::string(kKafkaFormat);
    return kafka;
  }

  PostgresSource Postgres(const Mapping& entry) {
    PostgresSource postgres;
    postgres.host = RequiredString(entry, "host", "a postgres source needs `host`", "e.g. host: db.internal");
    postgres.database =
        RequiredString(entry, "database", "a postgres source needs `database`", "the PostgreSQL database to read");
    postgres.table = RequiredString(entry, "table", "a postgres source needs `table`", "the PostgreSQL table to read");
    postgres.user =
        RequiredString(entry, "user", "a postgres source needs `user`", "the PostgreSQL user to connect as");
    postgres.refresh = RequiredString(entry, "refresh", "a postgres source needs `refresh`", "e.g. refresh: 5 MINUTE");
    if (!IsRefreshInterval(*postgres.refresh)) {
      Fail(yaml_, entry.Find("refresh")->mark(), "SLU-SOURCE-003",
           "refresh '" + *postgres.refresh + "' is not an interval",
           "write <integer> SECOND|MINUTE|HOUR|DAY, e.g. 5 MINUTE");
    }
    if (const Field* field = entry.Value("port")) {
      YamlType type = TypeOf(field->value);
      std::optional<int> port;
      if (type == YamlType::kInt) {
        port = YamlInt(field->value.Scalar());
      } else if (type == YamlType::kString) {
        port = Digits(Trimmed(Expand(*field)), 10);
      }
      if (!port) {
        Fail(yaml_, field->mark(), "SLU-SOURCE-003", "port must be a whole number, not '" + field->value.Scalar() + "'",
             "e.g. port: 5432");
      }
      postgres.port = *port;
    }
    postgres.password_env = OptionalString(entry, "password_env");
    if (const Field* field = entry.Value("append")) {
      YamlType type = TypeOf(field->value);
      std::optional<bool> append;
      if (type == YamlType::kBool || type == YamlType::kString) {
        std::string text = Trimmed(type == YamlType::kString ? Expand(*field) : field->value.Scalar());
        std::transform(text.begin(), text.end(), text.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (text == "true" || text == "yes" || text == "1" || text == "on") append = true;
        if (text == "false" || text == "no" || text == "0" || text == "off") append = false;
        if (type == YamlType::kString && (text == "on" || text == "off")) append.reset();
      }
      if (!append) {
        Fail(yaml_, field->mark(), "SLU-SOURCE-003", "append must be a boolean, not '" + field->value.Scalar() + "'",
             "write append: true or append: false");
      }
      postgres.append = *append;
    }
    return postgres;
  }

  static std::string Trimmed(const std::string& text) {
    size_t begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) return "";
    size_t end = text.find_last_not_of(" \t\r\n");
    return text.substr(begin, end - begin + 1);
  }

  const YamlFile& yaml_;
  const std::filesystem::path& root_;
  const SourceLoadOptions& options_;
  std::vector<Diagnostic>& csv_errors_;
};

// Where an adopted table's boundary was first declared, to require the same boundary from every adopter.
struct AdoptedBoundary {
  std::string source;
  SourceLocation at;
  std::string mode;
  std::map<std::string, std::string> columns;
};

// What the files loaded so far declared: the sources, and what later files are checked against.
struct LoadedSources {
  std::vector<SourceDeclaration> sources;
  std::map<std::string, SourceLocation> seen;      // name → where it is declared
  std::map<std::string, AdoptedBoundary> adopted;  // adopted table → its first adopter's boundary
  std::vector<Diagnostic> csv_errors;              // seed CSV files' own errors
};

// One sources/*.yml file's entries, added to `so_far`; throws on the file's first error.
void LoadSourceFile(const std::filesystem::path& root, const std::string& file, const SourceLoadOptions& options,
                    LoadedSources& so_far) {
  std::vector<SourceDeclaration>& sources = so_far.sources;
  std::map<std::string, SourceLocation>& seen = so_far.seen;
  std::map<std::string, AdoptedBoundary>& adopted = so_far.adopted;
  YamlFile yaml{file, ReadFileInside(root, file)};
  YAML::Node doc;
  try {
    doc = YAML::Load(yaml.text);
  } catch (const YAML::ParserException& e) {
    Fail(yaml, e.mark, "SLU-SOURCE-001", "malformed YAML: " + e.msg, "check indentation and quoting");
  }
  const std::string shape_hint = "start the file with `sources:` followed by `- kind: ...` entries";
  const std::string shape = file + " must be a mapping with a `sources:` list";
  if (!doc.IsMap()) Fail(yaml, doc.Mark(), "SLU-SOURCE-001", shape, shape_hint);
  Mapping top(yaml, doc, doc.Mark(), file, "SLU-SOURCE-001", shape_hint);
  for (const Field& field : top.fields()) {
    if (field.key != "sources") {
      Fail(yaml, field.key_node.Mark(), "SLU-SOURCE-002", "unknown key '" + field.key + "' in " + file,
           "known keys: sources");
    }
  }
  const Field* list = top.Find("sources");
  if (list == nullptr || !list->value.IsSequence()) {
    Fail(yaml, list != nullptr ? list->mark() : doc.Mark(), "SLU-SOURCE-001", shape, shape_hint);
  }
  EntryParser parser(yaml, root, options, so_far.csv_errors);
  for (const YAML::Node& node : list->value) {
    LoadedEntry loaded = parser.Parse(node);
    SourceDeclaration& source = loaded.source;
    if (auto [it, inserted] = seen.emplace(source.name, source.at); !inserted) {
      Fail(yaml, loaded.name_mark, "SLU-SOURCE-004",
           "source '" + source.name + "' is already declared at " + it->second.file + ":" +
               std::to_string(it->second.line),
           "source names are unique across sources/*.yml");
    }
    if (const auto* table = std::get_if<ExternalTable>(&source.compute)) {
      AdoptedBoundary boundary{source.name, source.at, table->replay_mode, table->replay_columns};
      auto [it, inserted] = adopted.emplace(table->table_name, boundary);
      const AdoptedBoundary& first = it->second;
      if (!inserted && (first.mode != boundary.mode || first.columns != boundary.columns)) {
        Fail(yaml, *loaded.boundary_mark, "SLU-SOURCE-006",
             "sources '" + first.source + "' and '" + source.name + "' adopt table " + table->table_name +
                 " with different replay boundaries",
             "sources adopting one table must declare identical replay_boundary (first at " + first.at.file + ":" +
                 std::to_string(first.at.line) + ")");
      }
    }
    sources.push_back(std::move(source));
  }
}

}  // namespace

std::optional<int64_t> FreshnessDurationSeconds(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  int64_t value = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value > (std::numeric_limits<int64_t>::max() / unit - (c - '0')) / 10) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value * unit;
}

std::string SourceDeclaration::kind() const {
  struct KindName {
    std::string operator()(const SeedCompute&) const { return "seed"; }
    std::string operator()(const ExternalTable&) const { return "stream_table"; }
    std::string operator()(const KafkaSource&) const { return "kafka"; }
    std::string operator()(const PostgresSource&) const { return "postgres"; }
  };
  return std::visit(KindName{}, compute);
}

std::vector<SourceDeclaration> LoadSources(const std::filesystem::path& root, const SourceLoadOptions& options) {
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(root / "sources")) {
    for (const auto& item : std::filesystem::directory_iterator(root / "sources", ec)) {
      std::string ext = item.path().extension().string();
      if (item.is_regular_file() && (ext == ".yml" || ext == ".yaml")) {
        files.push_back("sources/" + item.path().filename().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  LoadedSources loaded;
  std::vector<Diagnostic> errors;  // each YAML file's first
  for (const std::string& file : files) {
    try {
      LoadSourceFile(root, file, options, loaded);
    } catch (const Error& error) {
      errors.insert(errors.end(), error.diagnostics().begin(), error.diagnostics().end());
    }
  }
  errors.insert(errors.end(), loaded.csv_errors.begin(), loaded.csv_errors.end());
  if (!errors.empty()) {
    SortByLocation(errors);
    throw Error(std::move(errors));
  }
  std::vector<SourceDeclaration>& sources = loaded.sources;
  std::sort(sources.begin(), sources.end(),
            [](const SourceDeclaration& a, const SourceDeclaration& b) { return a.name < b.name; });
  return sources;
}

std::string DefaultKafkaConsumerGroup(std::string_view project, std::string_view target, std::string_view source) {
  return "streambuild_" + std::string(project) + "_" + std::string(target) + "_" + std::string(source);
}

std::string DatabaseScopedConsumerGroup(std::string_view group, std::string_view database) {
  std::string normalized(database);
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  return std::string(group) + "_" + normalized;
}

}  // namespace sluice
