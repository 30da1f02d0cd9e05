// Where a mount reads trees and file contents from. The FUSE model (mount_fs.h) only sees
// this interface, so its unit tests run on an in-memory source without a kernel mount;
// RepositorySource is the real one (an IndexedRepository, replaced when the snapshot list
// changes and the index is reloaded).
//
// Thread safety: every method may run on many threads at once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/bytes.h"
#include "core/id.h"
#include "core/mutex.h"
#include "repo/indexed_repository.h"
#include "repo/node.h"

namespace haven::mount {

class BlobSource {
 public:
  virtual ~BlobSource() = default;
  // A tree's nodes; throws haven::Error when it cannot be read.
  virtual std::vector<Node> LoadTree(const BlobId& id) = 0;
  // A data blob's plaintext; throws haven::Error when it cannot be read.
  virtual Bytes LoadData(const BlobId& id) = 0;
  // A data blob's plaintext length from the index; nullopt when the index lacks it.
  virtual std::optional<uint64_t> DataSize(const BlobId& id) = 0;
};

class RepositorySource : public BlobSource {
 public:
  explicit RepositorySource(std::shared_ptr<IndexedRepository> repo) : repo_(std::move(repo)) {}
  std::vector<Node> LoadTree(const BlobId& id) override { return Repo()->LoadTree(id); }
  Bytes LoadData(const BlobId& id) override { return Repo()->LoadBlob(BlobType::kData, id); }
  std::optional<uint64_t> DataSize(const BlobId& id) override;
  // Uses `repo` from now on (calls under way finish on the old one).
  void Replace(std::shared_ptr<IndexedRepository> repo) EXCLUDES(mu_);

 private:
  std::shared_ptr<IndexedRepository> Repo() EXCLUDES(mu_);
  Mutex mu_;
  std::shared_ptr<IndexedRepository> repo_ GUARDED_BY(mu_);
};

}  // namespace haven::mount
