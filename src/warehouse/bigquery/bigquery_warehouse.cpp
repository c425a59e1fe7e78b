#include "warehouse/bigquery/bigquery_warehouse.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "sql/dialect.hpp"
#include "warehouse/bigquery/bigquery_statements.hpp"
#include "warehouse/ledgered_write.hpp"
#include "warehouse/warehouse_error.hpp"

namespace sluice {

namespace {

constexpr std::string_view kPauseBeforeLedger = "after_swap_before_ledger";

bool SameName(const std::string& a, const std::string& b) { return sql::SameColumnName(sql::Dialect::kBigQuery, a, b); }

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

const BigQueryField* FindField(const std::vector<BigQueryField>& fields, const std::string& name) {
  for (const BigQueryField& field : fields) {
    if (SameName(field.name, name)) return &field;
  }
  return nullptr;
}

// Whether INSERT puts values of type `from` into a column of type `to` (GoogleSQL's implicit coercions).
bool ConvertsImplicitly(const std::string& from, const std::string& to) {
  if (from == to) return true;
  if (from == "INT64") return to == "NUMERIC" || to == "BIGNUMERIC" || to == "FLOAT64";
  if (from == "NUMERIC") return to == "BIGNUMERIC" || to == "FLOAT64";
  if (from == "BIGNUMERIC") return to == "FLOAT64";
  return false;
}

bool IsView(const nlohmann::json& table) {
  std::string type = table.value("type", "TABLE");
  return type == "VIEW" || type == "MATERIALIZED_VIEW";
}

// How a table is partitioned, in words: "" when it is partitioned by day on `date_column`.
std::string PartitioningMismatch(const nlohmann::json& table, const std::string& date_column) {
  if (table.contains("rangePartitioning")) return "partitioned by an integer range";
  if (!table.contains("timePartitioning")) return "not partitioned";
  const nlohmann::json& partitioning = table["timePartitioning"];
  std::string type = partitioning.value("type", "DAY");
  std::string field = partitioning.value("field", "");
  if (field.empty()) return "partitioned by ingestion time";
  if (type != "DAY") return "partitioned by " + type + " of \"" + field + "\"";
  if (!SameName(field, date_column)) return "partitioned by \"" + field + "\"";
  return "";
}

// Whether CREATE OR REPLACE TABLE can replace `table` with an unpartitioned, unclustered one (BigQuery refuses to
// change a table's partitioning or clustering in place).
bool IsPlainTable(const nlohmann::json& table) {
  return !IsView(table) && !table.contains("timePartitioning") && !table.contains("rangePartitioning") &&
         !table.contains("clustering");
}

std::string TablePath(const Relation& relation) {
  return "datasets/" + UrlEncode(relation.name_space) + "/tables/" + UrlEncode(relation.name);
}

int64_t Number(const Rows& rows, size_t column) {
  if (rows.rows.empty() || rows.rows[0].size() <= column || !rows.rows[0][column]) return 0;
  return std::stoll(*rows.rows[0][column]);
}

}  // namespace

struct BigQueryWarehouse::Impl {
  std::unique_ptr<BigQueryClient> client;
  BigQueryStatements statements;
  Capabilities capabilities;
  StatementObserver observer;  // set before writes start

  std::mutex mutex;                // guards the two below
  std::set<std::string> datasets;  // known to exist in the configured location
  bool ledger_ready = false;

  Impl(std::unique_ptr<BigQueryClient> bigquery_client, const BigQueryEndpoint& endpoint)
      : client(std::move(bigquery_client)), statements(endpoint.project, endpoint.location) {}

  BigQueryResult Run(const BigQueryStatement& statement, const std::string& subject, std::vector<std::string>* record,
                     const std::string& tag, const std::string& cap_key = "", bool dry_run = false) {
    if (record != nullptr) record->push_back(dry_run ? "-- dry run\n" + statement.sql : statement.sql);
    return client->RunJob(statement, JobOptions{subject, tag, dry_run, cap_key});
  }
  BigQueryResult Run(const std::string& sql, const std::string& subject, std::vector<std::string>* record,
                     const std::string& tag, const std::string& cap_key = "") {
    return Run(BigQueryStatement{sql}, subject, record, tag, cap_key);
  }

  std::optional<nlohmann::json> GetTable(const Relation& relation, const std::string& subject) {
    return client->Get(TablePath(relation), subject);
  }

