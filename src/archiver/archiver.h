// Backup: walks the targets in sorted order (subdirectories on up to jobs-1 extra walk
// threads while they are free), compares each file with the parent snapshot's node
// (size, mtime, ctime, inode) to reuse its content without reading, chunks and stores
// changed files on a worker pool, and assembles trees bottom-up in name order, so the
// tree ids do not depend on the number of workers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/path_match.h"
#include "core/progress.h"
#include "repo/repository.h"

namespace haven {

struct BackupOptions {
  std::vector<std::string> targets;
  PatternList excludes;
  std::vector<std::string> exclude_strings;  // recorded in the snapshot
  std::vector<std::string> tags;
  std::string host;  // empty = this host
  std::optional<FileId> parent;
  bool force = false;  // re-read every file (no parent)
  bool stdin_mode = false;
  std::string stdin_filename = "stdin";
  bool with_atime = false;
  int jobs = 0;
  std::string program_version;
  // Called with each warning, in path order.
  std::function<void(const std::string&)> warn;
  // Optional: counts files and bytes as they are done (for a progress report).
  ProgressCounters* progress = nullptr;
  // Optional time override (for tests); default now.
  std::optional<gojson::Timestamp> time;
};

struct BackupStats {
  uint64_t files_new = 0, files_changed = 0, files_unmodified = 0;
  uint64_t dirs_new = 0, dirs_changed = 0, dirs_unmodified = 0;
  uint64_t total_files = 0, total_bytes = 0;
  uint64_t errors = 0;
};

struct BackupResult {
  FileId snapshot_id;  // zero in dry-run
  BlobId tree;
  std::optional<FileId> parent;
  BackupStats stats;
  bool incomplete = false;  // some sources could not be read
};

// Runs a backup into `repo` (index must be loaded). In dry-run mode the repository's
// backend should be wrapped so nothing is written; see cli.
BackupResult RunBackup(Repository& repo, const BackupOptions& opts, bool dry_run);

// Restic's path cleaning for targets: absolute paths keep all components; relative
// ones drop leading "." and ".." components.
std::vector<std::string> TargetComponents(const std::string& target);

}  // namespace haven
