// A bounded set of read-only descriptors kept open by path (the local cache's pack files):
// a walk that reads thousands of tree blobs from a few hundred cached packs opens each
// pack once instead of once per blob. At most `max_open` descriptors (default 2,048), and
// never more than half of the process's soft RLIMIT_NOFILE after a reserve of 256, so
// the restorer's files, sockets and pipes always have descriptors left; the least
// recently used one is closed first. An entry handed out stays open until its last user
// drops it, even when it is evicted or dropped meanwhile.
//
// Thread safety: every method may be called concurrently.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/fd.h"
#include "core/mutex.h"

namespace haven {

class OpenFileCache {
 public:
  static constexpr size_t kDefaultMaxOpen = 2048;
  static constexpr size_t kReserve = 256;

  // An open file with what was checked when it was opened.
  struct File {
    Fd fd;
    uint64_t size = 0;
    dev_t dev = 0;
    ino_t ino = 0;
  };

  explicit OpenFileCache(size_t max_open = kDefaultMaxOpen) : max_open_(max_open) {}

  // The open file of `path`, or null.
  std::shared_ptr<const File> Get(const std::string& path) EXCLUDES(mu_);
  // Keeps `file` open as `path` (replacing an earlier entry), closing the least recently
  // used ones beyond the bound. With a bound of 0 nothing is kept.
  void Put(const std::string& path, std::shared_ptr<const File> file) EXCLUDES(mu_);
  // Forgets `path` (the file was removed, replaced or found damaged).
  void Drop(const std::string& path) EXCLUDES(mu_);
  // How many descriptors are kept now (tests).
  size_t size() const EXCLUDES(mu_);
  // The bound in force: max_open, limited by RLIMIT_NOFILE as described above.
  size_t Bound() const;

 private:
  struct Entry {
    std::shared_ptr<const File> file;
    std::list<std::string>::iterator lru;  // position in lru_ (front: most recent)
  };

  const size_t max_open_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::list<std::string> lru_ GUARDED_BY(mu_);
};

}  // namespace haven
