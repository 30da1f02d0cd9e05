// Prints progress of long work from ProgressCounters on a background thread:
// - on a terminal (stdout is a tty, no --quiet, no --json): one status line redrawn in
//   place: elapsed, percent, files and bytes done of the total, rate, errors, ETA;
// - with --json: restic-style {"message_type":"status",...} lines, one per interval;
// - otherwise nothing.
// The interval is 1/fps seconds, fps from HAVEN_PROGRESS_FPS (or RESTIC_PROGRESS_FPS),
// default 10 on a terminal and 1 with --json.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "core/progress.h"

namespace haven::cli {

class ProgressReporter {
 public:
  // kind: "backup", "restore" or "check" (names the JSON fields as restic does).
  ProgressReporter(const char* kind, ProgressCounters& counters);
  ~ProgressReporter();  // Stop()
  // True when something will be printed (callers may skip extra work, e.g. scanning).
  bool enabled() const { return mode_ != Mode::kOff; }
  // Stops the thread and clears the status line.
  void Stop();
  // The work is done: stops like Stop(), but with --json first prints one last status
  // line (totals not known yet are the counts done: the scanner may lag), so every
  // JSON run ends with the final counters before its summary, however short it was.
  void Finish();

  // "[0:42] 12.34%  1234 files 1.234 GiB, total 5678 files 9.9 GiB, 0 errors ETA 1:23"
  // The status line cut to fit `columns` terminal columns without wrapping (one column is
  // kept free for the cursor); columns 0 = unknown, the line is left as it is.
  static std::string FitToWidth(std::string line, int columns);
  static std::string StatusLine(double elapsed, uint64_t files,
                                uint64_t bytes, uint64_t total_files, uint64_t total_bytes,
                                uint64_t errors, bool totals_final);
  static std::string StatusJson(const char* kind, double elapsed, uint64_t files,
                                uint64_t bytes, uint64_t total_files, uint64_t total_bytes,
                                uint64_t errors, bool totals_final);

 private:
  enum class Mode { kOff, kTerminal, kJson };
  void Loop() EXCLUDES(mu_);
  void PrintOnce() REQUIRES(mu_);

  const char* kind_;
  ProgressCounters& c_;
  Mode mode_ = Mode::kOff;
  std::chrono::steady_clock::time_point start_;
  std::chrono::duration<double> interval_{0.1};
  Mutex mu_;  // held while a line is printed
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool printed_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace haven::cli
