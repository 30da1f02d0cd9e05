#include "repo/index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

template <typename T>
T RandomId(std::mt19937_64& rng) {
  T id;
  for (size_t i = 0; i < 32; i += 8) {
    uint64_t v = rng();
    for (size_t k = 0; k < 8; ++k) id.bytes[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  return id;
}

PackedBlob Blob(BlobType t, const BlobId& id, uint32_t offset, uint32_t length,
                uint32_t ulen = 0) {
  return PackedBlob{t, id, offset, length, ulen};
}

BlobId Id(uint8_t fill) {
  BlobId id;
  id.bytes.fill(fill);
  return id;
}
PackId PId(uint8_t fill) {
  PackId id;
  id.bytes.fill(fill);
  return id;
}

// The blobs of one pack as indexed, by offset (through ForEach: the index has no view by
// pack of its own; maintenance's IndexPackView and PackTable are those).
std::vector<PackedBlob> PackBlobs(const Index& idx, const PackId& pack) {
  std::vector<PackedBlob> out;
  idx.ForEach([&](const PackId& p, const PackedBlob& b) {
    if (p == pack) out.push_back(b);
  });
  std::stable_sort(out.begin(), out.end(),
                   [](const PackedBlob& a, const PackedBlob& b) { return a.offset < b.offset; });
  return out;
}

TEST(Index, EmptyLookups) {
  Index idx;
  EXPECT_FALSE(idx.Has(BlobType::kData, Id(1)));
  EXPECT_TRUE(idx.Lookup(BlobType::kData, Id(1)).empty());
  EXPECT_EQ(idx.BlobCount(), 0u);
  EXPECT_EQ(idx.PackCount(), 0u);
  EXPECT_FALSE(idx.HasPack(PId(1)));
  EXPECT_TRUE(PackBlobs(idx, PId(1)).empty());
}

TEST(Index, AddAndLookup) {
  Index idx;
  idx.AddPack(PId(0xa1), {Blob(BlobType::kData, Id(1), 0, 100), Blob(BlobType::kData, Id(2), 100, 50, 200)});
  idx.AddPack(PId(0xa2), {Blob(BlobType::kTree, Id(3), 0, 77)});
  EXPECT_EQ(idx.BlobCount(), 3u);
  EXPECT_EQ(idx.PackCount(), 2u);
  EXPECT_TRUE(idx.HasPack(PId(0xa1)));
  EXPECT_TRUE(idx.HasPack(PId(0xa2)));
  EXPECT_FALSE(idx.HasPack(PId(0xa3)));

  auto l = idx.Lookup(BlobType::kData, Id(2));
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].pack, PId(0xa1));
  EXPECT_EQ(l[0].offset, 100u);
  EXPECT_EQ(l[0].length, 50u);
  EXPECT_EQ(l[0].uncompressed_length, 200u);
  EXPECT_EQ(l[0].PlainLength(), 200u);
  l = idx.Lookup(BlobType::kData, Id(1));
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].PlainLength(), 68u);
  EXPECT_TRUE(idx.Has(BlobType::kTree, Id(3)));
  EXPECT_FALSE(idx.Has(BlobType::kData, Id(3)));
  EXPECT_FALSE(idx.Has(BlobType::kTree, Id(1)));

  auto pb = PackBlobs(idx, PId(0xa1));
  ASSERT_EQ(pb.size(), 2u);
  EXPECT_EQ(pb[0].id, Id(1));
  EXPECT_EQ(pb[1].id, Id(2));
  EXPECT_EQ(pb[1].uncompressed_length, 200u);

  std::vector<std::pair<PackId, BlobId>> seen;
  idx.ForEach([&](const PackId& p, const PackedBlob& b) { seen.push_back({p, b.id}); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], std::make_pair(PId(0xa1), Id(1)));
  EXPECT_EQ(seen[2], std::make_pair(PId(0xa2), Id(3)));
}

