// How a face lets a long operation be canceled (the CLI by Ctrl-C or SIGTERM, the web UI by a request).
//
// An operation calls Arm() once it is about to start cancelable work (before it opens the warehouse, whose engine
// starts threads), polls canceled() between units of work, and names the open warehouse with Interrupting so a
// cancel interrupts its running statement; interrupted writes roll back.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <string>

#include "warehouse/warehouse.hpp"

namespace sluice::service {

class Cancellation {
 public:
  virtual ~Cancellation() = default;
  // Starts listening for a cancel; idempotent.
  virtual void Arm() = 0;
  virtual const std::atomic<bool>& canceled() const = 0;
  // What canceled the operation, for messages ("SIGINT", "a request"); meaningful once canceled().
  virtual std::string cause() const = 0;
  // The warehouse to interrupt on cancel; nullptr before it is open and after it is closed.
  virtual void Interrupting(Warehouse* warehouse) = 0;
};

// A Cancellation nobody triggers: for callers that cannot cancel (tests, one-shot programs).
class NeverCanceled final : public Cancellation {
 public:
  void Arm() override {}
  const std::atomic<bool>& canceled() const override { return canceled_; }
  std::string cause() const override { return ""; }
  void Interrupting(Warehouse*) override {}

 private:
  std::atomic<bool> canceled_{false};
};

}  // namespace sluice::service
