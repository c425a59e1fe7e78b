#include "project/models/model_file.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/asset_key.hpp"
#include "core/utf8.hpp"
#include "project/header_grammar.hpp"
#include "project/relation_name.hpp"
#include "sql/dialect.hpp"
#include "sql/reference_scanner.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

const std::set<std::string>& TableKeys() {
  static const std::set<std::string> keys = {"kind",
                                             "description",
                                             "columns",
                                             "audits",
                                             "relation_name",
                                             "engine",
                                             "order_by",
                                             "partition_by",
                                             "ttl",
                                             "settings",
                                             "execution_settings",
                                             "replay_anchor",
                                             "replay_on_change",
                                             "bounded_replay_fallback",
                                             "partitions",
                                             "backfill_policy"};
  return keys;
}

const std::set<std::string>& ViewKeys() {
  static const std::set<std::string> keys = {"kind", "description", "columns", "audits", "relation_name"};
  return keys;
}

// Diagnostics for one file, with its text for caret snippets.
struct ModelFile {
  const std::string& file;
  const std::string& text;

  [[noreturn]] void Fail(size_t offset, std::string code, std::string message, std::string hint) const {
    throw Error(
        MakeDiagnostic(std::move(code), std::move(message), LocationAt(file, text, offset), std::move(hint), text));
  }
};

std::string ByteName(char c) {
  const char* digits = "0123456789ABCDEF";
  const auto byte = static_cast<unsigned char>(c);
  return std::string("byte 0x") + digits[byte >> 4] + digits[byte & 15];
}

const std::string* StringOf(const HeaderValue& value) { return std::get_if<std::string>(&value.value); }

std::string RequireString(const ModelFile& model, const HeaderEntry& entry, bool allow_empty = false) {
  const std::string* s = StringOf(entry.value);
  if (s != nullptr && s->empty() && !allow_empty) {
    model.Fail(entry.value.offset, "SLU-MODEL-004", "`" + entry.key + "` must not be empty",
               "e.g. " + entry.key + " \"...\"");
  }
  if (s == nullptr) {
    model.Fail(entry.value.offset, "SLU-MODEL-004",
               "`" + entry.key + "` must be a non-empty string, not " + DescribeHeaderValue(entry.value),
               "e.g. " + entry.key + " \"...\"");
  }
  return *s;
}

std::string ScalarText(const HeaderValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>)
          return v;
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, HeaderNull>)
          return "null";
        else
          return "";
      },
      value.value);
}

PartitionSpec ParsePartitions(const ModelFile& model, const HeaderEntry& entry) {
  const std::string hint = R"(write partitions (daily (column "event_date", start_date "2026-01-01")))";
  const auto* outer = std::get_if<HeaderMap>(&entry.value.value);
  if (outer == nullptr || outer->size() != 1 || (*outer)[0].key != "daily") {
    model.Fail(entry.value.offset, "SLU-MODEL-005", "`partitions` must be `daily (…)`", hint);
  }
  const HeaderEntry& daily = (*outer)[0];
  const auto* fields = std::get_if<HeaderMap>(&daily.value.value);
  if (fields == nullptr) model.Fail(daily.value.offset, "SLU-MODEL-005", "`daily` needs its settings in ( )", hint);
  std::optional<std::string> column;
  std::optional<Date> start;
  for (const HeaderEntry& field : *fields) {
    if (field.key == "column") {
      column = RequireString(model, field);
      if (!IsIdentifier(*column)) {
        model.Fail(field.value.offset, "SLU-MODEL-005", "partition column '" + *column + "' is not an identifier",
                   "name a DATE column of the model's output");
      }
    } else if (field.key == "start_date") {
      std::string text = RequireString(model, field);
      start = Date::Parse(text);
      if (!start)
        model.Fail(field.value.offset, "SLU-MODEL-005", "start_date '" + text + "' is not a date", "write YYYY-MM-DD");
    } else {
      model.Fail(field.key_offset, "SLU-MODEL-005", "unknown key '" + field.key + "' in daily partitions",
                 "daily partitions take `column` and `start_date`");
    }
  }
  if (!column || !start) {
    model.Fail(daily.value.offset, "SLU-MODEL-005", "daily partitions need both `column` and `start_date`", hint);
  }
  return PartitionSpec{*column, DailyPartitions(*start)};
}

