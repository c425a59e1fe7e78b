#include "orchestrate/pipeline_file.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "core/closest_name.hpp"
#include "core/cron_schedule.hpp"
#include "core/file_system.hpp"
#include "orchestrate/job_options.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::orchestrate {

namespace {

constexpr const char* kNotYaml = "SLU-PIPELINE-001";
constexpr const char* kUnknownKey = "SLU-PIPELINE-002";
constexpr const char* kWrongType = "SLU-PIPELINE-003";
constexpr const char* kMissingKey = "SLU-PIPELINE-004";
constexpr const char* kBadId = "SLU-PIPELINE-005";
constexpr const char* kBadCron = "SLU-PIPELINE-006";
constexpr const char* kBadOption = "SLU-PIPELINE-007";
constexpr const char* kCycle = "SLU-PIPELINE-008";
constexpr const char* kOtherKind = "SLU-PIPELINE-009";
constexpr const char* kDuplicateJob = "SLU-PIPELINE-010";
constexpr const char* kExistsAndDiffers = "SLU-PIPELINE-011";
constexpr const char* kCannotWrite = "SLU-PIPELINE-012";

constexpr const char* kFormatHint = "docs/starlake.md describes the pipeline file";

// ---- Plain scalars: YAML 1.2 core schema ----------------------------------------------------------------------

bool IsNullWord(std::string_view text) {
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

std::optional<bool> BoolWord(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the core schema's float without .inf and .nan.
bool IsFloatText(std::string_view text) {
  size_t at = 0;
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
  const size_t whole = at;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  bool digits = at > whole;
  if (at < text.size() && text[at] == '.') {
    const size_t fraction = ++at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    digits = digits || at > fraction;
  }
  if (!digits) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
    if (!IsDigits(text.substr(at))) return false;
    return true;
  }
  return at == text.size();
}

// A scalar node as JSON: a quoted (or explicitly tagged) scalar is a string; a plain one is typed by the core
// schema.
nlohmann::json ScalarJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() != "?") return text;
  if (IsNullWord(text)) return nullptr;
  if (std::optional<bool> value = BoolWord(text)) return *value;
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
  if (IsDigits(digits)) {
    int64_t value = 0;
    const char* begin = text.data() + (text.front() == '+' ? 1 : 0);
    auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size()) return value;
  }
  if (IsFloatText(text)) return std::strtod(text.c_str(), nullptr);
  return text;
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      break;
  }
  const nlohmann::json value = ScalarJson(node);
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "a boolean (`" + node.Scalar() + "`)";
  if (value.is_number_integer()) return "an integer (`" + node.Scalar() + "`)";
  if (value.is_number()) return "a number (`" + node.Scalar() + "`)";
  return "a string";
}

// ---- Reading ----------------------------------------------------------------------------------------------------

struct Field {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

const Field* Find(const std::vector<Field>& fields, std::string_view key) {
  for (const Field& field : fields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "`" : ", `") + word + "`";
  return out;
}

class PipelineReader {
 public:
  PipelineReader(const std::string& file, std::string_view text) : file_(file), text_(text) {}

