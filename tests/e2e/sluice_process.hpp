// Test support for e2e tests: run the sluice binary on a scratch copy of a fixture project.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace sluice::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A fresh copy of tests/projects/<fixture> (or of <fixture> relative to the source tree when it contains a
// '/', e.g. "examples/orders_demo") in its own temporary folder, removed on destruction.
class ScratchProject {
 public:
  explicit ScratchProject(const std::string& fixture);
  ~ScratchProject();
  ScratchProject(const ScratchProject&) = delete;
  ScratchProject& operator=(const ScratchProject&) = delete;

  const std::filesystem::path& root() const { return root_; }
  void Write(const std::string& relative, const std::string& contents) const;
  std::string Read(const std::string& relative) const;
  void Remove(const std::string& relative) const;

  // Runs `sluice --project-dir <root> args...` to completion.
  ProcessResult Run(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) const;
  // Runs another program (a code program built by sluice_add_pipeline) in the scratch folder as its working
  // directory, without --project-dir. SEGMENTSTREAM_WAREHOUSE_* are empty (unset, to the program) unless `env` sets them.
  ProcessResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {}) const;
  // Starts it without waiting; output goes to files under the scratch folder. Returns the pid.
  pid_t Start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const std::string& output_stem) const;

 private:
  std::filesystem::path base_;
  std::filesystem::path root_;
};

// Waits (up to `seconds`) for a file to exist.
bool WaitForFile(const std::filesystem::path& path, int seconds);
// Waits for a started process; returns its exit code (or 128+signal).
int WaitFor(pid_t pid);

std::string SluiceBinary();

}  // namespace sluice::testing
