// How `build` and `backfill` report their steps: a line per finished step for people, one JSON object per event with
// --events, nothing with --json (which prints one summary at the end).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/direct_deployment.hpp"

namespace sluice::cli {

// A step's outcome as one line (and its errors below it).
std::string OutcomeLine(const BuildStepOutcome& step);

// Prints each progress report: with `events` one JSON object per line (`extra`'s fields added, e.g. the deployment
// id), else, unless `json`, a line per finished step and a note per replay retry.
std::function<void(const BuildProgress&)> BuildProgressPrinter(std::string run_id, bool events, bool json,
                                                               nlohmann::json extra);

}  // namespace sluice::cli
