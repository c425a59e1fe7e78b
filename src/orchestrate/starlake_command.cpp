#include "orchestrate/starlake_command.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/diagnostic.hpp"
#include "core/text.hpp"

namespace sluice::orchestrate {

namespace {

constexpr const char* kOptionsFlag = "--options";

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string Serialize(const StarlakeOptionPairs& pairs) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : pairs) parts.push_back(key + "=" + value);
  return Join(parts, ",");
}

StarlakeOptionPairs DefaultRunOptions() { return {{"SL_RUN_MODE", "main"}, {"SL_LOG_LEVEL", "info"}}; }

const char* VerbName(StarlakeVerb verb) {
  switch (verb) {
    case StarlakeVerb::kStage: return "stage";
    case StarlakeVerb::kPreLoad: return "preload";
    case StarlakeVerb::kLoad: return "load";
    case StarlakeVerb::kTransform: return "transform";
  }
  return "";
}

}  // namespace

void OverlayPair(StarlakeOptionPairs& pairs, const std::string& key, const std::string& value) {
  auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& pair) { return pair.first == key; });
  if (it != pairs.end()) {
    it->second = value;
  } else {
    pairs.emplace_back(key, value);
  }
}

StarlakeCommand StageCommand(const std::string& domain, const std::vector<std::string>& tables,
                             const StarlakeOptionPairs& extra) {
  StarlakeOptionPairs options = DefaultRunOptions();
  for (const auto& [key, value] : extra) OverlayPair(options, key, value);
  return {StarlakeVerb::kStage,
          {VerbName(StarlakeVerb::kStage), "--domains", domain, "--tables", Join(tables, ","), kOptionsFlag,
           Serialize(options)}};
}

StarlakeCommand PreLoadCommand(const std::string& domain, const std::vector<std::string>& tables,
                               StarlakePreLoadStrategy strategy, const std::optional<std::string>& ack_file_path,
                               const std::optional<std::string>& sentinel_path) {
  const char* strategy_name = strategy == StarlakePreLoadStrategy::kPending ? "pending"
                              : strategy == StarlakePreLoadStrategy::kAck   ? "ack"
                                                                            : "imported";
  StarlakeCommand command{StarlakeVerb::kPreLoad,
                          {VerbName(StarlakeVerb::kPreLoad), "--domain", domain, "--tables", Join(tables, ","),
                           "--strategy", strategy_name, kOptionsFlag, Serialize(DefaultRunOptions())}};
  if (strategy == StarlakePreLoadStrategy::kAck && ack_file_path) {
    command.arguments.insert(command.arguments.end(), {"--globalAckFilePath", *ack_file_path});
  }
  if (sentinel_path) command.arguments.insert(command.arguments.end(), {"--notReadySentinel", *sentinel_path});
  return command;
}

StarlakeCommand LoadCommand(const std::string& domain, const std::string& table) {
  return {StarlakeVerb::kLoad, {VerbName(StarlakeVerb::kLoad), "--domains", domain, "--tables", table}};
}

StarlakeCommand TransformCommand(const std::string& name, std::string_view transform_options,
                                 std::string_view configured_options) {
  StarlakeCommand command{StarlakeVerb::kTransform, {VerbName(StarlakeVerb::kTransform), "--name", name}};
  std::vector<std::string> options;
  for (std::string_view source : {transform_options, configured_options}) {
    if (source.empty()) continue;
    for (std::string& token : Split(source, ',')) {
      if (!token.empty()) options.push_back(std::move(token));
    }
  }
  if (!options.empty()) command.arguments.insert(command.arguments.end(), {kOptionsFlag, Join(options, ",")});
  return command;
}

StarlakeOptionPairs ParseSlEnvVar(std::string_view json) {
  StarlakeOptionPairs pairs;
  if (json.empty()) return pairs;
  nlohmann::ordered_json value = nlohmann::ordered_json::parse(json, nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    throw Error(Diagnostic{"SLU-STARLAKE-007", "option `sl_env_var` is not a JSON object: " + std::string(json), {},
                           "write it as a JSON object of environment variables, e.g. '{\"SL_ROOT\": \"/p\"}'", {}});
  }
  for (const auto& [key, item] : value.items()) pairs.emplace_back(key, item.is_string() ? item.get<std::string>() : item.dump());
  return pairs;
}

