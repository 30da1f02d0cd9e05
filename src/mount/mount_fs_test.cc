#include "mount/mount_fs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "core/error.h"

namespace haven::mount {
namespace {

// An in-memory BlobSource: trees and data blobs by id, counting data loads.
class FakeSource : public BlobSource {
 public:
  BlobId AddTree(std::vector<Node> nodes) {
    const BlobId id(Sha256(AsBytes("tree" + std::to_string(trees_.size()))));
    trees_[id] = std::move(nodes);
    return id;
  }
  BlobId AddBlob(const std::string& data) {
    const BlobId id(Sha256(AsBytes(data)));
    blobs_[id] = Bytes(data.begin(), data.end());
    return id;
  }
  std::vector<Node> LoadTree(const BlobId& id) override {
    tree_loads++;
    auto it = trees_.find(id);
    if (it == trees_.end()) Fail(ErrorCode::kNotFound, "tree " + id.Hex() + " not found");
    return it->second;
  }
  Bytes LoadData(const BlobId& id) override {
    loads++;
    auto it = blobs_.find(id);
    if (it == blobs_.end()) Fail(ErrorCode::kNotFound, "blob " + id.Hex() + " not found");
    return it->second;
  }
  std::optional<uint64_t> DataSize(const BlobId& id) override {
    auto it = blobs_.find(id);
    if (it == blobs_.end()) return std::nullopt;
    return it->second.size();
  }
  std::atomic<int> loads{0};
  std::atomic<int> tree_loads{0};

