// StreamedPackWriter: the pieces it cuts, written in order, make the same pack a
// PackWriter builds in memory (blob offsets, header), and its id is their SHA-256.
#include "repo/pack_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/backend_conformance_test.h"
#include "core/error.h"
#include "crypto/random.h"
#include "crypto/seal.h"

namespace haven {
namespace {

using conformance::CatchError;

// Collects what is appended; Commit records the name.
struct Collected {
  Bytes bytes;
  std::vector<size_t> appends;
  std::string committed;
  bool fail_next = false;
};

class CollectStream : public PackStream {
 public:
  explicit CollectStream(Collected* c) : c_(c) {}
  void Append(ByteView data) override {
    if (c_->fail_next) Fail(ErrorCode::kIo, "disk full");
    c_->bytes.insert(c_->bytes.end(), data.begin(), data.end());
    c_->appends.push_back(data.size());
  }
  void Commit(const std::string& name) override { c_->committed = name; }

 private:
  Collected* c_;
};

Bytes Filled(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 10));
  return b;
}

void WriteOut(std::vector<PackPiece>& pieces) {
  for (PackPiece& piece : pieces) piece.sink->Write(piece.bytes);
  pieces.clear();
}

Bytes NoBuffer() { return {}; }

TEST(StreamedPackWriter, PiecesMakeThePackAndItsId) {
  const auto key = crypto::CryptoKey::Random();
  Collected c;
  StreamedPackWriter w(BlobType::kData, std::make_unique<CollectStream>(&c), NoBuffer);
  // Blobs are staged and written in pieces of about 1 MiB.
  std::vector<Bytes> sealed;
  std::vector<size_t> sizes = {100, 5000, 300000, 700000, 2 << 20, 10, 900000, 100000};
  for (size_t i = 0; i < sizes.size(); ++i) {
    Bytes plain = Filled(sizes[i], static_cast<uint8_t>(i));
    sealed.push_back(crypto::Seal(key, plain));
    std::vector<PackPiece> pieces;
    w.Add(BlobId(Sha256(plain)), sealed.back(), 0, &pieces);
    WriteOut(pieces);
  }
  size_t before_finish = c.bytes.size();
  EXPECT_LT(before_finish, w.Size());  // the last blobs are still staged
  EXPECT_EQ(w.Count(), sizes.size());
  std::vector<PackedBlob> blobs;
  std::vector<PackPiece> last;
  w.Finish(key, &blobs, &last);
  ASSERT_EQ(last.size(), 1u);
  WriteOut(last);
  for (size_t n : c.appends) EXPECT_GT(n, 0u);
  EXPECT_LT(c.appends.size(), sizes.size() + 2);  // not one write per blob

  uint64_t need = 0;
  std::vector<PackedBlob> parsed = ParsePackHeader(key, c.bytes, c.bytes.size(), "p", &need);
  ASSERT_EQ(parsed.size(), sizes.size());
  for (size_t i = 0; i < parsed.size(); ++i) {
    EXPECT_EQ(parsed[i].offset, blobs[i].offset);
    EXPECT_EQ(Bytes(c.bytes.begin() + parsed[i].offset,
                    c.bytes.begin() + parsed[i].offset + parsed[i].length),
              sealed[i]);
  }
  PackId id = w.sink()->Id();
  EXPECT_EQ(id, PackId(Sha256(c.bytes)));
  w.sink()->Commit(id);
  EXPECT_EQ(c.committed, id.Hex());
}

TEST(StreamedPackWriter, AFailedWriteLosesThePack) {
  const auto key = crypto::CryptoKey::Random();
  Collected c;
  StreamedPackWriter w(BlobType::kData, std::make_unique<CollectStream>(&c), NoBuffer);
  Bytes big = crypto::Seal(key, Filled(3 << 20, 1));
  std::vector<PackPiece> pieces;
  w.Add(BlobId(Sha256(big)), big, 0, &pieces);
  ASSERT_FALSE(pieces.empty());
  c.fail_next = true;
  EXPECT_EQ(CatchError([&] { WriteOut(pieces); }).code(), ErrorCode::kIo);
  c.fail_next = false;
  std::vector<PackedBlob> blobs;
  std::vector<PackPiece> last;
  w.Finish(key, &blobs, &last);
  // Later pieces and the commit refuse: the pack misses bytes.
  EXPECT_EQ(CatchError([&] { WriteOut(last); }).code(), ErrorCode::kFatal);
  EXPECT_EQ(CatchError([&] { w.sink()->Id(); }).code(), ErrorCode::kFatal);
  EXPECT_TRUE(c.committed.empty());
}

// Every piece but a pack's last is exactly kPieceSize and never outgrows the buffer it was
// given (so the uploader can recycle every one): a blob larger than a piece is cut across
// pieces, and the pieces still make the pack byte for byte.
TEST(StreamedPackWriter, PiecesAreCutAtTheirSizeAcrossBlobs) {
  const auto key = crypto::CryptoKey::Random();
  constexpr size_t kPiece = StreamedPackWriter::kPieceSize;
  Collected c;
  std::vector<const uint8_t*> given;  // the buffers handed out, to see they are not moved
  StreamedPackWriter w(BlobType::kData, std::make_unique<CollectStream>(&c), [&] {
    Bytes b;
    b.reserve(kPiece);
    given.push_back(b.data());
    return b;
  });
  std::vector<Bytes> sealed;
  std::vector<PackPiece> pieces;
  for (size_t n : {kPiece - 100, size_t(5000), 3 * kPiece + 17, kPiece, size_t(10)}) {
    Bytes plain = Filled(n, static_cast<uint8_t>(n));
    sealed.push_back(crypto::Seal(key, plain));
    w.Add(BlobId(Sha256(plain)), sealed.back(), 0, &pieces);
  }
  const size_t total = w.Size();
  ASSERT_EQ(pieces.size(), total / kPiece);
  for (const PackPiece& p : pieces) {
    EXPECT_EQ(p.bytes.size(), kPiece);
    EXPECT_EQ(p.bytes.capacity(), kPiece);  // filled in place, never reallocated
    EXPECT_NE(std::find(given.begin(), given.end(), p.bytes.data()), given.end());
  }
  std::vector<PackedBlob> blobs;
  w.Finish(key, &blobs, &pieces);
  ASSERT_EQ(pieces.size(), total / kPiece + 1);
  WriteOut(pieces);
  uint64_t need = 0;
  std::vector<PackedBlob> parsed = ParsePackHeader(key, c.bytes, c.bytes.size(), "p", &need);
  ASSERT_EQ(parsed.size(), sealed.size());
  for (size_t i = 0; i < parsed.size(); ++i)
    EXPECT_EQ(Bytes(c.bytes.begin() + parsed[i].offset,
                    c.bytes.begin() + parsed[i].offset + parsed[i].length),
              sealed[i]);
  EXPECT_EQ(w.sink()->Id(), PackId(Sha256(c.bytes)));
}

}  // namespace
}  // namespace haven
