// The upload side of a WriteSession (restic's packer_uploader): full packs are hashed,
// saved and indexed on upload threads while the workers go on compressing. At most
// `max_uploads` packs are uploading at once, each on its own thread (1 on a local disk;
// more where every request is a round trip, so one pack's round trips overlap another's);
// the next full pack waits (back-pressure), so memory stays at about (max_uploads + open
// packs) * pack size for packs built in memory.
// Emptied pack buffers (up to two) are kept for the next packs: no fresh 16 MiB allocation
// and its page faults. A streamed pack (repo/pack_stream.h) holds no pack buffer: its
// pieces are queued as they are cut (QueuePiece, in order, never waiting) and written by
// one thread, which then hands the pack to a second one that commits it (fsync, rename)
// while the next pack's pieces are written; at most about kMaxQueuedPieceBytes wait
// (Throttle).
#pragma once

#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "core/mutex.h"
#include "core/thread_pool.h"
#include "repo/pack.h"
#include "repo/pack_stream.h"

namespace haven {

// A full pack on its way to the backend: its bytes (built in memory; hashed on the upload
// thread), or the sink it was streamed to (all its pieces already written).
struct FinishedPack {
  Bytes bytes;
  std::shared_ptr<PackSink> sink;
};

class PackUploader {
 public:
  // Saves one finished pack (hash, backend write, index); runs on an upload thread, on
  // several at once when max_uploads > 1. It may leave `pack.bytes` in any state: its
  // buffer is recycled afterwards.
  using SaveFn = std::function<void(FinishedPack& pack, std::vector<PackedBlob> blobs)>;

  // max_uploads: at least 1 (a streamed pack is still committed after all its pieces:
  // pool_ hands it over behind them).
  explicit PackUploader(SaveFn save, int max_uploads = 1);
  int max_uploads() const { return max_uploads_; }
  // Waits for the queued uploads (errors are dropped: Wait reports them).
  ~PackUploader() = default;

  static constexpr size_t kMaxQueuedPieceBytes = 8 << 20;
  // Emptied piece buffers kept for reuse: the queue's worth and a few stages.
  static constexpr size_t kMaxFreePieces =
      kMaxQueuedPieceBytes / StreamedPackWriter::kPieceSize + 4;

  // An emptied pack buffer for the next PackWriter, or an empty one.
  Bytes TakeBuffer();
  // An emptied piece buffer for a StreamedPackWriter's next stage, or an empty one.
  Bytes TakePieceBuffer();
  // Queues a piece of a streamed pack for the upload thread, which writes pieces in the
  // order they were queued; never waits (the caller holds the session's lock).
  void QueuePiece(PackPiece piece);
  // Waits while more than kMaxQueuedPieceBytes of pieces are queued; rethrows an earlier
  // upload's error. Call it without holding a lock the upload thread takes.
  void Throttle();
  // Hands a full pack to an upload thread once fewer than max_uploads are running;
  // rethrows an earlier upload's error instead.
  void Upload(FinishedPack pack, std::vector<PackedBlob> blobs);
  // Waits until no upload is queued or running; rethrows the first upload error.
  void Wait();

 private:
  void Run(FinishedPack& pack, std::vector<PackedBlob> blobs);
  void RunPiece(PackPiece& piece);

  SaveFn save_;
  const int max_uploads_;
  Mutex mu_;
  CondVar done_;  // an upload finished
  size_t pending_ GUARDED_BY(mu_) = 0;
  std::exception_ptr error_ GUARDED_BY(mu_);
  std::vector<Bytes> free_ GUARDED_BY(mu_);
  std::vector<Bytes> free_pieces_ GUARDED_BY(mu_);
  size_t queued_piece_bytes_ GUARDED_BY(mu_) = 0;
  // Declared last: destroyed (queued uploads finished, threads joined) first. save_pool_
  // runs save_ (max_uploads_ packs at a time); pool_ writes pieces in queue order and passes each
  // pack, behind its pieces, to save_pool_ (so it is destroyed first). Their queues are
  // bounded by Upload's and Throttle's waits, not by the pools: QueuePiece never blocks.
  ThreadPool save_pool_;
  ThreadPool pool_{1, SIZE_MAX};
};

}  // namespace haven
