#include "orchestrate/starlake_dag_file.hpp"

#include "core/cron_schedule.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/text.hpp"
#include "orchestrate/python_literal.hpp"

namespace sluice::orchestrate {

namespace {

constexpr const char* kJsonSyntax = "SLU-STARLAKE-004";
constexpr const char* kShape = "SLU-STARLAKE-005";
constexpr const char* kBadCron = "SLU-STARLAKE-006";
constexpr const char* kBadOption = "SLU-STARLAKE-007";
constexpr const char* kNothingToImport = "SLU-STARLAKE-008";

// Where diagnostics about one value point: the file, its text, and the offset the value starts at.
struct ValueSite {
  const std::string& file;
  std::string_view text;
  size_t offset = 0;

  [[noreturn]] void Fail(const char* code, const std::string& message, const std::string& hint) const {
    throw Error(MakeDiagnostic(code, message, LocationAt(file, text, offset), hint, text));
  }
};

// A cron setting: null or "None" is no cron; anything else must be a cron expression.
std::optional<std::string> CronValue(const nlohmann::json& value, const std::string& what, const ValueSite& site) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_string()) site.Fail(kShape, what + " must be a string or None", "");
  const std::string cron = value.get<std::string>();
  if (IsNoneCron(cron)) return std::nullopt;
  try {
    CronSchedule::Parse(cron);  // the one cron grammar (core/cron_schedule.hpp)
  } catch (const Error& error) {
    site.Fail(kBadCron, what + " `" + cron + "` is not a cron expression: " + error.diagnostics().front().message,
              "write five fields (minute hour day-of-month month day-of-week, e.g. `0 0 * * *`), an alias such as "
              "`@daily`, or \"None\"");
  }
  return cron;
}

// The task_deps reader: the shape of each node, reported with its path in the tree.
class TaskDepsReader {
 public:
  explicit TaskDepsReader(const ValueSite& site) : site_(site) {}

  std::vector<StarlakeDependency> Read(const nlohmann::json& root) {
    if (!root.is_array()) Fail("", "task_deps must be a JSON array of nodes, found " + std::string(root.type_name()));
    std::vector<StarlakeDependency> nodes;
    for (size_t i = 0; i < root.size(); ++i) nodes.push_back(Node(root[i], "[" + std::to_string(i) + "]"));
    return nodes;
  }

 private:
  [[noreturn]] void Fail(const std::string& path, const std::string& message) const {
    site_.Fail(kShape, (path.empty() ? "" : "task_deps node " + path + ": ") + message,
               "task_deps nodes are {\"data\": {\"name\", \"typ\", \"sink\", \"cron\", …}, \"children\": [...]}, as "
               "`starlake dag-generate` writes them");
  }

  std::optional<std::string> OptionalString(const nlohmann::json& data, const char* key, const std::string& path) {
    auto it = data.find(key);
    if (it == data.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) Fail(path, std::string("`data.") + key + "` must be a string");
    return it->get<std::string>();
  }

  StarlakeDependency Node(const nlohmann::json& node, const std::string& path) {
    if (!node.is_object()) Fail(path, "a node must be an object, found " + std::string(node.type_name()));
    auto data_it = node.find("data");
    if (data_it == node.end() || !data_it->is_object()) Fail(path, "`data` must be an object");
    const nlohmann::json& data = *data_it;
    StarlakeDependency dependency;
    std::optional<std::string> name = OptionalString(data, "name", path);
    if (!name || name->empty()) Fail(path, "`data.name` is missing");
    dependency.name = *name;
    dependency.kind = OptionalString(data, "typ", path) == std::optional<std::string>("task")
                          ? StarlakeDependencyKind::kTask
                          : StarlakeDependencyKind::kTable;
    std::optional<std::string> sink = OptionalString(data, "sink", path);
    dependency.sink = sink && !IsNoneCron(*sink) && !sink->empty() ? *sink : dependency.name;
    if (auto cron = data.find("cron"); cron != data.end()) {
      dependency.cron = CronValue(*cron, "task_deps node " + path + ": `data.cron`", site_);
    }
    dependency.stream = OptionalString(data, "stream", path);
    if (auto freshness = data.find("freshness"); freshness != data.end() && !freshness->is_null()) {
      if (!freshness->is_number_integer()) Fail(path, "`data.freshness` must be an integer (seconds)");
      dependency.freshness = freshness->get<int64_t>();
    }
    if (auto children = node.find("children"); children != node.end() && !children->is_null()) {
      if (!children->is_array()) Fail(path, "`children` must be an array");
      for (size_t i = 0; i < children->size(); ++i) {
        dependency.children.push_back(Node((*children)[i], path + ".children[" + std::to_string(i) + "]"));
      }
    }
    return dependency;
  }