TEST(Index, DuplicatesAllReturned) {
  Index idx;
  idx.AddPack(PId(1), {Blob(BlobType::kData, Id(9), 0, 40)});
  idx.AddPack(PId(2), {Blob(BlobType::kData, Id(8), 0, 40), Blob(BlobType::kData, Id(9), 40, 41)});
  idx.AddPack(PId(3), {Blob(BlobType::kData, Id(9), 0, 42)});
  auto l = idx.Lookup(BlobType::kData, Id(9));
  ASSERT_EQ(l.size(), 3u);
  std::vector<uint32_t> lengths;
  for (const auto& x : l) lengths.push_back(x.length);
  std::sort(lengths.begin(), lengths.end());
  EXPECT_EQ(lengths, (std::vector<uint32_t>{40, 41, 42}));
  EXPECT_EQ(idx.BlobCount(), 4u);
}

TEST(Index, TypesAreDistinct) {
  Index idx;
  // Same id as data blob and as tree blob: two different entries.
  idx.AddPack(PId(1), {Blob(BlobType::kData, Id(5), 0, 100)});
  idx.AddPack(PId(2), {Blob(BlobType::kTree, Id(5), 0, 200)});
  auto d = idx.Lookup(BlobType::kData, Id(5));
  auto t = idx.Lookup(BlobType::kTree, Id(5));
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(d[0].pack, PId(1));
  EXPECT_EQ(d[0].length, 100u);
  EXPECT_EQ(t[0].pack, PId(2));
  EXPECT_EQ(t[0].length, 200u);
}

TEST(Index, CollidingPrefixes) {
  // Ids that share the 8-byte prefix used for hashing still differ.
  Index idx;
  std::vector<PackedBlob> blobs;
  for (int i = 0; i < 50; ++i) {
    BlobId id = Id(0x11);
    id.bytes[31] = static_cast<uint8_t>(i);
    blobs.push_back(Blob(i % 2 ? BlobType::kTree : BlobType::kData, id, i * 40, 40));
  }
  idx.AddPack(PId(1), blobs);
  for (int i = 0; i < 50; ++i) {
    BlobId id = Id(0x11);
    id.bytes[31] = static_cast<uint8_t>(i);
    BlobType t = i % 2 ? BlobType::kTree : BlobType::kData;
    auto l = idx.Lookup(t, id);
    ASSERT_EQ(l.size(), 1u) << i;
    EXPECT_EQ(l[0].offset, uint32_t(i * 40));
    BlobType other = i % 2 ? BlobType::kData : BlobType::kTree;
    EXPECT_FALSE(idx.Has(other, id));
  }
}

TEST(Index, TwoHundredThousandBlobs) {
  std::mt19937_64 rng(4242);
  Index idx;
  struct Want {
    BlobType type;
    BlobId id;
    PackId pack;
    uint32_t offset;
  };
  std::vector<Want> want;
  const int kPacks = 200, kPerPack = 1000;
  for (int p = 0; p < kPacks; ++p) {
    PackId pid = RandomId<PackId>(rng);
    std::vector<PackedBlob> blobs;
    uint32_t off = 0;
    BlobType t = p % 5 == 0 ? BlobType::kTree : BlobType::kData;
    for (int i = 0; i < kPerPack; ++i) {
      BlobId id = RandomId<BlobId>(rng);
      uint32_t len = 32 + static_cast<uint32_t>(rng() % 5000);
      blobs.push_back(Blob(t, id, off, len));
      want.push_back({t, id, pid, off});
      off += len;
    }
    idx.AddPack(pid, blobs);
  }
  ASSERT_EQ(idx.BlobCount(), size_t(kPacks * kPerPack));
  EXPECT_EQ(idx.PackCount(), size_t(kPacks));
  for (const Want& w : want) {
    auto l = idx.Lookup(w.type, w.id);
    ASSERT_EQ(l.size(), 1u);
    ASSERT_EQ(l[0].pack, w.pack);
    ASSERT_EQ(l[0].offset, w.offset);
    ASSERT_FALSE(idx.Has(w.type == BlobType::kData ? BlobType::kTree : BlobType::kData, w.id));
  }
  for (int i = 0; i < 100000; ++i) {
    BlobId id = RandomId<BlobId>(rng);
    ASSERT_FALSE(idx.Has(BlobType::kData, id));
    ASSERT_TRUE(idx.Lookup(BlobType::kTree, id).empty());
  }
  size_t n = 0;
  idx.ForEach([&](const PackId&, const PackedBlob&) { ++n; });
  EXPECT_EQ(n, want.size());
}

