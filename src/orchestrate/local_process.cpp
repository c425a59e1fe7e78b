#include "orchestrate/local_process.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace sluice::orchestrate {

namespace {

constexpr int kPollMilliseconds = 100;

// What the child reports through the close-on-exec error pipe when it cannot reach execve's success.
struct StartFailure {
  int stage = 0;  // kStageChdir or kStageExec
  int error = 0;  // errno
};
constexpr int kStageChdir = 1;
constexpr int kStageExec = 2;

// A file descriptor closed when it goes out of scope.
class Descriptor {
 public:
  Descriptor() = default;
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { Reset(); }
  int get() const { return fd_; }
  int* out() { return &fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Every `KEY=VALUE` of the process environment, then the invocation's pairs: a pair replaces the variable of its
// name in place, a new name is appended.
std::vector<std::string> MergedEnvironment(const StarlakeOptionPairs& overlay) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) entries.emplace_back(*entry);
  for (const auto& [key, value] : overlay) {
    const std::string prefix = key + "=";
    bool replaced = false;
    for (std::string& entry : entries) {
      if (entry.compare(0, prefix.size(), prefix) == 0) {
        entry = prefix + value;
        replaced = true;
      }
    }
    if (!replaced) entries.push_back(prefix + value);
  }
  return entries;
}

// The paths execve tries, in order: the program itself when it holds a '/', else each PATH directory's entry (an
// empty directory means the current one; no PATH means "/bin:/usr/bin", as execvp).
std::vector<std::string> ProgramCandidates(const std::string& program, const std::vector<std::string>& environment) {
  if (program.find('/') != std::string::npos || program.empty()) return {program};
  std::string path = "/bin:/usr/bin";
  for (const std::string& entry : environment) {
    if (entry.rfind("PATH=", 0) == 0) path = entry.substr(5);
  }
  std::vector<std::string> candidates;
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    std::string directory = path.substr(start, colon - start);
    candidates.push_back((directory.empty() ? std::string(".") : directory) + "/" + program);
    start = colon + 1;
  }
  return candidates;
}

std::vector<char*> Pointers(std::vector<std::string>& texts) {
  std::vector<char*> pointers;
  for (std::string& text : texts) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

void WriteAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

// The child's side, between fork and execve: async-signal-safe calls only.
[[noreturn]] void StartChild(pid_t parent, int output, int input, int error_pipe, const char* cwd,
                             const std::vector<char*>& candidates, char* const* argv, char* const* envp) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  ::setpgid(0, 0);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_action, nullptr);
  ::dup2(input, STDIN_FILENO);
  ::dup2(output, STDOUT_FILENO);
  ::dup2(output, STDERR_FILENO);
  if (cwd != nullptr && ::chdir(cwd) != 0) {
    StartFailure failure{kStageChdir, errno};
    WriteAll(error_pipe, &failure, sizeof failure);
    ::_exit(127);
  }
  int error = ENOENT;
  for (char* candidate : candidates) {
    if (candidate == nullptr) break;
    ::execve(candidate, argv, envp);
    // As execvp: a permission problem on one entry is reported unless a later one runs; a missing entry is not.
    if (errno == EACCES) {
      error = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      error = errno;
      break;
    }
  }
  StartFailure failure{kStageExec, error};
  WriteAll(error_pipe, &failure, sizeof failure);
  ::_exit(127);
}

// Splits what arrives into lines and hands each to `on_line`.
class LineSplitter {
 public:
  explicit LineSplitter(const std::function<void(std::string_view)>& on_line) : on_line_(on_line) {}
  void Add(const char* data, size_t size) {
    pending_.append(data, size);
    size_t start = 0;
    for (size_t newline = pending_.find('\n'); newline != std::string::npos; newline = pending_.find('\n', start)) {
      if (on_line_) on_line_(std::string_view(pending_).substr(start, newline - start));
      start = newline + 1;
    }
    pending_.erase(0, start);
  }
  void Finish() {
    if (!pending_.empty() && on_line_) on_line_(pending_);
    pending_.clear();
  }

 private:
  const std::function<void(std::string_view)>& on_line_;
  std::string pending_;
};

// Reads what is available within `timeout_ms`; returns false at end of file.
bool ReadSome(int fd, int timeout_ms, LineSplitter& lines, bool& idle) {
  pollfd entry{fd, POLLIN, 0};
  idle = false;
  int ready = ::poll(&entry, 1, timeout_ms);
  if (ready < 0) return errno == EINTR;
  if (ready == 0) {
    idle = true;
    return true;
  }
  char buffer[8192];
  ssize_t got = ::read(fd, buffer, sizeof buffer);
  if (got < 0) return errno == EINTR || errno == EAGAIN;
  if (got == 0) return false;
  lines.Add(buffer, static_cast<size_t>(got));
  return true;
}

