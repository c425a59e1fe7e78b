#include "engine/seed_hash.hpp"

#include <filesystem>

#include "core/file_system.hpp"
#include "core/sha256.hpp"

namespace sluice {

std::string SeedHash(const std::string& project_root, const SeedCompute& seed) {
  // Read as every project file is: a seed linked from outside the project is refused (SLU-IO-005).
  std::string fingerprint = ReadFileInside(project_root, seed.path);
  for (const auto& [name, type] : seed.columns) fingerprint += "\n" + name + " " + type;
  return Sha256Hex(fingerprint);
}

}  // namespace sluice