TEST(Index, FindAndFindManyGiveFirstPositions) {
  // Uniform ids (the interpolation's case) mixed with skewed ones: runs that share all
  // bytes but the last, and ids at the extremes of a bucket, plus duplicates.
  std::mt19937_64 rng(5);
  std::vector<PackedBlob> a, b;
  for (uint32_t i = 0; i < 20000; ++i)
    a.push_back(Blob(i % 3 ? BlobType::kData : BlobType::kTree, RandomId<BlobId>(rng), i * 50, 50));
  for (int i = 0; i < 300; ++i) {
    BlobId id = Id(0x42);
    id.bytes[2] = static_cast<uint8_t>(i % 3 == 0 ? 0x00 : i % 3 == 1 ? 0xff : 0x80);
    id.bytes[31] = static_cast<uint8_t>(i);
    id.bytes[30] = static_cast<uint8_t>(i >> 8);
    a.push_back(Blob(BlobType::kData, id, 1000000 + i * 50, 50));
  }
  for (size_t i = 0; i < a.size(); i += 7) b.push_back(a[i]);  // duplicates in another pack
  Index idx;
  idx.AddPack(PId(1), a);
  idx.AddPack(PId(2), b);
  idx.Compact();
  std::vector<size_t> first[2];
  first[0].assign(idx.Positions(BlobType::kData), Index::npos);
  first[1].assign(idx.Positions(BlobType::kTree), Index::npos);
  idx.ForEachPosition([&](BlobType t, size_t pos, size_t f, uint32_t, const PackedBlob&) {
    first[static_cast<int>(t)][pos] = f;
  });
  std::vector<BlobId> ids[2];
  for (const PackedBlob& x : a) ids[static_cast<int>(x.type)].push_back(x.id);
  for (int t = 0; t < 2; ++t) {
    // absent: random ids and neighbours of present ones
    for (int i = 0; i < 2000; ++i) ids[t].push_back(RandomId<BlobId>(rng));
    for (size_t i = 0; i < 2000 && i < a.size(); ++i) {
      BlobId n = a[i].id;
      n.bytes[31] ^= 1;
      ids[t].push_back(n);
    }
    const BlobType type = static_cast<BlobType>(t);
    std::vector<size_t> many(ids[t].size());
    idx.FindMany(type, ids[t].data(), ids[t].size(), many.data());
    for (size_t i = 0; i < ids[t].size(); ++i) {
      const size_t pos = idx.Find(type, ids[t][i]);
      ASSERT_EQ(many[i], pos) << i;
      if (!idx.Has(type, ids[t][i])) {
        ASSERT_EQ(pos, Index::npos) << i;
        continue;
      }
      ASSERT_NE(pos, Index::npos) << i;
      EXPECT_EQ(idx.EntryAt(type, pos, nullptr).id, ids[t][i]);
      EXPECT_EQ(first[t][pos], pos);
    }
  }
}

