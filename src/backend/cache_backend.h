// A Backend decorator that keeps restic's local cache (its layout below): byte-identical
// copies of snapshot files, index files and packs holding tree blobs, so that listing
// snapshots, loading the index and walking trees need not fetch them again.
//
// Layout under the base folder given by the caller (haven's default is
// $XDG_CACHE_HOME/haven or ~/.cache/haven, see DefaultBaseDir; never restic's own):
//   <base>/CACHEDIR.TAG                    "Signature: 8a477f597d28d172789f06886806bc55\n"
//   <base>/<repo-id>/version               "1" (no newline), mode 0644
//   <base>/<repo-id>/snapshots/XX/<id>
//   <base>/<repo-id>/index/XX/<id>
//   <base>/<repo-id>/data/XX/<pack-id>     tree packs only
// Folders are created with mode 0700, cached files with 0600.
//
// Lifecycle: the repository id is only known once the config is decrypted, so the
// decorator starts in pass-through mode and begins caching at SetRepositoryId.
//
// What is cached:
//  * snapshot and index files always. Load: served from the cached copy when present
//    (its SHA-256 must equal its name, else it is deleted and reloaded); otherwise the
//    whole file is loaded from the inner backend and stored in the cache. Save: written
//    to the inner backend, then to the cache.
//  * packs for which the tree-pack predicate returns true (or that were announced with
//    NoteTreePack before their Save). Load of any range fetches the WHOLE pack once,
//    stores it (only if its SHA-256 equals its name) and serves ranges from the copy.
//    A cached pack file stays open for the next range (OpenFileCache: at most 2,048
//    descriptors, fewer under a low RLIMIT_NOFILE), so a tree walk opens each pack once,
//    not once per tree; Remove, Forget and a damaged or replaced copy close it.
//    A cached pack too short for a requested range, or any read error, deletes the copy
//    and falls back to the inner backend.
//  * nothing else (config, keys, locks, data packs): always forwarded.
// Cache files are written as "<name>-tmp-<hex>" and renamed into place, so concurrent
// writers (threads or processes) never expose a partial file. Within one process, loads
// of the same uncached object are serialised so that it is fetched once.
// Remove removes from the inner backend and the cache. A complete List of snapshots,
// index files or packs drops cached files of that type that were not listed.
//
// Errors: the inner backend's errors pass through unchanged. Failing to write or clean
// the cache never fails an operation; it is reported through the warning callback.
// SetRepositoryId throws (kUnsupported for a cache version > 1, kIo when the folders
// cannot be created); the decorator then stays in pass-through mode.
//
// Thread safety: every method may be called concurrently, including the setters.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "backend/backend.h"
#include "backend/open_file_cache.h"
#include "core/mutex.h"

namespace haven {

class CacheBackend : public Backend {
 public:
  static constexpr int kCacheVersion = 1;
  static constexpr const char* kCacheDirTag = "Signature: 8a477f597d28d172789f06886806bc55\n";

  // `base_dir` need not exist yet; it is created by SetRepositoryId.
  CacheBackend(std::shared_ptr<Backend> inner, std::string base_dir);

  // haven's default base folder: $XDG_CACHE_HOME/haven, else $HOME/.cache/haven;
  // "" when neither variable is set.
  static std::string DefaultBaseDir();
  // Whether some repository's cache folder under `base_dir` holds a file of type t and a
  // given name (the folders are listed once, now): before the config is decrypted the
  // repository's own folder is unknown, but names of index files and packs are hashes of
  // their content, so a file of that name anywhere is the file (IndexPrefetchBackend).
  static std::function<bool(const std::string& name)> HeldUnder(const std::string& base_dir,
                                                                 FileType t);

  // Creates <base> (0700) with CACHEDIR.TAG and <base>/<id> with its version file and
  // type folders, refreshes the folder's mtime (restic's "in use" marker) and starts
  // caching. `id` must be 64 lowercase hex (kInvalidArgument otherwise).
  void SetRepositoryId(const std::string& id);
  // Decides which packs hold tree blobs (e.g. from the index). May be called at any time;
  // the function is called concurrently from loading threads.
  void SetTreePackPredicate(std::function<bool(const std::string& pack_name)> is_tree_pack);
  // Announces that the next Save of this pack stores tree blobs, so it is cached on write.
  void NoteTreePack(const std::string& name);
  // Receives one line per cache problem that did not fail the operation.
  void SetWarningHandler(std::function<void(const std::string&)> warn);
  // Drops the cached copy of h, if any (e.g. after its content failed verification).
  void Forget(const Handle& h);

