#include "repo/pack_stream.h"

#include <utility>

#include "core/error.h"

namespace haven {

void PackSink::CheckUsable() {
  if (failed_ || !out_)
    Fail(ErrorCode::kFatal, "pack stream: an earlier write of this pack failed");
}

void PackSink::Write(ByteView bytes) {
  MutexLock lock(mu_);
  if (bytes.empty()) return;
  CheckUsable();
  failed_ = true;  // until the write and the hash are through
  out_->Append(bytes);
  hash_.Update(bytes);
  failed_ = false;
}

PackId PackSink::Id() {
  MutexLock lock(mu_);
  CheckUsable();
  return PackId(hash_.Finish());
}

void PackSink::Commit(const PackId& id) {
  MutexLock lock(mu_);
  CheckUsable();
  failed_ = true;
  out_->Commit(id.Hex());
  out_.reset();  // committed: nothing more may be written
  failed_ = false;
}

void StreamedPackWriter::Add(const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
                             PackPiece* piece) {
  blobs_.push_back(PackedBlob{type_, id, static_cast<uint32_t>(size_),
                              static_cast<uint32_t>(sealed.size()), uncompressed_length});
  size_ += sealed.size();
  if (stage_.capacity() == 0) {
    stage_ = take_buffer_();
    stage_.clear();
    if (stage_.capacity() < kPieceSize) stage_.reserve(kPieceSize);
  }
  stage_.insert(stage_.end(), sealed.begin(), sealed.end());
  if (stage_.size() < kPieceSize) return;
  piece->sink = sink_;
  piece->bytes = std::move(stage_);
  stage_ = Bytes();
}

void StreamedPackWriter::Finish(const crypto::CryptoKey& key, std::vector<PackedBlob>* blobs,
                                PackPiece* piece) {
  Bytes tail = SealedPackTail(key, blobs_);
  if (!piece->sink) {
    piece->bytes = std::move(stage_);
    stage_ = Bytes();
  }
  piece->bytes.insert(piece->bytes.end(), stage_.begin(), stage_.end());
  piece->bytes.insert(piece->bytes.end(), tail.begin(), tail.end());
  piece->sink = sink_;
  stage_ = Bytes();
  *blobs = std::move(blobs_);
  blobs_.clear();
}

}  // namespace haven
