#include "repo/node.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

using namespace std::string_literals;

BlobId IdFromHex(std::string_view hex) {
  auto id = BlobId::FromHex(hex);
  EXPECT_TRUE(id.has_value()) << hex;
  return id.value_or(BlobId());
}

// 2026-11-30T00:15:17.213751974Z
constexpr gojson::Timestamp kKatTime{1795997717, 213751974, 0};

Node KatNode() {
  Node n;
  n.name = "d.txt";
  n.type = NodeType::kFile;
  n.mode = 0644;
  n.mtime = n.atime = n.ctime = kKatTime;
  n.uid = 0;
  n.gid = 0;
  n.user = "root";
  n.group = "root";
  n.inode = 10970374;
  n.device_id = 65024;
  n.size = 5;
  n.links = 1;
  n.content = {IdFromHex("64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599")};
  return n;
}

const char kKatNodeJson[] =
    R"({"name":"d.txt","type":"file","mode":420,"mtime":"2026-11-30T00:15:17.213751974Z",)"
    R"("atime":"2026-11-30T00:15:17.213751974Z","ctime":"2026-11-30T00:15:17.213751974Z",)"
    R"("uid":0,"gid":0,"user":"root","group":"root","inode":10970374,"device_id":65024,)"
    R"("size":5,"links":1,"content":["64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599"]})";

// The common prefix of the real shapes below, up to and including "group".
std::string Head(std::string_view name, std::string_view type, uint32_t mode) {
  return R"({"name":")" + std::string(name) + R"(","type":")" + std::string(type) +
         R"(","mode":)" + std::to_string(mode) +
         R"(,"mtime":"2026-11-30T00:15:17.213751974Z","atime":"2026-11-30T00:15:17.213751974Z",)"
         R"("ctime":"2026-11-30T00:15:17.213751974Z","uid":0,"gid":0,"user":"root","group":"root")";
}

Node BaseNode(std::string name, NodeType type, uint32_t mode) {
  Node n;
  n.name = std::move(name);
  n.type = type;
  n.mode = mode;
  n.mtime = n.atime = n.ctime = kKatTime;
  n.user = "root";
  n.group = "root";
  return n;
}

std::string NodeJson(const Node& n) {
  std::string out;
  AppendNodeJson(out, n);
  return out;
}

// ---- docs/format.md §10.2 serialisation KAT ----

TEST(NodeKat, RealNodeBytesRestic014) {
  const Node n = KatNode();
  EXPECT_EQ(NodeJson(n), kKatNodeJson);
  const std::string tree = EncodeTree({n});
  EXPECT_EQ(tree, "{\"nodes\":["s + kKatNodeJson + "]}\n");
  EXPECT_EQ(tree.size(), 355u);
  EXPECT_EQ(Sha256(AsBytes(tree)).Hex(),
            "62b2d082392ea017dfb5312299675ee837700ce91c59283205a18cfb731a78eb");
}

TEST(NodeKat, DecodeRealNodeBytes) {
  const std::string tree = "{\"nodes\":["s + kKatNodeJson + "]}\n";
  auto nodes = DecodeTree(tree, "kat");
  ASSERT_EQ(nodes.size(), 1u);
  const Node& n = nodes[0];
  EXPECT_EQ(n.name, "d.txt");
  EXPECT_EQ(n.type, NodeType::kFile);
  EXPECT_EQ(n.mode, 420u);
  EXPECT_EQ(n.mtime, kKatTime);
  EXPECT_EQ(n.atime, kKatTime);
  EXPECT_EQ(n.ctime, kKatTime);
  EXPECT_EQ(n.user, "root");
  EXPECT_EQ(n.inode, 10970374u);
  EXPECT_EQ(n.device_id, 65024u);
  EXPECT_EQ(n.size, 5u);
  EXPECT_EQ(n.links, 1u);
  ASSERT_EQ(n.content.size(), 1u);
  EXPECT_EQ(n.content[0], KatNode().content[0]);
  EXPECT_FALSE(n.subtree.has_value());
  EXPECT_EQ(EncodeTree(nodes), tree);
}

TEST(NodeKat, EmptyTree) {
  EXPECT_EQ(EncodeTree({}), "{\"nodes\":[]}\n");
  EXPECT_TRUE(DecodeTree("{\"nodes\":[]}\n", "t").empty());
  EXPECT_TRUE(DecodeTree("{\"nodes\":null}", "t").empty());
}