// Kills and reaps the child's group if the caller leaves before the child was reaped (`on_line` threw).
class ChildReaper {
 public:
  explicit ChildReaper(pid_t child) : child_(child) {}
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;
  ~ChildReaper() {
    if (reaped_) return;
    ::kill(-child_, SIGKILL);
    while (::waitpid(child_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  void Reaped() { reaped_ = true; }

 private:
  pid_t child_;
  bool reaped_ = false;
};

ProcessOutcome OutcomeOf(int status, bool canceled) {
  ProcessOutcome outcome;
  outcome.canceled = canceled;
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signaled = true;
    outcome.signal = WTERMSIG(status);
    outcome.exit_code = 128 + outcome.signal;
  }
  return outcome;
}

ProcessOutcome CannotStart(const std::string& why, const std::function<void(std::string_view)>& on_line) {
  if (on_line) on_line(why);
  ProcessOutcome outcome;
  outcome.exit_code = 127;
  return outcome;
}

}  // namespace

ProcessOutcome RunLocalProcess(const ExecutorInvocation& invocation,
                               const std::function<void(std::string_view line)>& on_line,
                               const std::atomic<bool>* cancel, std::chrono::milliseconds grace) {
  // Everything the child needs is built here, before fork.
  std::vector<std::string> environment = MergedEnvironment(invocation.environment);
  std::vector<std::string> candidate_texts = ProgramCandidates(invocation.program, environment);
  std::vector<std::string> argument_texts{invocation.program};
  argument_texts.insert(argument_texts.end(), invocation.arguments.begin(), invocation.arguments.end());
  std::vector<char*> envp = Pointers(environment);
  std::vector<char*> candidates = Pointers(candidate_texts);
  std::vector<char*> argv = Pointers(argument_texts);
  const char* cwd = invocation.cwd ? invocation.cwd->c_str() : nullptr;

  Descriptor output_read, output_write, error_read, error_write;
  int output_pipe[2];
  int error_pipe[2];
  if (::pipe2(output_pipe, O_CLOEXEC) != 0) {
    return CannotStart("cannot start " + invocation.program + ": pipe: " + std::strerror(errno), on_line);
  }
  *output_read.out() = output_pipe[0];
  *output_write.out() = output_pipe[1];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    return CannotStart("cannot start " + invocation.program + ": pipe: " + std::strerror(errno), on_line);
  }
  *error_read.out() = error_pipe[0];
  *error_write.out() = error_pipe[1];
  Descriptor input(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (input.get() < 0) {
    return CannotStart("cannot start " + invocation.program + ": /dev/null: " + std::strerror(errno), on_line);
  }

  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    return CannotStart("cannot start " + invocation.program + ": fork: " + std::strerror(errno), on_line);
  }
  if (child == 0) {
    StartChild(parent, output_write.get(), input.get(), error_write.get(), cwd, candidates, argv.data(), envp.data());
  }
  ::setpgid(child, child);  // also here, so a cancel right after fork already reaches the group
  output_write.Reset();
  error_write.Reset();
  input.Reset();

  // Blocks until execve succeeds (the pipe closes on exec) or the child reports why it could not.
  StartFailure failure;
  ssize_t got;
  do {
    got = ::read(error_read.get(), &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string why = failure.stage == kStageChdir
                                ? "cannot start " + invocation.program + ": working directory " +
                                      invocation.cwd.value_or("") + ": " + std::strerror(failure.error)
                                : "cannot start " + invocation.program + ": " + std::strerror(failure.error);
    return CannotStart(why, on_line);
  }

  ChildReaper reaper(child);
  LineSplitter lines(on_line);
  bool open = true;
  bool reaped = false;
  bool canceled = false;
  int status = 0;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  while (!reaped || open) {
    if (!reaped) {
      pid_t done = ::waitpid(child, &status, WNOHANG);
      if (done == child) {
        reaped = true;
        reaper.Reaped();
      }
    }
    if (!reaped && cancel != nullptr && cancel->load() && !canceled) {
      canceled = true;
      ::kill(-child, SIGTERM);
      kill_at = std::chrono::steady_clock::now() + grace;
    }
    if (!reaped && kill_at && std::chrono::steady_clock::now() >= *kill_at) {
      ::kill(-child, SIGKILL);
      kill_at.reset();
    }
    if (open) {
      bool idle = false;
      open = ReadSome(output_read.get(), kPollMilliseconds, lines, idle);
      // Once the child is gone, what it wrote is already in the pipe; a grandchild that keeps the pipe open is
      // read from until it has been quiet for one poll.
      if (reaped && idle) open = false;
    } else if (!reaped) {
      ::poll(nullptr, 0, kPollMilliseconds / 4);  // the child closed its output but runs on
    }
  }
  lines.Finish();
  return OutcomeOf(status, canceled);
}

}  // namespace sluice::orchestrate
