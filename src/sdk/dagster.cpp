#include "sluice/dagster.hpp"

#include "core/diagnostic.hpp"

namespace sluice::dagster {

std::string AssetKey::ToUserString() const {
  std::string text;
  for (const std::string& part : path) text += (text.empty() ? "" : "/") + part;
  return text;
}

const std::string& AssetExecutionContext::partition_key() const {
  if (partition_keys_.size() != 1) {
    throw Error(Diagnostic{"SLU-SDK-020",
                           "asset " + key_.ToUserString() + ": partition_key() needs a run of one partition; this run owns " +
                               std::to_string(partition_keys_.size()),
                           {}, "use partition_keys() or partition_time_window() in assets backfilled by ranges", {}});
  }
  return partition_keys_.front();
}

const TimeWindow& AssetExecutionContext::partition_time_window() const {
  if (!window_) {
    throw Error(Diagnostic{"SLU-SDK-020", "asset " + key_.ToUserString() + " is not partitioned: it has no time window",
                           {}, "declare partitions_def = dg::DailyPartitionsDefinition(\"YYYY-MM-DD\")", {}});
  }
  return *window_;
}

const rel::Table& Inputs::operator[](std::string_view name) const {
  auto found = tables_.find(name);
  if (found == tables_.end()) {
    std::string names;
    for (const auto& [input, table] : tables_) names += (names.empty() ? "" : ", ") + input;
    throw Error(Diagnostic{"SLU-SDK-021", "no input named \"" + std::string(name) + "\"", {},
                           names.empty() ? "the asset declares no ins" : "its inputs are: " + names, {}});
  }
  return found->second;
}

}  // namespace sluice::dagster
