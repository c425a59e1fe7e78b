#include "warehouse/warehouse.hpp"

#include <cctype>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"

namespace sluice {

std::string RelationKey(const Relation& relation) {
  std::string key = relation.ToString();
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

std::string Warehouse::QualifiedName(const Relation& relation) const {
  return sql::QualifiedName(dialect(), relation.name_space, relation.name);
}

WriteResult Warehouse::ReplaceView(const Relation& relation, const std::string& /*select_sql*/,
                                   LedgerEntry /*ledger*/) {
  throw Error(
      Diagnostic{"SLU-WAREHOUSE-005",
                 "this warehouse cannot create the view " + relation.ToString() + " yet",
                 {},
                 "materialize the model as a table, or use a warehouse whose backend implements views",
                 {}});
}

std::vector<WriteResult> Warehouse::RecordMaterialized(const std::vector<std::pair<Relation, LedgerEntry>>& entries) {
  throw Error(Diagnostic{"SLU-WAREHOUSE-033",
                         "this warehouse cannot record materializations made outside its own writes (" +
                             (entries.empty() ? std::string("none") : entries.front().first.ToString()) + ")",
                         {}, "", {}});
}

}  // namespace sluice
