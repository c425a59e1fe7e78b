#include "sdk/sdk_definitions.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/daily_partitions.hpp"
#include "core/text.hpp"
#include "sluice/warehouse.hpp"

namespace sluice::sdk {

namespace {

constexpr std::string_view kDefaultNamespaceShown = "<default namespace>";

std::string Shown(const dagster::AssetKey& key) {
  std::string text;
  for (const std::string& part : key.path) text += (text.empty() ? "" : ".") + part;
  return text.empty() ? "[]" : text;
}

bool ValidShape(const dagster::AssetKey& key) {
  return (key.path.size() == 1 || key.path.size() == 2) &&
         std::all_of(key.path.begin(), key.path.end(), [](const std::string& part) { return IsIdentifier(part); });
}

// The relation a key names before the default namespace is known: "ns.t" or "<default namespace>.t".
std::string RelationShown(const dagster::AssetKey& key) {
  if (!ValidShape(key)) return "-";
  return key.path.size() == 1 ? std::string(kDefaultNamespaceShown) + "." + key.path[0]
                              : key.path[0] + "." + key.path[1];
}

const char* PartitionsKindName(const dagster::PartitionsDefinition& definition) {
  return std::visit(
      [](const auto& d) -> const char* {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, dagster::DailyPartitionsDefinition>) return "DailyPartitionsDefinition";
        else if constexpr (std::is_same_v<T, dagster::HourlyPartitionsDefinition>) return "HourlyPartitionsDefinition";
        else if constexpr (std::is_same_v<T, dagster::WeeklyPartitionsDefinition>) return "WeeklyPartitionsDefinition";
        else if constexpr (std::is_same_v<T, dagster::MonthlyPartitionsDefinition>) return "MonthlyPartitionsDefinition";
        else if constexpr (std::is_same_v<T, dagster::StaticPartitionsDefinition>) return "StaticPartitionsDefinition";
        else return "TimeWindowPartitionsDefinition";
      },
      definition);
}

// What makes a daily definition other than Sluice's (midnight UTC, YYYY-MM-DD keys, complete days only); empty when
// it is one.
std::string DailyProblem(const dagster::DailyPartitionsDefinition& daily) {
  if (!Date::Parse(daily.start_date)) return "start_date \"" + daily.start_date + "\" is not a YYYY-MM-DD date";
  if (daily.hour_offset != 0 || daily.minute_offset != 0) {
    return "its partitions start at " + std::to_string(daily.hour_offset) + ":" +
           (daily.minute_offset < 10 ? "0" : "") + std::to_string(daily.minute_offset) + ", not midnight";
  }
  if (daily.timezone != "UTC") return "its timezone is " + daily.timezone + ", not UTC";
  if (daily.fmt != "%Y-%m-%d") return "its keys are formatted \"" + daily.fmt + "\", not \"%Y-%m-%d\"";
  if (daily.end_offset != 0) {
    return "end_offset = " + std::to_string(daily.end_offset) + " (only complete days are partitions)";
  }
  if (daily.end_date) return "it has an end_date (" + *daily.end_date + ")";
  return "";
}

struct Findings {
  std::vector<InspectionFinding>& out;
  const dagster::AssetsDefinition& asset;

