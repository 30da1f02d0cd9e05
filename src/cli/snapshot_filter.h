// Snapshot selection shared by commands: --host, --tag, --path filters and SNAPSHOT
// arguments (id, unique prefix, "latest" among the filtered snapshots).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "repo/repository.h"

namespace haven::cli {

struct SnapshotFilter {
  std::vector<std::string> hosts;
  std::vector<std::string> tags;   // each entry: comma-separated tags that must all be present
  std::vector<std::string> paths;  // every given path must be among the snapshot's paths

  bool Matches(const Snapshot& s) const;
  std::vector<std::pair<FileId, Snapshot>> Apply(
      const std::vector<std::pair<FileId, Snapshot>>& all) const;
};

// "latest" (the last of `snapshots`), a full id or a unique prefix. Throws kNotFound /
// kInvalidArgument.
FileId ResolveSnapshot(std::string_view arg,
                       const std::vector<std::pair<FileId, Snapshot>>& snapshots);

// Resolves a SNAPSHOT argument; "latest" honours the filter. Returns id and snapshot.
std::pair<FileId, Snapshot> FindSnapshot(Repository& repo, const std::string& arg,
                                         const SnapshotFilter& filter = {});

// Snapshot JSON as restic prints it in listings: the stored fields plus id and short_id.
std::string SnapshotListJson(const FileId& id, const Snapshot& s, const char* struct_type);

// Go's os.FileMode.String(), e.g. "drwxr-xr-x".
std::string GoModeString(uint32_t mode);

}  // namespace haven::cli
