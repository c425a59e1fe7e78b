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
// Load DAGs (schedules): one job per schedule, named <pipeline id>[_<SanitizeId(schedule)>]; per domain (§4.1),
//   `start` → the pre-load check (`check_<domain>[_<schedule>]_{incoming_files|pending_files|ack_file}`, when
//   pre_load_strategy is not none) → with `imported` only, the stage task `import_<domain>[_<schedule>]` →
//   `load_<domain>_<table>` → `end`; the trigger is the schedule's cron.
// Nodes are listed `start`, then tasks in the order the generated job creates them, then `end`; each edge once.
//
// Tasks: what a runner executes at each node (StarlakeTask, one per node), and the dataset the node materializes
// when it finishes:
//   - a load task materializes `domain.table` (uri DatasetUri("domain.table")); in a load DAG its cron is the
//     schedule's; a table node of a transform DAG splits its sink at the first dot into domain and table;
//   - a transform task materializes its sink, with the node's computed cron;
//   - `end` materializes a dataset named after the job (uri = the job name, not sanitized further), with the job's
//     cron, so that jobs can chain;
//   - `start`, pre-load and stage tasks materialize nothing.
// The computed cron of a task_deps node (§6.3) is its own cron; else, when it has children and every child has a
// computed cron, the most frequent of those (shortest time between ticks; among equals, the one whose next tick is
// furthest, both measured from 1970-01-01T00:00Z so the graph never depends on when it is built); else none. The
// reference's daily cron derived from `freshness` and the current time is not reproduced.
// Thread-safety: pure functions over immutable values.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "orchestrate/starlake_dag_file.hpp"

namespace sluice::orchestrate {

enum class StarlakeTaskKind { kStart, kEnd, kPreLoad, kStage, kLoad, kTransform };

// A dataset a task materializes or a sensor watches (§7).
struct StarlakeDatasetRef {
  std::string name;                 // `domain.table`, a sink, or a job name
  std::string uri;                  // DatasetUri(name), except a job's dataset: the job name itself
  std::optional<std::string> cron;  // how often it is produced, when known
  int64_t freshness = 0;            // seconds

  bool operator==(const StarlakeDatasetRef&) const = default;
};

// What a runner needs to execute one node.
struct StarlakeTask {
  std::string id;  // the node id
  StarlakeTaskKind kind = StarlakeTaskKind::kStart;
  std::string domain;                                                   // pre-load, stage, load
  std::vector<std::string> tables;                                      // pre-load, stage: the domain's; load: one
  std::string transform_name;                                           // transform: the task_deps name
  StarlakePreLoadStrategy strategy = StarlakePreLoadStrategy::kNone;   // pre-load: never kNone
  std::optional<StarlakeDatasetRef> dataset;                            // materialized on success (rules above)

  bool operator==(const StarlakeTask&) const = default;
};

struct StarlakeJob {
  std::string name;
  std::vector<std::string> nodes;
  std::vector<std::pair<std::string, std::string>> edges;  // (from, to): `to` runs after `from` produced output
  std::vector<std::string> sensor_assets;                  // dataset URIs whose materialization triggers the job
  std::optional<std::string> cron;                         // the schedule; unset when there is none
  std::vector<StarlakeTask> tasks;                         // one per node, in the order of `nodes`
  std::vector<StarlakeDatasetRef> sensor_datasets;         // sensor_assets' datasets, same order, with cron/freshness

  bool operator==(const StarlakeJob&) const = default;
};

struct StarlakeJobGraph {
  std::vector<StarlakeJob> jobs;

  bool operator==(const StarlakeJobGraph&) const = default;
};

// The jobs of `file` (rules above). Never throws: the file was validated when read.
StarlakeJobGraph BuildStarlakeJobGraph(const StarlakeDagFile& file);

// `{"jobs": [{"name", "nodes", "edges": [[from, to], …], "sensor_assets", "cron": string or null}]}`, keys in
// that order. Tasks and sensor datasets are not rendered.
nlohmann::ordered_json JobGraphJson(const StarlakeJobGraph& graph);

// The graph for people: per job its trigger, its nodes and its edges, one a line.
std::string DescribeJobGraph(const StarlakeJobGraph& graph);

}  // namespace sluice::orchestrate
