#include "maintenance/recover.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "recover-test";
using testing::TreeBuilder;

TEST(Recover, FindsTreesNothingReferencesAndSavesResticsSnapshot) {
  auto mem = std::make_shared<MemBackend>();
  Repository::Init(*mem, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto w = testing::TestRepository::Open(mem, kPassword, 2);
  w->LoadIndex();
  TreeBuilder tb(*w);
  const BlobId leaf = tb.Tree({tb.File("f", "data")});
  const BlobId kept_root = tb.Tree({TreeBuilder::Dir("d", leaf)});      // a snapshot's tree
  const BlobId lost_root = tb.Tree({TreeBuilder::Dir("e", leaf), tb.File("g", "x")});
  const BlobId lost_leaf_parent = tb.Tree({TreeBuilder::Dir("sub", kept_root)});
  w->Flush();
  auto r = testing::TestRepository::Open(mem, kPassword, 2);
  r->LoadIndex();
  std::vector<std::string> verbose;
  RecoverOptions o;
  o.threads = 2;
  o.verbose = [&](const std::string& s) { verbose.push_back(s); };
  auto roots = FindUnreferencedRoots(r->indexed(), {kept_root}, o);
  std::vector<BlobId> want = {lost_root, lost_leaf_parent};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(roots, want);
  EXPECT_EQ(verbose.front(), "load 4 trees");

  Snapshot base;
  base.time = gojson::Timestamp{1700000000, 5, 3600};
  base.hostname = "host";
  base.username = "me";
  const FileId sid = SaveRecoverSnapshot(r->indexed(), r->session(), roots, base);
  auto again = testing::TestRepository::Open(mem, kPassword, 2);
  again->LoadIndex();
  const Snapshot s = Snapshot::Parse(again->opened().LoadJson(FileType::kSnapshot, sid), "s");
  EXPECT_EQ(s.paths, std::vector<std::string>{"/recover"});
  EXPECT_EQ(s.tags, std::vector<std::string>{"recovered"});
  EXPECT_EQ(s.hostname, "host");
  const auto nodes = again->indexed().LoadTree(s.tree);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, want[0].Short());
  EXPECT_EQ(*nodes[0].subtree, want[0]);
  EXPECT_EQ(nodes[0].mode, 0755u);
  EXPECT_EQ(nodes[0].type, NodeType::kDir);
  EXPECT_EQ(nodes[1].mtime, base.time);
  // Now every tree is referenced: nothing left to recover.
  EXPECT_TRUE(FindUnreferencedRoots(again->indexed(), {kept_root, s.tree}, {}).empty());
}

}  // namespace
}  // namespace haven