// `backfill_policy single_run` or `backfill_policy (multi_run N)`, N ≥ 1 (Dagster's BackfillPolicy).
BackfillPolicy ParseBackfillPolicy(const ModelFile& model, const HeaderEntry& entry) {
  const std::string hint = "write backfill_policy (multi_run 10) or backfill_policy single_run";
  if (const auto* word = std::get_if<std::string>(&entry.value.value); word && *word == "single_run") {
    return BackfillPolicy::SingleRun();
  }
  const auto* map = std::get_if<HeaderMap>(&entry.value.value);
  if (map == nullptr || map->size() != 1 || (*map)[0].key != "multi_run") {
    model.Fail(entry.value.offset, "SLU-MODEL-014", "`backfill_policy` must be `single_run` or `(multi_run N)`", hint);
  }
  const HeaderEntry& multi = (*map)[0];
  const auto* count = std::get_if<int64_t>(&multi.value.value);
  if (count == nullptr || *count < 1 || *count > 100000) {
    model.Fail(multi.value.offset, "SLU-MODEL-014", "multi_run takes a whole number of partitions per run, 1 to 100000",
               hint);
  }
  return BackfillPolicy::MultiRun(static_cast<int>(*count));
}

void ApplyHeader(const ModelFile& model, const HeaderMap& entries, ParsedModel& parsed) {
  if (const HeaderEntry* kind = FindEntry(entries, "kind")) {
    std::string value = RequireString(model, *kind);
    if (value == "view")
      parsed.kind = ModelKind::kView;
    else if (value != "table")
      model.Fail(kind->value.offset, "SLU-MODEL-004", "kind must be table or view, not '" + value + "'",
                 "write kind table or kind view");
  }
  const std::set<std::string>& allowed = parsed.kind == ModelKind::kView ? ViewKeys() : TableKeys();
  for (const HeaderEntry& entry : entries) {
    if (allowed.count(entry.key)) continue;
    if (parsed.kind == ModelKind::kView && TableKeys().count(entry.key)) {
      model.Fail(entry.key_offset, "SLU-MODEL-003", "`" + entry.key + "` is not allowed on a view",
                 "views take only kind, description, columns, audits and relation_name");
    }
    std::string known;
    for (const std::string& k : allowed) known += (known.empty() ? "" : ", ") + k;
    model.Fail(entry.key_offset, "SLU-MODEL-001", "unknown MODEL key '" + entry.key + "'", "known keys: " + known);
  }
  for (const HeaderEntry& entry : entries) {
    const std::string& key = entry.key;
    if (key == "description") {
      parsed.description = RequireString(model, entry);
    } else if (key == "relation_name") {
      std::string name = RequireString(model, entry);
      if (!IsAllowedRelationName(name)) {
        model.Fail(entry.value.offset, "SLU-MODEL-004", "relation_name '" + name + "' is not allowed",
                   std::string(kRelationNameRule));
      }
      parsed.relation_name = name;
    } else if (key == "partitions") {
      parsed.partitions = ParsePartitions(model, entry);
    } else if (key == "backfill_policy") {
      parsed.backfill_policy = ParseBackfillPolicy(model, entry);
    } else if (key == "engine") {
      parsed.storage.engine = RequireString(model, entry);
    } else if (key == "order_by") {
      const auto* list = std::get_if<HeaderList>(&entry.value.value);
      if (list == nullptr || list->empty()) {
        model.Fail(entry.value.offset, "SLU-MODEL-004", "order_by must be a non-empty list of strings",
                   R"(e.g. order_by ["id"])");
      }
      parsed.storage.order_by.clear();
      parsed.storage.order_by.reserve(list->size());
      for (const HeaderValue& item : *list) {
        const std::string* s = StringOf(item);
        if (s == nullptr || s->empty())
          model.Fail(item.offset, "SLU-MODEL-004", "order_by items must be strings", R"(e.g. order_by ["id"])");
        parsed.storage.order_by.push_back(*s);
      }
    } else if (key == "partition_by") {
      parsed.storage.partition_by = RequireString(model, entry);
    } else if (key == "ttl") {
      parsed.storage.ttl = RequireString(model, entry);
    } else if (key == "settings") {
      const auto* map = std::get_if<HeaderMap>(&entry.value.value);
      if (map == nullptr)
        model.Fail(entry.value.offset, "SLU-MODEL-004", "settings must be a map",
                   "e.g. settings (index_granularity 8192)");
      for (const HeaderEntry& setting : *map)
        parsed.storage.settings.emplace_back(setting.key, ScalarText(setting.value));
    } else if (key == "columns") {
      const auto* map = std::get_if<HeaderMap>(&entry.value.value);
      if (map == nullptr)
        model.Fail(entry.value.offset, "SLU-MODEL-004", "columns must be a map of column → (description …)",
                   R"(e.g. columns (id (description "the key")))");
      for (const HeaderEntry& column : *map) {
        const auto* fields = std::get_if<HeaderMap>(&column.value.value);
        if (fields == nullptr)
          model.Fail(column.value.offset, "SLU-MODEL-004",
                     "column '" + column.key + "' must map to (description …, audits […])", "");
        for (const HeaderEntry& field : *fields) {
          if (field.key != "description" && field.key != "audits") {
            model.Fail(field.key_offset, "SLU-MODEL-001", "unknown column key '" + field.key + "'",
                       "columns take description and audits");
          }
        }
      }
    } else if (key == "replay_anchor") {
      std::string value = RequireString(model, entry);
      if (value != "auto" && value != "never")
        model.Fail(entry.value.offset, "SLU-MODEL-004", "replay_anchor must be auto or never", "");
    } else if (key == "bounded_replay_fallback") {
      std::string value = RequireString(model, entry);
      if (value != "full" && value != "bounded_without_history") {
        model.Fail(entry.value.offset, "SLU-MODEL-004",
                   "bounded_replay_fallback must be full or bounded_without_history", "");
      }
    }
    // audits, execution_settings, replay_on_change: kept for the compiler and deployment layers.
  }
}

