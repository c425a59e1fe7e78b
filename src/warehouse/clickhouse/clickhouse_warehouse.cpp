#include "warehouse/clickhouse/clickhouse_warehouse.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <thread>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"
#include "warehouse/clickhouse/clickhouse_capabilities.hpp"
#include "warehouse/clickhouse/clickhouse_seed.hpp"
#include "warehouse/clickhouse/clickhouse_statements.hpp"
#include "warehouse/ledgered_write.hpp"
#include "warehouse/warehouse_error.hpp"

namespace sluice {

namespace {

constexpr std::string_view kPauseBeforeSwap = "after_write_before_commit";
constexpr std::string_view kPauseBeforeLedger = "after_swap_before_ledger";
constexpr const char* kTabSeparated = "TabSeparatedWithNamesAndTypes";

std::string Scrubbed(std::string text, const std::string& secret) {
  if (secret.size() < 3) return text;  // shorter "secrets" would mangle every message and protect nothing
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
    text.replace(at, secret.size(), "***");
  }
  return text;
}

// The one place ClickHouse failures become sluice::Error. `subject` is the relation worked on (may be empty).
Error TranslateClickHouseError(Operation operation, const std::string& subject, const ClickHouseFailure& failure,
                               const ClickHouseEndpoint& endpoint) {
  const std::string server = endpoint.host + ":" + std::to_string(endpoint.port);
  const std::string message = Scrubbed(failure.message, endpoint.password);
  if (failure.kind == ClickHouseFailure::Kind::kConnect) {
    return WarehouseError("SLU-WAREHOUSE-031", "cannot connect to ClickHouse at " + server + " (HTTP): " + message,
                 "start the server, or fix the target's connection host and port (HTTP, default 8123; "
                 "STREAMBUILD_CLICKHOUSE_HOST/PORT and --host/--port override them)");
  }
  if (failure.kind == ClickHouseFailure::Kind::kTimeout) {
    return WarehouseError("SLU-WAREHOUSE-032",
                 "ClickHouse at " + server + " did not answer" + (subject.empty() ? "" : " while working on " + subject) +
                     ": " + message,
                 "check that the server is healthy; a statement running longer than the read timeout is cut off");
  }
  if (failure.kind == ClickHouseFailure::Kind::kServer &&
      (failure.code == 192 || failure.code == 193 || failure.code == 194 || failure.code == 516)) {
    return WarehouseError("SLU-WAREHOUSE-030",
                 "ClickHouse at " + server + " refused user \"" + endpoint.username + "\": " + message,
                 "check the target's connection username and password (STREAMBUILD_CLICKHOUSE_USERNAME/PASSWORD and "
                 "--username/--password override them)");
  }
  std::string what = FailedOperation(operation, "ClickHouse", subject, "opening ClickHouse at " + server + " failed");
  const std::string failed = what;
  what += ": " + message + (failure.code != 0 ? " (ClickHouse code " + std::to_string(failure.code) + ")" : "");
  switch (failure.code) {
    case 62:
      return ClassifiedError(FailureKind::kSyntax, what, "SQL for this ClickHouse server");
    case 46: case 60: case 81: case 63:
      return ClassifiedError(FailureKind::kMissing, what, "",
                             "a relation, database or function the SQL names does not exist");
    case 47: case 16: case 10: case 43: case 53: case 386: case 44: case 184: case 215:
      return ClassifiedError(FailureKind::kBind, what, "");
    case 6: case 27: case 38: case 41: case 69: case 70: case 72: case 26:
      return ClassifiedError(FailureKind::kConversion, what, "");
    case 394:
      return WarehouseError("SLU-WAREHOUSE-008",
                   failed + ": interrupted (the run was canceled); the target is untouched unless its swap had "
                   "already run",
                   "");
    default:
      return ClassifiedError(FailureKind::kOther, what, "");
  }
}

// The `TO [db.]table` of a materialized view's CREATE statement; `name_space` when it names no database.
std::optional<Relation> MaterializedViewTarget(const std::string& create, const std::string& name_space) {
  static const std::regex kTo(R"(\sTO\s+(?:[`"]?([A-Za-z0-9_]+)[`"]?\s*\.\s*)?[`"]?([A-Za-z0-9_]+)[`"]?)",
                              std::regex::icase);
  std::smatch match;
  if (!std::regex_search(create, match, kTo)) return std::nullopt;
  return Relation{match[1].matched ? match[1].str() : name_space, match[2].str()};
}

// The function or identifier a failure says is unknown, as the server's message names it: "Unknown function trim"
// (18.16 and later), "Function with name 'trim' does not exist", "Unknown identifier: x", "Missing columns: 'x'",
// "Unknown expression identifier `x`"; with whether it is a function. Empty when the message names none.
std::pair<std::string, bool> UnknownName(const ClickHouseFailure& failure) {
  const std::string& message = failure.message;
  auto name_after = [&](std::string_view marker) -> std::string {
    size_t at = message.find(marker);
    if (at == std::string::npos) return {};
    at += marker.size();
    if (at < message.size() && (message[at] == '\'' || message[at] == '`')) ++at;
    size_t end = at;
    while (end < message.size() && sql::IsIdentifierChar(message[end])) ++end;
    return message.substr(at, end - at);
  };
  if (failure.code == 46) {
    for (std::string_view marker : {"Unknown function ", "Function with name "}) {
      if (std::string name = name_after(marker); !name.empty()) return {name, true};
    }
  }
  if (failure.code == 47) {
    for (std::string_view marker : {"Unknown identifier: ", "Missing columns: ", "Unknown expression identifier "}) {
      if (std::string name = name_after(marker); !name.empty()) return {name, false};
    }
  }
  return {};
}

