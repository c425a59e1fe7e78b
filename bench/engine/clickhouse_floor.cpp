// The ClickHouse build benchmark's floor: the statements of a script run in order over one keep-alive HTTP
// connection to a ClickHouse server, each POSTed as the body of its own request, as `sluice build` would send them
// if it sent nothing else. The script holds the statements a `sluice build` sent (its target/run/build/statements.sql,
// rewritten by run_bench_clickhouse.py for a fresh database), separated by NUL bytes. Credentials come from the
// environment as for Sluice (STREAMBUILD_CLICKHOUSE_PASSWORD; user `default`). Prints the statement count.
// For the profile's ablations a record may start with the request's path and query string and a 0x1F byte (a
// request replayed as Sluice sent it), and --keep-going counts failed requests (Sluice's capability probes fail on
// an old server by design) instead of stopping at the first.
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

int main(int argc, char** argv) {
  const bool keep_going = argc == 5 && std::string(argv[4]) == "--keep-going";
  if (argc != 4 && !keep_going) {
    std::fprintf(stderr, "usage: clickhouse_floor HOST PORT SCRIPT [--keep-going]\n");
    return 2;
  }
  std::ifstream in(argv[3], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[3]);
    return 2;
  }
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const char* password = std::getenv("STREAMBUILD_CLICKHOUSE_PASSWORD");
  httplib::Headers headers{{"X-ClickHouse-User", "default"}};
  if (password != nullptr && *password != '\0') headers.emplace("X-ClickHouse-Key", password);

  httplib::Client client(argv[1], std::atoi(argv[2]));
  client.set_keep_alive(true);  // one connection for the whole script
  // Without TCP_NODELAY a request written as headers then body waits for the server's delayed ACK on a reused
  // connection: ~40 ms a request (58 ms a statement measured here instead of ~15).
  client.set_tcp_nodelay(true);
  client.set_read_timeout(300, 0);
  size_t statements = 0, failed = 0;
  for (size_t start = 0; start < script.size();) {
    size_t end = script.find('\0', start);
    if (end == std::string::npos) end = script.size();
    std::string statement = script.substr(start, end - start);
    start = end + 1;
    if (statement.find_first_not_of(" \n\t") == std::string::npos) continue;
    std::string path = "/";
    if (size_t mark = statement.find('\x1f'); !statement.empty() && statement[0] == '/' && mark != std::string::npos) {
      path = statement.substr(0, mark);
      statement.erase(0, mark + 1);
    }
    httplib::Result result = client.Post(path, headers, statement, "text/plain; charset=UTF-8");
    if (keep_going && result && result->status != 200) {
      ++failed;
      ++statements;
      continue;
    }
    if (!result || result->status != 200) {
      std::fprintf(stderr, "statement %zu failed: %s\n%s\n", statements + 1,
                   result ? result->body.c_str() : httplib::to_string(result.error()).c_str(), statement.c_str());
      return 1;
    }
    ++statements;
  }
  std::printf("%zu\n", statements);
  if (failed > 0) std::fprintf(stderr, "%zu failed\n", failed);
  return 0;
}
