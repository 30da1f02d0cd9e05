#include "maintenance/stats.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "stats-test";
using testing::TreeBuilder;

class StatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    writer_ = testing::TestRepository::Open(mem_, kPassword, 2);
    writer_->LoadIndex();
    TreeBuilder tb(*writer_);
    // root: a/ (x: 3 bytes, y: hard link of x), b/ (the same subtree as a), e (empty file)
    Node x = tb.File("x", "abc");
    x.inode = 10;
    Node y = tb.File("y", "abc");
    y.inode = 10;
    sub_ = tb.Tree({x, y});
    Node e = tb.File("e", "");
    e.inode = 11;
    root_ = tb.Tree({TreeBuilder::Dir("a", sub_), TreeBuilder::Dir("b", sub_), e});
    Node z = tb.File("z", "defg");
    z.inode = 12;
    root2_ = tb.Tree({TreeBuilder::Dir("a", sub_), z});
    writer_->Flush();
    repo_ = testing::TestRepository::Open(mem_, kPassword, 2);
    repo_->LoadIndex();
  }

  RepoStats Count(StatsMode m, std::vector<BlobId> roots) {
    StatsCounter c(repo_->indexed(), m, 2);
    for (const auto& r : roots) c.AddSnapshot(r);
    return c.Finish();
  }

  std::shared_ptr<MemBackend> mem_;
  std::unique_ptr<testing::TestRepository> writer_, repo_;
  BlobId sub_, root_, root2_;
};

TEST_F(StatsTest, RestoreSizeCountsEveryNodeAndEachInodeOnce) {
  RepoStats s = Count(StatsMode::kRestoreSize, {root_});
  EXPECT_EQ(s.snapshots_count, 1u);
  EXPECT_EQ(s.total_file_count, 2u + 4u + 1u);  // a, b, a/x, a/y, b/x, b/y, e
  EXPECT_EQ(s.total_size, 3u);                  // inode 10 once; dirs have inode 0, size 0
  EXPECT_EQ(s.total_blob_count, 0u);
}

TEST_F(StatsTest, FilesByContentsCountsEachContentSequenceOnce) {
  RepoStats s = Count(StatsMode::kFilesByContents, {root_, root2_});
  // Unique: "abc" (a/x), the empty sequence (the directory a, first), "defg".
  EXPECT_EQ(s.total_file_count, 3u);
  EXPECT_EQ(s.total_size, 3u + 4u);
  EXPECT_EQ(s.snapshots_count, 2u);
}

TEST_F(StatsTest, BlobsPerFileCountsBlobsOfUniqueFiles) {
  RepoStats s = Count(StatsMode::kBlobsPerFile, {root_, root2_});
  EXPECT_EQ(s.total_blob_count, 2u);  // "abc" of a/x, "defg" of z
  EXPECT_EQ(s.total_file_count, 2u);
  EXPECT_EQ(s.total_size, 3u + 4u);
}

TEST_F(StatsTest, RawDataCountsEveryReferencedBlobOnceWithItsStoredLength) {
  RepoStats s = Count(StatsMode::kRawData, {root_, root2_});
  // Trees root, root2, sub; data "abc", "defg" (the empty file has no blob).
  EXPECT_EQ(s.total_blob_count, 5u);
  uint64_t want = 0;
  for (const BlobId& t : {root_, root2_, sub_})
    want += repo_->index().Lookup(BlobType::kTree, t).front().length;
  for (const char* d : {"abc", "defg"})
    want += repo_->index().Lookup(BlobType::kData, BlobId(Sha256(AsBytes(std::string(d))))).front().length;
  EXPECT_EQ(s.total_size, want);
  EXPECT_EQ(s.total_file_count, 0u);
}

TEST_F(StatsTest, AMissingTreeFails) {
  BlobId missing;
  missing.bytes[0] = 9;
  EXPECT_THROW(Count(StatsMode::kRestoreSize, {missing}), Error);
  EXPECT_THROW(Count(StatsMode::kRawData, {missing}), Error);
  EXPECT_FALSE(ParseStatsMode("bogus"));
  EXPECT_EQ(ParseStatsMode("raw-data"), StatsMode::kRawData);
}

}  // namespace
}  // namespace haven