// Where in `select` (the caller's SELECT) the name a failure says is unknown is first used: a function's name
// followed by `(`, or an identifier (alone, or the last part of a qualified name). Found by the tokenizer, so never
// in a string or a comment; nullopt when the failure names nothing or the SELECT does not use the name.
std::optional<size_t> NamedInSelect(const ClickHouseFailure& failure, std::string_view select) {
  const auto [name, function] = UnknownName(failure);
  if (name.empty()) return std::nullopt;
  std::vector<sql::Token> tokens;
  try {
    tokens = sql::TokenizeSignificant(select, sql::Dialect::kClickHouse);
  } catch (const Error&) {
    return std::nullopt;
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    const sql::Token& token = tokens[i];
    if (token.kind != sql::TokenKind::kWord && token.kind != sql::TokenKind::kQuotedIdentifier) continue;
    const std::string value = sql::TokenValue(token, sql::Dialect::kClickHouse);
    const bool same = function ? AsciiLower(value) == AsciiLower(name) : value == name;
    if (!same) continue;
    const bool called = i + 1 < tokens.size() && tokens[i + 1].text == "(";
    if (function == called) return token.begin;
  }
  return std::nullopt;
}

// A seed load's error about one value, located in the seed file: the server names the row of the TabSeparated data
// ("(at row 3)", counted from 1) and, under "Row 3:", the column whose text it could not read ("Column 2, name:
// amount, type: Int64, ERROR: text "about 5" is not like Int64"). nullopt when it says neither.
std::optional<Error> LocatedSeedError(const SeedFile& seed, const std::string& subject, const SeedTable& table,
                                      const Error& error) {
  const std::string& message = error.diagnostics().front().message;
  const std::string row_marker = "(at row ";
  const size_t row_at = message.find(row_marker);
  if (row_at == std::string::npos) return std::nullopt;
  const size_t row = std::strtoull(message.c_str() + row_at + row_marker.size(), nullptr, 10);
  if (row == 0 || row > table.lines.size()) return std::nullopt;
  const size_t block = message.find("Row " + std::to_string(row) + ":", row_at);
  const size_t failed = block == std::string::npos ? std::string::npos : message.find("ERROR: ", block);
  const size_t name_at = failed == std::string::npos ? std::string::npos : message.rfind("name: ", failed);
  if (name_at == std::string::npos || name_at < block) return std::nullopt;
  size_t name_begin = name_at + 6;
  while (name_begin < message.size() && message[name_begin] == ' ') ++name_begin;
  size_t name_end = name_begin;
  while (name_end < message.size() && message[name_end] != ',' && message[name_end] != ' ') ++name_end;
  const size_t detail = failed + 7;
  const std::string problem = "ClickHouse: " + message.substr(detail, message.find('\n', detail) - detail);
  return SeedValueError(seed, subject, table.lines[row - 1], message.substr(name_begin, name_end - name_begin),
                        problem);
}

std::string NewQueryId() {
  static const std::string process =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007);
  static std::atomic<uint64_t> counter{0};
  return "sluice-" + process + "-" + std::to_string(counter.fetch_add(1));
}

// Identifier-safe and bounded: staging names must be valid file names on Ordinary databases.
std::string Sanitized(std::string_view text, size_t limit) {
  std::string out;
  for (char c : text) {
    if (out.size() == limit) break;
    out += (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
  }
  return out;
}

bool IsDateType(const std::string& type) { return type == "Date"; }
bool IsDateTimeType(const std::string& type) { return type == "DateTime" || type.rfind("DateTime(", 0) == 0; }

// Whether values of `from` go into a column of type `to` without loss, as INSERT … SELECT converts them.
bool ConvertsImplicitly(const std::string& from, const std::string& to) {
  if (from == to) return true;
  auto unwrap = [](const std::string& type) -> std::string {
    return type.rfind("Nullable(", 0) == 0 ? type.substr(9, type.size() - 10) : type;
  };
  const bool to_nullable = to.rfind("Nullable(", 0) == 0;
  if (from.rfind("Nullable(", 0) == 0 && !to_nullable) return false;
  std::string a = unwrap(from), b = unwrap(to);
  if (a == b) return true;
  static const std::map<std::string, int> kSigned{{"Int8", 8}, {"Int16", 16}, {"Int32", 32}, {"Int64", 64}};
  static const std::map<std::string, int> kUnsigned{{"UInt8", 8}, {"UInt16", 16}, {"UInt32", 32}, {"UInt64", 64}};
  auto find = [](const std::map<std::string, int>& map, const std::string& type) {
    auto it = map.find(type);
    return it == map.end() ? 0 : it->second;
  };
  if (int width = find(kSigned, a); width > 0) return find(kSigned, b) > width;
  if (int width = find(kUnsigned, a); width > 0) return find(kUnsigned, b) > width || find(kSigned, b) > width;
  if (a == "Float32") return b == "Float64";
  return false;
}

}  // namespace

std::string StagingPrefix(const Relation& relation) {
  return "stage_" + Sha256Hex(relation.name_space + std::string(1, '\0') + relation.name).substr(0, 12) + "_";
}

std::string StagingOwner(pid_t pid) {
  static const std::string host = [] {
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) != 0) return std::string("00000000");
    return Sha256Hex(name.data()).substr(0, 8);
  }();
  return host + "_" + std::to_string(pid);
}

