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

namespace {

Error CannotAnswer(const std::string& what, std::string hint) {
  return Error(Diagnostic{"SLU-WAREHOUSE-034", "this warehouse cannot tell " + what, {}, std::move(hint), {}});
}

constexpr const char* kCatalogBackends = "deployments read the catalog of ClickHouse, DuckDB and PostgreSQL";
constexpr const char* kReplayBackends = "replayed history is built on ClickHouse only";

}  // namespace

std::vector<CatalogEntry> Warehouse::CatalogOf(const std::string& name_space) {
  throw CannotAnswer("the catalog entries of " + name_space, kCatalogBackends);
}

std::vector<CatalogEntry> Warehouse::CatalogOf(const std::vector<Relation>& relations) {
  throw CannotAnswer("the catalog entries of " +
                         (relations.empty() ? std::string("no relation") : relations.front().ToString()),
                     kCatalogBackends);
}

std::optional<std::map<std::string, int64_t>> Warehouse::CatalogRowCounts(const std::string& /*name_space*/) {
  return std::nullopt;
}

std::string Warehouse::InsertWatermark(const Relation& relation) {
  throw CannotAnswer("when rows were last inserted into " + relation.ToString(), kReplayBackends);
}

int64_t Warehouse::RunningInserts(std::chrono::duration<double> /*running_for*/) {
  throw CannotAnswer("which INSERT statements are running", kReplayBackends);
}

std::vector<WriteResult> Warehouse::RecordMaterialized(const std::vector<std::pair<Relation, LedgerEntry>>& entries) {
  throw Error(Diagnostic{"SLU-WAREHOUSE-033",
                         "this warehouse cannot record materializations made outside its own writes (" +
                             (entries.empty() ? std::string("none") : entries.front().first.ToString()) + ")",
                         {}, "", {}});
}

LedgerEntry LedgerEntryFromRow(const std::vector<std::optional<std::string>>& row) {
  LedgerEntry entry;
  entry.asset = row.at(0).value_or("");
  std::optional<Date> start = row.at(1) ? Date::Parse(*row[1]) : std::nullopt;
  std::optional<Date> end = row.at(2) ? Date::Parse(*row[2]) : std::nullopt;
  if (start && end) entry.window = DateWindow{*start, *end};
  entry.run_id = row.at(3).value_or("");
  entry.row_count = std::stoll(row.at(4).value_or("0"));
  entry.sql_hash = row.at(5).value_or("");
  entry.written_at = row.at(6).value_or("");
  if (row.at(7) && row.at(8)) entry.relation = Relation{*row[7], *row[8]};
  return entry;
}

}  // namespace sluice
