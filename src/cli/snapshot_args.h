// restic's FindFilteredSnapshots of the command line (cmd/restic/find.go), shared by the
// commands that take SNAPSHOT... plus --host/--tag/--path (find, stats, tag, rewrite,
// copy): with ids, each id (a unique prefix, or "latest" under the filter) in argument
// order, repeated ones once; an argument that resolves to nothing is warned about
// ("Ignoring ...") and left out, and the filter is reported unused when no "latest" was
// given. Without ids, every snapshot the filter selects, oldest first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/snapshot_filter.h"

namespace haven::cli {

std::vector<SnapshotEntry> SelectSnapshots(const std::vector<SnapshotEntry>& all,
                                           const std::vector<std::string>& args,
                                           const SnapshotFilter& filter,
                                           const std::function<void(const std::string&)>& warn);

}  // namespace haven::cli
