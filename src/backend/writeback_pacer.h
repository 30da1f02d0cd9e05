// Starts the kernel's write-back of files while they are still being written, so that the
// fsync that ends the write waits for the tail only. Every `period` one thread calls
// sync_file_range(SYNC_FILE_RANGE_WRITE) on each file: it starts write-out of the dirty
// pages and waits for nothing; it changes no byte and no durability promise (the owner's
// fsync still decides what is durable). Without it the kernel keeps a big write in memory
// (nothing forces write-back below dirty_background_ratio, gigabytes here) until the
// fsync, which then waits for all of it at once.
//
// The box (box_backend.h) runs one for a write transaction: SQLite writes the transaction
// into the WAL, fsyncs it at COMMIT, copies it into the box file at the checkpoint and
// fsyncs that. A file that does not exist yet is opened at a later tick. Errors are
// ignored: a file that cannot be opened is simply not paced.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace haven {

class WritebackPacer {
 public:
  static constexpr std::chrono::milliseconds kDefaultPeriod{25};

  explicit WritebackPacer(std::vector<std::string> paths,
                          std::chrono::milliseconds period = kDefaultPeriod);
  // Stops the thread (at once, not after the current period) and closes the files.
  ~WritebackPacer();
  WritebackPacer(const WritebackPacer&) = delete;
  WritebackPacer& operator=(const WritebackPacer&) = delete;

  // sync_file_range calls made so far, over all files (tests).
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }

 private:
  void Run();

  const std::vector<std::string> paths_;
  const std::chrono::milliseconds period_;
  Mutex mu_;
  CondVar wake_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> requests_{0};
  std::thread thread_;  // last: starts after every member above exists
};

}  // namespace haven
