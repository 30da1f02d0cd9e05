// ForEachBlobInOrder: a file's blobs handed over in order whatever the jobs, compressed and
// uncompressed alike; the same blob twice; a damaged or missing blob fails naming it, after
// the blobs before it and never with one after it; LoadBlobInto equals LoadBlob.
#include "repo/blob_stream.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/write_session.h"

namespace haven {
namespace {

const crypto::ScryptParams kScrypt{1024, 8, 1};

struct Fixture {
  std::shared_ptr<MemBackend> mem = std::make_shared<MemBackend>();
  std::unique_ptr<Repository> opened;
  std::unique_ptr<IndexedRepository> repo;
  std::vector<BlobId> ids;
  std::vector<Bytes> blobs;

  // n blobs of different sizes, odd ones random; the first half stored uncompressed
  // (compression off), the second compressed.
  explicit Fixture(int n) {
    Repository::Init(*mem, "pw", 2, kScrypt, 1);
    opened = Repository::Open(mem, "pw", 2);
    uint64_t x = 0x9e3779b97f4a7c15;
    for (int half = 0; half < 2; ++half) {
      auto writer = IndexedRepository::Load(*opened);
      WriteOptions wo;
      wo.pack_size = 64 << 10;  // several packs
      wo.compression = half == 0 ? Compression::kOff : Compression::kAuto;
      WriteSession session(*writer, wo);
      for (int i = half * n / 2; i < (half + 1) * n / 2; ++i) {
        Bytes b(1000 + 7919 * static_cast<size_t>(i % 13));
        for (size_t j = 0; j < b.size(); ++j) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          b[j] = i % 2 ? static_cast<uint8_t>(x) : static_cast<uint8_t>('a' + (j / 50 + i) % 26);
        }
        BlobId id(Sha256(b));
        session.SaveBlob(BlobType::kData, id, b);
        ids.push_back(id);
        blobs.push_back(std::move(b));
      }
      session.Flush();
    }
    repo = IndexedRepository::Load(*opened);
  }

  // What ForEachBlobInOrder hands over, concatenated, and the error it ends with.
  std::pair<std::vector<Bytes>, std::string> Read(const std::vector<BlobId>& content, int jobs) {
    std::vector<Bytes> got;
    std::string error;
    try {
      ForEachBlobInOrder(*repo, content, jobs,
                         [&](ByteView v) { got.emplace_back(v.begin(), v.end()); });
    } catch (const Error& e) {
      error = e.what();
    }
    return {got, error};
  }
};

TEST(BlobStream, HandsOverEveryBlobInOrderWhateverTheJobs) {
  Fixture f(40);
  std::vector<BlobId> content = f.ids;
  content.push_back(f.ids[3]);  // a file may hold a blob twice
  std::vector<Bytes> want = f.blobs;
  want.push_back(f.blobs[3]);
  for (int jobs : {1, 2, 4, 16}) {
    auto [got, error] = f.Read(content, jobs);
    EXPECT_EQ(error, "") << "jobs " << jobs;
    EXPECT_EQ(got, want) << "jobs " << jobs;
  }
  EXPECT_EQ(f.Read({}, 4).first.size(), 0u);
  HugeBuffer buf;
  for (size_t i = 0; i < f.ids.size(); ++i) {
    ByteView v = f.repo->LoadBlobInto(BlobType::kData, f.ids[i], buf);
    EXPECT_EQ(Bytes(v.begin(), v.end()), f.repo->LoadBlob(BlobType::kData, f.ids[i]));
  }
}

// A record (a capture state's, or an index made elsewhere) that claims a 4 GiB plaintext
// does not grow the caller's buffer to 4 GiB: the copy is read as LoadBlob reads it, and
// being wrong, the blob comes through the index.
TEST(BlobStream, AClaimedHugePlaintextDoesNotGrowTheBuffer) {
  Fixture f(30);
  const size_t i = 20;  // compressed (second half, text)
  std::optional<BlobLocation> where = f.repo->Locate(BlobType::kData, f.ids[i]);
  ASSERT_TRUE(where.has_value());
  ASSERT_NE(where->uncompressed_length, 0u);
  auto lazy = IndexedRepository::Load(*f.opened, IndexLoad::kOnFirstUse);
  KnownBlob k{BlobType::kData, f.ids[i], *where};
  k.where.uncompressed_length = 0xffffffffu;
  lazy->AddKnownBlobs({k});
  HugeBuffer buf;
  ByteView v = lazy->LoadBlobInto(BlobType::kData, f.ids[i], buf);
  EXPECT_EQ(Bytes(v.begin(), v.end()), f.blobs[i]);
  EXPECT_LE(buf.size(), size_t{32} << 20);
  EXPECT_TRUE(lazy->index_loaded());
}

TEST(BlobStream, ADamagedOrMissingBlobFailsNamingItAfterTheBlobsBeforeIt) {
  Fixture f(30);
  // The blob at position 17 is not in the index.
  std::vector<BlobId> content = f.ids;
  BlobId missing(Sha256(AsBytes(std::string("not stored"))));
  content[17] = missing;
  for (int jobs : {1, 2, 4}) {
    auto [got, error] = f.Read(content, jobs);
    EXPECT_NE(error.find(missing.Hex()), std::string::npos) << error;
    ASSERT_EQ(got.size(), 17u) << "jobs " << jobs;
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], f.blobs[i]);
  }
  // A sink that throws stops the stream with its own error (and no blob is handed over
  // after it).
  int calls = 0;
  EXPECT_THROW(ForEachBlobInOrder(*f.repo, std::vector<BlobId>(f.ids.begin() + 20, f.ids.end()),
                                  2,
                                  [&](ByteView) {
                                    if (++calls == 3) Fail(ErrorCode::kIo, "sink full");
                                  }),
               Error);
  EXPECT_EQ(calls, 3);
  // A damaged pack: every blob in it fails its MAC; the first of them is named.
  std::string victim;
  f.mem->List(FileType::kPack, [&](const FileInfo& fi) {
    if (victim.empty()) victim = fi.name;
  });
  Bytes pack = f.mem->Load({FileType::kPack, victim});
  for (size_t i = 0; i + 1 < pack.size(); i += 97) pack[i] ^= 0x55;
  f.mem->Remove({FileType::kPack, victim});
  f.mem->Save({FileType::kPack, victim}, pack);
  auto [got, error] = f.Read(f.ids, 2);
  EXPECT_NE(error, "");
  EXPECT_LT(got.size(), f.ids.size());
  EXPECT_NE(error.find(f.ids[got.size()].Hex()), std::string::npos) << error;
}

}  // namespace
}  // namespace haven