  void Add(const char* code, const std::string& rule, const std::string& hint) {
    std::string name = Shown(asset.spec.key);
    out.push_back({name, Diagnostic{code, "asset " + name + ": " + rule, SourceLocation{asset.file, asset.line, 0},
                                    hint, {}}});
  }
};

void InspectAsset(const dagster::AssetsDefinition& asset, const dagster::Resources& resources,
                  const std::set<std::vector<std::string>>& known, std::vector<InspectionFinding>& out) {
  Findings findings{out, asset};
  const dagster::AssetSpec& spec = asset.spec;
  if (!ValidShape(spec.key)) {
    findings.Add("SLU-INSPECT-001",
                 "key " + spec.key.ToUserString() + " has " + std::to_string(spec.key.path.size()) +
                     " part(s); a key is [table] (the default namespace) or [namespace, table], each part an "
                     "identifier",
                 "write AssetKey{\"table\"} or AssetKey{\"namespace\", \"table\"}; parts match [A-Za-z_][A-Za-z0-9_]*");
  }
  for (const auto& [name, value] : spec.metadata) {
    std::string last = AsciiLower(name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1));
    if (last == "catalog" || last == "project" || last == "database") {
      findings.Add("SLU-INSPECT-002", "metadata \"" + name + "\" would override the catalog",
                   "the catalog always comes from SEGMENTSTREAM_WAREHOUSE_CATALOG; choose the namespace with a "
                   "two-part key instead");
    }
  }
  auto partition_column = spec.metadata.find(kPartitionByDateMetadata);
  if (spec.partitions_def) {
    const auto* daily = std::get_if<dagster::DailyPartitionsDefinition>(&*spec.partitions_def);
    if (daily == nullptr) {
      findings.Add("SLU-INSPECT-003",
                   std::string("partitions_def is a ") + PartitionsKindName(*spec.partitions_def) +
                       "; only daily partitions are supported",
                   "use dg::DailyPartitionsDefinition(\"YYYY-MM-DD\"), or no partitions");
    } else if (std::string problem = DailyProblem(*daily); !problem.empty()) {
      findings.Add("SLU-INSPECT-004", "its DailyPartitionsDefinition is not the default: " + problem,
                   "daily partitions are midnight UTC days keyed YYYY-MM-DD: keep the defaults of every argument but "
                   "start_date");
    }
    if (partition_column == spec.metadata.end()) {
      findings.Add("SLU-INSPECT-005", "it is partitioned but declares no physical DATE column",
                   "add metadata = warehouse_asset_metadata({.partition_by_date = \"event_date\"})");
    }
  } else if (partition_column != spec.metadata.end()) {
    findings.Add("SLU-INSPECT-006", "partition_by_date = \"" + partition_column->second + "\" on an unpartitioned asset",
                 "add partitions_def = dg::DailyPartitionsDefinition(\"YYYY-MM-DD\"), or drop the metadata");
  }
  if (spec.partitions_def && partition_column != spec.metadata.end() && !IsIdentifier(partition_column->second)) {
    findings.Add("SLU-INSPECT-006", "partition_by_date = \"" + partition_column->second + "\" is not a column name",
                 "name the DATE column the asset's output holds, e.g. event_date");
  }
  auto resource = resources.find(spec.io_manager_key);
  if (resource == resources.end() || resource->second.kind != "warehouse_io_manager") {
    findings.Add("SLU-INSPECT-007",
                 "io_manager_key \"" + spec.io_manager_key + "\" is " +
                     (resource == resources.end() ? "not a resource of the Definitions" : "not the warehouse IO manager"),
                 "set io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY and resources = sluice::warehouse_resources()");
  }
  auto check_upstream = [&](const dagster::AssetKey& key, const std::string& what) {
    if (ValidShape(key) && !known.count(key.path)) {
      findings.Add("SLU-INSPECT-008", what + " " + Shown(key) + " is not an asset of the Definitions",
                   "add the upstream asset to Definitions.assets, or fix the key");
    }
  };
  for (const auto& [parameter, input] : spec.ins) check_upstream(input.key, "input \"" + parameter + "\" reads");
  for (const dagster::AssetKey& dep : spec.deps) check_upstream(dep, "dep");
  if (spec.backfill_policy && spec.backfill_policy->max_partitions_per_run &&
      *spec.backfill_policy->max_partitions_per_run < 1) {
    findings.Add("SLU-INSPECT-010",
                 "backfill_policy multi_run(" + std::to_string(*spec.backfill_policy->max_partitions_per_run) +
                     ") owns no partition per run",
                 "use BackfillPolicy::multi_run(n) with n >= 1, or single_run()");
  }
}

bool IsStandIn(const Asset& asset) {
  const auto* table = std::get_if<ExternalTable>(&asset.compute);
  return table != nullptr && table->defined_in_code;
}

BackfillPolicy PolicyOf(const dagster::AssetSpec& spec) {
  // Dagster runs an asset without a policy one partition per run.
  if (!spec.backfill_policy) return BackfillPolicy::MultiRun(1);
  return BackfillPolicy{spec.backfill_policy->max_partitions_per_run};
}

}  // namespace

InspectionReport InspectCode(const dagster::Definitions& code, const Definitions* sql) {
  InspectionReport report;
  if (sql != nullptr) report = InspectDefinitions(*sql);
  // Known keys: code keys as declared, and SQL assets both as [namespace, name] and by name alone.
  std::set<std::vector<std::string>> known;
  for (const dagster::AssetsDefinition& asset : code.assets) known.insert(asset.spec.key.path);
  if (sql != nullptr) {
    for (const Asset& asset : sql->assets()) {
      if (IsStandIn(asset)) continue;
      known.insert({asset.key.name_space(), asset.key.name()});
      known.insert({asset.key.name()});  // a model named by its name alone
    }
  }
  std::map<std::string, const dagster::AssetsDefinition*> relations;
  for (const dagster::AssetsDefinition& asset : code.assets) {
    const dagster::AssetSpec& spec = asset.spec;
    InspectedAsset inspected;
    inspected.key = Shown(spec.key);
    inspected.relation = RelationShown(spec.key);
    inspected.kind = "code";
    if (!spec.partitions_def) {
      inspected.partitioning = "unpartitioned";
    } else if (const auto* daily = std::get_if<dagster::DailyPartitionsDefinition>(&*spec.partitions_def)) {
      auto column = spec.metadata.find(kPartitionByDateMetadata);
      inspected.partitioning = "daily from " + daily->start_date + " by " +
                               (column == spec.metadata.end() ? std::string("?") : column->second);
    } else {
      inspected.partitioning = PartitionsKindName(*spec.partitions_def);
    }
    inspected.backfill_policy = spec.partitions_def ? BackfillPolicyText(PolicyOf(spec)) : "-";
    for (const auto& [parameter, input] : spec.ins) inspected.inputs.push_back(parameter + "=" + Shown(input.key));
    for (const dagster::AssetKey& dep : spec.deps) inspected.inputs.push_back(Shown(dep));
    inspected.kinds.assign(spec.kinds.begin(), spec.kinds.end());
    inspected.io_manager_key = spec.io_manager_key;
    inspected.defined_at = SourceLocation{asset.file, asset.line, 0};
    report.assets.push_back(std::move(inspected));

    InspectAsset(asset, code.resources, known, report.rejected);
    if (ValidShape(spec.key)) {
      auto [previous, inserted] = relations.emplace(RelationShown(spec.key), &asset);
      const Asset* same_key = sql != nullptr && spec.key.path.size() == 2
                                  ? sql->Find(AssetKey::Of(spec.key.path[0], spec.key.path[1]))
                                  : nullptr;
      bool clashes_with_sql = same_key != nullptr && !IsStandIn(*same_key);
      if (!inserted || clashes_with_sql) {
        std::string other = inserted ? "a SQL model" : "the asset defined at " + previous->second->file + ":" +
                                                           std::to_string(previous->second->line);
        Findings{report.rejected, asset}.Add("SLU-INSPECT-009",
                                             "its relation " + RelationShown(spec.key) + " is also " + other + "'s",
                                             "give each asset its own key");
      }
    }
  }
  std::stable_sort(report.assets.begin(), report.assets.end(),
                   [](const InspectedAsset& a, const InspectedAsset& b) { return a.key < b.key; });
  return report;
}

