// A decorator that reads a remote repository's index and snapshot files into memory in the
// background from the moment the repository is opened, so that their round trips overlap
// the key's derivation (scrypt: about 0.4 s at restic's parameters) and the lock's, which
// come first and need none of them. The index and snapshot loads that follow take each
// file from here instead of fetching it (docs/backends.md, "Index prefetch").
//
// Safe whatever changes meanwhile: the loads list the files themselves, after the lock,
// and ask only for the names they listed; these files are named by the hash of their
// content, so a prefetched file is the file of that name, and the load checks the hash as
// it does for any read. A file listed later than the prefetch's listing is simply read as
// usual; a prefetched file no longer listed is never asked for.
//
// Bounded: at most `budget` bytes are held (files beyond it are left to the loads), a file
// is handed out once and its memory released, and each kind's `skip(name)` leaves out
// files the local cache already holds. Failures of the prefetch are ignored (the load
// reads the file again and reports its own error). The destructor stops the work and
// joins its threads.
//
// Thread safety: every method may be called from several threads.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/forwarding_backend.h"
#include "core/mutex.h"

namespace haven {

class IndexPrefetchBackend : public ForwardingBackend {
 public:
  static constexpr uint64_t kDefaultBudget = uint64_t{64} << 20;

  // A type of file read ahead, and the names of it to leave out (e.g. cached already).
  struct Kind {
    FileType type;
    std::function<bool(const std::string& name)> skip;
  };

  // Starts a listing per kind and the reads (as many at once as inner->Connections()).
  IndexPrefetchBackend(std::shared_ptr<Backend> inner, std::vector<Kind> kinds,
                       uint64_t budget = kDefaultBudget);
  // Index files only.
  explicit IndexPrefetchBackend(std::shared_ptr<Backend> inner,
                                std::function<bool(const std::string& name)> skip = nullptr,
                                uint64_t budget = kDefaultBudget)
      : IndexPrefetchBackend(std::move(inner), std::vector<Kind>{{FileType::kIndex, std::move(skip)}},
                             budget) {}
  ~IndexPrefetchBackend() override;
  IndexPrefetchBackend(const IndexPrefetchBackend&) = delete;
  IndexPrefetchBackend& operator=(const IndexPrefetchBackend&) = delete;

  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  // Writes are not this decorator's business: a streamed pack (RetryBackend's spool) and
  // its commit go straight to the storage below.
  std::unique_ptr<PackStream> NewPackStream() override { return inner_->NewPackStream(); }
  void SaveFrom(const Handle& h, const SaveSource& src) override { inner_->SaveFrom(h, src); }

  // The listing of a prefetched type, whole (files the cache holds included), once done.
  std::optional<std::vector<FileInfo>> EarlierListing(FileType t) override EXCLUDES(mu_);

  // Files handed out from memory so far (tests, timings).
  size_t served() EXCLUDES(mu_);

 private:
  enum class State { kQueued, kLoading, kDone };
  struct Entry {
    State state = State::kQueued;
    Bytes bytes;
    bool ok = false;
  };
  using Key = std::pair<FileType, std::string>;
  void Start(std::vector<Kind> kinds) EXCLUDES(mu_);
  void ListKind(const Kind& kind) EXCLUDES(mu_);
  void Work() EXCLUDES(mu_);
  bool Prefetched(FileType t) const;
  // The whole file if it was (or is being) prefetched and succeeded: waits for a read in
  // flight; a queued read is cancelled, and before its type's listing is done nothing is
  // waited for (the caller reads the file itself).
  std::optional<Bytes> Take(const Handle& h) EXCLUDES(mu_);

  const uint64_t budget_;
  std::vector<FileType> types_;  // set before any thread starts
  Mutex mu_;
  CondVar cv_;
  std::map<Key, Entry> entries_ GUARDED_BY(mu_);
  std::vector<Key> queue_ GUARDED_BY(mu_);  // files to read, in listing order
  size_t next_ GUARDED_BY(mu_) = 0;
  std::vector<FileType> listed_ GUARDED_BY(mu_);  // the kinds whose listing is done
  // Each listing that succeeded, before `skip` (EarlierListing).
  std::map<FileType, std::vector<FileInfo>> listings_ GUARDED_BY(mu_);
  size_t listing_ GUARDED_BY(mu_) = 0;            // listings not done yet
  uint64_t held_ GUARDED_BY(mu_) = 0;             // bytes queued or held, against budget_
  bool stop_ GUARDED_BY(mu_) = false;
  size_t served_ GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace haven
