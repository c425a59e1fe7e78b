// The job graph of a Starlake DAG file (reference §6.2–§6.4): one job per pipeline, with its task ids, the
// `start` and `end` nodes, the edges the generated Dagster job wires, and its trigger — the dataset URIs a sensor
// watches, or a cron, or neither (manual only).
//
// Transform DAGs (task_deps):
//   - A task id is SanitizeId(name) + `_task` or `_table` (`kpi_order_summary_task`, `starbake_orders_table`);
//     a name occurring several times in the tree is one node, described by its first-level occurrence if it has
//     one, else by its first occurrence in document order.
//   - Without `run_dependencies_first` only first-level tasks are nodes, and their parents are pruned to
//     first-level tasks; with it every dependency of the tree is a node.
//   - The graph roots ("graphs") are the candidates (nodes with parents, or first-level nodes) that are no other
//     candidate's parent, or that have parents. For each root, in document order: `start` → each parent (or →
//     the root when it has none), each parent → root, root → `end`. These are the generated job's edges exactly,
//     including ones another path already implies (`start` → a task that also waits on its tables).
//   - Trigger: the module's cron when set; else, without `run_dependencies_first`, the URIs (DatasetUri of the
//     sink) of the first-level tasks' direct children, minus those produced by a first-level task, each once,
//     in document order; else none.
// Load DAGs (schedules): one job per schedule, named <pipeline id>[_<SanitizeId(schedule)>]; `start` → the
//   domain's pre-load check (`check_<domain>[_<schedule>]_{incoming_files|pending_files|ack_file}`, when
//   pre_load_strategy is not none) → `load_<domain>_<table>` → `end`; the trigger is the schedule's cron.
// Nodes are listed `start`, then tasks in the order the generated job creates them, then `end`; each edge once.
// Thread-safety: pure functions over immutable values.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/starlake_dag_file.hpp"

namespace sluice::orchestrate {

struct StarlakeJob {
  std::string name;
  std::vector<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> edges;  // (from, to): `to` runs after `from` produced output
  std::vector<std::string> sensor_assets;                  // dataset URIs whose materialization triggers the job
  std::optional<std::string> cron;                         // the schedule; unset when there is none

  bool operator==(const StarlakeJob&) const = default;
};

struct StarlakeJobGraph {
  std::vector<StarlakeJob> jobs;

  bool operator==(const StarlakeJobGraph&) const = default;
};

// The jobs of `file` (rules above). Never throws: the file was validated when read.
StarlakeJobGraph BuildStarlakeJobGraph(const StarlakeDagFile& file);

// `{"jobs": [{"name", "nodes", "edges": [[from, to], …], "sensor_assets", "cron": string or null}]}`, keys in
// that order.
nlohmann::ordered_json JobGraphJson(const StarlakeJobGraph& graph);

// The graph for people: per job its trigger, its nodes and its edges, one a line.
std::string DescribeJobGraph(const StarlakeJobGraph& graph);

}  // namespace sluice::orchestrate