TEST(NodeKat, DirShape) {
  Node n = BaseNode("sub", NodeType::kDir, gomode::kDir | 0755);
  n.inode = 42;
  n.device_id = 65024;
  n.subtree = IdFromHex("62b2d082392ea017dfb5312299675ee837700ce91c59283205a18cfb731a78eb");
  EXPECT_EQ(n.mode, 2147484141u);
  EXPECT_EQ(NodeJson(n),
            Head("sub", "dir", 2147484141u) +
                R"(,"inode":42,"device_id":65024,"content":null,)"
                R"("subtree":"62b2d082392ea017dfb5312299675ee837700ce91c59283205a18cfb731a78eb"})");
}

TEST(NodeKat, SymlinkShape) {
  Node n = BaseNode("link", NodeType::kSymlink, gomode::kSymlink | 0777);
  n.links = 1;
  n.linktarget = "hello.txt";
  EXPECT_EQ(n.mode, 134218239u);
  EXPECT_EQ(NodeJson(n), Head("link", "symlink", 134218239u) +
                             R"(,"links":1,"linktarget":"hello.txt","content":null})");
}

TEST(NodeKat, SymlinkInvalidUtf8TargetGetsRaw) {
  Node n = BaseNode("badlink", NodeType::kSymlink, gomode::kSymlink | 0777);
  n.links = 1;
  n.linktarget = "tgt\xff\x08";
  EXPECT_EQ(NodeJson(n), Head("badlink", "symlink", 134218239u) +
                             R"(,"links":1,"linktarget":"tgt\ufffd\u0008",)"
                             R"("linktarget_raw":"dGd0/wg=","content":null})");
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].linktarget, "tgt\xff\x08"s);
}

TEST(NodeKat, FifoShape) {
  Node n = BaseNode("pipe", NodeType::kFifo, gomode::kNamedPipe | 0644);
  EXPECT_EQ(n.mode, 33554852u);
  EXPECT_EQ(NodeJson(n), Head("pipe", "fifo", 33554852u) + R"(,"content":null})");
}

TEST(NodeKat, EmptyFileShape) {
  Node n = BaseNode("empty", NodeType::kFile, 0644);
  n.links = 1;
  EXPECT_EQ(NodeJson(n), Head("empty", "file", 420) + R"(,"links":1,"content":[]})");
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(back[0].content.empty());
  EXPECT_EQ(back[0].size, 0u);
}

TEST(NodeKat, XattrShape) {
  Node n = BaseNode("x", NodeType::kFile, 0644);
  n.size = 5;
  n.links = 2;
  n.xattrs = {{"user.test", "value1"}, {"user.bin", "\x00\x01\x02\xff"s}, {"user.null", std::nullopt}};
  n.content = KatNode().content;
  EXPECT_EQ(NodeJson(n),
            Head("x", "file", 420) +
                R"(,"size":5,"links":2,"extended_attributes":[{"name":"user.test","value":"dmFsdWUx"},)"
                R"({"name":"user.bin","value":"AAEC/w=="},{"name":"user.null","value":null}],)"
                R"("content":["64896f89fd11190013b70103e603a1c5826e56b7fb7d2197ab279b0690043599"]})");
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].xattrs.size(), 3u);
  EXPECT_EQ(back[0].xattrs[0].value, "value1");
  EXPECT_EQ(back[0].xattrs[1].value, "\x00\x01\x02\xff"s);
  EXPECT_FALSE(back[0].xattrs[2].value.has_value());
}

TEST(NodeKat, DevicesAndOptionalFields) {
  Node n = BaseNode("tty", NodeType::kCharDev, gomode::kDevice | gomode::kCharDevice | 0620);
  n.device = 0x8801;
  n.links = 1;
  n.error = "lstat failed";
  n.generic_attributes = R"({"windows.file_attributes":"IAAAAA=="})";
  EXPECT_EQ(NodeJson(n), Head("tty", "chardev", (1u << 26) | (1u << 21) | 0620) +
                             R"(,"links":1,"generic_attributes":{"windows.file_attributes":)"
                             R"("IAAAAA=="},"device":34817,"content":null,"error":"lstat failed"})");
}

