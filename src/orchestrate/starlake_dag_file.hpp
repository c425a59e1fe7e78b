// What `starlake dag-generate` produces, read into plain values: the task_deps JSON of a transform DAG
// (reference §6.3), or a generated Dagster DAG module (`.py`) whose literal `options`, `cron`, `schedules` and
// `dependencies` assignments are read without running Python (python_literal.hpp).
//
// A module with `dependencies` is a transform DAG; one with `schedules` is a load DAG (one pipeline per
// schedule). Options are resolved here by the reference's rule (§3): an option's value when present and not an
// empty string, else its default; booleans compare case-insensitively with "true".
//
// Errors (sluice::Error, located file:line:col), besides python_literal.hpp's SLU-STARLAKE-001/-002/-003/-009 and
// core's SLU-IO-001 for a file that cannot be read:
//   SLU-STARLAKE-004 task_deps text that is not JSON (located at the offending byte)
//   SLU-STARLAKE-005 task_deps or schedules of the wrong shape (the message names the path, e.g. `[1].children[0]`),
//                    or a task_deps dependency cycle (named)
//   SLU-STARLAKE-006 a cron that is not "None" and not a cron expression
//   SLU-STARLAKE-007 an option whose value is not one the option takes
//   SLU-STARLAKE-008 a module that assigns neither `dependencies` nor `schedules`, or both
// Thread-safety: pure functions over immutable values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/environment.hpp"

namespace sluice::orchestrate {

enum class StarlakeDependencyKind { kTask, kTable };

// One node of the task_deps tree: a transform task or a table, and the dependencies it reads (`children`).
struct StarlakeDependency {
  std::string name;  // e.g. `kpi.order_summary`
  StarlakeDependencyKind kind = StarlakeDependencyKind::kTable;
  std::string sink;                 // `sink`; the name when absent, null or "None" (CLI ≤ 1.5.15 wrote "None")
  std::optional<std::string> cron;  // unset for "None"
  std::optional<std::string> stream;
  int64_t freshness = 0;  // seconds
  std::vector<StarlakeDependency> children;

  bool operator==(const StarlakeDependency&) const = default;
};

// A transform DAG: the top-level task_deps nodes (its first-level tasks).
struct StarlakeTransformDag {
  std::vector<StarlakeDependency> dependencies;

  bool operator==(const StarlakeTransformDag&) const = default;
};

struct StarlakeDomain {
  std::string name;
  std::vector<std::string> tables;

  bool operator==(const StarlakeDomain&) const = default;
};

// One schedule of a load DAG.
struct StarlakeSchedule {
  std::optional<std::string> name;  // unset for "None"
  std::optional<std::string> cron;  // unset for "None"
  std::vector<StarlakeDomain> domains;

  bool operator==(const StarlakeSchedule&) const = default;
};

struct StarlakeLoadDag {
  std::vector<StarlakeSchedule> schedules;

  bool operator==(const StarlakeLoadDag&) const = default;
};

enum class StarlakePreLoadStrategy { kNone, kImported, kPending, kAck };

// The options the job graph depends on, resolved.
struct StarlakeDagOptions {
  bool run_dependencies_first = false;
  StarlakePreLoadStrategy pre_load_strategy = StarlakePreLoadStrategy::kNone;

  bool operator==(const StarlakeDagOptions&) const = default;
};

struct StarlakeDagFile {
  std::string pipeline_id;                  // the file name without its extension, in lower case
  nlohmann::json options = nlohmann::json::object();  // the module's `options` dict as written ({} for JSON input)
  StarlakeDagOptions resolved;
  std::optional<std::string> cron;          // the module's `cron`; unset for "None", None, or JSON input
  std::variant<StarlakeTransformDag, StarlakeLoadDag> dag;

  bool operator==(const StarlakeDagFile&) const = default;
};

// Reads `text` as the file `file_name` (only its name is used: the extension picks the format, `.py` a module,
// anything else task_deps JSON; the stem gives the pipeline id). Throws sluice::Error (codes above).
StarlakeDagFile ParseStarlakeDagFile(const std::string& file_name, std::string_view text);

// ParseStarlakeDagFile of the file's contents; diagnostics name the path as given.
StarlakeDagFile ReadStarlakeDagFile(const std::filesystem::path& path);

// An option whose value the option does not take: which, and what to say about it.
struct StarlakeOptionProblem {
  std::string key;      // e.g. `pre_load_strategy`
  std::string message;  // names the option and the value
  std::string hint;     // the valid values
};

// `options` (a JSON object) resolved by the reference's rule (above): the resolved options, or the first option
// whose value it does not take. Every reader of options (this file's, the Sluice pipeline file's) resolves here.
std::variant<StarlakeDagOptions, StarlakeOptionProblem> ResolveStarlakeOptions(const nlohmann::json& options);

// A dependency cycle of the task_deps tree over every occurrence of each name, as the names along it with the
// first one repeated at the end (`a`, `b`, `a`); empty when there is none.
std::vector<std::string> FindDependencyCycle(const std::vector<StarlakeDependency>& dependencies);

// Whether `cron` is "None" in any case with surrounding blanks: the generated files' way of saying no cron.
bool IsNoneCron(std::string_view cron);

// An option's text by the reference's rule (§3): the value when present, not null and not an empty string, else
// nullopt (the default applies). Strings as written; numbers and booleans as JSON writes them (`true`, `300`).
std::optional<std::string> OptionText(const nlohmann::json& options, const std::string& key);

// §3's last step for options without a default: the environment variable `name` when set and not empty.
std::optional<std::string> OptionVariable(const EnvironmentLookup& environment, const std::string& name);

}  // namespace sluice::orchestrate
