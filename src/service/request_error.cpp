#include "service/request_error.hpp"

#include <algorithm>

namespace sluice::service {

bool IsAboutArguments(const Error& error) {
  return std::all_of(error.diagnostics().begin(), error.diagnostics().end(), [](const Diagnostic& d) {
    if (d.code.starts_with("SLU-SELECT-") || d.code == "SLU-CONFIG-008") return true;
    return d.code.starts_with("SLU-PARTITION-") && d.code != "SLU-PARTITION-004";
  });
}

}  // namespace sluice::service
