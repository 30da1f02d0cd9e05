// An open repository: backend + master key + config, with the operations every command
// builds on: unpacked files (snapshots, index, locks), the master index, blob load and
// blob save through data and tree packers.
//
// Thread safety: LoadBlob, SaveBlob, LoadJson and SaveJson may be called from many
// threads at once. LoadIndex and Flush must not run concurrently with SaveBlob.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/backend.h"
#include "chunker/chunker.h"
#include "crypto/crypto_key.h"
#include "crypto/kdf.h"
#include "repo/compress.h"
#include "repo/config.h"
#include "repo/index.h"
#include "repo/node.h"
#include "repo/pack.h"
#include "repo/snapshot.h"

namespace haven {

class ThreadPool;

struct SaveStats {
  std::atomic<uint64_t> data_blobs{0}, tree_blobs{0}, data_added{0}, data_added_packed{0};
};

class Repository {
 public:
  // The default target size of a pack (restic's 16 MiB); --pack-size sets 4..128 MiB.
  static constexpr size_t kPackSize = 16 * 1024 * 1024;
  static constexpr size_t kMinPackSize = 4 * 1024 * 1024, kMaxPackSize = 128 * 1024 * 1024;
  static constexpr size_t kIndexFlushBlobs = 50000;
  // Keeps a pack's header (<= 41 bytes per blob) well below the 16 MiB header limit.
  static constexpr size_t kMaxPackBlobs = 200000;
  // Full packs are hashed, saved and indexed on an upload thread, so the worker that
  // filled one goes back to compressing during the backend's write and fsync. At most
  // kMaxUploads packs are uploading at once; the next full pack waits (back-pressure), so
  // memory stays at about (kMaxUploads + open packs) * kPackSize.
  static constexpr int kMaxUploads = 1;
  static constexpr int kMaxKeysTried = 20;

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

  Backend& backend() { return *backend_; }
  std::shared_ptr<Backend> backend_ptr() { return backend_; }
  // Replaces the backend (e.g. with a decorator); only before any blob is saved.
  void set_backend(std::shared_ptr<Backend> be) { backend_ = std::move(be); }
  // Called with a pack's name just before a pack of tree blobs is saved (the CLI uses it
  // to let the local cache keep the pack). Set before any blob is saved.
  void set_on_tree_pack(std::function<void(const std::string&)> fn) {
    on_tree_pack_ = std::move(fn);
  }
  // True when the loaded index lists `pack` and its first blob is a tree. Thread-safe.
  bool IsTreePack(const PackId& pack) const;
  const RepoConfig& config() const { return config_; }
  const crypto::CryptoKey& key() const { return key_; }
  const FileId& key_id() const { return key_id_; }
  const chunker::Tables& chunker_tables() const { return *tables_; }
  int threads() const { return threads_; }
  // Target pack size for new packs (restic's --pack-size); only before any blob is saved.
  void set_pack_size(size_t bytes) { pack_size_ = bytes; }
  size_t pack_size() const { return pack_size_; }

  void set_compression(Compression c) { compression_ = c; }
  Compression compression() const { return compression_; }

  // Unpacked files (FORMAT.md §6): sealed, zstd-compressed with a 0x02 byte in v2.
  FileId SaveJson(FileType t, std::string_view json);
  // The stored bytes SaveJson would write (sealed; compressed in v2).
  Bytes EncodeJson(std::string_view json);
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
  // The lock's validity check (set by Lock::Acquire): CheckLock runs it before every
  // commit, i.e. before a snapshot is saved and before prune or forget delete anything.
  void set_lock_check(std::function<void()> fn) { lock_check_ = std::move(fn); }
  void CheckLock() {
    if (lock_check_) lock_check_();
  }
  // Where LoadSnapshots reports a left-out snapshot when given no list (the CLI prints).
  void set_warn(std::function<void(const std::string&)> fn) { warn_ = std::move(fn); }

