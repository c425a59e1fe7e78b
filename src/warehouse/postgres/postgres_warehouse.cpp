#include "warehouse/postgres/postgres_warehouse.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "core/postgres/pg_connection.hpp"
#include "core/sha256.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"
#include "warehouse/ledgered_write.hpp"
#include "warehouse/postgres/postgres_session.hpp"
#include "warehouse/seed_table.hpp"

namespace sluice {

using postgres::CheckIdentifier;
using postgres::CheckRelation;
using postgres::ConnectionPool;
using postgres::Embedding;
using postgres::kMaxIdentifierBytes;
using postgres::Operation;
using postgres::Session;
using postgres::Statement;
using postgres::Transaction;
using postgres::WarehouseError;

namespace {

constexpr sql::Dialect kDialect = sql::Dialect::kPostgres;
constexpr const char* kLedgerSchema = "_sluice";
constexpr const char* kLedgerTable = "ledger";
// The advisory lock every Sluice DDL outside a write takes (schema and ledger creation), so that two processes
// creating the same schema do not collide on the catalog's unique index.
constexpr const char* kDdlLock = "SELECT pg_advisory_xact_lock(hashtext('sluice.ddl'))";

std::string Quote(std::string_view identifier) { return sql::QuoteIdentifier(kDialect, identifier); }
std::string Literal(std::string_view text) { return sql::QuoteString(kDialect, text); }
std::string Qualified(const Relation& relation) {
  return sql::QualifiedName(kDialect, relation.name_space, relation.name);
}
std::string LedgerName() { return sql::QualifiedName(kDialect, kLedgerSchema, kLedgerTable); }

// The advisory lock every write of `relation` takes first in its transaction, held until COMMIT or ROLLBACK: the
// writers of one relation, in any process on any machine, run one after another, and each one's statements see what
// the previous one committed (its rows to delete, the table or partitions it created). Readers never take it. The
// two-key form keeps these locks apart from kDdlLock's one-key space; two relations whose names hash alike merely
// share a lock.
std::string RelationWriteLock(const Relation& relation) {
  return "SELECT pg_advisory_xact_lock(hashtext(" + Literal("sluice.write") + "), hashtext(" +
         Literal(Qualified(relation)) + "))";
}

}  // namespace

std::string PostgresPartitionName(const std::string& table, Date day) {
  std::string date = day.ToString();
  std::string suffix = "_p" + date.substr(0, 4) + date.substr(5, 2) + date.substr(8, 2);
  if (table.size() + suffix.size() <= kMaxIdentifierBytes) return table + suffix;
  std::string tag = "_" + Sha256Hex(table).substr(0, 8);
  size_t keep = kMaxIdentifierBytes - suffix.size() - tag.size();
  while (keep > 0 && (static_cast<unsigned char>(table[keep]) & 0xC0) == 0x80) --keep;  // not inside a character
  return table.substr(0, keep) + tag + suffix;
}

// The warehouse's shared state: its connections, and what its writes prepare once.
struct PostgresWarehouse::Pool {
  ConnectionPool connections;
  StatementObserver observer;  // set before writes start
  std::mutex ddl_mutex;
  bool ledger_ready = false;            // guarded by ddl_mutex
  std::set<std::string> schemas_ready;  // guarded by ddl_mutex
};

namespace {

std::string LedgerInsertSql(const Relation& relation, const LedgerEntry& entry, int64_t row_count,
                            const std::string& written_at) {
  auto date_or_null = [](std::optional<Date> date) {
    return date ? sql::DateLiteral(kDialect, *date) : std::string("NULL");
  };
  std::string timestamp = written_at;
  if (!timestamp.empty() && timestamp.back() == 'Z') timestamp.pop_back();
  return "INSERT INTO " + LedgerName() +
         " (asset, window_start, window_end, run_id, row_count, sql_hash, written_at, relation_schema, relation_name)"
         " VALUES (" +
         Literal(entry.asset) + ", " +
         date_or_null(entry.window ? std::optional<Date>(entry.window->start) : std::nullopt) + ", " +
         date_or_null(entry.window ? std::optional<Date>(entry.window->end) : std::nullopt) + ", " +
         Literal(entry.run_id) + ", " + std::to_string(row_count) + ", " + Literal(entry.sql_hash) + ", CAST(" +
         Literal(timestamp) + " AS TIMESTAMP), " + Literal(relation.name_space) + ", " + Literal(relation.name) + ")";
}

// Every user relation (partitions excluded: they are part of their table) with its columns, one row per column.
std::string CatalogSql(const Relation* only) {
  std::string sql =
      "SELECT n.nspname, c.relname, c.relkind IN ('v', 'm'), a.attname, format_type(a.atttypid, a.atttypmod)\n"
      "FROM pg_catalog.pg_class AS c\n"
      "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace\n"
      "LEFT JOIN pg_catalog.pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped\n"
      "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition\n"
      "  AND n.nspname NOT IN (" +
      Literal(kLedgerSchema) +
      ", 'information_schema', 'pg_catalog', 'pg_toast')\n"
      "  AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'\n";
  if (only != nullptr) {
    sql += "  AND n.nspname = " + Literal(only->name_space) + " AND c.relname = " + Literal(only->name) + "\n";
  }
  sql += "ORDER BY n.nspname, c.relname, a.attnum";
  return sql;
}

std::vector<TableInfo> CatalogRows(const pg::Result& result) {
  std::vector<TableInfo> infos;
  for (const auto& row : result.rows) {
    Relation relation{row[0].value_or(""), row[1].value_or("")};
    if (infos.empty() || infos.back().relation != relation) {
      infos.push_back(TableInfo{relation, row[2].value_or("f") == "t", {}});
    }
    if (row[3]) infos.back().columns.push_back(ColumnInfo{*row[3], row[4].value_or("")});
  }
  std::sort(infos.begin(), infos.end(), [](const TableInfo& a, const TableInfo& b) { return a.relation < b.relation; });
  return infos;
}

// The query behind CatalogOf: the relations `filter` (a condition on n.nspname and c.relname) selects, partitions
// excluded, sorted by relation; a view's text is `SELECT * FROM ns.relation` when it reads exactly one relation and
// has exactly its columns in order (PostgreSQL keeps no view's text, only its parsed form, in which `*` is
// expanded), otherwise its definition.
std::string CatalogEntriesSql(const std::string& filter) {
  return "WITH relations AS (SELECT c.oid, n.nspname, c.relname, c.relkind FROM pg_catalog.pg_class AS c JOIN "
         "pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT "
         "c.relispartition AND (" +
         filter +
         ")),\n"
         "views AS (SELECT oid FROM relations WHERE relkind IN ('v', 'm')),\n"
         "reads AS (SELECT v.oid, min(d.refobjid) AS relation, count(DISTINCT d.refobjid) AS relations FROM views AS v "
         "JOIN pg_catalog.pg_rewrite AS r ON r.ev_class = v.oid JOIN pg_catalog.pg_depend AS d ON d.objid = r.oid AND "
         "d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass AND "
         "d.refobjid <> v.oid GROUP BY v.oid),\n"
         "columns AS (SELECT attrelid, array_agg(attname ORDER BY attnum) AS names FROM pg_catalog.pg_attribute WHERE "
         "attnum > 0 AND NOT attisdropped AND attrelid IN (SELECT oid FROM views UNION SELECT relation FROM reads) "
         "GROUP BY attrelid)\n"
         "SELECT v.nspname, v.relname, v.relkind, CASE WHEN v.relkind NOT IN ('v', 'm') THEN NULL WHEN r.relations = 1 "
         "AND vc.names = rc.names THEN 'SELECT * FROM ' || quote_ident(rn.nspname) || '.' || quote_ident(rt.relname) "
         "ELSE pg_catalog.pg_get_viewdef(v.oid) END\n"
         "FROM relations AS v LEFT JOIN reads AS r ON r.oid = v.oid LEFT JOIN pg_catalog.pg_class AS rt ON rt.oid = "
         "r.relation LEFT JOIN pg_catalog.pg_namespace AS rn ON rn.oid = rt.relnamespace LEFT JOIN columns AS vc ON "
         "vc.attrelid = v.oid LEFT JOIN columns AS rc ON rc.attrelid = r.relation ORDER BY v.nspname, v.relname";
}

std::vector<CatalogEntry> CatalogEntries(const pg::Result& result) {
  std::vector<CatalogEntry> entries;
  for (const auto& row : result.rows) {
    CatalogEntry entry;
    entry.relation = Relation{row[0].value_or(""), row[1].value_or("")};
    const std::string kind = row[2].value_or("r");
    if (kind == "v" || kind == "m") {
      entry.kind = kind == "v" ? RelationKind::kView : RelationKind::kMaterializedView;
      entry.definition = row[3].value_or("");
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

// What a relation is now: relkind ('r' table, 'p' partitioned table, 'v' view, 'm' materialized view, ...) or
// nullopt when absent. Locks nothing; the write's own DDL takes the locks.
std::optional<char> KindOf(Session& session, const Relation& relation, const std::string& subject) {
  pg::Result result = session.Run(
      "SELECT c.relkind FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace"
      " WHERE n.nspname = " +
          Literal(relation.name_space) + " AND c.relname = " + Literal(relation.name),
      Operation::kWrite, subject);
  if (result.rows.empty() || !result.rows[0][0] || result.rows[0][0]->empty()) return std::nullopt;
  return (*result.rows[0][0])[0];
}

bool IsViewKind(char kind) { return kind == 'v' || kind == 'm'; }

struct DependentView {
  Relation relation;
  bool materialized = false;
  std::string definition;  // pg_get_viewdef: the SELECT with its names resolved when it was created
};

// The views reading `relation`, directly or through other views, in an order in which each can be created after
// the ones it reads.
std::vector<DependentView> DependentViews(Session& session, const Relation& relation, const std::string& subject) {
  std::string target = "CAST(" + Literal(Qualified(relation)) + " AS regclass)";
  pg::Result result = session.Run(
      "WITH RECURSIVE dependents(oid, depth) AS (\n"
      "  SELECT r.ev_class, 1 FROM pg_catalog.pg_depend AS d JOIN pg_catalog.pg_rewrite AS r ON r.oid = d.objid\n"
      "  WHERE d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass\n"
      "    AND d.refobjid = " +
          target + " AND r.ev_class <> " + target +
          "\n"
          "  UNION\n"
          "  SELECT r.ev_class, dependents.depth + 1 FROM dependents\n"
          "  JOIN pg_catalog.pg_depend AS d ON d.refobjid = dependents.oid\n"
          "    AND d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.refclassid = 'pg_catalog.pg_class'::regclass\n"
          "  JOIN pg_catalog.pg_rewrite AS r ON r.oid = d.objid AND r.ev_class <> dependents.oid\n"
          ")\n"
          "SELECT n.nspname, c.relname, c.relkind = 'm', pg_catalog.pg_get_viewdef(c.oid), max(dependents.depth)\n"
          "FROM dependents JOIN pg_catalog.pg_class AS c ON c.oid = dependents.oid\n"
          "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace\n"
          "GROUP BY 1, 2, 3, 4 ORDER BY 5, 1, 2",
      Operation::kWrite, subject);
  std::vector<DependentView> views;
  for (const auto& row : result.rows) {
    views.push_back(
        DependentView{{row[0].value_or(""), row[1].value_or("")}, row[2].value_or("f") == "t", row[3].value_or("")});
  }
  return views;
}

// Creates again, in order, the views DependentViews read before their relation was dropped; a view that no longer
// binds to the new relation fails the write rather than vanishing.
void RecreateViews(Session& session, const std::vector<DependentView>& views, const std::string& subject) {
  for (const DependentView& view : views) {
    std::string definition = view.definition;
    while (!definition.empty() && (definition.back() == ';' || definition.back() == ' ' || definition.back() == '\n'))
      definition.pop_back();
    std::string create = std::string(view.materialized ? "CREATE MATERIALIZED VIEW " : "CREATE VIEW ") +
                         Qualified(view.relation) + " AS\n" + definition;
    if (std::optional<pg::PgError> failure = session.TryRun(create)) {
      throw WarehouseError("SLU-WAREHOUSE-042",
                           "writing " + subject + " failed: the view " + view.relation.ToString() +
                               " reads it and does not bind to its new columns: " + failure->what(),
                           "the write is rolled back and the view kept; change or drop the view, or keep the columns "
                           "it reads");
    }
  }
}

// What the body of a write works with: its connection (inside the open transaction) and the relation's name.
struct WriteScope {
  Session& session;
  std::string subject;
};

// Drops `relation` (a table or view, `kind`) with the views depending on it, then runs `create` (which makes the
// new relation under the same name), then creates the dependent views again: all inside the caller's transaction.
template <typename Create>
void ReplaceRelation(WriteScope& scope, const Relation& relation, std::optional<char> kind, Create&& create) {
  std::vector<DependentView> dependents;
  if (kind) {
    dependents = DependentViews(scope.session, relation, scope.subject);
    std::string drop = *kind == 'v'   ? "DROP VIEW "
                       : *kind == 'm' ? "DROP MATERIALIZED VIEW "
                       : *kind == 'f' ? "DROP FOREIGN TABLE "
                                      : "DROP TABLE ";
    scope.session.Run(drop + Qualified(relation) + (dependents.empty() ? "" : " CASCADE"), Operation::kWrite,
                      scope.subject);
  }
  create();
  RecreateViews(scope.session, dependents, scope.subject);
}

std::string UniqueStagingName() {
  static std::atomic<uint64_t> counter{0};
  return "_sluice_staging_" + std::to_string(counter.fetch_add(1));
}

struct StagedColumn {
  std::string name;
  std::string type;  // format_type
  std::string type_oid;
};

std::vector<StagedColumn> ColumnsOf(Session& session, const std::string& regclass_text, const std::string& subject) {
  pg::Result result = session.Run(
      "SELECT attname, format_type(atttypid, atttypmod), atttypid::text FROM pg_catalog.pg_attribute"
      " WHERE attrelid = CAST(" +
          Literal(regclass_text) + " AS regclass) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
      Operation::kWrite, subject);
  std::vector<StagedColumn> columns;
  for (const auto& row : result.rows) {
    columns.push_back(StagedColumn{row[0].value_or(""), row[1].value_or(""), row[2].value_or("")});
  }
  return columns;
}

const StagedColumn* FindColumn(const std::vector<StagedColumn>& columns, const std::string& name) {
  for (const StagedColumn& column : columns) {
    if (column.name == name) return &column;
  }
  return nullptr;
}

// Brings the table `target` to the columns of the SELECT staged in `staging`, inside the write's transaction: added
// columns are added; removed ones, or ones retyped to a type that does not cast implicitly to the table's, throw
// SLU-WAREHOUSE-013.
void EvolveColumns(Session& session, const Relation& target, const std::vector<StagedColumn>& selected,
                   const std::string& subject) {
  std::vector<StagedColumn> table = ColumnsOf(session, Qualified(target), subject);
  std::string changes;
  for (const StagedColumn& column : table) {
    const StagedColumn* now = FindColumn(selected, column.name);
    if (now == nullptr) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" is no longer selected";
    } else if (now->type_oid != column.type_oid) {
      int64_t implicit = session.Count("SELECT count(*) FROM pg_catalog.pg_cast WHERE castsource = " + now->type_oid +
                                           " AND casttarget = " + column.type_oid + " AND castcontext = 'i'",
                                       Operation::kWrite, subject);
      if (implicit == 0) {
        changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" was " + column.type +
                   " and is now " + now->type;
      }
    }
  }
  if (!changes.empty()) {
    throw WarehouseError("SLU-WAREHOUSE-013", "the SELECT for " + subject + " no longer matches its table: " + changes,
                         "a partitioned table keeps the rows of its other dates, so only added columns are applied "
                         "in place; rebuild it with `sluice run --full-refresh --select <model>`");
  }
  for (const StagedColumn& column : selected) {
    if (FindColumn(table, column.name) == nullptr) {
      session.Run("ALTER TABLE " + Qualified(target) + " ADD COLUMN " + Quote(column.name) + " " + column.type,
                  Operation::kWrite, subject);
    }
  }
}

// The days covered by the partitions of `target` (from their bounds), or nullopt when `target` is not partitioned
// by range on `date_column` alone.
struct Partitioning {
  bool partitioned = false;  // false: a plain table
  bool by_date_column = false;
  std::vector<DateWindow> ranges;  // of the existing partitions
};

Partitioning ReadPartitioning(Session& session, const Relation& target, const std::string& date_column,
                              const std::string& subject) {
  Partitioning partitioning;
  std::string regclass = "CAST(" + Literal(Qualified(target)) + " AS regclass)";
  pg::Result key =
      session.Run("SELECT pg_catalog.pg_get_partkeydef(" + regclass + ") = 'RANGE (' || quote_ident(" +
                      Literal(date_column) + ") || ')', pg_catalog.pg_get_partkeydef(" + regclass + ") IS NOT NULL",
                  Operation::kWrite, subject);
  partitioning.partitioned = key.rows[0][1].value_or("f") == "t";
  partitioning.by_date_column = key.rows[0][0].value_or("f") == "t";
  if (!partitioning.by_date_column) return partitioning;
  pg::Result bounds = session.Run(
      "SELECT pg_catalog.pg_get_expr(c.relpartbound, c.oid) FROM pg_catalog.pg_inherits AS i"
      " JOIN pg_catalog.pg_class AS c ON c.oid = i.inhrelid WHERE i.inhparent = " +
          regclass,
      Operation::kWrite, subject);
  static const std::regex kBound(R"(FROM \('(\d{4}-\d{2}-\d{2})[^']*'\) TO \('(\d{4}-\d{2}-\d{2})[^']*'\))");
  for (const auto& row : bounds.rows) {
    std::smatch match;
    std::string text = row[0].value_or("");
    if (!std::regex_search(text, match, kBound)) continue;
    std::optional<Date> from = Date::Parse(match[1].str());
    std::optional<Date> to = Date::Parse(match[2].str());
    if (from && to) partitioning.ranges.push_back(DateWindow{*from, *to});
  }
  return partitioning;
}

// Creates the daily partitions of `target` for the days of `days` no partition covers.
void CreatePartitions(Session& session, const Relation& target, const std::vector<Date>& days,
                      const std::vector<DateWindow>& existing, const std::string& subject) {
  for (Date day : days) {
    bool covered = false;
    for (const DateWindow& range : existing) covered = covered || range.contains(day);
    if (covered) continue;
    Relation partition{target.name_space, PostgresPartitionName(target.name, day)};
    session.Run("CREATE TABLE " + Qualified(partition) + " PARTITION OF " + Qualified(target) + " FOR VALUES FROM (" +
                    Literal(day.ToString()) + ") TO (" + Literal(day.AddDays(1).ToString()) + ")",
                Operation::kWrite, subject);
  }
}

std::string JoinedColumns(const std::vector<StagedColumn>& columns) {
  std::string joined;
  for (const StagedColumn& column : columns) joined += (joined.empty() ? "" : ", ") + Quote(column.name);
  return joined;
}

// Every PostgreSQL column may hold NULL: no wrapper.
const SeedTypeNames kSeedTypes{"BIGINT", "DOUBLE PRECISION", "DATE", "TEXT", "", ""};

}  // namespace

PostgresWarehouse::PostgresWarehouse(std::unique_ptr<Pool> pool, std::string version) : pool_(std::move(pool)) {
  capabilities_.transactions = true;
  capabilities_.create_or_replace_view = true;
  capabilities_.native_date_partitioning = true;
  capabilities_.double_colon_cast = true;
  capabilities_.window_functions = true;
  capabilities_.folds_unquoted_identifiers = true;
  capabilities_.server_version = std::move(version);
}

PostgresWarehouse::~PostgresWarehouse() = default;

std::unique_ptr<PostgresWarehouse> PostgresWarehouse::Open(PostgresEndpoint endpoint, const WaitPolicy& wait) {
  // A server has no file lock to wait for; a run canceled before it connects stops here.
  if (wait.cancel != nullptr && wait.cancel->load()) {
    throw WarehouseError("SLU-WAREHOUSE-008", "canceled before connecting to PostgreSQL at " + endpoint.display, "");
  }
  auto pool = std::make_unique<Pool>();
  pool->connections.endpoint = std::move(endpoint);
  std::string version;
  {
    Session session(pool->connections);
    version =
        session.Run("SHOW server_version", Operation::kOpen, pool->connections.endpoint.display).Scalar().value_or("");
  }
  return std::unique_ptr<PostgresWarehouse>(new PostgresWarehouse(std::move(pool), std::move(version)));
}

void PostgresWarehouse::Execute(const std::string& sql) {
  Session session(pool_->connections);
  session.RunsCallersSql();
  session.Run(sql, Operation::kStatement, "");
}

Rows PostgresWarehouse::Query(const std::string& sql) {
  Session session(pool_->connections);
  session.RunsCallersSql();
  pg::Result result = session.Run(sql, Operation::kStatement, "");
  return Rows{std::move(result.columns), std::move(result.rows)};
}

std::optional<TableInfo> PostgresWarehouse::Describe(const Relation& relation) {
  Session session(pool_->connections);
  std::vector<TableInfo> infos =
      CatalogRows(session.Run(CatalogSql(&relation), Operation::kCatalog, relation.ToString()));
  if (infos.empty()) return std::nullopt;
  return infos.front();
}

std::vector<TableInfo> PostgresWarehouse::ListRelations() {
  Session session(pool_->connections);
  return CatalogRows(session.Run(CatalogSql(nullptr), Operation::kCatalog, "the database"));
}

std::vector<CatalogEntry> PostgresWarehouse::CatalogOf(const std::string& name_space) {
  Session session(pool_->connections);
  return CatalogEntries(
      session.Run(CatalogEntriesSql("n.nspname = " + Literal(name_space)), Operation::kCatalog, name_space));
}

std::vector<CatalogEntry> PostgresWarehouse::CatalogOf(const std::vector<Relation>& relations) {
  if (relations.empty()) return {};
  std::string filter;
  for (const Relation& relation : relations) {
    filter += (filter.empty() ? "(n.nspname = " : " OR (n.nspname = ") + Literal(relation.name_space) +
              " AND c.relname = " + Literal(relation.name) + ")";
  }
  Session session(pool_->connections);
  return CatalogEntries(session.Run(CatalogEntriesSql(filter), Operation::kCatalog,
                                    relations.size() == 1 ? relations.front().ToString() : "several relations"));
}

void PostgresWarehouse::EnsureSchema(const std::string& name) {
  CheckIdentifier(name, "schema");
  std::lock_guard<std::mutex> lock(pool_->ddl_mutex);
  if (pool_->schemas_ready.count(name)) return;
  Session session(pool_->connections);
  Transaction transaction(session, name);
  session.Run(kDdlLock, Operation::kStatement, name);
  session.Run("CREATE SCHEMA IF NOT EXISTS " + Quote(name), Operation::kStatement, name);
  transaction.Commit();
  pool_->schemas_ready.insert(name);
}

namespace {

void EnsureLedger(PostgresWarehouse::Pool& pool, Session& session) {
  std::lock_guard<std::mutex> lock(pool.ddl_mutex);
  if (pool.ledger_ready) return;
  std::string ledger = LedgerName();
  Transaction transaction(session, ledger);
  session.Run(kDdlLock, Operation::kStatement, ledger);
  session.Run("CREATE SCHEMA IF NOT EXISTS " + Quote(kLedgerSchema), Operation::kStatement, ledger);
  // `seq` orders rows written in the same millisecond.
  session.Run("CREATE TABLE IF NOT EXISTS " + ledger +
                  " (asset TEXT, window_start DATE, window_end DATE, run_id TEXT, row_count BIGINT, sql_hash TEXT,"
                  " written_at TIMESTAMP(3), relation_schema TEXT, relation_name TEXT,"
                  " seq BIGINT GENERATED ALWAYS AS IDENTITY)",
              Operation::kStatement, ledger);
  transaction.Commit();
  pool.ledger_ready = true;
}

// Runs `body` in one transaction on its own connection, after the relation's write lock (RelationWriteLock), then the
// pause point, the ledger row and COMMIT (LedgeredWrite).
template <typename Body>
WriteResult Write(PostgresWarehouse& warehouse, PostgresWarehouse::Pool& pool, const Relation& relation,
                  const LedgerEntry& ledger, Body&& body) {
  std::vector<std::string> statements;
  std::optional<Session> session;
  std::optional<WriteScope> scope;
  return LedgeredWrite(
      pool.observer, relation, statements,
      [&] {
        CheckRelation(relation);
        warehouse.EnsureSchema(relation.name_space);
        session.emplace(pool.connections);
        EnsureLedger(pool, *session);
        scope.emplace(WriteScope{*session, relation.ToString()});
        if (pool.observer) session->RecordInto(&statements);
      },
      [&] { return Transaction(*session, scope->subject); },
      [&](Transaction&) {
        session->Run(RelationWriteLock(relation), Operation::kWrite, scope->subject);
        return body(*scope);
      },
      [&](Transaction& transaction, const WriteResult& result) {
        transaction.CommitAfter(LedgerInsertSql(relation, ledger, result.rows_written, result.written_at));
      });
}

}  // namespace

WriteResult PostgresWarehouse::ReplaceTable(const Relation& relation, const std::string& select_sql,
                                            LedgerEntry ledger) {
  return Write(*this, *pool_, relation, ledger, [&](WriteScope& scope) {
    WriteResult result;
    ReplaceRelation(scope, relation, KindOf(scope.session, relation, scope.subject), [&] {
      Statement create =
          Embedding("CREATE TABLE " + Qualified(relation) + " AS SELECT * FROM ", select_sql, " AS " + Quote("select"));
      result.rows_written = scope.session.Run(create, Operation::kWrite, scope.subject).affected;
    });
    return result;
  });
}

WriteResult PostgresWarehouse::ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                                                const std::string& date_column, DateWindow window, LedgerEntry ledger,
                                                DateRangeMode mode) {
  ledger.window = window;  // the ledger records exactly the window this write owned
  return Write(*this, *pool_, relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    const std::string& subject = scope.subject;
    std::string staging_name = UniqueStagingName();
    std::string staging = sql::QualifiedName(kDialect, "pg_temp", staging_name);
    session.Run(Embedding("CREATE TEMP TABLE " + Quote(staging_name) + " ON COMMIT DROP AS SELECT * FROM ", select_sql,
                          " AS " + Quote("select")),
                Operation::kWrite, subject);
    std::vector<StagedColumn> selected = ColumnsOf(session, staging, subject);
    // The SELECT names its columns as the SQL spells them; the model names the date column as it likes.
    const StagedColumn* date = FindColumn(selected, date_column);
    for (const StagedColumn& column : selected) {
      if (date == nullptr && sql::SameColumnName(kDialect, column.name, date_column)) date = &column;
    }
    if (date == nullptr) {
      throw WarehouseError(
          "SLU-WAREHOUSE-010",
          "the SELECT for " + subject + " has no column \"" + date_column + "\", its partition date column",
          "select the date column (by that name) in the model, or fix the partitions column");
    }
    if (date->type != "date" && date->type.rfind("timestamp", 0) != 0) {
      throw WarehouseError(
          "SLU-WAREHOUSE-014",
          "the date column \"" + date->name + "\" of " + subject + " is " + date->type + ", not a date or a timestamp",
          "select it as a DATE, e.g. CAST(" + date->name + " AS DATE)");
    }
    std::string column = Quote(date->name);
    std::string in_window = column + " >= " + sql::DateLiteral(kDialect, window.start) + " AND " + column + " < " +
                            sql::DateLiteral(kDialect, window.end);
    pg::Result counts = session.Run("SELECT count(*) FILTER (WHERE " + in_window + "), count(*) FILTER (WHERE " +
                                        column + " IS NULL OR NOT (" + in_window + ")) FROM " + staging,
                                    Operation::kWrite, subject);
    WriteResult result;
    result.rows_written = std::stoll(counts.rows[0][0].value_or("0"));
    result.rows_dropped = std::stoll(counts.rows[0][1].value_or("0"));
    std::vector<Date> days;
    for (const auto& row : session
                               .Run("SELECT DISTINCT CAST(" + column + " AS DATE) FROM " + staging + " WHERE " +
                                        in_window + " ORDER BY 1",
                                    Operation::kWrite, subject)
                               .rows) {
      if (std::optional<Date> day = Date::Parse(row[0].value_or(""))) days.push_back(*day);
    }

    std::optional<char> kind = KindOf(session, relation, subject);
    Partitioning partitioning;
    if (mode == DateRangeMode::kWholeTable || !kind || IsViewKind(*kind)) {
      ReplaceRelation(scope, relation, kind, [&] {
        session.Run(
            "CREATE TABLE " + Qualified(relation) + " (LIKE " + staging + ") PARTITION BY RANGE (" + column + ")",
            Operation::kWrite, subject);
      });
      partitioning.partitioned = partitioning.by_date_column = true;
    } else {
      partitioning = ReadPartitioning(session, relation, date->name, subject);
      if (partitioning.partitioned && !partitioning.by_date_column) {
        throw WarehouseError(
            "SLU-WAREHOUSE-014",
            "the table " + subject + " is partitioned, but not by range of its date column \"" + date->name + "\"",
            "rebuild it with `sluice run --full-refresh --select <model>`, which partitions it by day");
      }
      EvolveColumns(session, relation, selected, subject);
      session.Run("DELETE FROM " + Qualified(relation) + " WHERE " + in_window, Operation::kWrite, subject);
    }
    if (partitioning.partitioned) CreatePartitions(session, relation, days, partitioning.ranges, subject);
    std::string columns = JoinedColumns(selected);
    session.Run("INSERT INTO " + Qualified(relation) + " (" + columns + ") SELECT " + columns + " FROM " + staging +
                    " WHERE " + in_window + " ORDER BY " + column,
                Operation::kWrite, subject);
    return result;
  });
}

WriteResult PostgresWarehouse::ReplaceView(const Relation& relation, const std::string& select_sql,
                                           LedgerEntry ledger) {
  return Write(*this, *pool_, relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    std::optional<char> kind = KindOf(session, relation, scope.subject);
    Statement create = Embedding("CREATE OR REPLACE VIEW " + Qualified(relation) + " AS SELECT * FROM ", select_sql,
                                 " AS " + Quote("select"));
    if (kind == 'v') {
      // CREATE OR REPLACE VIEW keeps dependent views but refuses to drop, rename or retype a column: then the view
      // is dropped and created again (with its dependents) in the same transaction.
      session.Run("SAVEPOINT replace_view", Operation::kWrite, scope.subject);
      std::optional<pg::PgError> refused = session.TryRun(create.sql);
      if (!refused) return WriteResult{};
      if (refused->connection_lost()) session.Run(create, Operation::kWrite, scope.subject);  // throws, translated
      session.Run("ROLLBACK TO SAVEPOINT replace_view", Operation::kWrite, scope.subject);
    }
    ReplaceRelation(scope, relation, kind, [&] { session.Run(create, Operation::kWrite, scope.subject); });
    return WriteResult{};  // a view stores no rows
  });
}