StarlakeOptionPairs OptionPairs(std::string_view options_value) {
  StarlakeOptionPairs pairs;
  for (const std::string& token : Split(options_value, ',')) {
    const size_t equals = token.find('=');
    if (equals != std::string::npos) OverlayPair(pairs, token.substr(0, equals), token.substr(equals + 1));
  }
  return pairs;
}

StarlakeCommand WithEnvironmentOptions(const StarlakeCommand& command, const StarlakeOptionPairs& environment) {
  StarlakeCommand merged = command;
  auto flag = std::find(merged.arguments.begin(), merged.arguments.end(), kOptionsFlag);
  if (flag == merged.arguments.end() || flag + 1 == merged.arguments.end()) {
    if (flag == merged.arguments.end()) merged.arguments.push_back(kOptionsFlag);
    merged.arguments.push_back(Serialize(environment));
    return merged;
  }
  std::string& value = *(flag + 1);
  if (value.empty()) {
    value = Serialize(environment);
    return merged;
  }
  StarlakeOptionPairs pairs = environment;
  for (const auto& [key, item] : OptionPairs(value)) OverlayPair(pairs, key, item);
  std::vector<std::string> bare;
  for (const std::string& token : Split(value, ',')) {
    if (!token.empty() && token.find('=') == std::string::npos) bare.push_back(token);
  }
  std::vector<std::string> parts;
  if (!pairs.empty()) parts.push_back(Serialize(pairs));
  parts.insert(parts.end(), bare.begin(), bare.end());
  value = Join(parts, ",");
  return merged;
}

std::vector<std::string> AttemptArguments(const StarlakeCommand& command, const StarlakeAttempt& attempt,
                                          bool quote_for_shell) {
  std::vector<std::string> arguments = command.arguments;  // a copy per attempt: the command is never changed
  if (command.verb == StarlakeVerb::kTransform && !arguments.empty()) {
    // The command's own options, then what the attempt adds (its interval, its node's options); empty items are
    // dropped, so no option list starts with, ends with or holds an empty one. No options at all: no `--options`.
    auto flag = std::find(arguments.begin(), arguments.end(), kOptionsFlag);
    std::vector<std::string> tokens;
    if (flag != arguments.end() && flag + 1 != arguments.end()) tokens = Split(*(flag + 1), ',');
    tokens.push_back(attempt.interval_options);
    if (!attempt.node_options.empty()) tokens.push_back(Serialize(attempt.node_options));
    std::erase(tokens, std::string());
    if (flag != arguments.end()) arguments.erase(flag, std::min(flag + 2, arguments.end()));
    if (!tokens.empty()) arguments.insert(arguments.end(), {kOptionsFlag, Join(tokens, ",")});
  }
  if (quote_for_shell) {
    for (size_t i = 0; i + 1 < arguments.size(); ++i) {
      if (arguments[i] == kOptionsFlag || arguments[i] == "--notReadySentinel") {
        arguments[i + 1] = "\"" + arguments[i + 1] + "\"";
        ++i;
      }
    }
  }
  if ((command.verb == StarlakeVerb::kLoad || command.verb == StarlakeVerb::kTransform) && !arguments.empty()) {
    arguments.insert(arguments.begin() + 1,
                     {"--scheduledDate", quote_for_shell ? "'" + attempt.scheduled_date + "'" : attempt.scheduled_date});
  }
  return arguments;
}

std::string ShellCommandLine(std::string_view starlake_path, const StarlakeCommand& command,
                             const StarlakeAttempt& attempt) {
  return std::string(starlake_path) + " " + Join(AttemptArguments(command, attempt, true), " ");
}

}  // namespace sluice::orchestrate
