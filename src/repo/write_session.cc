#include "repo/write_session.h"

#include <algorithm>
#include <bit>

#include "chunker/chunker.h"
#include "core/error.h"
#include "core/timings.h"
#include "crypto/seal.h"

namespace haven {

WriteSession::WriteSession(IndexedRepository& repo, WriteOptions opts)
    : repo_(repo),
      opts_(opts),
      uploader_([this](FinishedPack& pack, std::vector<PackedBlob> blobs) {
        SavePack(pack, std::move(blobs));
      },
      repo.backend().RoundTrips() ? kRoundTripUploads : 1) {
  if (const auto& cache = repo_.cache())
    on_tree_pack_ = [cache](const std::string& name) { cache->NoteTreePack(name); };
}

WriteSession::~WriteSession() = default;

// The uploader adds a pack to the index *before* it takes the pack's blobs out of
// in_flight_ (SavePack). So a blob found not in flight was either never saved here or is
// in the index by the time we look there afterwards: in flight first, then the index.
// (The other order has a window: not yet indexed, then no longer in flight.)
bool WriteSession::HasBlob(BlobType t, const BlobId& id) {
  {
    MutexLock lock(mu_);
    if (in_flight_[static_cast<int>(t)].count(id) > 0) return true;
  }
  return repo_.HasBlob(t, id);
}

int WriteSession::DataLevelFor(ByteView sample) const {
  if (opts_.compression != Compression::kAuto || repo_.config().version < 2) return 0;
  ScopedTimer timer(Stage::kCompress);
  try {
    return ChooseAutoLevel(sample);
  } catch (const Error&) {
    return 0;  // no choice: the mode's level (SealBlob reports a real zstd failure)
  }
}

bool WriteSession::SaveBlob(BlobType t, const BlobId& id, ByteView plain, int data_level) {
  if (repo_.HasBlob(t, id)) return false;  // most duplicates end here, without mu_
  const int ti = static_cast<int>(t);
  {
    MutexLock lock(mu_);
    if (!in_flight_[ti].insert(id).second) return false;
  }
  // Claimed; but its pack may have been indexed (and left in_flight_) between the check
  // above and the claim: look again (see HasBlob) and give the claim back if so.
  if (repo_.HasBlob(t, id)) {
    MutexLock lock(mu_);
    in_flight_[ti].erase(id);
    return false;
  }
  uint32_t ulen = 0;
  ByteView sealed;
  try {
    sealed = SealBlob(t, plain, /*skip_incompressible=*/true, &ulen, data_level);
  } catch (...) {
    ReleaseClaim(t, id);
    throw;
  }
  AppendSealed(t, id, sealed, ulen, plain.size());
  return true;
}

void WriteSession::ReleaseClaim(BlobType t, const BlobId& id) {
  MutexLock lock(mu_);
  ReleaseClaimLocked(t, id);
}

void WriteSession::ReleaseClaimLocked(BlobType t, const BlobId& id) {
  in_flight_[static_cast<int>(t)].erase(id);
}

bool WriteSession::SaveBlobCopy(BlobType t, const BlobId& id, ByteView plain, ByteView sealed,
                                uint32_t uncompressed_length) {
  {
    MutexLock lock(mu_);
    if (!in_flight_[static_cast<int>(t)].insert(id).second) return false;
  }
  bool compress_now = repo_.config().version >= 2 && uncompressed_length == 0 &&
                      !plain.empty() &&
                      (t == BlobType::kTree || opts_.compression != Compression::kOff);
  if (sealed.empty() || compress_now) {
    try {
      sealed = SealBlob(t, plain, /*skip_incompressible=*/false, &uncompressed_length);
    } catch (...) {
      ReleaseClaim(t, id);
      throw;
    }
  }
  AppendSealed(t, id, sealed, uncompressed_length, plain.size());
  return true;
}

ByteView WriteSession::SealBlob(BlobType t, ByteView plain, bool skip_incompressible,
                                uint32_t* uncompressed_length, int data_level) {
  // v2 compresses trees always and data unless compression is off (or, for new data,
  // the sample says it will not shrink); compression and sealing run in the caller.
  const Compression mode = opts_.compression;
  bool compress = repo_.config().version >= 2 && !plain.empty() &&
                  (t == BlobType::kTree ||
                   (mode != Compression::kOff &&
                    !(skip_incompressible && LooksIncompressible(plain))));
  // One per-thread buffer that only grows, never zero-filled: no allocation per blob, and
  // only the pages sealed blobs were written to are touched (a vector's resize zero-filled
  // each growth, then copied it: 4,700 page faults per box add of log.txt). A compressed
  // blob is compressed into it after the IV's place and sealed there in place (a second
  // buffer per thread held up to 8 MiB more: bench B1's peak RSS).
  thread_local HugeBuffer sealed;
  *uncompressed_length = 0;
  ByteView body = plain;
  if (compress) {
    int level = t == BlobType::kTree ? TreeZstdLevel(mode)
                : data_level > 0     ? data_level
                                     : DataZstdLevel(mode, plain.size());
    ScopedTimer timer(Stage::kCompress);
    const size_t n =
        ZstdCompressInto(plain, level, sealed, crypto::kIvSize, crypto::kTagSize);
    body = ByteView(sealed.data() + crypto::kIvSize, n);
    *uncompressed_length = static_cast<uint32_t>(plain.size());
  }
  const size_t n = body.size() + crypto::kOverhead;
  // (A compressed body lies in `sealed`, which ZstdCompressInto already sized: growing it
  // here would move the body.)
  if (!compress && sealed.size() < n) sealed.Grow(std::bit_ceil(n));
  ScopedTimer timer(Stage::kSeal);
  crypto::SealInto(repo_.key(), body, sealed.data());
  return ByteView(sealed.data(), n);
}

void WriteSession::AppendSealed(BlobType t, const BlobId& id, ByteView sealed,
                                uint32_t uncompressed_length, size_t plain_size) {
  if (t == BlobType::kData) {
    stats_.data_blobs++;
  } else {
    stats_.tree_blobs++;
  }
  stats_.data_added += plain_size;
  stats_.data_added_packed += sealed.size();
  FinishedPack full;
  std::vector<PackedBlob> blobs;
  std::vector<PackPiece> pieces;
  bool queued = false;
  {
    MutexLock lock(mu_);
    try {
      full = AddToPack(t, id, sealed, uncompressed_length, &blobs, &pieces);
    } catch (...) {
      // Not in a pack (no pack stream could be made: a full disk, no descriptors): give
      // the claim back, or a later copy of this blob would be taken as stored and a
      // snapshot would refer to a blob that no pack holds.
      ReleaseClaimLocked(t, id);
      throw;
    }
    for (PackPiece& piece : pieces) {  // under mu_: written in the order they were cut
      uploader_.QueuePiece(std::move(piece));
      queued = true;
    }
  }
  if (queued) uploader_.Throttle();
  if (!blobs.empty()) uploader_.Upload(std::move(full), std::move(blobs));
}

size_t WriteSession::OpenPack::Size() const {
  return streamed ? streamed->Size() : mem ? mem->Size() : 0;
}

size_t WriteSession::OpenPack::Count() const {
  return streamed ? streamed->Count() : mem ? mem->Count() : 0;
}

FinishedPack WriteSession::AddToPack(BlobType t, const BlobId& id, ByteView sealed,
                                     uint32_t uncompressed_length,
                                     std::vector<PackedBlob>* blobs,
                                     std::vector<PackPiece>* pieces) {
  OpenPack& open = packers_[static_cast<int>(t)];
  // Data packs go to a backend that can stream them (the local directory) as they fill,
  // so no data pack stays in memory; tree packs (small, and kept by the local cache) and
  // packs for other backends are built in memory. A pack closes once it reaches
  // pack_size, so it ends below pack_size + one blob.
  if (!open.streamed && !open.mem) {
    std::unique_ptr<PackStream> out;
    if (t == BlobType::kData) out = repo_.backend().NewPackStream();
    if (out)
      open.streamed = std::make_unique<StreamedPackWriter>(
          t, std::move(out), [this] { return uploader_.TakePieceBuffer(); });
    else
      open.mem = std::make_unique<PackWriter>(t, opts_.pack_size + chunker::kMaxSize + 4096,
                                              uploader_.TakeBuffer());
  }
  if (open.streamed)
    open.streamed->Add(id, sealed, uncompressed_length, pieces);
  else
    open.mem->Add(id, sealed, uncompressed_length);
  if (open.Size() < opts_.pack_size && open.Count() < kMaxPackBlobs) return {};
  return Finish(open, blobs, pieces);
}

FinishedPack WriteSession::Finish(OpenPack& open, std::vector<PackedBlob>* blobs,
                                  std::vector<PackPiece>* pieces) {
  FinishedPack full;
  if (open.streamed) {
    open.streamed->Finish(repo_.key(), blobs, pieces);
    full.sink = open.streamed->sink();
  } else {
    full.bytes = open.mem->Finish(repo_.key(), blobs);
  }
  open = OpenPack();  // the next pack takes a recycled buffer or a new stream
  return full;
}

void WriteSession::SavePack(FinishedPack& pack, std::vector<PackedBlob> blobs) {
  // A streamed pack's pieces were queued before it: all written by now, on this thread.
  PackId pid = pack.sink ? pack.sink->Id() : PackId(Sha256(pack.bytes));
  if (on_tree_pack_ && !blobs.empty() && blobs.front().type == BlobType::kTree)
    on_tree_pack_(pid.Hex());
  {
    ScopedTimer t(Stage::kWrite);
    if (pack.sink)
      pack.sink->Commit(pid);
    else
      repo_.backend().Save({FileType::kPack, pid.Hex()}, pack.bytes);
  }
  repo_.AddPack(pid, blobs);
  IndexFile full;
  {
    MutexLock lock(mu_);
    for (const PackedBlob& b : blobs) in_flight_[static_cast<int>(b.type)].erase(b.id);
    if (!opts_.write_index) return;
    pending_index_blobs_ += blobs.size();
    pending_index_.packs.push_back({pid, std::move(blobs)});
    if (pending_index_blobs_ >= kIndexFlushBlobs) full = TakePendingIndex();
  }
  WriteIndex(std::move(full));
}

IndexFile WriteSession::TakePendingIndex() {
  IndexFile f = std::move(pending_index_);
  pending_index_ = IndexFile();
  pending_index_blobs_ = 0;
  return f;
}

void WriteSession::WriteIndex(IndexFile f) {
  if (f.packs.empty()) return;
  FileId id;
  {
    ScopedTimer t(Stage::kIndex);
    id = repo_.SaveJsonPieces(FileType::kIndex, [&](const auto& put) { f.EmitJson(put); });
  }
  repo_.AddIndexFile(id);
}

void WriteSession::Flush() {
  for (int ti = 0; ti < 2; ++ti) {
    FinishedPack full;
    std::vector<PackedBlob> blobs;
    {
      MutexLock lock(mu_);
      std::vector<PackPiece> pieces;
      if (packers_[ti].Count() > 0) full = Finish(packers_[ti], &blobs, &pieces);
      for (PackPiece& piece : pieces) uploader_.QueuePiece(std::move(piece));
    }
    if (!blobs.empty()) uploader_.Upload(std::move(full), std::move(blobs));
  }
  uploader_.Wait();  // the index lists only packs that are saved
  IndexFile f;
  {
    MutexLock lock(mu_);
    f = TakePendingIndex();
  }
  WriteIndex(std::move(f));
}

}  // namespace haven
