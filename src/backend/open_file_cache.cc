#include "backend/open_file_cache.h"

#include <sys/resource.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace haven {

size_t OpenFileCache::Bound() const {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return max_open_;
  const uint64_t soft = rl.rlim_cur;
  const uint64_t usable = soft > kReserve ? (soft - kReserve) / 2 : 0;
  return static_cast<size_t>(std::min<uint64_t>(max_open_, usable));
}

std::shared_ptr<const OpenFileCache::File> OpenFileCache::Get(const std::string& path) {
  MutexLock lock(mu_);
  auto it = entries_.find(path);
  if (it == entries_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.file;
}

void OpenFileCache::Put(const std::string& path, std::shared_ptr<const File> file) {
  const size_t bound = Bound();
  // Closed outside the lock (the last reference may be ours).
  std::vector<std::shared_ptr<const File>> closing;
  MutexLock lock(mu_);
  if (bound == 0) return;
  auto it = entries_.find(path);
  if (it != entries_.end()) {
    closing.push_back(std::move(it->second.file));
    it->second.file = std::move(file);
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  } else {
    lru_.push_front(path);
    entries_.emplace(path, Entry{std::move(file), lru_.begin()});
  }
  while (entries_.size() > bound) {
    auto victim = entries_.find(lru_.back());
    closing.push_back(std::move(victim->second.file));
    entries_.erase(victim);
    lru_.pop_back();
  }
}

void OpenFileCache::Drop(const std::string& path) {
  std::shared_ptr<const File> closing;
  MutexLock lock(mu_);
  auto it = entries_.find(path);
  if (it == entries_.end()) return;
  closing = std::move(it->second.file);
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

size_t OpenFileCache::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

}  // namespace haven
