// Counters of long-running work (backup, restore, check), updated by the workers with
// relaxed atomics and read by a reporter (cli/progress_reporter) that prints a status
// line or JSON status lines. The totals may grow while a scanner is still counting.
#pragma once

#include <atomic>
#include <cstdint>

namespace haven {

struct ProgressCounters {
  std::atomic<uint64_t> files_done{0}, bytes_done{0}, errors{0};
  std::atomic<uint64_t> total_files{0}, total_bytes{0};
  std::atomic<bool> totals_final{false};  // the totals are complete (ETA is meaningful)

  void AddBytes(uint64_t n) { bytes_done.fetch_add(n, std::memory_order_relaxed); }
  void FileDone() { files_done.fetch_add(1, std::memory_order_relaxed); }
  void Error() { errors.fetch_add(1, std::memory_order_relaxed); }
  void AddTotal(uint64_t files, uint64_t bytes) {
    total_files.fetch_add(files, std::memory_order_relaxed);
    total_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
};

}  // namespace haven
