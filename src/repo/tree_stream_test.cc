#include "repo/tree_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/mem_backend.h"
#include "core/mutex.h"
#include "repo/test_repository.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

constexpr const char* kPassword = "tree-stream-test";

// A repository with one snapshot-like root: a tree of `depth` levels, `fanout` directories
// each; the first directory of every tree is shared (the same subtree id at each level),
// the others are unique. Optionally a missing subtree and a tree that is not JSON.
class TreeStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  }

  // Builds the trees with `build`, then opens the repository afresh with its index loaded.
  template <typename Fn>
  BlobId Build(Fn build) {
    auto repo = testing::TestRepository::Open(mem_, kPassword, 2);
    repo->LoadIndex();
    testing::TreeBuilder tb(*repo);
    writer_ = repo.get();
    BlobId root = build(tb);
    writer_ = nullptr;
    repo->Flush();
    repo_ = testing::TestRepository::Open(mem_, kPassword, 4);
    repo_->LoadIndex();
    repo_->CompactIndex();
    return root;
  }

  static BlobId Level(testing::TreeBuilder& tb, int depth, int fanout, const std::string& tag) {
    std::vector<Node> nodes;
    nodes.push_back(tb.File("f", "file " + tag));
    if (depth > 0)
      for (int i = 0; i < fanout; ++i)
        nodes.push_back(testing::TreeBuilder::Dir(
            "d" + std::to_string(i),
            Level(tb, depth - 1, fanout, i == 0 ? "shared" + std::to_string(depth) : tag + "/" + std::to_string(i))));
    std::sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.name < b.name; });
    return tb.Tree(nodes);
  }

  // The serial walk: (path, tree id) of every tree reached, in pre-order, no dedup.
  void Serial(const BlobId& tree, const std::string& path,
              std::vector<std::pair<std::string, BlobId>>& out) {
    out.push_back({path, tree});
    for (const Node& n : repo_->LoadTree(tree))
      if (n.type == NodeType::kDir && n.subtree) Serial(*n.subtree, path + "/" + n.name, out);
  }

  // The same through the ordered stream.
  void Ordered(OrderedTreeStream& s, const BlobId& tree, const std::string& path,
               std::vector<std::pair<std::string, BlobId>>& out) {
    out.push_back({path, tree});
    std::vector<Node> nodes = s.Take(tree);
    std::vector<BlobId> subs;
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir && n.subtree) subs.push_back(*n.subtree);
    s.Expect(subs);
    for (const Node& n : nodes)
      if (n.type == NodeType::kDir && n.subtree) Ordered(s, *n.subtree, path + "/" + n.name, out);
  }

  // A tree callback that decodes the tree and adds every dir's subtree with its path.
  static void AddChildren(const StreamedTree& t, TreeChildren& c) {
    for (const Node& n : DecodeTree(t.json(), t.ref.id.Hex()))
      if (n.type == NodeType::kDir && n.subtree) c.Add(*n.subtree, t.ref.path + "/" + n.name);
  }

  std::shared_ptr<MemBackend> mem_;
  testing::TestRepository* writer_ = nullptr;  // during Build
  std::unique_ptr<testing::TestRepository> repo_;
};

TEST_F(TreeStreamTest, OrderedStreamGivesTheSerialPreOrder) {
  BlobId root = Build([](testing::TreeBuilder& tb) { return Level(tb, 4, 3, "r"); });
  std::vector<std::pair<std::string, BlobId>> serial, ordered;
  Serial(root, "", serial);
  for (size_t window : {size_t{1}, size_t{3}, size_t{0}}) {
    ordered.clear();
    OrderedTreeStream s(*repo_, 3, window);
    Ordered(s, root, "", ordered);
    EXPECT_EQ(ordered, serial) << "window " << window;
  }
  EXPECT_EQ(serial.size(), 1u + 3 + 9 + 27 + 81);
}

TEST_F(TreeStreamTest, SkippedAnnouncementsAndUnannouncedTakesStillWork) {
  BlobId root = Build([](testing::TreeBuilder& tb) { return Level(tb, 3, 3, "r"); });
  OrderedTreeStream s(*repo_, 2, 4);
  std::vector<Node> top = s.Take(root);  // not announced: loaded by the caller
  std::vector<BlobId> subs;
  for (const Node& n : top)
    if (n.subtree) subs.push_back(*n.subtree);
  ASSERT_EQ(subs.size(), 3u);
  s.Expect(subs);
  // Skip the first two: taking the third drops them.
  EXPECT_EQ(EncodeTree(s.Take(subs[2])), EncodeTree(repo_->LoadTree(subs[2])));
  EXPECT_EQ(EncodeTree(s.Take(subs[0])), EncodeTree(repo_->LoadTree(subs[0])));
  EXPECT_LE(s.peak_in_window(), 4u);
}

