// How the command line shows a backfill (service/backfill.hpp) while it runs and when it ends: a header, on a
// terminal a live bar below the chunk lines, otherwise a line per chunk (one chunk: its steps' lines, as `run`), and a
// summary; with --json only the summary document.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "service/backfill.hpp"

namespace sluice::cli {

class BackfillScreen {
 public:
  explicit BackfillScreen(bool json);
  ~BackfillScreen();
  BackfillScreen(const BackfillScreen&) = delete;
  BackfillScreen& operator=(const BackfillScreen&) = delete;

  // The callbacks that draw it; valid while this screen lives.
  service::BackfillObserver Observer();
  // Stops the live bar and prints the summary; returns the exit code: 0 completed (or nothing left to resume), 130
  // canceled by a signal, 1 otherwise.
  int Finish(const service::BackfillResult& result);

 private:
  class View;
  View& view();

  const bool json_;
  std::string backfill_id_;
  std::vector<BackfillChunk> chunks_;
  std::once_flag view_made_;
  std::unique_ptr<View> view_;  // made on the first progress, in a thread that has the armed signal mask
};

}  // namespace sluice::cli
