// restic 0.14's recover: a snapshot of every tree that nothing references any more (no
// directory node in another tree, no snapshot), e.g. after a snapshot file was lost. Each
// such root tree becomes a directory named by its short id (mode 0755 as restic writes it,
// times now) in one new tree, saved as a snapshot of the path "/recover" tagged
// "recovered". Trees that cannot be loaded are warned about and skipped, as in restic.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "repo/indexed_repository.h"
#include "repo/snapshot.h"
#include "repo/write_session.h"

namespace haven {

struct RecoverOptions {
  int threads = 1;
  std::function<void(const std::string&)> warn;     // "unable to load tree ..."
  std::function<void(const std::string&)> verbose;  // restic's Verbosef lines
};

// The root trees, sorted by id. `snapshot_trees`: the trees of the snapshots there are.
std::vector<BlobId> FindUnreferencedRoots(IndexedRepository& repo,
                                          const std::vector<BlobId>& snapshot_trees,
                                          const RecoverOptions& opts);

// The tree holding one directory per root (restic's node fields), encoded.
std::string RecoverTree(const std::vector<BlobId>& roots, const gojson::Timestamp& now);

// Saves RecoverTree's tree (flushing the session) and the snapshot made from `base`
// (hostname, username, uid, gid, time) with paths ["/recover"] and tags ["recovered"].
FileId SaveRecoverSnapshot(Repository& repo, WriteSession& session,
                           const std::vector<BlobId>& roots, Snapshot base);

}  // namespace haven
