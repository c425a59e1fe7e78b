#include "service/recorded_run.hpp"

#include <unistd.h>

#include "core/sha256.hpp"

namespace sluice::service {

RecordedRun::RecordedRun(StateStore& store, const Clock& clock, const std::string& selection)
    : store_(store), clock_(clock) {
  RunRecord record;
  record.run_id = run_id_ = NewRunId(clock);
  record.selection = selection;
  record.created_at = FormatUtc(clock.Now());
  record.pid = getpid();
  record.pid_start_time = ProcessStartTime(record.pid);
  store_.CreateRun(record);
  store_.MarkStarted(run_id_, FormatUtc(clock.Now()));
  store_.Append(run_id_, FormatUtc(clock.Now()), RunStartedEvent{selection, {}});
}

std::function<void(const std::string& sql)> RecordedRun::Sink(const std::string& step) {
  return [this, step](const std::string& sql) {
    store_.Append(run_id_, FormatUtc(clock_.Now()), StatementEvent{step, Sha256Hex(sql), sql});
  };
}

void RecordedRun::Finish(RunStatus status, const std::string& message) {
  store_.Append(run_id_, FormatUtc(clock_.Now()), RunFinishedEvent{RunStatusName(status), message});
  store_.FinishRun(run_id_, status, FormatUtc(clock_.Now()), message);
}

}  // namespace sluice::service
