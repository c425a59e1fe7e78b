// The main of a code program (sluice_add_pipeline): Sluice's command line over the definitions the pipeline's
// `sluice_definitions()` returns (sluice/dg.hpp).
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "sluice/dg.hpp"

int main(int argc, char** argv) {
  std::string name = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "pipeline";
  sluice::cli::UseCodeProgram({name, [] { return sluice_definitions(); }});
  return sluice::cli::Main(argc, argv);
}
