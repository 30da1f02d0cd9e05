// `haven scan`: the scanner over files and directory trees (symlinks are not followed,
// special files are skipped), on a worker pool, with a deterministic report.
#pragma once

#include <string>
#include <vector>

#include "capture/scanner.h"

namespace haven::capture {

struct ScanReport {
  std::vector<Finding> findings;  // sorted by FindingLess
  std::vector<std::string> errors;  // unreadable files and directories, sorted
  uint64_t files = 0, bytes = 0;
};

ScanReport ScanPaths(const Scanner& scanner, const std::vector<std::string>& paths, int jobs,
                     const ScanAllow& allow = {});

}  // namespace haven::capture
