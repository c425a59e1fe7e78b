// BindViews: points stable (logical) views at physical relations, the one way publish, rollback and
// `repair active-view` change what readers of a logical name see.
// The warehouse's Capabilities choose the way:
//   transactions (DuckDB, PostgreSQL): one transaction: CREATE OR REPLACE VIEW per binding (DROP VIEW and CREATE VIEW
//               where replacing cannot change a view's columns, replace_view_changes_columns), then the caller's
//               statements (the publication's metadata rows), all committed together or not at all: the whole graph
//               switches atomically.
//   none (ClickHouse): no CREATE OR REPLACE VIEW on older servers either: each binding's new view is created in
//               `_sluice` first, then ONE `RENAME TABLE` statement moves every existing logical view aside and every
//               new one into place, then the displaced views are dropped and the caller's statements run. The rename
//               runs under the server's DDL lock, so no reader sees a view pointing at a missing or partial table
//               (the tables are complete before any binding); the set is not a transaction: a failure inside the
//               rename can leave some views switched (rerunning converges), and a query that resolves a logical name
//               in the instant between its two renames fails with "table doesn't exist" rather than reading a mix.
// Staging views left by a killed process are dropped by the next call. Pause point: bind_before_switch (staging
// views created, nothing switched), bind_after_switch (switched, caller's statements not run).
// Thread-safety: one call at a time per namespace (publish holds the deployment lock).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "warehouse/warehouse.hpp"

namespace sluice {

struct ViewBinding {
  std::string logical;   // the stable view, in the namespace
  std::string physical;  // the relation it will select * from, in the namespace
};

// Receives each statement right before it is sent (to record it with its hash).
using StatementSink = std::function<void(const std::string& sql)>;

// Throws SLU-DEPLOY-030 when a logical name is held by a table (not a view): nothing is changed.
void BindViews(Warehouse& warehouse, const std::string& name_space, const std::vector<ViewBinding>& bindings,
               const std::vector<std::string>& then_statements = {}, const StatementSink& sink = {});

// Without transactions (ClickHouse): drops the staging views of `name_space` a killed BindViews left in `_sluice` (new
// views not moved in, old views moved aside). Nothing where the warehouse has transactions.
void DropStaleBindingViews(Warehouse& warehouse, const std::string& name_space, const StatementSink& sink = {});

// Drops logical views (bindings removed by a publication); absent ones are skipped.
void UnbindViews(Warehouse& warehouse, const std::string& name_space, const std::vector<std::string>& logicals,
                 const StatementSink& sink = {});

}  // namespace sluice
