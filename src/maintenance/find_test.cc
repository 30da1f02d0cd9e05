#include "maintenance/find.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "find-test";
using testing::TreeBuilder;

class FindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    writer_ = testing::TestRepository::Open(mem_, kPassword, 2);
    writer_->LoadIndex();
    tb_ = std::make_unique<TreeBuilder>(*writer_);
  }

  IndexedRepository& Reopen() {
    writer_->Flush();
    repo_ = testing::TestRepository::Open(mem_, kPassword, 2);
    repo_->LoadIndex();
    return repo_->indexed();
  }

  FindCallbacks Collect() {
    FindCallbacks cb;
    cb.match = [this](const std::string& p, const Node&) { hits_.push_back(p); };
    cb.tree = [this](const std::string& id, const std::string& p) { hits_.push_back("tree " + id.substr(0, 8) + " " + p); };
    cb.blob = [this](const std::string& id, const std::string& p, const BlobId&) {
      hits_.push_back("blob " + id.substr(0, 8) + " " + p);
    };
    cb.unloadable = [this](const BlobId& parent, const std::string&) {
      hits_.push_back("unloadable " + parent.Short());
    };
    return cb;
  }

  std::shared_ptr<MemBackend> mem_;
  std::unique_ptr<testing::TestRepository> writer_, repo_;
  std::unique_ptr<TreeBuilder> tb_;
  std::vector<std::string> hits_;
};

TEST_F(FindTest, PatternsMatchAtAnyDepthAndBelowAMatch) {
  TreeBuilder& tb = *tb_;
  const BlobId sub = tb.Tree({tb.File("a.txt", "1"), tb.File("b.bin", "2")});
  const BlobId root = tb.Tree({TreeBuilder::Dir("docs", sub), tb.File("top.txt", "3")});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"*.txt", "docs"};
  Finder f(repo, p, 2);
  auto cb = Collect();
  f.Search(root, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"/docs", "/docs/a.txt", "/docs/b.bin", "/top.txt"}));
}

TEST_F(FindTest, IgnoreCaseAndTimes) {
  TreeBuilder& tb = *tb_;
  Node old_file = tb.File("OLD.TXT", "o");
  old_file.mtime = {1000, 0, 0};
  Node new_file = tb.File("new.txt", "n");
  new_file.mtime = {5000, 0, 0};
  const BlobId root = tb.Tree({old_file, new_file});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"*.Txt"};
  p.ignore_case = true;
  Finder all(repo, p, 2);
  auto cb = Collect();
  all.Search(root, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"/OLD.TXT", "/new.txt"}));
  hits_.clear();
  p.oldest = gojson::Timestamp{2000, 0, 0};
  Finder recent(repo, p, 2);
  recent.Search(root, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"/new.txt"}));
}

// restic's ignoreTrees: a subtree whose nodes were all left out is skipped wherever the same
// id appears later, even at another path (an anchored pattern would match there).
TEST_F(FindTest, ASubtreeWithoutHitsIsSkippedLaterAsResticDoes) {
  TreeBuilder& tb = *tb_;
  const BlobId shared = tb.Tree({tb.File("x", "same")});
  const BlobId root = tb.Tree({TreeBuilder::Dir("a", shared), TreeBuilder::Dir("b", shared)});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"/b/x", "/a/nothing"};
  Finder f(repo, p, 2);
  auto cb = Collect();
  f.Search(root, cb);
  EXPECT_TRUE(hits_.empty());  // restic prints nothing either
  // Also a directory left out because no child may match marks its subtree.
  FindPatterns q;
  q.patterns = {"/b/x"};
  Finder g(repo, q, 2);
  g.Search(root, cb);
  EXPECT_TRUE(hits_.empty());
  // A subtree with a hit is not remembered.
  const BlobId root2 = tb_->Tree({TreeBuilder::Dir("b", shared), TreeBuilder::Dir("c", shared)});
  IndexedRepository& repo2 = Reopen();
  FindPatterns r;
  r.patterns = {"/b/x", "/c/x"};
  Finder h(repo2, r, 2);
  h.Search(root2, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"/b/x", "/c/x"}));
}

TEST_F(FindTest, IdsTreesAndBlobsFullAndShort) {
  TreeBuilder& tb = *tb_;
  Node file = tb.File("f", "content");
  const BlobId sub = tb.Tree({file});
  const BlobId root = tb.Tree({TreeBuilder::Dir("d", sub), TreeBuilder::Dir("e", sub)});
  IndexedRepository& repo = Reopen();
  FindIds ids;
  ids.trees = std::set<std::string>{sub.Short()};
  Finder trees(repo, ids, 2);
  auto cb = Collect();
  trees.Search(root, cb);
  // One tree id given: the walk ends after the first hit (restic).
  EXPECT_EQ(hits_, (std::vector<std::string>{"tree " + sub.Short() + " /d"}));
  hits_.clear();
  FindIds blobs;
  blobs.blobs = std::set<std::string>{file.content[0].Short()};
  Finder bf(repo, blobs, 2);
  bf.Search(root, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"blob " + file.content[0].Short() + " /d/f",
                                              "blob " + file.content[0].Short() + " /e/f"}));
  EXPECT_EQ(*bf.blob_ids(), std::set<std::string>{file.content[0].Hex()});
}