namespace {

// Whether the writer of a staging table is gone, from the table's name after StagingPrefix ("<host>_<pid>_…") and
// whether the table is older than a day: a process of this host that no longer runs, or, for a table another host
// wrote (or a name without an owner), the day's age, since this host cannot see that process.
bool StagingWriterGone(std::string_view owned, bool older_than_a_day) {
  const size_t host_end = owned.find('_');
  const size_t pid_end = host_end == std::string_view::npos ? host_end : owned.find('_', host_end + 1);
  if (pid_end == std::string_view::npos) return older_than_a_day;
  const std::string_view pid_text = owned.substr(host_end + 1, pid_end - host_end - 1);
  if (pid_text.empty() || pid_text.size() > 9 ||
      !std::all_of(pid_text.begin(), pid_text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return older_than_a_day;
  }
  const pid_t pid = static_cast<pid_t>(std::stol(std::string(pid_text)));
  if (owned.substr(0, pid_end) != StagingOwner(pid)) return older_than_a_day;  // another host's
  if (pid == ::getpid()) return false;  // this process's own: it drops them itself
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

struct ClickHouseWarehouse::Impl {
  ClickHouseHttp http;
  Capabilities capabilities;
  ClickHouseStatements statements;
  std::string database;  // for the caller's SQL; empty until it exists
  std::atomic<bool> interrupted{false};
  StatementObserver observer;  // set before writes start

  std::mutex mutex;                          // guards the three below
  std::set<std::string> in_flight;           // query ids sent and not answered
  std::map<std::string, bool> databases;     // databases known to exist → Atomic
  bool ledger_ready = false;

  Impl(ClickHouseHttp client, Capabilities probed, std::string current)
      : http(std::move(client)), capabilities(std::move(probed)), statements(capabilities),
        database(std::move(current)) {}

  // Sends one statement; throws the translated error (a SqlError when the server places it in the embedded SELECT).
  std::string Run(const ClickHouseStatement& statement, Operation operation, const std::string& subject,
                  std::vector<std::string>* record = nullptr, std::optional<std::string> data = std::nullopt,
                  const char* format = nullptr) {
    if (interrupted) {
      throw TranslateClickHouseError(operation, subject, {ClickHouseFailure::Kind::kServer, 394, "interrupted", {}},
                                     http.endpoint());
    }
    if (record != nullptr) record->push_back(statement.sql);
    ClickHouseRequest request{statement.sql, std::move(data), CurrentDatabase(), NewQueryId(), {}};
    if (format != nullptr) request.settings["default_format"] = format;
    {
      std::lock_guard<std::mutex> lock(mutex);
      in_flight.insert(request.query_id);
    }
    ClickHouseResponse response = http.Post(request);
    {
      std::lock_guard<std::mutex> lock(mutex);
      in_flight.erase(request.query_id);
    }
    if (response.ok) return std::move(response.body);
    Error error = TranslateClickHouseError(operation, subject, response.failure, http.endpoint());
    const std::optional<size_t>& position = response.failure.position;
    if (position && statement.select_begin != std::string::npos && *position >= statement.select_begin &&
        *position < statement.select_begin + statement.select_size) {
      throw SqlError(error.diagnostics().front(), *position - statement.select_begin);
    }
    if (!position && statement.select_begin != std::string::npos) {
      std::string_view select(statement.sql.data() + statement.select_begin, statement.select_size);
      if (std::optional<size_t> at = NamedInSelect(response.failure, select)) {
        throw SqlError(error.diagnostics().front(), *at);
      }
    }
    throw error;
  }
  std::string Run(std::string sql, Operation operation, const std::string& subject,
                  std::vector<std::string>* record = nullptr) {
    return Run(ClickHouseStatement{std::move(sql)}, operation, subject, record);
  }
  TabSeparatedResult Select(std::string sql, Operation operation, const std::string& subject,
                            std::vector<std::string>* record = nullptr) {
    return ParseTabSeparatedWithNamesAndTypes(
        Run(ClickHouseStatement{std::move(sql)}, operation, subject, record, std::nullopt, kTabSeparated));
  }
  // A SELECT over system.tables or system.columns. On 18.16 a table another client drops while the scan runs fails
  // it with "doesn't exist" (SLU-WAREHOUSE-021), even when the filter excludes that table: such a query names no
  // table of the caller's, so that error means a concurrent DROP, and a new scan succeeds.
  TabSeparatedResult SelectSystem(const std::string& sql, Operation operation, const std::string& subject,
                                  std::vector<std::string>* record = nullptr) {
    for (int attempt = 1;; ++attempt) {
      try {
        return Select(sql, operation, subject, record);
      } catch (const Error& error) {
        if (attempt == 5 || error.diagnostics().front().code != "SLU-WAREHOUSE-021") throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(20 * attempt));
      }
    }
  }
  // Cleanup whose failure is not worth reporting over the error that caused it (and runs after Interrupt too).
  void RunIgnoringFailure(const std::string& sql, std::vector<std::string>* record) {
    if (record != nullptr) record->push_back(sql);
    http.Post({sql, std::nullopt, "", NewQueryId(), {}});
  }

  std::string CurrentDatabase() {
    std::lock_guard<std::mutex> lock(mutex);
    return databases.count(database) ? database : std::string();
  }

  // Creates the database when missing; returns whether it is Atomic.
  bool EnsureDatabase(const std::string& name) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (auto it = databases.find(name); it != databases.end()) return it->second;
    }
    Run(statements.CreateDatabase(name), Operation::kStatement, name);
    TabSeparatedResult engine = Select(
        "SELECT engine FROM system.databases WHERE name = " + ClickHouseStatements::Literal(name), Operation::kCatalog,
        name);
    bool atomic = !engine.rows.empty() && engine.rows[0][0].value_or("") == "Atomic";
    std::lock_guard<std::mutex> lock(mutex);
    databases[name] = atomic;
    return atomic;
  }

