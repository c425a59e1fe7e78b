// The frame every backend's write runs in, written once. In order: `prepare` makes the relation's namespace and the
// ledger ready; the statements the write sends are recorded, and handed to the observer when the write ends,
// committed or not (after a rollback, so it is among them); `open` starts what the write undoes when it fails (the
// backend's transaction, or its staging objects' cleanup), which lives until the write ends; `body` writes the data;
// the result is stamped with the ledger row's time; `finish` writes the ledger row: with the COMMIT of the body's
// transaction where the backend has transactions (DuckDB, PostgreSQL), right after the atomic swap elsewhere
// (ClickHouse, BigQuery).
// Thread-safety: as the backend's hooks.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// Hands the statements recorded into `statements` to `observer` (when set) when it goes out of scope.
class StatementReport {
 public:
  StatementReport(const StatementObserver& observer, const Relation& relation, const std::vector<std::string>& statements)
      : observer_(observer), relation_(relation), statements_(statements) {}
  StatementReport(const StatementReport&) = delete;
  StatementReport& operator=(const StatementReport&) = delete;
  ~StatementReport() {
    if (observer_) observer_(relation_, statements_);
  }

 private:
  const StatementObserver& observer_;
  const Relation& relation_;
  const std::vector<std::string>& statements_;
};

// `prepare()`; `open()` → guard; `body(guard)` → WriteResult; `finish(guard, result)`. `statements` is where the
// backend records the write's statements (its sessions append to it).
template <typename Prepare, typename Open, typename Body, typename Finish>
WriteResult LedgeredWrite(const StatementObserver& observer, const Relation& relation,
                          std::vector<std::string>& statements, Prepare&& prepare, Open&& open, Body&& body,
                          Finish&& finish) {
  prepare();
  StatementReport report(observer, relation, statements);
  auto guard = open();  // destroyed before the report: what it undoes is reported too
  WriteResult result = body(guard);
  result.written_at = FormatUtc(std::chrono::system_clock::now());
  finish(guard, result);
  return result;
}

}  // namespace sluice