  StarlakeDagFile Read() {
    YAML::Node doc;
    try {
      doc = YAML::Load(std::string(text_));
    } catch (const YAML::Exception& error) {
      Fail(error.mark, kNotYaml, "the pipeline file is not YAML: " + error.msg, "check indentation and quoting");
    }
    const std::vector<std::string> top_keys{"pipeline", "kind", "cron", "options", "dependencies", "schedules"};
    const std::vector<Field> fields =
        Fields(doc, "the pipeline file", top_keys, "a pipeline file must be a mapping of " + Joined(top_keys));
    StarlakeDagFile file;
    const Field& pipeline = Require(fields, "pipeline", doc, "the pipeline file");
    file.pipeline_id = String(pipeline, "`pipeline`");
    if (!IsPipelineId(file.pipeline_id)) {
      Fail(MarkOf(pipeline), kBadId, "the pipeline id `" + file.pipeline_id + "` is not made of a-z, 0-9 and _ only",
           "write it in lower case with underscores, e.g. `shop_kpi`; it names the pipeline's jobs");
    }
    const Field& kind = Require(fields, "kind", doc, "the pipeline file");
    const std::string kind_name = String(kind, "`kind`");
    if (kind_name != "transform" && kind_name != "load") {
      Fail(MarkOf(kind), kWrongType, "`kind` is `" + kind_name + "`, expected `transform` or `load`",
           "a transform pipeline has `dependencies`, a load pipeline `schedules`");
    }
    if (const Field* options = Find(fields, "options")) file.options = Options(*options);
    const auto resolved = ResolveStarlakeOptions(file.options);
    if (const auto* problem = std::get_if<StarlakeOptionProblem>(&resolved)) {
      Fail(MarkOf(*Find(option_fields_, problem->key)), kBadOption, problem->message, problem->hint);
    }
    file.resolved = std::get<StarlakeDagOptions>(resolved);
    try {  // the options a job runs with (job_options.hpp), checked here so a bad value is located
      ResolveJobOptions(file.options, [](const std::string&) { return std::nullopt; });
    } catch (const JobOptionError& error) {
      const Diagnostic& first = error.diagnostics().front();
      const Field* option = Find(option_fields_, error.key());
      Fail(option != nullptr ? MarkOf(*option) : Find(fields, "options")->key_node.Mark(), kBadOption, first.message,
           first.hint);
    }
    if (kind_name == "load") {
      for (const char* key : {"cron", "dependencies"}) {
        if (const Field* field = Find(fields, key)) {
          Fail(field->key_node.Mark(), kOtherKind,
               std::string("`") + key + "` belongs to transform pipelines, not load ones",
               std::string(key) == "cron" ? "a load pipeline's crons are its schedules' `cron`"
                                          : "a load pipeline lists `schedules`");
        }
      }
      file.dag = Schedules(Require(fields, "schedules", doc, "a load pipeline"));
    } else {
      if (const Field* schedules = Find(fields, "schedules")) {
        Fail(schedules->key_node.Mark(), kOtherKind, "`schedules` belongs to load pipelines, not transform ones",
             "a transform pipeline lists `dependencies`; or write `kind: load`");
      }
      if (const Field* cron = Find(fields, "cron")) file.cron = Cron(*cron, "`cron`");
      file.dag = Dependencies(Require(fields, "dependencies", doc, "a transform pipeline"));
    }
    return file;
  }

 private:
  SourceLocation At(const YAML::Mark& mark) const {
    if (mark.line < 0) return {file_, 1, 1};
    return {file_, mark.line + 1, mark.column + 1};
  }

  [[noreturn]] void Fail(const YAML::Mark& mark, const char* code, const std::string& message,
                         const std::string& hint) const {
    throw Error(MakeDiagnostic(code, message, At(mark), hint, text_));
  }

  // Where a value is written; a value left empty is located at its key.
  static YAML::Mark MarkOf(const Field& field) {
    const YAML::Mark mark = field.value.Mark();
    return mark.line < 0 || field.value.IsNull() ? field.key_node.Mark() : mark;
  }

