// The local process of one attempt: runs an ExecutorInvocation (executor.hpp) with execve — never through a shell, so
// no option value can inject shell syntax — and streams its merged stdout and stderr line by line.
//
// The child runs in its own process group with stdin from /dev/null, the caller's signal mask cleared and SIGPIPE at
// its default. It dies with the caller: PR_SET_PDEATHSIG SIGKILL, set after fork and followed by a check that the
// parent is still the one that forked (it may have died in between). The kernel ties that signal to the forking
// *thread*; RunLocalProcess waits for the child on that thread, so the thread outlives it.
// Thread-safety: safe to call from several threads at once; between fork and exec the child makes only
// async-signal-safe calls (argv, envp and PATH candidates are prepared before forking, pipes are close-on-exec).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string_view>

#include "orchestrate/executor.hpp"

namespace sluice::orchestrate {

struct ProcessOutcome {
  int exit_code = 0;      // the exit status; 128 + signal when signaled; 127 when the program could not start
  bool signaled = false;  // ended by a signal (`signal` says which)
  int signal = 0;
  bool canceled = false;  // `*cancel` became true before the process ended
};

// Runs `invocation`: execve of `program` (looked up in PATH when it holds no '/', as execvp does) with `arguments`,
// in `cwd` when given, with the process environment overlaid with `invocation.environment`. stdout and stderr share
// one pipe; `on_line` gets each line without its '\n' as it arrives, on the calling thread, and a last line without
// '\n' too; an exception from `on_line` kills the process group and propagates. Returns once the child has exited and
// its output is read (output a surviving grandchild keeps writing is read until it is idle for 100 ms, then left).
// Cancel: `*cancel` is polled at least every 100 ms; once true, the process group gets SIGTERM, then SIGKILL after
// `grace`, and the outcome says canceled. A program that cannot be started (not found, not executable, a cwd that
// does not exist): exit_code 127 and one line saying why (the errno text) through `on_line`.
ProcessOutcome RunLocalProcess(const ExecutorInvocation& invocation,
                               const std::function<void(std::string_view line)>& on_line,
                               const std::atomic<bool>* cancel = nullptr,
                               std::chrono::milliseconds grace = std::chrono::seconds(10));

}  // namespace sluice::orchestrate
