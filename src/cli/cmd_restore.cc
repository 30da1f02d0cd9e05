#include <chrono>
#include <cstdio>
#include <future>

#include "cli/case_fold_pattern.h"
#include "cli/common.h"
#include "cli/progress_reporter.h"
#include "core/timings.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "repo/tree_path.h"
#include "restorer/restorer.h"

namespace haven::cli {

namespace {

struct RestoreCmd {
  std::string snap, target;
  std::vector<std::string> includes, excludes, iincludes, iexcludes;
  bool verify = false;
  std::string overwrite = "always";
  SnapshotFilter filter;
};

// The tree to restore: SNAPSHOT or restic's SNAPSHOT:SUBFOLDER (a directory of it).
BlobId TreeToRestore(IndexedRepository& repo, const SnapshotEntry& e, const std::string& sub) {
  const auto parts = SplitTreePath(sub);
  if (parts.empty()) return e.second.tree;
  auto dir = FindTreePath(repo, e.second.tree, parts).DirTree();
  if (!dir) Fail(ErrorCode::kNotFound, "path " + sub + " not found in snapshot " + e.first.Short());
  return *dir;
}

RestoreOptions OptionsFor(const RestoreCmd& o) {
  RestoreOptions opts;
  opts.target = o.target;
  // A path is restored when it matches an --include or an --iinclude, and not when it
  // matches an --exclude or an --iexclude (restic keeps the lists apart; they are merged
  // here, which differs only when a later list has a '!' pattern undoing an earlier match).
  auto merged = [](std::vector<std::string> a, const std::vector<std::string>& insensitive) {
    for (auto& p : CaseInsensitiveGlobs(insensitive)) a.push_back(std::move(p));
    return a;
  };
  opts.includes = PatternList(merged(o.includes, o.iincludes));
  opts.excludes = PatternList(merged(o.excludes, o.iexcludes));
  opts.verify = o.verify;
  opts.overwrite = ParseOverwrite(o.overwrite);
  opts.jobs = JobsOrAuto();
  opts.warn = [](const std::string& w) { Warn("ignoring error for " + w); };
  opts.note = [](const std::string& w) { Warn(w); };
  return opts;
}

void PrintSummary(const RestoreResult& r, const ProgressCounters& progress, double secs) {
  char line[256];
  int n = std::snprintf(line, sizeof(line), "restored %llu files, %llu dirs, %s in %.2fs",
                        (unsigned long long)r.files, (unsigned long long)r.dirs,
                        FormatBytes(r.bytes).c_str(), secs);
  if (r.skipped || r.bytes_kept)
    std::snprintf(line + n, sizeof(line) - static_cast<size_t>(n),
                  ", skipped %llu existing entries, %s already in place",
                  (unsigned long long)r.skipped, FormatBytes(r.bytes_kept).c_str());
  if (Globals().json) {
    std::printf(
        "{\"message_type\":\"summary\",\"seconds_elapsed\":%llu,\"total_files\":%llu,"
        "\"files_restored\":%llu,\"total_bytes\":%llu,\"bytes_restored\":%llu,"
        "\"files_skipped\":%llu,\"bytes_skipped\":%llu,\"error_count\":%llu}\n",
        (unsigned long long)secs, (unsigned long long)progress.total_files.load(),
        (unsigned long long)progress.files_done.load(),
        (unsigned long long)progress.total_bytes.load(),
        (unsigned long long)progress.bytes_done.load(), (unsigned long long)r.skipped,
        (unsigned long long)r.bytes_kept, (unsigned long long)r.errors);
  } else {
    Verbose(line);
  }
}

void RunRestoreCmd(const RestoreCmd& o) {
  auto start = std::chrono::steady_clock::now();
  auto repo = OpenRepository({.prefetch_index = true});
  // SNAPSHOT[:subfolder]
  std::string arg = o.snap, sub;
  if (size_t c = arg.find(':'); c != std::string::npos) {
    sub = arg.substr(c + 1);
    arg = arg.substr(0, c);
  }
  auto early_index = StartEarlySnapshot(*repo, arg, o.filter);  // beside the lock's write
  // Its check of the other locks overlaps the listings below; confirmed before anything
  // is written or reported, on the error paths too (a conflicting lock is the cause then).
  auto lock = LockRepositoryOverlapped(*repo, false);
  // The index loads while the snapshot is found, beside the lock's check.
  auto found = FindSnapshotAndLoadIndex(*repo, lock, arg, o.filter, early_index.get());
  const SnapshotEntry& e = found.first;
  const auto& [id, s] = e;
  auto& indexed = found.second;
  const BlobId tree = TreeToRestore(*indexed, e, sub);
  if (!Globals().json)
    Print("restoring snapshot " + id.Short() + " of " +
          (s.paths.empty() ? std::string() : s.paths[0]) + " at " + gojson::FormatTime(s.time) +
          " to " + o.target);
  RestoreOptions opts = OptionsFor(o);
  ProgressCounters progress;
  opts.progress = &progress;
  ProgressReporter reporter("restore", progress);
  RestoreResult r = RunRestore(*indexed, tree, opts);
  reporter.Finish();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Timings::PrintIfEnabled("restore", secs);
  PrintSummary(r, progress, secs);
  if (o.verify) Print("verified " + std::to_string(r.verified) + " files");
  if (r.errors) {
    Warn("There were " + std::to_string(r.errors) + " errors");
    g_exit_code = 1;
  }
}

}  // namespace

void RegisterRestore(CLI::App& app) {
  static RestoreCmd o;
  auto* cmd = app.add_subcommand("restore", "extract a snapshot into a directory");
  cmd->add_option("snapshot", o.snap, "snapshot id, prefix or latest")->required();
  cmd->add_option("-t,--target", o.target, "directory to restore to")->required();
  cmd->add_option("-i,--include", o.includes, "restore only paths matching a pattern");
  cmd->add_option("-e,--exclude", o.excludes, "do not restore paths matching a pattern");
  cmd->add_option("--iinclude", o.iincludes, "same as --include but ignores the casing of names");
  cmd->add_option("--iexclude", o.iexcludes, "same as --exclude but ignores the casing of names");
  cmd->add_flag("--verify", o.verify, "re-read restored files and compare with the snapshot");
  cmd->add_option("--overwrite", o.overwrite,
                  "existing files: always (verify, rewrite what differs), if-changed (keep "
                  "files whose size and mtime match), if-newer, never")
      ->check(CLI::IsMember({"always", "if-changed", "if-newer", "never"}))
      ->capture_default_str();
  cmd->add_option("-H,--host", o.filter.hosts, "for latest: only this host");
  cmd->add_option("--tag", o.filter.tags, "for latest: only these tags");
  cmd->add_option("--path", o.filter.paths, "for latest: only this path");
  cmd->callback([] { RunRestoreCmd(o); });
}

}  // namespace haven::cli
