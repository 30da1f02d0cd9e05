// `repair snapshots` with restic 0.16's semantics: every selected snapshot's tree is
// rewritten so that it references only data the repository has:
//  * a file whose content blobs are not all indexed keeps the blobs that are, and its
//    size becomes their total ("removed missing content"); a wrong size is fixed;
//  * a directory whose subtree cannot be loaded (or has none) becomes an empty directory;
//  * a snapshot whose root tree cannot be loaded is deleted.
// A changed snapshot is saved anew with `original` set to the old id, tagged "repaired"
// unless `forget`, and with `forget` the old one is removed. Unchanged trees keep their
// bytes (only trees on the path to a change are re-encoded).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven {

struct RepairSnapshotsOptions {
  bool forget = false;
  bool dry_run = false;
  std::function<void(const std::string&)> progress;  // restic's verbose lines
};

struct RepairSnapshotsResult {
  size_t modified = 0;  // snapshots saved anew (or that would be) and empty ones removed
  size_t removed_damaged = 0;  // snapshot files that could not be loaded, removed
  std::vector<FileId> written;
};

// Repairs `snapshots` in the session's (indexed) repository; fixed trees are saved and
// flushed through `session` before each new snapshot.
RepairSnapshotsResult RepairSnapshots(WriteSession& session,
                                      const std::vector<std::pair<FileId, Snapshot>>& snapshots,
                                      const RepairSnapshotsOptions& opts);

// Snapshot files that cannot be loaded (MAC, hash or JSON damage; see LoadSnapshots) hold
// no tree id, so nothing can be repaired in them: with `forget` they are removed (or, on a
// dry run, reported as such); otherwise each is reported with the advice to use --forget.
// A failure to read (I/O, possibly transient) is only reported, never removed.
void RemoveDamagedSnapshots(Repository& repo,
                            const std::vector<Repository::SnapshotFailure>& damaged,
                            const RepairSnapshotsOptions& opts, RepairSnapshotsResult& res,
                            const std::function<void(const std::string&)>& report);

}  // namespace haven