  void NoteDatabases() {
    TabSeparatedResult rows = Select("SELECT name, engine FROM system.databases", Operation::kOpen, "the server");
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& row : rows.rows) databases[row[0].value_or("")] = row[1].value_or("") == "Atomic";
  }

  void EnsureLedger() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (ledger_ready) return;
    }
    EnsureDatabase(std::string(kSluiceDatabase));
    Run(ClickHouseStatements::CreateLedger(), Operation::kStatement, "the ledger");
    std::lock_guard<std::mutex> lock(mutex);
    ledger_ready = true;
  }

  // The relation's engine ("" when absent) and partition key.
  std::pair<ExistingKind, std::string> Existing(const Relation& relation, const std::string& subject,
                                                std::vector<std::string>* record) {
    TabSeparatedResult found =
        SelectSystem("SELECT engine, partition_key FROM system.tables WHERE database = " +
                   ClickHouseStatements::Literal(relation.name_space) +
                   " AND name = " + ClickHouseStatements::Literal(relation.name),
               Operation::kWrite, subject, record);
    if (found.rows.empty()) return {ExistingKind::kAbsent, ""};
    std::string engine = found.rows[0][0].value_or("");
    bool view = engine == "View" || engine == "MaterializedView";
    return {view ? ExistingKind::kView : ExistingKind::kTable, found.rows[0].size() > 1 ? found.rows[0][1].value_or("") : ""};
  }

  std::vector<ColumnInfo> Columns(const Relation& relation, Operation operation, const std::string& subject,
                                  std::vector<std::string>* record) {
    TabSeparatedResult rows = SelectSystem("SELECT name, type FROM system.columns WHERE database = " +
                                         ClickHouseStatements::Literal(relation.name_space) +
                                         " AND table = " + ClickHouseStatements::Literal(relation.name),
                                     operation, subject, record);
    std::vector<ColumnInfo> columns;
    for (const auto& row : rows.rows) columns.push_back({row[0].value_or(""), row[1].value_or("")});
    return columns;
  }

  std::vector<TableInfo> Catalog(const Relation* only, const std::string& subject) {
    std::string where = "database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema', " +
                        ClickHouseStatements::Literal(kSluiceDatabase) + ")";
    std::string tables_where = where, columns_where = where;
    if (only != nullptr) {
      std::string database = " AND database = " + ClickHouseStatements::Literal(only->name_space);
      tables_where += database + " AND name = " + ClickHouseStatements::Literal(only->name);
      columns_where += database + " AND table = " + ClickHouseStatements::Literal(only->name);
    }
    TabSeparatedResult tables = SelectSystem("SELECT database, name, engine FROM system.tables WHERE " + tables_where,
                                             Operation::kCatalog, subject);
    TabSeparatedResult columns = SelectSystem(
        "SELECT database, table, name, type FROM system.columns WHERE " + columns_where, Operation::kCatalog, subject);
    std::map<Relation, TableInfo> infos;
    for (const auto& row : tables.rows) {
      Relation relation{row[0].value_or(""), row[1].value_or("")};
      std::string engine = row[2].value_or("");
      infos[relation] = TableInfo{relation, engine == "View" || engine == "MaterializedView", {}};
    }
    for (const auto& row : columns.rows) {
      auto it = infos.find(Relation{row[0].value_or(""), row[1].value_or("")});
      if (it != infos.end()) it->second.columns.push_back({row[2].value_or(""), row[3].value_or("")});
    }
    std::vector<TableInfo> result;
    for (auto& [relation, info] : infos) result.push_back(std::move(info));
    return result;
  }

  // The catalog entries of the relations `where` selects from system.tables, sorted by relation.
  std::vector<CatalogEntry> Entries(const std::string& where, const std::string& subject) {
    TabSeparatedResult rows = SelectSystem(
        "SELECT database, name, engine, engine_full, sorting_key, partition_key, create_table_query FROM system.tables "
        "WHERE " + where + " ORDER BY database, name",
        Operation::kCatalog, subject);
    std::vector<CatalogEntry> entries;
    for (const auto& row : rows.rows) {
      CatalogEntry entry;
      entry.relation = Relation{row[0].value_or(""), row[1].value_or("")};
      entry.engine = row[2].value_or("");
      entry.engine_full = row[3].value_or("");
      entry.sorting_key = row[4].value_or("");
      entry.partition_key = row[5].value_or("");
      if (entry.engine == "MaterializedView") {
        entry.kind = RelationKind::kMaterializedView;
        entry.definition = row[6].value_or("");
        entry.target = MaterializedViewTarget(entry.definition, entry.relation.name_space);
      } else if (entry.engine == "View") {
        entry.kind = RelationKind::kView;
        entry.definition = row[6].value_or("");
      }
      entries.push_back(std::move(entry));
    }
    return entries;
  }

  // Drops the staging tables of `relation` that a killed write left behind: those whose writer is gone
  // (StagingWriterGone). Those of a live writer, in another process or on another host, stay: two processes may write
  // one relation at once, and each swaps in its own.
  void DropStaleStaging(const Relation& relation, const std::string& subject, std::vector<std::string>* record) {
    std::string prefix = StagingPrefix(relation);
    TabSeparatedResult staging = SelectSystem(
        "SELECT name, toUInt8(metadata_modification_time < now() - 86400) FROM system.tables WHERE database = " +
            ClickHouseStatements::Literal(kSluiceDatabase) + " AND substring(name, 1, " +
            std::to_string(prefix.size()) + ") = " + ClickHouseStatements::Literal(prefix),
        Operation::kWrite, subject, record);
    for (const auto& row : staging.rows) {
      const std::string name = row[0].value_or("");
      if (!StagingWriterGone(std::string_view(name).substr(prefix.size()), row[1].value_or("0") == "1")) continue;
      Run(statements.Drop({std::string(kSluiceDatabase), name}), Operation::kWrite, subject, record);
    }
  }
};

