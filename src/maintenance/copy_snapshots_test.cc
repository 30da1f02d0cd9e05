#include "maintenance/copy_snapshots.h"

#include <gtest/gtest.h>

#include "backend/mem_backend.h"
#include "chunker/chunker.h"
#include "core/error.h"
#include "maintenance/rechunk_tree.h"
#include "repo/node.h"
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
  auto src = testing::TestRepository::Open(src_be, "s", 2);
  // The same chunker parameters: blobs are copied as they are.
  Repository::Init(*dst_be, "d", 1, crypto::ScryptParams{1024, 8, 1}, 1,
                   src->config().chunker_polynomial);
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


// Two repositories with different chunker polynomials: the copy cuts the files again with
// the destination's chunker (the blobs a backup into the destination would make), keeps
// every other field, stores duplicate content once and recognises its copies next time.
TEST(CopySnapshots, RechunksWhenThePolynomialsDiffer) {
  auto src_be = std::make_shared<MemBackend>(), dst_be = std::make_shared<MemBackend>();
  Repository::Init(*src_be, "s", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  Repository::Init(*dst_be, "d", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto src = testing::TestRepository::Open(src_be, "s", 2);
  auto dst = testing::TestRepository::Open(dst_be, "d", 2);
  ASSERT_NE(src->config().chunker_polynomial, dst->config().chunker_polynomial);
  // 12 MiB: the destination's random polynomial cuts it more than once but for a chance of
  // e^-11.5 (a cut is due every 1 MiB on average after the first 512 KiB); with 3 MiB one
  // run in 12 found no cut and failed below (seen under make tsan).
  std::string data(12 << 20, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : data) {  // xorshift: content the chunker cuts at data-defined places
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  // The source holds the file as twelve 1 MiB blobs (not its own chunker's cut).
  Node big;
  big.name = "big";
  big.type = NodeType::kFile;
  big.mode = 0600;
  big.size = data.size();
  for (size_t off = 0; off < data.size(); off += 1 << 20) {
    const ByteView part(reinterpret_cast<const uint8_t*>(data.data()) + off, 1 << 20);
    big.content.push_back(BlobId(Sha256(part)));
    src->session().SaveBlob(BlobType::kData, big.content.back(), part);
  }
  Node dup = big;
  dup.name = "dup";
  TreeBuilder tb(*src);
  auto save_tree = [&](const std::vector<Node>& nodes) {  // as a backup encodes it
    const std::string bytes = EncodeTree(nodes);
    const BlobId id(Sha256(AsBytes(bytes)));
    src->session().SaveBlob(BlobType::kTree, id, AsBytes(bytes));
    return id;
  };
  const BlobId sub = save_tree({TreeBuilder::Link("l", "big"), tb.File("small", "tiny")});
  const BlobId root = save_tree({big, TreeBuilder::Dir("d", sub), dup});
  src->session().Flush();
  Snapshot snap;
  snap.tree = root;
  snap.paths = {"/x"};
  snap.hostname = "h";
  const FileId sid = src->SaveJson(FileType::kSnapshot, snap.ToJson());
  src->LoadIndex();

  std::vector<std::string> said;
  CopySnapshotsOptions o;
  o.progress = [&](const std::string& s) { said.push_back(s); };
  auto res = CopySnapshots(src->indexed(), dst->session(), {{sid, snap}}, {}, o);
  EXPECT_TRUE(res.rechunk);
  ASSERT_EQ(res.written.size(), 1u);
  dst->LoadIndex();
  const Snapshot copy = Snapshot::Parse(dst->LoadJson(FileType::kSnapshot, res.written[0]), "c");
  EXPECT_NE(copy.tree, root);
  EXPECT_EQ(copy.original, sid);
  EXPECT_EQ(copy.hostname, "h");
  const std::vector<Node> nodes = dst->indexed().LoadTree(copy.tree);
  ASSERT_EQ(nodes.size(), 3u);
  // The destination's own cut of the file, blob for blob.
  std::vector<BlobId> want;
  size_t off = 0;
  for (size_t len : chunker::ChunkLengths(dst->chunker_tables(), AsBytes(data))) {
    want.push_back(BlobId(Sha256(AsBytes(std::string_view(data).substr(off, len)))));
    off += len;
  }
  EXPECT_GT(want.size(), 1u);
  EXPECT_EQ(nodes[0].content, want);
  EXPECT_EQ(nodes[2].content, want);  // the duplicate: the same blobs
  EXPECT_EQ(nodes[0].mode, 0600u);
  std::string back;
  for (const BlobId& b : nodes[0].content) {
    const Bytes p = dst->indexed().LoadBlob(BlobType::kData, b);
    back.append(p.begin(), p.end());
  }
  EXPECT_EQ(back, data);
  EXPECT_EQ(res.blobs, want.size() + 1);  // the big file's chunks once, and "tiny"
  ASSERT_TRUE(nodes[1].subtree);
  EXPECT_EQ(*nodes[1].subtree, sub);  // nothing cut differently below: the same tree
  // Again: recognised although its tree differs from the source's.
  auto again = CopySnapshots(src->indexed(), dst->session(), {{sid, snap}},
                             dst->LoadSnapshots(), o);
  EXPECT_EQ(again.skipped, 1u);
  EXPECT_EQ(again.copied, 0u);
  // --no-rechunk: restic's copy, the source's blobs and tree as they are.
  auto plain_be = std::make_shared<MemBackend>();
  Repository::Init(*plain_be, "p", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto plain = testing::TestRepository::Open(plain_be, "p", 2);
  o.rechunk = false;
  auto as_is = CopySnapshots(src->indexed(), plain->session(), {{sid, snap}}, {}, o);
  EXPECT_FALSE(as_is.rechunk);
  plain->LoadIndex();
  const Snapshot c2 = Snapshot::Parse(plain->LoadJson(FileType::kSnapshot, as_is.written[0]), "c");
  EXPECT_EQ(c2.tree, root);
}

// A hostile source nested deeper than kMaxTreeDepth stops the copy with an error
// naming the tree (one recursion per level: no stack overflow), and writes no snapshot.
TEST(CopySnapshots, RechunkRefusesATreeNestedTooDeeply) {
  auto src_be = std::make_shared<MemBackend>(), dst_be = std::make_shared<MemBackend>();
  Repository::Init(*src_be, "s", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  Repository::Init(*dst_be, "d", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto src = testing::TestRepository::Open(src_be, "s", 2);
  auto dst = testing::TestRepository::Open(dst_be, "d", 2);
  ASSERT_NE(src->config().chunker_polynomial, dst->config().chunker_polynomial);
  src->LoadIndex();
  TreeBuilder tb(*src);
  BlobId tree = tb.Tree({tb.File("f", "x")});
  for (int i = 0; i < kMaxTreeDepth; ++i) tree = tb.Tree({TreeBuilder::Dir("d", tree)});
  src->session().Flush();
  Snapshot snap;
  snap.tree = tree;
  snap.paths = {"/x"};
  snap.hostname = "h";
  const FileId sid = src->SaveJson(FileType::kSnapshot, snap.ToJson());
  src->LoadIndex();
  try {
    CopySnapshots(src->indexed(), dst->session(), {{sid, snap}}, {}, {});
    FAIL() << "copied a tree nested deeper than " << kMaxTreeDepth;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("nested deeper than 4096"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(dst->LoadSnapshots().empty());
}

}  // namespace
}  // namespace haven
