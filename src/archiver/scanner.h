// Counts the files and bytes a backup will look at (lstat only, same exclusion rules), so
// the progress report can show a percentage and an ETA while the backup runs. Stops early
// when `stop` is set.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "archiver/exclude.h"
#include "core/progress.h"

namespace haven {

void ScanTotals(const std::vector<std::string>& targets, const ExcludeRules& rules,
                ProgressCounters& counters, const std::atomic<bool>& stop);

}  // namespace haven
