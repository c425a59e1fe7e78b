// Queues N runs of one job in a project's state store (SLUICE_STATE_URL honoured, as `sluice` opens it), for the
// run-queue benchmark (run_bench_queue.py). Usage: queue_runs PROJECT_DIR JOB N
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/clock.hpp"
#include "state/open_state_store.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: queue_runs PROJECT_DIR JOB N\n");
    return 2;
  }
  std::unique_ptr<sluice::StateStore> store = sluice::OpenStateStore(argv[1]);
  sluice::SystemClock clock;
  const int count = std::atoi(argv[3]);
  for (int i = 0; i < count; ++i) {
    sluice::RunRecord run;
    run.run_id = sluice::NewRunId(clock);
    run.selection = argv[2];
    run.job = argv[2];
    run.created_at = sluice::FormatUtc(clock.Now());
    run.tags = {{"sluice/job", argv[2]}, {"sluice/trigger", "manual"}};
    store->CreateRun(run);
  }
  return 0;
}