  // The fields of the mapping `node`, which may hold only the `allowed` keys, each once.
  // The keys of mapping `node` (`what`, e.g. "a domain"), each one of `allowed`; `not_a_mapping` is the message when
  // it is not a mapping (", found <what it is>" is added).
  std::vector<Field> Fields(const YAML::Node& node, const std::string& what, const std::vector<std::string>& allowed,
                            const std::string& not_a_mapping) {
    if (!node.IsMap()) Fail(node.Mark(), kWrongType, not_a_mapping + ", found " + Describe(node), kFormatHint);
    std::vector<Field> fields;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) Fail(entry.first.Mark(), kWrongType, "a key of " + what + " must be a name", "");
      Field field{entry.first.Scalar(), entry.first, entry.second};
      if (std::find(allowed.begin(), allowed.end(), field.key) == allowed.end()) {
        const std::optional<std::string> close = ClosestName(field.key, allowed);
        Fail(field.key_node.Mark(), kUnknownKey,
             "unknown key `" + field.key + "` in " + what + "; the keys are " + Joined(allowed),
             close ? "did you mean `" + *close + "`?" : kFormatHint);
      }
      if (Find(fields, field.key) != nullptr) {
        Fail(field.key_node.Mark(), kUnknownKey, "key `" + field.key + "` is repeated in " + what,
             "write each key once");
      }
      fields.push_back(std::move(field));
    }
    return fields;
  }

  const Field& Require(const std::vector<Field>& fields, const std::string& key, const YAML::Node& mapping,
                       const std::string& what) const {
    if (const Field* field = Find(fields, key)) return *field;
    Fail(mapping.Mark(), kMissingKey, what + " needs `" + key + "`", kFormatHint);
  }

  void Expect(const Field& field, bool ok, const std::string& what, const std::string& expected) const {
    if (!ok) Fail(MarkOf(field), kWrongType, what + " must be " + expected + ", found " + Describe(field.value), "");
  }

  // A string value; `allow_empty` false also refuses "".
  std::string String(const Field& field, const std::string& what, bool allow_empty = false) const {
    const bool is_string = field.value.IsScalar() && ScalarJson(field.value).is_string();
    Expect(field, is_string, what, "a string");
    const std::string value = field.value.Scalar();
    if (value.empty() && !allow_empty) Fail(MarkOf(field), kWrongType, what + " must not be empty", "");
    return value;
  }

  const YAML::Node& List(const Field& field, const std::string& what) const {
    Expect(field, field.value.IsSequence(), what, "a list");
    return field.value;
  }

  // An optional cron: null is none; else a string core's grammar accepts.
  std::optional<std::string> Cron(const Field& field, const std::string& what) const {
    if (field.value.IsNull()) return std::nullopt;
    const std::string cron = String(field, what);
    try {
      CronSchedule::Parse(cron);
    } catch (const Error& error) {
      Fail(MarkOf(field), kBadCron,
           what + " `" + cron + "` is not a cron expression: " + error.diagnostics().front().message,
           "write five fields (minute hour day-of-month month day-of-week, e.g. `0 0 * * *`) or an alias such as "
           "`@daily`; leave `cron` out for none");
    }
    return cron;
  }

  // A YAML value as JSON: scalars typed (ScalarJson), mappings with name keys, lists.
  nlohmann::json Json(const YAML::Node& node) const {
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return nullptr;
      case YAML::NodeType::Scalar:
        return ScalarJson(node);
      case YAML::NodeType::Sequence: {
        nlohmann::json list = nlohmann::json::array();
        for (const YAML::Node& item : node) list.push_back(Json(item));
        return list;
      }
      case YAML::NodeType::Map: {
        nlohmann::json object = nlohmann::json::object();
        for (const auto& entry : node) {
          if (!entry.first.IsScalar()) Fail(entry.first.Mark(), kWrongType, "an option's key must be a name", "");
          object[entry.first.Scalar()] = Json(entry.second);
        }
        return object;
      }
    }
    return nullptr;
  }

  // The `options` mapping as a JSON object; records each option's field in option_fields_.
  nlohmann::json Options(const Field& field) {
    nlohmann::json options = nlohmann::json::object();
    if (field.value.IsNull()) return options;
    Expect(field, field.value.IsMap(), "`options`", "a mapping of option names to values");
    for (const auto& entry : field.value) {
      if (!entry.first.IsScalar()) Fail(entry.first.Mark(), kWrongType, "an option's name must be a string", "");
      Field option{entry.first.Scalar(), entry.first, entry.second};
      if (Find(option_fields_, option.key) != nullptr) {
        Fail(option.key_node.Mark(), kUnknownKey, "option `" + option.key + "` is repeated", "write each option once");
      }
      options[option.key] = Json(option.value);
      option_fields_.push_back(std::move(option));
    }
    return options;
  }

  StarlakeTransformDag Dependencies(const Field& field) {
    StarlakeTransformDag dag;
    for (const YAML::Node& node : List(field, "`dependencies`")) dag.dependencies.push_back(Dependency(node));
    const std::vector<std::string> cycle = FindDependencyCycle(dag.dependencies);
    if (!cycle.empty()) {
      std::string names;
      for (const std::string& name : cycle) names += (names.empty() ? "" : " -> ") + name;
      Fail(name_marks_.at(cycle.front()), kCycle, "the dependencies have a cycle: " + names,
           "a task cannot depend on itself, directly or through others");
    }
    return dag;
  }

  StarlakeDependency Dependency(const YAML::Node& node) {
    const std::string what = "a dependency";
    const std::vector<Field> fields =
        Fields(node, what, {"name", "type", "sink", "cron", "freshness", "stream", "children"},
               what + " must be a mapping with `name` and `type`");
    StarlakeDependency dependency;
    const Field& name = Require(fields, "name", node, what);
    dependency.name = String(name, "`name`");
    name_marks_.emplace(dependency.name, name.value.Mark());
    const Field& type = Require(fields, "type", node, what + " (`" + dependency.name + "`)");
    const std::string type_name = String(type, "`type`");
    if (type_name != "task" && type_name != "table") {
      Fail(MarkOf(type), kWrongType, "`type` is `" + type_name + "`, expected `task` or `table`",
           "a task is a transform; a table is loaded");
    }
    dependency.kind = type_name == "task" ? StarlakeDependencyKind::kTask : StarlakeDependencyKind::kTable;
    const Field* sink = Find(fields, "sink");
    dependency.sink = sink != nullptr ? String(*sink, "`sink`") : dependency.name;
    if (const Field* cron = Find(fields, "cron")) dependency.cron = Cron(*cron, "`cron`");
    if (const Field* freshness = Find(fields, "freshness")) {
      const nlohmann::json value = freshness->value.IsScalar() ? ScalarJson(freshness->value) : nullptr;
      Expect(*freshness, value.is_number_integer(), "`freshness`", "an integer (seconds)");
      dependency.freshness = value.get<int64_t>();
    }
    if (const Field* stream = Find(fields, "stream")) dependency.stream = String(*stream, "`stream`", true);
    if (const Field* children = Find(fields, "children")) {
      if (!children->value.IsNull()) {
        for (const YAML::Node& child : List(*children, "`children`")) dependency.children.push_back(Dependency(child));
      }
    }
    return dependency;
  }

  StarlakeLoadDag Schedules(const Field& field) {
    StarlakeLoadDag dag;
    for (const YAML::Node& node : List(field, "`schedules`")) {
      const std::string what = "a schedule";
      const std::vector<Field> fields =
          Fields(node, what, {"name", "cron", "domains"}, what + " must be a mapping with `domains`");
      StarlakeSchedule schedule;
      if (const Field* name = Find(fields, "name"); name != nullptr && !name->value.IsNull()) {
        schedule.name = String(*name, "a schedule's `name`");
      }
      if (const Field* cron = Find(fields, "cron")) schedule.cron = Cron(*cron, "a schedule's `cron`");
      for (const YAML::Node& domain : List(Require(fields, "domains", node, what), "`domains`")) {
        schedule.domains.push_back(Domain(domain));
      }
      dag.schedules.push_back(std::move(schedule));
    }
    return dag;
  }

  StarlakeDomain Domain(const YAML::Node& node) {
    const std::string what = "a domain";
    const std::vector<Field> fields =
        Fields(node, what, {"name", "tables"}, what + " must be a mapping with `name` and `tables`");
    StarlakeDomain domain;
    domain.name = String(Require(fields, "name", node, what), "a domain's `name`");
    for (const YAML::Node& table : List(Require(fields, "tables", node, what), "`tables`")) {
      domain.tables.push_back(String(Field{"tables", node, table}, "a table name"));
    }
    return domain;
  }

  const std::string& file_;
  std::string_view text_;
  std::vector<Field> option_fields_;              // where each option is written, for its value's errors
  std::map<std::string, YAML::Mark> name_marks_;  // each dependency name's first occurrence
};

