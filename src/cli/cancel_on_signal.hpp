// Ctrl-C and SIGTERM as a request to cancel the run, not an abrupt exit.
//
// Once armed (at construction with Arming::kNow, or when an operation calls Arm), and while the object lives, SIGINT
// and SIGTERM are blocked in the constructing thread and in every thread it starts
// later (construct it before opening the warehouse, whose engine starts threads), and a watcher thread takes them:
// the first sets canceled(), prints one line on stderr and interrupts the warehouse given to Interrupting (now or
// when it is given later); a second one ends the process at once with exit code 130, which the warehouse's
// atomic writes make safe.
// Thread-safety: Interrupting and canceled may be called from any thread.
#pragma once

#include <atomic>
#include <csignal>
#include <mutex>
#include <string>
#include <thread>

#include "service/cancellation.hpp"

namespace sluice::cli {

class CancelOnSignal final : public service::Cancellation {
 public:
  enum class Arming { kNow, kWhenAsked };
  explicit CancelOnSignal(Arming arming = Arming::kNow);
  ~CancelOnSignal();
  CancelOnSignal(const CancelOnSignal&) = delete;
  CancelOnSignal& operator=(const CancelOnSignal&) = delete;

  void Arm() override;
  const std::atomic<bool>& canceled() const override { return canceled_; }
  // "SIGINT" or "SIGTERM" once canceled.
  std::string signal_name() const { return signal_ == SIGTERM ? "SIGTERM" : "SIGINT"; }
  std::string cause() const override { return signal_name(); }
  // The warehouse to interrupt on cancel; nullptr before it is open and after it is closed.
  void Interrupting(Warehouse* warehouse) override;

 private:
  void Watch();

  std::atomic<bool> canceled_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> signal_{0};
  bool armed_ = false;
  std::mutex mutex_;
  Warehouse* warehouse_ = nullptr;  // guarded by mutex_
  sigset_t previous_mask_;
  std::thread watcher_;
};

}  // namespace sluice::cli
