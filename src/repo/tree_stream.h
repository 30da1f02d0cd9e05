// Streaming the trees reachable from a set of roots (restic's StreamTrees), the one tree
// walker of check, prune's used-blob walk, ls and restore. Two modes on one loader:
//
//  * StreamTrees (unordered, fastest): N workers share a queue of trees grouped by the
//    pack that holds them; a worker takes up to 256 trees of one pack, reads each run of
//    trees lying close together with one ranged request into its reused buffer, and
//    decrypts, decompresses and verifies each tree into reused per-worker buffers. The
//    caller's callback gets the verified plaintext on the worker thread and adds the
//    subtrees to visit; a visit predicate (called once per reached id) skips trees already
//    seen. A damaged copy falls back to IndexedRepository::LoadBlob (every other location). A
//    tree that cannot be loaded, or whose callback throws, is reported with its path; the
//    walk goes on unless the error callback asks to stop.
//
//  * OrderedTreeStream (ordered): the caller walks in its own (pre-)order and Takes each
//    tree; the trees it announced with Expect are loaded ahead on the workers, at most
//    `window` loaded-but-not-taken at once, and handed over decoded, in order.
//
// The repository's index must stay unchanged while a stream runs (nothing saves blobs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/id.h"
#include "repo/node.h"
#include "repo/indexed_repository.h"

namespace haven {

// Zero bytes after every tree's plaintext (simdjson's padding).
inline constexpr size_t kTreePadding = 64;

// A tree the walk reached: its id, the root that reached it first (position in the roots)
// and its path as the callbacks built it.
struct TreeRef {
  BlobId id;
  uint32_t root = 0;
  std::string path;
};

// A loaded tree, handed to the callback: the verified plaintext JSON, valid for the call
// only, followed by at least kTreePadding zero bytes (data()[size .. capacity)).
struct StreamedTree {
  const TreeRef& ref;
  const uint8_t* data;
  size_t size;
  size_t capacity;
  unsigned worker;  // in [0, StreamTreesThreads(...)): for per-worker state of the caller
  std::string_view json() const { return {reinterpret_cast<const char*>(data), size}; }
};

// The subtrees a callback wants visited (each one goes through the visit predicate).
class TreeChildren {
 public:
  void Add(const BlobId& id, std::string path = {}) { items_.push_back({id, 0, std::move(path)}); }
  std::vector<TreeRef>& items() { return items_; }

 private:
  std::vector<TreeRef> items_;
};

// A tree that could not be loaded (missing everywhere, damaged in every copy, a backend
// failure) or whose callback threw: the error as thrown, with the tree.
struct TreeStreamError {
  TreeRef ref;
  ErrorCode code;
  std::string message;
  bool retryable = false;
};

struct StreamTreesOptions {
  int threads = 0;  // 0: repo.threads()
  // Called for every id reached (roots included) with its index position (Index::Find,
  // npos when the index lacks it), from any worker, concurrently: true to load and visit
  // it. Null: every reached tree is visited (each time it is reached).
  std::function<bool(const TreeRef&, size_t pos)> visit;
  // Called for each visited tree on a worker thread, concurrently.
  std::function<void(const StreamedTree&, TreeChildren&)> tree;
  // Called for each failed tree, one call at a time: false stops the walk (the trees
  // still queued are dropped and StreamTrees returns once the workers are idle).
  // Null: stop at the first error.
  std::function<bool(const TreeStreamError&)> error;
};

// Walks every tree reachable from `roots` (their `root` fields are set to their position).
// The index must be compacted (IndexedRepository::CompactIndex) and unchanged meanwhile.
void StreamTrees(IndexedRepository& repo, std::vector<TreeRef> roots, const StreamTreesOptions& opts);
// The number of workers StreamTrees runs for `threads` (StreamTreesOptions::threads).
int StreamTreesThreads(const IndexedRepository& repo, int threads);

// Prefetching reader of trees for callers that walk in their own order (ls, restore).
// Expect(ids) announces trees that the caller will Take next, in that order, before
// anything announced earlier (a tree's subtrees right after it: pre-order). Take(id)
// returns the tree: prefetched when it was announced, loaded now otherwise. Entries
// announced before `id` but never taken (the caller skipped them) are dropped. Take and
// Expect are for one calling thread.
class OrderedTreeStream {
 public:
  // `window`: the most trees loaded (or loading) but not taken; 0: 8 per worker.
  OrderedTreeStream(IndexedRepository& repo, int threads, size_t window = 0);
  ~OrderedTreeStream();
  OrderedTreeStream(const OrderedTreeStream&) = delete;
  OrderedTreeStream& operator=(const OrderedTreeStream&) = delete;

  void Expect(std::span<const BlobId> ids);
  // The decoded tree; throws what IndexedRepository::LoadTree throws for it.
  std::vector<Node> Take(const BlobId& id);

  // For tests: the most trees that were loaded or loading and not taken at one time.
  size_t peak_in_window() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace haven
