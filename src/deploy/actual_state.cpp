#include "deploy/actual_state.hpp"

#include <algorithm>
#include <cctype>

#include "core/sha256.hpp"
#include "core/text.hpp"
#include "deploy/desired_objects.hpp"
#include "engine/run_sql.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"
#include "warehouse/clickhouse/clickhouse_capabilities.hpp"

namespace sluice {

namespace {

// The type inside Nullable(…) / LowCardinality(…), lower-cased.
std::string BaseType(std::string type) {
  type = AsciiLower(type);
  for (const std::string wrapper : {"nullable(", "lowcardinality("}) {
    while (type.rfind(wrapper, 0) == 0 && type.back() == ')') type = type.substr(wrapper.size(), type.size() - wrapper.size() - 1);
  }
  return type;
}

bool IsIntegerType(const std::string& type) {
  const std::string base = BaseType(type);
  for (const char* name : {"int8", "int16", "int32", "int64", "int128", "int256", "uint8", "uint16", "uint32", "uint64",
                           "tinyint", "smallint", "integer", "int", "bigint", "hugeint", "utinyint", "usmallint",
                           "uinteger", "ubigint", "uhugeint"}) {
    if (base == name) return true;
  }
  return false;
}

bool IsTimeType(const std::string& type) {
  const std::string base = BaseType(type);
  return base.rfind("datetime", 0) == 0 || base.rfind("timestamp", 0) == 0;
}

// The engine text of a CREATE statement: what follows "ENGINE = ", whitespace collapsed.
std::string Collapsed(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string EngineOf(const std::string& create) {
  size_t at = create.find("ENGINE = ");
  return at == std::string::npos ? "" : Collapsed(create.substr(at + 9));
}

// `key = 'value'` pairs of a Kafka engine's SETTINGS, in order.
std::vector<std::pair<std::string, std::string>> KafkaSettings(const std::string& engine) {
  std::vector<std::pair<std::string, std::string>> settings;
  size_t at = engine.find("SETTINGS ");
  if (at == std::string::npos) return settings;
  std::string rest = engine.substr(at + 9);
  size_t i = 0;
  while (i < rest.size()) {
    size_t eq = rest.find(" = ", i);
    if (eq == std::string::npos) break;
    std::string key = Collapsed(rest.substr(i, eq - i));
    size_t value_start = eq + 3;
    size_t value_end = value_start;
    if (value_start < rest.size() && rest[value_start] == '\'') {
      value_end = value_start + 1;
      while (value_end < rest.size() && rest[value_end] != '\'') value_end += rest[value_end] == '\\' ? 2 : 1;
      ++value_end;
    } else {
      value_end = rest.find(',', value_start);
      if (value_end == std::string::npos) value_end = rest.size();
    }
    settings.emplace_back(key, rest.substr(value_start, value_end - value_start));
    i = rest.find(',', value_end);
    if (i == std::string::npos) break;
    i += 1;
    while (i < rest.size() && rest[i] == ' ') ++i;
  }
  return settings;
}

std::string TtlOf(const std::string& engine) {
  size_t at = engine.find(" TTL ");
  if (at == std::string::npos) return "";
  std::string ttl = engine.substr(at + 5);
  size_t end = ttl.find(" SETTINGS ");
  return end == std::string::npos ? ttl : ttl.substr(0, end);
}

class StateReader {
 public:
  // `warehouse` may be null: nothing is built yet.
  StateReader(const Definitions& definitions, const DirectPlan& plan, Warehouse* warehouse)
      : definitions_(definitions), plan_(plan), warehouse_(warehouse) {}

  ActualState Read() {
    std::map<std::string, Fingerprint> last;
    if (warehouse_ != nullptr) {
      state_.server_version = warehouse_->capabilities().server_version;
      for (const TableInfo& info : warehouse_->ListRelations()) relations_[RelationKey(info.relation)] = info;
      CheckUpstreams();
      if (plan_.adapter == "clickhouse") {
        CompareManagedSources();
        for (const AssetKey& key : plan_.scope) {
          CheckServerFeatures(*definitions_.Find(key));
          CheckMaterializable(*definitions_.Find(key));
        }
      }
      last = ReadFingerprints(*warehouse_);
    }
    for (const AssetKey& key : plan_.scope) {
      const Asset& model = *definitions_.Find(key);
      ModelState model_state;
      model_state.model = key;
      model_state.exists = relations_.count(RelationKey({key.name_space(), model.relation_name})) > 0;
      const std::string sql = FingerprintSql(definitions_, model);
      model_state.sha256 = Sha256Hex(sql);
      auto previous = last.find(key.ToString());
      if (previous != last.end()) {
        model_state.change = previous->second.sha256 == model_state.sha256 ? ModelChange::kUnchanged : ModelChange::kChanged;
        if (model_state.change == ModelChange::kChanged) {
          model_state.diff = UnifiedDiff(previous->second.sql, sql, key.ToString() + " (built " + previous->second.applied_at + ")",
                                         key.ToString() + " (project)");
        }
      }
      state_.models.push_back(std::move(model_state));
    }
    return std::move(state_);
  }

 private:
  bool InScope(const AssetKey& key) const {
    return std::find(plan_.scope.begin(), plan_.scope.end(), key) != plan_.scope.end();
  }

  const TableInfo* Find(const std::string& name_space, const std::string& name) const {
    auto it = relations_.find(RelationKey({name_space, name}));
    return it == relations_.end() ? nullptr : &it->second;
  }

  void CheckUpstreams() {
    std::set<AssetKey> checked;
    for (const AssetKey& key : plan_.scope) {
      const Asset& model = *definitions_.Find(key);
      for (const AssetDependency& dep : model.deps) {
        if (InScope(dep.upstream) || !checked.insert(dep.upstream).second) continue;
        const Asset& upstream = *definitions_.Find(dep.upstream);
        if (const auto* table = std::get_if<ExternalTable>(&upstream.compute)) {
          CheckAdopted(upstream, *table);
        } else if (!upstream.is_source() && !Find(upstream.key.name_space(), upstream.relation_name)) {
          throw Error(Diagnostic{"SLU-DEPLOY-003",
                                 "model '" + model.name() + "' reads '" + upstream.name() + "' (" +
                                     upstream.key.name_space() + "." + upstream.relation_name +
                                     "), which is outside the selection and not in the warehouse",
                                 model.defined_at,
                                 "add its pipeline to the selection: --select " + upstream.pipeline, {}});
        }
      }
    }
  }

  // Blocks a model that uses what this server lacks, located at the first use in its file.
  void CheckServerFeatures(const Asset& model) {
    const auto& compute = std::get<SqlCompute>(model.compute);
    const Capabilities& capabilities = warehouse_->capabilities();
    std::optional<std::pair<ServerFeature, size_t>> lacking;  // the feature and its offset in the body
    auto lack = [&](ServerFeature feature, size_t offset) {
      if (!HasFeature(capabilities, feature) && (!lacking || offset < lacking->second)) lacking = {{feature, offset}};
    };
    std::vector<sql::Token> tokens = sql::TokenizeSignificant(compute.body, sql::Dialect::kClickHouse);
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].kind == sql::TokenKind::kOperator && tokens[i].text == "::") lack(ServerFeature::kDoubleColonCast, tokens[i].begin);
      if (tokens[i].kind == sql::TokenKind::kWord && AsciiLower(std::string(tokens[i].text)) == "over" && i + 1 < tokens.size() &&
          tokens[i + 1].text == "(") {
        lack(ServerFeature::kWindowFunctions, tokens[i].begin);
      }
    }
    for (const ModelColumn& column : compute.columns) {
      if (AsciiLower(std::string(column.type)).find("datetime64") == std::string::npos) continue;
      size_t at = compute.body.find(std::string(column.type));
      lack(ServerFeature::kDateTime64, at == std::string::npos ? 0 : at);
    }
    std::optional<ServerFeature> header_feature;
    if (compute.storage.ttl && !capabilities.ttl) header_feature = ServerFeature::kTtl;
    if (!lacking && !header_feature) return;
    const std::string& text = ModelFileText(model);
    SourceLocation where = model.defined_at;
    if (lacking && !text.empty() && compute.body_offset <= text.size()) {
      // The file's header as written, its body as expanded (macros): the body's offsets are the expanded body's.
      const std::string expanded = text.substr(0, compute.body_offset) + compute.body;
      where = LocationAt(model.defined_at.file, expanded, compute.body_offset + lacking->second);
    } else if (header_feature && !text.empty()) {
      size_t at = AsciiLower(text).find("ttl");
      if (at != std::string::npos) where = LocationAt(model.defined_at.file, text, at);
    }
    try {
      RequireCapability(capabilities, lacking ? lacking->first : *header_feature, where, "model " + model.key.ToString());
    } catch (const Error& error) {
      state_.blockers.push_back(error.diagnostics().front());
    }
  }