namespace {

// What the body of a write works with: the statements it sends (recorded for the observer) and the staging
// relations it creates, dropped after the write whether it succeeded or not.
struct WriteScope {
  ClickHouseWarehouse::Impl& impl;
  const Relation& relation;
  std::string subject;
  std::vector<std::string>* record;
  ClickHouseStatements statements;  // with EXCHANGE TABLES only when both databases are Atomic
  std::string run_tag;
  std::vector<Relation> staging;

  // A new staging relation in `_sluice`, named by its relation and its writer, e.g.
  // stage_<hash>_<host>_123_orders_run42_7_new.
  Relation Staging(std::string_view role) {
    static std::atomic<uint64_t> counter{0};
    Relation staged{std::string(kSluiceDatabase), StagingPrefix(relation) + StagingOwner(::getpid()) + "_" +
                                                      Sanitized(relation.name, 40) + "_" + run_tag + "_" +
                                                      std::to_string(counter.fetch_add(1)) + "_" + std::string(role)};
    staging.push_back(staged);
    return staged;
  }
  std::string Run(const ClickHouseStatement& statement, std::optional<std::string> data = std::nullopt) {
    return impl.Run(statement, Operation::kWrite, subject, record, std::move(data));
  }
  TabSeparatedResult Select(std::string sql) { return impl.Select(std::move(sql), Operation::kWrite, subject, record); }
  int64_t Count(const Relation& table) {
    TabSeparatedResult rows = Select("SELECT count() FROM " + ClickHouseStatements::Name(table));
    return rows.rows.empty() ? 0 : std::stoll(rows.rows[0][0].value_or("0"));
  }
  // Puts `staged` in the place of the relation (PausePoint before). What is in that place is read right before the
  // swap: another process may have created or replaced the relation meanwhile.
  void SwapIn(const Relation& staged) {
    PausePoint(kPauseBeforeSwap);
    ExistingKind existing = impl.Existing(relation, subject, record).first;
    Relation displaced = Staging("old");
    for (const std::string& sql : statements.SwapIn(existing, relation, staged, displaced)) Run({sql});
  }
};

// Brings the date-partitioned table to the columns of the SELECT (`selected`): added columns are added (Nullable, so
// other dates read NULL); removed or retyped ones throw SLU-WAREHOUSE-013.
void EvolveColumns(WriteScope& scope, const std::vector<ColumnInfo>& table, const std::vector<ColumnInfo>& selected) {
  auto find = [](const std::vector<ColumnInfo>& columns, const std::string& name) -> const ColumnInfo* {
    for (const ColumnInfo& column : columns) {
      if (column.name == name) return &column;  // ClickHouse names are case-sensitive
    }
    return nullptr;
  };
  std::string changes;
  for (const ColumnInfo& column : table) {
    const ColumnInfo* now = find(selected, column.name);
    if (now == nullptr) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" is no longer selected";
    } else if (!ConvertsImplicitly(now->type, column.type)) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" was " + column.type +
                 " and is now " + now->type;
    }
  }
  if (!changes.empty()) {
    throw WarehouseError("SLU-WAREHOUSE-013",
                         "the SELECT for " + scope.subject + " no longer matches its table: " + changes,
                         "a partitioned table keeps the rows of its other dates, so only added columns are applied "
                         "in place; rebuild it with `sluice run --full-refresh --select <model>`");
  }
  for (const ColumnInfo& column : selected) {
    if (find(table, column.name) != nullptr) continue;
    bool wraps = column.type.rfind("Nullable(", 0) != 0 && column.type.rfind("LowCardinality(", 0) != 0 &&
                 column.type.rfind("Array(", 0) != 0 && column.type.rfind("Tuple(", 0) != 0 &&
                 column.type.rfind("Nested(", 0) != 0 && column.type.rfind("Map(", 0) != 0;
    scope.Run({"ALTER TABLE " + ClickHouseStatements::Name(scope.relation) + " ADD COLUMN " +
               sql::QuoteIdentifier(sql::Dialect::kClickHouse, column.name) + " " +
               (wraps ? "Nullable(" + column.type + ")" : column.type)});
  }
}

// Drops the write's staging relations when the write ends, whether it succeeded or not.
struct StagingCleanup {
  WriteScope& scope;
  ~StagingCleanup() {
    for (const Relation& staged : scope.staging) {
      scope.impl.RunIgnoringFailure(scope.impl.statements.Drop(staged), scope.record);
    }
  }
};

