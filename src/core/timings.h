// HAVEN_TIMINGS=1: accumulated seconds per pipeline stage, printed as one line on stderr
// at the end of backup, restore, check and prune. Worker stages run on several threads at
// once, so their sums are worker time (labelled "worker-s"), not wall time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace haven {

enum class Stage { kWalk, kRead, kChunk, kHash, kCompress, kSeal, kWrite, kIndex, kSnapshot,
                   kLoad, kDecode,
                   // prune's steps, one after another (each is wall time)
                   kIndexLoad, kPlan, kRepack, kIndexWrite, kDelete, kCount };

class Timings {
 public:
  // HAVEN_TIMINGS or HAVEN_IMPORT_TIMINGS (box add's one-line report) set and not "0".
  static bool Enabled();
  static void Add(Stage s, std::chrono::nanoseconds d) {
    totals_[static_cast<int>(s)].fetch_add(static_cast<uint64_t>(d.count()),
                                           std::memory_order_relaxed);
  }
  // "timings: wall 1.23s | worker-s: read 0.10 chunk 0.20 ..." (stages never used omitted)
  static std::string Report(const char* command, double wall_seconds);
  // Seconds summed so far for one stage (0 when timings are off).
  static double Seconds(Stage s) {
    return double(totals_[static_cast<int>(s)].load(std::memory_order_relaxed)) / 1e9;
  }
  // Prints Report to stderr when enabled.
  static void PrintIfEnabled(const char* command, double wall_seconds);

 private:
  static std::atomic<uint64_t> totals_[static_cast<int>(Stage::kCount)];
};

class ScopedTimer {
 public:
  explicit ScopedTimer(Stage s) : stage_(s), on_(Timings::Enabled()) {
    if (on_) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedTimer() {
    if (on_) Timings::Add(stage_, std::chrono::steady_clock::now() - start_);
  }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Stage stage_;
  bool on_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace haven
