#include "state/state_store.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

namespace sluice {

namespace {

constexpr std::array kAllRunStatuses = {RunStatus::kQueued, RunStatus::kStarted, RunStatus::kSuccess,
                                        RunStatus::kFailure, RunStatus::kCanceled};

}  // namespace

std::string RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kQueued:
      return "QUEUED";
    case RunStatus::kStarted:
      return "STARTED";
    case RunStatus::kSuccess:
      return "SUCCESS";
    case RunStatus::kFailure:
      return "FAILURE";
    case RunStatus::kCanceled:
      return "CANCELED";
  }
  throw std::invalid_argument("RunStatus out of range: " + std::to_string(static_cast<int>(status)));
}

std::optional<RunStatus> ParseRunStatus(const std::string& name) {
  for (RunStatus status : kAllRunStatuses) {
    if (RunStatusName(status) == name) return status;
  }
  return std::nullopt;
}

bool IsTerminal(RunStatus status) {
  switch (status) {
    case RunStatus::kQueued:
    case RunStatus::kStarted:
      return false;
    case RunStatus::kSuccess:
    case RunStatus::kFailure:
    case RunStatus::kCanceled:
      return true;
  }
  throw std::invalid_argument("RunStatus out of range: " + std::to_string(static_cast<int>(status)));
}

std::string BackfillStatusName(BackfillStatus status) {
  switch (status) {
    case BackfillStatus::kRequested: return "REQUESTED";
    case BackfillStatus::kCanceling: return "CANCELING";
    case BackfillStatus::kCanceled: return "CANCELED";
    case BackfillStatus::kCompletedSuccess: return "COMPLETED_SUCCESS";
    case BackfillStatus::kCompletedFailed: return "COMPLETED_FAILED";
    case BackfillStatus::kFailed: return "FAILED";
  }
  throw std::invalid_argument("BackfillStatus out of range: " + std::to_string(static_cast<int>(status)));
}

std::optional<BackfillStatus> ParseBackfillStatus(const std::string& name) {
  for (BackfillStatus status : {BackfillStatus::kRequested, BackfillStatus::kCanceling, BackfillStatus::kCanceled,
                                BackfillStatus::kCompletedSuccess, BackfillStatus::kCompletedFailed,
                                BackfillStatus::kFailed}) {
    if (BackfillStatusName(status) == name) return status;
  }
  return std::nullopt;
}

bool IsTerminal(BackfillStatus status) {
  return status != BackfillStatus::kRequested && status != BackfillStatus::kCanceling;
}

std::string ChunkStatusName(ChunkStatus status) {
  switch (status) {
    case ChunkStatus::kPending: return "pending";
    case ChunkStatus::kRunning: return "running";
    case ChunkStatus::kSuccess: return "success";
    case ChunkStatus::kFailed: return "failed";
    case ChunkStatus::kCanceled: return "canceled";
  }
  throw std::invalid_argument("ChunkStatus out of range: " + std::to_string(static_cast<int>(status)));
}

std::optional<ChunkStatus> ParseChunkStatus(const std::string& name) {
  for (ChunkStatus status : {ChunkStatus::kPending, ChunkStatus::kRunning, ChunkStatus::kSuccess, ChunkStatus::kFailed,
                             ChunkStatus::kCanceled}) {
    if (ChunkStatusName(status) == name) return status;
  }
  return std::nullopt;
}

std::string PartitionStateName(PartitionState state) {
  return state == PartitionState::kMaterialized ? "materialized" : "failed";
}

std::optional<PartitionState> ParsePartitionState(const std::string& name) {
  if (name == "materialized") return PartitionState::kMaterialized;
  if (name == "failed") return PartitionState::kFailed;
  return std::nullopt;
}

bool OwnerAlive(const BackfillRecord& backfill) {
  int64_t start_time = ProcessStartTime(backfill.pid);
  return start_time != 0 && start_time == backfill.pid_start_time;
}