WriteResult PostgresWarehouse::LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) {
  // Types listed in `columns` are PostgreSQL types; the others are inferred from every row.
  SeedTable table = ReadSeedTable(relation, seed, kSeedTypes);
  return Write(*this, *pool_, relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    ReplaceRelation(scope, relation, KindOf(session, relation, scope.subject), [&] {
      std::string definition;
      for (size_t i = 0; i < table.columns.size(); ++i) {
        CheckIdentifier(table.columns[i], "seed column");
        definition += (i > 0 ? ", " : "") + Quote(table.columns[i]) + " " + table.types[i];
      }
      session.Run("CREATE TABLE " + Qualified(relation) + " (" + definition + ")", Operation::kWrite, scope.subject);
      // Rows go as text parameters, in batches under the protocol's 65535 parameters per statement.
      const size_t width = std::max<size_t>(table.columns.size(), 1);
      const size_t batch = std::max<size_t>(1, 60000 / width);
      for (size_t begin = 0; begin < table.rows.size(); begin += batch) {
        size_t end = std::min(table.rows.size(), begin + batch);
        std::string insert = "INSERT INTO " + Qualified(relation) + " VALUES ";
        pg::Params params;
        for (size_t row = begin; row < end; ++row) {
          insert += row > begin ? ", (" : "(";
          for (size_t c = 0; c < table.columns.size(); ++c) {
            params.push_back(table.rows[row][c]);
            insert += (c > 0 ? ", $" : "$") + std::to_string(params.size()) + "::" + table.types[c];
          }
          insert += ")";
        }
        // A value the server cannot convert to its column's type is located at its line and field in the file.
        session.RunWithParams(insert, params, scope.subject, [&](size_t index, const std::string& problem) {
          const size_t row = begin + index / width;
          return SeedValueError(seed, relation.ToString(), table.lines[row], table.columns[index % width],
                                "PostgreSQL: " + problem);
        });
      }
    });
    WriteResult result;
    result.rows_written = static_cast<int64_t>(table.rows.size());
    return result;
  });
}