  // Loads every index file into the master index (in parallel).
  void LoadIndex();
  const Index& index() const { return index_; }
  // Merges blobs added since the load into the index's sorted runs (Index::Compact), so
  // that index positions cover every blob. Not concurrently with SaveBlob.
  void CompactIndex();
  // Ids of the index files loaded and the packs each listed.
  const std::vector<FileId>& index_files() const { return index_files_; }

  // Reads one blob via the index, trying every known location. Verifies MAC, size and
  // id. Throws kNotFound when not indexed, kCorrupt when no copy is intact.
  Bytes LoadBlob(BlobType t, const BlobId& id);
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
  // Stores a blob unless the index or an in-flight pack already has it. Returns true
  // when it was added. Compression and sealing run in the calling thread.
  bool SaveBlob(BlobType t, const BlobId& id, ByteView plain);
  bool HasBlob(BlobType t, const BlobId& id);
  // Prune's repack: stores a blob although the index already lists it (that copy is about
  // to be deleted); only an in-flight pack holding it makes this return false. `sealed` and
  // `uncompressed_length` are the blob as read from its old pack (already verified with
  // DecodeBlob) and are copied as they are, unless `sealed` is empty or the blob must be
  // compressed now (v2, stored uncompressed, tree or compression not off): then `plain`
  // is compressed and sealed afresh.
  bool SaveBlobCopy(BlobType t, const BlobId& id, ByteView plain, ByteView sealed,
                    uint32_t uncompressed_length);
  // Writes out open packs, waits for every pack upload, then writes the index file
  // describing all packs not yet indexed. Rethrows the first failed upload.
  void Flush();
  ~Repository();

  const SaveStats& stats() const { return stats_; }

  // Loads and decodes a tree blob.
  std::vector<Node> LoadTree(const BlobId& id);

 private:
  Repository() = default;
  // Hands a full pack to the upload thread (see kMaxUploads); returns once it is taken.
  void UploadPack(Bytes pack, std::vector<PackedBlob> blobs);
  // Hashes, saves and indexes one pack (on an upload thread), then recycles its buffer.
  void SavePack(Bytes pack, std::vector<PackedBlob> blobs);
  // Waits until no upload is queued or running; rethrows the first upload error.
  void WaitUploads();
  // Compresses (v2, per the compression mode) and seals one blob's plaintext.
  // The result lives in a per-thread buffer: valid until this thread's next SealBlob.
  ByteView SealBlob(BlobType t, ByteView plain, bool skip_incompressible,
                 uint32_t* uncompressed_length);
  // Counts a sealed blob and adds it to its type's open pack, uploading the pack when full.
  void AppendSealed(BlobType t, const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
                    size_t plain_size);
  void WriteIndexLocked(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<Backend> backend_;
  RepoConfig config_;
  crypto::CryptoKey key_;
  FileId key_id_;
  std::unique_ptr<chunker::Tables> tables_;
  int threads_ = 1;
  size_t pack_size_ = kPackSize;
  Compression compression_ = Compression::kAuto;

  mutable std::shared_mutex index_mu_;
  Index index_;
  std::vector<FileId> index_files_;

  std::mutex save_mu_;  // guards in_flight_, packers_, pending_index_
  std::unordered_set<RawId, IdHash> in_flight_[2];
  std::unique_ptr<PackWriter> packers_[2];
  IndexFile pending_index_;
  size_t pending_index_blobs_ = 0;
  std::mutex index_write_mu_;

  SaveStats stats_;
  std::function<void(const std::string&)> on_tree_pack_;
  std::function<void(const std::string&)> warn_;
  std::function<void()> lock_check_;

  std::mutex upload_mu_;  // guards the four below
  std::condition_variable uploads_done_;
  size_t uploads_pending_ = 0;
  std::exception_ptr upload_error_;
  std::vector<Bytes> free_packs_;  // emptied pack buffers for the next PackWriter
  // Declared last: destroyed (queued uploads finished, threads joined) first.
  std::unique_ptr<ThreadPool> upload_pool_;
};

}  // namespace haven
