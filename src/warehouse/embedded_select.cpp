#include "warehouse/embedded_select.hpp"

#include "sql/tokenizer.hpp"

namespace sluice {

EmbeddedStatement Embedding(sql::Dialect dialect, std::string before, const std::string& select_sql,
                            std::string_view after) {
  EmbeddedStatement statement{std::move(before) + "(\n"};
  statement.select_begin = statement.sql.size();
  std::string stripped = sql::StripTrailingSemicolons(select_sql, dialect);
  statement.select_size = stripped.size();
  statement.sql += stripped;
  statement.sql += "\n)";
  statement.sql += after;
  return statement;
}

}  // namespace sluice
