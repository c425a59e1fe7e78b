// How a table's columns change between the active deployment and the planned one (StreamBuild reference §7.3,
// issue 26), and what that means for rebuilding it:
//   - breaking: a column removed, or a column's type changed (readers of the stable view may break); adding columns
//     only is non-breaking;
//   - seedable: the new table can be seeded from the active one by copying the columns they share; a type change
//     makes it non-seedable (the old values may not convert), any other change is seedable;
//   - no column change: neither is set (the object may still be rebuilt for its query).
// Columns are matched by name; types are compared as written after collapsing blanks (the catalog's spelling, e.g.
// `Nullable(String)`, `DateTime64(3, 'UTC')`), since a warehouse's type names are case-sensitive.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sluice {

struct ColumnSpec {
  std::string name;
  std::string type;
  bool operator==(const ColumnSpec&) const = default;
};

struct TypeChange {
  std::string name;
  std::string from;
  std::string to;
  bool operator==(const TypeChange&) const = default;
};

enum class ChangeImpact { kNonBreaking, kBreaking };
std::string ChangeImpactName(ChangeImpact impact);  // non_breaking | breaking
enum class Seedability { kSeedable, kNonSeedable };
std::string SeedabilityName(Seedability seedability);  // seedable | non_seedable

struct ColumnDiff {
  std::vector<std::string> added;     // in the planned order
  std::vector<std::string> removed;   // in the active order
  std::vector<TypeChange> retyped;    // in the planned order
  std::vector<std::string> shared;    // in both with the same type, in the planned order: what a seed copies
  std::optional<ChangeImpact> impact;       // unset when no column changed
  std::optional<Seedability> seedability;   // unset when no column changed
  bool operator==(const ColumnDiff&) const = default;
};

ColumnDiff DiffColumns(const std::vector<ColumnSpec>& active, const std::vector<ColumnSpec>& planned);

// A type's spelling with runs of blanks collapsed to one and blanks next to `(`, `)` and `,` dropped except one after
// a comma: `DateTime64( 3 ,'UTC' )` → `DateTime64(3, 'UTC')`.
std::string NormalizeTypeSpelling(const std::string& type);

}  // namespace sluice
