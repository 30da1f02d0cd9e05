#include "mount/blob_cache.h"

namespace haven::mount {

BlobCache::Blob BlobCache::Get(const BlobId& id,
                               const std::function<Bytes(const BlobId&)>& load) {
  std::promise<Blob> promise;
  std::shared_future<Blob> pending;
  {
    MutexLock l(mu_);
    if (auto it = entries_.find(id); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.blob;
    }
    if (auto it = loading_.find(id); it != loading_.end()) {
      pending = it->second;
    } else {
      loading_.emplace(id, promise.get_future().share());
    }
  }
  if (pending.valid()) return pending.get();  // another caller loads it
  Blob blob;
  try {
    blob = std::make_shared<const Bytes>(load(id));
  } catch (...) {
    promise.set_exception(std::current_exception());
    MutexLock l(mu_);
    loading_.erase(id);
    throw;
  }
  promise.set_value(blob);
  MutexLock l(mu_);
  loading_.erase(id);
  Insert(id, blob);
  return blob;
}

void BlobCache::Insert(const BlobId& id, Blob blob) {
  if (blob->size() > max_bytes_ || entries_.contains(id)) return;
  bytes_ += blob->size();
  lru_.push_front(id);
  entries_.emplace(id, Entry{std::move(blob), lru_.begin()});
  while (bytes_ > max_bytes_) {
    auto it = entries_.find(lru_.back());
    bytes_ -= it->second.blob->size();
    entries_.erase(it);
    lru_.pop_back();
  }
}

size_t BlobCache::bytes() const {
  MutexLock l(mu_);
  return bytes_;
}

size_t BlobCache::size() const {
  MutexLock l(mu_);
  return entries_.size();
}

}  // namespace haven::mount