  // Blocks a model ClickHouse cannot build as a table filled by materialized views: one that calls a run window's
  // bounds (SLU-DEPLOY-007, at the call: a view runs on every insert, with no window), and one whose engine merges
  // rows by a sorting key the header does not write (SLU-DEPLOY-008, at `engine`: the implicit `_replay_timestamp` is
  // not an output, and no other key can be chosen for the author).
  void CheckMaterializable(const Asset& model) {
    const auto& compute = std::get<SqlCompute>(model.compute);
    const std::string& text = ModelFileText(model);
    if (!compute.partition_bounds.empty()) {
      const PartitionBoundCall& call = compute.partition_bounds.front();
      const char* name = call.bound == PartitionBound::kStart ? "@partition_start()" : "@partition_end()";
      state_.blockers.push_back(MakeDiagnostic(
          "SLU-DEPLOY-007",
          "model " + model.key.ToString() + " calls " + name +
              ", which a ClickHouse build cannot render: its table is filled by materialized views, which run on every "
              "insert, with no run window",
          call.at,
          "drop the call: `build` fills the table from the whole history, and `sluice run --partition D` keeps only "
          "day D of the model's output whether or not the model filters by it",
          text));
    }
    const bool timestamped = std::any_of(compute.columns.begin(), compute.columns.end(),
                                         [](const ModelColumn& column) { return column.name == "_replay_timestamp"; });
    if (compute.kind == ModelKind::kTable && EngineMergesRowsByKey(compute.storage.engine) && !timestamped &&
        compute.storage.order_by == std::vector<std::string>{"_replay_timestamp"}) {
      SourceLocation where = model.defined_at;
      const size_t header_end = std::min(compute.body_offset, text.size());
      for (size_t at = text.find("engine"); at != std::string::npos && at < header_end; at = text.find("engine", at + 1)) {
        const bool word_start = at == 0 || std::isspace(static_cast<unsigned char>(text[at - 1])) ||
                                text[at - 1] == '(' || text[at - 1] == ',';
        if (word_start && at + 6 < text.size() && std::isspace(static_cast<unsigned char>(text[at + 6]))) {
          where = LocationAt(model.defined_at.file, text, at);
          break;
        }
      }
      state_.blockers.push_back(MakeDiagnostic(
          "SLU-DEPLOY-008",
          "model " + model.key.ToString() + " has the engine " + compute.storage.engine +
              ", which merges rows of equal sorting keys, but no order_by: the implicit key _replay_timestamp is not "
              "one of its output columns",
          where, "write the key its rows merge by, e.g. order_by [\"" + std::string(compute.columns[0].name) + "\"]", text));
    }
  }