Definitions ToDefinitions(const dagster::Definitions& code, const std::string& default_namespace,
                          const Definitions* sql) {
  InspectionReport report = InspectCode(code, sql);
  if (!report.ok()) {
    std::vector<Diagnostic> diagnostics;
    for (const InspectionFinding& finding : report.rejected) diagnostics.push_back(finding.diagnostic);
    throw Error(std::move(diagnostics));
  }
  auto key_of = [&](const dagster::AssetKey& key) {
    if (key.path.size() == 1 && sql != nullptr) {
      const Asset* model = sql->FindByName(key.path[0]);
      if (model != nullptr && !IsStandIn(*model) && !sql->Find(AssetKey::Of(default_namespace, key.path[0]))) {
        return model->key;  // a SQL model named by its name alone
      }
    }
    return AssetKey::FromParts(key.path, default_namespace);
  };

  Definitions::Parts parts;
  if (sql != nullptr) {
    parts.project = sql->project();
    for (const Asset& asset : sql->assets()) {
      if (!IsStandIn(asset)) parts.assets.push_back(asset);  // the code asset takes its stand-in's place
    }
    parts.pipelines = sql->pipelines();
    parts.tests = sql->tests();
    parts.audits = sql->audits();
    parts.macros = sql->macros();
  }
  for (const dagster::AssetsDefinition& definition : code.assets) {
    const dagster::AssetSpec& spec = definition.spec;
    Asset asset;
    asset.key = key_of(spec.key);
    asset.relation_name = asset.key.name();
    asset.description = spec.description;
    asset.defined_at = SourceLocation{definition.file, definition.line, 0};
    if (spec.partitions_def) {
      const auto& daily = std::get<dagster::DailyPartitionsDefinition>(*spec.partitions_def);
      asset.partitions = PartitionSpec{spec.metadata.find(kPartitionByDateMetadata)->second,
                                       DailyPartitions(*Date::Parse(daily.start_date))};
    }
    asset.backfill_policy = PolicyOf(spec);
    CodeCompute compute;
    std::set<AssetKey> seen;
    for (const auto& [parameter, input] : spec.ins) {
      AssetKey upstream = key_of(input.key);
      compute.inputs.push_back({parameter, upstream});
      if (seen.insert(upstream).second) asset.deps.push_back({upstream, EdgeType::kDrivingInput});
    }
    for (const dagster::AssetKey& dep : spec.deps) {
      AssetKey upstream = key_of(dep);
      if (seen.insert(upstream).second) asset.deps.push_back({upstream, EdgeType::kReference});
    }
    compute.kinds.assign(spec.kinds.begin(), spec.kinds.end());
    compute.metadata.assign(spec.metadata.begin(), spec.metadata.end());
    compute.io_manager_key = spec.io_manager_key;
    dagster::ComputeFunction function = definition.compute;
    dagster::AssetKey declared = spec.key;
    compute.function = [function, declared](const CodeContext& context, const CodeInputs& inputs) {
      std::optional<dagster::TimeWindow> window;
      if (context.window) window = dagster::TimeWindow{context.window->start.ToString(), context.window->end.ToString()};
      dagster::AssetExecutionContext asset_context(declared, context.run_id, context.partition_keys, window,
                                                   dagster::Logger(context.log));
      return function(asset_context, dagster::Inputs({inputs.begin(), inputs.end()}));
    };
    asset.compute = std::move(compute);
    parts.assets.push_back(std::move(asset));
  }
  return Definitions(std::move(parts));
}

}  // namespace sluice::sdk
