// Backup: walks the targets in sorted order (subdirectories on up to jobs-1 extra walk
// threads while they are free), compares each file with the parent snapshot's node
// (size, mtime, ctime, inode) to reuse its content without reading, chunks and stores
// changed files on a worker pool, and assembles trees bottom-up in name order, so the
// tree ids do not depend on the number of workers.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "archiver/exclude.h"
#include "core/path_match.h"
#include "core/progress.h"
#include "repo/indexed_repository.h"
#include "repo/write_session.h"

namespace haven {

// One file or directory done, for restic's -vv lines and JSON verbose_status messages.
struct BackupItem {
  enum class Action { kNew, kUnchanged, kModified };
  const std::string& item;  // snapshot path; a directory's ends in '/'
  bool dir;
  Action action;
  double seconds;        // from its start to its node (0 for unchanged)
  uint64_t data_added;   // plain bytes of the data blobs it added
  uint64_t tree_added;   // plain bytes of the tree blob it added (directories)
};

// A tree blob of the parent snapshot as a backup uses it: its id, its bytes (verified
// against the id when loaded) and its nodes decoded from them.
struct LoadedTree {
  BlobId id;
  Bytes raw;
  std::vector<Node> nodes;
};

// Loads and decodes the tree blob `id`; throws a haven::Error when it cannot.
std::shared_ptr<const LoadedTree> LoadParentTree(IndexedRepository& repo, const BlobId& id);

struct BackupOptions {
  std::vector<std::string> targets;
  // ---- What is left out (restic's reject functions; see exclude.h) ----
  PatternList excludes;
  PatternList iexcludes;  // lower-cased patterns (FoldCase), matched case-insensitively
  std::vector<ExcludeIfPresent> exclude_if_present;  // --exclude-if-present, --exclude-caches
  std::optional<int64_t> exclude_larger_than;  // by st_size, entries other than directories
  bool one_file_system = false;  // leave out entries on other devices than their source path
  std::vector<std::string> exclude_strings;  // recorded in the snapshot
  // Change detection against the parent: ctime / inode not compared (restic's
  // --ignore-ctime, --ignore-inode; ignore_inode implies ignore_ctime, as there).
  bool ignore_ctime = false;
  bool ignore_inode = false;
  std::vector<std::string> tags;
  std::string host;  // empty = this host
  std::optional<FileId> parent;
  bool force = false;  // re-read every file (no parent)
  bool stdin_mode = false;
  std::string stdin_filename = "stdin";
  bool with_atime = false;
  // false: store data and trees (and flush them) but write no snapshot file;
  // BackupResult::tree is the root and snapshot_id stays zero (`box add` puts the tree into
  // its own snapshot).
  bool save_snapshot = true;
  // restic 0.17's --skip-if-unchanged: when the new root tree equals the parent snapshot's,
  // no snapshot file is written (BackupResult::skipped; snapshot_id stays zero). With no
  // parent there is nothing to compare and the snapshot is written.
  bool skip_if_unchanged = false;
  int jobs = 0;
  std::string program_version;
  // Called with each warning, in path order.
  std::function<void(const std::string&)> warn;
  // The same with the path it concerns (backup --json prints restic's error objects); when
  // set it is called instead of `warn`.
  std::function<void(const std::string& path, const std::string& msg)> warn_item;
  // Called at once, from any thread, with problems that are not errors (a malformed
  // exclusion tag file), as restic prints them.
  std::function<void(const std::string&)> notice;
  // Optional, from any thread: each file and directory done (-v/-vv). Unset costs nothing.
  std::function<void(const BackupItem&)> item_done;
  // Optional: counts files and bytes as they are done (for a progress report).
  ProgressCounters* progress = nullptr;
  // Optional time override (for tests); default now.
  std::optional<gojson::Timestamp> time;
  // Tests: called on the worker after each read of a file's content (attempt 0, then 1
  // when the file changed during the first read), before the file is stat'ed again.
  std::function<void(const std::string& path, int attempt)> after_read;

