// File-system helpers of the capture layer: the sorted walk that `scan` and `capture`
// share (it visits what the archiver stores: names in byte order, excludes applied,
// symlinks not followed, special files skipped), whole-file reads, path splitting.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

// Calls on_file for every regular file at or below `path`, in walk order; on_error with
// (path, message) for what cannot be listed or stat'ed. `excludes` and `skip` may be null;
// `path` itself is walked even when it is in `skip`.
void WalkRegularFiles(const std::string& path, const PatternList* excludes,
                      const std::function<void(const std::string&, const struct stat&)>& on_file,
                      const std::function<void(const std::string&, const std::string&)>& on_error,
                      SkipDirs* skip = nullptr);

// The whole file (no symlink following); kIo naming the path when it cannot be read.
// *after (when given): the file's stat taken once the read reached its end.
std::string ReadWholeFile(const std::string& path, struct stat* after = nullptr);

}  // namespace haven::capture