// ---- Writing ----------------------------------------------------------------------------------------------------

// A string as a YAML scalar that reads back as the same string: plain when that is unambiguous (a name-like word
// that no YAML reader takes for a boolean or null), else double-quoted with JSON's escapes, which YAML shares.
std::string Scalar(const std::string& text) {
  static const std::set<std::string> kReserved{"true", "false", "yes", "no", "on", "off", "y", "n", "null"};
  const bool name_like =
      !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_') &&
      std::all_of(text.begin(), text.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '$' || c == '/';
      });
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name_like && kReserved.count(lower) == 0) return text;
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An option value in YAML's flow style: strings as Scalar (whose plain form holds none of the flow indicators
// `,[]{}`), lists and mappings bracketed, numbers, booleans and null as JSON writes them.
std::string OptionValue(const nlohmann::json& value) {
  if (value.is_string()) return Scalar(value.get<std::string>());
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i == 0 ? "" : ", ") + OptionValue(value[i]);
    return out + "]";
  }
  if (value.is_object()) {
    std::string out = "{";
    for (const auto& [key, item] : value.items())
      out += (out.size() == 1 ? "" : ", ") + Scalar(key) + ": " + OptionValue(item);
    return out + "}";
  }
  return value.dump();
}

void WriteDependency(const StarlakeDependency& dependency, size_t indent, std::string& out) {
  const std::string pad(indent, ' ');
  const std::string inner(indent + 2, ' ');
  out += pad + "- name: " + Scalar(dependency.name) + "\n";
  out += inner + "type: " + (dependency.kind == StarlakeDependencyKind::kTask ? "task" : "table") + "\n";
  if (dependency.sink != dependency.name) out += inner + "sink: " + Scalar(dependency.sink) + "\n";
  if (dependency.cron) out += inner + "cron: " + Quoted(*dependency.cron) + "\n";
  if (dependency.freshness != 0) out += inner + "freshness: " + std::to_string(dependency.freshness) + "\n";
  if (dependency.stream) out += inner + "stream: " + Scalar(*dependency.stream) + "\n";
  if (!dependency.children.empty()) {
    out += inner + "children:\n";
    for (const StarlakeDependency& child : dependency.children) WriteDependency(child, indent + 4, out);
  }
}

}  // namespace