  // Creates the dataset in the configured location when missing; refuses one that exists elsewhere.
  void EnsureDataset(const std::string& name) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (datasets.count(name) > 0) return;
    }
    const std::string& location = client->endpoint().location;
    std::optional<nlohmann::json> dataset = client->Get("datasets/" + UrlEncode(name), "dataset " + name);
    if (dataset) {
      std::string found = dataset->value("location", "");
      if (Lower(found) != Lower(location)) {
        throw WarehouseError("SLU-WAREHOUSE-055",
                             "dataset " + client->endpoint().project + "." + name + " is in location " + found +
                                 ", not in " + location + " where this target works",
                             "set the target's location (SEGMENTSTREAM_WAREHOUSE_LOCATION, or the connection key "
                             "`location`) to " +
                                 found +
                                 ", or use another dataset; a dataset cannot move, and "
                                 "Sluice never recreates one");
      }
    } else {
      Run(statements.CreateSchema(name), "dataset " + name, nullptr, "");
    }
    std::lock_guard<std::mutex> lock(mutex);
    datasets.insert(name);
  }

  void EnsureLedger() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (ledger_ready) return;
    }
    EnsureDataset(kBigQuerySluiceDataset);
    Run(statements.CreateLedger(), "the ledger", nullptr, "");
    std::lock_guard<std::mutex> lock(mutex);
    ledger_ready = true;
  }
};

namespace {

// What the body of a write works with: the statements it sends (recorded for the observer).
struct WriteScope {
  BigQueryWarehouse::Impl& impl;
  const Relation& relation;
  std::string subject;
  std::vector<std::string>* record;
  std::string tag;  // the run id, in job ids

  // A job that changes the relation: counts against its cap.
  BigQueryResult Mutate(const BigQueryStatement& statement) {
    return impl.Run(statement, subject, record, tag, RelationKey(relation));
  }
  BigQueryResult Mutate(const std::string& sql) { return Mutate(BigQueryStatement{sql}); }
  std::vector<BigQueryField> SelectedColumns(const std::string& select_sql) {
    return impl.Run(BigQueryStatements::SelectAll(select_sql), subject, record, tag, "", /*dry_run=*/true).schema;
  }
};

// Runs `body` (each write is one atomic job), then the pause point and the ledger row right after it
// (LedgeredWrite).
template <typename Body>
WriteResult Write(BigQueryWarehouse::Impl& impl, const Relation& relation, const LedgerEntry& ledger, Body&& body) {
  std::vector<std::string> statements;
  WriteScope scope{impl, relation, relation.ToString(), &statements, ledger.run_id};
  struct Nothing {};  // a failed job changed nothing: there is nothing to undo
  return LedgeredWrite(
      impl.observer, relation, statements,
      [&] {
        impl.EnsureDataset(relation.name_space);
        impl.EnsureLedger();
      },
      [] { return Nothing{}; }, [&](Nothing&) { return body(scope); },
      [&](Nothing&, const WriteResult& result) {
        PausePoint(kPauseBeforeLedger);
        impl.Run(impl.statements.InsertLedger(relation, ledger, result.rows_written, result.written_at), scope.subject,
                 &statements, scope.tag);
      });
}

// Brings the table's columns to the SELECT's: added columns are added (NULL in other dates); removed or retyped ones
// throw SLU-WAREHOUSE-013.
void EvolveColumns(WriteScope& scope, const std::vector<BigQueryField>& table,
                   const std::vector<BigQueryField>& selected) {
  std::string changes;
  for (const BigQueryField& column : table) {
    const BigQueryField* now = FindField(selected, column.name);
    if (now == nullptr) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" is no longer selected";
    } else if (!ConvertsImplicitly(StandardType(*now), StandardType(column))) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" was " +
                 StandardType(column) + " and is now " + StandardType(*now);
    }
  }
  if (!changes.empty()) {
    throw WarehouseError("SLU-WAREHOUSE-013",
                         "the SELECT for " + scope.subject + " no longer matches its table: " + changes,
                         "a partitioned table keeps the rows of its other dates, so only added columns are applied "
                         "in place; rebuild it with `sluice run --full-refresh --select <model>`");
  }
  for (const BigQueryField& column : selected) {
    if (FindField(table, column.name) == nullptr) {
      scope.Mutate(scope.impl.statements.AddColumn(scope.relation, column.name, StandardType(column)));
    }
  }
}

}  // namespace

