// A minimal client of ClickHouse's HTTP interface: one POST per statement, the answer as text.
//
// The query goes in the request body (or, when data is posted with it, in the `query` URL parameter), the
// credentials in the X-ClickHouse-User / X-ClickHouse-Key headers (never in the URL, so no proxy or server log
// records the password), the database and query settings as URL parameters. Nothing here throws for a failed
// statement: Post returns what went wrong as data, and the warehouse translates it in one place.
// Thread-safety: a ClickHouseHttp is immutable after construction; Post may be called from several threads (each
// call uses its own connection).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

struct ClickHouseEndpoint {
  std::string host = "localhost";
  int port = 8123;  // HTTP
  std::string username = "default";
  std::string password;
  std::map<std::string, std::string> settings;  // sent with every statement
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds read_timeout{3600};  // a long INSERT … SELECT answers only when it ends
};

struct ClickHouseRequest {
  std::string query;
  std::optional<std::string> data;  // posted after the query (INSERT … FORMAT …)
  std::string database;             // the statement's current database; empty for the user's default
  std::string query_id;             // empty: the server picks one
  std::map<std::string, std::string> settings;  // on top of the endpoint's
};

// Why a statement failed.
struct ClickHouseFailure {
  enum class Kind {
    kServer,   // the server answered with an exception: `code` and `message` are its
    kConnect,  // no connection (refused, unknown host, …)
    kTimeout,  // connected, but no answer in time
    kHttp,     // an HTTP answer that is not a ClickHouse exception (e.g. a proxy's 502)
  };
  Kind kind = Kind::kServer;
  int code = 0;                     // ClickHouse's error code (kServer), else 0
  std::string message;              // without the "Code: N, e.displayText() = DB::Exception:" decoration
  std::optional<size_t> position;   // 0-based byte offset in the query of a syntax error ("failed at position N")
};

struct ClickHouseResponse {
  bool ok = false;
  std::string body;           // the result in the requested format (when ok)
  ClickHouseFailure failure;  // when !ok
};

class ClickHouseHttp {
 public:
  explicit ClickHouseHttp(ClickHouseEndpoint endpoint);
  ~ClickHouseHttp();
  ClickHouseHttp(ClickHouseHttp&&) noexcept;
  ClickHouseHttp& operator=(ClickHouseHttp&&) noexcept;

  // Sends one statement and waits for its answer. Safe to call from several threads at once: each request takes an
  // idle keep-alive connection (TCP_NODELAY) or opens one. A connection idle for longer than a second is closed
  // rather than reused, so a request is never sent on a connection the server is closing (ClickHouse closes idle
  // ones after its keep_alive_timeout, 3 s by default), and no statement is ever sent twice.
  ClickHouseResponse Post(const ClickHouseRequest& request) const;

  const ClickHouseEndpoint& endpoint() const { return endpoint_; }

 private:
  struct Connections;
  ClickHouseEndpoint endpoint_;
  std::unique_ptr<Connections> connections_;
};

// Parses a ClickHouse exception text, either generation: "Code: 62, e.displayText() = DB::Exception: Syntax error:
// failed at position 9: …, e.what() = DB::Exception" (18.x) or "Code: 62. DB::Exception: Syntax error: failed at
// position 9 …. (SYNTAX_ERROR) (version 25.8.1.1)". A text of neither form is kept whole with code 0.
ClickHouseFailure ParseClickHouseException(const std::string& text);

// A TabSeparatedWithNamesAndTypes answer: names, types, then rows with escapes undone (\N → nullopt).
struct TabSeparatedResult {
  std::vector<std::string> names;
  std::vector<std::string> types;
  std::vector<std::vector<std::optional<std::string>>> rows;
};
TabSeparatedResult ParseTabSeparatedWithNamesAndTypes(const std::string& body);

// A value escaped for the TabSeparated input format (\\, \t, \n, \r, \0 escaped); nullopt renders as \N.
std::string EscapeTabSeparated(const std::optional<std::string>& value);

}  // namespace sluice
