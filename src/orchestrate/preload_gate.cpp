#include "orchestrate/preload_gate.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

enum class Scheme { kLocal, kFile, kGcs, kS3 };

Error PreloadError(const char* code, const std::string& message, const std::string& hint) {
  return Error(Diagnostic{code, message, {}, hint, {}});
}

Scheme SchemeOf(const std::string& location) {
  size_t separator = location.find("://");
  if (separator == std::string::npos) return Scheme::kLocal;
  std::string scheme = location.substr(0, separator);
  if (scheme == "file") return Scheme::kFile;
  if (scheme == "gs") return Scheme::kGcs;
  if (scheme == "s3") return Scheme::kS3;
  throw PreloadError("SLU-PRELOAD-001", "sentinel location \"" + location + "\" has the scheme " + scheme + "://",
                     "use gs://, s3://, file:// or an absolute local path");
}

bool Reaches(ExecutorKind executor, Scheme scheme) {
  switch (executor) {
    case ExecutorKind::kShell: return scheme == Scheme::kLocal || scheme == Scheme::kFile;
    case ExecutorKind::kCloudRun:
    case ExecutorKind::kDataproc: return scheme == Scheme::kGcs;
    case ExecutorKind::kFargate: return scheme == Scheme::kS3;
  }
  return false;
}

bool Blank(const std::string& text) {
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string ExecutorKindName(ExecutorKind kind) {
  switch (kind) {
    case ExecutorKind::kShell: return "shell";
    case ExecutorKind::kCloudRun: return "cloud_run";
    case ExecutorKind::kDataproc: return "dataproc";
    case ExecutorKind::kFargate: return "fargate";
  }
  return "?";
}

std::optional<std::string> ResolveSentinelPath(const std::optional<std::string>& location, const std::string& domain,
                                               ExecutorKind executor) {
  if (!location || Blank(*location)) return std::nullopt;
  const Scheme scheme = SchemeOf(*location);
  if (scheme == Scheme::kLocal || scheme == Scheme::kFile) {
    std::string path = scheme == Scheme::kFile ? location->substr(7) : *location;
    if (path.empty() || path.front() != '/') {
      throw PreloadError("SLU-PRELOAD-002", "sentinel location \"" + *location + "\" is not an absolute path",
                         "write it from the root, e.g. /var/sluice/sentinels or file:///var/sluice/sentinels");
    }
  }
  if (!Reaches(executor, scheme)) {
    throw PreloadError("SLU-PRELOAD-003",
                       "sentinel location \"" + *location + "\" cannot be reached by the " + ExecutorKindName(executor) +
                           " executor",
                       "shell takes local or file:// paths, cloud_run and dataproc gs://, fargate s3://");
  }
  std::string prefix = *location;
  while (!prefix.empty() && prefix.back() == '/' && prefix.size() > prefix.find("://") + 3) prefix.pop_back();
  return prefix + "/" + domain + "/" + std::string(kSentinelScopeToken) + ".notready";
}

std::string SentinelScope(const std::string& job, const std::string& op, const std::string& run_id) {
  std::string scope = job + "__" + op + "__" + run_id;
  for (char& c : scope) {
    const bool kept = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == ':' ||
                      c == '=' || c == '-';
    if (!kept) c = '_';
  }
  return scope;
}

std::vector<std::string> WithSentinelScope(const std::vector<std::string>& argv, const std::string& scope) {
  std::vector<std::string> copy = argv;
  for (std::string& arg : copy) {
    for (size_t at = arg.find(kSentinelScopeToken); at != std::string::npos;
         at = arg.find(kSentinelScopeToken, at + scope.size())) {
      arg.replace(at, kSentinelScopeToken.size(), scope);
    }
  }
  return copy;
}

bool ConsumeLocalMarker(const std::string& path) {
  std::string local = path.rfind("file://", 0) == 0 ? path.substr(7) : path;
  std::error_code error;
  return std::filesystem::remove(local, error) && !error;
}

std::string PreloadVerdictName(PreloadVerdict verdict) {
  switch (verdict) {
    case PreloadVerdict::kProceed: return "proceed";
    case PreloadVerdict::kSkip: return "skip";
    case PreloadVerdict::kPokeAgain: return "poke_again";
    case PreloadVerdict::kFail: return "fail";
  }
  return "?";
}

PreloadVerdict DecidePreload(const PreloadGate& gate, const PreloadAttempt& attempt) {
  if (attempt.dry_run) return PreloadVerdict::kProceed;  // and nothing is consumed
  const bool ready = attempt.exit_code == 0 && !(gate.sentinel && attempt.marker_present);
  if (ready) return PreloadVerdict::kProceed;
  // With the sentinel, a failed run is a failure, not "nothing to load": the CLI says "not ready" with the marker.
  if (gate.sentinel && attempt.exit_code != 0) return PreloadVerdict::kFail;
  if (!gate.poke) return PreloadVerdict::kSkip;
  if (!attempt.deadline_reached) return PreloadVerdict::kPokeAgain;
  return gate.soft_fail ? PreloadVerdict::kSkip : PreloadVerdict::kFail;
}

std::vector<std::chrono::seconds> PokeOffsets(std::chrono::seconds interval, std::chrono::seconds timeout) {
  if (interval.count() <= 0 || timeout.count() <= 0 || timeout < interval) {
    throw PreloadError("SLU-PRELOAD-004",
                       "pre-load poke interval " + std::to_string(interval.count()) + "s and timeout " +
                           std::to_string(timeout.count()) + "s: the timeout must be at least the interval, both positive",
                       "set pre_load_poke_interval and pre_load_timeout (seconds) accordingly");
  }
  std::vector<std::chrono::seconds> offsets;
  for (std::chrono::seconds at{0};; at += interval) {
    offsets.push_back(at);
    if (at + interval >= timeout) break;
  }
  return offsets;
}

}  // namespace sluice
