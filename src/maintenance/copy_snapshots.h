// restic 0.14's `copy`: snapshots from one repository into another. For each source
// snapshot (in the given order) that has no similar copy in the destination (restic's
// similarSnapshots: same time, tree, host, user, uid, gid, paths and tags as sets, excludes
// in order, looked up by `original`), every tree and data blob it references that the
// destination lacks is copied (decrypted with the source key, stored through the
// destination's WriteSession: compressed and sealed for the destination), the blobs are
// flushed, then the snapshot is saved with no parent and `original` set (kept when the
// source snapshot already had one). When the two repositories' chunker polynomials are the
// same (or opts.rechunk is off: restic 0.14's behaviour), blobs keep their ids. When they
// differ, the files are cut again with the destination's chunker (maintenance/rechunk_tree):
// new data blobs and trees, so that the copy deduplicates with what is backed up into the
// destination directly; the "already copied" test then compares every field but the tree.
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
// The same without the tree (a re-chunked copy has other tree ids than its source).
bool SimilarExceptTree(const Snapshot& a, const Snapshot& b);

struct CopySnapshotsOptions {
  std::function<void(const std::string&)> progress;  // restic's verbose lines
  // Called before each source snapshot (restic prints "snapshot ID of [...] at ...").
  std::function<void(const FileId&, const Snapshot&)> begin;
  int threads = 0;  // tree walk workers (0: the source's)
  bool rechunk = true;  // re-chunk the files when the chunker polynomials differ
};

struct CopySnapshotsResult {
  size_t copied = 0, skipped = 0;
  uint64_t blobs = 0, bytes = 0;  // blobs copied (re-chunked: data blobs stored), plaintext bytes
  bool rechunk = false;           // the files were cut again with the destination's chunker
  std::vector<FileId> written;    // new snapshots in the destination
};

// Copies `sources` (snapshots of `src`) into `dst`'s repository; `existing` are the
// destination's snapshots considered for the "already copied" test.
CopySnapshotsResult CopySnapshots(IndexedRepository& src, WriteSession& dst,
                                  const SnapshotList& sources, const SnapshotList& existing,
                                  const CopySnapshotsOptions& opts);

}  // namespace haven
