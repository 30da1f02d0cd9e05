// tag: restic 0.14's `tag --set|--add|--remove TAGS [SNAPSHOT...]`: each selected snapshot
// whose tags change (maintenance/snapshot_tags) is saved anew with `original` set to the
// first id it had, and the old snapshot file is removed, under an exclusive lock (the
// snapshots read beside its check, cli/common.h).
#include "cli/common.h"
#include "cli/more_commands.h"
#include "cli/snapshot_args.h"
#include "cli/snapshot_filter.h"
#include "core/error.h"
#include "maintenance/snapshot_tags.h"

namespace haven::cli {

namespace {

struct TagCmdOptions {
  std::vector<std::string> snapshots;
  std::vector<std::string> set, add, remove;
  SnapshotFilter filter;
};

// Saves the edited snapshot and removes the old file; false (with restic's warning) when
// either fails.
bool Replace(Repository& repo, const FileId& old_id, Snapshot s) {
  try {
    if (!s.original) s.original = old_id;
    repo.CheckLock();
    repo.SaveJson(FileType::kSnapshot, s.ToJson());
    repo.backend().Remove({FileType::kSnapshot, old_id.Hex()});
    return true;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kLocked || e.code() == ErrorCode::kInterrupted) throw;
    Warn("unable to modify the tags for snapshot ID \"" + old_id.Hex() + "\", ignoring: " + e.what());
    return false;
  }
}

void RunTag(const TagCmdOptions& o) {
  if (o.set.empty() && o.add.empty() && o.remove.empty())
    Fail(ErrorCode::kInvalidArgument, "nothing to do!");
  if (!o.set.empty() && (!o.add.empty() || !o.remove.empty()))
    Fail(ErrorCode::kInvalidArgument, "--set and --add/--remove cannot be given at the same time");
  auto repo = OpenRepository();
  if (!Globals().no_lock) Print("create exclusive lock for repository");
  // The snapshots are read while the lock's check runs; nothing is changed before the
  // lock is confirmed.
  auto lock = LockRepositoryOverlapped(*repo, true);
  const auto set = FlattenTagLists(o.set), add = FlattenTagLists(o.add),
             remove = FlattenTagLists(o.remove);
  const auto all = LoadSnapshotsThenConfirm(*repo, lock);
  size_t changed = 0;
  for (auto [id, s] : SelectSnapshots(all, o.snapshots, o.filter, [](const std::string& m) { Warn(m); })) {
    if (!ChangeTags(s, set, add, remove)) continue;
    if (Replace(*repo, id, std::move(s))) ++changed;
  }
  if (changed == 0) {
    Print("no snapshots were modified");
  } else {
    Print("modified tags on " + std::to_string(changed) + " snapshots");
  }
}

}  // namespace

void RegisterTag(CLI::App& app) {
  static TagCmdOptions o;
  auto* cmd = app.add_subcommand("tag", "modify tags on snapshots");
  cmd->add_option("snapshot", o.snapshots, "snapshot ids (default: all, under the filter)");
  cmd->add_option("--set", o.set, "tags which will replace the existing tags (tag[,tag,...], repeatable)");
  cmd->add_option("--add", o.add, "tags which will be added to the existing tags (repeatable)");
  cmd->add_option("--remove", o.remove, "tags which will be removed from the existing tags (repeatable)");
  cmd->add_option("-H,--host", o.filter.hosts, "only consider snapshots for this host, when no snapshot id is given");
  cmd->add_option("--tag", o.filter.tags, "only consider snapshots which include this taglist, when no snapshot id is given");
  cmd->add_option("--path", o.filter.paths, "only consider snapshots which include this path, when no snapshot id is given");
  cmd->callback([] { RunTag(o); });
}

}  // namespace haven::cli
