// Fuzz entries of the project/ layer: the MODEL/TEST/AUDIT header grammar, the TOML configuration files,
// the YAML source declarations and `${…}` templating.
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/diagnostic.hpp"
#include "fuzz_entries.hpp"
#include "project/header_grammar.hpp"
#include "project/models/model_contract.hpp"
#include "project/models/model_file.hpp"
#include "project/config/project_config.hpp"
#include "core/seed_csv.hpp"
#include "project/sources/source_loader.hpp"
#include "project/config/templating.hpp"

namespace sluice::fuzz {

namespace {

// ---- Scratch project folders -----------------------------------------------------------------------------

void WriteText(const std::filesystem::path& path, std::string_view text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("fuzz: cannot write " + path.string());
}

// A fixed, valid project file: the local and pipeline modes load the fuzzed file beside it.
constexpr std::string_view kProjectToml = R"(name = "shop"
adapter = "duckdb"
default_target = "test"

[vars]
region = "eu"
port = 8123
home = "${ENV:HOME}"

[naming]
table_prefix = ""
view_prefix = ""

[targets.test]
database = "raw"

[targets.test.connection]
path = "warehouse.duckdb"
)";

// One temporary folder per process holding the scratch projects; created on first use, removed at exit.
class ScratchProjects {
 public:
  ScratchProjects() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fuzz: mkdtemp failed");
    root_ = pattern;
    WriteText(local() / "streambuild_project.toml", kProjectToml);
    for (const char* seed :
         {"seeds/events.csv", "seeds/users.csv", "seeds/orders.csv", "seeds/customers.csv", "seeds/people.csv"}) {
      WriteText(sources() / seed, "id\n1\n");
    }
  }
  ~ScratchProjects() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ScratchProjects(const ScratchProjects&) = delete;
  ScratchProjects& operator=(const ScratchProjects&) = delete;

  std::filesystem::path project() const { return root_ / "project"; }    // fuzzed streambuild_project.toml
  std::filesystem::path local() const { return root_ / "local"; }        // fixed project + fuzzed local file
  std::filesystem::path pipeline() const { return root_ / "pipeline"; }  // fuzzed pipelines/p/pipeline.toml
  std::filesystem::path sources() const { return root_ / "sources"; }    // fuzzed sources/x.yml

 private:
  std::filesystem::path root_;
};

const ScratchProjects& Scratch() {
  static const ScratchProjects scratch;
  return scratch;
}

// A fake environment: a few variables set (one empty), everything else unset.
std::optional<std::string> FakeEnvironment(const std::string& name) {
  if (name == "HOME") return "/home/fuzz";
  if (name == "PORT") return "9000";
  if (name == "EMPTY") return "";
  if (name == "STREAMBUILD_CLICKHOUSE_HOST") return "localhost";
  return std::nullopt;
}

ValueOrigin FuzzOrigin(const std::string& text) { return OriginIn({"fuzz.toml", 1, 1}, text); }

// ---- Header grammar -----------------------------------------------------------------------------------

void CheckHeaderMap(std::string_view text, const HeaderMap& map);

void CheckHeaderValue(std::string_view text, const HeaderValue& value) {
  Require(value.offset < text.size(), "ParseHeaderBlock: a value offset past the text");
  DescribeHeaderValue(value);
  if (const auto* list = std::get_if<HeaderList>(&value.value)) {
    for (const HeaderValue& item : *list) CheckHeaderValue(text, item);
  } else if (const auto* map = std::get_if<HeaderMap>(&value.value)) {
    CheckHeaderMap(text, *map);
  }
  Require(!value.quoted || std::holds_alternative<std::string>(value.value),
          "ParseHeaderBlock: a quoted value that is not a string");
}

void CheckHeaderMap(std::string_view text, const HeaderMap& map) {
  std::set<std::string_view> keys;
  for (const HeaderEntry& entry : map) {
    Require(entry.key_offset < text.size(), "ParseHeaderBlock: a key offset past the text");
    Require(!entry.key.empty(), "ParseHeaderBlock: an empty key");
    Require(keys.insert(entry.key).second, "ParseHeaderBlock: a duplicate key was accepted");
    // FindEntry is a linear search: checked on the first keys only, so the harness stays linear.
    if (keys.size() <= 16) Require(FindEntry(map, entry.key) == &entry, "FindEntry: not the entry of its key");
    CheckHeaderValue(text, entry.value);
  }
}

}  // namespace

