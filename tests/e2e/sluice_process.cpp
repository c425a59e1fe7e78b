#include "e2e/sluice_process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace sluice::testing {

namespace {

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::filesystem::path& out, const std::filesystem::path& err,
            const std::filesystem::path& cwd = {}) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    for (const auto& [key, value] : env) ::setenv(key.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

std::string SluiceBinary() { return SLUICE_BINARY; }

ScratchProject::ScratchProject(const std::string& fixture) {
  std::random_device device;
  base_ = std::filesystem::temp_directory_path() /
          ("sluice_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
  std::filesystem::path source = std::filesystem::path(SLUICE_SOURCE_DIR);
  source /= fixture.find('/') == std::string::npos ? std::filesystem::path("tests/projects") / fixture
                                                   : std::filesystem::path(fixture);
  root_ = base_ / source.filename();
  std::filesystem::create_directories(base_);
  std::filesystem::copy(source, root_, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(root_ / ".sluice");
  std::filesystem::remove_all(root_ / "target");
}

ScratchProject::~ScratchProject() {
  std::error_code ec;
  std::filesystem::remove_all(base_, ec);
}

void ScratchProject::Write(const std::string& relative, const std::string& contents) const {
  std::filesystem::create_directories((root_ / relative).parent_path());
  std::ofstream(root_ / relative, std::ios::binary | std::ios::trunc) << contents;
}

std::string ScratchProject::Read(const std::string& relative) const { return Slurp(root_ / relative); }

void ScratchProject::Remove(const std::string& relative) const { std::filesystem::remove_all(root_ / relative); }

ProcessResult ScratchProject::Run(const std::vector<std::string>& args,
                                  const std::map<std::string, std::string>& env) const {
  static int counter = 0;
  std::string stem = "run_" + std::to_string(++counter);
  pid_t pid = Start(args, env, stem);
  ProcessResult result;
  result.exit_code = WaitFor(pid);
  result.out = Slurp(base_ / (stem + ".out"));
  result.err = Slurp(base_ / (stem + ".err"));
  return result;
}

ProcessResult ScratchProject::RunProgram(const std::string& binary, const std::vector<std::string>& args,
                                         const std::map<std::string, std::string>& env) const {
  static int counter = 0;
  std::string stem = "program_" + std::to_string(++counter);
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  // The variables a code program reads are the test's to give: none leak in from the environment of ctest.
  std::map<std::string, std::string> full_env;
  for (const char* name : {"SEGMENTSTREAM_WAREHOUSE_ENGINE", "SEGMENTSTREAM_WAREHOUSE_CATALOG",
                           "SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "SEGMENTSTREAM_WAREHOUSE_LOCATION"}) {
    full_env[name] = "";
  }
  for (const auto& [key, value] : env) full_env[key] = value;
  pid_t pid = Spawn(argv, full_env, base_ / (stem + ".out"), base_ / (stem + ".err"), root_);
  ProcessResult result;
  result.exit_code = WaitFor(pid);
  result.out = Slurp(base_ / (stem + ".out"));
  result.err = Slurp(base_ / (stem + ".err"));
  return result;
}

pid_t ScratchProject::Start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                            const std::string& output_stem) const {
  std::vector<std::string> argv{SluiceBinary(), "--project-dir", root_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Spawn(argv, env, base_ / (output_stem + ".out"), base_ / (output_stem + ".err"));
}

bool WaitForFile(const std::filesystem::path& path, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int WaitFor(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace sluice::testing
