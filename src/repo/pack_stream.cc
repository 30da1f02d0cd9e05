#include "repo/pack_stream.h"

#include <algorithm>
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
                             std::vector<PackPiece>* pieces) {
  blobs_.push_back(PackedBlob{type_, id, static_cast<uint32_t>(size_),
                              static_cast<uint32_t>(sealed.size()), uncompressed_length});
  size_ += sealed.size();
  while (!sealed.empty()) {
    if (stage_.capacity() == 0) {
      stage_ = take_buffer_();
      stage_.clear();
      if (stage_.capacity() < kPieceSize) stage_.reserve(kPieceSize);
    }
    const size_t n = std::min(kPieceSize - stage_.size(), sealed.size());
    stage_.insert(stage_.end(), sealed.begin(), sealed.begin() + static_cast<long>(n));
    sealed = sealed.subspan(n);
    if (stage_.size() < kPieceSize) return;
    pieces->push_back(PackPiece{sink_, std::move(stage_)});
    stage_ = Bytes();
  }
}

void StreamedPackWriter::Finish(const crypto::CryptoKey& key, std::vector<PackedBlob>* blobs,
                                std::vector<PackPiece>* pieces) {
  Bytes tail = SealedPackTail(key, blobs_);
  Bytes last = std::move(stage_);
  stage_ = Bytes();
  last.insert(last.end(), tail.begin(), tail.end());
  pieces->push_back(PackPiece{sink_, std::move(last)});
  *blobs = std::move(blobs_);
  blobs_.clear();
}

}  // namespace haven