TEST(NodeKat, NonUtcOffsetAndTrimmedFraction) {
  Node n = BaseNode("t", NodeType::kFile, 0600);
  n.mtime = {1795997717, 500000000, 5 * 3600 + 30 * 60};
  n.atime = {1795997717, 0, -5 * 3600};
  n.ctime = {1795997717, 120, 0};
  const std::string j = NodeJson(n);
  EXPECT_NE(j.find(R"("mtime":"2026-11-30T05:45:17.5+05:30")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("atime":"2026-11-29T19:15:17-05:00")"), std::string::npos) << j;
  EXPECT_NE(j.find(R"("ctime":"2026-11-30T00:15:17.00000012Z")"), std::string::npos) << j;
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].mtime, n.mtime);
  EXPECT_EQ(back[0].atime, n.atime);
  EXPECT_EQ(back[0].ctime, n.ctime);
}

TEST(NodeKat, NameQuotingInTree) {
  Node n = BaseNode("we\"ird\\\\name <&>.txt", NodeType::kFile, 0644);
  const std::string j = NodeJson(n);
  const std::string want = R"({"name":"we\\\"ird\\\\\\\\name \u003c\u0026\u003e.txt","type")";
  EXPECT_EQ(j.substr(0, want.size()), want);
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, n.name);
}

// ---- Sorting rules ----

TEST(NodeTree, SortedByRawBytes) {
  // 'l' (0x6c) < 0xff although the quoted form "bad\\xffx" sorts before "badlink".
  std::vector<Node> ok = {BaseNode("badlink", NodeType::kFile, 0644),
                          BaseNode("bad\xffx", NodeType::kFile, 0644)};
  const std::string tree = EncodeTree(ok);
  EXPECT_LT(tree.find("badlink"), tree.find("bad\\\\xffx"));
  std::vector<Node> bad = {ok[1], ok[0]};
  try {
    EncodeTree(bad);
    FAIL() << "unsorted nodes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFatal);
  }
}

TEST(NodeTree, UnsortedOrDuplicateRejected) {
  std::vector<Node> unsorted = {BaseNode("b", NodeType::kFile, 0644),
                                BaseNode("a", NodeType::kFile, 0644)};
  EXPECT_THROW(EncodeTree(unsorted), Error);
  std::vector<Node> dup = {BaseNode("a", NodeType::kFile, 0644),
                           BaseNode("a", NodeType::kDir, gomode::kDir | 0755)};
  EXPECT_THROW(EncodeTree(dup), Error);
  std::vector<Node> later = {BaseNode("a", NodeType::kFile, 0644),
                             BaseNode("c", NodeType::kFile, 0644),
                             BaseNode("b", NodeType::kFile, 0644)};
  EXPECT_THROW(EncodeTree(later), Error);
  // A prefix sorts first.
  std::vector<Node> prefix = {BaseNode("a", NodeType::kFile, 0644),
                              BaseNode("a\x01", NodeType::kFile, 0644)};
  EXPECT_NO_THROW(EncodeTree(prefix));
}

// A decoded tree encodes back to its own id; with a field haven does not model (an
// unknown key), with a different id, or with nodes EncodeTree refuses, it does not.
TEST(NodeTree, EncodesBackTo) {
  std::vector<Node> nodes = {BaseNode("a", NodeType::kFile, 0644),
                             BaseNode("b", NodeType::kFile, 0644)};
  const std::string bytes = EncodeTree(nodes);
  const BlobId id(Sha256(AsBytes(bytes)));
  EXPECT_TRUE(EncodesBackTo(DecodeTree(bytes, "tree"), id));
  EXPECT_FALSE(EncodesBackTo(nodes, BlobId(Sha256(AsBytes(bytes + "\n")))));
  std::string extra = bytes;
  const size_t at = extra.find("{\"name\"");
  ASSERT_NE(at, std::string::npos);
  extra.insert(at + 1, "\"haven_unknown\":1,");
  const std::vector<Node> decoded = DecodeTree(extra, "tree");
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_FALSE(EncodesBackTo(decoded, BlobId(Sha256(AsBytes(extra)))));
  std::vector<Node> unsorted = {nodes[1], nodes[0]};
  EXPECT_FALSE(EncodesBackTo(unsorted, id));
}

// ---- Mode conversion (docs/format.md §10.6) ----

