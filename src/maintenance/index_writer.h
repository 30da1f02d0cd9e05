// Helpers shared by prune and repair index: the index grouped by pack (each pack's
// entries merged from every index file that lists it, exact duplicates dropped), writing
// a complete set of new index files, and deleting files in parallel.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "core/id.h"
#include "repo/index.h"
#include "repo/repository.h"
#include "repo/write_session.h"

namespace haven {

// Packs in first-seen order with their blobs sorted by offset.
class PackTable {
 public:
  // Adds entries of `pack` (merged with entries added before for the same pack).
  void Add(const PackId& pack, const std::vector<PackedBlob>& blobs);
  void Add(const PackId& pack, const PackedBlob& blob);
  // Sorts each pack's entries by offset and drops exact duplicates. Call once after
  // the last Add and before reading.
  void Finish();

  static PackTable FromIndex(const Index& index);

  size_t size() const { return ids_.size(); }
  const PackId& id(size_t i) const { return ids_[i]; }
  const std::vector<PackedBlob>& blobs(size_t i) const { return blobs_[i]; }
  // Position of a pack, or -1.
  long Find(const PackId& pack) const;
  // Pack file size the entries describe (blobs + header + 4).
  uint64_t ExpectedSize(size_t i) const;
  uint64_t BlobCount() const;
  // True when Finish dropped exact duplicate entries (a pack listed by several index files).
  bool had_duplicates() const { return had_duplicates_; }

 private:
  std::vector<PackId> ids_;
  std::vector<std::vector<PackedBlob>> blobs_;
  std::unordered_map<PackId, size_t, IdHash> pos_;
  bool had_duplicates_ = false;
};

// The loaded index grouped by pack without copying its entries: 4 bytes per blob (the
// entry's index position) instead of PackTable's ~50, for prune's planning of a large
// repository. Same reading interface as PackTable; blobs(i) builds the pack's list.
// The index must stay unchanged (compacted, no AddPack) while the view is used.
class IndexPackView {
 public:
  explicit IndexPackView(const Index& index);

  size_t size() const { return ids_.size(); }
  const PackId& id(size_t i) const { return ids_[i]; }
  // The pack's blobs by offset, exact duplicates dropped. With `first`, also the index
  // position Index::Find gives for each blob's id (where per-id state such as the used
  // bitmap lives), without a lookup.
  std::vector<PackedBlob> blobs(size_t i, std::vector<size_t>* first = nullptr) const;
  long Find(const PackId& pack) const;
  bool had_duplicates() const { return had_duplicates_; }

 private:
  static constexpr uint32_t kTreeBit = 0x80000000u;
  const Index& index_;
  std::vector<PackId> ids_;
  std::vector<uint32_t> start_;    // per pack, into entries_
  std::vector<uint32_t> entries_;  // index position | kTreeBit for trees, by pack then offset
  std::unordered_map<PackId, size_t, IdHash> pos_;
  bool had_duplicates_ = false;
};

// Runs fn(i) for i in [0, n) on up to `threads` threads; rethrows the first error after
// all threads stopped (the remaining items are skipped once an error occurred).
inline void ParallelForEach(size_t n, int threads, const std::function<void(size_t)>& fn) {
  ParallelFor(n, threads, fn);
}

// Writes index files (at most WriteSession::kIndexFlushBlobs blobs each, whole packs)
// describing every pack of `packs` for which keep(i) is true, on `threads` threads, or
// on as many as the storage's connections when it has round trips. Returns the new ids.
std::vector<FileId> WriteIndexFiles(Repository& repo, const PackTable& packs,
                                    const std::function<bool(size_t)>& keep, int threads);

// Called after each removal attempt (error = nullptr on success), one call at a time.
using RemoveReportFn = std::function<void(const Handle& h, const Error* error)>;

// Removes files of type t in parallel. With ignore_errors, failures are passed to warn
// and the rest is still removed (returns the number of failures); otherwise the first
// failure is thrown (the remaining files are skipped). `report` (optional) sees each file.
size_t RemoveFiles(Repository& repo, FileType t, const std::vector<RawId>& ids, int threads,
                   bool ignore_errors, const std::function<void(const std::string&)>& warn,
                   const RemoveReportFn& report = {});

}  // namespace haven