TEST(Index, LoadParallelMatchesAddPackAndStaysCompact) {
  std::mt19937_64 rng(77);
  // 64 "files" of 4 packs x 1000 blobs, one blob of each file also in another pack.
  std::vector<std::vector<std::pair<PackId, std::vector<PackedBlob>>>> files(64);
  for (auto& f : files)
    for (int p = 0; p < 4; ++p) {
      std::vector<PackedBlob> blobs;
      BlobType t = p == 0 ? BlobType::kTree : BlobType::kData;
      for (uint32_t i = 0; i < 1000; ++i) blobs.push_back(Blob(t, RandomId<BlobId>(rng), i * 100, 100));
      f.push_back({RandomId<PackId>(rng), blobs});
    }
  files[1][1].second.push_back(files[0][1].second[5]);  // a duplicate across files
  files[1][1].second.back().offset = 100000;
  Index serial, parallel;
  for (const auto& f : files)
    for (const auto& [id, blobs] : f) serial.AddPack(id, blobs);
  // Each file as the JSON restic writes, read in pieces of every size from 1 byte to the
  // whole text (the scanner's window refills at every boundary); every 4th file is not in
  // the compact layout (a space) or claims an unclean end, and goes to the general parser.
  std::vector<std::string> json(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    IndexFile f;
    for (const auto& [id, blobs] : files[i]) f.packs.push_back({id, blobs});
    json[i] = f.ToJson();
    if (i % 8 == 3) json[i].insert(1, " ");
  }
  std::atomic<int> general{0};
  parallel.LoadParallel(files.size(), 4, [&](size_t i, const Index::ParseFn& parse) {
    size_t pos = 0;
    const size_t piece = i == 0 ? json[i].size() : i % 13 + 1;
    Index::FileText text;
    text.name = "file" + std::to_string(i);
    text.read = [&](char* dst, size_t cap) {
      size_t n = std::min({cap, piece, json[i].size() - pos});
      std::memcpy(dst, json[i].data() + pos, n);
      pos += n;
      return n;
    };
    text.whole = [&] {
      ++general;
      return json[i];
    };
    if (i % 8 == 7) text.complete = [] { return false; };
    parse(text);
  });
  EXPECT_EQ(general.load(), 16);
  ASSERT_EQ(parallel.BlobCount(), serial.BlobCount());
  EXPECT_EQ(parallel.PackCount(), serial.PackCount());
  for (const auto& f : files)
    for (const auto& [id, blobs] : f) {
      EXPECT_TRUE(parallel.HasPack(id));
      EXPECT_EQ(parallel.IsTreePack(id), blobs.front().type == BlobType::kTree);
      for (const PackedBlob& b : blobs) {
        auto a = serial.Lookup(b.type, b.id), c = parallel.Lookup(b.type, b.id);
        ASSERT_EQ(a.size(), c.size());
        ASSERT_FALSE(c.empty());
        for (size_t k = 0; k < a.size(); ++k) {
          bool found = false;  // the order of duplicates may differ (pack numbers)
          for (const BlobLocation& l : c)
            found |= l.pack == a[k].pack && l.offset == a[k].offset && l.length == a[k].length &&
                     l.uncompressed_length == a[k].uncompressed_length;
          EXPECT_TRUE(found);
        }
        EXPECT_EQ(parallel.Lookup(b.type, b.id).size(), b.id == files[0][1].second[5].id ? 2u : 1u);
      }
    }
  // The design budget: <= 48 bytes per blob resident (here with the fixed shard overhead of a
  // small index excluded: 512 shards * (header + 1 KiB table)).
  size_t fixed = 512 * (sizeof(void*) * 8 + 257 * 4);
  EXPECT_LE(parallel.MemoryUsage() - std::min(fixed, parallel.MemoryUsage()),
            48 * parallel.BlobCount());
  // Later additions merge into the loaded shards.
  BlobId extra = RandomId<BlobId>(rng);
  parallel.AddPack(RandomId<PackId>(rng), {Blob(BlobType::kData, extra, 0, 60)});
  EXPECT_TRUE(parallel.Has(BlobType::kData, extra));
  EXPECT_FALSE(parallel.Has(BlobType::kTree, extra));
}

// ---- IndexFile JSON ----

IndexFile SampleFile() {
  IndexFile f;
  f.packs.push_back({PId(0xaa), {Blob(BlobType::kData, Id(1), 0, 100, 300),
                                 Blob(BlobType::kData, Id(2), 100, 4705577, 4705427)}});
  f.packs.push_back({PId(0xbb), {Blob(BlobType::kTree, Id(3), 0, 253, 0),
                                 Blob(BlobType::kTree, Id(4), 253, 0xffffffffu, 0xffffffffu)}});
  f.packs.push_back({PId(0xcc), {}});
  return f;
}

