// File-system helpers of the capture layer: the sorted walk that `scan` and `capture`
// share (it visits what the archiver stores: names in byte order, excludes applied,
// symlinks not followed, special files skipped), whole-file reads, path splitting.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/id.h"
#include "core/path_match.h"

namespace haven::capture {

// Directories a walk does not enter, by (device, inode), and the paths it left out.
struct SkipDirs {
  std::vector<std::pair<uint64_t, uint64_t>> ids;
  std::vector<std::string> skipped;  // filled by the walk
  // Adds `dir` when it exists (a missing one is no error).
  void Add(const std::string& dir);
  bool Has(const struct stat& st) const;
};

// What a walk with keys records for each directory it enters, children before parents:
// the directory's key (archiver/folder_state.h's DirKey over the entries the walk keeps) and what
// lies below it. A key is only meaningful when `complete`: every entry of it and of its
// subdirectories was listed and stat'ed.
struct WalkedDir {
  std::string path;
  struct stat st;
  RawId key;
  bool complete = true;
  uint64_t files = 0, bytes = 0, dirs = 0;  // regular files, their bytes, directories below
};
struct DirKeyWalk {
  RawId context;  // folder_state.h's FolderContext
  std::vector<WalkedDir> dirs;
  // Set: a complete folder whose key this returns true for (one the caller already holds,
  // e.g. from the last capture's state) reports none of its own files: on_file is not
  // called for them, they are counted in files_not_reported. The files of every folder
  // are then reported once its key is known, after its subfolders' files. Called on the
  // walk's threads.
  std::function<bool(const RawId& key)> known;
  uint64_t files_not_reported = 0;
};

// Calls on_file for every regular file at or below `path`, in walk order; on_error with
// (path, message) for what cannot be listed or stat'ed. `excludes` and `skip` may be null;
// `path` itself is walked even when it is in `skip`. With `keys`, every folder's record
// is appended to keys->dirs (children first), and keys->known may leave folders' files out.
// `threads` > 1 (and no `skip`): subfolders are walked on up to that many threads; the
// callbacks still come in walk order, on the calling thread, once the walk is over.
void WalkRegularFiles(const std::string& path, const PatternList* excludes,
                      const std::function<void(const std::string&, const struct stat&)>& on_file,
                      const std::function<void(const std::string&, const std::string&)>& on_error,
                      SkipDirs* skip = nullptr, DirKeyWalk* keys = nullptr,
                      int threads = 1);

// The whole file (no symlink following); kIo naming the path when it cannot be read.
// *after (when given): the file's stat taken once the read reached its end. size_hint: the
// size the caller expects (a stat of the file; 0: unknown): the bytes go straight into the
// result, and with *after a read that stops short at that size ends once the stat shows
// the file has exactly the bytes read (four system calls for a small file, not six).
std::string ReadWholeFile(const std::string& path, struct stat* after = nullptr,
                          uint64_t size_hint = 0);

}  // namespace haven::capture