BigQueryWarehouse::BigQueryWarehouse(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BigQueryWarehouse::~BigQueryWarehouse() = default;

std::unique_ptr<BigQueryWarehouse> BigQueryWarehouse::Open(BigQueryOptions options) {
  auto transport = std::make_unique<HttpTransport>();
  std::unique_ptr<GoogleCredentials> credentials = GoogleCredentials::Find(options.credentials, *transport);
  auto client = std::make_unique<BigQueryClient>(options.endpoint, std::move(transport), std::move(credentials),
                                                 options.retry, options.max_concurrent_jobs_per_table);
  auto impl = std::make_unique<Impl>(std::move(client), options.endpoint);
  Capabilities& capabilities = impl->capabilities;
  capabilities.create_or_replace_view = true;
  capabilities.native_date_partitioning = true;
  capabilities.window_functions = true;
  capabilities.server_version = "BigQuery API v2";
  return std::unique_ptr<BigQueryWarehouse>(new BigQueryWarehouse(std::move(impl)));
}

const Capabilities& BigQueryWarehouse::capabilities() const { return impl_->capabilities; }

std::string BigQueryWarehouse::QualifiedName(const Relation& relation) const {
  return impl_->statements.Name(relation);
}

void BigQueryWarehouse::Execute(const std::string& sql) { impl_->Run(sql, "", nullptr, ""); }

Rows BigQueryWarehouse::Query(const std::string& sql) { return impl_->client->Query(BigQueryStatement{sql}, "").rows; }

std::optional<TableInfo> BigQueryWarehouse::Describe(const Relation& relation) {
  std::optional<nlohmann::json> table = impl_->GetTable(relation, relation.ToString());
  if (!table) return std::nullopt;
  TableInfo info{relation, IsView(*table), {}};
  for (const BigQueryField& field : ParseSchema(table->value("schema", nlohmann::json::object()))) {
    info.columns.push_back({field.name, StandardType(field)});
  }
  return info;
}

std::vector<TableInfo> BigQueryWarehouse::ListRelations() {
  Rows rows = impl_->client->Query(BigQueryStatement{impl_->statements.ListColumns()}, "the catalog").rows;
  std::map<Relation, TableInfo> infos;
  for (const auto& row : rows.rows) {
    if (row.size() < 5) continue;
    Relation relation{row[0].value_or(""), row[1].value_or("")};
    std::string type = row[2].value_or("");
    auto [it, inserted] =
        infos.try_emplace(relation, TableInfo{relation, type == "VIEW" || type == "MATERIALIZED VIEW", {}});
    it->second.columns.push_back({row[3].value_or(""), row[4].value_or("")});
  }
  std::vector<TableInfo> result;
  for (auto& [relation, info] : infos) result.push_back(std::move(info));
  return result;
}

void BigQueryWarehouse::EnsureSchema(const std::string& name) { impl_->EnsureDataset(name); }

WriteResult BigQueryWarehouse::ReplaceTable(const Relation& relation, const std::string& select_sql,
                                            LedgerEntry ledger) {
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    std::optional<nlohmann::json> existing = impl_->GetTable(relation, scope.subject);
    if (existing && !IsPlainTable(*existing)) scope.Mutate(impl_->statements.Drop(relation, IsView(*existing)));
    WriteResult result;
    result.rows_written = Number(scope.Mutate(impl_->statements.ReplaceTable(relation, select_sql)).rows, 0);
    return result;
  });
}

