// The Starlake CLI commands a job runs (reference §2.1 and §2.3), as pure functions: the argument vector of each
// action, the definition-time merge of `sl_env_var` into `--options`, and the shell command line of one attempt.
//
// Differences from the original, on purpose: an `--options` pair is split at its first `=` (the original split at
// every `=`, breaking values that hold one), and nothing here mutates its input, so every retry builds the same line.
// Thread-safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "orchestrate/starlake_dag_file.hpp"

namespace sluice::orchestrate {

// Ordered `key=value` pairs, as `--options` carries them. Overlaying a pair replaces the value of an existing key
// in place and appends a new key at the end.
using StarlakeOptionPairs = std::vector<std::pair<std::string, std::string>>;

// Overlays one pair on `pairs`, as above.
void OverlayPair(StarlakeOptionPairs& pairs, const std::string& key, const std::string& value);

enum class StarlakeVerb { kStage, kPreLoad, kLoad, kTransform };

struct StarlakeCommand {
  StarlakeVerb verb = StarlakeVerb::kLoad;
  std::vector<std::string> arguments;  // starts with the verb: `load`, `transform`, `preload`, `stage`

  bool operator==(const StarlakeCommand&) const = default;
};

// `stage --domains D --tables T1,T2 --options SL_RUN_MODE=main,SL_LOG_LEVEL=info[,extra…]`; `extra` overlays the
// two defaults. Tables keep the given order; none gives an empty `--tables` value.
StarlakeCommand StageCommand(const std::string& domain, const std::vector<std::string>& tables,
                             const StarlakeOptionPairs& extra = {});

// `preload --domain D --tables T1,… --strategy imported|pending|ack --options SL_RUN_MODE=main,SL_LOG_LEVEL=info`,
// then `--globalAckFilePath P` for ack, then `--notReadySentinel S` when a sentinel path is given. The strategy
// must not be kNone (no task exists then); kNone is treated as imported rather than building an invalid command.
StarlakeCommand PreLoadCommand(const std::string& domain, const std::vector<std::string>& tables,
                               StarlakePreLoadStrategy strategy, const std::optional<std::string>& ack_file_path,
                               const std::optional<std::string>& sentinel_path);

// `load --domains D --tables T`.
StarlakeCommand LoadCommand(const std::string& domain, const std::string& table);

// `transform --name N`, plus `--options A,B` when `transform_options` (comma-separated) or `configured_options`
// (the `options[N]["options"]` string) hold any; transform_options come first.
StarlakeCommand TransformCommand(const std::string& name, std::string_view transform_options,
                                 std::string_view configured_options);

// The pairs of the `sl_env_var` option (a JSON object; values that are not strings are written as JSON), in written
// order. An empty text is no pairs. Throws sluice::Error SLU-STARLAKE-007 when the text is not a JSON object.
StarlakeOptionPairs ParseSlEnvVar(std::string_view json);

// The `k=v` tokens of an `--options` value as pairs, each split at its first `=`, in written order; a repeated key
// keeps its first place and takes its last value. Tokens without `=` are left out.
StarlakeOptionPairs OptionPairs(std::string_view options_value);

// Definition time (§2.3): merges the environment pairs into `--options`. A non-empty value becomes the environment
// pairs overlaid with its own `k=v` pairs, then its tokens without `=`; an empty value becomes the environment pairs;
// without `--options`, `--options <environment pairs>` is appended (an empty value when there are none).
StarlakeCommand WithEnvironmentOptions(const StarlakeCommand& command, const StarlakeOptionPairs& environment);

// What one attempt adds at run time.
struct StarlakeAttempt {
  std::string scheduled_date;    // the logical datetime as `%Y-%m-%dT%H:%M:%S%z`, e.g. 2026-07-18T00:00:00+0000
  std::string interval_options;  // transform only: `sl_data_interval_start='…',sl_data_interval_end='…'` or empty
  StarlakeOptionPairs node_options;  // transform only: sl_options' `all` overlaid with this node's section
};

// The argument vector of one attempt (§2.3 run time), verb first: load and transform get `--scheduledDate <date>`
// right after the verb; a transform's `--options` value (appended when the command has none and the attempt adds
// something) is extended with the interval options (an empty string still adds its empty token, as the original) and
// then the node options. With quote_for_shell=false these are the arguments the CLI receives, for execve: nothing is
// quoted (the interval options keep the single quotes they carry). With true, the tokens ShellCommandLine joins: the
// date wrapped in single quotes, the `--options` and `--notReadySentinel` values in double quotes, as the original's
// shell line. The two differ only by those added quotes, so for every argument without spaces, quotes or shell
// syntax the shell would hand the CLI the quote_for_shell=false vector; where they would differ (an empty `--tables`
// value the shell drops, a value with `$` or a space), the vector is what the command means.
// `command` should have been through WithEnvironmentOptions for the shell.
std::vector<std::string> AttemptArguments(const StarlakeCommand& command, const StarlakeAttempt& attempt,
                                          bool quote_for_shell);

// The shell command line of one attempt, for logs: `<starlake_path> <AttemptArguments(…, true) joined by spaces>`.
// Sluice never runs it through a shell (local_process.hpp runs the unquoted vector).
std::string ShellCommandLine(std::string_view starlake_path, const StarlakeCommand& command,
                             const StarlakeAttempt& attempt);

}  // namespace sluice::orchestrate
