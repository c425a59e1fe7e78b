// Pre-load gating (Starlake reference §4): what a preload step's outcome means for the loads behind it, with and
// without the opt-in not-ready sentinel, in one-shot and in poke (sensor) mode; and the sentinel's path, scope and
// marker. Pure decisions, so every row of the verdict table is a unit test; the command job runs the CLI and acts on
// them.
//
// The sentinel: when the option names a location, the preload command gets `--notReadySentinel "<path>"`, where
// <path> = <location>/<domain>/__SL_SENTINEL_SCOPE__.notready; each attempt substitutes its scope (job, op, run id,
// sanitized) into a copy of the argument vector. The CLI touches the marker and exits 0 when the domain is not ready;
// after a successful run the job deletes the marker first and then reports NOT READY (consume-then-signal).
// Errors (definition time, sluice::Error): SLU-PRELOAD-001 a location with a scheme other than gs://, s3://, file:// or
// none; -002 a local location that is not absolute; -003 a scheme the executor cannot reach (shell: local and file://;
// Cloud Run and Dataproc: gs://; Fargate: s3://); -004 a poke timeout shorter than its interval, or either not positive.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

enum class ExecutorKind { kShell, kCloudRun, kDataproc, kFargate };
std::string ExecutorKindName(ExecutorKind kind);  // shell | cloud_run | dataproc | fargate

inline constexpr std::string_view kSentinelScopeToken = "__SL_SENTINEL_SCOPE__";

// The sentinel path for `domain`, with the scope token in it; nullopt when the option is absent or blank (the feature
// is off, and commands are byte-identical to those without it).
std::optional<std::string> ResolveSentinelPath(const std::optional<std::string>& location, const std::string& domain,
                                               ExecutorKind executor);

// `<job>__<op>__<run_id>` with every character outside [A-Za-z0-9_.+:=-] replaced by '_'.
std::string SentinelScope(const std::string& job, const std::string& op, const std::string& run_id);

// A copy of `argv` with the scope token replaced by `scope` in every argument: the vector the job keeps is never
// changed, so a retry starts from the same template.
std::vector<std::string> WithSentinelScope(const std::vector<std::string>& argv, const std::string& scope);

// Deletes a local marker (a path or file://path) and returns whether it was there: consume, then signal. A marker
// already gone is not an error.
bool ConsumeLocalMarker(const std::string& path);

// One preload attempt as the job saw it.
struct PreloadAttempt {
  bool dry_run = false;
  int exit_code = 0;
  bool marker_present = false;    // with the sentinel on: whether the run left the marker (consumed now)
  bool deadline_reached = false;  // poke mode: another poke would pass the timeout
};

struct PreloadGate {
  bool sentinel = false;  // the sentinel option resolved
  bool poke = false;      // sensor mode: poke until ready or timed out
  bool soft_fail = false;  // poke mode: a timeout skips the loads instead of failing
};

// Proceed: the loads run. Skip: they are skipped (the pipeline still records its end). PokeAgain: sleep the interval
// and run the preload again. Fail: the step fails now.
enum class PreloadVerdict { kProceed, kSkip, kPokeAgain, kFail };
std::string PreloadVerdictName(PreloadVerdict verdict);  // proceed | skip | poke_again | fail

PreloadVerdict DecidePreload(const PreloadGate& gate, const PreloadAttempt& attempt);

// Poke mode's timing: pokes at 0, interval, 2·interval … while the next one would still start before the timeout;
// no sleep after the last. Returns the offsets of the pokes (interval 42 s, timeout 120 s: 0, 42, 84).
std::vector<std::chrono::seconds> PokeOffsets(std::chrono::seconds interval, std::chrono::seconds timeout);

}  // namespace sluice
