// The parse benchmark: the compiler's per-model CPU work without the file system or threads. Reads every model
// file under <project>/pipelines into memory once, then parses and contract-checks all of them on one thread
// (ParseModelFile + CheckModelContract, what `sluice discover` does for each model),
// ROUNDS times, and prints the median and the fastest round and the median per model. Use it to compare two
// builds of the SQL front end: run the two binaries alternately and compare medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "project/models/model_contract.hpp"
#include "project/models/model_file.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: compile_parse_models PROJECT_DIR [ROUNDS]\n");
    return 2;
  }
  const std::filesystem::path project = argv[1];
  const int rounds = argc == 3 ? std::max(1, std::atoi(argv[2])) : 15;
  std::vector<std::pair<std::string, std::string>> models;  // relative path, text
  for (const auto& entry : std::filesystem::recursive_directory_iterator(project / "pipelines")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".sql") continue;
    models.emplace_back(entry.path().lexically_relative(project).string(), sluice::ReadFile(entry.path()));
  }
  std::sort(models.begin(), models.end());
  std::vector<double> times;
  size_t columns = 0;
  for (int round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (const auto& [file, text] : models) {
      try {
        sluice::ParsedModel parsed = sluice::ParseModelFile(file, text, sluice::sql::Dialect::kClickHouse);
        columns += sluice::CheckModelContract(sluice::ContractInputOf(parsed, text, sluice::sql::Dialect::kClickHouse))
                       .columns.size();
      } catch (const sluice::Error& error) {
        std::fprintf(stderr,
                     "compile_parse_models: %s\n(the benchmark parses ClickHouse models without macros, as "
                     "generate_project.py writes them without --macros)\n",
                     error.what());
        return 1;
      }
    }
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf("%zu models, %d rounds: median %.2f ms, fastest %.2f ms, %.2f us a model (%zu columns a round)\n",
              models.size(), rounds, median, times.front(), 1000.0 * median / static_cast<double>(models.size()),
              columns / static_cast<size_t>(rounds));
  return 0;
}