TEST(NodeMode, GoModeFromPosixTypes) {
  EXPECT_EQ(GoModeFromPosix(S_IFREG | 0644), 420u);
  EXPECT_EQ(GoModeFromPosix(S_IFDIR | 0755), 2147484141u);
  EXPECT_EQ(GoModeFromPosix(S_IFLNK | 0777), 134218239u);
  EXPECT_EQ(GoModeFromPosix(S_IFIFO | 0644), 33554852u);
  EXPECT_EQ(GoModeFromPosix(S_IFBLK | 0660), (1u << 26) | 0660);
  EXPECT_EQ(GoModeFromPosix(S_IFCHR | 0620), (1u << 26) | (1u << 21) | 0620);
  EXPECT_EQ(GoModeFromPosix(S_IFSOCK | 0755), (1u << 24) | 0755);
}

TEST(NodeMode, SpecialBits) {
  EXPECT_EQ(GoModeFromPosix(S_IFREG | S_ISUID | 0755), (1u << 23) | 0755);
  EXPECT_EQ(GoModeFromPosix(S_IFREG | S_ISGID | 0755), (1u << 22) | 0755);
  EXPECT_EQ(GoModeFromPosix(S_IFDIR | S_ISVTX | 0777), (1u << 31) | (1u << 20) | 0777);
  EXPECT_EQ(GoModeFromPosix(S_IFDIR | S_ISUID | S_ISGID | S_ISVTX | 01777),
            (1u << 31) | (1u << 23) | (1u << 22) | (1u << 20) | 0777);
  EXPECT_EQ(PosixPermFromGoMode((1u << 23) | 0755), mode_t(S_ISUID | 0755));
  EXPECT_EQ(PosixPermFromGoMode((1u << 22) | 0750), mode_t(S_ISGID | 0750));
  EXPECT_EQ(PosixPermFromGoMode((1u << 20) | 0777), mode_t(S_ISVTX | 0777));
  // Type bits are dropped; the POSIX 04000-style bits in a Go mode mean nothing.
  EXPECT_EQ(PosixPermFromGoMode(2147484141u), mode_t(0755));
  EXPECT_EQ(PosixPermFromGoMode(134218239u), mode_t(0777));
  EXPECT_EQ(PosixPermFromGoMode(04000 | 0644), mode_t(0644));
}

