#include <chrono>
#include <cstdio>

#include "cli/case_fold_pattern.h"
#include "cli/common.h"
#include "cli/progress_reporter.h"
#include "core/timings.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "restorer/restorer.h"

namespace haven::cli {

void RegisterRestore(CLI::App& app) {
  static std::string snap, target;
  static std::vector<std::string> includes, excludes, iincludes, iexcludes;
  static bool verify = false;
  static SnapshotFilter f;
  auto* cmd = app.add_subcommand("restore", "extract a snapshot into a directory");
  cmd->add_option("snapshot", snap, "snapshot id, prefix or latest")->required();
  cmd->add_option("-t,--target", target, "directory to restore to")->required();
  cmd->add_option("-i,--include", includes, "restore only paths matching a pattern");
  cmd->add_option("-e,--exclude", excludes, "do not restore paths matching a pattern");
  cmd->add_option("--iinclude", iincludes, "same as --include but ignores the casing of names");
  cmd->add_option("--iexclude", iexcludes, "same as --exclude but ignores the casing of names");
  cmd->add_flag("--verify", verify, "re-read restored files and compare with the snapshot");
  cmd->add_option("-H,--host", f.hosts, "for latest: only this host");
  cmd->add_option("--tag", f.tags, "for latest: only these tags");
  cmd->add_option("--path", f.paths, "for latest: only this path");
  cmd->callback([] {
    auto start = std::chrono::steady_clock::now();
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    // SNAPSHOT[:subfolder]
    std::string arg = snap, sub;
    if (size_t c = arg.find(':'); c != std::string::npos) {
      sub = arg.substr(c + 1);
      arg = arg.substr(0, c);
    }
    auto [id, s] = FindSnapshot(*repo, arg, f);
    auto indexed = IndexedRepository::Load(*repo);
    BlobId tree = s.tree;
    if (!sub.empty()) {
      size_t pos = 0;
      while (pos < sub.size()) {
        size_t end = sub.find('/', pos);
        if (end == std::string::npos) end = sub.size();
        std::string name = sub.substr(pos, end - pos);
        pos = end + 1;
        if (name.empty()) continue;
        bool found = false;
        for (const Node& n : indexed->LoadTree(tree)) {
          if (n.name == name && n.type == NodeType::kDir && n.subtree) {
            tree = *n.subtree;
            found = true;
          }
        }
        if (!found) Fail(ErrorCode::kNotFound, "path " + sub + " not found in snapshot " + id.Short());
      }
    }
    if (!Globals().json)
      Print("restoring snapshot " + id.Short() + " of " +
          (s.paths.empty() ? std::string() : s.paths[0]) + " at " + gojson::FormatTime(s.time) +
          " to " + target);
    RestoreOptions opts;
    opts.target = target;
    // A path is restored when it matches an --include or an --iinclude, and not when it
    // matches an --exclude or an --iexclude (restic keeps the lists apart; they are merged
    // here, which differs only when a later list has a '!' pattern undoing an earlier match).
    auto merged = [](std::vector<std::string> a, const std::vector<std::string>& insensitive) {
      for (auto& p : CaseInsensitiveGlobs(insensitive)) a.push_back(std::move(p));
      return a;
    };
    opts.includes = PatternList(merged(includes, iincludes));
    opts.excludes = PatternList(merged(excludes, iexcludes));
    opts.verify = verify;
    opts.jobs = Jobs();
    opts.warn = [](const std::string& w) { Warn("ignoring error for " + w); };
    opts.note = [](const std::string& w) { Warn(w); };
    ProgressCounters progress;
    opts.progress = &progress;
    ProgressReporter reporter("restore", progress);
    RestoreResult r = RunRestore(*indexed, tree, opts);
    reporter.Finish();
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Timings::PrintIfEnabled("restore", secs);
    char line[256];
    std::snprintf(line, sizeof(line), "restored %llu files, %llu dirs, %s in %.2fs",
                  (unsigned long long)r.files, (unsigned long long)r.dirs,
                  FormatBytes(r.bytes).c_str(), secs);
    if (Globals().json) {
      std::printf(
          "{\"message_type\":\"summary\",\"seconds_elapsed\":%llu,\"total_files\":%llu,"
          "\"files_restored\":%llu,\"total_bytes\":%llu,\"bytes_restored\":%llu,"
          "\"error_count\":%llu}\n",
          (unsigned long long)secs, (unsigned long long)progress.total_files.load(),
          (unsigned long long)progress.files_done.load(),
          (unsigned long long)progress.total_bytes.load(),
          (unsigned long long)progress.bytes_done.load(), (unsigned long long)r.errors);
    } else {
      Verbose(line);
    }
    if (verify) Print("verified " + std::to_string(r.verified) + " files");
    if (r.errors) {
      Warn("There were " + std::to_string(r.errors) + " errors");
      g_exit_code = 1;
    }
  });
}

}  // namespace haven::cli
