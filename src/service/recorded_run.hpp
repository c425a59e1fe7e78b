// A run record for an operation that is not a model run (a publish, a rollback): created started by this process,
// each statement it sends appended to its events, finished with the operation's outcome.
// Thread-safety: one thread.
#pragma once

#include <string>

#include "core/clock.hpp"
#include "state/state_store.hpp"

namespace sluice::service {

class RecordedRun {
 public:
  // Creates the run, started now, with a run_started event for `selection`.
  RecordedRun(StateStore& store, const Clock& clock, const std::string& selection);

  const std::string& run_id() const { return run_id_; }
  // Appends each statement `step` sends as a statement event (its sha256 and text).
  std::function<void(const std::string& sql)> Sink(const std::string& step);

  // Runs `f`, finishing the run SUCCESS, or FAILURE with the first diagnostic's message when it throws.
  template <typename F>
  auto Around(F&& f) {
    try {
      auto result = f();
      Finish(RunStatus::kSuccess, "");
      return result;
    } catch (const Error& error) {
      Finish(RunStatus::kFailure, error.diagnostics().front().message);
      throw;
    }
  }

 private:
  void Finish(RunStatus status, const std::string& message);

  StateStore& store_;
  const Clock& clock_;
  std::string run_id_;
};

}  // namespace sluice::service
