// `haven scan`: the scanner over files and directory trees (symlinks are not followed,
// special files are skipped), on a worker pool, with a deterministic report.
#pragma once

#include <string>
#include <vector>

#include "capture/dpkg_files.h"
#include "capture/scanner.h"

namespace haven::capture {

struct ScanReport {
  std::vector<Finding> findings;  // sorted by FindingLess
  std::vector<std::string> errors;  // unreadable files and directories, sorted
  std::vector<std::string> skipped_dirs;  // ScanPathsOptions::skip_dirs met by the walk
  uint64_t files = 0, bytes = 0;
  // Findings left out because their file is a Debian package's, unmodified (dpkg_files.h).
  uint64_t package_files_ignored = 0, package_findings_ignored = 0;
};

struct ScanPathsOptions {
  int jobs = 0;
  ScanAllow allow;
  // When set, the findings of a file whose MD5 equals what its package shipped are left
  // out (counted in the report). Only files with findings are hashed.
  DpkgFiles* packages = nullptr;
  // Directories not entered below the given paths (haven's and restic's caches: encrypted
  // repository objects, nothing of the user's).
  std::vector<std::string> skip_dirs;
};

ScanReport ScanPaths(const Scanner& scanner, const std::vector<std::string>& paths,
                     const ScanPathsOptions& opts);

}  // namespace haven::capture
