// The connection a SqlStateStore runs its statements over: one implementation per backend (SQLite in
// sqlite/sqlite_connection.hpp, PostgreSQL in postgres/postgres_store_connection.hpp), so each statement of the state
// store is written once.
//
// Statements are written with `?` placeholders (SQLite's own); a PostgreSQL connection renders them as $1, $2 …
// (RenderPlaceholders). Parameter values are bound, never spliced into the text. Values read back are text (integers
// in decimal, NULL as nullopt), which both drivers give alike.
// Thread-safety: none of their own; SqlStateStore's mutex serializes every use of a connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice {

// How a backend writes statement parameters.
enum class PlaceholderStyle {
  kQuestionMark,  // SQLite: `?`, numbered by position
  kDollarNumber,  // PostgreSQL: `$1`, `$2` …
};

// `sql`, written with `?` placeholders, in `style`: each `?` outside quoted text ('…', "…") becomes the next `$n`.
std::string RenderPlaceholders(std::string_view sql, PlaceholderStyle style);

// One bound parameter: NULL, text or an integer.
class SqlValue {
 public:
  SqlValue(std::nullptr_t) {}  // NULL
  SqlValue(std::string text) : value_(std::move(text)) {}
  SqlValue(const char* text) : value_(std::string(text)) {}
  SqlValue(std::string_view text) : value_(std::string(text)) {}
  SqlValue(int64_t number) : value_(number) {}
  SqlValue(int number) : value_(int64_t{number}) {}
  SqlValue(const std::optional<std::string>& text) {  // nullopt: NULL
    if (text) value_ = *text;
  }

  const std::variant<std::monostate, std::string, int64_t>& value() const { return value_; }
  // The value as text (integers in decimal); nullopt for NULL.
  std::optional<std::string> Text() const;

 private:
  std::variant<std::monostate, std::string, int64_t> value_;
};

using SqlParams = std::vector<SqlValue>;

// A LIMIT parameter: `limit`, or no bound for a negative limit.
inline SqlValue LimitValue(int limit) { return limit < 0 ? INT64_MAX : int64_t{limit}; }

// One result row.
class SqlRow {
 public:
  explicit SqlRow(std::vector<std::optional<std::string>> values) : values_(std::move(values)) {}
  // The column's text; "" for NULL.
  std::string Text(size_t column) const { return values_.at(column).value_or(""); }
  std::optional<std::string> OptionalText(size_t column) const { return values_.at(column); }
  // The column as an integer; 0 for NULL.
  int64_t Int(size_t column) const;

 private:
  std::vector<std::optional<std::string>> values_;
};

enum class TransactionKind {
  kRead,   // one snapshot for several reads
  kWrite,  // takes the write lock up front where the backend has one (SQLite's BEGIN IMMEDIATE)
};

// The connection during one store call (StateConnection::Run). A failing statement throws sluice::Error
// SLU-STATE-003 naming the call's action, or the driver error that Run translates.
class StateSession {
 public:
  virtual ~StateSession() = default;
  virtual std::vector<SqlRow> Query(std::string_view sql, const SqlParams& params = {}) = 0;
  // Runs a statement that returns no rows; returns how many rows it changed.
  virtual int64_t Execute(std::string_view sql, const SqlParams& params = {}) = 0;

 private:
  friend class StateTransaction;
  virtual void Begin(TransactionKind kind) = 0;
  virtual void Commit() = 0;
  // Ends an open transaction without its changes; never throws (a lost connection has rolled it back already).
  virtual void Rollback() noexcept = 0;
};

// BEGIN … COMMIT on a session; rolls back in the destructor unless committed.
class StateTransaction {
 public:
  StateTransaction(StateSession& session, TransactionKind kind) : session_(session) { session_.Begin(kind); }
  ~StateTransaction() {
    if (open_) session_.Rollback();
  }
  StateTransaction(const StateTransaction&) = delete;
  StateTransaction& operator=(const StateTransaction&) = delete;

  void Commit() {
    session_.Commit();
    open_ = false;
  }

 private:
  StateSession& session_;
  bool open_ = true;
};

class StateConnection {
 public:
  enum class Access {
    kRead,   // runs again, once, on a new connection when the first was lost (PostgreSQL)
    kWrite,  // runs once: a write on a lost connection may or may not have committed
  };

  virtual ~StateConnection() = default;

  // Runs `work` as the store call `action` (e.g. "read run r1"), which failure messages name.
  virtual void Run(Access access, std::string_view action, const std::function<void(StateSession&)>& work) = 0;

  // A state-store error that is not a driver failure (unknown run, forbidden transition, unreadable row), located at
  // the store: the database file, or the URL without its password.
  virtual Error StateError(std::string code, std::string message, std::string hint = {}) const = 0;

  // What the store is called in hints: "file" (SQLite) or "database" (PostgreSQL).
  virtual std::string_view noun() const = 0;

  // Run(kRead / kWrite) returning what `work(session)` returns.
  template <class Work>
  auto Read(std::string_view action, Work&& work) {
    return Call(Access::kRead, action, std::forward<Work>(work));
  }
  template <class Work>
  auto Write(std::string_view action, Work&& work) {
    return Call(Access::kWrite, action, std::forward<Work>(work));
  }

 private:
  template <class Work>
  auto Call(Access access, std::string_view action, Work&& work) {
    using Result = std::invoke_result_t<Work&, StateSession&>;
    if constexpr (std::is_void_v<Result>) {
      Run(access, action, work);
    } else {
      std::optional<Result> result;
      Run(access, action, [&](StateSession& session) { result.emplace(work(session)); });
      return std::move(*result);
    }
  }
};

}  // namespace sluice
