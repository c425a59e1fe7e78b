// The identity of the running program's code: the GNU build ID the linker writes into the executable (a hash
// of its contents), so a file one build wrote can tell whether the build reading it is the same code (the
// parse cache, project/parse_cache.hpp). Thread-safety: safe; the answer is computed once.
#pragma once

#include <string>

namespace sluice {

// The running executable's build ID as lowercase hex, or "" when it has none (linked without --build-id).
const std::string& ExecutableBuildId();

}  // namespace sluice
