// The used-blob walk of prune: every tree reachable from a set of snapshots and every
// data blob listed in the `content` of a file node in those trees (restic's
// FindUsedBlobs). Built for speed on StreamTrees (repo/tree_stream.h), which loads the
// trees on N workers, grouped by pack, one ranged request per run of nearby trees, into
// reused per-worker buffers (a damaged copy falls back to every other location):
//  * each tree is scanned by the worker's own simdjson on-demand parser, which reads only
//    `type`, `content` and `subtree` (TreeScanner);
//  * every id is looked up in the (compacted) index once and marked in a bitmap over the
//    index positions with an atomic or: trees are visited when their bit was clear, data
//    blobs cost one bit each; no sets of ids, no sorting or merging afterwards. Ids the
//    index lacks are collected per worker (a prune must then refuse).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/id.h"
#include "repo/pack.h"
#include "repo/indexed_repository.h"
#include "repo/indexed_repository.h"
#include "repo/repository.h"

namespace haven {

// An immutable set of blob ids: a sorted vector plus a table of the first position of
// every 16-bit id prefix, so a lookup is one table read and a binary search over a few
// entries (ids are SHA-256, uniformly spread). Positions (Find) are stable, so callers
// can keep per-blob state in parallel arrays.
class SortedBlobSet {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);

  SortedBlobSet() { BuildBuckets(); }
  // Sorts and removes duplicates.
  explicit SortedBlobSet(std::vector<BlobId> ids);

  // Position of `id` in ids(), or npos.
  size_t Find(const BlobId& id) const;
  bool Contains(const BlobId& id) const { return Find(id) != npos; }
  const std::vector<BlobId>& ids() const { return ids_; }
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }

 private:
  void BuildBuckets();
  std::vector<BlobId> ids_;
  std::vector<uint32_t> bucket_;  // 65537 entries
};

// A set of blob ids per type (prune's blobs to copy).
struct BlobSets {
  SortedBlobSet trees;
  SortedBlobSet data;

  const SortedBlobSet& Of(BlobType t) const { return t == BlobType::kTree ? trees : data; }
  bool Has(BlobType t, const BlobId& id) const { return Of(t).Contains(id); }
  size_t size() const { return trees.size() + data.size(); }
};

// What the walk found: one bit per index position (Index::Find, the index compacted) for
// every used blob of each type, plus the used ids the index does not have. About 1/8 byte
// per indexed blob instead of a set of 32-byte ids.
class UsedBlobs {
 public:
  static constexpr size_t npos = Index::npos;

  UsedBlobs() = default;
  UsedBlobs(const Index& index, std::vector<uint64_t> bits[2], std::vector<BlobId> missing[2]);

  bool UsedAt(BlobType t, size_t pos) const {
    const auto& b = bits_[static_cast<int>(t)];
    return (b[pos >> 6] >> (pos & 63)) & 1;
  }
  // The index position of a used, indexed blob; npos for unused or unindexed ones.
  size_t Find(BlobType t, const BlobId& id) const;
  bool Has(BlobType t, const BlobId& id) const;
  // Used ids the index does not list (sorted).
  const std::vector<BlobId>& Missing(BlobType t) const { return missing_[static_cast<int>(t)]; }
  // Used blobs of a type, indexed or not.
  size_t Count(BlobType t) const;
  size_t size() const { return Count(BlobType::kData) + Count(BlobType::kTree); }
  // All used ids of a type, sorted (for tests and small repositories).
  std::vector<BlobId> Ids(BlobType t) const;

 private:
  const Index* index_ = nullptr;
  std::vector<uint64_t> bits_[2];
  std::vector<BlobId> missing_[2];
};

struct UsedBlobsRoot {
  FileId snapshot;  // only for messages
  BlobId tree;
};

struct UsedBlobsOptions {
  int threads = 0;  // 0: repo.threads()
  // Called from worker threads now and then with the number of trees scanned so far.
  std::function<void(uint64_t trees)> progress;
};

// Walks every root. The repository's index must be loaded (the walk compacts it), and
// nothing may save blobs or reload the index meanwhile or while the result is used (prune holds an exclusive lock). Throws naming the snapshot
// and the tree when a tree cannot be loaded or parsed (a prune must not go on with an
// incomplete picture of what is used): kCorrupt for a missing or damaged tree, kIo when
// the backend failed.
UsedBlobs FindUsedBlobs(IndexedRepository& repo, const std::vector<UsedBlobsRoot>& roots,
                        const UsedBlobsOptions& opts = {});

// The lean tree scanner the walk uses, exposed for tests and benchmarks. Not thread-safe;
// use one per thread.
class TreeScanner {
 public:
  TreeScanner();
  ~TreeScanner();
  TreeScanner(const TreeScanner&) = delete;
  TreeScanner& operator=(const TreeScanner&) = delete;

  // Appends the content ids of every "file" node to *data and the subtree id of every
  // "dir" node to *subtrees. Throws kCorrupt naming `what` on invalid JSON or ids.
  void Scan(std::string_view json, std::vector<BlobId>* data, std::vector<BlobId>* subtrees,
            const std::string& what);
  // The same without a copy: json[len .. capacity) must be readable, at least
  // SIMDJSON_PADDING (64) bytes, and zero.
  void ScanPadded(const uint8_t* json, size_t len, size_t capacity, std::vector<BlobId>* data,
                  std::vector<BlobId>* subtrees, const std::string& what);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace haven
