// The engine benchmark's floor: the statements of a script (one a line, from generate_project.py's floor.sql) run
// in order on one DuckDB connection, each in its own auto-committed transaction, into the database file given —
// the DuckDB work any engine must do to build the project. Opens the file as Sluice does (extensions neither
// installed nor loaded) and closes it at the end (the checkpoint is part of both runs). Prints the statement count.
#include <duckdb.h>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: engine_floor DATABASE_FILE SCRIPT\n");
    return 2;
  }
  std::ifstream script(argv[2]);
  if (!script) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 2;
  }
  duckdb_config config = nullptr;
  duckdb_create_config(&config);
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  duckdb_database database = nullptr;
  char* open_error = nullptr;
  if (duckdb_open_ext(argv[1], &database, config, &open_error) == DuckDBError) {
    std::fprintf(stderr, "cannot open %s: %s\n", argv[1], open_error ? open_error : "unknown error");
    return 1;
  }
  duckdb_destroy_config(&config);
  duckdb_connection connection = nullptr;
  duckdb_connect(database, &connection);

  size_t statements = 0;
  for (std::string line; std::getline(script, line);) {
    if (line.empty()) continue;
    duckdb_result result;
    if (duckdb_query(connection, line.c_str(), &result) == DuckDBError) {
      std::fprintf(stderr, "statement %zu failed: %s\n%s\n", statements + 1, duckdb_result_error(&result),
                   line.c_str());
      return 1;
    }
    duckdb_destroy_result(&result);
    ++statements;
  }
  duckdb_disconnect(&connection);
  duckdb_close(&database);
  std::printf("%zu\n", statements);
  return 0;
}