void PostgresWarehouse::DropRelation(const Relation& relation) {
  Session session(pool_->connections);
  std::string subject = relation.ToString();
  std::optional<char> kind = KindOf(session, relation, subject);
  if (!kind) return;
  std::string drop = *kind == 'v'   ? "DROP VIEW IF EXISTS "
                     : *kind == 'm' ? "DROP MATERIALIZED VIEW IF EXISTS "
                     : *kind == 'f' ? "DROP FOREIGN TABLE IF EXISTS "
                                    : "DROP TABLE IF EXISTS ";
  session.Run(drop + Qualified(relation), Operation::kWrite, subject);
}

void PostgresWarehouse::Interrupt() { pool_->connections.Interrupt(); }

void PostgresWarehouse::ObserveStatements(StatementObserver observer) { pool_->observer = std::move(observer); }

std::vector<LedgerEntry> PostgresWarehouse::ReadLedger() {
  Session session(pool_->connections);
  std::string ledger = LedgerName();
  if (session.Count("SELECT count(*) FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n"
                    " ON n.oid = c.relnamespace WHERE n.nspname = " +
                        Literal(kLedgerSchema) + " AND c.relname = " + Literal(kLedgerTable),
                    Operation::kCatalog, ledger) == 0) {
    return {};
  }
  pg::Result result = session.Run(
      "SELECT asset, CAST(window_start AS TEXT), CAST(window_end AS TEXT), run_id, CAST(row_count AS TEXT), sql_hash,"
      " to_char(written_at, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), relation_schema, relation_name FROM " +
          ledger + " ORDER BY written_at, seq",
      Operation::kCatalog, ledger);
  std::vector<LedgerEntry> entries;
  for (const auto& row : result.rows) {
    entries.push_back(LedgerEntryFromRow(row));
  }
  return entries;
}

}  // namespace sluice