int FuzzHeader(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr std::string_view kKeywords[] = {"MODEL", "TEST", "AUDIT"};
  std::string_view keyword = kKeywords[data[0] % 3];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    HeaderBlock block = ParseHeaderBlock(text, 0, keyword, "pipelines/p/fuzz.sql");
    Require(block.begin < block.end && block.end <= text.size(), "ParseHeaderBlock: the block is outside the text");
    Require(text.substr(block.begin, keyword.size()) == keyword, "ParseHeaderBlock: begin is not the keyword");
    Require(text[block.end - 1] == ';', "ParseHeaderBlock: end is not one past the `;`");
    CheckHeaderMap(text, block.entries);
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

int FuzzModel(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const sql::Dialect dialect = DialectOf(data[0]);
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    ParsedModel parsed = ParseModelFile("pipelines/p/fuzz_model.sql", text, dialect);
    Require(parsed.name == "fuzz_model", "ParseModelFile: the model is not named after its file");
    Require(parsed.body_offset <= text.size(), "ParseModelFile: the body starts outside the text");
    Require(parsed.body.empty() || !std::isspace(static_cast<unsigned char>(parsed.body.back())),
            "ParseModelFile: the statement ends in whitespace");
    for (const ModelReference& ref : parsed.references) {
      Require(ref.call.begin < ref.call.end && ref.call.end <= parsed.body.size(),
              "ParseModelFile: a reference span is outside the statement");
      Require(parsed.body[ref.call.begin] == '_' && parsed.body[ref.call.end - 1] == ')',
              "ParseModelFile: a reference span is not a call");
      Require(!ref.call.name.empty(), "ParseModelFile: a reference without a name");
      Require(ref.at.line >= 1 && ref.at.column >= 1, "ParseModelFile: a reference without a line:col");
    }
    for (const PartitionBoundCall& call : parsed.partition_bounds) {
      Require(call.begin < call.end && call.end <= parsed.body.size() && parsed.body[call.begin] == '@',
              "ParseModelFile: a partition bound span is not a call in the statement");
    }
    ModelContract contract = CheckModelContract(ContractInputOf(parsed, text, dialect));
    for (const OutputColumn& column : contract.columns) {
      Require(!column.name.empty() && !column.type_text.empty(), "CheckModelContract: a column without name or type");
      Require(column.offset >= parsed.body_offset && column.offset < text.size(),
              "CheckModelContract: a column's offset is outside the body");
    }
    Require(!contract.anchor_eligible || contract.anchor_candidate,
            "CheckModelContract: anchor-eligible but not an anchor candidate");
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

int FuzzTomlConfig(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  const bool flag = (data[0] / 3) % 2 == 1;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const ScratchProjects& scratch = Scratch();
  ConfigInputs inputs;
  inputs.environment = FakeEnvironment;
  try {
    if (mode == 0) {
      WriteText(scratch.project() / "streambuild_project.toml", text);
      ProjectConfig project = LoadProjectConfig(scratch.project());
      if (flag) {
        inputs.vars_json = R"({"region": "us", "port": 5432, "extra": [1, "x"]})";
        inputs.database = "cli_db";
        inputs.connection.port = 9440;
      }
      TargetSettings target = ResolveTarget(project, std::nullopt, inputs);
      CheckProjectReplayPolicy(project, target, flag);
      ExpandConnection(target);
    } else if (mode == 1) {
      WriteText(scratch.local() / "streambuild_local.toml", text);
      ProjectConfig project = LoadProjectConfig(scratch.local());
      std::optional<LocalConfig> local = LoadLocalConfig(scratch.local());
      Require(local.has_value(), "LoadLocalConfig: the local file was not loaded");
      if (flag) inputs.target = "test";
      TargetSettings target = ResolveTarget(project, local, inputs);
      ExpandConnection(target);
    } else {
      const std::string relative = "pipelines/p/pipeline.toml";
      WriteText(scratch.pipeline() / relative, text);
      TargetSettings target;
      target.default_pipeline_mode = flag ? PipelineMode::kVirtual : PipelineMode::kDirect;
      PipelineConfig pipeline = LoadPipelineConfig(scratch.pipeline(), "p", relative, target);
      CheckModelReplayPolicy(pipeline, "pipelines/p/m.sql",
                             "MODEL (kind table, replay_on_change (breaking full));\nSELECT 1 AS x\n");
    }
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

int FuzzYamlSources(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const ScratchProjects& scratch = Scratch();
  WriteText(scratch.sources() / "sources" / "x.yml", text);
  try {
    std::map<std::string, ConfigValue> variables;
    variables["topic"] = ConfigValue{"orders", {}};
    variables["db"] = ConfigValue{"raw", {}};
    variables["port"] = ConfigValue{5432, {}};
    variables["home"] = ConfigValue{"${ENV:HOME}", {}};
    TemplateScope scope(variables, FakeEnvironment);
    SourceLoadOptions options;
    options.project_name = "shop";
    options.target_name = "test";
    options.database = "raw-db";
    options.default_kafka_broker_list = "localhost:9092";
    options.default_managed_source_ttl = "toDateTime(_timestamp) + INTERVAL 7 DAY";
    options.default_freshness = FreshnessPolicy{"1h", "1d"};
    options.expand = scope.StringExpander();
    options.derive_name = [](const std::string& topic, const SourceLocation&) -> std::optional<std::string> {
      if (topic.empty() || topic[0] == 'x') return std::nullopt;
      std::string name = "src_";
      for (char c : topic) name += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
      return name;
    };
    std::vector<SourceDeclaration> sources = LoadSources(scratch.sources(), options);
    for (size_t i = 0; i < sources.size(); ++i) {
      Require(!sources[i].name.empty(), "LoadSources: a source without a name");
      Require(i == 0 || sources[i - 1].name < sources[i].name, "LoadSources: names not sorted and unique");
      sources[i].kind();
      if (sources[i].freshness) {
        for (const auto& threshold : {sources[i].freshness->warn_after, sources[i].freshness->error_after}) {
          if (threshold) {
            Require(FreshnessDurationSeconds(*threshold).has_value(), "LoadSources: an invalid freshness accepted");
          }
        }
      }
    }
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

int FuzzSeedCsv(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    SeedCsv csv = ReadSeedCsv("seeds/x.csv", text);
    Require(!csv.columns.empty(), "ReadSeedCsv: a header without columns");
    for (const std::string& column : csv.columns) Require(!column.empty(), "ReadSeedCsv: an empty column name");
    Require(csv.rows.size() <= size, "ReadSeedCsv: more rows than bytes");
    for (const SeedCsvRow& row : csv.rows) {
      Require(row.values.size() == csv.columns.size(), "ReadSeedCsv: a row without one value per column");
      Require(row.offsets.size() == row.values.size(), "ReadSeedCsv: a field without its offset");
    }
  } catch (const Error& error) {
    CheckRejection(error);
    Require(error.diagnostics().size() == 1, "ReadSeedCsv: not one diagnostic");
    Require(error.diagnostics().front().location.file == "seeds/x.csv", "ReadSeedCsv: located in another file");
  }
  return 0;
}

int FuzzTemplating(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool typed = (data[0] & 1) != 0;
  const bool keys = (data[0] & 2) != 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t newline = parts.size() < 3 ? rest.find('\n', start) : std::string::npos;
    if (newline == std::string::npos) {
      parts.push_back(rest.substr(start));
      break;
    }
    parts.push_back(rest.substr(start, newline - start));
    start = newline + 1;
  }
  const std::string text = parts.back();
  parts.pop_back();
  // Values reach templating from TOML or --vars JSON, both valid UTF-8: other bytes are not a real input.
  for (const std::string& part : parts) {
    try {
      nlohmann::json(part).dump();
    } catch (const nlohmann::json::exception&) {
      return 0;
    }
  }
  const ValueOrigin origin = FuzzOrigin(text);
  std::map<std::string, ConfigValue> variables;
  variables["port"] = ConfigValue{8123, origin};
  variables["flag"] = ConfigValue{true, origin};
  variables["nothing"] = ConfigValue{nullptr, origin};
  variables["ratio"] = ConfigValue{0.5, origin};
  variables["list"] = ConfigValue{nlohmann::json::array({1, "x", "${port}"}), origin};
  variables["map"] = ConfigValue{nlohmann::json{{"k", "${flag}"}}, origin};
  variables["home"] = ConfigValue{"${ENV:HOME}", origin};
  variables["unset"] = ConfigValue{"${ENV:SLUICE_FUZZ_UNSET}", origin};
  variables["region"] = ConfigValue{"eu-${ENV:EMPTY}", origin};
  const char* names[] = {"a", "b", "c"};
  for (size_t i = 0; i < parts.size(); ++i) variables[names[i]] = ConfigValue{parts[i], origin};
  try {
    TemplateScope scope(variables, FakeEnvironment);
    for (const auto& [name, value] : scope.variables().items()) {
      Require(variables.count(name) == 1, "TemplateScope: a variable that was not declared");
    }
    for (const auto& [name, environment] : scope.deferred()) {
      Require(!scope.variables().contains(name), "TemplateScope: a deferred variable is also resolved");
      Require(scope.environment_sources().count(name) == 1,
              "TemplateScope: a deferred variable is not marked as taken from the environment");
    }
    if (typed) {
      scope.Expand(nlohmann::json::array({text, nlohmann::json{{"key", text}}}), "field", origin);
    } else {
      scope.ExpandString(text, "field", origin);
      scope.StringExpander()(text, origin.at);
    }
    if (keys) CheckTemplateKeys(nlohmann::json{{text, 1}, {"nested", nlohmann::json{{text, 2}}}}, "field", origin);
  } catch (const Error& error) {
    CheckRejection(error);
  }
  return 0;
}

}  // namespace sluice::fuzz
