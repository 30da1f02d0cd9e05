// The comparison of two snapshot trees (restic 0.14's `diff`): every added (+), removed
// (-), modified (M: a file's content ids differ), type-changed (T) and, with metadata,
// updated (U) path, in restic's order, and restic's statistics (files, dirs, others added
// and removed; the data and tree blobs only one side references, with their plaintext
// bytes).
//
// Fast where restic is slow: a directory whose subtree id is the same on both sides is not
// descended into for the listing. restic still counts the blobs below such a directory as
// "common" (they are subtracted from the added and removed blobs); that set is needed only
// for the blobs one side alone seems to reference, so those few candidates are looked up
// with one parallel, deduplicated walk of the unchanged subtrees (maintenance/used_blobs)
// instead of restic's serial walk of every tree, and not at all when there is none.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/id.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"

namespace haven {

struct DiffChange {
  std::string path;      // absolute; a directory ends with '/'
  std::string modifier;  // "+", "-", "M", "T", "U", "TM", ...
};

struct DiffStat {
  uint64_t files = 0, dirs = 0, others = 0;
  uint64_t data_blobs = 0, tree_blobs = 0;
  uint64_t bytes = 0;  // plaintext bytes of those blobs
  void Add(const Node& n);
};

struct DiffStats {
  uint64_t changed_files = 0;
  DiffStat added, removed;
};

struct TreeDiffOptions {
  bool metadata = false;  // report "U" for nodes whose metadata differs
  int threads = 0;        // 0: repo.threads()
  // Each change, in restic's order (names sorted bytewise, a directory's entries after it).
  std::function<void(const DiffChange&)> change;
  // A tree below the roots that cannot be loaded ("error: ..."), a blob without a size.
  std::function<void(const std::string&)> warn;
};

// Compares the tree `from` with the tree `to`. A root that cannot be loaded throws; a tree
// below them is reported through `warn` and skipped, as restic does. The repository's
// index must not change meanwhile.
DiffStats DiffTrees(IndexedRepository& repo, const BlobId& from, const BlobId& to,
                    const TreeDiffOptions& opts);

// restic's Node.Equals: every stored field (times compared as instants, extended
// attributes as a set).
bool NodesEqual(const Node& a, const Node& b);

}  // namespace haven
