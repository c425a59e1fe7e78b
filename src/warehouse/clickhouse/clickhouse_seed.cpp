#include "warehouse/clickhouse/clickhouse_seed.hpp"

#include "warehouse/clickhouse/clickhouse_http.hpp"

namespace sluice {

std::string SeedRowsAsTabSeparated(const SeedTable& table) {
  std::string body;
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) body += '\t';
      body += EscapeTabSeparated(row[i]);
    }
    body += '\n';
  }
  return body;
}

}  // namespace sluice
