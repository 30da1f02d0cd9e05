// Restore: recreates a snapshot's tree under a target folder with contents, hard links,
// special files and metadata (owner, mode incl. setuid/setgid/sticky, xattrs, times; dir
// metadata last). Files are written on a worker pool; runs of zero bytes become holes.
// A blob that cannot be read fails only its file: every other file is still restored.
// Nothing outside the target is ever written: the target is walked with directory
// descriptors and no symbolic link below it is followed (see restorer.cc).
#pragma once

#include <functional>
#include <string>

#include "core/path_match.h"
#include "core/progress.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"

namespace haven {

struct RestoreOptions {
  std::string target;
  PatternList includes, excludes;
  bool verify = false;
  int jobs = 0;
  std::function<void(const std::string&)> warn;  // errors (each counted in `errors`)
  // Conflicts resolved as the snapshot says, e.g. a file or symlink in the target where the
  // snapshot has a directory, replaced by that directory.
  std::function<void(const std::string&)> note;
  // Optional: totals are counted during the walk, then files and bytes as written.
  ProgressCounters* progress = nullptr;
};

struct RestoreResult {
  uint64_t files = 0, dirs = 0, bytes = 0, errors = 0, verified = 0;
};

RestoreResult RunRestore(IndexedRepository& repo, const BlobId& tree, const RestoreOptions& opts);

// Writes a file's content to fd (positional, sparse-aware); returns bytes written.
// Throws the first blob error, naming the blob.
uint64_t WriteFileContent(IndexedRepository& repo, int fd, const std::vector<BlobId>& content);

}  // namespace haven