void ClassifyReferences(const ModelFile& model, ParsedModel& parsed) {
  // Distinct names per role, in first-occurrence order.
  std::vector<const ModelReference*> sources, untyped;
  std::map<std::string, std::pair<EdgeType, const ModelReference*>> typed;
  for (ModelReference& ref : parsed.references) {
    const sql::ReferenceCall& call = ref.call;
    size_t absolute = parsed.body_offset + call.begin;
    if (parsed.kind == ModelKind::kView) {
      if (call.ref_type)
        model.Fail(absolute, "SLU-MODEL-013", "views cannot use ref_type", "write __ref(\"" + call.name + "\")");
      ref.edge = EdgeType::kReference;
      continue;
    }
    if (call.kind == sql::ReferenceKind::kSource) {
      ref.edge = EdgeType::kDrivingInput;
      sources.push_back(&ref);
    } else if (!call.ref_type) {
      ref.edge = EdgeType::kDrivingInput;
      untyped.push_back(&ref);
    } else {
      ref.edge = *call.ref_type == sql::RefType::kMutable ? EdgeType::kMutableReference : EdgeType::kReference;
      auto [it, inserted] = typed.emplace(call.name, std::make_pair(ref.edge, &ref));
      if (!inserted && it->second.first != ref.edge) {
        model.Fail(absolute, "SLU-MODEL-012", "'" + call.name + "' is referenced with conflicting ref_types",
                   "use one ref_type for each upstream");
      }
    }
  }
  if (parsed.kind == ModelKind::kView) return;
  auto distinct = [](const std::vector<const ModelReference*>& refs) {
    std::set<std::string> names;
    for (const ModelReference* ref : refs) names.insert(ref->call.name);
    return names;
  };
  std::set<std::string> source_names = distinct(sources), untyped_names = distinct(untyped);
  if (!sources.empty() && !untyped.empty()) {
    model.Fail(parsed.body_offset + untyped.front()->call.begin, "SLU-MODEL-011",
               "a model that reads __source(...) cannot also have an untyped __ref(...)",
               "give side references a type: __ref(\"x\", ref_type='reference')");
  }
  const auto& driving = sources.empty() ? untyped : sources;
  const auto& driving_names = sources.empty() ? untyped_names : source_names;
  if (driving_names.size() > 1) {
    const ModelReference* second = *std::find_if(driving.begin(), driving.end(), [&](const ModelReference* ref) {
      return ref->call.name != driving.front()->call.name;
    });
    model.Fail(parsed.body_offset + second->call.begin, "SLU-MODEL-011",
               "model has several driving inputs: " + *driving_names.begin() + ", " + *std::next(driving_names.begin()),
               "a model has one driving input; mark the others __ref(\"x\", ref_type='reference')");
  }
  if (driving_names.empty()) {
    size_t at =
        parsed.references.empty() ? parsed.body_offset : parsed.body_offset + parsed.references.front().call.begin;
    model.Fail(at, "SLU-MODEL-010", "table model '" + parsed.name + "' has no driving input",
               "read its main input with __source(\"name\") or __ref(\"model\")");
  }
  if (typed.count(*driving_names.begin())) {
    model.Fail(parsed.body_offset + typed.at(*driving_names.begin()).second->call.begin, "SLU-MODEL-012",
               "'" + *driving_names.begin() + "' is the driving input and cannot also carry a ref_type",
               "reference the driving input without ref_type");
  }
}