// Stages and swaps in `body`, then the pause point and the ledger row right after the swap (LedgeredWrite); the
// staging relations are dropped in the end.
template <typename Body>
WriteResult Write(ClickHouseWarehouse::Impl& impl, const Relation& relation, const LedgerEntry& ledger, Body&& body) {
  std::vector<std::string> statements;
  std::optional<WriteScope> scope;
  return LedgeredWrite(
      impl.observer, relation, statements,
      [&] {
        const bool atomic = impl.EnsureDatabase(relation.name_space);
        impl.EnsureLedger();
        const bool sluice_atomic = impl.EnsureDatabase(std::string(kSluiceDatabase));
        scope.emplace(WriteScope{impl,
                                 relation,
                                 relation.ToString(),
                                 &statements,
                                 atomic && sluice_atomic ? impl.statements : impl.statements.ForOrdinaryDatabase(),
                                 Sanitized(ledger.run_id, 40),
                                 {}});
      },
      [&] { return StagingCleanup{*scope}; },
      [&](StagingCleanup&) {
        impl.DropStaleStaging(relation, scope->subject, &statements);
        return body(*scope);
      },
      [&](StagingCleanup&, const WriteResult& result) {
        PausePoint(kPauseBeforeLedger);
        impl.Run(ClickHouseStatements::InsertLedger(relation, ledger, result.rows_written, result.written_at),
                 Operation::kWrite, scope->subject, &statements);
      });
}

}  // namespace

ClickHouseWarehouse::ClickHouseWarehouse(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClickHouseWarehouse::~ClickHouseWarehouse() = default;

std::unique_ptr<ClickHouseWarehouse> ClickHouseWarehouse::Open(ClickHouseEndpoint endpoint, std::string database) {
  ClickHouseHttp http(std::move(endpoint));
  CapabilityProbe probe = ProbeCapabilities(http);
  if (probe.failure) throw TranslateClickHouseError(Operation::kOpen, "", *probe.failure, http.endpoint());
  auto impl = std::make_unique<Impl>(std::move(http), std::move(probe.capabilities), std::move(database));
  impl->NoteDatabases();
  return std::unique_ptr<ClickHouseWarehouse>(new ClickHouseWarehouse(std::move(impl)));
}

const Capabilities& ClickHouseWarehouse::capabilities() const { return impl_->capabilities; }

void ClickHouseWarehouse::Execute(const std::string& sql) { impl_->Run(sql, Operation::kStatement, ""); }

Rows ClickHouseWarehouse::Query(const std::string& sql) {
  TabSeparatedResult result = impl_->Select(sql, Operation::kStatement, "");
  return Rows{std::move(result.names), std::move(result.rows)};
}

std::optional<TableInfo> ClickHouseWarehouse::Describe(const Relation& relation) {
  std::vector<TableInfo> infos = impl_->Catalog(&relation, relation.ToString());
  if (infos.empty()) return std::nullopt;
  return infos.front();
}

std::vector<TableInfo> ClickHouseWarehouse::ListRelations() { return impl_->Catalog(nullptr, "the server"); }

std::vector<CatalogEntry> ClickHouseWarehouse::CatalogOf(const std::string& name_space) {
  return impl_->Entries("database = " + ClickHouseStatements::Literal(name_space), name_space);
}

std::vector<CatalogEntry> ClickHouseWarehouse::CatalogOf(const std::vector<Relation>& relations) {
  if (relations.empty()) return {};
  std::string where;
  for (const Relation& relation : relations) {
    where += (where.empty() ? "(database = " : " OR (database = ") + ClickHouseStatements::Literal(relation.name_space) +
             " AND name = " + ClickHouseStatements::Literal(relation.name) + ")";
  }
  return impl_->Entries(where, relations.size() == 1 ? relations.front().ToString() : "several relations");
}

std::optional<std::map<std::string, int64_t>> ClickHouseWarehouse::CatalogRowCounts(const std::string& name_space) {
  std::map<std::string, int64_t> counts;
  try {
    TabSeparatedResult rows = impl_->SelectSystem(
        "SELECT table, toString(sum(rows)) FROM system.parts WHERE active AND database = " +
            ClickHouseStatements::Literal(name_space) + " GROUP BY table",
        Operation::kCatalog, name_space);
    for (const auto& row : rows.rows) counts[row[0].value_or("")] = std::stoll(row[1].value_or("0"));
  } catch (const Error&) {
    return std::nullopt;  // the contract: unknown, for warnings only
  }
  return counts;
}

std::string ClickHouseWarehouse::InsertWatermark(const Relation& relation) {
  TabSeparatedResult rows = impl_->SelectSystem(
      "SELECT toString(max(max_block_number)), toString(count()) FROM system.parts WHERE active AND database = " +
          ClickHouseStatements::Literal(relation.name_space) +
          " AND table = " + ClickHouseStatements::Literal(relation.name),
      Operation::kCatalog, relation.ToString());
  return rows.rows.empty() ? "" : rows.rows[0][0].value_or("") + "/" + rows.rows[0][1].value_or("");
}

int64_t ClickHouseWarehouse::RunningInserts(std::chrono::duration<double> running_for) {
  TabSeparatedResult rows = impl_->Select(
      "SELECT toString(count()) FROM system.processes WHERE lower(substring(query, 1, 6)) = 'insert' AND elapsed >= " +
          std::to_string(std::max(0.0, running_for.count())),
      Operation::kCatalog, "the server");
  return rows.rows.empty() ? 0 : std::stoll(rows.rows[0][0].value_or("0"));
}

void ClickHouseWarehouse::EnsureSchema(const std::string& name) { impl_->EnsureDatabase(name); }

void ClickHouseWarehouse::CheckRunnable(const std::string& select_sql) const {
  const std::optional<FeatureUse> use = LackingFeatureIn(impl_->capabilities, select_sql);
  if (!use) return;
  try {
    RequireCapability(impl_->capabilities, use->feature, {}, "this model");
  } catch (const Error& error) {
    throw SqlError(error.diagnostics().front(), use->offset);
  }
}

WriteResult ClickHouseWarehouse::ReplaceTable(const Relation& relation, const std::string& select_sql,
                                              LedgerEntry ledger) {
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    Relation staged = scope.Staging("new");
    scope.Run(ClickHouseStatements::CreateStaging(staged, select_sql));
    WriteResult result;
    result.rows_written = scope.Count(staged);
    scope.SwapIn(staged);
    return result;
  });
}

