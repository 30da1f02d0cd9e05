// The split roles: an opened Repository, the IndexedRepository loaded from it, and the
// WriteSession that saves blobs into it; and the dry-run decorator chosen at open.
#include "repo/write_session.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/dry_run_backend.h"
#include "backend/forwarding_backend.h"
#include "backend/local_backend.h"
#include "backend/mem_backend.h"
#include "backend/retry_backend.h"
#include "core/error.h"
#include "repo/indexed_repository.h"
#include "repo/lock.h"
#include "repo/repository.h"

namespace haven {
namespace {

const crypto::ScryptParams kScrypt{1024, 8, 1};

std::shared_ptr<MemBackend> NewRepo() {
  auto be = std::make_shared<MemBackend>();
  Repository::Init(*be, "pw", 2, kScrypt, 1);
  return be;
}

size_t Count(Backend& be, FileType t) {
  size_t n = 0;
  be.List(t, [&](const FileInfo&) { ++n; });
  return n;
}

Bytes Blob(int i) {
  std::string s = "blob number " + std::to_string(i);
  return Bytes(s.begin(), s.end());
}

TEST(WriteSession, BlobsAreVisibleThroughTheIndexedRepositoryAfterFlush) {
  auto be = NewRepo();
  auto opened = Repository::Open(be, "pw", 1);
  auto repo = IndexedRepository::Load(*opened);
  WriteSession session(*repo);
  std::vector<BlobId> ids;
  for (int i = 0; i < 5; ++i) {
    Bytes b = Blob(i);
    ids.emplace_back(Sha256(b));
    EXPECT_TRUE(session.SaveBlob(BlobType::kData, ids.back(), b));
  }
  session.Flush();
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(repo->HasBlob(BlobType::kData, ids[i]));
    EXPECT_EQ(repo->LoadBlob(BlobType::kData, ids[i]), Blob(i));
  }
  EXPECT_EQ(repo->index_files().size(), 1u);
  EXPECT_EQ(Count(*be, FileType::kIndex), 1u);
  EXPECT_EQ(session.stats().data_blobs.load(), 5u);
  // A fresh load from storage sees the same.
  auto again = IndexedRepository::Load(*opened);
  EXPECT_EQ(again->index().BlobCount(), 5u);
  // A second session over the loaded index stores nothing twice.
  WriteSession second(*again);
  EXPECT_FALSE(second.SaveBlob(BlobType::kData, ids[0], Blob(0)));
}

TEST(WriteSession, HasBlobSeesBlobsInFlight) {
  auto be = NewRepo();
  auto opened = Repository::Open(be, "pw", 1);
  auto repo = IndexedRepository::Load(*opened);
  WriteSession session(*repo);
  Bytes b = Blob(1);
  BlobId id(Sha256(b));
  ASSERT_TRUE(session.SaveBlob(BlobType::kData, id, b));
  // In an open pack: the session knows it, the index does not yet, nothing is stored.
  EXPECT_TRUE(session.HasBlob(BlobType::kData, id));
  EXPECT_FALSE(repo->HasBlob(BlobType::kData, id));
  EXPECT_FALSE(session.HasBlob(BlobType::kTree, id));
  EXPECT_FALSE(session.SaveBlob(BlobType::kData, id, b));
  EXPECT_EQ(Count(*be, FileType::kPack), 0u);
  session.Flush();
  EXPECT_TRUE(repo->HasBlob(BlobType::kData, id));
  EXPECT_EQ(Count(*be, FileType::kPack), 1u);
}

TEST(WriteSession, PackSizeFromWriteOptions) {
  auto be = NewRepo();
  auto opened = Repository::Open(be, "pw", 1);
  auto repo = IndexedRepository::Load(*opened);
  WriteOptions w;
  w.pack_size = WriteOptions::kMinPackSize;
  w.compression = Compression::kOff;
  WriteSession session(*repo, w);
  Bytes big(1 << 20);
  for (int i = 0; i < 9; ++i) {  // 9 MiB of incompressible-looking data: 2 full packs
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<uint8_t>((k * 131 + i * 7) ^ (k >> 9));
    session.SaveBlob(BlobType::kData, BlobId(Sha256(big)), big);
  }
  session.Flush();
  EXPECT_EQ(Count(*be, FileType::kPack), 3u);
}

// Storage where every request is a round trip: pack saves wait (up to 10 s) until two have
// been in flight at once, and the most in flight at once is recorded.
class OverlapBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  bool RoundTrips() const override { return true; }
  void Save(const Handle& h, ByteView data) override {
    if (h.type != FileType::kPack) return inner_->Save(h, data);
    {
      std::unique_lock<std::mutex> lock(mu_);
      peak_ = std::max(peak_, ++now_);
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::seconds(10), [&] { return peak_ >= 2; });
    }
    inner_->Save(h, data);
    std::lock_guard<std::mutex> lock(mu_);
    --now_;
  }
  int peak() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int now_ = 0, peak_ = 0;
};

