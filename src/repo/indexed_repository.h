// What loading the index turns an opened Repository into: the master Index (every index
// file, loaded in parallel) and the blob reads that need it (LoadBlob, LoadTree). A
// function that needs the index takes an IndexedRepository&; one that does not keeps a
// Repository&. Blobs are written through a WriteSession made from this object, which adds
// the packs it uploads to this index.
//
// The index may be read when first needed instead (IndexLoad::kOnFirstUse): the list of
// index files is taken at once (index_files()), the files themselves are read by the first
// call that needs a blob's location. A backup whose every folder comes from the folder
// state (archiver/folder_state.h) never needs one, and never reads the index.
//
// Thread safety: every method may run on many threads at once; the index and the list of
// index files are behind index_mu_ (readers shared, a WriteSession's additions exclusive);
// a deferred load runs once, under load_mu_, while other callers wait for it.
// index() and index_files() hand out references: read them while no WriteSession of this
// repository is saving (after its Flush), as prune, check and restore do.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/huge_buffer.h"
#include "core/mutex.h"
#include "repo/index.h"
#include "repo/repository.h"

namespace haven {

class WriteSession;

// When IndexedRepository::Load reads the index files: before it returns, or at the first
// call that needs the index (a read error is then thrown by that call, and by each later
// one that needs the index).
enum class IndexLoad { kNow, kOnFirstUse };

class IndexedRepository : public Repository {
 public:
  // Lists the index files of `opened`'s repository and loads every one (in parallel, --jobs
  // loaders; one failure fails the load), now or when first needed. The result shares
  // `opened`'s backend and lock check; it tells the local cache (if any) which packs hold
  // trees until it is destroyed.
  static std::unique_ptr<IndexedRepository> Load(const Repository& opened,
                                                 IndexLoad when = IndexLoad::kNow);
  // The same for index files listed already (ListIndexFiles, or a listing made earlier).
  static std::unique_ptr<IndexedRepository> Load(const Repository& opened,
                                                 std::vector<std::pair<FileId, uint64_t>> files,
                                                 IndexLoad when = IndexLoad::kNow);
  // Every index file's id and listed size, sorted by id.
  static std::vector<std::pair<FileId, uint64_t>> ListIndexFiles(Backend& be);
  // The same from FileInfo records (names that are not ids left out).
  static std::vector<std::pair<FileId, uint64_t>> IndexFilesOf(const std::vector<FileInfo>& listed);

  ~IndexedRepository() override;
  IndexedRepository(const IndexedRepository&) = delete;
  IndexedRepository& operator=(const IndexedRepository&) = delete;

  // See the thread-safety note above.
  const Index& index() const NO_THREAD_SAFETY_ANALYSIS {
    LoadIndex();
    return index_;
  }
  // Ids of the index files listed (loaded now or later), then of those a WriteSession
  // wrote. Never reads the index.
  const std::vector<FileId>& index_files() const NO_THREAD_SAFETY_ANALYSIS {
    return index_files_;
  }
  // Reads the index now unless it is read already (IndexLoad::kOnFirstUse): the first
  // caller reads it, others wait for it. Throws the read's error (and tries again on the
  // next call).
  void LoadIndex() const;
  // True once the index has been read (always, for IndexLoad::kNow).
  bool index_loaded() const { return loaded_.load(std::memory_order_acquire); }
  // Merges blobs added since the load into the index's sorted runs (Index::Compact), so
  // that index positions cover every blob. Not while a WriteSession saves.
  void CompactIndex();

  // Reads one blob via the index, trying every known location. Verifies MAC, size and
  // id. Throws kNotFound when not indexed, kCorrupt when no copy is intact.
  Bytes LoadBlob(BlobType t, const BlobId& id);
  // LoadBlob into caller-owned memory: the returned plaintext lies in `out` (grown as
  // needed, never zero-filled), valid until `out` is used again. No allocation per blob
  // once `out` has grown (repo/blob_stream.h reads a file's blobs this way).
  ByteView LoadBlobInto(BlobType t, const BlobId& id, HugeBuffer& out);
  // Loads and decodes a tree blob.
  std::vector<Node> LoadTree(const BlobId& id);
  // True when the index lists the blob (a WriteSession also knows its in-flight blobs).
  bool HasBlob(BlobType t, const BlobId& id) const;
  // True when the index lists `pack` and its first blob is a tree.
  bool IsTreePack(const PackId& pack) const;

  // Blobs the caller knows to be stored where given, from a trusted local record (the
  // capture's folder state, docs/capture-state.md: sealed with this repository's key and
  // used only while every index file it recorded remains). Until the index is read,
  // HasBlob, LoadBlob and IsTreePack answer for them without reading it (a copy that does
  // not decode as its id is looked up in the index instead). Call before blobs are read.
  void AddKnownBlobs(const std::vector<KnownBlob>& blobs);
  // Where a blob is stored: a known blob's location, else the index's first (reading the
  // index when needed); nullopt when not indexed.
  std::optional<BlobLocation> Locate(BlobType t, const BlobId& id) const;

 private:
  // Load's second half: `repo` made from the opened repository, its index files listed.
  static std::unique_ptr<IndexedRepository> Loaded(std::unique_ptr<IndexedRepository> repo,
                                                   std::vector<std::pair<FileId, uint64_t>> files,
                                                   IndexLoad when);
  friend class WriteSession;  // adds what it uploads, through the two methods below
  explicit IndexedRepository(const Repository& opened) : Repository(opened) {}
  // Reads, checks and parses every listed index file into index_.
  void LoadIndexFiles() EXCLUDES(index_mu_);
  void AddPack(const PackId& pack, const std::vector<PackedBlob>& blobs);
  void AddIndexFile(const FileId& id);

  mutable SharedMutex index_mu_;
  Index index_ GUARDED_BY(index_mu_);
  std::vector<FileId> index_files_ GUARDED_BY(index_mu_);
  // Index files as listed (id, size), until they are loaded.
  mutable std::vector<std::pair<FileId, uint64_t>> listed_ GUARDED_BY(load_mu_);
  mutable Mutex load_mu_;
  mutable std::atomic<bool> loaded_{false};
  // AddKnownBlobs' blobs, read-only once blobs are read.
  std::unordered_map<BlobId, KnownBlob, IdHash> known_;
  const KnownBlob* Known(BlobType t, const BlobId& id) const;
  // Reads and decodes the copy of `id` at `l` (MAC, size and id checked).
  Bytes LoadCopy(const BlobId& id, const BlobLocation& l);
  ByteView LoadCopyInto(const BlobId& id, const BlobLocation& l, HugeBuffer& out);
  // The locations of a blob (reading the index when needed); kNotFound when none.
  std::vector<BlobLocation> Locations(BlobType t, const BlobId& id);
  // The first intact copy (a known record, then the index's): LoadBlob and LoadBlobInto.
  template <typename LoadFn>
  auto FromAnyCopy(BlobType t, const BlobId& id, const LoadFn& load)
      -> decltype(load(BlobLocation{}));
  // The largest sealed blob LoadCopy reads into its per-thread buffer: twice the largest
  // chunk (8 MiB) with room for the seal; longer ones are read into a buffer of their own.
  static constexpr uint32_t kScratchMax = 16 << 20;
};

}  // namespace haven
