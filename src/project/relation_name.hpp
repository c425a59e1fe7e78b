// The names a project may give a model's physical relation, written whole (`relation_name`) or as a prefix of
// the model's name (`naming.table_prefix` / `view_prefix` in streambuild_project.toml or a pipeline.toml).
// Such names land unquoted in compile artifacts (target/compiled/…), so they are restricted to identifiers.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace sluice {

// Whether `name` may name a model's relation: [A-Za-z_][A-Za-z0-9_]*, not starting with the prefixes of the
// relations Sluice manages for sources (kafka__, raw__, mv__) and not ending like a deployment suffix
// (__<YYYYMMDD>T<HHMMSS>Z_<6 hex> or containing __reconcile_).
bool IsAllowedRelationName(std::string_view name);

// Whether every `prefix` + model name (an identifier) is an allowed relation name, as far as the prefix decides:
// empty, or [A-Za-z_][A-Za-z0-9_]* not starting with kafka__, raw__ or mv__.
bool IsAllowedRelationPrefix(std::string_view prefix);

// The hints of errors about those names.
inline constexpr std::string_view kRelationNameRule =
    "use [A-Za-z_][A-Za-z0-9_]*, not starting with kafka__/raw__/mv__ nor ending like a deployment suffix";
inline constexpr std::string_view kRelationPrefixRule =
    "use \"\" or [A-Za-z_][A-Za-z0-9_]*, not starting with kafka__/raw__/mv__";

}  // namespace sluice