TEST(IndexFile, FastScannerAndGeneralParserAgree) {
  // restic's compact layout takes the fast scanner; the same content with whitespace,
  // reordered fields or supersedes takes simdjson. Both must give the same file.
  IndexFile f = SampleFile();
  std::string compact = f.ToJson();
  std::string spaced = compact;
  for (size_t i = 0; (i = spaced.find("\",\"", i)) != std::string::npos; i += 3) spaced.insert(i + 1, " ");
  ASSERT_NE(spaced, compact);
  IndexFile a = IndexFile::Parse(compact, "a"), b = IndexFile::Parse(spaced, "b");
  EXPECT_EQ(a.ToJson(), compact);
  EXPECT_EQ(b.ToJson(), compact);
  std::string sup = compact.substr(0, compact.size() - 2) + ",\"supersedes\":[\"" + Id(7).Hex() + "\"]}";
  IndexFile c = IndexFile::Parse(sup, "c");
  EXPECT_EQ(c.ToJson(), compact);
  ASSERT_EQ(c.supersedes.size(), 1u);
  EXPECT_EQ(c.supersedes[0], Id(7));
  // invalid sizes are refused whichever path reads them
  std::string bad = compact;
  bad.replace(bad.find("\"length\":100"), 14, "\"length\":10");
  EXPECT_THROW(IndexFile::Parse(bad, "bad"), Error);
}

TEST(IndexFile, ExactJson) {
  IndexFile f;
  f.packs.push_back({PId(0xaa), {Blob(BlobType::kData, Id(1), 0, 100, 300),
                                 Blob(BlobType::kTree, Id(2), 100, 50, 0)}});
  f.supersedes.push_back(Id(7));
  const std::string a(64, 'a');
  std::string id1, id2;
  for (int i = 0; i < 32; ++i) id1 += "01", id2 += "02";
  EXPECT_EQ(f.ToJson(), "{\"packs\":[{\"id\":\"" + a + "\",\"blobs\":[{\"id\":\"" + id1 +
                            "\",\"type\":\"data\",\"offset\":0,\"length\":100,"
                            "\"uncompressed_length\":300},{\"id\":\"" +
                            id2 + "\",\"type\":\"tree\",\"offset\":100,\"length\":50}]}]}\n");
  // supersedes is never written.
  EXPECT_EQ(f.ToJson().find("supersedes"), std::string::npos);
  EXPECT_EQ(IndexFile().ToJson(), "{\"packs\":[]}\n");
}

// EmitJson hands out the text in pieces of about 64 KiB that make up ToJson exactly; prune's
// EmitIndexJson over any pack source gives the same text.
TEST(IndexFile, JsonInPieces) {
  std::mt19937_64 rng(3);
  IndexFile f;
  for (int p = 0; p < 40; ++p) {
    IndexFile::Pack pack{RandomId<PackId>(rng), {}};
    for (int i = 0; i < 100; ++i)
      pack.blobs.push_back(Blob(rng() & 1 ? BlobType::kTree : BlobType::kData,
                                RandomId<BlobId>(rng), static_cast<uint32_t>(rng()),
                                static_cast<uint32_t>(rng()),
                                rng() & 1 ? static_cast<uint32_t>(rng()) : 0));
    f.packs.push_back(std::move(pack));
  }
  std::vector<std::string> pieces;
  f.EmitJson([&](std::string_view piece) { pieces.emplace_back(piece); });
  ASSERT_GT(pieces.size(), 4u);
  std::string joined;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i + 1 < pieces.size()) {
      EXPECT_GE(pieces[i].size(), 64u << 10);
      EXPECT_LT(pieces[i].size(), 96u << 10);  // one pack of 100 blobs past 64 KiB at most
    }
    joined += pieces[i];
  }
  EXPECT_EQ(joined, f.ToJson());
  EXPECT_EQ(IndexFile::Parse(joined, "p").ToJson(), joined);
  std::string other;
  EmitIndexJson(
      f.packs.size(),
      [&](std::string& out, size_t k) {
        IndexFile::AppendPackJson(out, f.packs[k].id, f.packs[k].blobs);
      },
      [&](std::string_view piece) { other += piece; });
  EXPECT_EQ(other, joined);
  std::string none;
  EmitIndexJson(0, nullptr, [&](std::string_view piece) { none += piece; });
  EXPECT_EQ(none, "{\"packs\":[]}\n");
}

