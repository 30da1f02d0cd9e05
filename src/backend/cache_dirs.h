// The folders under a cache base directory (restic's cache.All / OlderThan), for the
// `cache` command: one folder per repository id (64 hex characters, either case) or
// restic's "restic-check-cache-N"; anything else is not a cache folder.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace haven {

struct CacheDir {
  std::string name;
  int64_t mtime = 0;    // seconds since the epoch (the cache touches it on every use)
  uint64_t bytes = 0;   // sizes of every non-directory below it (lstat)
};

// restic's validCacheDirName.
bool IsCacheDirName(const std::string& name);

// The cache folders of `base`, sorted by mtime (oldest first), sizes only when asked. A
// missing base is an empty list; other errors throw kIo naming the folder.
std::vector<CacheDir> ListCacheDirs(const std::string& base, bool with_size);

// restic's IsOld: the folder was last used before now - max_age_days.
bool IsOldCacheDir(const CacheDir& d, unsigned max_age_days, int64_t now);

}  // namespace haven
