#include "repo/read_concurrency.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>

namespace haven {

int ReadConcurrency(const Repository& repo, FileType t, const std::vector<FileId>& ids) {
  if (ids.empty()) return 1;
  size_t cached = 0;
  if (const auto& cache = repo.cache()) {
    for (const FileId& id : ids) {
      const std::string path = cache->CachePath({t, id.Hex()});
      struct stat st;
      if (!path.empty() && ::stat(path.c_str(), &st) == 0) ++cached;
    }
  }
  const int cold = std::clamp(4 * repo.backend().Connections(), kWarmReaders, kColdReaders);
  const int want = cached * 2 >= ids.size() ? kWarmReaders : cold;
  return static_cast<int>(std::min<size_t>(ids.size(), static_cast<size_t>(want)));
}

}  // namespace haven