WriteResult ClickHouseWarehouse::ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                                                  const std::string& date_column, DateWindow window,
                                                  LedgerEntry ledger, DateRangeMode mode) {
  ledger.window = window;  // the ledger records exactly the window this write owned
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    Relation selected = scope.Staging("select");
    scope.Run(ClickHouseStatements::CreateStaging(selected, select_sql));
    std::vector<ColumnInfo> columns = impl_->Columns(selected, Operation::kWrite, scope.subject, scope.record);
    auto date = std::find_if(columns.begin(), columns.end(),
                             [&](const ColumnInfo& column) { return column.name == date_column; });
    if (date == columns.end()) {
      throw WarehouseError(
          "SLU-WAREHOUSE-010",
          "the SELECT for " + scope.subject + " has no column \"" + date_column + "\", its partition date column",
          "select the date column (by that name) in the model, or fix the partitions column");
    }
    const bool is_date = IsDateType(date->type);
    if (!is_date && !IsDateTimeType(date->type)) {
      throw WarehouseError("SLU-WAREHOUSE-014",
                           "the partition date column \"" + date_column + "\" of " + scope.subject + " is " +
                               date->type + ", not Date or DateTime",
                           "ClickHouse partitions by a column that is never NULL: select it as a Date, e.g. "
                           "toDate(...) or assumeNotNull(...)");
    }
    std::string in_window = ClickHouseStatements::InWindow(date_column, window);
    TabSeparatedResult counts = scope.Select("SELECT countIf(" + in_window + "), count() FROM " +
                                             ClickHouseStatements::Name(selected));
    WriteResult result;
    result.rows_written = std::stoll(counts.rows.at(0).at(0).value_or("0"));
    result.rows_dropped = std::stoll(counts.rows.at(0).at(1).value_or("0")) - result.rows_written;

    auto [existing, partition_key] = impl_->Existing(relation, scope.subject, scope.record);
    const std::string wanted_key = ClickHouseStatements::PartitionKey(date_column, is_date);
    if (mode == DateRangeMode::kWholeTable || existing == ExistingKind::kView) {
      Relation staged = scope.Staging("new");
      scope.Run({ClickHouseStatements::CreatePartitionedFrom(staged, selected, date_column, is_date, in_window)});
      scope.SwapIn(staged);
      return result;
    }
    if (existing == ExistingKind::kAbsent) {
      // The first write creates the table empty and replaces its days like any later write, so that two first
      // writes at once both end with one table holding each day once.
      scope.Run({ClickHouseStatements::CreatePartitionedIfMissing(relation, selected, date_column, is_date)});
      std::tie(existing, partition_key) = impl_->Existing(relation, scope.subject, scope.record);
    }
    // system.tables quotes the key's names only where they need it: compared without backquotes.
    auto unquoted = [](std::string key) {
      key.erase(std::remove(key.begin(), key.end(), '`'), key.end());
      return key;
    };
    if (unquoted(partition_key) != unquoted(wanted_key)) {
      throw WarehouseError("SLU-WAREHOUSE-014",
                           "the table " + scope.subject + " is partitioned by \"" + partition_key + "\", not by the day "
                           "of \"" + date_column + "\", so its dates cannot be replaced one by one",
                           "rebuild it with `sluice run --full-refresh --select <model>`");
    }
    EvolveColumns(scope, impl_->Columns(relation, Operation::kWrite, scope.subject, scope.record), columns);
    Relation staged = scope.Staging("window");
    std::string names;
    for (const ColumnInfo& column : columns) {
      names += (names.empty() ? "" : ", ") + sql::QuoteIdentifier(sql::Dialect::kClickHouse, column.name);
    }
    scope.Run({"CREATE TABLE " + ClickHouseStatements::Name(staged) + " AS " + ClickHouseStatements::Name(relation)});
    scope.Run({"INSERT INTO " + ClickHouseStatements::Name(staged) + " (" + names + ") SELECT " + names + " FROM " +
               ClickHouseStatements::Name(selected) + " WHERE " + in_window});
    TabSeparatedResult days = scope.Select("SELECT DISTINCT toString(toDate(" +
                                           sql::QuoteIdentifier(sql::Dialect::kClickHouse, date_column) + ")) FROM " +
                                           ClickHouseStatements::Name(staged));
    std::set<std::string> with_rows;
    for (const auto& row : days.rows) with_rows.insert(row[0].value_or(""));
    PausePoint(kPauseBeforeSwap);
    for (Date day = window.start; day < window.end; day = day.AddDays(1)) {
      scope.Run({with_rows.count(day.ToString()) ? ClickHouseStatements::ReplacePartition(relation, day, staged)
                                                 : ClickHouseStatements::DropPartition(relation, day)});
    }
    return result;
  });
}