TEST(NodeMode, AllPermissionAndSpecialCombinationsRoundTrip) {
  const mode_t types[] = {S_IFREG, S_IFDIR, S_IFLNK, S_IFBLK, S_IFCHR, S_IFIFO, S_IFSOCK};
  const uint32_t go_types[] = {0,
                               gomode::kDir,
                               gomode::kSymlink,
                               gomode::kDevice,
                               gomode::kDevice | gomode::kCharDevice,
                               gomode::kNamedPipe,
                               gomode::kSocket};
  for (size_t t = 0; t < std::size(types); ++t) {
    for (mode_t perm = 0; perm <= 07777; ++perm) {
      const uint32_t g = GoModeFromPosix(types[t] | perm);
      EXPECT_EQ(g & ~(gomode::kPerm | gomode::kSetuid | gomode::kSetgid | gomode::kSticky),
                go_types[t]);
      EXPECT_EQ(g & 0777, perm & 0777u);
      EXPECT_EQ(PosixPermFromGoMode(g), perm) << std::oct << perm;
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// ---- Round trip of random nodes ----

class NodeGen {
 public:
  explicit NodeGen(uint32_t seed) : rng_(seed) {}

  uint64_t U64() { return rng_(); }
  uint32_t U32() { return static_cast<uint32_t>(rng_()); }
  size_t Below(size_t n) { return static_cast<size_t>(rng_() % n); }
  bool Coin() { return rng_() & 1; }

  std::string RawBytes(size_t min, size_t max) {
    std::string s(min + Below(max - min + 1), '\0');
    for (char& c : s) {
      switch (Below(4)) {
        case 0: c = static_cast<char>(Below(256)); break;          // anything
        case 1: c = static_cast<char>(0x80 + Below(0x80)); break;  // UTF-8-ish / invalid
        default: c = static_cast<char>(0x20 + Below(0x5f)); break; // printable ASCII
      }
    }
    return s;
  }
  // Valid UTF-8 text (ASCII incl. JSON/HTML specials, plus some multi-byte characters).
  std::string Text(size_t max) {
    static const char* const kPieces[] = {"a", "Z", "0", " ", "\"", "\\", "<", ">", "&", "/",
                                          "\t", "\n", "\x01", "\x7f", "\xc3\xa9",
                                          "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "'"};
    std::string s;
    size_t n = Below(max + 1);
    for (size_t i = 0; i < n; ++i) s += kPieces[Below(std::size(kPieces))];
    return s;
  }
  gojson::Timestamp Time() {
    // Years 1970..2096, offsets in whole minutes within ±23:59.
    gojson::Timestamp t;
    t.sec = static_cast<int64_t>(U64() % 4'000'000'000ull);
    t.nsec = static_cast<int32_t>(U64() % 1'000'000'000ull);
    if (Coin()) t.nsec = (t.nsec / 1000) * 1000;
    t.offset = Coin() ? 0 : (static_cast<int32_t>(Below(2 * 1439 + 1)) - 1439) * 60;
    return t;
  }
  BlobId Id() {
    BlobId id;
    for (auto& b : id.bytes) b = static_cast<uint8_t>(rng_());
    return id;
  }
  uint64_t MaybeZero() {
    switch (Below(4)) {
      case 0: return 0;
      case 1: return U64();                // full 64-bit range
      case 2: return ~uint64_t{0};
      default: return Below(1000);
    }
  }

  Node RandomNode(std::string name) {
    Node n;
    n.name = std::move(name);
    n.type = static_cast<NodeType>(Below(8));
    n.mode = Coin() ? 0 : U32();
    n.mtime = Time();
    n.atime = Coin() ? n.mtime : Time();
    n.ctime = Time();
    n.uid = U32();
    n.gid = Coin() ? 0 : U32();
    n.user = Text(6);
    n.group = Text(6);
    n.inode = MaybeZero();
    n.device_id = MaybeZero();
    n.size = MaybeZero();
    n.links = MaybeZero();
    n.device = MaybeZero();
    if (n.type == NodeType::kSymlink || Below(5) == 0) n.linktarget = RawBytes(1, 30);
    size_t nx = Below(4);
    for (size_t i = 0; i < nx; ++i) {
      Xattr x;
      x.name = "user." + Text(5);
      switch (Below(3)) {
        case 0: break;  // null
        case 1: x.value = std::string(); break;
        default: x.value = RawBytes(0, 40); break;
      }
      n.xattrs.push_back(std::move(x));
    }
    if (Below(4) == 0)
      n.generic_attributes =
          R"({"windows.creation_time":"AAECAwQFBgc=","windows.file_attributes":"IAAAAA=="})";
    if (n.type == NodeType::kFile) {
      size_t nc = Below(5);
      for (size_t i = 0; i < nc; ++i) n.content.push_back(Id());
      if (nc >= 2 && Coin()) n.content.push_back(n.content[0]);  // repeated blob
    }
    if (n.type == NodeType::kDir || Below(10) == 0) n.subtree = Id();
    if (Below(6) == 0) n.error = Text(12);
    return n;
  }

 private:
  std::mt19937_64 rng_;
};

void ExpectSameNode(const Node& a, const Node& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.mtime, b.mtime);
  EXPECT_EQ(a.atime, b.atime);
  EXPECT_EQ(a.ctime, b.ctime);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.user, b.user);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.inode, b.inode);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.links, b.links);
  EXPECT_EQ(a.linktarget, b.linktarget);
  ASSERT_EQ(a.xattrs.size(), b.xattrs.size());
  for (size_t i = 0; i < a.xattrs.size(); ++i) {
    EXPECT_EQ(a.xattrs[i].name, b.xattrs[i].name);
    EXPECT_EQ(a.xattrs[i].value, b.xattrs[i].value);
  }
  EXPECT_EQ(a.generic_attributes, b.generic_attributes);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.subtree, b.subtree);
  EXPECT_EQ(a.error, b.error);
}

TEST(NodeRoundTrip, RandomNodes) {
  NodeGen g(20261130);
  for (int round = 0; round < 300; ++round) {
    std::set<std::string> names;
    size_t count = g.Below(12);
    while (names.size() < count) names.insert(g.RawBytes(1, 24));
    std::vector<Node> nodes;
    for (const std::string& name : names) nodes.push_back(g.RandomNode(name));  // set = sorted
    const std::string tree = EncodeTree(nodes);
    ASSERT_EQ(tree.back(), '\n');
    std::vector<Node> back;
    try {
      back = DecodeTree(tree, "random");
    } catch (const Error& e) {
      FAIL() << e.what() << "\n" << tree;
    }
    ASSERT_EQ(back.size(), nodes.size()) << tree;
    for (size_t i = 0; i < nodes.size(); ++i) {
      SCOPED_TRACE(tree);
      ExpectSameNode(back[i], nodes[i]);
    }
    // Same bytes again: the tree id is stable through decode/encode.
    EXPECT_EQ(EncodeTree(back), tree);
    if (HasFailure()) return;
  }
}

TEST(NodeRoundTrip, EveryByteAsName) {
  std::vector<Node> nodes;
  for (int b = 1; b < 256; ++b) nodes.push_back(BaseNode(std::string(1, char(b)), NodeType::kFile, 0));
  nodes.insert(nodes.begin(), BaseNode("\0"s, NodeType::kFile, 0));
  const std::string tree = EncodeTree(nodes);
  auto back = DecodeTree(tree, "bytes");
  ASSERT_EQ(back.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(back[b].name, std::string(1, char(b))) << b;
}

TEST(NodeRoundTrip, GenericAttributesPreserved) {
  Node n = BaseNode("g", NodeType::kFile, 0644);
  n.generic_attributes =
      R"({"windows.creation_time":"AAECAwQFBgc=","windows.security_descriptor":"AQAEgA=="})";
  auto back = DecodeTree(EncodeTree({n}), "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].generic_attributes, n.generic_attributes);
  // Whitespace in the stored JSON is minified on read.
  std::string tree = EncodeTree({n});
  tree.replace(tree.find("\"generic_attributes\":{") + 22, 0, " \n ");
  back = DecodeTree(tree, "t");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].generic_attributes, n.generic_attributes);
}

TEST(NodeDecode, AcceptsUnknownFieldsAndKeys) {
  const std::string tree = R"({"x":1,"nodes":[{"name":"a","type":"file","future":[1,2],)"
                           R"("mtime":"2024-01-02T03:04:06+01:00","content":[]}],"y":{}})";
  auto nodes = DecodeTree(tree, "t");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "a");
  EXPECT_EQ(nodes[0].mtime.offset, 3600);
}

