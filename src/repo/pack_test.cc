#include "repo/pack.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/id.h"
#include "crypto/random.h"
#include "crypto/seal.h"
#include "repo/compress.h"

namespace haven {
namespace {

Bytes RandomBytes(size_t n) {
  Bytes b(n);
  if (n) crypto::RandomBytes(b.data(), n);
  return b;
}

struct Built {
  Bytes file;
  std::vector<PackedBlob> blobs;
  std::vector<Bytes> plains;
};

// A pack with a mix of uncompressed and zstd-compressed blobs of one type.
Built BuildPack(const crypto::CryptoKey& key, BlobType type, size_t count) {
  Built out;
  PackWriter w(type);
  for (size_t i = 0; i < count; ++i) {
    Bytes plain;
    if (i % 3 == 1) {
      plain = RandomBytes(1 + i * 37);  // incompressible, stored raw
    } else {
      std::string text;
      for (size_t k = 0; k < 20 + i * 13; ++k) text += "line " + std::to_string(k % 7) + "\n";
      plain.assign(text.begin(), text.end());
    }
    const bool compress = i % 2 == 0;
    BlobId id(Sha256(plain));
    Bytes body = compress ? ZstdCompress(plain, 3) : plain;
    w.Add(id, crypto::Seal(key, body), compress ? static_cast<uint32_t>(plain.size()) : 0);
    out.plains.push_back(std::move(plain));
  }
  EXPECT_EQ(w.Count(), count);
  out.file = w.Finish(key, &out.blobs);
  EXPECT_EQ(w.Count(), 0u);
  EXPECT_EQ(w.Size(), 0u);
  return out;
}

// Reads a header the way a reader with ranged loads does: starts with a tail of
// `first` bytes and asks for more when told to.
std::vector<PackedBlob> ReadHeader(const crypto::CryptoKey& key, ByteView file, size_t first) {
  uint64_t need = std::min<uint64_t>(first, file.size());
  for (int round = 0; round < 3; ++round) {
    ByteView tail = file.subspan(file.size() - need);
    uint64_t more = 0;
    auto blobs = ParsePackHeader(key, tail, file.size(), "p", &more);
    if (more == 0) return blobs;
    EXPECT_GT(more, need);
    EXPECT_LE(more, file.size());
    need = more;
  }
  ADD_FAILURE() << "no progress";
  return {};
}

void ExpectCorrupt(const crypto::CryptoKey& key, ByteView file, const std::string& msg = "") {
  try {
    ReadHeader(key, file, file.size());
    ADD_FAILURE() << "accepted a bad pack of " << file.size() << " bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find("pack p"), std::string::npos) << e.what();
    if (!msg.empty()) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
  }
}

void SetTrailer(Bytes& file, uint32_t v) {
  for (int i = 0; i < 4; ++i) file[file.size() - 4 + i] = static_cast<uint8_t>(v >> (8 * i));
}

// A pack whose plaintext header is `header` (sealed with key), preceded by `data_len` bytes.
Bytes PackWithHeader(const crypto::CryptoKey& key, ByteView header, size_t data_len) {
  Bytes file = RandomBytes(data_len);
  Bytes sealed = crypto::Seal(key, header);
  file.insert(file.end(), sealed.begin(), sealed.end());
  PutU32Le(file, static_cast<uint32_t>(sealed.size()));
  return file;
}

void PutEntry(Bytes& h, uint8_t type, uint32_t length, uint32_t ulen, uint8_t id_byte) {
  h.push_back(type);
  PutU32Le(h, length);
  if (type >= 2) PutU32Le(h, ulen);
  for (int i = 0; i < 32; ++i) h.push_back(id_byte);
}

TEST(Pack, RoundTripMixedCompression) {
  const auto key = crypto::CryptoKey::Random();
  for (BlobType type : {BlobType::kData, BlobType::kTree}) {
    Built p = BuildPack(key, type, 9);
    ASSERT_EQ(p.blobs.size(), 9u);
    auto parsed = ReadHeader(key, p.file, p.file.size());
    ASSERT_EQ(parsed.size(), p.blobs.size());
    uint64_t offset = 0;
    for (size_t i = 0; i < parsed.size(); ++i) {
      const PackedBlob& a = parsed[i];
      const PackedBlob& b = p.blobs[i];
      EXPECT_EQ(a.type, type);
      EXPECT_EQ(b.type, type);
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.offset, b.offset);
      EXPECT_EQ(a.offset, offset);
      EXPECT_EQ(a.length, b.length);
      EXPECT_EQ(a.uncompressed_length, b.uncompressed_length);
      EXPECT_EQ(a.uncompressed_length != 0, i % 2 == 0);
      EXPECT_EQ(a.PlainLength(), p.plains[i].size());
      offset += a.length;
      // Each blob opens on its own and hashes to its id.
      ByteView sealed = ByteView(p.file).subspan(a.offset, a.length);
      auto body = crypto::Open(key, sealed);
      ASSERT_TRUE(body.has_value());
      Bytes plain = a.uncompressed_length
                        ? ZstdDecompress(*body, a.uncompressed_length, a.uncompressed_length, "b")
                        : *body;
      EXPECT_EQ(plain, p.plains[i]);
      EXPECT_EQ(Sha256(plain), static_cast<const RawId&>(a.id));
    }
    // size = blobs + sealed header + 4; entries 41 B compressed, 37 B raw.
    EXPECT_EQ(p.file.size(), offset + PackHeaderSize(parsed));
    EXPECT_EQ(PackHeaderSize(parsed), 4 + 32 + 5 * 41 + 4 * 37u);
    EXPECT_EQ(GetU32Le(&p.file[p.file.size() - 4]), 32 + 5 * 41 + 4 * 37u);
  }
}

TEST(Pack, WriterIsReusableAfterFinish) {
  const auto key = crypto::CryptoKey::Random();
  PackWriter w(BlobType::kData);
  Bytes plain = RandomBytes(100);
  w.Add(BlobId(Sha256(plain)), crypto::Seal(key, plain), 0);
  std::vector<PackedBlob> b1, b2;
  Bytes f1 = w.Finish(key, &b1);
  w.Add(BlobId(Sha256(plain)), crypto::Seal(key, plain), 0);
  Bytes f2 = w.Finish(key, &b2);
  ASSERT_EQ(b2.size(), 1u);
  EXPECT_EQ(b2[0].offset, 0u);
  EXPECT_EQ(f2.size(), f1.size());
  EXPECT_EQ(ReadHeader(key, f2, f2.size()).size(), 1u);
}

TEST(Pack, EmptyHeaderPackParses) {
  const auto key = crypto::CryptoKey::Random();
  PackWriter w(BlobType::kData);
  std::vector<PackedBlob> blobs;
  Bytes f = w.Finish(key, &blobs);
  EXPECT_EQ(f.size(), 36u);
  EXPECT_TRUE(ReadHeader(key, f, f.size()).empty());
}

TEST(Pack, ShortTailAsksForMore) {
  const auto key = crypto::CryptoKey::Random();
  Built p = BuildPack(key, BlobType::kData, 5);
  const uint32_t hlen = GetU32Le(&p.file[p.file.size() - 4]);
  uint64_t need = 0;
  auto r = ParsePackHeader(key, ByteView(p.file).last(2), p.file.size(), "p", &need);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(need, 4u);
  r = ParsePackHeader(key, ByteView(p.file).last(10), p.file.size(), "p", &need);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(need, hlen + 4u);
  r = ParsePackHeader(key, ByteView(p.file).last(hlen + 4), p.file.size(), "p", &need);
  EXPECT_EQ(need, 0u);
  EXPECT_EQ(r.size(), 5u);
  // Speculative first read as restic does (651 bytes) gives the same answer.
  EXPECT_EQ(ReadHeader(key, p.file, 651).size(), 5u);
}

TEST(Pack, EveryTruncationIsCorruptOrCorrect) {
  const auto key = crypto::CryptoKey::Random();
  Built p = BuildPack(key, BlobType::kTree, 4);
  const size_t n = p.file.size();
  size_t accepted = 0;
  for (size_t cut = 0; cut < n; ++cut) {
    // Cut off the end (as a short upload would) and, separately, the beginning.
    for (int side = 0; side < 2; ++side) {
      ByteView f = side == 0 ? ByteView(p.file).first(cut) : ByteView(p.file).last(cut);
      for (size_t first : {size_t{4}, size_t{64}, f.size()}) {
        try {
          auto blobs = ReadHeader(key, f, first);
          // Only acceptable when it describes exactly what is there.
          uint64_t sum = 0;
          for (const auto& b : blobs) sum += b.length;
          EXPECT_EQ(sum + PackHeaderSize(blobs), f.size());
          ++accepted;
        } catch (const Error& e) {
          ASSERT_EQ(e.code(), ErrorCode::kCorrupt) << cut << ": " << e.what();
        }
      }
    }
  }
  EXPECT_EQ(accepted, 0u);  // a strict prefix or suffix never matches its header
  EXPECT_EQ(ReadHeader(key, p.file, 4).size(), 4u);
}

TEST(Pack, HeaderLengthBounds) {
  const auto key = crypto::CryptoKey::Random();
  Built p = BuildPack(key, BlobType::kData, 3);
  Bytes f = p.file;
  SetTrailer(f, 0);
  ExpectCorrupt(key, f, "header length is zero");
  SetTrailer(f, 31);
  ExpectCorrupt(key, f, "header length is too short");
  SetTrailer(f, 1);
  ExpectCorrupt(key, f, "header length is too short");
  SetTrailer(f, kMaxHeaderSize + 1);
  ExpectCorrupt(key, f, "exceeds the 16 MiB limit");
  SetTrailer(f, 0xffffffffu);
  ExpectCorrupt(key, f, "exceeds the 16 MiB limit");
  SetTrailer(f, static_cast<uint32_t>(f.size() - 3));
  ExpectCorrupt(key, f, "is larger than the file");
  // Exactly the whole file (no room for data) is allowed by the bound but fails the MAC.
  SetTrailer(f, static_cast<uint32_t>(f.size() - 4));
  ExpectCorrupt(key, f, "verification failed");
  // Shorter than the 36-byte minimum.
  ExpectCorrupt(key, Bytes(35, 0), "too short");
  ExpectCorrupt(key, Bytes(), "too short");
}

TEST(Pack, LargeHeaderLengthWithinLimitButBeyondFile) {
  const auto key = crypto::CryptoKey::Random();
  Bytes f(1000, 0);
  SetTrailer(f, kMaxHeaderSize);  // 16 MiB allowed in principle, but the file is small
  ExpectCorrupt(key, f, "is larger than the file");
}

TEST(Pack, InvalidEntryType) {
  const auto key = crypto::CryptoKey::Random();
  for (uint8_t t : {4, 5, 0x80, 0xff}) {
    Bytes h;
    PutEntry(h, 0, 40, 0, 1);
    PutEntry(h, 1, 40, 0, 2);  // any type byte >= 4 is refused
    h[37] = t;
    ExpectCorrupt(key, PackWithHeader(key, h, 80),
                  "invalid header entry type " + std::to_string(t) + " at offset 37");
  }
}

TEST(Pack, HeaderEntryErrors) {
  // Direct parser checks.
  auto expect = [](const Bytes& h, const std::string& msg) {
    try {
      ParseHeaderEntries(h, "p");
      ADD_FAILURE() << "accepted: " << msg;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
  };
  Bytes h;
  PutEntry(h, 0, 40, 0, 1);
  h.pop_back();
  expect(h, "truncated header entry");
  h.clear();
  PutEntry(h, 3, 40, 0, 1);
  expect(h, "compressed entry with zero length");
  h.clear();
  PutEntry(h, 0, 31, 0, 1);
  expect(h, "blob length too small");
  h.clear();
  PutEntry(h, 0, 0xffffff00u, 0, 1);
  PutEntry(h, 0, 0x200u, 0, 2);
  expect(h, "exceed 4 GiB");
  h.clear();
  h.push_back(2);
  expect(h, "truncated header entry");

  // A valid mix: offsets accumulate, types map correctly.
  h.clear();
  PutEntry(h, 0, 40, 0, 1);
  PutEntry(h, 1, 50, 0, 2);
  PutEntry(h, 2, 60, 100, 3);
  PutEntry(h, 3, 70, 200, 4);
  auto e = ParseHeaderEntries(h, "p");
  ASSERT_EQ(e.size(), 4u);
  const BlobType types[] = {BlobType::kData, BlobType::kTree, BlobType::kData, BlobType::kTree};
  const uint32_t offsets[] = {0, 40, 90, 150};
  const uint32_t ulens[] = {0, 0, 100, 200};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(e[i].type, types[i]);
    EXPECT_EQ(e[i].offset, offsets[i]);
    EXPECT_EQ(e[i].uncompressed_length, ulens[i]);
    EXPECT_EQ(e[i].id.bytes[0], i + 1);
  }
  EXPECT_TRUE(ParseHeaderEntries({}, "p").empty());
}

TEST(Pack, HeaderSizeMismatch) {
  const auto key = crypto::CryptoKey::Random();
  Bytes h;
  PutEntry(h, 0, 40, 0, 1);
  ExpectCorrupt(key, PackWithHeader(key, h, 39), "header describes 40 bytes of blobs");
  ExpectCorrupt(key, PackWithHeader(key, h, 41), "but the pack holds 41");
  ReadHeader(key, PackWithHeader(key, h, 40), 1000);  // exact: fine
}

TEST(Pack, FlippedHeaderByteIsCorrupt) {
  const auto key = crypto::CryptoKey::Random();
  Built p = BuildPack(key, BlobType::kData, 4);
  const uint32_t hlen = GetU32Le(&p.file[p.file.size() - 4]);
  const size_t start = p.file.size() - 4 - hlen;
  for (size_t i = start; i < p.file.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80}) {
      Bytes f = p.file;
      f[i] ^= mask;
      ExpectCorrupt(key, f);
    }
  }
  // Flipping data bytes does not affect the header (blobs are checked on load).
  Bytes f = p.file;
  f[0] ^= 1;
  EXPECT_EQ(ReadHeader(key, f, f.size()).size(), 4u);
}

TEST(Pack, WrongKeyIsCorrupt) {
  const auto key = crypto::CryptoKey::Random();
  Built p = BuildPack(key, BlobType::kData, 2);
  ExpectCorrupt(crypto::CryptoKey::Random(), p.file, "verification failed");
}

TEST(Pack, BlobTypeNames) {
  EXPECT_STREQ(BlobTypeName(BlobType::kData), "data");
  EXPECT_STREQ(BlobTypeName(BlobType::kTree), "tree");
}

}  // namespace
}  // namespace haven
