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

// Calls on_file for every regular file at or below `path`, in walk order; on_error with
// (path, message) for what cannot be listed or stat'ed. `excludes` may be null.
void WalkRegularFiles(const std::string& path, const PatternList* excludes,
                      const std::function<void(const std::string&, const struct stat&)>& on_file,
                      const std::function<void(const std::string&, const std::string&)>& on_error);

// The whole file (no symlink following); kIo naming the path when it cannot be read.
std::string ReadWholeFile(const std::string& path);

}  // namespace haven::capture