TEST(IndexFile, RoundTrip) {
  const IndexFile f = SampleFile();
  const std::string json = f.ToJson();
  ASSERT_EQ(json.back(), '\n');
  IndexFile g = IndexFile::Parse(json, "x");
  ASSERT_EQ(g.packs.size(), f.packs.size());
  for (size_t p = 0; p < f.packs.size(); ++p) {
    EXPECT_EQ(g.packs[p].id, f.packs[p].id);
    ASSERT_EQ(g.packs[p].blobs.size(), f.packs[p].blobs.size());
    for (size_t i = 0; i < f.packs[p].blobs.size(); ++i) {
      const auto& a = f.packs[p].blobs[i];
      const auto& b = g.packs[p].blobs[i];
      EXPECT_EQ(a.type, b.type);
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.offset, b.offset);
      EXPECT_EQ(a.length, b.length);
      EXPECT_EQ(a.uncompressed_length, b.uncompressed_length);
    }
  }
  EXPECT_TRUE(g.supersedes.empty());
  EXPECT_EQ(g.ToJson(), json);
  // Uncompressed blobs: the key is omitted, not written as 0.
  EXPECT_EQ(json.find("\"uncompressed_length\":0"), std::string::npos);
  EXPECT_NE(json.find("\"length\":253}"), std::string::npos);
}

TEST(IndexFile, RandomRoundTrip) {
  std::mt19937_64 rng(1);
  IndexFile f;
  for (int p = 0; p < 30; ++p) {
    IndexFile::Pack pack{RandomId<PackId>(rng), {}};
    for (int i = 0; i < 40; ++i)
      pack.blobs.push_back(Blob(rng() & 1 ? BlobType::kTree : BlobType::kData,
                                RandomId<BlobId>(rng), static_cast<uint32_t>(rng()),
                                32 + static_cast<uint32_t>(rng() % 0xffffffc0u),
                                rng() & 1 ? static_cast<uint32_t>(rng()) : 0));
    f.packs.push_back(std::move(pack));
  }
  const std::string json = f.ToJson();
  EXPECT_EQ(IndexFile::Parse(json, "r").ToJson(), json);
}

TEST(IndexFile, OldArrayForm) {
  const std::string a(64, 'a'), b(64, 'b');
  IndexFile f = IndexFile::Parse(
      "[{\"id\":\"" + a + "\",\"blobs\":[{\"id\":\"" + b +
          "\",\"type\":\"tree\",\"offset\":7,\"length\":99}]}]",
      "old");
  ASSERT_EQ(f.packs.size(), 1u);
  EXPECT_EQ(f.packs[0].id.Hex(), a);
  ASSERT_EQ(f.packs[0].blobs.size(), 1u);
  EXPECT_EQ(f.packs[0].blobs[0].type, BlobType::kTree);
  EXPECT_EQ(f.packs[0].blobs[0].offset, 7u);
  EXPECT_EQ(f.packs[0].blobs[0].length, 99u);
  EXPECT_EQ(f.packs[0].blobs[0].uncompressed_length, 0u);
}

TEST(IndexFile, SupersedesParsedNotWritten) {
  const std::string a(64, 'a'), c(64, 'c'), d(64, 'd');
  IndexFile f = IndexFile::Parse(
      "{\"supersedes\":[\"" + c + "\",\"" + d + "\"],\"packs\":[{\"id\":\"" + a +
          "\",\"blobs\":[]}],\"packs_to_delete\":[],\"future\":{\"x\":1}}",
      "s");
  ASSERT_EQ(f.supersedes.size(), 2u);
  EXPECT_EQ(f.supersedes[0].Hex(), c);
  EXPECT_EQ(f.supersedes[1].Hex(), d);
  ASSERT_EQ(f.packs.size(), 1u);
  EXPECT_EQ(f.ToJson(), "{\"packs\":[{\"id\":\"" + a + "\",\"blobs\":[]}]}\n");
}

