#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"
#include "backend/cache_backend.h"
#include "chunker/chunker.h"
#include "crypto/crypto_key.h"
#include "crypto/kdf.h"
#include "repo/config.h"
#include "repo/node.h"
#include "repo/pack.h"
#include "repo/snapshot.h"

namespace haven {

// An opened repository: storage (the backend with its decorators, chosen once here),
// master key, config and chunker tables, with what needs no index: unpacked files
// (snapshots, index files, locks), snapshot listing, the lock check and blob decoding.
// Loading the index turns it into an IndexedRepository (repo/indexed_repository.h); blobs
// are saved only through a WriteSession (repo/write_session.h).
//
// Thread safety: every method may run on many threads at once (the object holds no
// mutable state after Open, except the hooks set by the CLI before work starts).
class Repository {
 public:
  static constexpr int kMaxKeysTried = 20;
  // The largest decompressed unpacked file (snapshot, index) accepted.
  static constexpr size_t kMaxUnpackedSize = size_t(4) << 30;

  // Creates the layout, a master key, one key file for `password` and the config (with a
  // random chunker polynomial, or the given one: init --copy-chunker-params).
  static void Init(Backend& be, std::string_view password, int version,
                   const crypto::ScryptParams& params, int threads,
                   std::optional<uint64_t> chunker_polynomial = std::nullopt);

  // Opens with a password: tries key files in name order (at most kMaxKeysTried, which
  // bounds the time a hostile repository of many keys can cost; restic has the same
  // limit), the one `key_hint` names (id or prefix) first. Throws kNoRepository when
  // there is no config, kWrongPassword when no key opens.
  static std::unique_ptr<Repository> Open(std::shared_ptr<Backend> be,
                                          std::string_view password, int threads,
                                          std::string_view key_hint = {});
  virtual ~Repository();

  Backend& backend() { return *backend_; }
  const Backend& backend() const { return *backend_; }
  std::shared_ptr<Backend> backend_ptr() { return backend_; }
  // The local cache in the backend's chain, if any (the CLI sets it right after Open, once
  // the cache knows the repository id). An IndexedRepository tells it which packs hold
  // trees; a WriteSession notes the tree packs it writes.
  void set_cache(std::shared_ptr<CacheBackend> cache) { cache_ = std::move(cache); }
  const std::shared_ptr<CacheBackend>& cache() const { return cache_; }
  const RepoConfig& config() const { return config_; }
  const crypto::CryptoKey& key() const { return key_; }
  const FileId& key_id() const { return key_id_; }
  const chunker::Tables& chunker_tables() const { return *tables_; }
  int threads() const { return threads_; }

  // Unpacked files (docs/format.md): sealed, zstd-compressed with a 0x02 byte in v2.
  FileId SaveJson(FileType t, std::string_view json);
  // The stored bytes SaveJson would write (sealed; compressed in v2).
  Bytes EncodeJson(std::string_view json);
  // The same for JSON made in pieces: `emit` calls put() with consecutive pieces, each
  // compressed as it comes (index files: the text is never held whole; the frame records
  // no content size).
  using JsonPieces = std::function<void(const std::function<void(std::string_view)>& put)>;
  FileId SaveJsonPieces(FileType t, const JsonPieces& emit);
  Bytes EncodeJsonPieces(const JsonPieces& emit);
  // Loads, checks the storage id against the content hash, opens and decompresses.
  std::string LoadJson(FileType t, const FileId& id);
  std::string DecodeUnpacked(ByteView stored, const std::string& what);

  // Ids of all objects of a type (throws on listing errors).
  std::vector<FileId> ListIds(FileType t);

  // A snapshot file that could not be loaded: its id and why.
  struct SnapshotFailure {
    FileId id;
    std::string error;
    bool io = false;  // reading failed (may be transient), not the bytes
  };
  // All snapshots that load, sorted by time (oldest first). One damaged snapshot file
  // never stops the others (as restic): it is left out and reported in `failures` when
  // given, otherwise through the warning sink ("Ignoring snapshot ..."). Listing errors
  // still throw.
  std::vector<std::pair<FileId, Snapshot>> LoadSnapshots(
      std::vector<SnapshotFailure>* failures = nullptr);
  // The warning for a snapshot LoadSnapshots left out.
  static std::string IgnoredSnapshotMessage(const SnapshotFailure& f) {
    return "Ignoring snapshot " + f.id.Short() + ": could not load it: " + f.error;
  }
  // The same for snapshot files listed already (e.g. Backend::EarlierListing).
  std::vector<std::pair<FileId, Snapshot>> LoadSnapshots(
      const std::vector<FileId>& ids, std::vector<SnapshotFailure>* failures);
  // The lock's validity check (set by Lock::Acquire): CheckLock runs it before every
  // commit, i.e. before a snapshot is saved and before prune or forget delete anything.
  // An IndexedRepository made from this one shares the check (a lock taken before the
  // index load guards both, and its release clears it for both).
  void set_lock_check(std::function<void()> fn) { *lock_check_ = std::move(fn); }
  void CheckLock() {
    if (*lock_check_) (*lock_check_)();
  }
  // Where LoadSnapshots reports a left-out snapshot when given no list (the CLI prints).
  void set_warn(std::function<void(const std::string&)> fn) { warn_ = std::move(fn); }
  // A warning through the sink (stderr when none is set).
  void Warn(const std::string& msg) const {
    if (warn_)
      warn_(msg);
    else
      std::fprintf(stderr, "warning: %s\n", msg.c_str());
  }
  // IgnoredSnapshotMessage of each, through Warn (for failures a caller collected).
  void WarnIgnored(const std::vector<SnapshotFailure>& failures) const {
    for (const SnapshotFailure& f : failures) Warn(IgnoredSnapshotMessage(f));
  }

  // Decodes a blob's sealed bytes as read from a pack (used by restore and check).
  Bytes DecodeBlob(const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
                   const std::string& pack);
  // The same without allocating (check --read-data): opens `sealed` in place (its bytes are
  // overwritten by the plaintext, also when the id does not match), decompresses into
  // out[0, uncompressed_length) (out must be that large), and checks the id. Returns the
  // plaintext, which lies inside `sealed` or `out`. Same errors as DecodeBlob.
  ByteView DecodeBlobInPlace(const BlobId& id, std::span<uint8_t> sealed,
                             uint32_t uncompressed_length, const std::string& pack,
                             std::span<uint8_t> out);

 protected:
  Repository() = default;
  // An IndexedRepository starts as a copy of the opened state: the backend, tables and
  // lock check are shared, the rest is small and immutable.
  Repository(const Repository&) = default;
  Repository& operator=(const Repository&) = delete;

 private:
  // Stores sealed bytes under their SHA-256 (after the lock check for a snapshot).
  FileId SaveEncoded(FileType t, const Bytes& sealed);

  std::shared_ptr<Backend> backend_;
  std::shared_ptr<CacheBackend> cache_;
  RepoConfig config_;
  crypto::CryptoKey key_;
  FileId key_id_;
  std::shared_ptr<const chunker::Tables> tables_;
  int threads_ = 1;
  std::function<void(const std::string&)> warn_;
  std::shared_ptr<std::function<void()>> lock_check_ = std::make_shared<std::function<void()>>();
};

}  // namespace haven