// Where requests are round trips, two packs upload at once (one's round trips overlap
// the other's), never more: each holds its pack in memory.
TEST(WriteSession, TwoPacksUploadAtOnceWhereRequestsAreRoundTrips) {
  auto mem = NewRepo();
  auto be = std::make_shared<OverlapBackend>(mem);
  auto opened = Repository::Open(be, "pw", 1);
  auto repo = IndexedRepository::Load(*opened);
  WriteOptions w;
  w.pack_size = WriteOptions::kMinPackSize;
  w.compression = Compression::kOff;
  WriteSession session(*repo, w);
  EXPECT_EQ(session.uploads(), WriteSession::kRoundTripUploads);
  Bytes big(1 << 20);
  for (int i = 0; i < 21; ++i) {  // 21 MiB: 5 full packs and a last one
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<uint8_t>((k * 131 + i * 7) ^ (k >> 9));
    session.SaveBlob(BlobType::kData, BlobId(Sha256(big)), big);
  }
  session.Flush();
  EXPECT_EQ(be->peak(), 2);
  EXPECT_EQ(Count(*mem, FileType::kPack), 6u);
  auto reopened = Repository::Open(mem, "pw", 1);
  EXPECT_EQ(IndexedRepository::Load(*reopened)->index().BlobCount(), 21u);
  // A local directory (no round trips) uploads one pack at a time.
  auto plain = IndexedRepository::Load(*Repository::Open(mem, "pw", 1));
  WriteSession local(*plain);
  EXPECT_EQ(local.uploads(), 1);
}

// Over remote storage (requests are round trips, behind the RetryBackend every remote
// gets) data packs are spooled to temp files and uploaded with SaveFrom, never held whole
// in memory; tree packs, index files and the rest are saved from memory.
TEST(WriteSession, SpoolsDataPacksForRemoteStorage) {
  class Remote : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    bool RoundTrips() const override { return true; }
    void SaveFrom(const Handle& h, const SaveSource& src) override {
      if (h.type == FileType::kPack) spooled_packs++;
      Backend::SaveFrom(h, src);
    }
    std::atomic<int> spooled_packs{0};
  };
  auto mem = NewRepo();
  auto remote = std::make_shared<Remote>(mem);
  auto be = std::make_shared<RetryBackend>(remote);
  auto repo = IndexedRepository::Load(*Repository::Open(be, "pw", 1));
  WriteOptions w;
  w.pack_size = WriteOptions::kMinPackSize;
  w.compression = Compression::kOff;
  WriteSession session(*repo, w);
  Bytes big(1 << 20);
  for (int i = 0; i < 9; ++i) {  // 9 MiB: two full packs and a last one
    for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<uint8_t>((k * 131 + i * 7) ^ (k >> 9));
    session.SaveBlob(BlobType::kData, BlobId(Sha256(big)), big);
  }
  const std::string json = "{\"nodes\":[]}\n";
  Bytes tree(json.begin(), json.end());
  session.SaveBlob(BlobType::kTree, BlobId(Sha256(tree)), tree);
  session.Flush();
  EXPECT_EQ(Count(*mem, FileType::kPack), 4u);
  EXPECT_EQ(remote->spooled_packs, 3);  // the data packs, not the tree pack
  auto reopened = IndexedRepository::Load(*Repository::Open(mem, "pw", 1));
  EXPECT_EQ(reopened->index().BlobCount(), 10u);
  EXPECT_EQ(reopened->LoadBlob(BlobType::kData, BlobId(Sha256(big))), big);
}

// A blob whose pack could not be started (no pack stream: a full disk, no descriptors)
// is not left claimed: the failed SaveBlob throws, and the next copy of the blob is stored
// instead of being taken as in flight (a snapshot would refer to a blob no pack holds).
TEST(WriteSession, ABlobThatReachedNoPackIsNotLeftClaimed) {
  class FailingStream : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    std::unique_ptr<PackStream> NewPackStream() override {
      if (fail_.exchange(false)) throw Error(ErrorCode::kIo, "no descriptors left");
      return nullptr;
    }

   private:
    std::atomic<bool> fail_{true};
  };
  auto mem = NewRepo();
  auto be = std::make_shared<FailingStream>(mem);
  auto repo = IndexedRepository::Load(*Repository::Open(be, "pw", 1));
  WriteSession session(*repo);
  Bytes blob(4096, 9);
  const BlobId id(Sha256(blob));
  EXPECT_THROW(session.SaveBlob(BlobType::kData, id, blob), Error);
  EXPECT_FALSE(session.HasBlob(BlobType::kData, id));
  EXPECT_TRUE(session.SaveBlob(BlobType::kData, id, blob));
  session.Flush();
  auto reopened = IndexedRepository::Load(*Repository::Open(mem, "pw", 1));
  EXPECT_EQ(reopened->LoadBlob(BlobType::kData, id), blob);
}

