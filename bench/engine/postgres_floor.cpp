// The PostgreSQL engine benchmark's floor: the statements of a script run in order on one libpq connection, each with
// its own PQexec, as `sluice run` would send them if it sent nothing else. The script holds the statements a warm-up
// `sluice run` sent (its target/run/<schema>/<relation>.sql files, gathered by run_bench_postgres.py), separated by
// NUL bytes. Prints the statement count. Usage: postgres_floor CONNECTION_STRING SCRIPT
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "core/postgres/pg_connection.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: postgres_floor CONNECTION_STRING SCRIPT\n");
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    auto connection = sluice::pg::Connection::Open(argv[1], "postgres_floor");
    size_t statements = 0;
    for (size_t start = 0; start < script.size();) {
      size_t end = script.find('\0', start);
      if (end == std::string::npos) end = script.size();
      const std::string statement = script.substr(start, end - start);
      start = end + 1;
      if (statement.find_first_not_of(" \n\t") == std::string::npos) continue;
      connection->Exec(statement);
      ++statements;
    }
    std::printf("%zu\n", statements);
  } catch (const sluice::pg::PgError& error) {
    std::fprintf(stderr, "postgres_floor: %s\n", error.what());
    return 1;
  }
  return 0;
}