  void CheckAdopted(const Asset& source, const ExternalTable& table) {
    const TableInfo* info = Find(source.key.name_space(), table.table_name);
    if (info == nullptr) {
      throw Error(Diagnostic{"SLU-SOURCE-020",
                             "the adopted table '" + source.key.name_space() + "." + table.table_name + "' of source '" +
                                 source.name() + "' does not exist",
                             source.defined_at, "create it, or point table_name at an existing table", {}});
    }
    for (const auto& [role, physical] : table.replay_columns) {
      auto column = std::find_if(info->columns.begin(), info->columns.end(),
                                 [&](const ColumnInfo& c) { return c.name == physical; });
      if (column == info->columns.end()) {
        throw Error(Diagnostic{"SLU-SOURCE-021",
                               "source '" + source.name() + "': the table " + table.table_name + " has no column '" +
                                   physical + "' (its " + role + " column)",
                               source.defined_at, "map " + role + " to an existing column under replay_boundary.columns", {}});
      }
      const bool time = role == "_replay_timestamp" || role == "_replay_landed_at";
      if (time ? !IsTimeType(column->type) : !IsIntegerType(column->type)) {
        throw Error(Diagnostic{"SLU-SOURCE-022",
                               "source '" + source.name() + "': column '" + physical + "' (its " + role + " column) is " +
                                   column->type + ", not " + (time ? "a DateTime or DateTime64" : "an integer type"),
                               source.defined_at, "map " + role + " to a column of that type", {}});
      }
    }
  }

