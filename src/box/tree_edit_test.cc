// TreeEditor: copy-on-write edits keep every subtree off the edited path.
#include "box/tree_edit.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/test_repository.h"
#include "repo/tree_path.h"

namespace haven::box {
namespace {

class TreeEditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = std::make_shared<MemBackend>();
    Repository::Init(*be_, "pw", 2, crypto::ScryptParams{2, 1, 1}, 1);
    repo_ = haven::testing::TestRepository::Open(be_, "pw", 1);
  }
  Node File(const std::string& name, const std::string& data) {
    Node n;
    n.name = name;
    n.type = NodeType::kFile;
    n.mode = 0644;
    BlobId id(Sha256(AsBytes(data)));
    repo_->session().SaveBlob(BlobType::kData, id, AsBytes(data));
    n.content = {id};
    n.size = data.size();
    return n;
  }
  TreePath Find(const BlobId& root, const std::string& path) {
    repo_->session().Flush();
    return FindTreePath(repo_->indexed(), root, BoxPathComponents(path));
  }
  std::shared_ptr<MemBackend> be_;
  std::unique_ptr<haven::testing::TestRepository> repo_;
};

TEST_F(TreeEditTest, PutCreatesDirectoriesAndKeepsOtherSubtrees) {
  TreeEditor ed(repo_->session());
  BlobId root = ed.EmptyTree();
  root = ed.Put(root, {"a", "x"}, File("ignored", "1"));
  root = ed.Put(root, {"b", "deep", "y"}, File("y", "2"));
  BlobId a_before = *Find(root, "/a").DirTree();
  size_t before = ed.trees_written();
  root = ed.Put(root, {"b", "deep", "z"}, File("z", "3"));
  EXPECT_EQ(ed.trees_written() - before, 3u);  // b/deep, b, and the root
  EXPECT_EQ(*Find(root, "/a").DirTree(), a_before);
  ASSERT_TRUE(Find(root, "/a/x").found());
  EXPECT_EQ(Find(root, "/a/x").nodes.back().name, "x");
  EXPECT_TRUE(Find(root, "/b/deep/y").found());
  EXPECT_TRUE(Find(root, "/b/deep/z").found());
}

TEST_F(TreeEditTest, RemoveAndReplace) {
  TreeEditor ed(repo_->session());
  BlobId root = ed.Put(ed.EmptyTree(), {"d", "f"}, File("f", "old"));
  root = ed.Put(root, {"d", "f"}, File("f", "newer"));
  EXPECT_EQ(Find(root, "/d/f").nodes.back().size, 5u);
  BlobId gone = ed.Remove(root, {"d", "f"});
  EXPECT_FALSE(Find(gone, "/d/f").found());
  EXPECT_TRUE(Find(gone, "/d").found());
  // The edit of an unflushed tree works (mv: remove, then put on the result).
  BlobId moved = ed.Put(ed.Remove(root, {"d", "f"}), {"e"}, Find(root, "/d/f").nodes.back());
  EXPECT_TRUE(Find(moved, "/e").found());
  EXPECT_EQ(ed.Remove(moved, {"e"}), gone);  // same content, same tree id
}

TEST_F(TreeEditTest, ErrorsNameThePath) {
  TreeEditor ed(repo_->session());
  BlobId root = ed.Put(ed.EmptyTree(), {"f"}, File("f", "x"));
  auto code = [&](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kFatal;
  };
  EXPECT_EQ(code([&] { ed.Remove(root, {"missing"}); }), ErrorCode::kNotFound);
  EXPECT_EQ(code([&] { ed.Put(root, {"f", "below"}, File("x", "y")); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code([&] { ed.Put(root, {}, File("x", "y")); }), ErrorCode::kInvalidArgument);
  for (const char* bad : {"/a/../b", "/./x"})
    EXPECT_EQ(code([&] { BoxPathComponents(bad); }), ErrorCode::kInvalidArgument) << bad;
  EXPECT_EQ(code([&] { BoxPathComponents(std::string("a\0b", 3)); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(BoxPathComponents("//a//b/"), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace haven::box
