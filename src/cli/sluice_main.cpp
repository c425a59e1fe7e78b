// The sluice binary: the command line over a SQL-model project.
#include "cli/commands.hpp"

int main(int argc, char** argv) { return sluice::cli::Main(argc, argv); }
