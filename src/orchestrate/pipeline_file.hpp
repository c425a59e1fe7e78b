// The Sluice pipeline file: a YAML file holding one Starlake DAG (StarlakeDagFile) — a load pipeline (schedules →
// domains → tables) or a transform pipeline (the task_deps dependency tree) — with its options. It is what
// `sluice starlake import` writes and `sluice pipelines validate` reads; docs/starlake.md documents every key.
//
//   pipeline: shop_kpi          required; [a-z0-9_]+; the job name (a load pipeline's jobs: <pipeline>[_<schedule>])
//   kind: transform             required; transform | load
//   cron: "0 0 * * *"           transform only, optional (none when absent or null)
//   options: {key: value}       optional; Starlake options (reference §3); values are scalars (string, number, bool,
//                               null) or, for the per-transform `{options: …}` entries, mappings and lists
//   dependencies: [node]        transform only, required; node = {name, type: task|table, sink?, cron?,
//                               freshness?, stream?, children?: [node]}
//   schedules: [schedule]       load only, required; schedule = {name?, cron?, domains: [{name, tables: [name]}]}
//
// Scalars are typed as YAML 1.2's core schema types plain scalars (`true`, `10`, `1.5`, `null`); a quoted scalar
// is always a string. Options are resolved as ParseStarlakeDagFile resolves them (ResolveStarlakeOptions).
//
// Errors (sluice::Error, located file:line:col at the offending key or value):
//   SLU-PIPELINE-001 the text is not YAML
//   SLU-PIPELINE-002 an unknown or repeated key (the message lists the allowed keys; the hint suggests a close one)
//   SLU-PIPELINE-003 a value of the wrong type, an empty name, or a value the key does not take (`kind`, `type`)
//   SLU-PIPELINE-004 a required key is missing (located at the mapping that lacks it)
//   SLU-PIPELINE-005 a pipeline id that is not [a-z0-9_]+
//   SLU-PIPELINE-006 a cron that is not a cron expression (core's grammar gives the reason)
//   SLU-PIPELINE-007 an option whose value the option does not take (e.g. pre_load_strategy)
//   SLU-PIPELINE-008 a dependency cycle (named; located at the first node of the cycle)
//   SLU-PIPELINE-009 a key of the other kind: `cron` or `dependencies` in a load pipeline, `schedules` in a
//                    transform one
//   SLU-PIPELINE-010 two files of a folder give the same job name (both files named)
//   SLU-PIPELINE-011 SavePipelineFile: the file exists with other contents and replacing was not asked for
//   SLU-PIPELINE-012 SavePipelineFile: the folder or the file cannot be written (the OS error named)
// and core's SLU-IO-001 for a file or folder that cannot be read.
// Thread-safety: pure functions over values, besides the reads of the files named.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "orchestrate/starlake_dag_file.hpp"

namespace sluice::orchestrate {

// Whether `id` is a pipeline id: one or more of [a-z0-9_].
bool IsPipelineId(std::string_view id);

// Reads `text` as the pipeline file `file_name` (named in diagnostics only). Throws sluice::Error (codes above).
StarlakeDagFile ParsePipelineFile(const std::string& file_name, std::string_view text);

// ParsePipelineFile of the file's contents; diagnostics name the path as given.
StarlakeDagFile ReadPipelineFile(const std::filesystem::path& path);

// The pipeline file of `file`: deterministic (options in key order, keys in the order above, empty optional keys
// left out), and ParsePipelineFile of it equals `file`. `file.pipeline_id` should satisfy IsPipelineId, else the
// text written does not parse back.
std::string WritePipelineFile(const StarlakeDagFile& file);

enum class PipelineSave { kCreated, kUnchanged, kReplaced };

struct SavedPipelineFile {
  std::filesystem::path path;  // <dir>/<pipeline id>.yml
  PipelineSave outcome = PipelineSave::kCreated;
};

// Writes WritePipelineFile(file) to `<dir>/<pipeline id>.yml`, creating `dir` when missing. A file already there
// with the same text is left alone (kUnchanged); with other text it is replaced only when `replace` is true, else
// SLU-PIPELINE-011. The text is written to a temporary file in `dir` that is then renamed over the target, so the
// target is never partly written. Throws SLU-PIPELINE-005 when the pipeline id is not one (it comes from the
// imported file's name), SLU-PIPELINE-012 when writing fails; nothing is written on any error.
SavedPipelineFile SavePipelineFile(const StarlakeDagFile& file, const std::filesystem::path& dir, bool replace);

// One file of a pipeline folder: its pipeline when it was read, else the diagnostics that kept it from being read.
struct PipelineFolderEntry {
  std::filesystem::path path;  // <dir as given>/<file name>
  std::optional<StarlakeDagFile> pipeline;
  std::vector<Diagnostic> errors;
};

// Every `*.yml` and `*.yaml` regular file directly in `dir`, sorted by name, each read on its own. A job name
// already given by an earlier file adds SLU-PIPELINE-010 to the later file's errors (its pipeline is kept). Throws
// sluice::Error SLU-IO-001 when `dir` cannot be read.
std::vector<PipelineFolderEntry> ScanPipelineFolder(const std::filesystem::path& dir);

// The pipelines of ScanPipelineFolder(dir), in file order. Throws one sluice::Error carrying every file's
// diagnostics (sorted by location) when any file has one.
std::vector<StarlakeDagFile> ReadPipelineFolder(const std::filesystem::path& dir);

}  // namespace sluice::orchestrate
