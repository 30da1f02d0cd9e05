#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "archiver/archiver.h"
#include "archiver/scanner.h"
#include "backend/dry_run_backend.h"
#include "cli/common.h"
#include "cli/progress_reporter.h"
#include "core/error.h"
#include "core/timings.h"
#include "repo/gojson.h"

namespace haven::cli {

namespace {
struct BackupCmd {
  std::vector<std::string> paths;
  std::vector<std::string> excludes;
  std::vector<std::string> exclude_files;
  std::vector<std::string> files_from;
  bool stdin_mode = false;
  std::string stdin_filename = "stdin";
  std::vector<std::string> tags;
  std::string host;
  std::string parent;
  bool force = false;
  bool dry_run = false;
  bool with_atime = false;
};

std::vector<std::string> ReadFilesFrom(const std::string& file) {
  std::ifstream in(file);
  if (file == "-") {
    std::vector<std::string> out;
    std::string line;
    while (std::getline(std::cin, line))
      if (!line.empty() && line[0] != '#') out.push_back(line);
    return out;
  }
  if (!in) Fail(ErrorCode::kInvalidArgument, "cannot read --files-from " + file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    out.push_back(line);
  }
  return out;
}

void SplitTags(const std::vector<std::string>& in, std::vector<std::string>& out) {
  for (const std::string& t : in) {
    size_t start = 0;
    while (start <= t.size()) {
      size_t end = t.find(',', start);
      if (end == std::string::npos) end = t.size();
      if (end > start) out.push_back(t.substr(start, end - start));
      start = end + 1;
    }
  }
}
}  // namespace

void RegisterBackup(CLI::App& app) {
  static BackupCmd o;
  auto* cmd = app.add_subcommand("backup", "create a new snapshot of files and directories");
  cmd->add_option("paths", o.paths, "files and directories to back up");
  cmd->add_option("-e,--exclude", o.excludes, "exclude a pattern (repeatable)");
  cmd->add_option("--exclude-file", o.exclude_files, "read exclude patterns from a file");
  cmd->add_option("--files-from", o.files_from, "read the files to back up from a file");
  cmd->add_flag("--stdin", o.stdin_mode, "read the file to back up from stdin");
  cmd->add_option("--stdin-filename", o.stdin_filename, "file name for --stdin");
  cmd->add_option("--tag", o.tags, "add tags (comma-separated, repeatable)");
  cmd->add_option("-H,--host", o.host, "host name recorded in the snapshot");
  cmd->add_option("--parent", o.parent, "use this parent snapshot");
  cmd->add_flag("-f,--force", o.force, "re-read all files, do not use a parent");
  cmd->add_flag("-n,--dry-run", o.dry_run, "do not write anything, only show what would be done");
  cmd->add_flag("--with-atime", o.with_atime, "store the access time of files and dirs");
  cmd->callback([] {
    auto start = std::chrono::steady_clock::now();
    auto repo = OpenRepository();
    std::shared_ptr<Backend> real = repo->backend_ptr();
    auto lock = LockRepository(*repo, false);
    repo->LoadIndex();
    BackupOptions opts;
    opts.targets = o.paths;
    for (const auto& f : o.files_from)
      for (auto& p : ReadFilesFrom(f)) opts.targets.push_back(std::move(p));
    std::vector<std::string> patterns = o.excludes;
    for (const auto& f : o.exclude_files)
      for (auto& p : ReadPatternFile(f)) patterns.push_back(std::move(p));
    opts.exclude_strings = patterns;
    opts.excludes = PatternList(patterns);
    SplitTags(o.tags, opts.tags);
    opts.host = o.host;
    opts.force = o.force;
    opts.stdin_mode = o.stdin_mode;
    opts.stdin_filename = o.stdin_filename;
    opts.with_atime = o.with_atime;
    opts.jobs = Jobs();
    opts.program_version = std::string("haven ") + kVersion;
    opts.warn = [](const std::string& w) { Warn("error: " + w); };
    if (!o.parent.empty()) {
      auto snaps = repo->LoadSnapshots();
      opts.parent = repo->ResolveSnapshot(o.parent, snaps);
    }
    if (opts.stdin_mode && !opts.targets.empty())
      Fail(ErrorCode::kInvalidArgument, "--stdin was specified and files/dirs were listed as arguments");
    if (!opts.stdin_mode && opts.targets.empty())
      Fail(ErrorCode::kInvalidArgument, "nothing to backup, please specify target files/dirs");
    // As restic: a missing source is skipped with a warning, the rest is saved and the
    // exit code is 3 (incomplete snapshot); when none exists, nothing is saved.
    bool skipped_missing = false;
    if (!opts.stdin_mode) {
      std::vector<std::string> existing;
      for (std::string& t : opts.targets) {
        struct stat st;
        if (lstat(t.c_str(), &st) == 0) {
          existing.push_back(std::move(t));
        } else {
          int err = errno;
          Warn(err == ENOENT ? t + " does not exist, skipping"
                             : t + ": " + std::strerror(err) + ", skipping");
          skipped_missing = true;
        }
      }
      if (existing.empty())
        Fail(ErrorCode::kInvalidArgument, "all source directories/files do not exist");
      opts.targets = std::move(existing);
    }
    // Same repository state, but every write is discarded.
    if (o.dry_run) repo->set_backend(std::make_shared<DryRunBackend>(real));
    Repository* target = repo.get();
    ProgressCounters progress;
    opts.progress = &progress;
    ProgressReporter reporter("backup", progress);
    std::atomic<bool> stop_scan{false};
    std::thread scanner;
    if (reporter.enabled() && !opts.stdin_mode)
      scanner = std::thread([&] { ScanTotals(opts.targets, opts.excludes, progress, stop_scan); });
    BackupResult r;
    try {
      r = RunBackup(*target, opts, o.dry_run);
    } catch (...) {
      stop_scan = true;
      if (scanner.joinable()) scanner.join();
      throw;
    }
    stop_scan = true;
    if (scanner.joinable()) scanner.join();
    reporter.Finish();
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Timings::PrintIfEnabled("backup", secs);
    const BackupStats& s = r.stats;
    const SaveStats& ss = target->stats();
    if (Globals().json) {
      std::printf(
          "{\"message_type\":\"summary\",\"files_new\":%llu,\"files_changed\":%llu,"
          "\"files_unmodified\":%llu,\"dirs_new\":%llu,\"dirs_changed\":%llu,"
          "\"dirs_unmodified\":%llu,\"data_blobs\":%llu,\"tree_blobs\":%llu,"
          "\"data_added\":%llu,\"total_files_processed\":%llu,\"total_bytes_processed\":%llu,"
          "\"total_duration\":%.6f,\"snapshot_id\":\"%s\"}\n",
          (unsigned long long)s.files_new, (unsigned long long)s.files_changed,
          (unsigned long long)s.files_unmodified, (unsigned long long)s.dirs_new,
          (unsigned long long)s.dirs_changed, (unsigned long long)s.dirs_unmodified,
          (unsigned long long)ss.data_blobs.load(), (unsigned long long)ss.tree_blobs.load(),
          (unsigned long long)ss.data_added.load(), (unsigned long long)s.total_files,
          (unsigned long long)s.total_bytes, secs,
          o.dry_run ? "" : r.snapshot_id.Hex().c_str());
    } else {
      if (r.parent) Print("using parent snapshot " + r.parent->Short());
      char line[256];
      std::snprintf(line, sizeof(line), "\nFiles:       %5llu new, %5llu changed, %5llu unmodified",
                    (unsigned long long)s.files_new, (unsigned long long)s.files_changed,
                    (unsigned long long)s.files_unmodified);
      Print(line);
      std::snprintf(line, sizeof(line), "Dirs:        %5llu new, %5llu changed, %5llu unmodified",
                    (unsigned long long)s.dirs_new, (unsigned long long)s.dirs_changed,
                    (unsigned long long)s.dirs_unmodified);
      Print(line);
      Print((o.dry_run ? "Would add to the repository: " : "Added to the repository: ") +
            FormatBytes(ss.data_added.load()) + " (" + FormatBytes(ss.data_added_packed.load()) +
            " stored)");
      std::snprintf(line, sizeof(line), "\nprocessed %llu files, %s in %.2fs",
                    (unsigned long long)s.total_files, FormatBytes(s.total_bytes).c_str(), secs);
      Print(line);
      if (!o.dry_run) Print("snapshot " + r.snapshot_id.Short() + " saved");
    }
    if (r.incomplete || skipped_missing) {
      Warn("Warning: at least one source file could not be read");
      g_exit_code = 3;
    }
  });
}

}  // namespace haven::cli