  const ValueSite& site_;
};

void CollectEdges(const StarlakeDependency& node, std::map<std::string, std::set<std::string>>& edges) {
  std::set<std::string>& children = edges[node.name];
  for (const StarlakeDependency& child : node.children) {
    children.insert(child.name);
    CollectEdges(child, edges);
  }
}

// A job cannot wait on itself: a name that depends on itself through the tree is an error naming the cycle.
void CheckAcyclic(const std::vector<StarlakeDependency>& nodes, const ValueSite& site) {
  const std::vector<std::string> cycle = FindDependencyCycle(nodes);
  if (cycle.empty()) return;
  std::string names;
  for (const std::string& name : cycle) names += (names.empty() ? "" : " -> ") + name;
  site.Fail(kShape, "task_deps has a dependency cycle: " + names,
            "a task cannot depend on itself; fix the models' references and generate the DAG again");
}

// task_deps JSON text at `site` (a whole file, or a string inside a module). `verbatim` tells whether offsets in
// the text map onto the file from site.offset; when not, syntax errors are located at site.offset.
std::vector<StarlakeDependency> ParseTaskDepsText(const std::string& json_text, const ValueSite& site,
                                                  bool verbatim) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& error) {
    // what() is "[json.exception.parse_error.101] parse error at line L, column C: <reason>"; the location is ours.
    std::string message = error.what();
    if (size_t at = message.find("parse error"); at != std::string::npos) {
      if (size_t colon = message.find(": ", at); colon != std::string::npos) message = message.substr(colon + 2);
    }
    const size_t byte = error.byte > 0 ? std::min<size_t>(error.byte - 1, json_text.size()) : 0;
    ValueSite at{site.file, site.text, verbatim ? site.offset + byte : site.offset};
    at.Fail(kJsonSyntax, "task_deps is not valid JSON: " + message,
            "the dependencies are the JSON `starlake dag-generate` writes (a list of task_deps nodes)");
  }
  std::vector<StarlakeDependency> nodes = TaskDepsReader(site).Read(root);
  CheckAcyclic(nodes, site);
  return nodes;
}

std::optional<std::string> ScheduleName(const nlohmann::json& value, const std::string& path, const ValueSite& site) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_string()) site.Fail(kShape, path + ".schedule must be a string or None", "");
  const std::string name = value.get<std::string>();
  if (name.empty() || IsNoneCron(name)) return std::nullopt;
  return name;
}

