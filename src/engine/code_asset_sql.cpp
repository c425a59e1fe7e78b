#include "engine/code_asset_sql.hpp"

#include <exception>

#include "engine/asset_status.hpp"
#include "sql/relational/printer.hpp"

namespace sluice {

namespace {

Error AtDefinition(const Asset& asset, const std::vector<Diagnostic>& diagnostics) {
  std::vector<Diagnostic> located = diagnostics;
  for (Diagnostic& diagnostic : located) {
    if (!diagnostic.location.known()) diagnostic.location = asset.defined_at;
    if (diagnostic.message.rfind("asset ", 0) != 0) {
      diagnostic.message = "asset " + asset.key.ToString() + ": " + diagnostic.message;
    }
  }
  return Error(std::move(located));
}

Error RunError(const Asset& asset, const char* code, const std::string& message, const std::string& hint) {
  return Error(Diagnostic{code, "asset " + asset.key.ToString() + ": " + message, asset.defined_at, hint, {}});
}

// The upstream as a table reference with the warehouse's schema, filtered to `window` when given.
rel::Table InputTable(const Asset& asset, const Asset& upstream, const std::optional<DateWindow>& window,
                      Warehouse& warehouse) {
  const Relation relation = RelationOf(upstream);
  std::optional<TableInfo> info = warehouse.Describe(relation);
  if (!info) {
    throw RunError(asset, "SLU-RUN-006", "its input " + upstream.key.ToString() + " (" + relation.ToString() +
                                             ") does not exist in the warehouse",
                   "run the upstream first, e.g. --select +" + asset.key.name());
  }
  std::vector<rel::Field> fields;
  for (const ColumnInfo& column : info->columns) {
    std::optional<rel::DataType> type = rel::FromWarehouseType(warehouse.dialect(), column.type);
    if (!type) {
      throw RunError(asset, "SLU-RUN-007",
                     "column " + column.name + " of its input " + upstream.key.ToString() + " has type " + column.type +
                         ", which expressions cannot use",
                     "cast the column to a supported type (int64, float64, decimal, string, bool, date, timestamp) "
                     "where the upstream is defined");
    }
    fields.push_back({column.name, *type});
  }
  rel::Table table = rel::TableRef(rel::TableName{"", relation.name_space, relation.name}, rel::Schema(std::move(fields)));
  if (window && upstream.partitions && asset.partitions) {
    rel::Value date = table[upstream.partitions->column];
    table = table.filter(date >= rel::Value(window->start) && date < rel::Value(window->end));
  }
  return table;
}

}  // namespace

std::string RenderCodeSql(const Definitions& definitions, const Asset& asset, const CodeCompute& code,
                          const std::optional<DateWindow>& window, const std::string& run_id, Warehouse& warehouse,
                          const std::function<void(const std::string&)>& log) {
  std::optional<rel::Table> output;
  try {
    CodeInputs inputs;
    for (const CodeInput& input : code.inputs) {
      inputs.emplace(input.parameter, InputTable(asset, *definitions.Find(input.upstream), window, warehouse));
    }
    CodeContext context{asset.key, run_id, window ? window->DayKeys() : std::vector<std::string>{}, window, log};
    output = code.function(context, inputs);
  } catch (const Error& error) {
    throw AtDefinition(asset, error.diagnostics());
  } catch (const std::exception& error) {
    throw RunError(asset, "SLU-RUN-008", std::string("its compute function threw: ") + error.what(),
                   "the function must return a table expression; errors in it end the step");
  }
  if (asset.partitions) {
    const rel::Field* column = output->schema().Find(asset.partitions->column);
    if (column == nullptr || column->type.kind != rel::TypeKind::kDate) {
      std::string columns;
      for (const rel::Field& field : output->schema().fields()) {
        columns += (columns.empty() ? "" : ", ") + field.name + " " + rel::TypeName(field.type);
      }
      throw RunError(asset, "SLU-RUN-009",
                     "its output has no DATE column \"" + asset.partitions->column + "\" (it has: " + columns + ")",
                     "a daily asset's output holds its partition_by_date column, typed date");
    }
    // A row whose date is NULL belongs to no partition; without such rows the column is a plain DATE, which is what
    // a natively partitioned table needs (ClickHouse cannot partition by a Nullable column).
    if (column->type.nullable) {
      rel::Value date = (*output)[asset.partitions->column];
      rel::Table present = output->filter(date.not_null());
      rel::Value never_used = rel::Value(window ? window->start : asset.partitions->partitions.start_date());
      output = present.mutate({{asset.partitions->column, present[asset.partitions->column].fill_null(never_used)}});
    }
  }
  try {
    return rel::ToSql(*output, warehouse.dialect());
  } catch (const Error& error) {
    throw AtDefinition(asset, error.diagnostics());
  }
}

}  // namespace sluice