int64_t ParseProcessStartTime(std::string_view stat) {
  size_t command_end = stat.rfind(')');
  if (command_end == std::string_view::npos) return 0;
  // Fields after the command are separated by single spaces; the first of them is field 3 (state).
  constexpr int kStateField = 3;
  constexpr int kStartTimeField = 22;
  std::string_view rest = stat.substr(command_end + 1);
  std::string_view state;
  size_t position = 0;
  for (int field = kStateField; field <= kStartTimeField; ++field) {
    while (position < rest.size() && rest[position] == ' ') ++position;
    size_t end = rest.find_first_of(" \n", position);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view token = rest.substr(position, end - position);
    if (token.empty()) return 0;
    if (field == kStateField) state = token;
    if (field == kStartTimeField) {
      if (state == "Z" || state == "X") return 0;
      uint64_t ticks = 0;
      auto [parsed_end, error] = std::from_chars(token.data(), token.data() + token.size(), ticks);
      if (error != std::errc() || parsed_end != token.data() + token.size()) return 0;
      if (ticks > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return 0;
      return static_cast<int64_t>(ticks);
    }
    position = end;
  }
  return 0;
}

int64_t ProcessStartTime(int64_t pid) {
  if (pid <= 0) return 0;
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat", std::ios::binary);
  if (!file) return 0;
  std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return ParseProcessStartTime(stat);
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

WorkerRecord ThisProcessAsWorker(const std::string& at) {
  WorkerRecord worker;
  worker.host = HostName();
  worker.pid = getpid();
  worker.pid_start_time = ProcessStartTime(worker.pid);
  worker.worker_id = worker.host + ":" + std::to_string(worker.pid) + ":" + std::to_string(worker.pid_start_time);
  worker.started_at = at;
  worker.heartbeat_at = at;
  return worker;
}

bool WithinTagLimits(const std::vector<TagLimit>& limits, const RunRecord& candidate,
                     const std::vector<RunRecord>& started) {
  for (const TagLimit& limit : limits) {
    auto matches = [&](const std::map<std::string, std::string>& tags) {
      auto tag = tags.find(limit.key);
      return tag != tags.end() && (!limit.value || tag->second == *limit.value);
    };
    if (!matches(candidate.tags)) continue;
    int count = 0;
    for (const RunRecord& run : started) count += matches(run.tags) ? 1 : 0;
    if (count >= limit.limit) return false;
  }
  return true;
}

namespace {

// The name of each value of a closed enum, in one table per enum.
template <typename Enum, size_t N>
std::optional<Enum> ParseByName(const std::string& name, const std::array<Enum, N>& values,
                                std::string (*to_name)(Enum)) {
  for (Enum value : values) {
    if (to_name(value) == name) return value;
  }
  return std::nullopt;
}

}  // namespace

std::string InstigatorKindName(InstigatorKind kind) { return kind == InstigatorKind::kSchedule ? "schedule" : "sensor"; }

std::optional<InstigatorKind> ParseInstigatorKind(const std::string& name) {
  return ParseByName(name, std::array{InstigatorKind::kSchedule, InstigatorKind::kSensor}, InstigatorKindName);
}

std::string InstigatorStatusName(InstigatorStatus status) {
  return status == InstigatorStatus::kRunning ? "RUNNING" : "STOPPED";
}

std::optional<InstigatorStatus> ParseInstigatorStatus(const std::string& name) {
  return ParseByName(name, std::array{InstigatorStatus::kRunning, InstigatorStatus::kStopped}, InstigatorStatusName);
}

std::string TickStatusName(TickStatus status) {
  switch (status) {
    case TickStatus::kSuccess: return "SUCCESS";
    case TickStatus::kSkipped: return "SKIPPED";
    case TickStatus::kFailure: return "FAILURE";
  }
  return "?";
}

std::optional<TickStatus> ParseTickStatus(const std::string& name) {
  return ParseByName(name, std::array{TickStatus::kSuccess, TickStatus::kSkipped, TickStatus::kFailure},
                     TickStatusName);
}

}  // namespace sluice