  // "<base>/<id>" once SetRepositoryId succeeded, else "".
  std::string RepoDir() const;
  // Path of the cached copy of h ("" before SetRepositoryId or for uncached types).
  std::string CachePath(const Handle& h) const;
  // How many times a cached file was opened (a pack stays open between its ranges), and
  // how many pack descriptors are kept open now.
  uint64_t files_opened() const { return files_opened_.load(std::memory_order_relaxed); }
  size_t packs_kept_open() const { return open_packs_.size(); }

  std::string Location() const override { return inner_->Location(); }
  bool Exists() override { return inner_->Exists(); }
  void Create() override { inner_->Create(); }
  void Save(const Handle& h, ByteView data) override;
  Bytes Load(const Handle& h, uint64_t offset = 0, uint64_t length = 0) override;
  // What the cache does not hold (data packs) is read by the storage straight into `out`:
  // no whole response body beside the caller's buffer (restore's and repack's ranges of up
  // to 16 MiB were held twice, 100 MiB at the peak of an S3 restore), no copy.
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override;
  // The same for streamed reads: what the cache does not hold streams from the storage.
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override;
  std::optional<uint64_t> Stat(const Handle& h) override { return inner_->Stat(h); }
  std::optional<int64_t> ModTime(const Handle& h) override { return inner_->ModTime(h); }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override;
  void Remove(const Handle& h) override;
  // Data packs only (WriteSession streams no tree pack), which are never cached on write.
  std::unique_ptr<PackStream> NewPackStream() override { return inner_->NewPackStream(); }
  int Connections() const override { return inner_->Connections(); }
  bool RoundTrips() const override { return inner_->RoundTrips(); }
  std::optional<std::vector<FileInfo>> EarlierListing(FileType t) override {
    return inner_->EarlierListing(t);
  }
  size_t RemoveStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->RemoveStaleTempFiles(min_age_seconds);
  }
  size_t CountStaleTempFiles(int64_t min_age_seconds) override {
    return inner_->CountStaleTempFiles(min_age_seconds);
  }

 private:
  struct InFlight {
    Mutex mu;       // held by the InFlightLock of this path
    int users = 0;  // guarded by CacheBackend::inflight_mu_ (not expressible as GUARDED_BY)
  };
  class InFlightLock;
  struct CachedRead;

  // Snapshot/index always; packs when the tree-pack predicate says so.
  bool IsCached(const Handle& h);
  std::string PathIn(const std::string& repo_dir, const Handle& h) const;
  // Reads [offset, offset+length) of the cached copy at `path`.
  CachedRead ReadCached(const std::string& path, const Handle& h, uint64_t offset,
                        uint64_t length);
  // Reads `want` bytes at `offset` of an open, checked pack file (verified against its
  // name when that is the whole file).
  static CachedRead ReadOpenPack(const OpenFileCache::File& file, const Handle& h,
                                 uint64_t offset, uint64_t want);
  // Removes `path` if it is still the file (dev, ino) found to be bad.
  void RemoveBadFile(const std::string& path, const CachedRead& bad);
  Bytes LoadThroughCache(const std::string& path, const Handle& h, uint64_t offset,
                         uint64_t length);
  // Writes data to `path` atomically (temp + rename); warns instead of throwing.
  void WriteCacheFile(const std::string& path, const Handle& h, ByteView data);
  // Removes the cached files of type t named in `remove`.
  void CleanType(const std::string& repo_dir, FileType t, const std::set<std::string>& remove);
  void Warn(const std::string& msg);

  const std::shared_ptr<Backend> inner_;
  const std::string base_dir_;

  mutable SharedMutex cfg_mu_;
  std::string repo_dir_ GUARDED_BY(cfg_mu_);
  std::function<bool(const std::string&)> is_tree_pack_ GUARDED_BY(cfg_mu_);
  std::function<void(const std::string&)> warn_ GUARDED_BY(cfg_mu_);

  Mutex noted_mu_;
  std::set<std::string> noted_tree_packs_ GUARDED_BY(noted_mu_);

  Mutex inflight_mu_;
  std::map<std::string, std::shared_ptr<InFlight>> inflight_ GUARDED_BY(inflight_mu_);

  // Cached packs kept open between ranges (a tree walk reads many trees of one pack).
  OpenFileCache open_packs_;
  std::atomic<uint64_t> files_opened_{0};
};

}  // namespace haven