WriteResult BigQueryWarehouse::ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                                                const std::string& date_column, DateWindow window, LedgerEntry ledger,
                                                DateRangeMode mode) {
  ledger.window = window;  // the ledger records exactly the window this write owned
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    std::vector<BigQueryField> selected = scope.SelectedColumns(select_sql);
    const BigQueryField* date = FindField(selected, date_column);
    if (date == nullptr) {
      throw WarehouseError(
          "SLU-WAREHOUSE-010",
          "the SELECT for " + scope.subject + " has no column \"" + date_column + "\", its partition date column",
          "select the date column (by that name) in the model, or fix the partitions column");
    }
    if (StandardType(*date) != "DATE") {
      throw WarehouseError("SLU-WAREHOUSE-014",
                           "the partition date column \"" + date_column + "\" of " + scope.subject + " is " +
                               StandardType(*date) + ", not DATE",
                           "BigQuery partitions the table by day of a DATE column: select it as a DATE, e.g. "
                           "DATE(ts) AS " +
                               date_column);
    }
    std::optional<nlohmann::json> existing = impl_->GetTable(relation, scope.subject);
    std::string mismatch = existing ? PartitioningMismatch(*existing, date_column) : "";
    if (mode == DateRangeMode::kWholeTable) {
      // CREATE OR REPLACE cannot change a table's partitioning: such a table (or a view) is dropped first.
      if (existing && (IsView(*existing) || !mismatch.empty() || existing->contains("clustering"))) {
        scope.Mutate(impl_->statements.Drop(relation, IsView(*existing)));
      }
      Rows counts = scope.Mutate(impl_->statements.ReplaceWholeTable(relation, select_sql, date_column, window)).rows;
      return WriteResult{Number(counts, 0), Number(counts, 1) - Number(counts, 0), ""};
    }
    if (existing && IsView(*existing)) {
      scope.Mutate(impl_->statements.Drop(relation, true));
      existing.reset();
    }
    if (!existing) {
      scope.Mutate(impl_->statements.CreatePartitioned(relation, select_sql, date_column));
    } else {
      if (!mismatch.empty()) {
        throw WarehouseError("SLU-WAREHOUSE-014",
                             "the table " + scope.subject + " is " + mismatch + ", not by day of \"" + date_column +
                                 "\", so a window of its dates cannot be replaced in one statement",
                             "rebuild it with `sluice run --full-refresh --select <model>`");
      }
      EvolveColumns(scope, ParseSchema(existing->value("schema", nlohmann::json::object())), selected);
    }
    std::vector<std::string> columns;
    for (const BigQueryField& field : selected) columns.push_back(field.name);
    Rows counts =
        scope.Mutate(impl_->statements.ReplaceWindow(relation, select_sql, date_column, window, columns)).rows;
    return WriteResult{Number(counts, 0), Number(counts, 1) - Number(counts, 0), ""};
  });
}

WriteResult BigQueryWarehouse::ReplaceView(const Relation& relation, const std::string& select_sql,
                                           LedgerEntry ledger) {
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    std::optional<nlohmann::json> existing = impl_->GetTable(relation, scope.subject);
    if (existing && !IsView(*existing)) scope.Mutate(impl_->statements.Drop(relation, false));
    scope.Mutate(impl_->statements.ReplaceView(relation, select_sql));
    return WriteResult{};  // a view stores no rows
  });
}

WriteResult BigQueryWarehouse::LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) {
  SeedTable table = ReadSeedTable(relation, seed, kBigQuerySeedTypes);
  std::string sql = impl_->statements.LoadSeed(relation, table);
  if (sql.size() > kMaxQueryBytes) {
    throw WarehouseError("SLU-WAREHOUSE-056",
                         "seed file " + seed.path + " for " + relation.ToString() + " needs " +
                             std::to_string(sql.size()) + " bytes of SQL, over BigQuery's " +
                             std::to_string(kMaxQueryBytes) + "-byte limit for one query",
                         "seeds are for small reference tables; load a large file with `bq load` and declare it "
                         "as a source");
  }
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    std::optional<nlohmann::json> existing = impl_->GetTable(relation, scope.subject);
    if (existing && !IsPlainTable(*existing)) scope.Mutate(impl_->statements.Drop(relation, IsView(*existing)));
    scope.Mutate(sql);
    WriteResult result;
    result.rows_written = static_cast<int64_t>(table.rows.size());
    return result;
  });
}

std::vector<LedgerEntry> BigQueryWarehouse::ReadLedger() {
  if (!impl_->GetTable({kBigQuerySluiceDataset, "ledger"}, "the ledger")) return {};
  Rows rows = impl_->client->Query(BigQueryStatement{impl_->statements.SelectLedger()}, "the ledger").rows;
  std::vector<LedgerEntry> entries;
  for (const auto& row : rows.rows) {
    if (row.size() < 9) continue;
    entries.push_back(LedgerEntryFromRow(row));
  }
  return entries;
}

void BigQueryWarehouse::DropRelation(const Relation& relation) {
  std::optional<nlohmann::json> existing = impl_->GetTable(relation, relation.ToString());
  if (!existing) return;
  impl_->Run(impl_->statements.Drop(relation, IsView(*existing)), relation.ToString(), nullptr, "",
             RelationKey(relation));
}

void BigQueryWarehouse::Interrupt() { impl_->client->Interrupt(); }

void BigQueryWarehouse::ObserveStatements(StatementObserver observer) { impl_->observer = std::move(observer); }

}  // namespace sluice
