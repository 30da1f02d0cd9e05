// The only place that saves blobs (restic's packer_manager): made from an
// IndexedRepository, it owns dedup (the blobs in flight), the data and tree PackWriters,
// the PackUploader (upload thread, back-pressure, recycled buffers; data packs streamed
// to backends that can take them, Backend::NewPackStream), the index file still
// to write and its flushes, and the SaveStats. Every uploaded pack is added to the
// repository's index at once, so LoadBlob finds it; Flush writes the index file last (the
// index never lists a pack that is not saved).
//
// Thread safety: SaveBlob, SaveBlobCopy and HasBlob may run on many threads at once, also
// with the repository's LoadBlob. Compression and sealing run in the calling thread,
// outside the lock; pack uploads, and the writes of a streamed pack's pieces
// (repo/pack_stream.h), on the upload thread. Flush must not run concurrently
// with SaveBlob. Locks: mu_ (packers, in-flight sets, pending index), then the
// repository's index lock or the uploader's, never the other way round.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/mutex.h"
#include "repo/compress.h"
#include "repo/index.h"
#include "repo/indexed_repository.h"
#include "repo/pack.h"
#include "repo/pack_stream.h"
#include "repo/pack_uploader.h"

namespace haven {

struct SaveStats {
  std::atomic<uint64_t> data_blobs{0}, tree_blobs{0}, data_added{0}, data_added_packed{0};
};

// How new packs are written (the CLI builds it from --pack-size and --compression).
struct WriteOptions {
  // The default target size of a pack (restic's 16 MiB); --pack-size sets 4..128 MiB.
  static constexpr size_t kPackSize = 16 * 1024 * 1024;
  static constexpr size_t kMinPackSize = 4 * 1024 * 1024, kMaxPackSize = 128 * 1024 * 1024;
  size_t pack_size = kPackSize;
  Compression compression = Compression::kAuto;
  // false: the new packs enter the in-memory index only and no index file is written (prune's
  // repack, which writes a complete index right after; until then the new packs are
  // unreferenced, which a later prune removes, and the old ones still hold every blob).
  bool write_index = true;
};

class WriteSession {
 public:
  static constexpr size_t kIndexFlushBlobs = 50000;
  // Keeps a pack's header (<= 41 bytes per blob) well below the 16 MiB header limit.
  static constexpr size_t kMaxPackBlobs = 200000;

  explicit WriteSession(IndexedRepository& repo, WriteOptions opts = {});
  // Finishes the uploads already queued; open packs that were not flushed are dropped.
  ~WriteSession();
  WriteSession(const WriteSession&) = delete;
  WriteSession& operator=(const WriteSession&) = delete;

  IndexedRepository& repo() { return repo_; }
  // Packs uploaded at once: 1 on storage without round trips, kRoundTripUploads on storage
  // with them (a pack's round trips and transfer overlap another's; each one in flight
  // holds its pack in memory and one of the storage's connections).
  static constexpr int kRoundTripUploads = 2;
  int uploads() const { return uploader_.max_uploads(); }
  const WriteOptions& options() const { return opts_; }

  // Stores a blob unless the index or an in-flight pack already has it. Returns true
  // when it was added. Compression and sealing run in the calling thread. `data_level` > 0
  // is the zstd level for a data blob (DataLevelFor's choice); 0 takes the mode's level.
  bool SaveBlob(BlobType t, const BlobId& id, ByteView plain, int data_level = 0)
      EXCLUDES(mu_);
  // The zstd level for the data of one large file, given a sample of it (one of its
  // chunks): ChooseAutoLevel's trial in "auto" mode on a v2 repository, else 0 (the mode's
  // level). Counted as compression time.
  int DataLevelFor(ByteView sample) const;
  // True when the index lists the blob or a pack of this session holds it.
  bool HasBlob(BlobType t, const BlobId& id) EXCLUDES(mu_);
  // Prune's repack: stores a blob although the index already lists it (that copy is about
  // to be deleted); only an in-flight pack holding it makes this return false. `sealed` and
  // `uncompressed_length` are the blob as read from its old pack (already verified with
  // DecodeBlob) and are copied as they are, unless `sealed` is empty or the blob must be
  // compressed now (v2, stored uncompressed, tree or compression not off): then `plain`
  // is compressed and sealed afresh.
  bool SaveBlobCopy(BlobType t, const BlobId& id, ByteView plain, ByteView sealed,
                    uint32_t uncompressed_length) EXCLUDES(mu_);
  // Writes out open packs, waits for every pack upload, then writes the index file
  // describing all packs not yet indexed. Rethrows the first failed upload.
  void Flush() EXCLUDES(mu_);

  const SaveStats& stats() const { return stats_; }

 private:
  // Compresses (v2, per the compression mode) and seals one blob's plaintext.
  // The result lives in a per-thread buffer: valid until this thread's next SealBlob.
  ByteView SealBlob(BlobType t, ByteView plain, bool skip_incompressible,
                    uint32_t* uncompressed_length, int data_level = 0);
  // Counts a sealed blob and adds it to its type's open pack, uploading the pack when full.
  // Gives back SaveBlob's claim on a blob that did not reach a pack (in_flight_).
  void ReleaseClaim(BlobType t, const BlobId& id) EXCLUDES(mu_);
  void ReleaseClaimLocked(BlobType t, const BlobId& id) REQUIRES(mu_);
  void AppendSealed(BlobType t, const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
                    size_t plain_size) EXCLUDES(mu_);
  // The open pack of one blob type: built in memory, or streamed (never both).
  struct OpenPack {
    std::unique_ptr<PackWriter> mem;
    std::unique_ptr<StreamedPackWriter> streamed;
    size_t Size() const;
    size_t Count() const;
  };
  // Adds a blob to its type's open pack; returns the pack when that filled it (else an
  // empty FinishedPack and no blobs). Bytes of a streamed pack due to be written go to
  // *pieces, which the caller queues to the uploader, in order, before it releases mu_.
  FinishedPack AddToPack(BlobType t, const BlobId& id, ByteView sealed,
                         uint32_t uncompressed_length, std::vector<PackedBlob>* blobs,
                         std::vector<PackPiece>* pieces) REQUIRES(mu_);
  // Closes an open pack (its last piece, if streamed, onto *pieces) and empties `open`.
  FinishedPack Finish(OpenPack& open, std::vector<PackedBlob>* blobs,
                      std::vector<PackPiece>* pieces) REQUIRES(mu_);
  // On an upload thread (several run at once): hashes (unless streamed), saves and
  // indexes one pack, and writes an index file every kIndexFlushBlobs blobs.
  void SavePack(FinishedPack& pack, std::vector<PackedBlob> blobs) EXCLUDES(mu_);
  // Takes the pending index file (empty when there is none).
  IndexFile TakePendingIndex() REQUIRES(mu_);
  void WriteIndex(IndexFile f);

  IndexedRepository& repo_;
  const WriteOptions opts_;
  SaveStats stats_;
  std::function<void(const std::string&)> on_tree_pack_;  // the local cache keeps tree packs

  Mutex mu_;
  std::unordered_set<RawId, IdHash> in_flight_[2] GUARDED_BY(mu_);
  OpenPack packers_[2] GUARDED_BY(mu_);
  IndexFile pending_index_ GUARDED_BY(mu_);
  size_t pending_index_blobs_ GUARDED_BY(mu_) = 0;
  // Declared last: destroyed (queued uploads finished, thread joined) first.
  PackUploader uploader_;
};

}  // namespace haven
