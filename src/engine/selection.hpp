// Selection: which assets a run materializes.
//
// Each item is one of: a bare name — a pipeline first, then a model, then a source (StreamBuild's rule,
// extended to sources); `pipeline:<name>` or `model:<name>` to disambiguate; `<namespace>.<name>` for an
// asset key; with a leading `+` adding everything upstream and/or a trailing `+` adding everything
// downstream. A pipeline selects its models and its source. No items selects every asset; an item that is
// empty or only whitespace is malformed, not "everything".
// Errors: SLU-SELECT-001 unknown name, -002 malformed item.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "definitions/definitions.hpp"

namespace sluice {

// Selected asset keys, sorted. Items may also hold several space-separated names.
std::vector<AssetKey> ResolveSelection(const Definitions& definitions, const std::vector<std::string>& items);

}  // namespace sluice
