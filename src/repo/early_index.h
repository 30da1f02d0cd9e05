// The index loaded before the lock: from the index files a remote repository's open listed
// (Backend::EarlierListing; IndexPrefetchBackend reads them while the key is derived), on a
// thread of its own from construction, so the decrypting and parsing overlap the lock's
// write and the listings made under it instead of following them. It is the index only if
// the index files listed under the lock are exactly those (ids and sizes: the files are
// named by their content's hash); otherwise the caller loads the index as before.
//
// Thread safety: TakeIf from one thread at a time; the destructor joins the thread.
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "repo/indexed_repository.h"

namespace haven {

class EarlyIndex {
 public:
  // Starts the load if the backend has an earlier listing of index files (remote storage
  // opened with the index prefetch); otherwise does nothing. `then`, when given, runs on
  // the same thread with the index loaded (reads that warm the cache; what it throws is
  // ignored), and Wait waits for it too.
  explicit EarlyIndex(Repository& opened,
                      std::function<void(IndexedRepository&)> then = nullptr);
  ~EarlyIndex();
  EarlyIndex(const EarlyIndex&) = delete;
  EarlyIndex& operator=(const EarlyIndex&) = delete;

  // Waits for the load; the index loaded (kept here), or null: for work begun early whose
  // result counts only if Matches says so later.
  IndexedRepository* Wait();
  // Waits for the load; true if an index was loaded from exactly `files` (the listing made
  // under the lock, IndexedRepository::ListIndexFiles).
  bool Matches(const std::vector<std::pair<FileId, uint64_t>>& files);
  // The index if Matches(files), else null. Hands it over once.
  std::unique_ptr<IndexedRepository> TakeIf(const std::vector<std::pair<FileId, uint64_t>>& files);

  // Lists the index files (under the lock) and loads the index: the early one when it
  // was loaded from the same files, else as IndexedRepository::Load does. `early` may be
  // null.
  static std::unique_ptr<IndexedRepository> LoadWith(EarlyIndex* early, Repository& opened);

 private:
  std::thread thread_;
  std::unique_ptr<IndexedRepository> index_;  // written by thread_, read after its join
  std::vector<std::pair<FileId, uint64_t>> files_;
};

}  // namespace haven
