// The commands around staged (virtual) deployments that are not the deployment itself: `deployment list|show|diff`,
// `doctor`, `repair active-view`, `reconcile` and `janitor` (deploy/deployment_operations.hpp, docs/
// deployment_operations.md). They work in the project's target database, which is also where the deployments'
// metadata is kept, and need a project with a virtual pipeline (SLU-DEPLOY-046, before connecting). Registered on
// `sluice` only. Exit codes: 0 ok, 1 error, 2 usage.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace sluice::cli {

class DeploymentOperationsCommands {
 public:
  // Adds `list`, `show` and `diff` to the `deployment` group, and `doctor`, `repair`, `reconcile`, `janitor` to `app`.
  DeploymentOperationsCommands(CLI::App& app, CLI::App& deployment);
  // Runs the parsed command, if it is one of these; its exit code.
  std::optional<int> Dispatch(const GlobalOptions& global);

 private:
  void AddInventory(CLI::App& deployment);  // list, show, diff
  void AddDoctorAndRepair(CLI::App& app);
  void AddReconcileAndJanitor(CLI::App& app);

  bool json_ = false;
  std::string deployment_id_;
  std::string diff_sides_;
  std::string table_;
  std::vector<std::string> select_;
  bool apply_ = false;
  int retention_days_ = 7;
  int minimum_rollback_deployments_ = 2;

  CLI::App* list_ = nullptr;
  CLI::App* show_ = nullptr;
  CLI::App* diff_ = nullptr;
  CLI::App* doctor_ = nullptr;
  CLI::App* repair_active_view_ = nullptr;
  CLI::App* reconcile_ = nullptr;
  CLI::App* janitor_ = nullptr;
};

}  // namespace sluice::cli
