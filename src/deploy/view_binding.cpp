#include "deploy/view_binding.hpp"

#include <unistd.h>

#include <set>

#include "core/pause_point.hpp"
#include "sql/dialect.hpp"
#include "sql/sluice_ddl.hpp"

namespace sluice {

namespace {

std::string StagingPrefix(const std::string& name_space, const std::string& logical) {
  return name_space + "__" + logical + "__bind_";
}

void CheckNoTableInTheWay(Warehouse& warehouse, const std::string& name_space,
                          const std::vector<ViewBinding>& bindings) {
  for (const ViewBinding& binding : bindings) {
    std::optional<TableInfo> existing = warehouse.Describe(Relation{name_space, binding.logical});
    if (existing && !existing->is_view) {
      throw Error(Diagnostic{
          "SLU-DEPLOY-030",
          "'" + name_space + "." + binding.logical + "' is a table, not a stable view: a deployment cannot bind it",
          {},
          "it is left from a direct build: rename or drop it (`sluice clean` lists it), then publish again",
          {}});
    }
  }
}

// Without transactions (ClickHouse): each new view is created in `_sluice` under a staging name, then one RENAME TABLE
// moves every view in place and the displaced ones aside, which are dropped after.
void BindByRenaming(Warehouse& warehouse, const std::string& name_space, const std::vector<ViewBinding>& bindings,
                    const std::vector<std::string>& then_statements, const StatementSink& sink) {
  auto execute = [&](const std::string& sql) {
    if (sink) sink(sql);
    warehouse.Execute(sql);
  };
  auto name = [&](const std::string& db, const std::string& relation) {
    return warehouse.QualifiedName(Relation{db, relation});
  };
  warehouse.EnsureSchema("_sluice");
  DropStaleBindingViews(warehouse, name_space, sink);

  const std::string suffix = std::to_string(getpid());
  std::string renames;
  std::vector<std::string> displaced;
  for (const ViewBinding& binding : bindings) {
    const std::string staging = StagingPrefix(name_space, binding.logical) + suffix;
    execute("CREATE VIEW " + name("_sluice", staging) + " AS SELECT * FROM " + name(name_space, binding.physical));
    if (warehouse.Describe(Relation{name_space, binding.logical})) {
      const std::string aside = StagingPrefix(name_space, binding.logical) + suffix + "_old";
      renames += (renames.empty() ? "" : ", ") + name(name_space, binding.logical) + " TO " + name("_sluice", aside);
      displaced.push_back(aside);
    }
    renames += (renames.empty() ? "" : ", ") + name("_sluice", staging) + " TO " + name(name_space, binding.logical);
  }
  PausePoint("bind_before_switch");
  if (!renames.empty()) execute("RENAME TABLE " + renames);
  PausePoint("bind_after_switch");
  for (const std::string& aside : displaced) {
    execute(sql::DropRelation(warehouse.dialect(), name("_sluice", aside), true, false));
  }
  for (const std::string& statement : then_statements) execute(statement);
}

// One transaction switches every view (DuckDB, PostgreSQL). Where CREATE OR REPLACE VIEW cannot change a view's
// columns (Capabilities::replace_view_changes_columns; PostgreSQL), each view is dropped and created; a view of the
// user's reading the stable view makes the DROP fail, and with it the whole switch, rather than vanish.
void BindInTransaction(Warehouse& warehouse, const std::string& name_space, const std::vector<ViewBinding>& bindings,
                       const std::vector<std::string>& then_statements, const StatementSink& sink) {
  const sql::Dialect dialect = warehouse.dialect();
  const Capabilities& capabilities = warehouse.capabilities();
  const bool replace = capabilities.create_or_replace_view && capabilities.replace_view_changes_columns;
  std::string script = "BEGIN TRANSACTION;\n";
  for (const ViewBinding& binding : bindings) {
    const std::string logical = sql::QualifiedName(dialect, name_space, binding.logical);
    const std::string select = " AS SELECT * FROM " + sql::QualifiedName(dialect, name_space, binding.physical);
    if (!replace) {
      script += sql::DropRelation(dialect, logical, true, false) + ";\nCREATE VIEW " + logical + select + ";\n";
    } else {
      script += "CREATE OR REPLACE VIEW " + logical + select + ";\n";
    }
  }
  for (const std::string& statement : then_statements) script += statement + ";\n";
  PausePoint("bind_before_switch");
  try {
    if (sink) sink(script + "COMMIT");
    warehouse.Execute(script + "COMMIT");
  } catch (...) {
    try {
      warehouse.Execute("ROLLBACK");
    } catch (const Error&) {
      // No transaction left open: the failed script rolled back itself.
    }
    throw;
  }
  PausePoint("bind_after_switch");
}

}  // namespace

void BindViews(Warehouse& warehouse, const std::string& name_space, const std::vector<ViewBinding>& bindings,
               const std::vector<std::string>& then_statements, const StatementSink& sink) {
  CheckNoTableInTheWay(warehouse, name_space, bindings);
  if (warehouse.capabilities().transactions) {
    BindInTransaction(warehouse, name_space, bindings, then_statements, sink);
  } else {
    BindByRenaming(warehouse, name_space, bindings, then_statements, sink);
  }
}

void DropStaleBindingViews(Warehouse& warehouse, const std::string& name_space, const StatementSink& sink) {
  if (warehouse.capabilities().transactions) return;  // BindInTransaction leaves nothing behind
  const std::string prefix = name_space + "__";
  for (const CatalogEntry& entry : warehouse.CatalogOf(std::string("_sluice"))) {
    const std::string& name = entry.relation.name;
    if (name.rfind(prefix, 0) != 0 || name.find("__bind_") == std::string::npos) continue;
    const std::string sql = sql::DropRelation(warehouse.dialect(), warehouse.QualifiedName(entry.relation),
                                              entry.kind != RelationKind::kTable, false);
    if (sink) sink(sql);
    warehouse.Execute(sql);
  }
}

void UnbindViews(Warehouse& warehouse, const std::string& name_space, const std::vector<std::string>& logicals,
                 const StatementSink& sink) {
  for (const std::string& logical : logicals) {
    std::optional<TableInfo> existing = warehouse.Describe(Relation{name_space, logical});
    if (!existing || !existing->is_view) continue;
    const std::string sql =
        sql::DropRelation(warehouse.dialect(), warehouse.QualifiedName(Relation{name_space, logical}), true, false);
    if (sink) sink(sql);
    warehouse.Execute(sql);
  }
}

}  // namespace sluice