StarlakeLoadDag ReadSchedules(const nlohmann::json& value, const ValueSite& site) {
  const std::string hint =
      "schedules are [{'schedule': name, 'cron': cron, 'domains': [{'name': domain, 'tables': [{'name': table}]}]}]";
  if (!value.is_array()) site.Fail(kShape, "`schedules` must be a list", hint);
  StarlakeLoadDag dag;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string path = "schedules[" + std::to_string(i) + "]";
    const nlohmann::json& item = value[i];
    if (!item.is_object()) site.Fail(kShape, path + " must be a dict", hint);
    StarlakeSchedule schedule;
    if (auto name = item.find("schedule"); name != item.end()) schedule.name = ScheduleName(*name, path, site);
    if (auto cron = item.find("cron"); cron != item.end()) schedule.cron = CronValue(*cron, path + ".cron", site);
    auto domains = item.find("domains");
    if (domains == item.end() || !domains->is_array()) site.Fail(kShape, path + ".domains must be a list", hint);
    for (size_t d = 0; d < domains->size(); ++d) {
      const std::string domain_path = path + ".domains[" + std::to_string(d) + "]";
      const nlohmann::json& domain_value = (*domains)[d];
      auto name = domain_value.is_object() ? domain_value.find("name") : domain_value.end();
      if (!domain_value.is_object() || name == domain_value.end() || !name->is_string()) {
        site.Fail(kShape, domain_path + " must be a dict with a string 'name'", hint);
      }
      StarlakeDomain domain{name->get<std::string>(), {}};
      auto tables = domain_value.find("tables");
      if (tables == domain_value.end() || !tables->is_array()) {
        site.Fail(kShape, domain_path + ".tables must be a list", hint);
      }
      for (size_t t = 0; t < tables->size(); ++t) {
        const nlohmann::json& table = (*tables)[t];
        auto table_name = table.is_object() ? table.find("name") : table.end();
        if (!table.is_object() || table_name == table.end() || !table_name->is_string()) {
          site.Fail(kShape, domain_path + ".tables[" + std::to_string(t) + "] must be a dict with a string 'name'",
                    hint);
        }
        domain.tables.push_back(table_name->get<std::string>());
      }
      schedule.domains.push_back(std::move(domain));
    }
    dag.schedules.push_back(std::move(schedule));
  }
  return dag;
}

StarlakeDagOptions ResolveOptions(const nlohmann::json& options, const ValueSite& site) {
  auto resolved = ResolveStarlakeOptions(options);
  if (const auto* problem = std::get_if<StarlakeOptionProblem>(&resolved)) {
    site.Fail(kBadOption, problem->message, problem->hint);
  }
  return std::get<StarlakeDagOptions>(resolved);
}

std::string PipelineId(const std::string& file_name) {
  return AsciiLower(std::filesystem::path(file_name).stem().string());
}

StarlakeDagFile ParseModule(const std::string& file_name, std::string_view text) {
  PythonLiteralRules rules{{"options", "cron", "schedules", "dependencies"}, {"StarlakeDependencies"}};
  std::vector<PythonAssignment> assignments = ReadPythonAssignments(file_name, text, rules);
  // Python rebinds a name assigned twice: the last assignment is the one the module ends with.
  auto last = [&](const std::string& name) -> const PythonAssignment* {
    const PythonAssignment* found = nullptr;
    for (const PythonAssignment& assignment : assignments) {
      if (assignment.name == name) found = &assignment;
    }
    return found;
  };
  StarlakeDagFile file;
  file.pipeline_id = PipelineId(file_name);
  if (const PythonAssignment* options = last("options")) {
    const ValueSite site{file_name, text, options->value_offset};
    if (!options->value.is_object()) site.Fail(kShape, "`options` must be a dict", "");
    file.options = options->value;
    file.resolved = ResolveOptions(file.options, site);
  }
  if (const PythonAssignment* cron = last("cron")) {
    file.cron = CronValue(cron->value, "`cron`", ValueSite{file_name, text, cron->value_offset});
  }
  const PythonAssignment* dependencies = last("dependencies");
  const PythonAssignment* schedules = last("schedules");
  if ((dependencies == nullptr) == (schedules == nullptr)) {
    const size_t offset = dependencies != nullptr ? dependencies->name_offset : 0;
    ValueSite{file_name, text, offset}.Fail(
        kNothingToImport,
        dependencies != nullptr ? "the module assigns both `dependencies` and `schedules`"
                                : "the module assigns neither `dependencies` (a transform DAG) nor `schedules` (a load DAG)",
        "import a module generated by `starlake dag-generate`, or its task_deps JSON");
  }
  if (dependencies != nullptr) {
    const ValueSite site{file_name, text, dependencies->value_offset};
    StarlakeTransformDag dag;
    if (dependencies->value.is_string()) {
      const ValueSite inner{file_name, text, dependencies->verbatim_offset.value_or(dependencies->value_offset)};
      dag.dependencies =
          ParseTaskDepsText(dependencies->value.get<std::string>(), inner, dependencies->verbatim_offset.has_value());
    } else {
      dag.dependencies = TaskDepsReader(site).Read(dependencies->value);
      CheckAcyclic(dag.dependencies, site);
    }
    file.dag = std::move(dag);
  } else {
    file.dag = ReadSchedules(schedules->value, ValueSite{file_name, text, schedules->value_offset});
  }
  return file;
}

}  // namespace

