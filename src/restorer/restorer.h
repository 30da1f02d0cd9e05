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

// What restore does with a file that already exists in the target (restic 0.17's
// --overwrite). An existing regular file with one link is updated in place; anything else
// in the way (a link, a file with other hard links, a different kind of entry) is
// replaced, never written through.
enum class Overwrite {
  kAlways,     // verify the existing content blob by blob, fetch and write only what differs
  kIfChanged,  // as kAlways, but a file whose size and mtime match the snapshot is kept as is
  kIfNewer,    // replace only when the snapshot's mtime is newer than the existing entry's
  kNever,      // keep every existing entry untouched
};
// "always", "if-changed", "if-newer", "never"; throws kInvalidArgument for anything else.
Overwrite ParseOverwrite(const std::string& s);

struct RestoreOptions {
  std::string target;
  Overwrite overwrite = Overwrite::kAlways;
  PatternList includes, excludes;
  bool verify = false;
  // `box extract --no-permissions`: no owner is set and the snapshot's modes are not
  // applied; files and directories get the defaults (0666 / 0777 minus the umask).
  bool no_permissions = false;
  int jobs = 0;  // workers; 0: the CPUs, at least the backend's Connections()
  std::function<void(const std::string&)> warn;  // errors (each counted in `errors`)
  // Conflicts resolved as the snapshot says, e.g. a file or symlink in the target where the
  // snapshot has a directory, replaced by that directory.
  std::function<void(const std::string&)> note;
  // Optional: totals are counted during the walk, then files and bytes as written.
  ProgressCounters* progress = nullptr;
  // Tests: called with a directory's path below the target right after the restore made it
  // (to put an entry in its way, as a case-insensitive twin or another process would).
  std::function<void(const std::string& rel)> after_mkdir_for_testing;
  // Tests: called with a file's path below the target before the restore opens the file
  // again (a file whose blobs lie in several packs), to swap something else in meanwhile.
  std::function<void(const std::string& rel)> before_reopen_for_testing;
};

struct RestoreResult {
  uint64_t files = 0, dirs = 0, bytes = 0, errors = 0, verified = 0;
  uint64_t skipped = 0;     // existing entries left as they were (--overwrite)
  uint64_t bytes_kept = 0;  // content already in the target, neither fetched nor written
};

RestoreResult RunRestore(IndexedRepository& repo, const BlobId& tree, const RestoreOptions& opts);

// Writes a file's content to fd (positional, sparse-aware: fd must be a new or truncated
// file); returns bytes written.
// Throws the first blob error, naming the blob.
uint64_t WriteFileContent(IndexedRepository& repo, int fd, const std::vector<BlobId>& content);

}  // namespace haven
