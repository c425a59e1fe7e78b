#include "warehouse/warehouse_error.hpp"

namespace sluice {

Error WarehouseError(std::string code, std::string message, std::string hint) {
  return Error(Diagnostic{std::move(code), std::move(message), {}, std::move(hint), {}});
}

std::string FailedOperation(Operation operation, std::string_view engine, const std::string& subject,
                            std::string opening) {
  switch (operation) {
    case Operation::kOpen:
      return opening;
    case Operation::kStatement:
      return subject.empty() ? std::string(engine) + " statement failed" : "statement on " + subject + " failed";
    case Operation::kWrite:
      return "writing " + subject + " failed";
    case Operation::kCatalog:
      return "reading the catalog for " + subject + " failed";
  }
  return opening;
}

Error ClassifiedError(FailureKind kind, std::string message, std::string_view language, std::string hint) {
  std::string code;
  std::string usual;
  switch (kind) {
    case FailureKind::kOther:
      code = "SLU-WAREHOUSE-020";
      break;
    case FailureKind::kMissing:
      code = "SLU-WAREHOUSE-021";
      usual = "a relation, schema or function the SQL names does not exist";
      break;
    case FailureKind::kSyntax:
      code = "SLU-WAREHOUSE-022";
      usual = "the SQL is not valid " + std::string(language);
      break;
    case FailureKind::kConflict:
      code = "SLU-WAREHOUSE-023";
      usual = "another write touched the same relation at the same time; retry the write";
      break;
    case FailureKind::kBind:
      code = "SLU-WAREHOUSE-024";
      usual =
          "a column or relation the SQL names does not exist there, or has another type; upstream tables are as "
          "their last run left them";
      break;
    case FailureKind::kConversion:
      code = "SLU-WAREHOUSE-025";
      usual = "a value does not convert to the type asked for; check the data";
      break;
  }
  return WarehouseError(std::move(code), std::move(message), hint.empty() ? std::move(usual) : std::move(hint));
}

}  // namespace sluice