WriteResult ClickHouseWarehouse::ReplaceView(const Relation& relation, const std::string& select_sql,
                                             LedgerEntry ledger) {
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    ExistingKind existing = impl_->Existing(relation, scope.subject, scope.record).first;
    Relation staged = scope.Staging("view");
    Relation displaced = scope.Staging("old");
    std::vector<ClickHouseStatement> statements =
        scope.statements.ReplaceView(existing, relation, staged, displaced, select_sql);
    for (size_t i = 0; i < statements.size(); ++i) {
      if (i == 1) PausePoint(kPauseBeforeSwap);  // the staging view exists, the swap follows
      scope.Run(statements[i]);
    }
    return WriteResult{};  // a view stores no rows
  });
}

WriteResult ClickHouseWarehouse::LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) {
  SeedTable table = ReadSeedTable(relation, seed, kClickHouseSeedTypes);
  return Write(*impl_, relation, ledger, [&](WriteScope& scope) {
    Relation staged = scope.Staging("seed");
    std::string definition;
    std::string names;
    for (size_t i = 0; i < table.columns.size(); ++i) {
      std::string name = sql::QuoteIdentifier(sql::Dialect::kClickHouse, table.columns[i]);
      definition += (i > 0 ? ", " : "") + name + " " + table.types[i];
      names += (i > 0 ? ", " : "") + name;
    }
    scope.Run({"CREATE TABLE " + ClickHouseStatements::Name(staged) + " (" + definition +
               ") ENGINE = MergeTree() ORDER BY tuple()"});
    if (!table.rows.empty()) {
      try {
        scope.Run({"INSERT INTO " + ClickHouseStatements::Name(staged) + " (" + names + ") FORMAT TabSeparated"},
                  SeedRowsAsTabSeparated(table));
      } catch (const Error& error) {
        if (std::optional<Error> located = LocatedSeedError(seed, scope.subject, table, error)) throw *located;
        throw;
      }
    }
    WriteResult result;
    result.rows_written = static_cast<int64_t>(table.rows.size());
    scope.SwapIn(staged);
    return result;
  });
}

std::vector<WriteResult> ClickHouseWarehouse::RecordMaterialized(
    const std::vector<std::pair<Relation, LedgerEntry>>& entries) {
  std::vector<WriteResult> results(entries.size());
  if (entries.empty()) return results;
  impl_->EnsureDatabase(std::string(kSluiceDatabase));
  impl_->EnsureLedger();
  // Every relation's rows in one catalog query: the sum of its active parts' rows is its count().
  std::string which;
  for (const auto& [relation, ledger] : entries) {
    which += (which.empty() ? "(" : " OR (") + std::string("database = ") +
             ClickHouseStatements::Literal(relation.name_space) +
             " AND table = " + ClickHouseStatements::Literal(relation.name) + ")";
  }
  TabSeparatedResult counts = impl_->Select(
      "SELECT database, table, toString(sum(rows)) FROM system.parts WHERE active AND (" + which +
          ") GROUP BY database, table",
      Operation::kCatalog, "the ledger");
  std::map<std::pair<std::string, std::string>, int64_t> rows;
  for (const auto& row : counts.rows) {
    rows[{row[0].value_or(""), row[1].value_or("")}] = std::stoll(row[2].value_or("0"));
  }
  const std::string written_at = FormatUtc(std::chrono::system_clock::now());
  std::vector<ClickHouseStatements::LedgerRow> ledger_rows;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Relation& relation = entries[i].first;
    auto found = rows.find({relation.name_space, relation.name});
    results[i].rows_written = found == rows.end() ? 0 : found->second;
    results[i].written_at = written_at;
    ledger_rows.push_back({relation, entries[i].second, results[i].rows_written, written_at});
  }
  impl_->Run(ClickHouseStatements::InsertLedger(ledger_rows), Operation::kWrite, "the ledger", nullptr);
  return results;
}

std::vector<LedgerEntry> ClickHouseWarehouse::ReadLedger() {
  TabSeparatedResult exists =
      impl_->SelectSystem("SELECT 1 FROM system.tables WHERE database = " +
                              ClickHouseStatements::Literal(kSluiceDatabase) + " AND name = 'ledger'",
                          Operation::kCatalog, "the ledger");
  if (exists.rows.empty()) return {};
  TabSeparatedResult rows = impl_->Select(ClickHouseStatements::SelectLedger(), Operation::kCatalog, "the ledger");
  std::vector<LedgerEntry> entries;
  for (const auto& row : rows.rows) {
    entries.push_back(LedgerEntryFromRow(row));
  }
  return entries;
}

void ClickHouseWarehouse::DropRelation(const Relation& relation) {
  impl_->Run(impl_->statements.Drop(relation), Operation::kWrite, relation.ToString());
}

void ClickHouseWarehouse::Interrupt() {
  impl_->interrupted = true;
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    ids.assign(impl_->in_flight.begin(), impl_->in_flight.end());
  }
  for (const std::string& id : ids) {
    impl_->RunIgnoringFailure("KILL QUERY WHERE query_id = " + ClickHouseStatements::Literal(id) + " ASYNC", nullptr);
  }
}

void ClickHouseWarehouse::ObserveStatements(StatementObserver observer) { impl_->observer = std::move(observer); }

}  // namespace sluice
