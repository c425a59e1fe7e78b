// Sluice's version: what `sluice --version` prints, recorded with each staged deployment.
#pragma once

namespace sluice::service {

inline constexpr const char* kSluiceVersion = "sluice 0.1.0";

}  // namespace sluice::service
