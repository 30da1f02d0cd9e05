#include "mount/blob_source.h"

namespace haven::mount {

std::optional<uint64_t> RepositorySource::DataSize(const BlobId& id) {
  const auto repo = Repo();
  const auto locs = repo->index().Lookup(BlobType::kData, id);
  if (locs.empty()) return std::nullopt;
  return locs.front().PlainLength();
}

void RepositorySource::Replace(std::shared_ptr<IndexedRepository> repo) {
  MutexLock l(mu_);
  repo_ = std::move(repo);
}

std::shared_ptr<IndexedRepository> RepositorySource::Repo() {
  MutexLock l(mu_);
  return repo_;
}

}  // namespace haven::mount
