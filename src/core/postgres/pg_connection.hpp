// A thin libpq client shared by the PostgreSQL warehouse (warehouse/postgres) and state store (state/postgres): one
// connection, statements with text parameters, results as text, and the server's error fields. The layers translate
// PgError into their own SLU-* codes; this file knows none of them.
//
// Connection strings: libpq's own, either keyword=value ("host=… port=… dbname=…") or a URL
// ("postgresql://user:password@host:port/dbname?sslmode=disable"). A password never appears in a message made here:
// RedactConnectionString hides it for the callers' messages too.
// Thread-safety: a Connection is used by one thread at a time (callers hold a mutex); Cancel may be called from any
// thread while another runs a statement.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;
struct pg_cancel;

namespace sluice::pg {

// What the server (or libpq) said. `sqlstate` is empty for a connection failure; `position` is the 1-based character
// position in the statement the server pointed at, 0 when none.
class PgError : public std::runtime_error {
 public:
  PgError(std::string message, std::string sqlstate, std::string detail, std::string hint, int position,
          std::string context = "")
      : std::runtime_error(message),
        sqlstate_(std::move(sqlstate)),
        detail_(std::move(detail)),
        hint_(std::move(hint)),
        context_(std::move(context)),
        position_(position) {}
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }
  // Where the server was (PG_DIAG_CONTEXT), e.g. "unnamed portal parameter $3" for a parameter that does not convert.
  const std::string& context() const { return context_; }
  int position() const { return position_; }
  // The connection is gone (server closed it, network failure): the caller must open a new one.
  bool connection_lost() const { return sqlstate_.empty() || sqlstate_.rfind("08", 0) == 0 || sqlstate_ == "57P01"; }

 private:
  std::string sqlstate_, detail_, hint_, context_;
  int position_;
};

// SQLSTATEs callers branch on.
inline constexpr const char* kUniqueViolation = "23505";
inline constexpr const char* kSerializationFailure = "40001";
inline constexpr const char* kDeadlockDetected = "40P01";
inline constexpr const char* kQueryCanceled = "57014";
inline constexpr const char* kUndefinedTable = "42P01";
inline constexpr const char* kDuplicateTable = "42P07";
inline constexpr const char* kDuplicateSchema = "42P06";
inline constexpr const char* kLockNotAvailable = "55P03";

struct Result {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;  // NULL → nullopt
  int64_t affected = 0;                                       // rows an INSERT/UPDATE/DELETE touched

  // The first row's first value; throws std::out_of_range when there is none.
  const std::optional<std::string>& Scalar() const;
};

using Params = std::vector<std::optional<std::string>>;

class Connection {
 public:
  // Connects; throws PgError (empty sqlstate) naming the redacted connection string when it cannot.
  // `application_name` shows in pg_stat_activity.
  static std::unique_ptr<Connection> Open(const std::string& connection_string,
                                          const std::string& application_name = "sluice");
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one statement (or, without params, several separated by ';') and returns the last result.
  Result Exec(const std::string& sql, const Params& params = {});

  // Asks the server to cancel the statement running on this connection now; a no-op when none runs.
  void Cancel();
  // The server process of this connection (pg_backend_pid()).
  int BackendPid() const;
  bool InTransaction() const;

 private:
  explicit Connection(pg_conn* connection);
  pg_conn* connection_;
  pg_cancel* cancel_;
};

// "name" quoted as an identifier (double quotes doubled).
std::string QuoteIdentifier(const std::string& name);
// 'text' quoted as a standard-conforming string literal (single quotes doubled).
std::string QuoteLiteral(const std::string& text);

// Why libpq cannot parse `connection_string` (either form), without connecting; nullopt when it can. The password
// never appears in the text.
std::optional<std::string> ConnectionStringError(const std::string& connection_string);

// The connection string with its password replaced by "***" (URL and keyword=value forms).
std::string RedactConnectionString(const std::string& connection_string);

// A keyword=value connection string from keys such as a project's [connection]: host, port, username (or user),
// password, dbname (or database), sslmode, connect_timeout (10 unless given). Unknown keys are ignored.
std::string ConnectionStringFromKeys(const std::map<std::string, std::string>& keys);

}  // namespace sluice::pg