  // ---- Hooks for `capture` (all optional) ----
  // A file that is unchanged against its parent node is reused without reading only when
  // this returns true for its path (a capture re-reads files it could not vouch for).
  std::function<bool(const std::string& path)> may_reuse;
  // The lstat result the caller already took for `path` (a capture's planning walk), or
  // nullptr. When set, the entry is not stat'ed again: its node and the change test use
  // this result. A capture gives it only for the regular files it planned as unchanged.
  std::function<const struct stat*(const std::string& path)> known_stat;
  // The bytes to store for a changed file instead of reading it (a capture stores exactly
  // what it scanned). Called on a worker thread with the walk's lstat; nullptr = read the
  // file. A haven::Error leaves the file out with a warning (incomplete snapshot).
  std::function<std::shared_ptr<const std::string>(const std::string& path,
                                                   const struct stat& st)>
      content_for;
  // For a changed file that content_for leaves to the archiver (nullptr): the stat it must
  // have once opened (a capture's scan, which streamed the file), or nullptr for none. A
  // file whose fstat differs is left out with a warning (incomplete snapshot): the bytes
  // stored are the bytes that were scanned.
  std::function<const struct stat*(const std::string& path)> expected_stat;
  // The parent snapshot's tree `id` as the caller loaded it already (a capture's planning
  // walk decoded the same trees), or nullptr: the archiver loads it. It must be the tree
  // blob of that id (LoadParentTree's result), and may be handed to several threads.
  std::function<std::shared_ptr<const LoadedTree>(const BlobId& id)> parent_tree;
  // A directory whose tree the caller already knows (a capture's state: nothing in it
  // changed since the last capture), asked with its path and the archiver's lstat of it:
  // the directory is not listed, its node gets that subtree and its counts are added as
  // unmodified. nullopt: walked as usual. Not asked for directories above the targets, nor
  // when item_done is set (every entry is reported then).
  struct KnownTree {
    BlobId tree;
    uint64_t files = 0, bytes = 0, dirs = 0;  // regular files, their bytes, dirs below
  };
  std::function<std::optional<KnownTree>(const std::string& path, const struct stat& st)>
      known_tree;
  // Called from any thread with each directory's path and the tree stored for it, the
  // directories above the targets included (not for those known_tree gave, nor for the
  // root, whose tree is BackupResult::tree).
  std::function<void(const std::string& path, const BlobId& tree)> tree_saved;
  // Called with each blob stored (or found stored) outside the target folders: the trees
  // of the root and of the directories above the targets, the content of the files in
  // those (file targets), and the data blobs and trees of extra_files (the capture records
  // them with their locations: capture-state.md).
  std::function<void(BlobType type, const BlobId& id)> outer_blob;
  // In-memory files added to the root tree, as {relative path, bytes}, e.g.
  // {".haven/packages/dpkg.txt", …}; called once, after the walk. Files get mode 0644,
  // directories 0755, times zero and this process's uid/gid, so equal bytes give equal trees.
  std::function<std::vector<std::pair<std::string, std::string>>()> extra_files;
  // Directories above the targets (e.g. /, /home, ~ for a tracked ~/.bashrc) keep their
  // name, mode and owner but get zero times, inode and device: their mtime moves with
  // every unrelated file created beside a target, and a capture of an unchanged tracked
  // set must give the same tree.
  bool stable_intermediate_dirs = false;

  // Where the backup keeps its folder state (folder_state.h, docs/folder-state.md: each
  // folder's key and the tree stored for it), normally the repository's folder in the
  // local cache; "" = none. The state of these paths is read when it was written with the
  // parent snapshot (not with --force) and written anew after the snapshot. Never set it
  // for a dry run (its trees are not stored). Ignored with with_atime, item_done and the
  // capture's hooks above (a capture keeps its own). The directories above the targets
  // are keyed too (over their listed children): a backup in which nothing changed reads
  // no tree of the parent and no index (the session's repository may defer its index:
  // IndexLoad::kOnFirstUse).
  std::string folder_state_dir;
};

struct BackupStats {
  uint64_t files_new = 0, files_changed = 0, files_unmodified = 0;
  uint64_t dirs_new = 0, dirs_changed = 0, dirs_unmodified = 0;
  uint64_t total_files = 0, total_bytes = 0;
  uint64_t errors = 0;
  uint64_t files_read = 0;  // files whose contents were read from disk
};

struct BackupResult {
  FileId snapshot_id;  // zero in dry-run, and when skipped
  BlobId tree;
  std::optional<FileId> parent;
  BackupStats stats;
  bool incomplete = false;  // some sources could not be read
  bool skipped = false;     // skip_if_unchanged: the tree equals the parent's, nothing written
  bool folder_state_used = false;  // a folder state of the parent was read
  // The targets' folders whose tree came from it (not listed against the parent); the
  // directories above the targets are not counted.
  uint64_t dirs_reused = 0;
};

// Runs a backup through `session` (into its indexed repository): every blob is saved by
// the session, which is flushed before the snapshot is written. In dry-run mode the
// repository is opened with a DryRunBackend so nothing is written; see cli.
BackupResult RunBackup(WriteSession& session, const BackupOptions& opts, bool dry_run);

// Restic's path cleaning for targets: absolute paths keep all components; relative
// ones drop leading "." and ".." components.
std::vector<std::string> TargetComponents(const std::string& target);

// A source path made absolute (against the working directory) and clean.
std::string AbsoluteTargetPath(const std::string& target);

// The exclusion rules of `opts` (copied), for an Excluder.
ExcludeRules ExcludeRulesOf(const BackupOptions& opts);

}  // namespace haven
