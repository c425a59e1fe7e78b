// A fixture project in a scratch folder, run on the ClickHouse test server (clickhouse_test_server.hpp) in a database
// of its own: `sluice --database <its database> …` with the server's STREAMBUILD_CLICKHOUSE_* variables.
//
//   ClickHouseProject project("quality_clickhouse", "run");
//   ProcessResult result = project.Run({"run", "--select", "+orders"});
//
// For e2e tests (it links sluice_e2e_support). Thread-safety: as ScratchProject.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {

class ClickHouseProject {
 public:
  // tests/projects/<fixture>, in a database named after `hint` (UniqueClickHouseDatabase).
  ClickHouseProject(const std::string& fixture, const std::string& hint)
      : server_(RequireClickHouseTestServer()), database_(UniqueClickHouseDatabase(hint)), project_(fixture) {}

  ProcessResult Run(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"--database", database_};
    all.insert(all.end(), args.begin(), args.end());
    return project_.Run(all, ClickHouseTestEnvironment(server_));
  }

  // The server, with the project's database as the current one.
  std::unique_ptr<Warehouse> Open() const { return OpenWarehouse(ClickHouseTestConfig(server_, database_)); }
  const ScratchProject& files() const { return project_; }
  const std::string& database() const { return database_; }

 private:
  ClickHouseTestServer server_;
  std::string database_;
  ScratchProject project_;
};

}  // namespace sluice::testing
