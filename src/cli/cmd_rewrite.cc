// rewrite: restic 0.15's `rewrite [--exclude P] [--iexclude P] [--exclude-file F]
// [--iexclude-file F] [--forget] [--dry-run] [SNAPSHOT...]` (it runs on restic 0.14's
// repositories): new snapshots without the excluded paths (maintenance/rewrite_snapshots),
// tagged "rewrite", or replacing the old ones with --forget. A dry run takes no lock and
// writes nothing.
#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/restic_format.h"
#include "cli/snapshot_args.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "core/path_match.h"
#include "maintenance/rewrite_snapshots.h"

namespace haven::cli {

namespace {

struct RewriteCmdOptions {
  std::vector<std::string> snapshots;
  std::vector<std::string> excludes, iexcludes, exclude_files, iexclude_files;
  bool forget = false, dry_run = false;
  SnapshotFilter filter;
};

// restic's CollectPatterns: the patterns and those of the files; the case-insensitive ones
// lower-cased and matched against the lower-cased path.
std::function<bool(const std::string&)> Excluder(const RewriteCmdOptions& o) {
  std::vector<std::string> ex = o.excludes, iex;
  for (const auto& f : o.exclude_files)
    for (auto& p : ReadPatternFile(f)) ex.push_back(std::move(p));
  for (const auto& p : o.iexcludes) iex.push_back(FoldCase(p));
  for (const auto& f : o.iexclude_files)
    for (const auto& p : ReadPatternFile(f)) iex.push_back(FoldCase(p));
  auto plain = std::make_shared<PatternList>(std::move(ex));
  auto folded = std::make_shared<PatternList>(std::move(iex));
  return [plain, folded](const std::string& path) {
    return plain->Matches(path) || (!folded->empty() && folded->Matches(FoldCase(path)));
  };
}

std::string GoList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + v[i];
  return s + "]";
}

void RunRewrite(const RewriteCmdOptions& o) {
  if (o.excludes.empty() && o.iexcludes.empty() && o.exclude_files.empty() && o.iexclude_files.empty())
    Fail(ErrorCode::kInvalidArgument, "Nothing to do: no excludes provided");
  RewriteSnapshotsOptions ro;
  ro.exclude = Excluder(o);
  ro.forget = o.forget;
  ro.dry_run = o.dry_run;
  ro.progress = [](const std::string& s) { Print(s); };
  ro.begin = [](const FileId& id, const Snapshot& s) {
    Print("\nsnapshot " + id.Short() + " of " + GoList(s.paths) + " at " + GoTimeString(s.time) + ")");
  };
  OpenOptions oo;
  oo.dry_run = o.dry_run;
  auto repo = OpenRepository(oo);
  std::unique_ptr<Lock> lock;
  if (!o.dry_run) {
    if (o.forget && !Globals().no_lock) Print("create exclusive lock for repository");
    lock = LockRepository(*repo, o.forget);
  }
  const auto all = repo->LoadSnapshots();
  auto indexed = IndexedRepository::Load(*repo);
  WriteSession session(*indexed, GlobalWriteOptions());
  RewriteSnapshots(session, SelectSnapshots(all, o.snapshots, o.filter, [](const std::string& m) { Warn(m); }), ro);
}

}  // namespace

void RegisterRewrite(CLI::App& app) {
  static RewriteCmdOptions o;
  auto* cmd = app.add_subcommand("rewrite", "rewrite snapshots to exclude unwanted files");
  cmd->add_option("snapshot", o.snapshots, "snapshot ids (default: all, under the filter)");
  cmd->add_option("-e,--exclude", o.excludes, "exclude a pattern (repeatable)");
  cmd->add_option("--iexclude", o.iexcludes, "same as --exclude but ignores the casing of filenames");
  cmd->add_option("--exclude-file", o.exclude_files, "read exclude patterns from a file (repeatable)");
  cmd->add_option("--iexclude-file", o.iexclude_files, "same as --exclude-file but ignores casing");
  cmd->add_flag("--forget", o.forget, "remove original snapshots after creating new ones");
  cmd->add_flag("-n,--dry-run", o.dry_run, "do not do anything, just print what would be done");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots for this host");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this path");
  cmd->callback([] { RunRewrite(o); });
}

}  // namespace haven::cli
