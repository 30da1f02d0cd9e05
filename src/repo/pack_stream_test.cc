// StreamedPackWriter: the pieces it cuts, written in order, make the same pack a
// PackWriter builds in memory (blob offsets, header), and its id is their SHA-256.
#include "repo/pack_stream.h"

#include <gtest/gtest.h>

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

void WriteOut(PackPiece& piece) {
  if (!piece.sink) return;
  piece.sink->Write(piece.bytes);
  piece = PackPiece();
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
    PackPiece piece;
    w.Add(BlobId(Sha256(plain)), sealed.back(), 0, &piece);
    WriteOut(piece);
  }
  size_t before_finish = c.bytes.size();
  EXPECT_LT(before_finish, w.Size());  // the last blobs are still staged
  EXPECT_EQ(w.Count(), sizes.size());
  std::vector<PackedBlob> blobs;
  PackPiece last;
  w.Finish(key, &blobs, &last);
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
  PackPiece piece;
  w.Add(BlobId(Sha256(big)), big, 0, &piece);
  ASSERT_TRUE(piece.sink);
  c.fail_next = true;
  EXPECT_EQ(CatchError([&] { WriteOut(piece); }).code(), ErrorCode::kIo);
  c.fail_next = false;
  std::vector<PackedBlob> blobs;
  PackPiece last;
  w.Finish(key, &blobs, &last);
  // Later pieces and the commit refuse: the pack misses bytes.
  EXPECT_EQ(CatchError([&] { WriteOut(last); }).code(), ErrorCode::kFatal);
  EXPECT_EQ(CatchError([&] { w.sink()->Id(); }).code(), ErrorCode::kFatal);
  EXPECT_TRUE(c.committed.empty());
}

}  // namespace
}  // namespace haven
