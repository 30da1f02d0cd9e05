// What loading the index turns an opened Repository into: the master Index (every index
// file, loaded in parallel) and the blob reads that need it (LoadBlob, LoadTree). A
// function that needs the index takes an IndexedRepository&; one that does not keeps a
// Repository&. Blobs are written through a WriteSession made from this object, which adds
// the packs it uploads to this index.
//
// Thread safety: every method may run on many threads at once; the index and the list of
// index files are behind index_mu_ (readers shared, a WriteSession's additions exclusive).
// index() and index_files() hand out references: read them while no WriteSession of this
// repository is saving (after its Flush), as prune, check and restore do.
#pragma once

#include <memory>
#include <vector>

#include "core/mutex.h"
#include "repo/index.h"
#include "repo/repository.h"

namespace haven {

class WriteSession;

class IndexedRepository : public Repository {
 public:
  // Loads every index file of `opened`'s repository (in parallel, --jobs loaders; one
  // failure fails the load). The result shares `opened`'s backend and lock check; it
  // tells the local cache (if any) which packs hold trees until it is destroyed.
  static std::unique_ptr<IndexedRepository> Load(const Repository& opened);
  ~IndexedRepository() override;
  IndexedRepository(const IndexedRepository&) = delete;
  IndexedRepository& operator=(const IndexedRepository&) = delete;

  // See the thread-safety note above.
  const Index& index() const NO_THREAD_SAFETY_ANALYSIS { return index_; }
  // Ids of the index files loaded, then of those a WriteSession wrote.
  const std::vector<FileId>& index_files() const NO_THREAD_SAFETY_ANALYSIS {
    return index_files_;
  }
  // Merges blobs added since the load into the index's sorted runs (Index::Compact), so
  // that index positions cover every blob. Not while a WriteSession saves.
  void CompactIndex();

  // Reads one blob via the index, trying every known location. Verifies MAC, size and
  // id. Throws kNotFound when not indexed, kCorrupt when no copy is intact.
  Bytes LoadBlob(BlobType t, const BlobId& id);
  // Loads and decodes a tree blob.
  std::vector<Node> LoadTree(const BlobId& id);
  // True when the index lists the blob (a WriteSession also knows its in-flight blobs).
  bool HasBlob(BlobType t, const BlobId& id) const;
  // True when the index lists `pack` and its first blob is a tree.
  bool IsTreePack(const PackId& pack) const;

 private:
  friend class WriteSession;  // adds what it uploads, through the two methods below
  explicit IndexedRepository(const Repository& opened) : Repository(opened) {}
  // Reads, checks and parses every index file into index_ (the body of Load).
  void LoadIndexFiles();
  void AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs);
  void AddIndexFile(const FileId& id);

  mutable SharedMutex index_mu_;
  Index index_ GUARDED_BY(index_mu_);
  std::vector<FileId> index_files_ GUARDED_BY(index_mu_);
};

}  // namespace haven
