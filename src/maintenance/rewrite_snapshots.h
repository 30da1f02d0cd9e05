// `rewrite` with restic 0.15's semantics (it runs on 0.14 repositories): every selected
// snapshot's tree is filtered (restic's walker.FilterTree): a node whose path is excluded
// is dropped (with its subtree), every node with a subtree is descended into, and only the
// trees on the path to a change are saved anew; a tree that haven cannot re-encode to the
// same id is an error ("cannot encode tree at ... without loosing information"), so no
// information is lost. A changed snapshot is saved with `original` set to its old id and
// the tag "rewrite" added (unless `forget`, which removes the old snapshot instead).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "repo/snapshot.h"
#include "repo/write_session.h"

namespace haven {

struct RewriteSnapshotsOptions {
  // True for a path (absolute, "/a/b") to leave out.
  std::function<bool(const std::string&)> exclude;
  bool forget = false;
  bool dry_run = false;  // nothing saved or removed; the same lines with "would"
  std::function<void(const std::string&)> progress;  // restic's verbose lines
  // Called before each snapshot is filtered (restic prints "snapshot ID of [...] at ...").
  std::function<void(const FileId&, const Snapshot&)> begin;
};

struct RewriteSnapshotsResult {
  size_t modified = 0;
  std::vector<FileId> written;
};

// The filtered id of tree `id` at `path` (the same id when nothing below it is excluded).
// New trees go to `session` unless `dry_run`. Throws on an unloadable tree, and with
// kCorrupt on one nested deeper than kMaxTreeDepth (a hostile repository: one recursion
// per level, run on a stack sized for that).
BlobId FilterTree(WriteSession& session, const std::string& path, const BlobId& id,
                  const RewriteSnapshotsOptions& opts);

// Rewrites `snapshots` (in order); trees are flushed before each new snapshot.
RewriteSnapshotsResult RewriteSnapshots(WriteSession& session,
                                        const std::vector<std::pair<FileId, Snapshot>>& snapshots,
                                        const RewriteSnapshotsOptions& opts);

}  // namespace haven