TEST_F(FindTest, AnUnloadableTreeIsReportedWithItsParent) {
  TreeBuilder& tb = *tb_;
  BlobId missing;
  missing.bytes[0] = 7;
  const BlobId root = tb.Tree({TreeBuilder::Dir("gone", missing), tb.File("z", "z")});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"*"};
  Finder f(repo, p, 2);
  auto cb = Collect();
  f.Search(root, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"unloadable " + root.Short(), "/z"}));
}

// A subtree walked before at the same path (a later snapshot of an unchanged tree) is walked
// from its record: the same hits in the same order without loading it again (here every pack
// is gone before the second search).
TEST_F(FindTest, ASubtreeSeenAtTheSamePathIsNotLoadedAgain) {
  TreeBuilder& tb = *tb_;
  const BlobId sub = tb.Tree({tb.File("a.png", "1"), tb.File("b.txt", "2")});
  const BlobId deep = tb.Tree({TreeBuilder::Dir("img", sub), tb.File("z.png", "3")});
  const BlobId root = tb.Tree({tb.File("c.png", "4"), TreeBuilder::Dir("d", deep)});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"*.png", "img"};
  Finder f(repo, p, 2);
  auto cb = Collect();
  f.Search(root, cb);
  const std::vector<std::string> want = {"/c.png", "/d/img", "/d/img/a.png", "/d/img/b.txt",
                                         "/d/z.png"};
  EXPECT_EQ(hits_, want);
  std::vector<std::string> packs;
  mem_->List(FileType::kPack, [&](const FileInfo& fi) { packs.push_back(fi.name); });
  ASSERT_FALSE(packs.empty());
  for (const std::string& name : packs) mem_->Remove({FileType::kPack, name});
  hits_.clear();
  f.Search(root, cb);
  EXPECT_EQ(hits_, want);
}

// The record is walked with restic's ignoreTrees decisions taken afresh: in the second
// snapshot /p1's tree T is walked again, its only directory is skipped now (remembered in
// the first), so T itself is remembered, and T is skipped at /p2 although "p2" matches there.
TEST_F(FindTest, ARecordedWalkRemembersSubtreesAsResticsWalkAgainDoes) {
  TreeBuilder& tb = *tb_;
  const BlobId leaf = tb.Tree({tb.File("x", "1")});
  const BlobId t = tb.Tree({TreeBuilder::Dir("d", leaf)});
  const BlobId first = tb.Tree({TreeBuilder::Dir("p1", t)});
  const BlobId second = tb.Tree({TreeBuilder::Dir("p1", t), TreeBuilder::Dir("p2", t)});
  IndexedRepository& repo = Reopen();
  FindPatterns p;
  p.patterns = {"p2"};
  Finder f(repo, p, 2);
  auto cb = Collect();
  f.Search(first, cb);
  f.Search(second, cb);
  EXPECT_TRUE(hits_.empty());  // restic 0.14 prints nothing either
  // A finder that saw only the second snapshot walks T at /p2 (its directory d is skipped:
  // the leaf tree was remembered at /p1/d).
  Finder g(repo, p, 2);
  g.Search(second, cb);
  EXPECT_EQ(hits_, (std::vector<std::string>{"/p2"}));
}

TEST(ParseFindTime, ResticsLayouts) {
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  setenv("TZ", "UTC", 1);
  tzset();
  auto t = ParseFindTime("2021-03-04");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->sec, 1614816000);
  EXPECT_EQ(ParseFindTime("2021-03-04 05:06")->sec, 1614816000 + 5 * 3600 + 6 * 60);
  EXPECT_EQ(ParseFindTime("2021-03-04 05:06:07")->sec, 1614816000 + 5 * 3600 + 6 * 60 + 7);
  EXPECT_EQ(ParseFindTime("2021-03-04 05:06:07 +0100")->sec, 1614816000 + 4 * 3600 + 6 * 60 + 7);
  EXPECT_EQ(ParseFindTime("04.03.2021")->sec, 1614816000);
  EXPECT_EQ(ParseFindTime("04.03.2021 05:06:07 -0030")->sec, 1614816000 + 5 * 3600 + 36 * 60 + 7);
  EXPECT_EQ(ParseFindTime("Thu Mar 4 05:06:07 +0000 UTC 2021")->sec, 1614816000 + 5 * 3600 + 6 * 60 + 7);
  EXPECT_FALSE(ParseFindTime("yesterday"));
  EXPECT_FALSE(ParseFindTime("2021-02-30"));
  EXPECT_FALSE(ParseFindTime("2021-03-04T05:06:07"));
  if (old_tz) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

}  // namespace
}  // namespace haven