TEST(NodeDecode, FieldsInAnyOrderAndTheFirstOfARepeatedKeyWins) {
  // The decoder reads each node in one pass over its fields; a repeated key keeps its
  // first value (what a lookup by key gives), whatever the field order.
  const std::string id = std::string(64, 'b');
  const std::string tree =
      R"({"nodes":[{"content":[")" + id + R"("],"size":7,"uid":5,"size":9,"type":"file",)"
      R"("user":"u1","name":"f","user":"u2","inode":3,"mtime":"2024-01-02T03:04:06Z",)"
      R"("device_id":4,"links":2,"gid":6,"group":"g","ctime":"2024-01-02T03:04:07Z",)"
      R"("atime":"2024-01-02T03:04:05Z","mode":420,"extended_attributes":[{"name":"user.k",)"
      R"("value":"dg=="}],"error":"e","name":"other"},{"subtree":")" + id +
      R"(","type":"dir","name":"g","linktarget":"t","device":11}]})";
  auto nodes = DecodeTree(tree, "t");
  ASSERT_EQ(nodes.size(), 2u);
  const Node& f = nodes[0];
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.type, NodeType::kFile);
  EXPECT_EQ(f.size, 7u);
  EXPECT_EQ(f.user, "u1");
  EXPECT_EQ(f.group, "g");
  EXPECT_EQ(f.uid, 5u);
  EXPECT_EQ(f.gid, 6u);
  EXPECT_EQ(f.inode, 3u);
  EXPECT_EQ(f.device_id, 4u);
  EXPECT_EQ(f.links, 2u);
  EXPECT_EQ(f.mode, 420u);
  EXPECT_EQ(f.mtime.sec, 1704164646);
  EXPECT_EQ(f.ctime.sec, 1704164647);
  EXPECT_EQ(f.atime.sec, 1704164645);
  ASSERT_EQ(f.xattrs.size(), 1u);
  EXPECT_EQ(f.xattrs[0].name, "user.k");
  EXPECT_EQ(f.xattrs[0].value, std::optional<std::string>("v"));
  EXPECT_EQ(f.error, "e");
  ASSERT_EQ(f.content.size(), 1u);
  EXPECT_EQ(f.content[0].Hex(), id);
  const Node& g = nodes[1];
  EXPECT_EQ(g.name, "g");
  EXPECT_EQ(g.type, NodeType::kDir);
  ASSERT_TRUE(g.subtree);
  EXPECT_EQ(g.subtree->Hex(), id);
  EXPECT_EQ(g.linktarget, "t");
  EXPECT_EQ(g.device, 11u);
  EXPECT_TRUE(g.content.empty());
}