TEST_F(TreeStreamTest, UnorderedStreamVisitsEachTreeOnceWithAPredicate) {
  BlobId root = Build([](testing::TreeBuilder& tb) { return Level(tb, 4, 3, "r"); });
  std::vector<std::pair<std::string, BlobId>> serial;
  Serial(root, "", serial);
  std::set<BlobId> unique;
  for (auto& [p, id] : serial) unique.insert(id);
  ASSERT_LT(unique.size(), serial.size());  // some subtrees are shared

  for (int threads : {1, 2, 4}) {
    Mutex mu;
    std::set<BlobId> seen;
    std::multiset<BlobId> loaded;
    std::set<std::pair<std::string, BlobId>> paths;
    StreamTreesOptions o;
    o.threads = threads;
    o.visit = [&](const TreeRef& t, size_t pos) {
      EXPECT_NE(pos, Index::npos);
      MutexLock lock(mu);
      return seen.insert(t.id).second;
    };
    o.tree = [&](const StreamedTree& t, TreeChildren& c) {
      EXPECT_EQ(BlobId(Sha256(AsBytes(t.json()))), t.ref.id);
      for (size_t i = t.size; i < t.size + kTreePadding; ++i) ASSERT_EQ(t.data[i], 0);
      ASSERT_LE(t.size + kTreePadding, t.capacity);
      {
        MutexLock lock(mu);
        loaded.insert(t.ref.id);
        paths.insert({t.ref.path, t.ref.id});
      }
      AddChildren(t, c);
    };
    o.error = [&](const TreeStreamError& e) -> bool {
      ADD_FAILURE() << e.ref.path << ": " << e.message;
      return false;
    };
    StreamTrees(*repo_, {{root, 0, ""}}, o);
    EXPECT_EQ(std::set<BlobId>(loaded.begin(), loaded.end()), unique) << threads;
    EXPECT_EQ(loaded.size(), unique.size()) << threads;
    // Each tree comes with a path by which the serial walk reaches it.
    for (const auto& p : paths)
      EXPECT_NE(std::find(serial.begin(), serial.end(), p), serial.end()) << p.first;
  }
}

TEST_F(TreeStreamTest, WithoutAPredicateEveryReachedTreeIsVisited) {
  BlobId root = Build([](testing::TreeBuilder& tb) { return Level(tb, 3, 3, "r"); });
  std::vector<std::pair<std::string, BlobId>> serial;
  Serial(root, "", serial);
  Mutex mu;
  std::vector<std::pair<std::string, BlobId>> got;
  StreamTreesOptions o;
  o.threads = 3;
  o.tree = [&](const StreamedTree& t, TreeChildren& c) {
    {
      MutexLock lock(mu);
      got.push_back({t.ref.path, t.ref.id});
    }
    AddChildren(t, c);
  };
  StreamTrees(*repo_, {{root, 0, ""}}, o);
  std::sort(got.begin(), got.end());
  std::sort(serial.begin(), serial.end());
  EXPECT_EQ(got, serial);
}

TEST_F(TreeStreamTest, AtMostOneLoadedTreePerWorkerAndTheWindowInOrder) {
  BlobId root = Build([](testing::TreeBuilder& tb) { return Level(tb, 4, 4, "r"); });
  std::atomic<int> in_callback{0}, most{0};
  StreamTreesOptions o;
  o.threads = 3;
  o.tree = [&](const StreamedTree& t, TreeChildren& c) {
    int now = ++in_callback;
    int m = most.load();
    while (now > m && !most.compare_exchange_weak(m, now)) {
    }
    AddChildren(t, c);
    --in_callback;
  };
  StreamTrees(*repo_, {{root, 0, ""}}, o);
  EXPECT_LE(most.load(), 3);

  for (size_t window : {size_t{1}, size_t{2}, size_t{5}}) {
    OrderedTreeStream s(*repo_, 4, window);
    std::vector<std::pair<std::string, BlobId>> out;
    Ordered(s, root, "", out);
    EXPECT_LE(s.peak_in_window(), window);  // (0 when the caller was always first)
  }
}

