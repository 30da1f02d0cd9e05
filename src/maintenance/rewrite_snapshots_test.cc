#include "maintenance/rewrite_snapshots.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "core/deep_stack.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "rewrite-test";
using testing::TreeBuilder;

class RewriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    repo_ = testing::TestRepository::Open(mem_, kPassword, 2);
    repo_->LoadIndex();
  }
  std::shared_ptr<MemBackend> mem_;
  std::unique_ptr<testing::TestRepository> repo_;
};

TEST_F(RewriteTest, DropsExcludedPathsAndSavesOnlyChangedTrees) {
  TreeBuilder tb(*repo_);
  const BlobId keep = tb.Tree({tb.File("k", "kept")});
  const BlobId sub = tb.Tree({tb.File("a.bin", "x"), tb.File("b.txt", "y")});
  const BlobId root = tb.Tree({TreeBuilder::Dir("keep", keep), TreeBuilder::Dir("sub", sub)});
  repo_->Flush();
  std::vector<std::string> said;
  RewriteSnapshotsOptions o;
  o.exclude = [](const std::string& p) { return p.size() > 4 && p.substr(p.size() - 4) == ".bin"; };
  o.progress = [&](const std::string& s) { said.push_back(s); };
  WriteSession& s = repo_->session();
  const BlobId out = FilterTree(s, "/", root, o);
  s.Flush();
  EXPECT_NE(out, root);
  EXPECT_EQ(said, (std::vector<std::string>{"excluding /sub/a.bin"}));
  const auto nodes = repo_->LoadTree(out);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(*nodes[0].subtree, keep);  // untouched subtree keeps its id
  const auto inner = repo_->LoadTree(*nodes[1].subtree);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].name, "b.txt");
  // Nothing excluded: the same id, nothing saved.
  o.exclude = [](const std::string&) { return false; };
  EXPECT_EQ(FilterTree(s, "/", root, o), root);
}

TEST_F(RewriteTest, RefusesATreeItCannotReencode) {
  TreeBuilder tb(*repo_);
  // Unsorted names: restic's encoder would not give these bytes back.
  const BlobId bad = tb.Tree({tb.File("b", "1"), tb.File("a", "2")});
  repo_->Flush();
  RewriteSnapshotsOptions o;
  o.exclude = [](const std::string& p) { return p == "/a"; };
  try {
    FilterTree(repo_->session(), "/", bad, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("without loosing information"), std::string::npos);
  }
}

// A hostile repository nested deeper than kMaxTreeDepth is refused with an error naming
// the tree (one recursion per level: no stack overflow); nothing is excluded, so without
// the bound the walk would return the root unchanged.
TEST_F(RewriteTest, RefusesATreeNestedTooDeeply) {
  TreeBuilder tb(*repo_);
  BlobId tree = tb.Tree({tb.File("f", "x")});
  for (int i = 0; i < kMaxTreeDepth; ++i) tree = tb.Tree({TreeBuilder::Dir("d", tree)});
  repo_->Flush();
  RewriteSnapshotsOptions o;
  o.exclude = [](const std::string&) { return false; };
  try {
    FilterTree(repo_->session(), "/", tree, o);
    FAIL() << "walked a tree nested deeper than " << kMaxTreeDepth;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("nested deeper than 4096"), std::string::npos) << e.what();
  }
}

TEST_F(RewriteTest, SnapshotsGetOriginalAndTagOrAreReplaced) {
  TreeBuilder tb(*repo_);
  const BlobId root = tb.Tree({tb.File("x.bin", "1"), tb.File("y", "2")});
  repo_->Flush();
  Snapshot snap;
  snap.tree = root;
  snap.paths = {"/p"};
  snap.tags = {"t"};
  const FileId id = repo_->SaveJson(FileType::kSnapshot, snap.ToJson());
  RewriteSnapshotsOptions o;
  o.exclude = [](const std::string& p) { return p == "/x.bin"; };
  auto res = RewriteSnapshots(repo_->session(), {{id, snap}}, o);
  ASSERT_EQ(res.written.size(), 1u);
  Snapshot fresh = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, res.written[0]), "new");
  EXPECT_EQ(fresh.original, id);
  EXPECT_EQ(fresh.tags, (std::vector<std::string>{"t", "rewrite"}));
  EXPECT_EQ(repo_->ListIds(FileType::kSnapshot).size(), 2u);
  o.forget = true;
  auto res2 = RewriteSnapshots(repo_->session(), {{id, snap}}, o);
  ASSERT_EQ(res2.written.size(), 1u);
  // The old snapshot is gone; the new one has no "rewrite" tag.
  auto ids = repo_->ListIds(FileType::kSnapshot);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), id), 0);
  Snapshot f2 = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, res2.written[0]), "new");
  EXPECT_EQ(f2.tags, (std::vector<std::string>{"t"}));
}

}  // namespace
}  // namespace haven
