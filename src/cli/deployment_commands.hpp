// The staged-deployment lifecycle's commands (virtual pipelines): `backfill`, `audit backfill`, `publish`, and
// `deployment audit | promote | rollback`. `plan` shows a virtual plan too (deploy_commands.cpp). Registered on
// `sluice` only. Exit codes: 0 ok; 1 failure, a refused publish, or `audit backfill` finding the deployment not
// ready; 2 usage; 130 a backfill canceled by a signal.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace sluice::cli {

class DeploymentCommands {
 public:
  // Adds `backfill` and `publish` to `app`, `backfill` to the `audit` command, and `audit`, `promote` and `rollback`
  // to the `deployment` group.
  DeploymentCommands(CLI::App& app, CLI::App& audit, CLI::App& deployment);
  std::optional<int> Dispatch(const GlobalOptions& global);

 private:
  int RunBackfill(const GlobalOptions& global);
  int RunAudit(const GlobalOptions& global, const std::string& id, bool json);
  int RunPublish(const GlobalOptions& global, const std::string& id, bool force, bool json);
  int RunRollback(const GlobalOptions& global);

  struct BackfillFlags {
    std::vector<std::string> select;
    std::string deployment_id;
    bool full_refresh = false;
    std::string start_time;
    bool json = false;
    bool events = false;
  } backfill_;
  std::string id_;
  bool json_ = false;
  bool force_ = false;
  bool previous_ = false;

  CLI::App* backfill_cmd_ = nullptr;
  CLI::App* audit_backfill_cmd_ = nullptr;
  CLI::App* publish_cmd_ = nullptr;
  CLI::App* deployment_audit_cmd_ = nullptr;
  CLI::App* promote_cmd_ = nullptr;
  CLI::App* rollback_cmd_ = nullptr;
};

}  // namespace sluice::cli
