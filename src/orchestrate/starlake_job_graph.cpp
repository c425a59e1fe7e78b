#include "orchestrate/starlake_job_graph.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <variant>

#include "core/cron_schedule.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/starlake_dataset.hpp"

namespace sluice::orchestrate {

namespace {

// A job under construction: nodes and edges kept in creation order, each once.
class JobBuilder {
 public:
  explicit JobBuilder(std::string name) { job_.name = std::move(name); }

  void Edge(const std::string& from, const std::string& to) {
    Node(from);
    Node(to);
    if (edge_set_.insert({from, to}).second) job_.edges.emplace_back(from, to);
  }

  // Adds the node `task.id` with what it runs; a node already described keeps its first description.
  void Task(StarlakeTask task) {
    Node(task.id);
    descriptions_.emplace(task.id, std::move(task));
  }

  // Every node must have been described by Task, except `start` and `end`.
  StarlakeJob Finish(std::vector<StarlakeDatasetRef> sensor_datasets, std::optional<std::string> cron) && {
    job_.nodes.push_back(kStart);
    job_.nodes.insert(job_.nodes.end(), tasks_.begin(), tasks_.end());
    job_.nodes.push_back(kEnd);
    for (const StarlakeDatasetRef& dataset : sensor_datasets) job_.sensor_assets.push_back(dataset.uri);
    job_.sensor_datasets = std::move(sensor_datasets);
    job_.cron = std::move(cron);
    job_.tasks.push_back(StarlakeTask{.id = kStart, .kind = StarlakeTaskKind::kStart});
    for (const std::string& id : tasks_) job_.tasks.push_back(std::move(descriptions_.at(id)));
    job_.tasks.push_back(StarlakeTask{.id = kEnd,
                                      .kind = StarlakeTaskKind::kEnd,
                                      .dataset = StarlakeDatasetRef{job_.name, job_.name, job_.cron, 0}});
    return std::move(job_);
  }

  static constexpr const char* kStart = "start";
  static constexpr const char* kEnd = "end";

 private:
  void Node(const std::string& id) {
    if (id == kStart || id == kEnd) return;
    if (node_set_.insert(id).second) tasks_.push_back(id);
  }

  StarlakeJob job_;
  std::vector<std::string> tasks_;
  std::set<std::string> node_set_;
  std::set<std::pair<std::string, std::string>> edge_set_;
  std::map<std::string, StarlakeTask> descriptions_;
};

// The most frequent of valid crons (rule in the header); nullopt for none.
std::optional<std::string> MostFrequentCron(const std::vector<std::string>& crons) {
  using std::chrono::system_clock;
  const system_clock::time_point origin{};  // 1970-01-01T00:00Z
  const TimeZone utc = TimeZone::Utc();
  std::optional<std::string> best;
  system_clock::duration best_interval{};
  system_clock::time_point best_next{};
  for (const std::string& cron : crons) {
    const std::vector<system_clock::time_point> ticks = CronSchedule::Parse(cron).Preview(origin, 2, utc);
    if (ticks.size() < 2) continue;
    const system_clock::duration interval = ticks[1] - ticks[0];
    if (!best || interval < best_interval || (interval == best_interval && ticks[0] > best_next)) {
      best = cron;
      best_interval = interval;
      best_next = ticks[0];
    }
  }
  return best;
}

std::optional<std::string> ComputedCron(const StarlakeDependency& dependency) {
  if (dependency.cron) return dependency.cron;
  if (dependency.children.empty()) return std::nullopt;
  std::vector<std::string> crons;
  for (const StarlakeDependency& child : dependency.children) {
    std::optional<std::string> cron = ComputedCron(child);
    if (!cron) return std::nullopt;
    crons.push_back(*cron);
  }
  return MostFrequentCron(crons);
}

StarlakeDatasetRef LoadDataset(const std::string& domain, const std::string& table, std::optional<std::string> cron,
                               int64_t freshness) {
  const std::string name = domain + "." + table;
  return StarlakeDatasetRef{name, DatasetUri(name), std::move(cron), freshness};
}

StarlakeDatasetRef SinkDataset(const StarlakeDependency& dependency) {
  return StarlakeDatasetRef{dependency.sink, DatasetUri(dependency.sink), ComputedCron(dependency),
                            dependency.freshness};
}

std::string TaskId(const StarlakeDependency& dependency) {
  return SanitizeId(dependency.name) + (dependency.kind == StarlakeDependencyKind::kTask ? "_task" : "_table");
}

// A task_deps node as the task that produces it: a transform of its name, or the load of its sink's table.
StarlakeTask DependencyTask(const StarlakeDependency& dependency) {
  StarlakeTask task{.id = TaskId(dependency)};
  if (dependency.kind == StarlakeDependencyKind::kTask) {
    task.kind = StarlakeTaskKind::kTransform;
    task.transform_name = dependency.name;
    task.dataset = SinkDataset(dependency);
    return task;
  }
  task.kind = StarlakeTaskKind::kLoad;
  const size_t dot = dependency.sink.find('.');
  task.domain = dot == std::string::npos ? "" : dependency.sink.substr(0, dot);
  const std::string table = dot == std::string::npos ? dependency.sink : dependency.sink.substr(dot + 1);
  task.tables = {table};
  task.dataset = LoadDataset(task.domain, table, ComputedCron(dependency), dependency.freshness);
  return task;
}

// The task_deps tree as a graph of names: each name once, its description and its parents (children in the tree).
class DependencyIndex {
 public:
  explicit DependencyIndex(const std::vector<StarlakeDependency>& first_level) {
    for (const StarlakeDependency& dependency : first_level) {
      first_level_.insert(dependency.name);
      by_name_.emplace(dependency.name, &dependency);
    }
    for (const StarlakeDependency& dependency : first_level) Visit(dependency);
  }

