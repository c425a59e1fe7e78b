// How `run` and the backfill commands show a run's steps: one line each.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "service/run.hpp"
#include "sluice/date.hpp"

namespace sluice::cli {

// "2026-03-01" for one day, else "2026-03-01 .. 2026-03-05" (inclusive).
std::string WindowText(const DateWindow& window);
// "OK        core.daily [2026-03-01 .. 2026-03-05]  20 rows  0.12s".
std::string DescribeStep(const StepOutcome& step);

}  // namespace sluice::cli