// The name and the MODEL header of a model file, checked; body_offset set, the body not yet read.
ParsedModel ParseNameAndHeader(const ModelFile& model) {
  if (const size_t bad = FindInvalidUtf8(model.text); bad != std::string::npos) {
    model.Fail(bad, "SLU-MODEL-006",
               "the model file is not UTF-8 text: " + ByteName(model.text[bad]) + " starts no UTF-8 character",
               "save the file as UTF-8");
  }
  ParsedModel parsed;
  parsed.name = FileStem(model.file);
  parsed.file = model.file;
  if (!IsIdentifier(parsed.name)) {
    model.Fail(0, "SLU-MODEL-004", "model name '" + parsed.name + "' (the file name) is not an identifier",
               "rename the file to [A-Za-z_][A-Za-z0-9_]*.sql");
  }
  HeaderBlock header = ParseHeaderBlock(model.text, 0, "MODEL", model.file);
  ApplyHeader(model, header.entries, parsed);
  parsed.body_offset = header.end;
  parsed.header = std::move(header.entries);
  return parsed;
}

}  // namespace

std::string_view FileStem(std::string_view file) {
  std::string_view name = file.substr(file.rfind('/') + 1);  // npos + 1 == 0
  if (name == "." || name == "..") return name;
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

ParsedModel ParseModelFile(const std::string& relative_file, const std::string& text, sql::Dialect dialect,
                           const BodyExpander& expand) {
  ModelFile model{relative_file, text};
  ParsedModel parsed = ParseNameAndHeader(model);
  const size_t body_offset = parsed.body_offset;
  std::string_view authored_body = std::string_view(text).substr(body_offset);
  if (expand && authored_body.find('@') != std::string_view::npos) {  // a macro call starts with '@'
    parsed.body = expand(body_offset, text.size());
    if (parsed.body != authored_body) parsed.expanded_text = text.substr(0, body_offset) + parsed.body;
  } else {
    parsed.body = authored_body;
  }
  // One tokenization of the body, with offsets and locations absolute in the (expanded) file; it serves the
  // emptiness check, the reference scan and (through significant_tokens) the caller's body contract.
  const std::string& full_text = parsed.expanded_text.empty() ? text : parsed.expanded_text;
  std::vector<size_t> reference_words;  // the tokens the reference scan reads
  parsed.significant_tokens = sql::TokenizeSignificant(full_text, body_offset, dialect, relative_file, reference_words);
  if (parsed.significant_tokens.empty()) {
    model.Fail(body_offset, "SLU-MODEL-002", "model '" + parsed.name + "' has no SQL after its MODEL header",
               "write one SELECT after `MODEL (…);`");
  }
  // The statement: from the body's first byte that is not whitespace, without its trailing `;`.
  size_t statement_begin = body_offset;
  while (statement_begin < full_text.size() && sql::HasByteClass(full_text[statement_begin], sql::kSpaceByte)) {
    ++statement_begin;
  }
  parsed.body = sql::StripTrailingSemicolons(full_text, statement_begin, parsed.significant_tokens);
  parsed.body_offset = statement_begin;
  // The calls come in text order, so their lines are counted in one pass over the text.
  LocationCounter locations(relative_file, full_text);
  for (sql::ReferenceCall call :
       sql::FindReferences(full_text, parsed.significant_tokens, reference_words, dialect, relative_file)) {
    SourceLocation at = locations.At(call.begin);
    call.begin -= statement_begin;
    call.end -= statement_begin;
    parsed.references.push_back(ModelReference{call, EdgeType::kReference, at});
  }
  if (parsed.body.find("@partition_") != std::string::npos) {
    LocationCounter bound_locations(relative_file, full_text);
    for (const sql::MacroCall& call : sql::FindMacroCalls(parsed.body, dialect, relative_file)) {
      const bool start = call.name == "partition_start";
      if (!start && call.name != "partition_end") continue;  // the macro engine expanded or rejected every other
      parsed.partition_bounds.push_back(PartitionBoundCall{call.begin, call.end,
                                                           start ? PartitionBound::kStart : PartitionBound::kEnd,
                                                           bound_locations.At(statement_begin + call.begin)});
    }
  }
  if (!parsed.partitions && !parsed.partition_bounds.empty()) {
    const PartitionBoundCall& call = parsed.partition_bounds.front();
    const char* name = call.bound == PartitionBound::kStart ? "@partition_start()" : "@partition_end()";
    throw Error(MakeDiagnostic(
        "SLU-MODEL-009", std::string(name) + " is used by '" + parsed.name + "', which is not partitioned", call.at,
        parsed.kind == ModelKind::kView
            ? "a view has no partitions: filter on its inputs' columns instead"
            : R"(declare partitions (daily (column "…", start_date "…")) in the MODEL header)",
        full_text));
  }
  ClassifyReferences(model, parsed);
  return parsed;
}

void CheckPartitionColumn(const ParsedModel& parsed, const std::string& text, const ModelContract& contract,
                          sql::Dialect dialect) {
  if (!parsed.partitions) return;
  const std::string& column = parsed.partitions->column;
  const std::string& full_text = parsed.expanded_text.empty() ? text : parsed.expanded_text;
  auto output = std::find_if(contract.columns.begin(), contract.columns.end(),
                             [&](const OutputColumn& c) { return sql::SameColumnName(dialect, c.name, column); });
  if (output == contract.columns.end()) {
    // Where the header names the column: partitions (daily (column "<here>", …)).
    size_t offset = 0;
    if (const HeaderEntry* partitions = FindEntry(parsed.header, "partitions")) {
      offset = partitions->value.offset;
      if (const auto* outer = std::get_if<HeaderMap>(&partitions->value.value); outer && !outer->empty()) {
        if (const auto* fields = std::get_if<HeaderMap>(&(*outer)[0].value.value)) {
          if (const HeaderEntry* entry = FindEntry(*fields, "column")) offset = entry->value.offset;
        }
      }
    }
    std::string outputs;
    for (const OutputColumn& c : contract.columns) outputs += (outputs.empty() ? "" : ", ") + c.name;
    throw Error(MakeDiagnostic(
        "SLU-MODEL-007", "partition column '" + column + "' is not an output column of '" + parsed.name + "'",
        LocationAt(parsed.file, full_text, offset),
        "name one of the model's output columns (" + outputs + "), or select CAST(… AS DATE) AS " + column, full_text));
  }
  std::string_view type = output->type_text;
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t' || type.front() == '\n')) type.remove_prefix(1);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t' || type.back() == '\n')) type.remove_suffix(1);
  auto is_date = [](std::string_view t) {
    return t.size() == 4 && (t[0] | 0x20) == 'd' && (t[1] | 0x20) == 'a' && (t[2] | 0x20) == 't' &&
           (t[3] | 0x20) == 'e';
  };
  if (!is_date(type)) {
    throw Error(MakeDiagnostic("SLU-MODEL-008",
                               "partition column '" + output->name + "' is cast to " + std::string(type) + ", not DATE",
                               LocationAt(parsed.file, full_text, output->offset),
                               "partitions are days: select CAST(… AS DATE) AS " + output->name, full_text));
  }
}

