#include "repo/tree_path.h"

#include <gtest/gtest.h>

#include <map>

namespace haven {
namespace {

BlobId Id(char c) { return *BlobId::FromHex(std::string(64, c)); }

Node Dir(const std::string& name, const BlobId& sub) {
  Node n;
  n.name = name;
  n.type = NodeType::kDir;
  n.subtree = sub;
  return n;
}

Node File(const std::string& name) {
  Node n;
  n.name = name;
  n.type = NodeType::kFile;
  return n;
}

TEST(TreePath, SplitDropsEmptyComponents) {
  EXPECT_EQ(SplitTreePath("/a//b/"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitTreePath("/").empty());
  EXPECT_TRUE(SplitTreePath("").empty());
}

TEST(TreePath, FindsNodesAndStops) {
  std::map<BlobId, std::vector<Node>> trees = {
      {Id('1'), {Dir("a", Id('2')), File("f")}},
      {Id('2'), {File("x"), Dir("d", Id('3'))}},
      {Id('3'), {}},
  };
  TreeLoader load = [&](const BlobId& id) { return trees.at(id); };
  TreePath r = FindTreePath(load, Id('1'), {"a", "d"});
  ASSERT_TRUE(r.found());
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.parents[1], Id('2'));
  EXPECT_EQ(r.DirTree(), Id('3'));
  r = FindTreePath(load, Id('1'), {"a", "x"});
  ASSERT_TRUE(r.found());
  EXPECT_FALSE(r.DirTree());
  r = FindTreePath(load, Id('1'), {"a", "nope"});
  EXPECT_EQ(r.stop, TreePath::Stop::kNotFound);
  EXPECT_EQ(r.at, 1u);
  r = FindTreePath(load, Id('1'), {"f", "y"});
  EXPECT_EQ(r.stop, TreePath::Stop::kNotADir);
  EXPECT_EQ(r.at, 0u);
  r = FindTreePath(load, Id('1'), {});
  EXPECT_TRUE(r.found());
  EXPECT_TRUE(r.nodes.empty());
}

}  // namespace
}  // namespace haven