std::variant<StarlakeDagOptions, StarlakeOptionProblem> ResolveStarlakeOptions(const nlohmann::json& options) {
  StarlakeDagOptions resolved;
  if (std::optional<std::string> value = OptionText(options, "run_dependencies_first")) {
    resolved.run_dependencies_first = AsciiLower(*value) == "true";
  }
  if (std::optional<std::string> value = OptionText(options, "pre_load_strategy")) {
    const std::string strategy = AsciiLower(*value);
    if (strategy == "none") {
      resolved.pre_load_strategy = StarlakePreLoadStrategy::kNone;
    } else if (strategy == "imported") {
      resolved.pre_load_strategy = StarlakePreLoadStrategy::kImported;
    } else if (strategy == "pending") {
      resolved.pre_load_strategy = StarlakePreLoadStrategy::kPending;
    } else if (strategy == "ack") {
      resolved.pre_load_strategy = StarlakePreLoadStrategy::kAck;
    } else {
      return StarlakeOptionProblem{
          "pre_load_strategy",
          "option `pre_load_strategy` is `" + *value + "`, which the dagster orchestrator does not take",
          "valid values: none, imported, pending, ack"};
    }
  }
  return resolved;
}

std::vector<std::string> FindDependencyCycle(const std::vector<StarlakeDependency>& dependencies) {
  std::map<std::string, std::set<std::string>> edges;
  for (const StarlakeDependency& node : dependencies) CollectEdges(node, edges);
  enum class Mark { kVisiting, kDone };
  std::map<std::string, Mark> marks;
  std::vector<std::string> path;
  std::vector<std::string> cycle;
  // Returns true once a cycle is found (it is then in `cycle`).
  std::function<bool(const std::string&)> visit = [&](const std::string& name) {
    if (auto mark = marks.find(name); mark != marks.end()) {
      if (mark->second == Mark::kDone) return false;
      cycle.assign(std::find(path.begin(), path.end(), name), path.end());
      cycle.push_back(name);
      return true;
    }
    marks[name] = Mark::kVisiting;
    path.push_back(name);
    for (const std::string& child : edges[name]) {
      if (visit(child)) return true;
    }
    path.pop_back();
    marks[name] = Mark::kDone;
    return false;
  };
  for (const auto& [name, children] : edges) {
    if (visit(name)) break;
  }
  return cycle;
}

bool IsNoneCron(std::string_view cron) { return AsciiLower(TrimBlanks(cron)) == "none"; }

StarlakeDagFile ParseStarlakeDagFile(const std::string& file_name, std::string_view text) {
  if (std::filesystem::path(file_name).extension() == ".py") return ParseModule(file_name, text);
  StarlakeDagFile file;
  file.pipeline_id = PipelineId(file_name);
  file.dag = StarlakeTransformDag{ParseTaskDepsText(std::string(text), ValueSite{file_name, text, 0}, true)};
  return file;
}

StarlakeDagFile ReadStarlakeDagFile(const std::filesystem::path& path) {
  return ParseStarlakeDagFile(path.string(), ReadFile(path));
}

std::optional<std::string> OptionText(const nlohmann::json& options, const std::string& key) {
  if (!options.is_object()) return std::nullopt;
  auto it = options.find(key);
  if (it == options.end() || it->is_null()) return std::nullopt;
  std::string text = it->is_string() ? it->get<std::string>() : it->dump();
  if (text.empty()) return std::nullopt;
  return text;
}

std::optional<std::string> OptionVariable(const EnvironmentLookup& environment, const std::string& name) {
  std::optional<std::string> value = environment ? environment(name) : std::nullopt;
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace sluice::orchestrate
