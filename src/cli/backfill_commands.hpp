// Multi-run backfills on the command line: `run --from A --to B` over partitioned assets, and the `backfills` verbs.
//
// The logic takes the definitions, the state store and a way to open the warehouse (BackfillContext), never a
// project: a C++ SDK executable gives the same with Definitions built in code. Only the commands' entry points
// (commands.hpp) load a project.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>

#include "cli/commands.hpp"
#include "definitions/definitions.hpp"
#include "engine/backfill_plan.hpp"
#include "project/project_loader.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice::cli {

struct BackfillContext {
  const Definitions& definitions;
  StateStore& state;
  std::filesystem::path project_root;  // seed paths resolve against it
  // Opens the warehouse read-write, waiting for another writer as `wait` says.
  std::function<std::unique_ptr<Warehouse>(const WaitPolicy& wait)> open_warehouse;
};

// The context of a loaded project: its definitions and root, its warehouse opened as `run` opens it.
BackfillContext ContextFor(const Project& project, StateStore& state);

// How a backfill's chunks run: run's flags, or resume's.
struct BackfillRunFlags {
  int threads = 0;
  int max_concurrent_runs = 0;  // 0: the backfill's recorded value
  bool allow_missing_upstream = false;
  std::optional<double> wait_timeout_seconds;
  bool json = false;
};

// Records `plan` as a new backfill owned by this process and runs it. Exit 0 when it completed successfully, 130
// when canceled by a signal, 1 otherwise.
int StartBackfill(const BackfillContext& context, const BackfillPlan& plan, const BackfillRunFlags& flags);

}  // namespace sluice::cli