bool IsPipelineId(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

StarlakeDagFile ParsePipelineFile(const std::string& file_name, std::string_view text) {
  return PipelineReader(file_name, text).Read();
}

StarlakeDagFile ReadPipelineFile(const std::filesystem::path& path) {
  return ParsePipelineFile(path.string(), ReadFile(path));
}

std::string WritePipelineFile(const StarlakeDagFile& file) {
  const bool load = std::holds_alternative<StarlakeLoadDag>(file.dag);
  std::string out = "pipeline: " + Scalar(file.pipeline_id) + "\n";
  out += std::string("kind: ") + (load ? "load" : "transform") + "\n";
  if (!load && file.cron) out += "cron: " + Quoted(*file.cron) + "\n";
  if (file.options.is_object() && !file.options.empty()) {
    out += "options:\n";
    for (const auto& [key, value] : file.options.items()) out += "  " + Scalar(key) + ": " + OptionValue(value) + "\n";
  }
  if (const auto* transform = std::get_if<StarlakeTransformDag>(&file.dag)) {
    out += transform->dependencies.empty() ? "dependencies: []\n" : "dependencies:\n";
    for (const StarlakeDependency& dependency : transform->dependencies) WriteDependency(dependency, 2, out);
    return out;
  }
  const StarlakeLoadDag& dag = std::get<StarlakeLoadDag>(file.dag);
  out += dag.schedules.empty() ? "schedules: []\n" : "schedules:\n";
  for (const StarlakeSchedule& schedule : dag.schedules) {
    std::string item;
    if (schedule.name) item += "    name: " + Scalar(*schedule.name) + "\n";
    if (schedule.cron) item += "    cron: " + Quoted(*schedule.cron) + "\n";
    item += schedule.domains.empty() ? "    domains: []\n" : "    domains:\n";
    for (const StarlakeDomain& domain : schedule.domains) {
      item += "      - name: " + Scalar(domain.name) + "\n        tables: [";
      for (size_t i = 0; i < domain.tables.size(); ++i) item += (i == 0 ? "" : ", ") + Scalar(domain.tables[i]);
      item += "]\n";
    }
    item.replace(0, 4, "  - ");  // the schedule's first key opens its list item
    out += item;
  }
  return out;
}

SavedPipelineFile SavePipelineFile(const StarlakeDagFile& file, const std::filesystem::path& dir, bool replace) {
  namespace fs = std::filesystem;
  if (!IsPipelineId(file.pipeline_id)) {
    throw Error(Diagnostic{kBadId,
                           "the pipeline id `" + file.pipeline_id + "` is not made of a-z, 0-9 and _ only",
                           {},
                           "the id is the imported file's name in lower case: rename the file (e.g. with `_` "
                           "for `-`) and import it again",
                           {}});
  }
  const std::string text = WritePipelineFile(file);
  SavedPipelineFile saved{dir / (file.pipeline_id + ".yml"), PipelineSave::kCreated};
  const std::string target = saved.path.string();
  std::error_code error;
  if (fs::exists(saved.path, error)) {
    if (ReadFile(saved.path) == text) {
      saved.outcome = PipelineSave::kUnchanged;
      return saved;
    }
    if (!replace) {
      throw Error(Diagnostic{kExistsAndDiffers,
                             target + " already exists with other contents; nothing was written",
                             {target, 0, 0},
                             "pass --force to replace it, or --output to write elsewhere",
                             {}});
    }
    saved.outcome = PipelineSave::kReplaced;
  }
  auto fail = [&](const std::string& what, const std::error_code& cause) {
    throw Error(Diagnostic{kCannotWrite,
                           "cannot write " + target + ": " + what + ": " + cause.message(),
                           {target, 0, 0},
                           "check the folder's permissions, or pass --output",
                           {}});
  };
  fs::create_directories(dir, error);
  if (error) fail("cannot create the folder " + dir.string(), error);
  const fs::path temporary = dir / ("." + file.pipeline_id + ".yml.tmp-" + std::to_string(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      fs::remove(temporary, error);
      fail("cannot write the temporary file " + temporary.string(), std::make_error_code(std::errc::io_error));
    }
  }
  fs::rename(temporary, saved.path, error);
  if (error) {
    const std::error_code cause = error;
    fs::remove(temporary, error);
    fail("cannot rename the temporary file onto it", cause);
  }
  return saved;
}

std::vector<PipelineFolderEntry> ScanPipelineFolder(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths;
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error) {
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read the folder " + dir.string() + ": " + error.message(),
                           {dir.string(), 0, 0},
                           "create it with `sluice starlake import`, or name another folder",
                           {}});
  }
  for (const std::filesystem::directory_entry& entry : it) {
    const std::string extension = entry.path().extension().string();
    if ((extension == ".yml" || extension == ".yaml") && entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<PipelineFolderEntry> entries;
  std::map<std::string, std::string> job_files;  // job name → the file that gave it first
  for (const std::filesystem::path& path : paths) {
    PipelineFolderEntry entry{path, std::nullopt, {}};
    try {
      entry.pipeline = ReadPipelineFile(path);
    } catch (const Error& failure) {
      entry.errors = failure.diagnostics();
    }
    if (entry.pipeline) {
      for (const StarlakeJob& job : BuildStarlakeJobGraph(*entry.pipeline).jobs) {
        auto [first, added] = job_files.emplace(job.name, path.string());
        if (added) continue;
        entry.errors.push_back(
            Diagnostic{kDuplicateJob,
                       "job `" + job.name + "` is given by both " + first->second + " and " + path.string(),
                       {path.string(), 0, 0},
                       "each job name must be unique across the folder: rename one pipeline",
                       {}});
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<StarlakeDagFile> ReadPipelineFolder(const std::filesystem::path& dir) {
  std::vector<StarlakeDagFile> pipelines;
  std::vector<Diagnostic> errors;
  for (PipelineFolderEntry& entry : ScanPipelineFolder(dir)) {
    errors.insert(errors.end(), entry.errors.begin(), entry.errors.end());
    if (entry.pipeline) pipelines.push_back(std::move(*entry.pipeline));
  }
  if (!errors.empty()) {
    SortByLocation(errors);
    throw Error(std::move(errors));
  }
  return pipelines;
}

}  // namespace sluice::orchestrate