  void CompareManagedSources() {
    std::vector<const Asset*> managed;
    const Capabilities& capabilities = warehouse_->capabilities();
    for (const AssetKey& key : plan_.sources) {
      const Asset* source = definitions_.Find(key);
      if (!std::holds_alternative<KafkaSource>(source->compute)) continue;
      managed.push_back(source);
      if (!capabilities.kafka_virtual_columns || !capabilities.datetime64) {
        state_.blockers.push_back(Diagnostic{
            "SLU-CLICKHOUSE-002",
            "ClickHouse " + capabilities.server_version + " cannot land the managed Kafka source '" + source->name() +
                "': its Kafka engine lacks the virtual columns (_topic, _partition, _offset, _timestamp, _headers) "
                "and the DateTime64 type that the raw landing table and its view use",
            source->defined_at,
            "use a newer ClickHouse server, or land the topic yourself and adopt the table as a stream_table source",
            {}});
      }
    }
    if (managed.empty()) return;
    std::vector<Relation> objects;
    for (const Asset* source : managed) {
      for (const std::string prefix : {"kafka__", "raw__"}) {
        objects.push_back(Relation{source->key.name_space(), prefix + source->name()});
      }
    }
    std::map<std::string, std::string> engines;
    for (const CatalogEntry& entry : warehouse_->CatalogOf(objects)) {
      engines[entry.relation.ToString()] = Collapsed(entry.engine_full);
    }
    for (const Asset* source : managed) {
      for (const CompiledResource& resource : SourceResources(definitions_, *source, sql::SecretHandling::kKeep)) {
        auto actual = engines.find(source->key.name_space() + "." + resource.name);
        if (actual == engines.end()) continue;
        state_.existing_sources.push_back(resource.name);
        const std::string desired = EngineOf(resource.sql);
        if (resource.name.rfind("kafka__", 0) == 0) {
          CompareKafka(source->name(), resource.name, KafkaSettings(desired), KafkaSettings(actual->second));
        } else if (resource.name.rfind("raw__", 0) == 0 && TtlOf(desired) != TtlOf(actual->second)) {
          const std::string was = TtlOf(actual->second), now = TtlOf(desired);
          state_.source_changes.push_back({source->name(), resource.name,
                                           "landing TTL: " + (was.empty() ? "none" : was) + " in the warehouse, " +
                                               (now.empty() ? "none" : now) + " in the project"});
        }
      }
    }
  }

  void CompareKafka(const std::string& source, const std::string& object,
                    const std::vector<std::pair<std::string, std::string>>& desired,
                    const std::vector<std::pair<std::string, std::string>>& actual) {
    std::map<std::string, std::string> have(actual.begin(), actual.end());
    std::map<std::string, std::string> want(desired.begin(), desired.end());
    std::set<std::string> keys;
    for (const auto& [k, v] : have) keys.insert(k);
    for (const auto& [k, v] : want) keys.insert(k);
    for (const std::string& key : keys) {
      const std::string was = have.count(key) ? have[key] : "unset";
      const std::string now = want.count(key) ? want[key] : "unset";
      if (was == now) continue;
      const bool secret = sql::IsSecretSettingKey(key) || (key == "kafka_broker_list" && (was + now).find('@') != std::string::npos);
      state_.source_changes.push_back(
          {source, object, key + (secret ? " differs (values withheld: they hold credentials)"
                                         : ": " + was + " in the warehouse, " + now + " in the project")});
    }
  }

  const Definitions& definitions_;
  const DirectPlan& plan_;
  Warehouse* warehouse_;
  std::map<std::string, TableInfo> relations_;
  ActualState state_;
};

}  // namespace

std::string ModelChangeName(ModelChange change) {
  switch (change) {
    case ModelChange::kNew:
      return "new";
    case ModelChange::kChanged:
      return "changed";
    case ModelChange::kUnchanged:
      return "unchanged";
  }
  return "new";
}

std::string FingerprintSql(const Definitions& definitions, const Asset& model) {
  return CanonicalSql(definitions, model);
}

ActualState ReadActualState(const Definitions& definitions, const DirectPlan& plan, Warehouse& warehouse) {
  return StateReader(definitions, plan, &warehouse).Read();
}

ActualState NothingBuiltState(const Definitions& definitions, const DirectPlan& plan) {
  return StateReader(definitions, plan, nullptr).Read();
}

}  // namespace sluice
