// check's head start on remote storage: the work it can begin before its exclusive lock is
// written and the listings that scope it are made. Between the key's derivation and the
// first pack byte, a check waited on three round trips (the lock's write, the listings,
// then the first pack request) with the CPU idle. From the moment the repository is open,
// this loads the index from the index files the open listed (IndexPrefetchBackend read
// them while the key was derived) and, with --read-data, starts reading the packs that
// index names, at the sizes it implies.
//
// Nothing of it is trusted until the listings made under the lock agree: the index is
// used only if those list exactly the same index files (ids and sizes; the files are named
// by their content's hash), and a pack read is kept only if the pack is among those the
// check reads, listed at the size read. Otherwise it is thrown away and done again, so
// the result is the same as without the head start; nothing is reported before the lock
// is confirmed (RunCheck reports at its end).
//
// Thread safety: IndexFor and ReadAll are called from one thread at a time (RunCheck's);
// the destructor stops the readers and joins every thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/mutex.h"
#include "repo/early_index.h"
#include "repo/indexed_repository.h"

namespace haven {

class CheckHeadStart {
 public:
  // `read_packs`: start reading packs too (--read-data of every pack); `loaders`: packs
  // read at once.
  CheckHeadStart(Repository& opened, bool read_packs, int loaders);
  ~CheckHeadStart();
  CheckHeadStart(const CheckHeadStart&) = delete;
  CheckHeadStart& operator=(const CheckHeadStart&) = delete;

  // The index loaded early, if the index files it was loaded from are exactly `files`
  // (the listing made under the lock); otherwise null, and the early pack reads stop.
  // Waits for the early load. The index stays owned here.
  IndexedRepository* IndexFor(const std::vector<std::pair<FileId, uint64_t>>& files)
      EXCLUDES(mu_);

  // Reads the packs `ids` (their listed sizes in `on_disk`, their index entries in
  // `packs`) with CheckPackData, keeping each early read of the same pack at the same
  // size; returns each pack's problems, in the order of `ids`. Only after IndexFor
  // returned the index.
  std::vector<std::vector<std::string>> ReadAll(
      const std::vector<PackId>& ids, const std::map<PackId, uint64_t>& on_disk,
      const std::map<PackId, std::vector<PackedBlob>>& packs) EXCLUDES(mu_);

  // Packs whose early read ReadAll kept (tests, timings).
  size_t kept() const { return kept_; }
  // Tests: waits until the early index is loaded and every pack it names is read.
  void WaitForEarlyReadsForTesting() EXCLUDES(mu_);

 private:
  struct Item {
    PackId id;
    uint64_t size;
    const std::vector<PackedBlob>* blobs;
  };
  using Read = std::pair<PackId, uint64_t>;  // a pack, at the size it was read

  // On early_'s thread, once the early index is loaded: the packs it names, queued, and
  // the readers started.
  void StartReaders(IndexedRepository& index) EXCLUDES(mu_);
  void Reader(IndexedRepository& index) EXCLUDES(mu_);
  void StopReaders() EXCLUDES(mu_);

  Repository& opened_;
  const int loaders_;
  // Written on early_'s thread (readers_ under mu_, before stop_), read by the caller
  // after early_.Wait().
  std::map<PackId, std::vector<PackedBlob>> guessed_;  // the early index's packs
  std::vector<std::thread> readers_;

  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  bool final_ GUARDED_BY(mu_) = false;  // `wanted_` is set: ReadAll is waiting
  std::vector<Item> queue_ GUARDED_BY(mu_);
  size_t next_ GUARDED_BY(mu_) = 0;
  std::map<PackId, uint64_t> wanted_ GUARDED_BY(mu_);  // once final: pack -> listed size
  std::map<Read, std::vector<std::string>> done_ GUARDED_BY(mu_);
  size_t kept_ = 0;
  EarlyIndex early_;  // last: its thread calls StartReaders, which uses every member above
};

}  // namespace haven
