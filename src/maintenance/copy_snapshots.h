// restic 0.14's `copy`: snapshots from one repository into another. For each source
// snapshot (in the given order) that has no similar copy in the destination (restic's
// similarSnapshots: same time, tree, host, user, uid, gid, paths and tags as sets, excludes
// in order, looked up by `original`), every tree and data blob it references that the
// destination lacks is copied (decrypted with the source key, stored through the
// destination's WriteSession: compressed and sealed for the destination), the blobs are
// flushed, then the snapshot is saved with no parent and `original` set (kept when the
// source snapshot already had one). Blobs keep their ids: as in restic, data is not
// re-chunked, so two repositories with different chunker parameters deduplicate less.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "repo/indexed_repository.h"
#include "repo/snapshot.h"
#include "repo/write_session.h"

namespace haven {

using SnapshotList = std::vector<std::pair<FileId, Snapshot>>;

// restic's similarSnapshots.
bool SimilarSnapshots(const Snapshot& a, const Snapshot& b);

struct CopySnapshotsOptions {
  std::function<void(const std::string&)> progress;  // restic's verbose lines
  // Called before each source snapshot (restic prints "snapshot ID of [...] at ...").
  std::function<void(const FileId&, const Snapshot&)> begin;
  int threads = 0;  // tree walk workers (0: the source's)
};

struct CopySnapshotsResult {
  size_t copied = 0, skipped = 0;
  uint64_t blobs = 0, bytes = 0;  // blobs copied and their plaintext bytes
  std::vector<FileId> written;    // new snapshots in the destination
};

// Copies `sources` (snapshots of `src`) into `dst`'s repository; `existing` are the
// destination's snapshots considered for the "already copied" test.
CopySnapshotsResult CopySnapshots(IndexedRepository& src, WriteSession& dst,
                                  const SnapshotList& sources, const SnapshotList& existing,
                                  const CopySnapshotsOptions& opts);

}  // namespace haven
