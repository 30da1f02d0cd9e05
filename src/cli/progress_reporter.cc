#include "cli/progress_reporter.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli/common.h"

namespace haven::cli {

namespace {

std::string Clock(double secs) {
  auto s = static_cast<uint64_t>(secs);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof(buf), "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
                  (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
  else
    std::snprintf(buf, sizeof(buf), "%llu:%02llu", (unsigned long long)(s / 60),
                  (unsigned long long)(s % 60));
  return buf;
}

double Fraction(uint64_t bytes, uint64_t total_bytes, uint64_t files, uint64_t total_files) {
  if (total_bytes > 0) return std::min(1.0, double(bytes) / double(total_bytes));
  if (total_files > 0) return std::min(1.0, double(files) / double(total_files));
  return 0;
}

double FpsFromEnv(double fallback) {
  for (const char* name : {"HAVEN_PROGRESS_FPS", "RESTIC_PROGRESS_FPS"}) {
    if (const char* v = std::getenv(name)) {
      double fps = std::atof(v);
      if (fps > 0) return std::min(fps, 60.0);
    }
  }
  return fallback;
}

}  // namespace

std::string ProgressReporter::StatusLine(double elapsed, uint64_t files,
                                         uint64_t bytes, uint64_t total_files,
                                         uint64_t total_bytes, uint64_t errors,
                                         bool totals_final) {
  double f = Fraction(bytes, total_bytes, files, total_files);
  std::string line = "[" + Clock(elapsed) + "] ";
  char pct[16];
  std::snprintf(pct, sizeof(pct), "%.2f%%  ", f * 100);
  if (total_files || total_bytes) line += pct;
  line += std::to_string(files) + " files " + FormatBytes(bytes);
  if (total_files || total_bytes)
    line += ", total " + std::to_string(total_files) + " files " + FormatBytes(total_bytes);
  if (elapsed > 0.5) line += ", " + FormatBytes(uint64_t(double(bytes) / elapsed)) + "/s";
  line += ", " + std::to_string(errors) + " errors";
  if (totals_final && f > 0.01 && f < 1) line += " ETA " + Clock(elapsed / f - elapsed);
  return line;
}

std::string ProgressReporter::StatusJson(const char* kind, double elapsed, uint64_t files,
                                         uint64_t bytes, uint64_t total_files,
                                         uint64_t total_bytes, uint64_t errors,
                                         bool totals_final) {
  double f = Fraction(bytes, total_bytes, files, total_files);
  std::string done_files = std::string(kind) == "restore" ? "files_restored" : "files_done";
  std::string done_bytes = std::string(kind) == "restore" ? "bytes_restored" : "bytes_done";
  char buf[512];
  int n = std::snprintf(buf, sizeof(buf),
                        "{\"message_type\":\"status\",\"seconds_elapsed\":%llu,", 
                        (unsigned long long)elapsed);
  std::string out(buf, static_cast<size_t>(n));
  if (totals_final && f > 0.01 && f < 1) {
    std::snprintf(buf, sizeof(buf), "\"seconds_remaining\":%llu,",
                  (unsigned long long)(elapsed / f - elapsed));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf),
                "\"percent_done\":%.6g,\"total_files\":%llu,\"%s\":%llu,\"total_bytes\":%llu,"
                "\"%s\":%llu,\"error_count\":%llu}",
                f, (unsigned long long)total_files, done_files.c_str(),
                (unsigned long long)files, (unsigned long long)total_bytes, done_bytes.c_str(),
                (unsigned long long)bytes, (unsigned long long)errors);
  return out + buf;
}

namespace {
int TerminalColumns() {
  struct winsize ws;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}
}  // namespace

std::string ProgressReporter::FitToWidth(std::string line, int columns) {
  if (columns <= 0) return line;
  size_t max = static_cast<size_t>(columns > 1 ? columns - 1 : 1);
  // The line is ASCII (digits, units, punctuation): one byte per column.
  if (line.size() > max) line.resize(max);
  return line;
}

ProgressReporter::ProgressReporter(const char* kind, ProgressCounters& counters)
    : kind_(kind), c_(counters), start_(std::chrono::steady_clock::now()) {
  if (Globals().json) {
    mode_ = Mode::kJson;
    interval_ = std::chrono::duration<double>(1.0 / FpsFromEnv(1));
  } else if (!Globals().quiet && isatty(STDOUT_FILENO)) {
    mode_ = Mode::kTerminal;
    interval_ = std::chrono::duration<double>(1.0 / FpsFromEnv(10));
  }
  if (mode_ != Mode::kOff) thread_ = std::thread([this] { Loop(); });
}

ProgressReporter::~ProgressReporter() { Stop(); }

void ProgressReporter::Stop() {
  {
    MutexLock lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(mu_);
  if (mode_ == Mode::kTerminal && printed_) {
    std::fputs("\r\033[K", stdout);
    std::fflush(stdout);
  }
}

void ProgressReporter::Finish() {
  {
    MutexLock lock(mu_);
    if (stop_) return;
  }
  if (mode_ == Mode::kJson) {
    Stop();
    auto done = [](std::atomic<uint64_t>& total, const std::atomic<uint64_t>& d) {
      total.store(d.load());
    };
    if (!c_.totals_final) {  // a restore knows its totals; a backup's scanner may lag
      done(c_.total_files, c_.files_done);
      done(c_.total_bytes, c_.bytes_done);
      c_.totals_final = true;
    }
    MutexLock lock(mu_);
    PrintOnce();
    return;
  }
  Stop();
}

void ProgressReporter::Loop() {
  MutexLock lock(mu_);
  for (;;) {
    const auto due = std::chrono::steady_clock::now() + interval_;
    while (!stop_ && cv_.WaitUntil(mu_, due)) {
    }
    if (stop_) return;
    PrintOnce();
  }
}

void ProgressReporter::PrintOnce() {
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  auto r = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  uint64_t files = r(c_.files_done), bytes = r(c_.bytes_done), tf = r(c_.total_files),
           tb = r(c_.total_bytes), errors = r(c_.errors);
  bool final_totals = c_.totals_final.load();
  if (mode_ == Mode::kJson) {
    std::string s = StatusJson(kind_, elapsed, files, bytes, tf, tb, errors, final_totals);
    std::fputs((s + "\n").c_str(), stdout);
  } else {
    // The width is read at every redraw, so a resized terminal gets a fitting line at the
    // next tick (a tenth of a second) and the line never wraps.
    std::string s = FitToWidth(StatusLine(elapsed, files, bytes, tf, tb, errors, final_totals),
                               TerminalColumns());
    std::fputs(("\r\033[K" + s).c_str(), stdout);
  }
  std::fflush(stdout);
  printed_ = true;
}

}  // namespace haven::cli