void ApplyStorageDefaults(ParsedModel& parsed, const ModelContract& contract, sql::Dialect dialect) {
  // Only ClickHouse builds tables from them; elsewhere they are kept as written (StreamBuild's manifest).
  if (parsed.kind != ModelKind::kTable || dialect != sql::Dialect::kClickHouse) return;
  // Storage keys are ClickHouse expressions: a column is named as ClickHouse reads it.
  const std::string day = !parsed.partitions                          ? std::string()
                          : IsIdentifier(parsed.partitions->column) ? parsed.partitions->column
                          : sql::QuoteIdentifier(sql::Dialect::kClickHouse, parsed.partitions->column);
  if (parsed.partitions && !FindEntry(parsed.header, "partition_by")) parsed.storage.partition_by = day;
  if (FindEntry(parsed.header, "order_by")) return;
  const bool timestamped = std::any_of(contract.columns.begin(), contract.columns.end(), [&](const OutputColumn& c) {
    return sql::SameColumnName(dialect, c.name, "_replay_timestamp");
  });
  if (timestamped || EngineMergesRowsByKey(parsed.storage.engine)) return;
  parsed.storage.order_by = {parsed.partitions ? day : std::string("tuple()")};
}

ModelContractInput ContractInputOf(ParsedModel& parsed, const std::string& text, sql::Dialect dialect) {
  ModelContractInput input;
  input.file_text = parsed.expanded_text.empty() ? text : parsed.expanded_text;
  input.significant_tokens = &parsed.significant_tokens;
  input.body_offset = parsed.body_offset;
  input.file = parsed.file;
  input.dialect = dialect;
  input.kind = parsed.kind;
  input.engine = StorageKeyText{parsed.storage.engine, 0};
  auto text_of = [&](const char* key) -> std::optional<StorageKeyText> {
    const HeaderEntry* entry = FindEntry(parsed.header, key);
    const std::string* value = entry ? std::get_if<std::string>(&entry->value.value) : nullptr;
    if (value == nullptr) return std::nullopt;
    return StorageKeyText{*value, entry->value.offset};
  };
  if (auto engine = text_of("engine")) input.engine = *engine;
  if (const HeaderEntry* order_by = FindEntry(parsed.header, "order_by")) {
    if (const auto* items = std::get_if<HeaderList>(&order_by->value.value)) {
      input.order_by.reserve(items->size());
      for (const HeaderValue& item : *items) {
        if (const auto* key = std::get_if<std::string>(&item.value)) input.order_by.push_back({*key, item.offset});
      }
    }
  }
  input.partition_by = text_of("partition_by");
  input.ttl = text_of("ttl");
  const HeaderEntry* anchor = FindEntry(parsed.header, "replay_anchor");
  const std::string* anchor_text = anchor ? std::get_if<std::string>(&anchor->value.value) : nullptr;
  input.replay_anchor = anchor_text && *anchor_text == "never" ? ReplayAnchor::kNever : ReplayAnchor::kAuto;
  input.has_mutable_refs =
      std::any_of(parsed.references.begin(), parsed.references.end(),
                  [](const ModelReference& ref) { return ref.edge == EdgeType::kMutableReference; });
  return input;
}

}  // namespace sluice
