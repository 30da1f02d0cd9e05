// Counts the files and bytes a backup will look at (lstat only, same excludes), so the
// progress report can show a percentage and an ETA while the backup runs. Stops early
// when `stop` is set.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "core/path_match.h"
#include "core/progress.h"

namespace haven {

void ScanTotals(const std::vector<std::string>& targets, const PatternList& excludes,
                ProgressCounters& counters, const std::atomic<bool>& stop);

}  // namespace haven
