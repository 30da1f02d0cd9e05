// The folder state's file format (docs/folder-state.md): golden bytes and what the parser
// refuses; the folder key's inputs.
#include "archiver/folder_state.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

namespace haven {
namespace {

std::string Rep(const char* hex, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += hex;
  return r;
}

TEST(FolderStateFormat, GoldenBytesAndRefusals) {
  FolderState s;
  s.context.bytes.fill(0x11);
  s.snapshot = FileId(RawId{});
  s.snapshot.bytes[0] = 0x22;
  s.tree.bytes.fill(0x44);
  FolderState::Dir a, b;
  a.key.bytes.fill(0x01);
  a.tree.bytes.fill(0xa1);
  b.key.bytes.fill(0x02);
  b.tree.bytes.fill(0xb2);
  BlobId sub;
  sub.bytes.fill(0xc3);
  b.subtrees = {sub};
  s.dirs = {a, b};
  FileId idx;
  idx.bytes.fill(0x33);
  s.index_files = {idx};
  KnownBlob data{BlobType::kData, {}, {PackId{}, 0x10, 0x50, 0}};
  data.id.bytes.fill(0xd4);
  data.where.pack.bytes.fill(0xe5);
  KnownBlob tree{BlobType::kTree, {}, {PackId{}, 0x0102, 0x40, 0x0a0b}};
  tree.id.bytes.fill(0x05);
  tree.where.pack.bytes.fill(0xf6);
  s.blobs = {data, tree};  // (type first: the data blob's id sorts after the tree's)
  const Bytes enc = EncodeFolderState(s);
  const std::string want = "4856465354303034" + std::string(64, '1') + "22" +
                           std::string(62, '0') + std::string(64, '4') + "0100000000000000" + std::string(64, '3') +
                           "0200000000000000" + Rep("01", 32) + Rep("a1", 32) +
                           "0000000000000000" + Rep("02", 32) + Rep("b2", 32) +
                           "0100000000000000" + Rep("c3", 32) + "0200000000000000" + "00" +
                           Rep("d4", 32) + Rep("e5", 32) + "10000000" + "50000000" + "00000000" +
                           "01" + Rep("05", 32) + Rep("f6", 32) + "02010000" + "40000000" +
                           "0b0a0000";
  EXPECT_EQ(HexEncode(enc), want);
  auto back = ParseFolderState(enc);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, s);
  ASSERT_TRUE(back->Find(b.key));
  EXPECT_EQ(back->Find(b.key)->tree, b.tree);
  EXPECT_EQ(back->Find(b.key)->subtrees, b.subtrees);
  EXPECT_FALSE(back->Find(s.context));

