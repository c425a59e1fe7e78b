#include "deploy/column_diff.hpp"

#include <map>

namespace sluice {

std::string ChangeImpactName(ChangeImpact impact) {
  return impact == ChangeImpact::kBreaking ? "breaking" : "non_breaking";
}

std::string SeedabilityName(Seedability seedability) {
  return seedability == Seedability::kNonSeedable ? "non_seedable" : "seedable";
}

std::string NormalizeTypeSpelling(const std::string& type) {
  std::string out;
  bool pending_blank = false;
  for (char c : type) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_blank = !out.empty();
      continue;
    }
    if (c == '(' || c == ')' || c == ',') {
      pending_blank = false;
      out += c;
      if (c == ',') pending_blank = true;
      continue;
    }
    if (pending_blank && !out.empty() && out.back() != '(') out += ' ';
    pending_blank = false;
    out += c;
  }
  return out;
}

ColumnDiff DiffColumns(const std::vector<ColumnSpec>& active, const std::vector<ColumnSpec>& planned) {
  std::map<std::string, std::string> active_types;
  for (const ColumnSpec& column : active) active_types[column.name] = NormalizeTypeSpelling(column.type);
  std::map<std::string, bool> in_planned;
  ColumnDiff diff;
  for (const ColumnSpec& column : planned) {
    in_planned[column.name] = true;
    auto found = active_types.find(column.name);
    const std::string type = NormalizeTypeSpelling(column.type);
    if (found == active_types.end()) {
      diff.added.push_back(column.name);
    } else if (found->second != type) {
      diff.retyped.push_back(TypeChange{column.name, found->second, type});
    } else {
      diff.shared.push_back(column.name);
    }
  }
  for (const ColumnSpec& column : active) {
    if (!in_planned.contains(column.name)) diff.removed.push_back(column.name);
  }
  if (diff.added.empty() && diff.removed.empty() && diff.retyped.empty()) return diff;
  diff.impact = diff.removed.empty() && diff.retyped.empty() ? ChangeImpact::kNonBreaking : ChangeImpact::kBreaking;
  diff.seedability = diff.retyped.empty() ? Seedability::kSeedable : Seedability::kNonSeedable;
  return diff;
}

}  // namespace sluice
