// `haven packages diff`: a capture's recorded package lists against what the managers
// report here, per list file: packages missing here, packages extra here (by name), and
// the command that would install the missing ones.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capture/packages.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"
#include "repo/snapshot.h"

namespace haven::capture {

// The list files under /.haven/packages/ of a snapshot: file name -> bytes.
std::map<std::string, std::string> LoadPackageFiles(IndexedRepository& repo, const Snapshot& snap);

// The profile a capture stored (/.haven/profile.toml), or nullopt (captures made before
// it was stored).
std::optional<std::string> LoadStoredProfile(IndexedRepository& repo, const Snapshot& snap);

struct PackageDiff {
  std::string file;
  std::vector<std::string> missing_here, extra_here;  // list lines, sorted
  // Same name, another version (second field): {recorded line, line here}, by name.
  std::vector<std::pair<std::string, std::string>> other_version;
  std::string install;                               // "" when nothing is missing
};

// Compares by package name (the first field), then the versions of the names on both
// sides (a name listed several times, e.g. pip and pip-user, compares its sorted versions).
PackageDiff DiffPackageList(const std::string& file, const std::vector<std::string>& recorded,
                            const std::vector<std::string>& here);

}  // namespace haven::capture