  auto refused = [](Bytes x) { return !ParseFolderState(x).has_value(); };
  Bytes m = enc;
  m[0] = 'X';
  EXPECT_TRUE(refused(m));                                                  // magic
  EXPECT_TRUE(refused(Bytes(enc.begin(), enc.end() - 1)));                  // truncated
  Bytes longer = enc;
  longer.push_back(0);
  EXPECT_TRUE(refused(longer));                                             // trailing byte
  const size_t folders_at = 8 + 96 + 8 + 32;
  Bytes count = enc;
  count[folders_at] = 3;
  EXPECT_TRUE(refused(count));                                              // count too large
  count[folders_at + 7] = 0x80;
  EXPECT_TRUE(refused(count));                                              // absurd count
  Bytes subs = enc;
  subs[folders_at + 8 + 64] = 1;  // the first folder claims a subtree: the rest is off by 32
  EXPECT_TRUE(refused(subs));
  subs[folders_at + 8 + 64 + 7] = 0x7f;
  EXPECT_TRUE(refused(subs));                                               // absurd subtrees
  Bytes files = enc;
  files[8 + 96] = 2;
  EXPECT_TRUE(refused(files));                                              // index count
  files[8 + 96] = 0xff;
  files[8 + 96 + 7] = 0xff;
  EXPECT_TRUE(refused(files));                                              // absurd
  FolderState twice = s;
  twice.index_files = {idx, idx};
  EXPECT_TRUE(refused(EncodeFolderState(twice)));                           // repeated file
  FolderState un = s;
  std::swap(un.dirs[0], un.dirs[1]);
  EXPECT_TRUE(refused(EncodeFolderState(un)));                              // unsorted
  un.dirs[0] = un.dirs[1];
  EXPECT_TRUE(refused(EncodeFolderState(un)));                              // duplicate
  FolderState empty;
  auto e = ParseFolderState(EncodeFolderState(empty));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->dirs.empty());
  EXPECT_TRUE(e->blobs.empty());
  // The blobs: order by (type, id), unique, a known type, a sealed length of 32 or more.
  const size_t blobs_at = enc.size() - 2 * 77;
  Bytes type = enc;
  type[blobs_at] = 2;
  EXPECT_TRUE(refused(type));                                               // unknown type
  Bytes order = enc;
  order[blobs_at] = 1;  // both trees now, ids d4.. then 05..
  EXPECT_TRUE(refused(order));                                              // unsorted
  FolderState dup = s;
  dup.blobs = {tree, tree};
  EXPECT_TRUE(refused(EncodeFolderState(dup)));                             // duplicate
  FolderState shortlen = s;
  shortlen.blobs[0].where.length = 31;
  EXPECT_TRUE(refused(EncodeFolderState(shortlen)));                        // length < 32
  Bytes cut(enc.begin(), enc.end() - 77);
  EXPECT_TRUE(refused(cut));                                                // a blob short
  FolderState sorted = s;
  sorted.blobs = {tree, data, tree};
  sorted.SortDirs();
  EXPECT_EQ(sorted.blobs, s.blobs);
  // The earlier layout (HVFST003, no blobs) is refused: the next run reads the trees.
  Bytes v3(enc.begin(), enc.begin() + static_cast<std::ptrdiff_t>(blobs_at - 8));
  v3[7] = '3';
  EXPECT_TRUE(refused(v3));
}

TEST(FolderStateFormat, IndexFilesRemainAndPath) {
  FolderState s;
  FileId a, b, c;
  a.bytes.fill(1);
  b.bytes.fill(2);
  c.bytes.fill(3);
  s.index_files = {a, c};
  EXPECT_TRUE(s.IndexFilesRemain({c, b, a}));
  EXPECT_FALSE(s.IndexFilesRemain({a, b}));
  EXPECT_EQ(FolderStatePath("/d", "backup", {"h", "/p"}).rfind("/d/backup-", 0), 0u);
  EXPECT_EQ(FolderStatePath("/d", "backup", {"h", "/p"}).size(), std::string("/d/backup-").size() + 16);
  EXPECT_NE(FolderStatePath("/d", "backup", {"h", "/p"}), FolderStatePath("/d", "backup", {"h", "/q"}));
}

// Every field a node is made of moves the key; the order of entries does too.
TEST(FolderKey, EveryNodeFieldMovesTheKey) {
  RawId ctx;
  ctx.bytes.fill(7);
  struct stat st {};
  st.st_mode = S_IFREG | 0644;
  st.st_size = 10;
  auto key = [&](const struct stat& x, const char* name = "f") {
    DirKey k(ctx);
    k.AddEntry(name, x);
    return k.Finish();
  };
  const RawId base = key(st);
  EXPECT_EQ(key(st), base);
  EXPECT_NE(key(st, "g"), base);
  auto moved = [&](auto change) {
    struct stat x = st;
    change(x);
    return key(x) != base;
  };
  EXPECT_TRUE(moved([](struct stat& x) { x.st_mode = S_IFREG | 0600; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_uid = 12345; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_gid = 12345; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_size = 11; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_mtim.tv_nsec = 1; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_ctim.tv_sec = 1; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_ino = 99; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_dev = 99; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_nlink = 2; }));
  EXPECT_TRUE(moved([](struct stat& x) { x.st_rdev = 5; }));
  RawId other_ctx;
  other_ctx.bytes.fill(8);
  DirKey k(other_ctx);
  k.AddEntry("f", st);
  EXPECT_NE(k.Finish(), base);
  EXPECT_NE(FolderContext("v1", {"a"}), FolderContext("v1", {"b"}));
  EXPECT_NE(FolderContext("v1", {"a"}), FolderContext("v2", {"a"}));
}

}  // namespace
}  // namespace haven
