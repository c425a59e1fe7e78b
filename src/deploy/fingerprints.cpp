#include "deploy/fingerprints.hpp"

#include <dtl/dtl.hpp>

#include <sstream>

#include "sql/dialect.hpp"
#include "sql/sluice_ddl.hpp"

namespace sluice {

namespace {

const Relation kFingerprints{"_sluice", "fingerprints"};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::map<std::string, Fingerprint> ReadFingerprints(Warehouse& warehouse) {
  std::map<std::string, Fingerprint> latest;
  // Describe and ListRelations list user relations only; `_sluice` is Sluice's own.
  if (warehouse.CatalogOf(std::vector<Relation>{kFingerprints}).empty()) return latest;
  Rows rows = warehouse.Query("SELECT model, sql, sha256, run_id, applied_at FROM " +
                              warehouse.QualifiedName(kFingerprints) + " ORDER BY applied_at, run_id");
  for (const auto& row : rows.rows) {
    Fingerprint fingerprint{row[0].value_or(""), row[1].value_or(""), row[2].value_or(""), row[3].value_or(""),
                            row[4].value_or("")};
    latest[fingerprint.model] = std::move(fingerprint);
  }
  return latest;
}

void WriteFingerprints(Warehouse& warehouse, const std::vector<Fingerprint>& fingerprints) {
  if (fingerprints.empty()) return;
  const sql::Dialect dialect = warehouse.dialect();
  const std::string table = warehouse.QualifiedName(kFingerprints);
  warehouse.EnsureSchema(kFingerprints.name_space);
  warehouse.Execute(sql::CreateTextTable(
      dialect, table,
      {{"model", false}, {"sql", false}, {"sha256", false}, {"run_id", false}, {"applied_at", false}},
      {"model", "applied_at"}));
  std::string values;
  for (const Fingerprint& f : fingerprints) {
    values += values.empty() ? "" : ", ";
    values += "(" + sql::QuoteString(dialect, f.model) + ", " + sql::QuoteString(dialect, f.sql) + ", " +
              sql::QuoteString(dialect, f.sha256) + ", " + sql::QuoteString(dialect, f.run_id) + ", " +
              sql::QuoteString(dialect, f.applied_at) + ")";
  }
  warehouse.Execute("INSERT INTO " + table + " (model, sql, sha256, run_id, applied_at) VALUES " + values);
}

std::string UnifiedDiff(const std::string& before, const std::string& after, const std::string& from,
                        const std::string& to) {
  if (before == after) return "";
  dtl::Diff<std::string> diff(Lines(before), Lines(after));
  diff.onHuge();
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream out;
  out << "--- " << from << "\n+++ " << to << "\n";
  diff.printUnifiedFormat(out);
  return out.str();
}

}  // namespace sluice