 private:
  std::map<BlobId, std::vector<Node>> trees_;
  std::map<BlobId, Bytes> blobs_;
};

gojson::Timestamp Time(int64_t sec, int32_t offset = 0) { return {sec, 0, offset}; }

Node File(const std::string& name, std::vector<BlobId> content, uint64_t size) {
  Node n;
  n.name = name;
  n.type = NodeType::kFile;
  n.mode = 0640;
  n.uid = 1000;
  n.gid = 100;
  n.links = 2;
  n.size = size;
  n.mtime = Time(1000);
  n.atime = Time(2000);
  n.ctime = Time(3000);
  n.content = std::move(content);
  return n;
}

Node Dir(const std::string& name, const BlobId& subtree) {
  Node n;
  n.name = name;
  n.type = NodeType::kDir;
  n.mode = gomode::kDir | 0750;
  n.uid = 7;
  n.gid = 8;
  n.mtime = Time(5000);
  n.subtree = subtree;
  return n;
}

Snapshot Snap(int64_t sec, const BlobId& tree, const std::string& host,
              std::vector<std::string> tags = {}) {
  Snapshot s;
  s.time = Time(sec);
  s.tree = tree;
  s.hostname = host;
  s.tags = std::move(tags);
  s.paths = {"/data"};
  return s;
}

FileId Id(int i) { return FileId(Sha256(AsBytes("snap" + std::to_string(i)))); }

std::vector<std::string> Names(const std::vector<DirEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

TEST(GoTime, FormatsResticsLayouts) {
  // 2026-12-01T03:04:05Z
  const gojson::Timestamp t{1796094245, 123456789, 0};
  EXPECT_EQ(FormatGoTime(t, kRfc3339), "2026-12-01T03:04:05Z");
  EXPECT_EQ(FormatGoTime({t.sec, 0, 3600}, kRfc3339), "2026-12-01T04:04:05+01:00");
  EXPECT_EQ(FormatGoTime({t.sec, 0, -5400}, kRfc3339), "2026-12-01T01:34:05-01:30");
  EXPECT_EQ(FormatGoTime(t, "2006-01-02_15-04-05"), "2026-12-01_03-04-05");
  EXPECT_EQ(FormatGoTime(t, "Mon Jan _2 3:4:5 PM 06 MST .000 .999999999"),
            "Tue Dec  1 3:4:5 AM 26 UTC .123 .123456789");
  EXPECT_EQ(FormatGoTime({t.sec, 500000000, 0}, "05.999|05.000"), "05.5|05.500");
  EXPECT_EQ(FormatGoTime({t.sec, 0, 3600}, "-0700 MST"), "+0100 +0100");
}

TEST(SnapshotDirs, ResticsLayoutWithDuplicateTimesAndLatest) {
  const BlobId tree;
  SnapshotDirs::SnapshotList snaps = {
      {Id(1), Snap(100, tree, "a", {"x", "y/z"})},
      {Id(2), Snap(100, tree, "b")},  // the same time: "-1"
      {Id(3), Snap(200, tree, "a", {"x"})},
  };
  SnapshotDirs d(snaps, DefaultPathTemplates(), kRfc3339);
  const MetaEntry* root = d.Find("");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->names, (std::set<std::string>{"hosts", "ids", "snapshots", "tags"}));
  const std::string t100 = "1970-01-01T00:01:40Z", t200 = "1970-01-01T00:03:20Z";
  EXPECT_EQ(d.Find("/snapshots")->names,
            (std::set<std::string>{t100, t100 + "-1", t200, "latest"}));
  EXPECT_EQ(d.Find("/snapshots/" + t100)->snapshot, 0);
  EXPECT_EQ(d.Find("/snapshots/" + t100 + "-1")->snapshot, 1);
  EXPECT_EQ(d.Find("/snapshots/latest")->link, t200);
  EXPECT_EQ(d.Find("/hosts")->names, (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(d.Find("/hosts/b/latest")->link, t100);
  EXPECT_EQ(d.Find("/tags")->names, (std::set<std::string>{"x", "y_z"}));
  EXPECT_EQ(d.Find("/tags/x")->names, (std::set<std::string>{t100, t200, "latest"}));
  EXPECT_EQ(d.Find("/ids")->names.size(), 3u);
  EXPECT_EQ(d.Find("/ids/" + Id(2).Short())->snapshot, 1);
  EXPECT_EQ(d.Find("/nope"), nullptr);
}

// A crafted host name is one file name: "../snapshots" must not land in snapshots/ and hide
// the victim's snapshot of the same time; a host of 100,000 "a/" is one (long) name.
TEST(SnapshotDirs, HostileHostNamesStayInsideHosts) {
  const BlobId tree;
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "a/";
  SnapshotDirs::SnapshotList snaps = {
      {Id(1), Snap(100, tree, "victim")},
      {Id(2), Snap(100, tree, "../snapshots")},
      {Id(3), Snap(50, tree, deep)},
      {Id(4), Snap(60, tree, std::string("nul\0byte", 8))},
  };
  SnapshotDirs d(snaps, DefaultPathTemplates(), kRfc3339);
  const std::string t100 = "1970-01-01T00:01:40Z";
  EXPECT_EQ(d.Find("/snapshots/" + t100)->snapshot, 0);  // the victim's, first
  EXPECT_EQ(d.Find("/snapshots/" + t100 + "-1")->snapshot, 1);
  EXPECT_EQ(d.Find("/snapshots/latest")->link, t100 + "-1");
  for (const std::string& h : d.Find("/hosts")->names) {
    EXPECT_EQ(h.find('/'), std::string::npos) << h;
    EXPECT_EQ(h.find('\0'), std::string::npos) << h;
    EXPECT_NE(h, "..");
  }
  EXPECT_TRUE(d.Find("/hosts/.._snapshots/" + t100));
  EXPECT_EQ(d.Find("/hosts")->names.size(), 4u);
}

TEST(SnapshotDirs, PathTemplates) {
  Snapshot s = Snap(100, BlobId(), "h", {"", "..", "t"});
  s.username = "u";
  auto [paths, suffix] = PathsFromSnapshot("x/%u/%t/%i-%T", "TIME", Id(1), s);
  EXPECT_EQ(paths, (std::vector<std::string>{"x/u/_/" + Id(1).Short() + "-",
                                             "x/u/__/" + Id(1).Short() + "-",
                                             "x/u/t/" + Id(1).Short() + "-"}));
  EXPECT_EQ(suffix, "TIME");
  auto [none, s2] = PathsFromSnapshot("tags/%t/%T", "TIME", Id(1), Snap(1, BlobId(), "h"));
  EXPECT_TRUE(none.empty());
  SnapshotDirs d({{Id(1), s}}, {"by/%h/%I"}, kRfc3339);
  EXPECT_EQ(d.Find("")->names, (std::set<std::string>{"by"}));
  EXPECT_EQ(d.Find("/by/h/" + Id(1).Hex())->snapshot, 0);
}

class MountFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    b1_ = src_.AddBlob("hello ");
    b2_ = src_.AddBlob("big world");
    b3_ = src_.AddBlob("!");
    Node link;
    link.name = "link";
    link.type = NodeType::kSymlink;
    link.mode = gomode::kSymlink | 0777;
    link.linktarget = "f.txt";
    link.links = 1;
    Node fifo;
    fifo.name = "fifo";
    fifo.type = NodeType::kFifo;
    fifo.mode = gomode::kNamedPipe | 0600;
    fifo.links = 1;
    Node f = File("f.txt", {b1_, b2_, b3_}, 16);
    f.xattrs = {{"user.a", "va"}, {"user.null", std::nullopt}};
    const BlobId sub = src_.AddTree({File("inner", {b3_}, 1)});
    const BlobId top = src_.AddTree({Dir("d", sub), fifo, f, link});
    // restic's special nodes: a directory named "/" shows its contents.
    root_tree_ = src_.AddTree({Dir("/", top)});
  }

  std::unique_ptr<MountFs> Make(MountConfig cfg = {}) {
    cfg.uid = 42;
    cfg.gid = 43;
    SnapshotDirs::SnapshotList snaps = {{Id(1), Snap(100, root_tree_, "host")}};
    return std::make_unique<MountFs>(src_, snaps, cfg);
  }

  uint64_t Walk(MountFs& fs, const std::vector<std::string>& path) {
    uint64_t n = MountFs::kRoot;
    for (const auto& p : path) {
      auto next = fs.Lookup(n, p);
      EXPECT_TRUE(next) << p;
      if (!next) return 0;
      n = *next;
    }
    return n;
  }

  FakeSource src_;
  BlobId b1_, b2_, b3_, root_tree_;
  const std::string t_ = "1970-01-01T00:01:40Z";
};

TEST_F(MountFsTest, VirtualDirectories) {
  auto fs = Make();
  EXPECT_EQ(Names(fs->ReadDir(MountFs::kRoot)),
            (std::vector<std::string>{".", "..", "hosts", "ids", "snapshots", "tags"}));
  const Attr root = fs->GetAttr(MountFs::kRoot);
  EXPECT_EQ(root.ino, 1u);
  EXPECT_EQ(root.mode, S_IFDIR | 0555u);
  EXPECT_EQ(root.uid, 42u);
  const uint64_t snaps = Walk(*fs, {"snapshots"});
  EXPECT_EQ(fs->GetAttr(snaps).ino, 255262462188919481ull);  // FNV-1a(1, "snapshots")
  EXPECT_EQ(fs->ReadDir(snaps)[2].type, S_IFDIR);
  EXPECT_EQ(fs->ReadDir(snaps)[3].name, "latest");
  EXPECT_EQ(fs->ReadDir(snaps)[3].type, S_IFLNK);
  const uint64_t latest = Walk(*fs, {"snapshots", "latest"});
  EXPECT_EQ(fs->ReadLink(latest), t_);
  const Attr la = fs->GetAttr(latest);
  EXPECT_EQ(la.mode, S_IFLNK | 0777u);
  EXPECT_EQ(la.size, t_.size());
  EXPECT_EQ(la.mtime.sec, 100);
  EXPECT_FALSE(fs->Lookup(snaps, "nope"));
  EXPECT_FALSE(fs->Lookup(MountFs::kRoot, "snapshots/x"));
  // Nodes keep their number.
  EXPECT_EQ(Walk(*fs, {"snapshots"}), snaps);
  EXPECT_THROW(fs->GetAttr(9999), FsError);
}

TEST_F(MountFsTest, SnapshotTreeWithResticsMetadata) {
  auto fs = Make();
  const uint64_t snap = Walk(*fs, {"snapshots", t_});
  Attr sa = fs->GetAttr(snap);
  EXPECT_EQ(sa.mode, S_IFDIR | 0555u);
  EXPECT_EQ(sa.uid, 0u);  // restic's snapshot directory node has uid 0
  EXPECT_EQ(sa.nlink, 2u);
  EXPECT_EQ(Names(fs->ReadDir(snap)),
            (std::vector<std::string>{".", "..", "d", "f.txt", "fifo", "link"}));
  EXPECT_EQ(fs->GetAttr(snap).nlink, 3u);  // counted once read, as restic
  const uint64_t f = Walk(*fs, {"snapshots", t_, "f.txt"});
  const Attr fa = fs->GetAttr(f);
  EXPECT_EQ(fa.mode, S_IFREG | 0640u);
  EXPECT_EQ(fa.size, 16u);
  EXPECT_EQ(fa.blocks, 1u);
  EXPECT_EQ(fa.blksize, 512u);
  EXPECT_EQ(fa.nlink, 2u);
  EXPECT_EQ(fa.uid, 1000u);
  EXPECT_EQ(fa.gid, 100u);
  EXPECT_EQ(fa.mtime.sec, 1000);
  EXPECT_EQ(fa.atime.sec, 2000);
  EXPECT_EQ(fa.ctime.sec, 3000);
  EXPECT_EQ(fa.ino, DynamicInode(sa.ino, "f.txt"));
  const Attr da = fs->GetAttr(Walk(*fs, {"snapshots", t_, "d"}));
  EXPECT_EQ(da.mode, S_IFDIR | 0750u);
  EXPECT_EQ(da.uid, 7u);
  EXPECT_EQ(da.mtime.sec, 5000);
  const uint64_t link = Walk(*fs, {"snapshots", t_, "link"});
  EXPECT_EQ(fs->ReadLink(link), "f.txt");
  EXPECT_EQ(fs->GetAttr(link).mode, S_IFLNK | 0777u);
  EXPECT_EQ(fs->GetAttr(link).size, 5u);
  const uint64_t fifo = Walk(*fs, {"snapshots", t_, "fifo"});
  EXPECT_EQ(fs->GetAttr(fifo).mode, S_IFIFO | 0600u);
  EXPECT_THROW(fs->ListXattr(fifo), FsError);
  EXPECT_THROW(fs->ListXattr(MountFs::kRoot), FsError);
  EXPECT_THROW(fs->ReadLink(f), FsError);
  EXPECT_THROW(fs->Open(snap), FsError);
  EXPECT_THROW(fs->ReadDir(f), FsError);
  // xattrs as restic: listed by name; a null value reads as absent.
  EXPECT_EQ(fs->ListXattr(f), (std::vector<std::string>{"user.a", "user.null"}));
  EXPECT_EQ(fs->GetXattr(f, "user.a"), "va");
  EXPECT_THROW(fs->GetXattr(f, "user.null"), FsError);
  EXPECT_THROW(fs->GetXattr(f, "user.b"), FsError);
  // --owner-root
  auto owned = Make(MountConfig{.owner_root = true});
  EXPECT_EQ(owned->GetAttr(Walk(*owned, {"snapshots", t_, "f.txt"})).uid, 0u);
}

TEST_F(MountFsTest, ReadsAcrossBlobsAtEveryOffset) {
  auto fs = Make();
  const auto f = fs->Open(Walk(*fs, {"ids", Id(1).Short(), "f.txt"}));
  const std::string all = "hello big world!";
  ASSERT_EQ(f->size(), all.size());
  for (size_t off = 0; off <= all.size() + 2; off++) {
    for (size_t len = 0; len <= all.size() + 2; len++) {
      std::string out(len, '\0');
      const size_t n = fs->Read(*f, off, len, reinterpret_cast<uint8_t*>(out.data()));
      const std::string want = off < all.size() ? all.substr(off, len) : "";
      ASSERT_EQ(out.substr(0, n), want) << off << " " << len;
    }
  }
  // Every blob came through the cache: loaded once each.
  EXPECT_EQ(src_.loads.load(), 3);
}

TEST_F(MountFsTest, MissingBlobIsAnError) {
  const BlobId missing(Sha256(AsBytes("missing")));
  root_tree_ = src_.AddTree({File("gone", {missing}, 3)});
  auto fs = Make();
  EXPECT_THROW(fs->Open(Walk(*fs, {"snapshots", t_, "gone"})), Error);
}

TEST_F(MountFsTest, ReloadsSnapshotsWhenAsked) {
  int calls = 0;
  auto reload = [&]() -> std::optional<MountFs::SnapshotList> {
    calls++;
    return MountFs::SnapshotList{{Id(1), Snap(100, root_tree_, "host")},
                                 {Id(2), Snap(200, root_tree_, "other")}};
  };
  MountFs fs(src_, {{Id(1), Snap(100, root_tree_, "host")}}, MountConfig{}, reload);
  const uint64_t hosts = Walk(fs, {"hosts"});
  EXPECT_EQ(Names(fs.ReadDir(hosts)), (std::vector<std::string>{".", "..", "host"}));
  EXPECT_EQ(calls, 0);  // not before the interval
  fs.ExpireSnapshots();
  EXPECT_EQ(Names(fs.ReadDir(hosts)), (std::vector<std::string>{".", "..", "host", "other"}));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(fs.Lookup(hosts, "other"));
}

// The kernel forgets what it evicts: the model frees those nodes and their trees, so a
// mount that walked a whole snapshot holds only what the kernel still caches.
TEST_F(MountFsTest, ForgottenNodesAreFreedAndComeBackWithTheirInodeNumbers) {
  auto fs = Make();
  const size_t root_only = fs->LiveNodes();
  EXPECT_EQ(root_only, 1u);
  const uint64_t d = Walk(*fs, {"snapshots", t_, "d"});
  const uint64_t inner = *fs->Lookup(d, "inner");
  const uint64_t ino = fs->GetAttr(inner).ino;
  const uint64_t snap = *fs->Lookup(*fs->Lookup(MountFs::kRoot, "snapshots"), t_);
  EXPECT_EQ(fs->LiveNodes(), 5u);  // root, snapshots, the snapshot, d, inner
  const int trees = src_.tree_loads;
  // Two lookups of `inner` were counted once each; one forget leaves it in place.
  EXPECT_EQ(*fs->Lookup(d, "inner"), inner);
  fs->Forget(inner, 1);
  EXPECT_EQ(fs->GetAttr(inner).ino, ino);
  fs->Forget(inner, 1);
  EXPECT_THROW(fs->GetAttr(inner), FsError);
  EXPECT_EQ(fs->LiveNodes(), 4u);
  // `d` and its loaded tree go with its last reference; looked up again, the same st_ino
  // under a new node number, and its tree is loaded again.
  fs->Forget(d, 1);
  EXPECT_EQ(fs->LiveNodes(), 3u);
  const uint64_t d2 = *fs->Lookup(snap, "d");
  EXPECT_NE(d2, d);
  const uint64_t inner2 = *fs->Lookup(d2, "inner");
  EXPECT_EQ(fs->GetAttr(inner2).ino, ino);
  EXPECT_GT(src_.tree_loads, trees);
  // The root, unknown nodes and zero counts are ignored.
  fs->Forget(MountFs::kRoot, 5);
  fs->Forget(9999, 1);
  fs->Forget(inner2, 0);
  EXPECT_EQ(fs->GetAttr(inner2).ino, ino);
  EXPECT_EQ(fs->GetAttr(MountFs::kRoot).ino, 1u);
}

// Lookups and forgets of one name from many threads, the node freed and made again many
// times: each lookup's node stays valid until its own forget, and nothing is left behind.
TEST_F(MountFsTest, ConcurrentLookupsAndForgetsKeepCountsExact) {
  auto fs = Make();
  const uint64_t snap = Walk(*fs, {"snapshots", t_});
  const uint64_t d = *fs->Lookup(snap, "d");
  const uint64_t first = *fs->Lookup(d, "inner");
  const uint64_t ino = fs->GetAttr(first).ino;
  fs->Forget(first, 1);
  const size_t live = fs->LiveNodes();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; i++) {
        const auto n = fs->Lookup(d, "inner");
        ASSERT_TRUE(n);
        EXPECT_EQ(fs->GetAttr(*n).ino, ino);
        fs->Forget(*n, 1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(fs->LiveNodes(), live);
  EXPECT_EQ(fs->GetAttr(*fs->Lookup(d, "inner")).ino, ino);
}

TEST(BlobCache, EvictsLeastRecentlyUsedAndLoadsOnce) {
  BlobCache cache(10);
  int loads = 0;
  auto load = [&](const BlobId& id) {
    loads++;
    return Bytes(4, id.bytes[0]);
  };
  BlobId a, b, c;
  a.bytes[0] = 1;
  b.bytes[0] = 2;
  c.bytes[0] = 3;
  cache.Get(a, load);
  cache.Get(b, load);
  cache.Get(a, load);  // a is now the most recent
  EXPECT_EQ(loads, 2);
  cache.Get(c, load);  // 12 bytes > 10: b leaves
  EXPECT_EQ(cache.bytes(), 8u);
  cache.Get(a, load);
  EXPECT_EQ(loads, 3);
  cache.Get(b, load);
  EXPECT_EQ(loads, 4);
  // A failed load reaches the caller and is not cached.
  BlobId d;
  d.bytes[0] = 4;
  EXPECT_THROW(cache.Get(d, [](const BlobId&) -> Bytes { Fail(ErrorCode::kIo, "boom"); }), Error);
  EXPECT_EQ(cache.Get(d, load)->size(), 4u);
}

TEST(BlobCache, ConcurrentReadersShareOneLoad) {
  BlobCache cache;
  std::atomic<int> loads{0};
  BlobId id;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; i++)
    threads.emplace_back([&] {
      auto blob = cache.Get(id, [&](const BlobId&) {
        loads++;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return Bytes(100, 7);
      });
      EXPECT_EQ(blob->size(), 100u);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(loads.load(), 1);
}

}  // namespace
}  // namespace haven::mount
