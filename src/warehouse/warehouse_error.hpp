// The errors every backend raises alike: the wording of what a failing statement was doing, and the code and usual
// hint of each kind of driver failure. Each backend maps its driver's errors to a FailureKind in its one translation
// function (TranslateDuckDbError, postgres::ThrowTranslated, TranslateClickHouseError, BigQueryClient's); what only
// that backend says (connection and credential failures, interruption) stays there.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostic.hpp"

namespace sluice {

// What a failing statement was doing; selects the wording of its error.
enum class Operation { kOpen, kStatement, kWrite, kCatalog };

// An error without a location.
Error WarehouseError(std::string code, std::string message, std::string hint);

// The start of a failure's message: "<engine> statement failed" (or "statement on <subject> failed"), "writing
// <subject> failed", "reading the catalog for <subject> failed"; for kOpen, `opening` (what each backend opens).
std::string FailedOperation(Operation operation, std::string_view engine, const std::string& subject,
                            std::string opening);

// What a driver's failure means, from which its code and usual hint follow.
enum class FailureKind {
  kOther,       // SLU-WAREHOUSE-020, no hint
  kMissing,     // SLU-WAREHOUSE-021: a relation, schema or function the SQL names does not exist
  kSyntax,      // SLU-WAREHOUSE-022: the SQL does not parse
  kConflict,    // SLU-WAREHOUSE-023: a concurrent write touched the relation
  kBind,        // SLU-WAREHOUSE-024: a column or relation is not there, or has another type
  kConversion,  // SLU-WAREHOUSE-025: a value does not convert
};

// The error for a failure of `kind` with `message`, and `hint` or, when that is empty, the kind's usual hint;
// `language` ("DuckDB SQL") completes kSyntax's: "the SQL is not valid DuckDB SQL".
Error ClassifiedError(FailureKind kind, std::string message, std::string_view language, std::string hint = {});

}  // namespace sluice