// On a local directory the data packs are streamed to temp files while they fill (no
// pack held in memory): the packs land under their SHA-256, the index lists them, and
// neither a flushed nor a dropped session leaves a temp file.
TEST(WriteSession, StreamsDataPacksToALocalDirectory) {
  std::string root = ::testing::TempDir() + "haven_ws_XXXXXX";
  ASSERT_NE(::mkdtemp(root.data()), nullptr);
  struct Remove {
    std::string path;
    ~Remove() { std::filesystem::remove_all(path); }
  } cleanup{root};
  auto be = std::make_shared<LocalBackend>(root + "/repo");
  Repository::Init(*be, "pw", 2, kScrypt, 1);
  auto opened = Repository::Open(be, "pw", 2);
  auto repo = IndexedRepository::Load(*opened);
  auto temp_files = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root))
      if (e.path().filename().string().find("-tmp-") != std::string::npos) ++n;
    return n;
  };
  std::vector<std::pair<BlobId, Bytes>> saved;
  {
    WriteOptions w;
    w.pack_size = WriteOptions::kMinPackSize;
    w.compression = Compression::kOff;
    WriteSession session(*repo, w);
    Bytes big(1 << 20);
    for (int i = 0; i < 9; ++i) {  // 9 MiB: two full packs and an open one
      for (size_t k = 0; k < big.size(); ++k)
        big[k] = static_cast<uint8_t>((k * 131 + i * 7) ^ (k >> 9));
      saved.emplace_back(BlobId(Sha256(big)), big);
      session.SaveBlob(BlobType::kData, saved.back().first, big);
    }
    Bytes tree = Blob(1000);
    session.SaveBlob(BlobType::kTree, BlobId(Sha256(tree)), tree);
    EXPECT_GE(temp_files(), 1u);  // the open data pack (and one still being committed)
    session.Flush();
  }
  EXPECT_EQ(temp_files(), 0u);
  EXPECT_EQ(Count(*be, FileType::kPack), 4u);  // three data packs, one tree pack
  be->List(FileType::kPack, [&](const FileInfo& fi) {
    EXPECT_EQ(PackId(Sha256(be->Load({FileType::kPack, fi.name}))).Hex(), fi.name);
  });
  auto again = IndexedRepository::Load(*opened);
  for (const auto& [id, bytes] : saved) EXPECT_EQ(again->LoadBlob(BlobType::kData, id), bytes);

  {
    WriteSession dropped(*again);
    Bytes b = Blob(77);
    dropped.SaveBlob(BlobType::kData, BlobId(Sha256(b)), b);
    EXPECT_EQ(temp_files(), 1u);
  }  // not flushed: its open pack is dropped
  EXPECT_EQ(temp_files(), 0u);
  EXPECT_EQ(Count(*be, FileType::kPack), 4u);
}

// Opening over a DryRunBackend (backup/capture --dry-run) writes nothing but the lock.
TEST(DryRun, WritesNothingButTheLock) {
  auto be = NewRepo();
  const size_t keys = Count(*be, FileType::kKey);
  auto opened = Repository::Open(std::make_shared<DryRunBackend>(be), "pw", 1);
  {
    auto lock = Lock::Acquire(*opened, false);
    EXPECT_EQ(Count(*be, FileType::kLock), 1u);  // the lock is real
    auto repo = IndexedRepository::Load(*opened);
    WriteSession session(*repo);
    Bytes b = Blob(7);
    EXPECT_TRUE(session.SaveBlob(BlobType::kData, BlobId(Sha256(b)), b));
    session.Flush();
    repo->SaveJson(FileType::kSnapshot, "{}");
  }
  EXPECT_EQ(Count(*be, FileType::kLock), 0u);  // and released
  EXPECT_EQ(Count(*be, FileType::kPack), 0u);
  EXPECT_EQ(Count(*be, FileType::kIndex), 0u);
  EXPECT_EQ(Count(*be, FileType::kSnapshot), 0u);
  EXPECT_EQ(Count(*be, FileType::kKey), keys);
}

// The indexed repository shares the opened one's lock check: a lock taken before the
// index load guards commits through either, and its release clears it for both.
TEST(IndexedRepository, SharesTheLockCheck) {
  auto be = NewRepo();
  auto opened = Repository::Open(be, "pw", 1);
  int calls = 0;
  opened->set_lock_check([&] { ++calls; });
  auto repo = IndexedRepository::Load(*opened);
  repo->CheckLock();
  EXPECT_EQ(calls, 1);
  opened->set_lock_check(nullptr);
  repo->CheckLock();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace haven
