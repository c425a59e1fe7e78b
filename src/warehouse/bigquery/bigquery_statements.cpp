#include "warehouse/bigquery/bigquery_statements.hpp"

#include <cctype>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

constexpr sql::Dialect kDialect = sql::Dialect::kBigQuery;
constexpr const char* kSelectedTable = "_sluice_selected";

std::string Quote(const std::string& name) { return sql::QuoteIdentifier(kDialect, name); }
std::string Literal(const std::string& text) { return sql::QuoteString(kDialect, text); }

// `prefix` + "SELECT * FROM (\n" + select + "\n)" + suffix, remembering where the SELECT sits.
BigQueryStatement Embedding(const std::string& prefix, const std::string& select_sql, const std::string& suffix) {
  return sluice::Embedding(kDialect, prefix + "SELECT * FROM ", select_sql, suffix);
}

std::string Counts(const std::string& date_column, DateWindow window) {
  return "SELECT COUNTIF(" + BigQueryStatements::InWindow("", date_column, window) +
         ") AS in_window, COUNT(*) AS selected FROM " + kSelectedTable + ";";
}

}  // namespace

BigQueryStatements::BigQueryStatements(std::string project, std::string location)
    : project_(std::move(project)), location_(std::move(location)) {}

std::string BigQueryStatements::Name(const Relation& relation) const {
  return Quote(project_ + "." + relation.name_space + "." + relation.name);
}

std::string BigQueryStatements::Dataset(const std::string& dataset) const { return Quote(project_ + "." + dataset); }

std::string BigQueryStatements::CreateSchema(const std::string& dataset) const {
  return "CREATE SCHEMA IF NOT EXISTS " + Dataset(dataset) + " OPTIONS(location = " + Literal(location_) + ")";
}

BigQueryStatement BigQueryStatements::SelectAll(const std::string& select_sql) { return Embedding("", select_sql, ""); }

BigQueryStatement BigQueryStatements::ReplaceTable(const Relation& relation, const std::string& select_sql) const {
  return Embedding("CREATE OR REPLACE TABLE " + Name(relation) + " AS\n", select_sql,
                   ";\nSELECT COUNT(*) AS row_count FROM " + Name(relation) + ";");
}

BigQueryStatement BigQueryStatements::CreatePartitioned(const Relation& relation, const std::string& select_sql,
                                                        const std::string& date_column) const {
  return Embedding("CREATE TABLE IF NOT EXISTS " + Name(relation) + "\nPARTITION BY " + Quote(date_column) + " AS\n",
                   select_sql, " WHERE FALSE");
}

std::string BigQueryStatements::InWindow(const std::string& qualifier, const std::string& date_column,
                                         DateWindow window) {
  std::string column = (qualifier.empty() ? "" : qualifier + ".") + Quote(date_column);
  return column + " >= " + sql::DateLiteral(kDialect, window.start) + " AND " + column + " < " +
         sql::DateLiteral(kDialect, window.end);
}

BigQueryStatement BigQueryStatements::ReplaceWindow(const Relation& relation, const std::string& select_sql,
                                                    const std::string& date_column, DateWindow window,
                                                    const std::vector<std::string>& columns) const {
  std::string names;
  for (const std::string& column : columns) names += (names.empty() ? "" : ", ") + Quote(column);
  std::string merge = ";\nMERGE " + Name(relation) + " AS target\nUSING (SELECT * FROM " + kSelectedTable + " WHERE " +
                      InWindow("", date_column, window) + ") AS source\nON FALSE\n" +
                      "WHEN NOT MATCHED BY SOURCE AND " + InWindow("target", date_column, window) +
                      " THEN DELETE\nWHEN NOT MATCHED THEN INSERT (" + names + ") VALUES (" + names + ");\n" +
                      Counts(date_column, window);
  return Embedding(std::string("CREATE TEMP TABLE ") + kSelectedTable + " AS\n", select_sql, merge);
}

BigQueryStatement BigQueryStatements::ReplaceWholeTable(const Relation& relation, const std::string& select_sql,
                                                        const std::string& date_column, DateWindow window) const {
  std::string replace = ";\nCREATE OR REPLACE TABLE " + Name(relation) + "\nPARTITION BY " + Quote(date_column) +
                        " AS\nSELECT * FROM " + kSelectedTable + " WHERE " + InWindow("", date_column, window) + ";\n" +
                        Counts(date_column, window);
  return Embedding(std::string("CREATE TEMP TABLE ") + kSelectedTable + " AS\n", select_sql, replace);
}

