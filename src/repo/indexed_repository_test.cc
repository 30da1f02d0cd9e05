// IndexedRepository::Load and Repository::LoadSnapshots over slow storage: how many reads
// of index and snapshot files are in flight at once (issue 16: many when they come from
// remote storage, few when the local cache holds them).
#include "repo/indexed_repository.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/cache_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"
#include "core/error.h"
#include "repo/read_concurrency.h"
#include "repo/write_session.h"

namespace haven {
namespace {

const crypto::ScryptParams kScrypt{1024, 8, 1};

// Every read takes 20 ms (a round trip) and reads of index and snapshot files are held
// until none has started for 300 ms, so the peak in flight is the code's and not the
// scheduler's (test_load_trace.h); 8 connections: remote storage, 32 readers when cold.
std::shared_ptr<testing::LoadTraceBackend> SlowReads(std::shared_ptr<Backend> inner) {
  auto slow = std::make_shared<testing::LoadTraceBackend>(std::move(inner), std::chrono::milliseconds(20), 8);
  slow->HoldUntilQuiet(FileType::kIndex, std::chrono::milliseconds(300));
  slow->HoldUntilQuiet(FileType::kSnapshot, std::chrono::milliseconds(300));
  return slow;
}

constexpr int kFiles = 40;

// A repository with kFiles index files (one blob each) and kFiles snapshots.
std::shared_ptr<MemBackend> RepoWithManyFiles() {
  auto mem = std::make_shared<MemBackend>();
  Repository::Init(*mem, "pw", 2, kScrypt, 1);
  auto opened = Repository::Open(mem, "pw", 1);
  auto indexed = IndexedRepository::Load(*opened);
  WriteSession session(*indexed);
  for (int i = 0; i < kFiles; ++i) {
    const std::string data = "blob " + std::to_string(i);
    session.SaveBlob(BlobType::kData, BlobId(Sha256(AsBytes(data))), AsBytes(data));
    session.Flush();  // one index file per flush
    opened->SaveJson(FileType::kSnapshot,
                     "{\"time\":\"2024-01-0" + std::to_string(1 + i % 9) + "T00:00:" +
                         std::to_string(10 + i) + "Z\",\"tree\":\"" + std::string(64, 'a') +
                         "\",\"paths\":[\"/x\"],\"hostname\":\"h\",\"username\":\"u\"}");
  }
  return mem;
}

TEST(IndexLoad, ManyReadsAtOnceFromRemoteStorage) {
  auto slow = SlowReads(RepoWithManyFiles());
  auto opened = Repository::Open(slow, "pw", 1);  // one parser thread
  auto indexed = IndexedRepository::Load(*opened);
  EXPECT_EQ(indexed->index_files().size(), size_t{kFiles});
  EXPECT_EQ(indexed->index().BlobCount(), size_t{kFiles});
  EXPECT_GE(slow->PeakOfType(FileType::kIndex), 16);
  EXPECT_LE(slow->PeakOfType(FileType::kIndex), kColdReaders);
  EXPECT_EQ(opened->LoadSnapshots().size(), size_t{kFiles});
  EXPECT_GE(slow->PeakOfType(FileType::kSnapshot), 16);
}

TEST(IndexLoad, FewReadsAtOnceWhenTheLocalCacheHoldsTheFiles) {
  char tmpl[] = "/tmp/haven_idxcache_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  auto cache = std::make_shared<CacheBackend>(RepoWithManyFiles(), dir);
  auto slow = SlowReads(cache);  // counts reads whether cached or not
  auto opened = Repository::Open(slow, "pw", 2);
  cache->SetRepositoryId(opened->config().id);
  opened->set_cache(cache);
  IndexedRepository::Load(*opened);  // cold: fills the cache
  opened->LoadSnapshots();
  EXPECT_GE(slow->PeakOfType(FileType::kIndex), 16);
  slow->Reset();
  // Warm: only upper bounds are checked, which need no hold.
  slow->HoldUntilQuiet(FileType::kIndex, std::chrono::milliseconds(0));
  slow->HoldUntilQuiet(FileType::kSnapshot, std::chrono::milliseconds(0));
  auto indexed = IndexedRepository::Load(*opened);
  EXPECT_EQ(indexed->index().BlobCount(), size_t{kFiles});
  EXPECT_GE(slow->PeakOfType(FileType::kIndex), 1);
  EXPECT_LE(slow->PeakOfType(FileType::kIndex), kWarmReaders);
  EXPECT_EQ(opened->LoadSnapshots().size(), size_t{kFiles});
  EXPECT_LE(slow->PeakOfType(FileType::kSnapshot), kWarmReaders);
  std::filesystem::remove_all(dir);
}

// A failed read fails the load (and stops the readers) instead of hanging or being skipped.
TEST(IndexLoad, AFailedReadFailsTheLoad) {
  auto mem = RepoWithManyFiles();
  auto opened = Repository::Open(mem, "pw", 2);
  std::string victim;
  mem->List(FileType::kIndex, [&](const FileInfo& fi) {
    if (victim.empty()) victim = fi.name;
  });
  mem->Remove({FileType::kIndex, victim});
  mem->Save({FileType::kIndex, victim}, AsBytes("short"));  // listed with a wrong size
  EXPECT_THROW(IndexedRepository::Load(*opened), Error);
}

// IndexLoad::kOnFirstUse: the files are listed (index_files) but not read until a call
// needs the index; the first of many concurrent callers reads them once, the others wait
// for it; a read error is thrown to the caller that needed the index, and the next call
// tries again (it never leaves an empty index behind).
TEST(IndexLoad, DeferredToFirstUse) {
  auto mem = RepoWithManyFiles();
  auto traced = std::make_shared<testing::LoadTraceBackend>(mem, std::chrono::milliseconds(0), 2);
  auto opened = Repository::Open(traced, "pw", 2);
  std::string victim;
  mem->List(FileType::kIndex, [&](const FileInfo& fi) {
    if (victim.empty()) victim = fi.name;
  });
  const Bytes good = mem->Load({FileType::kIndex, victim});
  const std::string data = "blob 7";
  const BlobId id(Sha256(AsBytes(data)));

  auto lazy = IndexedRepository::Load(*opened, IndexLoad::kOnFirstUse);
  EXPECT_FALSE(lazy->index_loaded());
  EXPECT_EQ(lazy->index_files().size(), size_t{kFiles});
  EXPECT_TRUE(traced->Loads(FileType::kIndex).empty());
  // A damaged file (same size): the call that needs the index fails, twice.
  Bytes bad = good;
  bad[bad.size() / 2] ^= 1;
  mem->Remove({FileType::kIndex, victim});
  mem->Save({FileType::kIndex, victim}, bad);
  EXPECT_THROW(lazy->HasBlob(BlobType::kData, id), Error);
  EXPECT_THROW(lazy->LoadBlob(BlobType::kData, id), Error);
  EXPECT_FALSE(lazy->index_loaded());
  // Repaired: eight threads ask at once; each file is read once more, and all agree.
  mem->Remove({FileType::kIndex, victim});
  mem->Save({FileType::kIndex, victim}, good);
  traced->Reset();
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      if (lazy->HasBlob(BlobType::kData, id)) found++;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(found.load(), 8);
  EXPECT_TRUE(lazy->index_loaded());
  EXPECT_EQ(traced->Loads(FileType::kIndex).size(), size_t{kFiles});
  EXPECT_EQ(lazy->index().BlobCount(), size_t{kFiles});
  EXPECT_EQ(std::string(AsChars(lazy->LoadBlob(BlobType::kData, id))), data);
  EXPECT_EQ(lazy->index_files().size(), size_t{kFiles});
}

// Known blobs (a capture state's, AddKnownBlobs): HasBlob, LoadBlob and IsTreePack answer
// for them without reading the index; a blob not known, or a known one whose copy does not
// decode as its id (a wrong record), is looked up in the index, which is then read.
TEST(IndexLoad, KnownBlobsAnswerWithoutTheIndex) {
  auto mem = RepoWithManyFiles();
  auto traced = std::make_shared<testing::LoadTraceBackend>(mem, std::chrono::milliseconds(0), 2);
  auto opened = Repository::Open(traced, "pw", 2);
  std::vector<KnownBlob> known;
  {
    auto full = IndexedRepository::Load(*opened);
    for (int i : {3, 5}) {
      const std::string data = "blob " + std::to_string(i);
      const BlobId id(Sha256(AsBytes(data)));
      auto where = full->Locate(BlobType::kData, id);
      ASSERT_TRUE(where);
      known.push_back(KnownBlob{BlobType::kData, id, *where});
    }
    EXPECT_FALSE(full->Locate(BlobType::kData, BlobId(Sha256(AsBytes("none")))));
  }
  const BlobId other(Sha256(AsBytes("blob 7")));
  auto fresh = [&] {
    auto lazy = IndexedRepository::Load(*opened, IndexLoad::kOnFirstUse);
    lazy->AddKnownBlobs(known);
    traced->Reset();
    return lazy;
  };

  auto lazy = fresh();
  EXPECT_TRUE(lazy->HasBlob(BlobType::kData, known[0].id));
  EXPECT_FALSE(lazy->index_loaded());
  EXPECT_EQ(std::string(AsChars(lazy->LoadBlob(BlobType::kData, known[1].id))), "blob 5");
  EXPECT_EQ(lazy->Locate(BlobType::kData, known[1].id), known[1].where);
  EXPECT_FALSE(lazy->IsTreePack(known[0].where.pack));  // (a data blob's pack: asks the index)
  EXPECT_TRUE(lazy->index_loaded());
  EXPECT_EQ(traced->Loads(FileType::kIndex).size(), size_t{kFiles});

  lazy = fresh();  // the same id as a tree is not known
  EXPECT_FALSE(lazy->HasBlob(BlobType::kTree, known[0].id));
  EXPECT_TRUE(lazy->index_loaded());

  lazy = fresh();  // a blob not known reads the index
  EXPECT_TRUE(lazy->HasBlob(BlobType::kData, other));
  EXPECT_TRUE(lazy->index_loaded());

  // A record with a wrong location: the blob is still read, through the index.
  known[1].where.offset += 1;
  lazy = fresh();
  EXPECT_EQ(std::string(AsChars(lazy->LoadBlob(BlobType::kData, known[1].id))), "blob 5");
  EXPECT_TRUE(lazy->index_loaded());
  // A record claiming a 4 GiB blob (a hostile state or index): refused by the pack's size,
  // no 4 GiB buffer; the blob is read through the index.
  known[1].where.offset -= 1;
  known[1].where.length = 0xffffffffu;
  lazy = fresh();
  EXPECT_EQ(std::string(AsChars(lazy->LoadBlob(BlobType::kData, known[1].id))), "blob 5");
  EXPECT_TRUE(lazy->index_loaded());
  // A known tree's pack is a tree pack without the index.
  KnownBlob tree = known[0];
  tree.type = BlobType::kTree;
  auto lazy_tree = IndexedRepository::Load(*opened, IndexLoad::kOnFirstUse);
  lazy_tree->AddKnownBlobs({tree});
  EXPECT_TRUE(lazy_tree->IsTreePack(tree.where.pack));
  EXPECT_FALSE(lazy_tree->index_loaded());
}

}  // namespace
}  // namespace haven
