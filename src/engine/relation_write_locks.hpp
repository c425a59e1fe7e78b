// RelationWriteLocks: one mutex per relation, so that runs sharing a warehouse (a backfill's concurrent chunks)
// never write the same relation at the same time — the Warehouse contract — while writes to different relations
// overlap.
//
// Why not let DuckDB take two disjoint-window ReplaceDateRange writes of one table at once: a first write creates the
// table and a changed SELECT adds columns (ALTER TABLE) inside the write's transaction, and DuckDB fails one of two
// transactions doing either at once with a catalog write-write conflict (measured: docs/backfills.md).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sluice {

class RelationWriteLocks {
 public:
  // Blocks until the lock of `relation_key` (RelationKey of the relation) is free; held until the result is gone.
  std::unique_lock<std::mutex> Lock(const std::string& relation_key) {
    std::mutex* lock = nullptr;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      std::unique_ptr<std::mutex>& slot = locks_[relation_key];
      if (!slot) slot = std::make_unique<std::mutex>();
      lock = slot.get();
    }
    return std::unique_lock<std::mutex>(*lock);
  }

 private:
  std::mutex mutex_;  // guards locks_; the mutexes themselves live as long as this object
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
};

}  // namespace sluice
