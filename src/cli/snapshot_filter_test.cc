#include "cli/snapshot_filter.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "backend/cache_backend.h"
#include "backend/index_prefetch_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"
#include "core/error.h"
#include "repo/test_repository.h"

namespace haven::cli {
namespace {

// Moved from forget_policy_test.cc (ForgetTags.SplitAndMatch) with forget::Filter.
TEST(SnapshotFilter, HostsAndPaths) {
  SnapshotFilter f;
  f.hosts = {"h1", "h2"};
  f.paths = {"/p"};
  Snapshot s;
  s.hostname = "h2";
  s.paths = {"/q", "/p"};
  EXPECT_TRUE(f.Matches(s));
  s.hostname = "h3";
  EXPECT_FALSE(f.Matches(s));
  s.hostname = "h1";
  f.paths = {"/p", "/r"};
  EXPECT_FALSE(f.Matches(s));
}

TEST(SnapshotFilter, TagsAndString) {
  SnapshotFilter f;
  Snapshot none, ab;
  ab.tags = {"a", "b"};
  f.tags = {"x", " a ,b"};
  EXPECT_TRUE(f.Matches(ab));
  EXPECT_FALSE(f.Matches(none));
  f.tags = {""};
  EXPECT_TRUE(f.Matches(none));
  EXPECT_FALSE(f.Matches(ab));
  f.hosts = {"h1", "h2"};
  f.paths = {"/a"};
  EXPECT_EQ(f.String(), "(Paths:[/a] Tags:[[]] Hosts:[h1 h2])");
}

TEST(SnapshotResolve, LatestPrefixAmbiguous) {
  auto id = [](char c) { return *FileId::FromHex(std::string(63, '0') + c); };
  std::vector<SnapshotEntry> snaps = {{id('1'), {}}, {id('2'), {}}};
  EXPECT_EQ(ResolveSnapshot("latest", snaps), id('2'));
  EXPECT_EQ(ResolveSnapshot(std::string(63, '0') + "1", snaps), id('1'));
  EXPECT_THROW(ResolveSnapshot("0000", snaps), Error);
  EXPECT_THROW(ResolveSnapshot("ff", snaps), Error);
  EXPECT_THROW(ResolveSnapshot("latest", {}), Error);
  EXPECT_EQ(MatchIdPrefix(snaps, "000").count, 2u);
  EXPECT_EQ(MatchIdPrefix(snaps, "").count, 2u);
}

// On remote storage with a cache, the snapshot's root tree is read into the cache before
// the lock (from the open's listings); the command's own read of it then costs no request.
TEST(StartEarlySnapshot, ReadsTheRootTreeIntoTheCacheBeforeTheLock) {
  constexpr const char* kPassword = "early-snapshot-test";
  auto mem = std::make_shared<MemBackend>();
  Repository::Init(*mem, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  BlobId root;
  {
    auto w = haven::testing::TestRepository::Open(mem, kPassword, 1);
    w->LoadIndex();
    const std::string tree = R"({"nodes":[]})" "\n";
    root = BlobId(Sha256(AsBytes(tree)));
    w->SaveBlob(BlobType::kTree, root, AsBytes(tree));
    w->Flush();
    Snapshot s;
    s.tree = root;
    s.paths = {"/x"};
    s.hostname = "h";
    w->SaveJson(FileType::kSnapshot, s.ToJson());
  }
  char tmpl[] = "/tmp/haven-early-snapshot.XXXXXX";
  const std::filesystem::path dir = mkdtemp(tmpl);
  // storage with round trips <- the open's prefetch <- the cache, as OpenRepository builds
  auto trace = std::make_shared<haven::testing::LoadTraceBackend>(mem, std::chrono::milliseconds(1), 2);
  auto prefetch = std::make_shared<IndexPrefetchBackend>(
      trace, std::vector<IndexPrefetchBackend::Kind>{{FileType::kIndex, nullptr},
                                                     {FileType::kSnapshot, nullptr}});
  auto cache = std::make_shared<CacheBackend>(prefetch, dir.string());
  auto repo = Repository::Open(cache, kPassword, 2);
  cache->SetRepositoryId(repo->config().id);
  repo->set_cache(cache);

  auto early = StartEarlySnapshot(*repo, "latest", {});
  ASSERT_NE(early, nullptr);
  ASSERT_NE(early->Wait(), nullptr);
  ASSERT_EQ(trace->Loads(FileType::kPack).size(), 1u);  // the tree pack, before any lock
  auto [entry, index] = FindSnapshotAndLoadIndex(*repo, nullptr, "latest", {}, early.get());
  EXPECT_EQ(entry.second.tree, root);
  EXPECT_TRUE(index->LoadTree(root).empty());
  EXPECT_EQ(trace->Loads(FileType::kPack).size(), 1u);  // from the cache
  index.reset();
  early.reset();
  repo.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace haven::cli
