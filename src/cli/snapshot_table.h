// restic's snapshot listing as text (cli/table.h): the columns of `snapshots` and
// `forget`, full or compact.
// Also the --latest selection of `snapshots`.
#pragma once

#include <string>
#include <vector>

#include "cli/table.h"
#include "maintenance/forget_policy.h"

namespace haven::cli {

// restic's PrintSnapshots: oldest first, then "N snapshots". Full: ID, Time, Host, Tags
// (comma-separated), Reasons (when given, one per line), Paths (one per line; a blank line
// between snapshots when any has several). Compact: ID, Time, Host, Tags (one per line).
std::string SnapshotTable(std::vector<forget::SnapshotEntry> list,
                          const std::vector<forget::KeepReason>* reasons, bool compact);

// restic's PrintSnapshotGroupHeader, "snapshots for (host [h], tags [a, b], paths [/x]):\n";
// "" for the empty group key (`snapshots -g` and `forget -v` print it).
std::string GroupHeader(const forget::SnapshotGroup& g);

// `snapshots --latest n`: the n newest snapshots of each host and set of paths (the paths
// sorted, so their order does not matter), in time order.
std::vector<forget::SnapshotEntry> LatestPerHostAndPaths(std::vector<forget::SnapshotEntry> list,
                                                         size_t n);

}  // namespace haven::cli
