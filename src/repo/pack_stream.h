// A data pack written to its backend while it fills (Backend::NewPackStream: the local
// directory's temp file), so that no pack is held in memory: the peak RSS of a cold backup
// or a repack is the chunks in flight, not three 16 MiB pack buffers.
//
// The WriteSession adds blobs to a StreamedPackWriter under its own lock; the writer
// stages them and cuts its bytes into pieces of exactly kPieceSize (small blobs cost no
// write each; a piece buffer never grows, so the uploader can recycle every one of them and
// no blob's bytes land in freshly mapped memory, a page fault per 4 KiB). The session
// queues each piece to the PackUploader's thread in the order they were cut, and that
// thread writes and hashes them (as it hashed and wrote a whole pack before), so the
// workers never wait on the disk. The pack's id is the SHA-256 of all its pieces, known
// once the last one is written.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "core/bytes.h"
#include "core/id.h"
#include "core/mutex.h"
#include "core/sha256.h"
#include "crypto/crypto_key.h"
#include "repo/pack.h"

namespace haven {

// The stream of one pack and the SHA-256 of what was written to it.
class PackSink {
 public:
  explicit PackSink(std::unique_ptr<PackStream> out) : out_(std::move(out)) {}

  // Appends and hashes; after a failed write every later call throws (the pack is lost).
  void Write(ByteView bytes) EXCLUDES(mu_);
  // After the last piece: the pack's id (once).
  PackId Id() EXCLUDES(mu_);
  // Stores the pack under its id (Backend's PackStream::Commit).
  void Commit(const PackId& id) EXCLUDES(mu_);

 private:
  void CheckUsable() REQUIRES(mu_);
  Mutex mu_;
  std::unique_ptr<PackStream> out_ GUARDED_BY(mu_);
  Sha256Stream hash_ GUARDED_BY(mu_);
  bool failed_ GUARDED_BY(mu_) = false;
};

// Bytes of one pack due to be written.
struct PackPiece {
  std::shared_ptr<PackSink> sink;  // null: nothing to write
  Bytes bytes;
};

class StreamedPackWriter {
 public:
  static constexpr size_t kPieceSize = 1 << 20;

  // `take_buffer` gives an emptied buffer for the next stage (recycled pieces).
  StreamedPackWriter(BlobType type, std::unique_ptr<PackStream> out,
                     std::function<Bytes()> take_buffer)
      : type_(type),
        sink_(std::make_shared<PackSink>(std::move(out))),
        take_buffer_(std::move(take_buffer)) {}

  BlobType type() const { return type_; }
  size_t Size() const { return size_; }
  size_t Count() const { return blobs_.size(); }
  // Adds an already sealed blob (copied); every piece it fills (exactly kPieceSize bytes:
  // a large blob is cut across pieces) is appended to *pieces, in order.
  void Add(const BlobId& id, ByteView sealed, uint32_t uncompressed_length,
           std::vector<PackPiece>* pieces);
  // Closes the pack: the staged rest and the header are appended to *pieces as its last
  // piece; the blobs go into *blobs. Once that piece is written, the sink holds the pack.
  void Finish(const crypto::CryptoKey& key, std::vector<PackedBlob>* blobs,
              std::vector<PackPiece>* pieces);
  const std::shared_ptr<PackSink>& sink() const { return sink_; }

 private:
  BlobType type_;
  std::shared_ptr<PackSink> sink_;
  std::function<Bytes()> take_buffer_;
  Bytes stage_;
  std::vector<PackedBlob> blobs_;
  size_t size_ = 0;
};

}  // namespace haven
