#include "repo/pack_uploader.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/timings.h"

namespace haven {

PackUploader::PackUploader(SaveFn save, int max_uploads)
    : save_(std::move(save)),
      max_uploads_(std::max(1, max_uploads)),
      save_pool_(max_uploads_, SIZE_MAX) {}

Bytes PackUploader::TakeBuffer() {
  MutexLock lock(mu_);
  if (free_.empty()) return {};
  Bytes b = std::move(free_.back());
  free_.pop_back();
  return b;
}

Bytes PackUploader::TakePieceBuffer() {
  MutexLock lock(mu_);
  if (free_pieces_.empty()) return {};
  Bytes b = std::move(free_pieces_.back());
  free_pieces_.pop_back();
  return b;
}

void PackUploader::QueuePiece(PackPiece piece) {
  {
    MutexLock lock(mu_);
    queued_piece_bytes_ += piece.bytes.size();
  }
  pool_.Submit([this, piece = std::move(piece)]() mutable { RunPiece(piece); });
}

void PackUploader::RunPiece(PackPiece& piece) {
  std::exception_ptr err;
  try {
    ScopedTimer t(Stage::kWrite);
    piece.sink->Write(piece.bytes);
  } catch (...) {
    err = std::current_exception();
  }
  MutexLock lock(mu_);
  queued_piece_bytes_ -= piece.bytes.size();
  // A piece buffer of a stage's size is kept for the next stage (pieces never grow; only a
  // pack's last one, with the header, may have). As many are kept as can be queued, so a
  // steady stream of pieces reuses memory that is already mapped.
  if (piece.bytes.capacity() <= 2 * StreamedPackWriter::kPieceSize &&
      free_pieces_.size() < kMaxFreePieces) {
    piece.bytes.clear();
    free_pieces_.push_back(std::move(piece.bytes));
  }
  if (err && !error_) error_ = err;
  done_.NotifyAll();
}

void PackUploader::Throttle() {
  MutexLock lock(mu_);
  while (queued_piece_bytes_ > kMaxQueuedPieceBytes && !error_) done_.Wait(mu_);
  if (error_) std::rethrow_exception(error_);
}

void PackUploader::Upload(FinishedPack pack, std::vector<PackedBlob> blobs) {
  {
    MutexLock lock(mu_);
    while (pending_ >= static_cast<size_t>(max_uploads_) && !error_) done_.Wait(mu_);
    if (error_) std::rethrow_exception(error_);
    pending_++;
  }
  // Behind the pieces queued before it (a streamed pack's are all written when this job
  // runs), then to the save thread: the next pack's pieces are written meanwhile, while
  // this one is hashed or synced.
  pool_.Submit([this, pack = std::move(pack), blobs = std::move(blobs)]() mutable {
    save_pool_.Submit([this, pack = std::move(pack), blobs = std::move(blobs)]() mutable {
      Run(pack, std::move(blobs));
    });
  });
}

void PackUploader::Run(FinishedPack& pack, std::vector<PackedBlob> blobs) {
  std::exception_ptr err;
  try {
    save_(pack, std::move(blobs));
    pack.bytes.clear();
  } catch (...) {
    err = std::current_exception();
  }
  MutexLock lock(mu_);
  if (!err && pack.bytes.capacity() > 0 && free_.size() < 2) free_.push_back(std::move(pack.bytes));
  if (err && !error_) error_ = err;
  --pending_;
  done_.NotifyAll();
}

void PackUploader::Wait() {
  MutexLock lock(mu_);
  while (pending_ > 0) done_.Wait(mu_);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace haven
