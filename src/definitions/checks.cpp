#include "definitions/checks.hpp"

namespace sluice {

std::string AuditSeverityName(AuditSeverity severity) {
  switch (severity) {
    case AuditSeverity::kError:
      return "error";
    case AuditSeverity::kWarning:
      return "warning";
  }
  return "error";
}

std::string TestModeName(TestMode mode) {
  switch (mode) {
    case TestMode::kModel:
      return "model";
    case TestMode::kMacro:
      return "macro";
  }
  return "model";
}

}  // namespace sluice
