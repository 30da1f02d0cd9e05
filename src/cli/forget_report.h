// What `forget` prints: per group the keep/remove tables (text) or restic's ForgetGroup
// JSON element, and the dry-run list of snapshot ids. Tables come from snapshot_table.
#pragma once

#include <set>
#include <string>

#include "core/id.h"
#include "maintenance/forget_policy.h"

namespace haven::cli {

// One element of restic's ForgetGroup array (tags, host, paths, keep, remove, reasons).
std::string ForgetGroupJson(const forget::SnapshotGroup& g, const forget::PolicyResult& r);

// The text of one group: "keep N snapshots:" and "remove N snapshots:" with their tables
// (nothing for an empty list).
std::string ForgetGroupText(const forget::PolicyResult& r, bool compact);

// restic's IDSet.String(): sorted short ids in braces.
std::string IdSetString(const std::set<FileId>& ids);

}  // namespace haven::cli