  const std::vector<std::string>& names() const { return order_; }
  bool IsFirstLevel(const std::string& name) const { return first_level_.count(name) > 0; }
  const StarlakeDependency& Get(const std::string& name) const { return *by_name_.at(name); }

  std::vector<std::string> Parents(const std::string& name) const {
    std::vector<std::string> parents;
    for (const StarlakeDependency& child : Get(name).children) {
      if (std::find(parents.begin(), parents.end(), child.name) == parents.end()) parents.push_back(child.name);
    }
    return parents;
  }

 private:
  void Visit(const StarlakeDependency& dependency) {
    if (!seen_.insert(dependency.name).second) return;
    order_.push_back(dependency.name);
    by_name_.emplace(dependency.name, &dependency);  // keeps a first-level description already there
    for (const StarlakeDependency& child : Get(dependency.name).children) Visit(child);
    for (const StarlakeDependency& child : dependency.children) Visit(child);
  }

  std::set<std::string> first_level_;
  std::set<std::string> seen_;
  std::vector<std::string> order_;  // document order of first appearance
  std::map<std::string, const StarlakeDependency*> by_name_;
};

StarlakeJob TransformJob(const StarlakeDagFile& file, const StarlakeTransformDag& dag) {
  const bool all_dependencies = file.resolved.run_dependencies_first;
  const DependencyIndex index(dag.dependencies);

  // The candidates and their (pruned) parents.
  std::vector<std::pair<std::string, std::vector<std::string>>> candidates;
  std::set<std::string> parent_names;
  for (const std::string& name : index.names()) {
    std::vector<std::string> parents = index.Parents(name);
    if (parents.empty() && !index.IsFirstLevel(name)) continue;
    if (!all_dependencies) {
      if (!index.IsFirstLevel(name)) continue;
      std::erase_if(parents, [&](const std::string& parent) { return !index.IsFirstLevel(parent); });
    }
    parent_names.insert(parents.begin(), parents.end());
    candidates.emplace_back(name, std::move(parents));
  }

  JobBuilder job(file.pipeline_id);
  for (const auto& [name, parents] : candidates) {
    if (parent_names.count(name) > 0 && parents.empty()) continue;  // reached as another root's parent
    const std::string task = TaskId(index.Get(name));
    for (const std::string& parent : parents) job.Task(DependencyTask(index.Get(parent)));
    job.Task(DependencyTask(index.Get(name)));
    if (parents.empty()) job.Edge(JobBuilder::kStart, task);
    for (const std::string& parent : parents) {
      job.Edge(JobBuilder::kStart, TaskId(index.Get(parent)));
      job.Edge(TaskId(index.Get(parent)), task);
    }
    job.Edge(task, JobBuilder::kEnd);
  }

  std::vector<StarlakeDatasetRef> sensor_datasets;
  if (!file.cron && !all_dependencies) {
    std::set<std::string> excluded;
    for (const StarlakeDependency& task : dag.dependencies) excluded.insert(DatasetUri(task.sink));
    for (const StarlakeDependency& task : dag.dependencies) {
      for (const StarlakeDependency& child : task.children) {
        StarlakeDatasetRef dataset = SinkDataset(child);
        if (excluded.insert(dataset.uri).second) sensor_datasets.push_back(std::move(dataset));
      }
    }
  }
  return std::move(job).Finish(std::move(sensor_datasets), file.cron);
}

std::string PreLoadTaskId(const std::string& domain, StarlakePreLoadStrategy strategy) {
  switch (strategy) {
    case StarlakePreLoadStrategy::kImported: return SanitizeId("check_" + domain + "_incoming_files");
    case StarlakePreLoadStrategy::kPending: return SanitizeId("check_" + domain + "_pending_files");
    case StarlakePreLoadStrategy::kAck: return SanitizeId("check_" + domain + "_ack_file");
    case StarlakePreLoadStrategy::kNone: break;
  }
  return "";
}

std::vector<StarlakeJob> LoadJobs(const StarlakeDagFile& file, const StarlakeLoadDag& dag) {
  std::vector<StarlakeJob> jobs;
  for (const StarlakeSchedule& schedule : dag.schedules) {
    JobBuilder job(schedule.name ? file.pipeline_id + "_" + SanitizeId(*schedule.name) : file.pipeline_id);
    for (const StarlakeDomain& domain : schedule.domains) {
      const StarlakePreLoadStrategy strategy = file.resolved.pre_load_strategy;
      const std::string group = schedule.name ? domain.name + "_" + *schedule.name : domain.name;
      // The node the loads wait on: `start`, the pre-load check, or (imported) the stage task after it.
      std::string before_loads = JobBuilder::kStart;
      if (strategy != StarlakePreLoadStrategy::kNone) {
        const std::string check = PreLoadTaskId(group, strategy);
        job.Task(StarlakeTask{.id = check,
                              .kind = StarlakeTaskKind::kPreLoad,
                              .domain = domain.name,
                              .tables = domain.tables,
                              .strategy = strategy});
        job.Edge(JobBuilder::kStart, check);
        before_loads = check;
      }
      if (strategy == StarlakePreLoadStrategy::kImported) {
        const std::string stage = SanitizeId("import_" + group);
        job.Task(StarlakeTask{
            .id = stage, .kind = StarlakeTaskKind::kStage, .domain = domain.name, .tables = domain.tables});
        job.Edge(before_loads, stage);
        before_loads = stage;
      }
      for (const std::string& table : domain.tables) {
        const std::string load = SanitizeId("load_" + domain.name + "_" + table);
        job.Task(StarlakeTask{.id = load,
                              .kind = StarlakeTaskKind::kLoad,
                              .domain = domain.name,
                              .tables = {table},
                              .dataset = LoadDataset(domain.name, table, schedule.cron, 0)});
        job.Edge(before_loads, load);
        job.Edge(load, JobBuilder::kEnd);
      }
      if (domain.tables.empty()) job.Edge(before_loads, JobBuilder::kEnd);
    }
    jobs.push_back(std::move(job).Finish({}, schedule.cron));
  }
  return jobs;
}

}  // namespace

StarlakeJobGraph BuildStarlakeJobGraph(const StarlakeDagFile& file) {
  struct Jobs {
    const StarlakeDagFile& file;
    std::vector<StarlakeJob> operator()(const StarlakeTransformDag& dag) const { return {TransformJob(file, dag)}; }
    std::vector<StarlakeJob> operator()(const StarlakeLoadDag& dag) const { return LoadJobs(file, dag); }
  };
  return StarlakeJobGraph{std::visit(Jobs{file}, file.dag)};
}

nlohmann::ordered_json JobGraphJson(const StarlakeJobGraph& graph) {
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const StarlakeJob& job : graph.jobs) {
    nlohmann::ordered_json entry;
    entry["name"] = job.name;
    entry["nodes"] = job.nodes;
    entry["edges"] = nlohmann::ordered_json::array();
    for (const auto& [from, to] : job.edges) entry["edges"].push_back({from, to});
    entry["sensor_assets"] = job.sensor_assets;
    entry["cron"] = job.cron ? nlohmann::ordered_json(*job.cron) : nlohmann::ordered_json(nullptr);
    jobs.push_back(std::move(entry));
  }
  nlohmann::ordered_json root;
  root["jobs"] = std::move(jobs);
  return root;
}

std::string DescribeJobGraph(const StarlakeJobGraph& graph) {
  std::string out;
  for (const StarlakeJob& job : graph.jobs) {
    out += "job " + job.name + "\n";
    if (job.cron) {
      out += "  trigger: cron `" + *job.cron + "`\n";
    } else if (!job.sensor_assets.empty()) {
      out += "  trigger: datasets";
      for (size_t i = 0; i < job.sensor_assets.size(); ++i) out += (i == 0 ? " " : ", ") + job.sensor_assets[i];
      out += "\n";
    } else {
      out += "  trigger: none (manual runs only)\n";
    }
    out += "  nodes:";
    for (size_t i = 0; i < job.nodes.size(); ++i) out += (i == 0 ? " " : ", ") + job.nodes[i];
    out += "\n  edges:\n";
    for (const auto& [from, to] : job.edges) out += "    " + from + " -> " + to + "\n";
  }
  return out;
}

}  // namespace sluice::orchestrate
