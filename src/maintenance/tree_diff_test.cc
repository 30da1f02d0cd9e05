#include "maintenance/tree_diff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "tree-diff-test";
using testing::TreeBuilder;

class TreeDiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    writer_ = testing::TestRepository::Open(mem_, kPassword, 2);
    writer_->LoadIndex();
    tb_ = std::make_unique<TreeBuilder>(*writer_);
  }

  // Flushes what was built and opens the repository with its index.
  IndexedRepository& Reopen() {
    writer_->Flush();
    repo_ = testing::TestRepository::Open(mem_, kPassword, 2);
    repo_->LoadIndex();
    return repo_->indexed();
  }

  DiffStats Diff(const BlobId& a, const BlobId& b, bool metadata = false) {
    IndexedRepository& repo = Reopen();
    changes_.clear();
    warnings_.clear();
    TreeDiffOptions o;
    o.metadata = metadata;
    o.change = [this](const DiffChange& c) { changes_.push_back(c.modifier + " " + c.path); };
    o.warn = [this](const std::string& w) { warnings_.push_back(w); };
    return DiffTrees(repo, a, b, o);
  }

  uint64_t TreeSize(const BlobId& id) {
    auto locs = repo_->index().Lookup(BlobType::kTree, id);
    EXPECT_FALSE(locs.empty());
    return locs.empty() ? 0 : locs.front().PlainLength();
  }

  std::shared_ptr<MemBackend> mem_;
  std::unique_ptr<testing::TestRepository> writer_, repo_;
  std::unique_ptr<TreeBuilder> tb_;
  std::vector<std::string> changes_, warnings_;
};

TEST_F(TreeDiffTest, ListsChangesInResticsOrderWithStatistics) {
  TreeBuilder& tb = *tb_;
  const BlobId same = tb.Tree({tb.File("s", "unchanged")});
  const BlobId gone = tb.Tree({tb.File("g1", "gone one"), tb.File("g2", "gone two")});
  const BlobId before = tb.Tree({TreeBuilder::Dir("common", same), tb.File("f", "old"),
                                 TreeBuilder::Dir("old", gone), TreeBuilder::Link("t", "x")});
  const BlobId added = tb.Tree({tb.File("n", "new file")});
  const BlobId after = tb.Tree({TreeBuilder::Dir("common", same), tb.File("f", "new"),
                                TreeBuilder::Dir("fresh", added), tb.File("t", "now a file")});
  DiffStats st = Diff(before, after);
  EXPECT_EQ(changes_, (std::vector<std::string>{"M /f", "+ /fresh/", "+ /fresh/n", "- /old/",
                                                "- /old/g1", "- /old/g2", "T /t"}));
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(st.changed_files, 1u);
  EXPECT_EQ(st.added.files, 1u);
  EXPECT_EQ(st.added.dirs, 1u);
  EXPECT_EQ(st.removed.files, 2u);
  EXPECT_EQ(st.removed.dirs, 1u);
  EXPECT_EQ(st.added.others, 0u);
  // Added: "new", "new file", "now a file"; trees: after, added.
  EXPECT_EQ(st.added.data_blobs, 3u);
  EXPECT_EQ(st.added.tree_blobs, 2u);
  EXPECT_EQ(st.added.bytes, 3u + 8u + 10u + TreeSize(after) + TreeSize(added));
  // Removed: "old", "gone one", "gone two"; trees: before, gone.
  EXPECT_EQ(st.removed.data_blobs, 3u);
  EXPECT_EQ(st.removed.tree_blobs, 2u);
}

TEST_F(TreeDiffTest, BlobsBelowUnchangedSubtreesAreNotCountedAsAddedOrRemoved) {
  TreeBuilder& tb = *tb_;
  const BlobId empty = tb.Tree({});
  // The unchanged subtree holds "shared" content and an empty directory.
  const BlobId same = tb.Tree({TreeBuilder::Dir("e", empty), tb.File("s", "shared")});
  const BlobId before = tb.Tree({TreeBuilder::Dir("common", same)});
  const BlobId fresh = tb.Tree({tb.File("copy", "shared"), TreeBuilder::Dir("e2", empty)});
  const BlobId after = tb.Tree({TreeBuilder::Dir("common", same), TreeBuilder::Dir("new", fresh)});
  DiffStats st = Diff(before, after);
  EXPECT_EQ(changes_, (std::vector<std::string>{"+ /new/", "+ /new/copy", "+ /new/e2/"}));
  // restic: "shared" and the empty tree are common; only the new root and `fresh` count.
  EXPECT_EQ(st.added.data_blobs, 0u);
  EXPECT_EQ(st.added.tree_blobs, 2u);
  EXPECT_EQ(st.removed.tree_blobs, 1u);
  EXPECT_EQ(st.added.files, 1u);
  EXPECT_EQ(st.added.dirs, 2u);
}

TEST_F(TreeDiffTest, UnchangedSubtreesAreNotDescendedInto) {
  TreeBuilder& tb = *tb_;
  // A subtree id that no pack holds: the listing never loads it.
  BlobId missing;
  missing.bytes[0] = 0x42;
  const BlobId before = tb.Tree({TreeBuilder::Dir("m", missing), tb.File("f", "a")});
  const BlobId after = tb.Tree({TreeBuilder::Dir("m", missing), tb.File("f", "a"),
                                tb.File("g", "b")});
  DiffStats st = Diff(before, after);
  EXPECT_EQ(changes_, (std::vector<std::string>{"+ /g"}));
  EXPECT_EQ(st.added.files, 1u);
  // The statistics look below it for the candidates, and report that it cannot be read.
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("error: "), std::string::npos);
}

TEST_F(TreeDiffTest, MetadataChangesOnlyWithTheFlag) {
  TreeBuilder& tb = *tb_;
  Node a = tb.File("f", "same");
  Node b = a;
  b.mode = 0600;
  const BlobId t1 = tb.Tree({a});
  const BlobId t2 = tb.Tree({b});
  Diff(t1, t2, false);
  EXPECT_TRUE(changes_.empty());
  Diff(t1, t2, true);
  EXPECT_EQ(changes_, (std::vector<std::string>{"U /f"}));
}

TEST_F(TreeDiffTest, AMissingRootThrowsAMissingSubtreeWarns) {
  TreeBuilder& tb = *tb_;
  BlobId missing;
  missing.bytes[0] = 0x43;
  const BlobId ok = tb.Tree({tb.File("f", "x")});
  EXPECT_THROW(Diff(missing, ok), Error);
  const BlobId with = tb.Tree({TreeBuilder::Dir("d", missing)});
  Diff(ok, with);
  EXPECT_EQ(changes_, (std::vector<std::string>{"+ /d/", "- /f"}));
  ASSERT_FALSE(warnings_.empty());
  EXPECT_NE(warnings_[0].find("error: "), std::string::npos);
}

TEST(NodesEqual, ComparesInstantsAndXattrsAsASet) {
  Node a;
  a.name = "x";
  a.mtime = {100, 5, 0};
  a.xattrs = {{"user.a", "1"}, {"user.b", std::nullopt}};
  Node b = a;
  b.mtime.offset = 3600;  // the same instant shown in another zone
  b.xattrs = {{"user.b", ""}, {"user.a", "1"}};
  EXPECT_TRUE(NodesEqual(a, b));
  b.xattrs[1].value = "2";
  EXPECT_FALSE(NodesEqual(a, b));
  b = a;
  b.inode = 7;
  EXPECT_FALSE(NodesEqual(a, b));
}

}  // namespace
}  // namespace haven
