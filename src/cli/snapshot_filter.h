// Snapshot selection shared by every command: the one --host/--tag/--path filter and the
// one SNAPSHOT-argument resolver (id, unique prefix, "latest" among the filtered snapshots),
// with restic's semantics.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "maintenance/forget_policy.h"
#include "repo/early_index.h"
#include "repo/indexed_repository.h"
#include "repo/lock.h"
#include "repo/repository.h"

namespace haven::cli {

using SnapshotEntry = std::pair<FileId, Snapshot>;

struct SnapshotFilter {
  std::vector<std::string> hosts;  // any of them (empty = all)
  std::vector<std::string> tags;   // each entry: comma-separated tags that must all be present
  std::vector<std::string> paths;  // every given path must be among the snapshot's paths

  bool Empty() const { return hosts.empty() && tags.empty() && paths.empty(); }
  // restic's TagLists of --tag: each entry split on ',' (see forget::SplitTagList).
  std::vector<forget::TagList> TagLists() const;
  bool Matches(const Snapshot& s) const;
  std::vector<SnapshotEntry> Apply(const std::vector<SnapshotEntry>& all) const;
  // restic's filter description: "(Paths:[a b] Tags:[[x]] Hosts:[h])".
  std::string String() const;
};

// The snapshots whose id starts with `prefix`: how many, and the last of them.
struct PrefixMatch {
  size_t count = 0;
  FileId id;
};
PrefixMatch MatchIdPrefix(const std::vector<SnapshotEntry>& snaps, std::string_view prefix);

// Resolves a SNAPSHOT argument among `snaps` (sorted by time): "latest" is the last one
// ("no snapshot found" when empty), else a full id or unique prefix (errors: "snapshot
// prefix \"x\" is ambiguous", "no snapshot matched \"x\"").
FileId ResolveSnapshot(std::string_view arg, const std::vector<SnapshotEntry>& snaps);

// Resolves a SNAPSHOT argument; "latest" honours the filter. Returns id and snapshot.
SnapshotEntry FindSnapshot(Repository& repo, const std::string& arg,
                           const SnapshotFilter& filter = {});

// FindSnapshot and IndexedRepository::Load at once (the index loads while the snapshots are
// listed and read: over a network their round trips overlap), beside the check of `lock`
// (taken with Lock::AcquireOverlapped, or null): the lock is confirmed before this returns,
// and before an error of either read is passed on (a conflicting lock is then the error).
// `early` (StartEarlySnapshot, made before the lock) is taken as the index when the index
// files listed here are those it loaded.
std::pair<SnapshotEntry, std::unique_ptr<IndexedRepository>> FindSnapshotAndLoadIndex(
    Repository& repo, const std::unique_ptr<Lock>& lock, const std::string& arg,
    const SnapshotFilter& filter, EarlyIndex* early = nullptr);

// On remote storage: StartEarlyIndex, and with a cache then, with that index, the snapshot
// `arg` is found among the snapshot files the open listed and its root tree is read into
// the cache, all before the lock is written (the command's own reads, under the lock, then
// find that tree pack in the cache). Null where StartEarlyIndex is.
std::unique_ptr<EarlyIndex> StartEarlySnapshot(Repository& repo, const std::string& arg,
                                               const SnapshotFilter& filter);

// Snapshot JSON as restic prints it in listings: the stored fields plus id and short_id.
std::string SnapshotListJson(const FileId& id, const Snapshot& s, const char* struct_type);

// Go's os.FileMode.String(), e.g. "drwxr-xr-x".
std::string GoModeString(uint32_t mode);

}  // namespace haven::cli
