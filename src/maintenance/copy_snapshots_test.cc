#include "maintenance/copy_snapshots.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

using testing::TreeBuilder;

TEST(CopySnapshots, SimilarIsResticsRule) {
  Snapshot a;
  a.time = {100, 5, 0};
  a.hostname = "h";
  a.paths = {"/a", "/b"};
  a.tags = {"x", "y"};
  Snapshot b = a;
  b.time.offset = 3600;             // the same instant
  b.paths = {"/b", "/a"};           // sets
  b.tags = {"y", "x"};
  b.parent = FileId{};              // not compared
  EXPECT_TRUE(SimilarSnapshots(a, b));
  b.excludes = {"e"};
  EXPECT_FALSE(SimilarSnapshots(a, b));
  b = a;
  b.tree.bytes[0] = 1;
  EXPECT_FALSE(SimilarSnapshots(a, b));
}

TEST(CopySnapshots, CopiesMissingBlobsOnceAndSkipsCopies) {
  auto src_be = std::make_shared<MemBackend>(), dst_be = std::make_shared<MemBackend>();
  Repository::Init(*src_be, "s", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  Repository::Init(*dst_be, "d", 1, crypto::ScryptParams{1024, 8, 1}, 1);
  auto src = testing::TestRepository::Open(src_be, "s", 2);
  src->LoadIndex();
  TreeBuilder tb(*src);
  const BlobId sub = tb.Tree({tb.File("f", std::string(5000, 'q'))});
  const BlobId root = tb.Tree({TreeBuilder::Dir("d", sub), tb.File("g", "small")});
  src->Flush();
  Snapshot snap;
  snap.tree = root;
  snap.paths = {"/x"};
  snap.parent = FileId{};
  const FileId sid = src->SaveJson(FileType::kSnapshot, snap.ToJson());
  src->LoadIndex();
  auto dst = testing::TestRepository::Open(dst_be, "d", 2);
  dst->LoadIndex();
  std::vector<std::string> said;
  CopySnapshotsOptions o;
  o.progress = [&](const std::string& s) { said.push_back(s); };
  auto res = CopySnapshots(src->indexed(), dst->session(), {{sid, snap}}, {}, o);
  EXPECT_EQ(res.copied, 1u);
  EXPECT_EQ(res.blobs, 4u);  // two trees, two data blobs
  ASSERT_EQ(res.written.size(), 1u);
  dst->LoadIndex();
  EXPECT_EQ(dst->LoadTree(root).size(), 2u);
  EXPECT_EQ(dst->LoadBlob(BlobType::kData, BlobId(Sha256(AsBytes(std::string(5000, 'q'))))).size(), 5000u);
  Snapshot copy = Snapshot::Parse(dst->LoadJson(FileType::kSnapshot, res.written[0]), "copy");
  EXPECT_FALSE(copy.parent);
  EXPECT_EQ(copy.original, sid);
  // Again: the copy is recognised by its original.
  auto existing = dst->LoadSnapshots();
  auto again = CopySnapshots(src->indexed(), dst->session(), {{sid, snap}}, existing, o);
  EXPECT_EQ(again.copied, 0u);
  EXPECT_EQ(again.skipped, 1u);
  EXPECT_EQ(said.back(), "skipping source snapshot " + sid.Short() +
                             ", was already copied to snapshot " + res.written[0].Short());
}

}  // namespace
}  // namespace haven