TEST(NodeDecode, RusticNameEscapes) {
  // rustic leaves control characters raw (JSON \u0001) and escapes invalid bytes as \xNN.
  auto nodes = DecodeTree(R"({"nodes":[{"name":"a\u0001b\\xffc","type":"file"}]})", "t");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "a\x01" "b\xff" "c");
}

// ---- Garbage is kCorrupt, never a crash ----

void ExpectCorrupt(std::string_view json) {
  try {
    DecodeTree(json, "bad");
    ADD_FAILURE() << "accepted: " << json;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << json << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("tree bad"), std::string::npos) << e.what();
  }
}

TEST(NodeDecode, GarbageIsCorrupt) {
  const std::string id = std::string(64, 'a');
  ExpectCorrupt("");
  ExpectCorrupt("{");
  ExpectCorrupt("nodes");
  ExpectCorrupt("\xff\xfe");
  ExpectCorrupt(R"({"nodes":5})");
  ExpectCorrupt(R"({"nodes":{}})");
  ExpectCorrupt(R"({"nodes":[5]})");
  ExpectCorrupt(R"({"nodes":[{"type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":5,"type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"blockdev"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a\\q","type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a\\x4","type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a\"b","type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a\\ud800","type":"file"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","mtime":"yesterday"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","ctime":"2026-02-30T00:00:00Z"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","content":[1]}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","content":["abc"]}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","content":[")" + id + R"(0"]}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"dir","subtree":"zz"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"symlink","linktarget_raw":"!!"}]})");
  ExpectCorrupt(R"({"nodes":[{"name":"a","type":"file","extended_attributes":[{"value":null}]}]})");
  ExpectCorrupt(
      R"({"nodes":[{"name":"a","type":"file","extended_attributes":[{"name":"u","value":"%"}]}]})");
  ExpectCorrupt(std::string(R"({"nodes":[{"name":"a","type":"file"})"));
}

TEST(NodeDecode, MutatedTreesNeverCrash) {
  NodeGen g(7);
  std::vector<Node> nodes;
  for (const char* name : {"a", "b\xff", "dir", "link"}) nodes.push_back(g.RandomNode(name));
  const std::string tree = EncodeTree(nodes);
  std::mt19937 rng(99);
  size_t ok = 0, corrupt = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string m = tree;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[pos] = static_cast<char>(rng()); break;
        case 1: m.erase(pos, 1 + rng() % 8); break;
        case 2: m.insert(pos, 1, "{}[]\",:\\0"[rng() % 9]); break;
        default: m.resize(pos); break;
      }
      if (m.empty()) break;
    }
    try {
      auto back = DecodeTree(m, "m");
      ++ok;
      // Whatever decoded must encode again once sorted and de-duplicated.
      std::sort(back.begin(), back.end(), [](const Node& a, const Node& b) { return a.name < b.name; });
      back.erase(std::unique(back.begin(), back.end(),
                             [](const Node& a, const Node& b) { return a.name == b.name; }),
                 back.end());
      EncodeTree(back);
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
      ++corrupt;
    }
  }
  EXPECT_GT(corrupt, 1000u);
  EXPECT_GT(ok, 0u);
}

TEST(NodeTypeNames, RoundTrip) {
  for (int t = 0; t < 8; ++t) {
    const NodeType nt = static_cast<NodeType>(t);
    EXPECT_EQ(ParseNodeType(NodeTypeName(nt)), nt);
  }
  EXPECT_FALSE(ParseNodeType("File").has_value());
  EXPECT_FALSE(ParseNodeType("").has_value());
}

}  // namespace
}  // namespace haven

namespace haven {
namespace {

TEST(SafeNodeName, RefusesNamesThatLeaveTheDirectory) {
  for (const char* ok : {"a", ".a", "..a", "a..", "x y", "\xff"}) EXPECT_TRUE(SafeNodeName(ok)) << ok;
  for (std::string_view bad : {std::string_view(""), std::string_view("."), std::string_view(".."),
                               std::string_view("a/b"), std::string_view("/"),
                               std::string_view("a\0b", 3)})
    EXPECT_FALSE(SafeNodeName(bad)) << bad;
}

}  // namespace
}  // namespace haven
