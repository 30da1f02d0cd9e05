// The mount's cache of data blobs (restic's bloblru, 64 MiB): least recently used blobs
// leave first once the plaintext bytes held pass the budget. A blob that several readers
// ask for at once (the kernel reads one file in parallel pieces) is loaded once: the
// others wait for that load.
//
// Thread safety: every method may run on many threads at once.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <unordered_map>

#include "core/bytes.h"
#include "core/id.h"
#include "core/mutex.h"

namespace haven::mount {

class BlobCache {
 public:
  using Blob = std::shared_ptr<const Bytes>;
  static constexpr size_t kDefaultBytes = size_t(64) << 20;

  explicit BlobCache(size_t max_bytes = kDefaultBytes) : max_bytes_(max_bytes) {}
  // The cached blob, else load(id) (once, however many callers wait for it), cached when
  // it fits the budget. load's exception reaches every caller waiting for that load; a
  // failed load is not cached.
  Blob Get(const BlobId& id, const std::function<Bytes(const BlobId&)>& load) EXCLUDES(mu_);
  size_t bytes() const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Entry {
    Blob blob;
    std::list<BlobId>::iterator lru;  // position in lru_ (front = most recent)
  };
  void Insert(const BlobId& id, Blob blob) REQUIRES(mu_);

  const size_t max_bytes_;
  mutable Mutex mu_;
  std::unordered_map<BlobId, Entry, IdHash> entries_ GUARDED_BY(mu_);
  std::list<BlobId> lru_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  std::unordered_map<BlobId, std::shared_future<Blob>, IdHash> loading_ GUARDED_BY(mu_);
};

}  // namespace haven::mount
