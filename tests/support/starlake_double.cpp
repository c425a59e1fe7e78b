// A test double of the Starlake CLI (`starlake`), for the orchestrator's tests: it records each invocation and
// behaves as a script says, so that command jobs, pre-load gating, the not-ready sentinel and retries are tested
// against a real process without Java or a Starlake project.
//
// Each invocation appends one JSON line to $STARLAKE_DOUBLE_LOG (when set):
//   {"argv": [...], "cwd": "...", "env": {every SL_* variable}, "call": N}   (N: this verb's 1-based call number)
// Behaviour, per verb (argv[1]), from the first matching line of the file $STARLAKE_DOUBLE_SCRIPT (when set):
//   <verb|*> [exit=N] [sleep_ms=M] [notready=K] [stdout=TEXT]
//   exit      the exit code (default 0)
//   sleep_ms  how long to run first (default 0)
//   notready  the first K calls touch the marker named by `--notReadySentinel <path>` (quotes stripped, `file://`
//             accepted) and exit 0, as the CLI does when a domain is not ready; later calls are ready
//   stdout    a line to print (the step's log shows it)
// Lines starting with '#' are comments. Call numbers are kept in $STARLAKE_DOUBLE_LOG.<verb>.count.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

struct Behaviour {
  int exit_code = 0;
  int sleep_ms = 0;
  int not_ready_calls = 0;
  std::string stdout_line;
};

Behaviour BehaviourFor(const std::string& verb) {
  Behaviour behaviour;
  const char* script = std::getenv("STARLAKE_DOUBLE_SCRIPT");
  if (script == nullptr) return behaviour;
  std::ifstream in(script);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first != verb && first != "*") continue;
    for (std::string word; words >> word;) {
      size_t equals = word.find('=');
      if (equals == std::string::npos) continue;
      std::string key = word.substr(0, equals);
      std::string value = word.substr(equals + 1);
      if (key == "exit") behaviour.exit_code = std::atoi(value.c_str());
      if (key == "sleep_ms") behaviour.sleep_ms = std::atoi(value.c_str());
      if (key == "notready") behaviour.not_ready_calls = std::atoi(value.c_str());
      if (key == "stdout") {
        std::string rest;
        std::getline(words, rest);
        behaviour.stdout_line = value + rest;
        break;
      }
    }
    return behaviour;
  }
  return behaviour;
}

// This verb's call number, counted in a file beside the log (1 for the first call).
int NextCall(const std::string& log, const std::string& verb) {
  if (log.empty()) return 1;
  std::string counter = log + "." + verb + ".count";
  int calls = 0;
  std::ifstream(counter) >> calls;
  std::ofstream(counter, std::ios::trunc) << calls + 1;
  return calls + 1;
}

std::string Unquoted(std::string text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') && text.back() == text.front()) {
    text = text.substr(1, text.size() - 2);
  }
  if (text.rfind("file://", 0) == 0) text = text.substr(7);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  const std::string verb = argc > 1 ? args[1] : "";
  const char* log_env = std::getenv("STARLAKE_DOUBLE_LOG");
  const std::string log = log_env != nullptr ? log_env : "";
  const int call = NextCall(log, verb);
  if (!log.empty()) {
    nlohmann::json env = nlohmann::json::object();
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string text = *entry;
      size_t equals = text.find('=');
      if (text.rfind("SL_", 0) == 0 && equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
    }
    nlohmann::json record{{"argv", std::vector<std::string>(args.begin() + 1, args.end())},
                          {"cwd", std::filesystem::current_path().string()},
                          {"env", env},
                          {"call", call}};
    std::ofstream(log, std::ios::app) << record.dump() << "\n";
  }
  const Behaviour behaviour = BehaviourFor(verb);
  if (behaviour.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(behaviour.sleep_ms));
  if (!behaviour.stdout_line.empty()) std::printf("%s\n", behaviour.stdout_line.c_str());
  if (call <= behaviour.not_ready_calls) {
    for (size_t i = 1; i + 1 < args.size(); ++i) {
      if (args[i] != "--notReadySentinel") continue;
      std::filesystem::path marker = Unquoted(args[i + 1]);
      std::filesystem::create_directories(marker.parent_path());
      std::ofstream(marker, std::ios::trunc);
    }
    return 0;
  }
  return behaviour.exit_code;
}
