// Virtual-mode names (StreamBuild reference §7.3, issue 26): a deployment's id, and the physical name of a logical
// object in one deployment, `<logical>__<deployment id>` (e.g. `tbl__orders__20260801T000000Z_a1b2c3`). The logical
// name stays a stable view over the physical object of the deployment published last.
// Thread-safety: pure functions (NewDeploymentId reads the clock and a random device).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.hpp"

namespace sluice {

// `YYYYMMDDTHHMMSSZ_<6 hex>` from the clock's UTC time, e.g. 20260801T000000Z_a1b2c3; ids sort by creation time.
std::string NewDeploymentId(const Clock& clock);

// Whether `id` is a deployment id a user may give: `\d{8}T\d{6}Z_[A-Za-z0-9]+` (StreamBuild's rule).
bool IsDeploymentId(std::string_view id);

// `<logical>__<deployment id>`.
std::string PhysicalName(std::string_view logical, std::string_view deployment_id);

// The logical name and deployment id of a physical name, split at the last `__` followed by a deployment id; nullopt
// for a name that is not a deployment's physical object (a logical name, or a name whose suffix is not an id).
struct PhysicalNameParts {
  std::string logical;
  std::string deployment_id;
  bool operator==(const PhysicalNameParts&) const = default;
};
std::optional<PhysicalNameParts> SplitPhysicalName(std::string_view physical);

}  // namespace sluice
