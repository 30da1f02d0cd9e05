// restic 0.14's reasons to leave an entry out of a backup (cmd/restic/exclude.go), applied
// to every entry of the walk and to the source paths themselves, in restic's order:
// by path first (--iexclude, --exclude, --exclude-if-present / --exclude-caches), then,
// with the entry's lstat, by device (--one-file-system) and by size (--exclude-larger-than).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/path_match.h"

namespace haven {

// --exclude-if-present FILE[:HEADER]: a directory holding FILE (whose first bytes are
// HEADER, when one is given) has every entry but FILE left out.
struct ExcludeIfPresent {
  std::string file;
  std::string header;  // empty: FILE's presence is enough
};

// Parses "FILE[:HEADER]" (split at the first ':'). Throws kInvalidArgument for an empty
// spec or an empty FILE.
ExcludeIfPresent ParseExcludeIfPresent(std::string_view spec);

// --exclude-caches: CACHEDIR.TAG starting with the Cache Directory Tagging signature.
ExcludeIfPresent CacheDirTag();

// restic's size syntax: an integer (optionally signed, as Go's ParseInt) with an optional
// suffix b/B (bytes), k/K, m/M, g/G, t/T (powers of 1024). nullopt when `s` is not of that
// form or the value does not fit in 64 bits.
std::optional<int64_t> ParseSize(std::string_view s);

struct ExcludeRules {
  PatternList excludes;
  PatternList iexcludes;  // lower-cased patterns (FoldCase), matched against FoldCase(path)
  std::vector<ExcludeIfPresent> if_present;
  std::optional<int64_t> larger_than;  // entries that are not directories, by st_size
  bool one_file_system = false;

  bool by_name() const { return !excludes.empty() || !iexcludes.empty() || !if_present.empty(); }
  bool by_stat() const { return larger_than.has_value() || one_file_system; }
};

// The rules for one backup: the devices of its source paths (for --one-file-system) are
// taken when it is made. Not thread-safe per DirState; the rest is read-only.
class Excluder {
 public:
  // `abs_targets`: the source paths, absolute and clean. `notice` gets problems that do
  // not fail the backup (a tag file with a wrong header), as restic's warnings.
  Excluder(const ExcludeRules& rules, const std::vector<std::string>& abs_targets,
           std::function<void(const std::string&)> notice);

  bool active() const { return by_name_ || by_stat_; }
  bool by_name() const { return by_name_; }
  bool by_stat() const { return by_stat_; }

  // What --exclude-if-present found out about one directory: per rule, unknown / tagged.
  struct DirState {
    std::vector<std::optional<bool>> tagged;
  };

  // `path`: absolute path of an entry whose directory is `dir`, with `name` its last
  // component. `state` caches the tag tests of `dir` (one DirState per directory).
  bool ExcludedByName(const std::string& path, std::string_view dir, std::string_view name,
                      DirState& state) const;
  // The entry's lstat result.
  bool ExcludedByStat(const std::string& path, const struct stat& st) const;

 private:
  bool DirTagged(std::string_view dir, const ExcludeIfPresent& rule) const;
  // restic's DeviceMap.IsAllowed: the device of the nearest source path at or above `path`
  // is `dev`.
  bool DeviceAllowed(std::string_view path, dev_t dev) const;

  const ExcludeRules& rules_;
  bool by_name_, by_stat_;
  std::map<std::string, dev_t, std::less<>> devices_;
  std::function<void(const std::string&)> notice_;
};

}  // namespace haven
