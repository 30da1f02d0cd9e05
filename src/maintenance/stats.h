// restic 0.14's `stats`: what a set of snapshots amounts to, in one of four counting modes,
// with restic's exact rules (so the same repository gives the same numbers):
//  * restore-size: every node below the roots (directories included) counts as a file; its
//    size counts once per inode within a snapshot (inode 0 always);
//  * files-by-contents: nodes unique by the sequence of their content ids (over all
//    snapshots; every node without content shares one), their sizes;
//  * blobs-per-file: for those unique nodes, each (path, data blob) once, with the blob's
//    plaintext size;
//  * raw-data: every tree and data blob the snapshots reference, once, with its stored
//    (sealed, maybe compressed) length from the index, found by the parallel used-blob walk.
// In the two "unique" modes a subtree id is walked once per snapshot (restic's walker skips
// a repeated subtree whose nodes were all ignored).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/id.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"

namespace haven {

enum class StatsMode { kRestoreSize, kFilesByContents, kBlobsPerFile, kRawData };

// "restore-size", "files-by-contents", "blobs-per-file", "raw-data"; nullopt otherwise.
std::optional<StatsMode> ParseStatsMode(const std::string& s);

struct RepoStats {
  uint64_t total_size = 0;
  uint64_t total_file_count = 0;
  uint64_t total_blob_count = 0;
  uint64_t snapshots_count = 0;
};

class StatsCounter {
 public:
  StatsCounter(IndexedRepository& repo, StatsMode mode, int threads);
  ~StatsCounter();

  // Counts one snapshot's tree. Throws (naming the tree) when a tree cannot be loaded or a
  // blob is not in the index, as restic stops there.
  void AddSnapshot(const BlobId& root);
  // The totals (raw-data: after the walk of every root added).
  RepoStats Finish();

 private:
  class Walk;
  IndexedRepository& repo_;
  StatsMode mode_;
  int threads_;
  RepoStats stats_;
  std::vector<BlobId> roots_;                                  // raw-data
  std::unordered_set<RawId, IdHash> unique_files_;             // by content sequence
  std::unordered_map<std::string, std::set<BlobId>> file_blobs_;  // blobs-per-file
};

}  // namespace haven