TEST(IndexFile, NullPacksIsEmpty) {
  EXPECT_TRUE(IndexFile::Parse("{\"packs\":null}", "n").packs.empty());
}

void ExpectCorrupt(const std::string& json, const std::string& msg = "") {
  try {
    IndexFile::Parse(json, "bad");
    ADD_FAILURE() << "accepted: " << json;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find("index bad"), std::string::npos) << e.what();
    if (!msg.empty()) {
      EXPECT_NE(std::string(e.what()).find(msg), std::string::npos) << e.what();
    }
  }
}

std::string OneBlob(const std::string& fields) {
  return "{\"packs\":[{\"id\":\"" + std::string(64, 'a') + "\",\"blobs\":[{" + fields + "}]}]}";
}

TEST(IndexFile, BadInputIsCorrupt) {
  const std::string b = "\"id\":\"" + std::string(64, 'b') + "\"";
  ExpectCorrupt("", "invalid JSON");
  ExpectCorrupt("{\"packs\":[", "invalid JSON");
  ExpectCorrupt("not json", "invalid JSON");
  ExpectCorrupt("{}", "missing \"packs\"");
  ExpectCorrupt("{\"packs\":5}", "missing \"packs\"");
  ExpectCorrupt("{\"packs\":[{\"blobs\":[]}]}", "pack without id");
  ExpectCorrupt("{\"packs\":[{\"id\":\"xyz\",\"blobs\":[]}]}", "invalid pack id");
  ExpectCorrupt("{\"packs\":[{\"id\":\"" + std::string(63, 'a') + "\",\"blobs\":[]}]}",
                "invalid pack id");
  ExpectCorrupt("{\"packs\":[{\"id\":\"" + std::string(64, 'g') + "\",\"blobs\":[]}]}",
                "invalid pack id");
  ExpectCorrupt("{\"packs\":[{\"id\":\"" + std::string(64, 'a') + "\"}]}", "pack without blobs");
  ExpectCorrupt("{\"packs\":[5]}");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":0"), "incomplete blob entry");
  ExpectCorrupt(OneBlob("\"id\":\"zz\",\"type\":\"data\",\"offset\":0,\"length\":40"),
                "invalid blob id");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"Data\",\"offset\":0,\"length\":40"),
                "invalid blob type \"Data\"");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"metadata\",\"offset\":0,\"length\":40"),
                "invalid blob type");
  ExpectCorrupt(OneBlob(b + ",\"type\":1,\"offset\":0,\"length\":40"), "incomplete blob entry");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":-1,\"length\":40"));
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":\"0\",\"length\":40"));
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":4294967296,\"length\":40"),
                "invalid sizes");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":0,\"length\":31"), "invalid sizes");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":0,\"length\":4294967296"),
                "invalid sizes");
  ExpectCorrupt(
      OneBlob(b + ",\"type\":\"data\",\"offset\":0,\"length\":40,\"uncompressed_length\":\"x\""),
      "invalid uncompressed_length");
  ExpectCorrupt(OneBlob(b + ",\"type\":\"data\",\"offset\":0,\"length\":40,"
                            "\"uncompressed_length\":4294967296"),
                "invalid sizes");
  // Valid for contrast.
  EXPECT_EQ(IndexFile::Parse(OneBlob(b + ",\"type\":\"data\",\"offset\":0,\"length\":40"), "ok")
                .packs.size(),
            1u);
}

TEST(IndexFile, MutationsNeverCrash) {
  const std::string json = SampleFile().ToJson();
  std::mt19937 rng(5);
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string m = json;
    for (int e = 0; e < 3 && !m.empty(); ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[pos] = "{}[]\",:0a-9x"[rng() % 12]; break;
        case 1: m.erase(pos, 1 + rng() % 6); break;
        default: m.resize(pos); break;
      }
    }
    try {
      IndexFile::Parse(m, "m");
      ++ok;
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
    }
  }
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace haven