TEST_F(TreeStreamTest, MissingAndDamagedTreesAreReportedWithTheirPathAndTheRestIsWalked) {
  BlobId missing(Sha256(AsBytes(std::string("no such tree"))));
  BlobId bad_json, good;
  BlobId root = Build([&](testing::TreeBuilder& tb) {
    good = Level(tb, 2, 2, "good");
    std::string junk = "this is not JSON";
    bad_json = BlobId(Sha256(AsBytes(junk)));
    writer_->SaveBlob(BlobType::kTree, bad_json, AsBytes(junk));
    return tb.Tree({testing::TreeBuilder::Dir("a", missing), testing::TreeBuilder::Dir("b", good),
                    testing::TreeBuilder::Dir("c", bad_json)});
  });
  std::vector<std::pair<std::string, BlobId>> serial_good;
  Serial(good, "/b", serial_good);

  for (int threads : {1, 3}) {
    Mutex mu;
    std::map<std::string, TreeStreamError> errors;
    std::set<std::string> visited;
    StreamTreesOptions o;
    o.threads = threads;
    o.tree = [&](const StreamedTree& t, TreeChildren& c) {
      AddChildren(t, c);  // throws for the junk tree
      MutexLock lock(mu);
      visited.insert(t.ref.path);
    };
    o.error = [&](const TreeStreamError& e) {
      MutexLock lock(mu);
      errors.emplace(e.ref.path, e);
      return true;
    };
    StreamTrees(*repo_, {{root, 0, ""}}, o);
    ASSERT_EQ(errors.size(), 2u) << threads;
    EXPECT_EQ(errors.at("/a").ref.id, missing);
    EXPECT_EQ(errors.at("/a").code, ErrorCode::kNotFound) << errors.at("/a").message;
    EXPECT_EQ(errors.at("/c").ref.id, bad_json);
    EXPECT_EQ(errors.at("/c").code, ErrorCode::kCorrupt) << errors.at("/c").message;
    for (const auto& [p, id] : serial_good) EXPECT_TRUE(visited.count(p)) << p;
    EXPECT_TRUE(visited.count(""));
  }

  // The ordered stream throws what LoadTree throws.
  OrderedTreeStream s(*repo_, 2);
  std::vector<BlobId> subs{missing, good, bad_json};
  s.Expect(subs);
  EXPECT_THROW(s.Take(missing), Error);
  EXPECT_EQ(EncodeTree(s.Take(good)), EncodeTree(repo_->LoadTree(good)));
  EXPECT_THROW(s.Take(bad_json), Error);
}

TEST_F(TreeStreamTest, DeepTree) {
  constexpr int kDepth = 1500;
  BlobId root = Build([](testing::TreeBuilder& tb) {
    BlobId t = tb.Tree({tb.File("leaf", "leaf")});
    for (int i = 0; i < kDepth; ++i)
      t = tb.Tree({testing::TreeBuilder::Dir("d", t), tb.File("f", "level " + std::to_string(i))});
    return t;
  });
  std::atomic<int> n{0};
  std::atomic<size_t> longest{0};
  StreamTreesOptions o;
  o.threads = 3;
  o.tree = [&](const StreamedTree& t, TreeChildren& c) {
    ++n;
    size_t len = t.ref.path.size(), l = longest.load();
    while (len > l && !longest.compare_exchange_weak(l, len)) {
    }
    AddChildren(t, c);
  };
  StreamTrees(*repo_, {{root, 0, ""}}, o);
  EXPECT_EQ(n.load(), kDepth + 1);
  EXPECT_EQ(longest.load(), size_t{2} * kDepth);

  OrderedTreeStream s(*repo_, 3);
  std::vector<std::pair<std::string, BlobId>> ordered, serial;
  Ordered(s, root, "", ordered);
  Serial(root, "", serial);
  EXPECT_EQ(ordered, serial);
}

TEST_F(TreeStreamTest, TheFirstErrorCancelsWhenTheCallerSaysSo) {
  BlobId missing(Sha256(AsBytes(std::string("gone"))));
  BlobId root = Build([&](testing::TreeBuilder& tb) {
    BlobId deep = Level(tb, 3, 3, "deep");
    return tb.Tree({testing::TreeBuilder::Dir("a", missing), testing::TreeBuilder::Dir("b", deep)});
  });
  // One worker: the root, then the unindexed tree first (before the pack's trees).
  for (bool cancel : {true, false}) {
    std::atomic<int> trees{0}, errors{0};
    StreamTreesOptions o;
    o.threads = 1;
    o.tree = [&](const StreamedTree& t, TreeChildren& c) {
      ++trees;
      AddChildren(t, c);
    };
    o.error = [&](const TreeStreamError& e) {
      ++errors;
      EXPECT_EQ(e.ref.path, "/a");
      return !cancel;
    };
    StreamTrees(*repo_, {{root, 0, ""}}, o);
    EXPECT_EQ(errors.load(), 1);
    if (cancel) {
      EXPECT_EQ(trees.load(), 1);  // the root only
    } else {
      EXPECT_EQ(trees.load(), 1 + 1 + 3 + 9 + 27);
    }
  }
  // Several workers: after the cancelling error no further error is reported.
  std::atomic<int> errors{0};
  StreamTreesOptions o;
  o.threads = 4;
  o.tree = [&](const StreamedTree& t, TreeChildren& c) { AddChildren(t, c); };
  o.error = [&](const TreeStreamError&) {
    ++errors;
    return false;
  };
  StreamTrees(*repo_, {{root, 0, ""}, {missing, 0, "/x"}, {missing, 0, "/y"}}, o);
  EXPECT_EQ(errors.load(), 1);
}

}  // namespace
}  // namespace haven