std::string BigQueryStatements::AddColumn(const Relation& relation, const std::string& column,
                                          const std::string& type) const {
  return "ALTER TABLE " + Name(relation) + " ADD COLUMN IF NOT EXISTS " + Quote(column) + " " + type;
}

BigQueryStatement BigQueryStatements::ReplaceView(const Relation& relation, const std::string& select_sql) const {
  BigQueryStatement statement;
  statement.sql = "CREATE OR REPLACE VIEW " + Name(relation) + " AS\n";
  statement.select_begin = statement.sql.size();
  statement.select_size = select_sql.size();
  statement.sql += select_sql;
  return statement;
}

std::string BigQueryStatements::Drop(const Relation& relation, bool is_view) const {
  return std::string(is_view ? "DROP VIEW" : "DROP TABLE") + " IF EXISTS " + Name(relation);
}

std::string BigQueryStatements::LoadSeed(const Relation& relation, const SeedTable& table) const {
  std::string definition;
  const std::vector<std::string>& types = table.types;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    definition += (i > 0 ? ", " : "") + Quote(table.columns[i]) + " " + types[i];
  }
  if (table.rows.empty()) return "CREATE OR REPLACE TABLE " + Name(relation) + " (" + definition + ")";
  std::string sql =
      "CREATE OR REPLACE TABLE " + Name(relation) + " AS\nSELECT * FROM UNNEST(ARRAY<STRUCT<" + definition + ">>[";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    sql += r == 0 ? "\n  STRUCT(" : ",\n  STRUCT(";
    for (size_t c = 0; c < table.rows[r].size(); ++c) {
      const std::optional<std::string>& value = table.rows[r][c];
      sql += (c > 0 ? ", " : "") +
             (value ? "CAST(" + Literal(*value) + " AS " + types[c] + ")" : "CAST(NULL AS " + types[c] + ")");
    }
    sql += ")";
  }
  return sql + "\n])";
}

std::string BigQueryStatements::CreateLedger() const {
  return "CREATE TABLE IF NOT EXISTS " + Name({kBigQuerySluiceDataset, "ledger"}) +
         " (asset STRING, window_start DATE, window_end DATE, run_id STRING, row_count INT64, sql_hash STRING,"
         " written_at STRING, relation_schema STRING, relation_name STRING)";
}

std::string BigQueryStatements::InsertLedger(const Relation& relation, const LedgerEntry& entry, int64_t row_count,
                                             const std::string& written_at) const {
  auto date_or_null = [](std::optional<Date> date) {
    return date ? sql::DateLiteral(kDialect, *date) : std::string("NULL");
  };
  return "INSERT INTO " + Name({kBigQuerySluiceDataset, "ledger"}) +
         " (asset, window_start, window_end, run_id, row_count, sql_hash, written_at, relation_schema, relation_name)"
         " VALUES (" +
         Literal(entry.asset) + ", " +
         date_or_null(entry.window ? std::optional<Date>(entry.window->start) : std::nullopt) + ", " +
         date_or_null(entry.window ? std::optional<Date>(entry.window->end) : std::nullopt) + ", " +
         Literal(entry.run_id) + ", " + std::to_string(row_count) + ", " + Literal(entry.sql_hash) + ", " +
         Literal(written_at) + ", " + Literal(relation.name_space) + ", " + Literal(relation.name) + ")";
}

std::string BigQueryStatements::SelectLedger() const {
  return "SELECT asset, CAST(window_start AS STRING), CAST(window_end AS STRING), run_id, CAST(row_count AS STRING),"
         " sql_hash, written_at, relation_schema, relation_name FROM " +
         Name({kBigQuerySluiceDataset, "ledger"}) + " ORDER BY written_at";
}

std::string BigQueryStatements::ListColumns() const {
  std::string region;
  for (char c : location_) region += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string schema = Quote(project_) + "." + Quote("region-" + region) + ".INFORMATION_SCHEMA.";
  return "SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type FROM " + schema +
         "COLUMNS AS c JOIN " + schema +
         "TABLES AS t USING (table_catalog, table_schema, table_name) WHERE c.table_schema != " +
         Literal(kBigQuerySluiceDataset) +
         " AND NOT STARTS_WITH(c.table_schema, '_script') ORDER BY c.table_schema, c.table_name, c.ordinal_position";
}

}  // namespace sluice
