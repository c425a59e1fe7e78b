#include "engine/run_sql.hpp"

#include "definitions/model_sql.hpp"
#include "sql/dialect.hpp"

namespace sluice {

std::string RenderRunSql(const Definitions& definitions, const Asset& asset, const std::optional<DateWindow>& window,
                         const Warehouse& warehouse) {
  const sql::Dialect dialect = warehouse.dialect();
  auto relation = [&](const ResolvedReference& reference) {
    const Asset& upstream = *definitions.Find(reference.upstream);
    std::string name = warehouse.QualifiedName(Relation{upstream.key.name_space(), upstream.relation_name});
    if (!window || !asset.partitions || !upstream.partitions) return name;
    const std::string column = sql::QuoteIdentifier(dialect, upstream.partitions->column);
    return "(SELECT * FROM " + name + " WHERE " + column + " >= " + sql::DateLiteral(dialect, window->start) + " AND " +
           column + " < " + sql::DateLiteral(dialect, window->end) + ")";
  };
  auto bound = [&](const PartitionBoundCall& call) {
    const char* name = call.bound == PartitionBound::kStart ? "@partition_start()" : "@partition_end()";
    if (!window) {
      throw Error(Diagnostic{"SLU-RUN-002",
                             std::string(name) + " is used by " + asset.key.ToString() + ", which is not partitioned",
                             call.at, "declare partitions (daily (…)) on the model", {}});
    }
    return sql::DateLiteral(dialect, call.bound == PartitionBound::kStart ? window->start : window->end);
  };
  return RenderModelSql(std::get<SqlCompute>(asset.compute), relation, bound);
}

}  // namespace sluice
