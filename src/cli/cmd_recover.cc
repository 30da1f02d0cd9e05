// recover: restic 0.14's recover. Every tree that no other tree and no snapshot references
// becomes a directory (named by its short id) of a new snapshot of "/recover" tagged
// "recovered" (maintenance/recover). Takes a non-exclusive lock, as restic.
#include <unistd.h>

#include "cli/common.h"
#include "cli/mount_commands.h"
#include "maintenance/recover.h"
#include "repo/host_info.h"

namespace haven::cli {

namespace {

void RunRecover() {
  const std::string hostname = HostName();
  auto repo = OpenRepository();
  auto lock = LockRepository(*repo, false);
  std::vector<BlobId> snapshot_trees;
  const auto snapshots = repo->LoadSnapshots();  // listed before the index, as restic
  for (const auto& [id, s] : snapshots) snapshot_trees.push_back(s.tree);
  // restic's Verbosef lines show at its default verbosity (1): without -q.
  Print("load index files");
  std::shared_ptr<IndexedRepository> indexed = IndexedRepository::Load(*repo);
  RecoverOptions o;
  o.threads = Jobs();
  o.warn = [](const std::string& s) { Warn(s); };
  o.verbose = [](const std::string& s) { Print(s); };
  const auto roots = FindUnreferencedRoots(*indexed, snapshot_trees, o);
  if (Globals().verbose >= 1)  // restic's Verboseff: -v
    for (const auto& id : roots) Print("found root tree " + id.Short());
  Print("\nfound " + std::to_string(roots.size()) + " unreferenced roots");
  if (roots.empty()) {
    Print("no snapshot to write.");
    return;
  }
  Snapshot base;
  base.time = NowLocal();
  base.hostname = hostname;
  base.username = CurrentUserName();
  base.uid = getuid();
  base.gid = getgid();
  WriteSession session(*indexed, GlobalWriteOptions());
  const FileId id = SaveRecoverSnapshot(*indexed, session, roots, base);
  Print("saved new snapshot " + id.Short());
}

}  // namespace

void RegisterRecover(CLI::App& app) {
  auto* cmd = app.add_subcommand("recover", "recover data from the repository not referenced by snapshots");
  cmd->callback([] { RunRecover(); });
}

}  // namespace haven::cli
