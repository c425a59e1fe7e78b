#include "cli/cancel_on_signal.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

namespace sluice::cli {

namespace {

sigset_t CancelSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  return signals;
}

}  // namespace

CancelOnSignal::CancelOnSignal(Arming arming) {
  if (arming == Arming::kNow) Arm();
}

void CancelOnSignal::Arm() {
  if (armed_) return;
  armed_ = true;
  sigset_t signals = CancelSignals();
  pthread_sigmask(SIG_BLOCK, &signals, &previous_mask_);
  watcher_ = std::thread([this] { Watch(); });
}

CancelOnSignal::~CancelOnSignal() {
  if (!armed_) return;
  stopping_ = true;
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void CancelOnSignal::Interrupting(Warehouse* warehouse) {
  std::lock_guard<std::mutex> lock(mutex_);
  warehouse_ = warehouse;
  if (warehouse_ != nullptr && canceled_) warehouse_->Interrupt();
}

void CancelOnSignal::Watch() {
  const sigset_t signals = CancelSignals();
  const timespec poll{0, 100 * 1000 * 1000};  // how soon the watcher notices it is no longer needed
  while (!stopping_) {
    siginfo_t info;
    int received = sigtimedwait(&signals, &info, &poll);
    if (received < 0) continue;  // EAGAIN (no signal yet) or EINTR
    if (canceled_) {
      std::fprintf(stderr, "sluice: %s again: exiting now\n", received == SIGTERM ? "SIGTERM" : "SIGINT");
      std::fflush(stderr);
      ::_exit(130);
    }
    signal_ = received;
    canceled_ = true;
    std::fprintf(stderr,
                 "\nsluice: %s received: canceling the run; running statements are interrupted and rolled back "
                 "(press Ctrl-C again to exit at once)\n",
                 signal_name().c_str());
    std::fflush(stderr);
    std::lock_guard<std::mutex> lock(mutex_);
    if (warehouse_ != nullptr) warehouse_->Interrupt();
  }
}

}  // namespace sluice::cli
