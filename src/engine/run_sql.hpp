// The SELECT the warehouse runs for one step of a SQL model: the model's SQL rendered by the one path
// (definitions/model_sql.hpp), each `__source(...)` / `__ref(...)` span becoming the upstream's relation as the
// warehouse names it (Warehouse::QualifiedName) — or, when the model and the upstream are both daily-partitioned, a subquery reading
// only the window's dates — and each `@partition_start()` / `@partition_end()` the window's start or end as a
// DATE literal. The model's SQL is not scanned again: its spans were recorded when it was defined.
// Errors: SLU-RUN-002, located at the call, for a partition bound in a step without a window.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/date.hpp"
#include "definitions/definitions.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct RunSql {
  std::string text;
  std::vector<sql::SpanReplacement> replacements;  // what replaced which span of the model's body

  // Where in the model file (`asset.defined_at.file`, whose text is `file_text`) a byte of `text` came from.
  SourceLocation LocationOf(const SqlCompute& model, const std::string& file, std::string_view file_text,
                            size_t offset) const;
};

// The text of the model file `asset` is defined in as far as locating an error needs it: its header as written
// (SqlCompute::header, kept at load); empty for other assets.
const std::string& ModelFileText(const Asset& asset);

RunSql RenderRunSql(const Definitions& definitions, const Asset& asset, const std::optional<DateWindow>& window,
                    const Warehouse& warehouse);

}  // namespace sluice
