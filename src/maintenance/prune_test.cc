#include "maintenance/prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>
#include <ctime>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend/fault_backend.h"
#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"
#include "core/error.h"
#include "crypto/seal.h"
#include "maintenance/check.h"
#include "maintenance/index_writer.h"
#include "maintenance/repair_index.h"
#include "maintenance/used_blobs.h"
#include "repo/test_repository.h"
#include "repo/node.h"

namespace haven {
namespace {

constexpr const char* kPassword = "prune-test";

Bytes RandomBytes(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  Bytes b(n);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t k = 0; k < 8 && i + k < n; ++k) b[i + k] = static_cast<uint8_t>(v >> (8 * k));
  }
  return b;
}

Bytes TextBytes(uint64_t seed, size_t n) {
  std::string s;
  while (s.size() < n) s += "generation " + std::to_string(seed) + " line " + std::to_string(s.size()) + "\n";
  s.resize(n);
  return Bytes(s.begin(), s.end());
}

BlobId IdOf(ByteView b) { return BlobId(Sha256(b)); }

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// Every object of a backend: "type/name" -> size.
std::map<std::string, uint64_t> Listing(Backend& be) {
  std::map<std::string, uint64_t> out;
  for (FileType t : {FileType::kKey, FileType::kLock, FileType::kSnapshot, FileType::kIndex,
                     FileType::kPack}) {
    be.List(t, [&](const FileInfo& fi) { out[std::string(FileTypeName(t)) + "/" + fi.name] = fi.size; });
  }
  return out;
}

std::shared_ptr<MemBackend> Clone(MemBackend& src) {
  auto dst = std::make_shared<MemBackend>();
  Bytes cfg = src.Load({FileType::kConfig, "config"});
  dst->Save({FileType::kConfig, "config"}, cfg);
  for (FileType t : {FileType::kKey, FileType::kLock, FileType::kSnapshot, FileType::kIndex,
                     FileType::kPack}) {
    std::vector<std::string> names;
    src.List(t, [&](const FileInfo& fi) { names.push_back(fi.name); });
    for (const auto& n : names) dst->Save({t, n}, src.Load({t, n}));
  }
  return dst;
}

Node FileNode(const std::string& name, std::vector<BlobId> content, uint64_t size) {
  Node n;
  n.name = name;
  n.type = NodeType::kFile;
  n.mode = 0644;
  n.size = size;
  n.content = std::move(content);
  return n;
}

Node DirNode(const std::string& name, const BlobId& subtree) {
  Node n;
  n.name = name;
  n.type = NodeType::kDir;
  n.mode = gomode::kDir | 0755;
  n.subtree = subtree;
  return n;
}

class TestRepo {
 public:
  explicit TestRepo(int version = 2) : mem_(std::make_shared<MemBackend>()) {
    Repository::Init(*mem_, kPassword, version, crypto::ScryptParams{1024, 8, 1}, 1);
  }
  MemBackend& mem() { return *mem_; }
  std::shared_ptr<MemBackend> mem_ptr() { return mem_; }

  static std::unique_ptr<haven::testing::TestRepository> OpenOn(std::shared_ptr<Backend> be, int threads = 2) {
    return haven::testing::TestRepository::Open(std::move(be), kPassword, threads);
  }
  std::unique_ptr<haven::testing::TestRepository> Open(int threads = 2) { return OpenOn(mem_, threads); }

  BlobId Data(haven::testing::TestRepository& repo, const Bytes& b) {
    BlobId id = IdOf(b);
    repo.SaveBlob(BlobType::kData, id, b);
    return id;
  }
  BlobId Tree(haven::testing::TestRepository& repo, const std::vector<Node>& nodes) {
    std::string t = EncodeTree(nodes);
    BlobId id = IdOf(AsBytes(t));
    repo.SaveBlob(BlobType::kTree, id, AsBytes(t));
    return id;
  }

  // One generation of a slowly changing tree; every generation is flushed into its own
  // packs. Returns the snapshot id.
  FileId Backup(haven::testing::TestRepository& repo, int gen) {
    Bytes shared = RandomBytes(1, 20000);
    Bytes text = TextBytes(gen, 3000);
    Bytes big = RandomBytes(100 + gen, 60000);
    Bytes chunk_a = RandomBytes(2, 9000), chunk_b = RandomBytes(200 + gen, 7000);
    Bytes sub = RandomBytes(300 + gen / 2, 5000);
    Bytes same = TextBytes(999, 4000);
    BlobId same_tree = Tree(repo, {FileNode("constant.txt", {Data(repo, same)}, same.size())});
    Node link;
    link.name = "link";
    link.type = NodeType::kSymlink;
    link.mode = gomode::kSymlink | 0777;
    link.linktarget = "shared.bin";
    BlobId sub_tree = Tree(repo, {FileNode("empty", {}, 0), link,
                                  FileNode("s.bin", {Data(repo, sub)}, sub.size())});
    std::vector<Node> root = {
        FileNode("big-" + std::to_string(gen) + ".bin", {Data(repo, big)}, big.size()),
        FileNode("gen.txt", {Data(repo, text)}, text.size()),
        FileNode("multi.bin", {Data(repo, chunk_a), Data(repo, chunk_b)},
                 chunk_a.size() + chunk_b.size()),
        DirNode("same", same_tree),
        FileNode("shared.bin", {Data(repo, shared)}, shared.size()),
        DirNode("sub", sub_tree),
    };
    BlobId root_id = Tree(repo, root);
    repo.Flush();
    Snapshot s;
    s.time.sec = 1600000000 + gen * 3600;
    s.tree = root_id;
    s.paths = {"/data"};
    s.hostname = "host";
    s.username = "user";
    return repo.SaveJson(FileType::kSnapshot, s.ToJson());
  }

  // Writes `gens` snapshots (each with its own packs) and returns their ids, oldest first.
  std::vector<FileId> BackupMany(int gens, int first = 0) {
    auto repo = Open();
    repo->LoadIndex();
    std::vector<FileId> ids;
    for (int g = first; g < first + gens; ++g) ids.push_back(Backup(*repo, g));
    return ids;
  }

  void Forget(const FileId& snap) { mem_->Remove({FileType::kSnapshot, snap.Hex()}); }

  // A pack no index refers to (as left by an interrupted backup).
  PackId WriteUnreferencedPack(uint64_t seed) {
    auto repo = Open();
    Bytes plain = RandomBytes(seed, 3000);
    PackWriter pw(BlobType::kData);
    pw.Add(IdOf(plain), crypto::Seal(repo->key(), plain), 0);
    std::vector<PackedBlob> blobs;
    Bytes pack = pw.Finish(repo->key(), &blobs);
    PackId id(Sha256(pack));
    mem_->Save({FileType::kPack, id.Hex()}, pack);
    return id;
  }

 private:
  std::shared_ptr<MemBackend> mem_;
};

// Loads every tree and data blob of every snapshot; returns the number of data blobs.
size_t LoadAllSnapshotData(haven::testing::TestRepository& repo) {
  repo.LoadIndex();
  std::set<BlobId> seen;
  size_t n = 0;
  for (const auto& [sid, snap] : repo.LoadSnapshots()) {
    std::vector<BlobId> stack{snap.tree};
    while (!stack.empty()) {
      BlobId t = stack.back();
      stack.pop_back();
      for (const Node& node : repo.LoadTree(t)) {
        if (node.subtree) stack.push_back(*node.subtree);
        for (const BlobId& b : node.content) {
          if (!seen.insert(b).second) continue;
          Bytes d = repo.LoadBlob(BlobType::kData, b);
          EXPECT_EQ(IdOf(d), b);
          ++n;
        }
      }
    }
  }
  return n;
}

// check --read-data must be clean; unreferenced packs are hints (allowed when asked).
void ExpectHealthy(TestRepo& t, bool allow_hints, const std::string& ctx = "") {
  auto repo = t.Open();
  CheckOptions co;
  co.read_data = true;
  co.jobs = 2;
  CheckResult r = RunCheck(*repo, co);
  EXPECT_TRUE(r.ok()) << ctx << "\n" << Join(r.errors);
  if (!allow_hints) {
    EXPECT_TRUE(r.hints.empty()) << ctx << "\n" << Join(r.hints);
  }
  EXPECT_NO_THROW(LoadAllSnapshotData(*repo)) << ctx;
}

// Flushes and saves a snapshot of `root` (path /x, host h).
void SaveSnapshotOf(haven::testing::TestRepository& repo, const BlobId& root) {
  repo.Flush();
  Snapshot s;
  s.time.sec = 1600000000;
  s.tree = root;
  s.paths = {"/x"};
  s.hostname = "h";
  repo.SaveJson(FileType::kSnapshot, s.ToJson());
}

PruneOptions Quiet() {
  PruneOptions o;
  o.jobs = 2;
  return o;
}

uint64_t CountType(Backend& be, FileType t) {
  uint64_t n = 0;
  be.List(t, [&](const FileInfo&) { ++n; });
  return n;
}

// ---- helpers: sizes, sets, scanner -------------------------------------------------------

TEST(PruneOptionsParse, Sizes) {
  EXPECT_EQ(ParsePruneSize("0", "x"), 0u);
  EXPECT_EQ(ParsePruneSize("123", "x"), 123u);
  EXPECT_EQ(ParsePruneSize("10k", "x"), 10240u);
  EXPECT_EQ(ParsePruneSize("10M", "x"), 10u << 20);
  EXPECT_EQ(ParsePruneSize("2g", "x"), uint64_t{2} << 30);
  EXPECT_EQ(ParsePruneSize("1T", "x"), uint64_t{1} << 40);
  EXPECT_EQ(ParsePruneSize("7b", "x"), 7u);
  for (const char* bad : {"", "k", "1.5M", "-1", "abc", "10X", "99999999999999999999"}) {
    EXPECT_THROW(ParsePruneSize(bad, "x"), Error) << bad;
  }
}

TEST(PruneOptionsParse, MaxUnused) {
  EXPECT_EQ(ParseMaxUnused("unlimited")(1000), UINT64_MAX);
  EXPECT_EQ(ParseMaxUnused("5%")(950), 50u);
  EXPECT_EQ(ParseMaxUnused("0%")(1000), 0u);
  EXPECT_EQ(ParseMaxUnused("50%")(1000), 1000u);
  EXPECT_EQ(ParseMaxUnused("10M")(1), 10u << 20);
  EXPECT_EQ(ParseMaxUnused(" 5% ")(950), 50u);
  for (const char* bad : {"", "100%", "-1%", "x%", "%", "abc"}) {
    EXPECT_THROW(ParseMaxUnused(bad), Error) << bad;
  }
}

TEST(SortedBlobSet, FindAndDedupe) {
  std::vector<BlobId> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(IdOf(RandomBytes(i, 8)));
  std::vector<BlobId> with_dups = ids;
  with_dups.insert(with_dups.end(), ids.begin(), ids.begin() + 100);
  SortedBlobSet set(with_dups);
  EXPECT_EQ(set.size(), ids.size());
  for (const BlobId& id : ids) {
    size_t pos = set.Find(id);
    ASSERT_NE(pos, SortedBlobSet::npos);
    EXPECT_EQ(set.ids()[pos], id);
  }
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(set.Contains(IdOf(RandomBytes(100000 + i, 8))));
  }
  SortedBlobSet empty;
  EXPECT_FALSE(empty.Contains(ids[0]));
  BlobId zero, ones;
  ones.bytes.fill(0xff);
  SortedBlobSet edges({zero, ones});
  EXPECT_TRUE(edges.Contains(zero));
  EXPECT_TRUE(edges.Contains(ones));
}

TEST(TreeScanner, ReadsTypeContentSubtree) {
  BlobId a = IdOf(AsBytes("a")), b = IdOf(AsBytes("b")), c = IdOf(AsBytes("c"));
  std::vector<Node> nodes = {FileNode("f", {a, b}, 2), DirNode("g", c)};
  Node link;
  link.name = "h";
  link.type = NodeType::kSymlink;
  link.linktarget = "f";
  nodes.push_back(link);
  std::string json = EncodeTree(nodes);
  TreeScanner sc;
  std::vector<BlobId> data, subs;
  sc.Scan(json, &data, &subs, "tree x");
  EXPECT_EQ(data, (std::vector<BlobId>{a, b}));
  EXPECT_EQ(subs, (std::vector<BlobId>{c}));

  // Field order does not matter; content of non-file nodes is ignored; nulls are fine.
  std::string hand = R"({"nodes":[{"content":[")" + a.Hex() + R"("],"name":"x","type":"file"},)"
                     R"({"name":"d","content":[")" + b.Hex() + R"("],"type":"dir","subtree":")" +
                     c.Hex() + R"("},{"name":"n","type":"file","content":null},)"
                     R"({"name":"e","type":"dir","subtree":null}],"extra":{"k":[1,2]}})";
  data.clear();
  subs.clear();
  sc.Scan(hand, &data, &subs, "tree y");
  EXPECT_EQ(data, (std::vector<BlobId>{a}));
  EXPECT_EQ(subs, (std::vector<BlobId>{c}));

  data.clear();
  subs.clear();
  sc.Scan(R"({"nodes":null})", &data, &subs, "t");
  sc.Scan(R"({"nodes":[]})", &data, &subs, "t");
  EXPECT_TRUE(data.empty());

  for (std::string bad :
       {std::string("not json"), std::string("[1]"),
        std::string(R"({"nodes":[{"type":"file","content":["abc"]}]})"),
        std::string(R"({"nodes":[{"type":"file","content":[")") + a.Hex() + "0\"]}]}",
        std::string(R"({"nodes":[{"type":"dir","subtree":5}]})"),
        std::string(R"({"nodes":[{"type":"file","content":[")") + a.Hex().substr(0, 63) + "g\"]}]}"}) {
    EXPECT_THROW(sc.Scan(bad, &data, &subs, "tree bad"), Error) << bad;
  }
}

TEST(UsedBlobs, WalkFindsEverythingWithAnyThreadCount) {
  TestRepo t;
  auto snaps = t.BackupMany(4);
  auto repo = t.Open();
  repo->LoadIndex();
  std::vector<UsedBlobsRoot> roots;
  for (const auto& [id, s] : repo->LoadSnapshots()) roots.push_back({id, s.tree});
  UsedBlobsOptions o1;
  o1.threads = 1;
  UsedBlobs one = FindUsedBlobs(*repo, roots, o1);
  // gens 0..3: per gen root tree + 3 unique data (big, text, chunk_b); sub tree + s.bin
  // change every 2 gens; shared, chunk_a, constant and its tree are common.
  EXPECT_EQ(one.Count(BlobType::kTree), 4u + 2u + 1u);
  EXPECT_EQ(one.Count(BlobType::kData), 4u * 3 + 2 + 3);
  for (int threads : {2, 3, 8}) {
    UsedBlobsOptions o;
    o.threads = threads;
    UsedBlobs many = FindUsedBlobs(*repo, roots, o);
    EXPECT_EQ(many.Ids(BlobType::kTree), one.Ids(BlobType::kTree));
    EXPECT_EQ(many.Ids(BlobType::kData), one.Ids(BlobType::kData));
  }
}

TEST(UsedBlobs, MissingTreeNamesSnapshotAndTree) {
  TestRepo t;
  auto repo = t.Open();
  repo->LoadIndex();
  BlobId missing = IdOf(AsBytes("no such tree"));
  BlobId root = t.Tree(*repo, {DirNode("gone", missing)});
  repo->Flush();
  FileId snap = FileId(IdOf(AsBytes("snap")));
  try {
    FindUsedBlobs(*repo, {{snap, root}}, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    std::string m = e.what();
    EXPECT_NE(m.find(snap.Short()), std::string::npos) << m;
    EXPECT_NE(m.find(missing.Hex()), std::string::npos) << m;
  }
}

// Flips a byte inside every blob of up to max_packs tree packs; with only_duplicated, only
// packs whose every blob has another copy elsewhere.
size_t DamageTreePacks(TestRepo& t, haven::testing::TestRepository& repo, size_t max_packs, bool only_duplicated) {
  PackTable all = PackTable::FromIndex(repo.index());
  size_t done = 0;
  for (size_t i = 0; i < all.size() && done < max_packs; ++i) {
    if (all.blobs(i)[0].type != BlobType::kTree) continue;
    bool duplicated = true;
    for (const auto& blob : all.blobs(i))
      duplicated &= repo.index().Lookup(blob.type, blob.id).size() > 1;
    if (only_duplicated && !duplicated) continue;
    Bytes b = t.mem().Load({FileType::kPack, all.id(i).Hex()});
    for (const auto& blob : all.blobs(i)) b[blob.offset + blob.length / 2] ^= 0x10;
    t.mem().Remove({FileType::kPack, all.id(i).Hex()});
    t.mem().Save({FileType::kPack, all.id(i).Hex()}, b);
    ++done;
  }
  return done;
}

TEST(UsedBlobs, DamagedTreeFallsBackToAnIntactCopy) {
  TestRepo t;
  t.BackupMany(2);
  {
    auto dup = t.Open();  // index not loaded: stores everything again, in new packs
    t.Backup(*dup, 1);
  }
  auto repo = t.Open();
  repo->LoadIndex();
  std::vector<UsedBlobsRoot> roots;
  for (const auto& [id, s] : repo->LoadSnapshots()) roots.push_back({id, s.tree});
  UsedBlobs before = FindUsedBlobs(*repo, roots, {});
  ASSERT_EQ(DamageTreePacks(t, *repo, 1, true), 1u);
  UsedBlobs after = FindUsedBlobs(*repo, roots, {});
  EXPECT_EQ(after.Ids(BlobType::kTree), before.Ids(BlobType::kTree));
  EXPECT_EQ(after.Ids(BlobType::kData), before.Ids(BlobType::kData));
  // With every copy damaged the walk refuses, naming snapshot and tree.
  ASSERT_GT(DamageTreePacks(t, *repo, 100, false), 1u);
  try {
    FindUsedBlobs(*repo, roots, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("cannot be loaded"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("snapshot "), std::string::npos) << e.what();
  }
}

// ---- prune --------------------------------------------------------------------------------

TEST(Prune, ForgetTwoOfThreeThenPrune) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  t.Forget(snaps[1]);
  uint64_t packs_before = CountType(t.mem(), FileType::kPack);
  auto repo = t.Open();
  PruneResult r = RunPrune(*repo, Quiet());
  EXPECT_GT(r.plan.stats.blobs.remove + r.plan.stats.blobs.repackrm, 0u);
  EXPECT_EQ(r.remove_failures, 0u);
  ExpectHealthy(t, false);
  // Only the blobs of the last snapshot remain.
  auto again = t.Open();
  again->LoadIndex();
  EXPECT_EQ(again->index().BlobCount(), 3u + 7u);  // root, sub, same trees; 7 data blobs
  EXPECT_LT(CountType(t.mem(), FileType::kPack), packs_before);
  // A second prune has nothing to do.
  auto listing = Listing(t.mem());
  PruneResult r2 = RunPrune(*again, Quiet());
  EXPECT_EQ(r2.plan.stats.blobs.remove + r2.plan.stats.blobs.repackrm, 0u);
  EXPECT_EQ(Listing(t.mem()), listing);
}

// Issue 16: the pack listing runs beside the used-blob walk (it starts before the walk's
// first pack read and so costs no wall time on slow storage), and only once every index
// file has been read (it never competes with the index reads).
class WatchPackListing : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    Note(h.type, true);
    ForwardingBackend::LoadInto(h, offset, out);
    Note(h.type, false);
  }
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    Note(h.type, true);
    Bytes b = ForwardingBackend::Load(h, offset, length);
    Note(h.type, false);
    return b;
  }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    if (t == FileType::kPack) {
      std::unique_lock<std::mutex> lock(mu_);
      listing_started_ = true;
      index_reads_at_listing_ = index_reads_;
      index_in_flight_at_listing_ = index_in_flight_;
      const int packs_before = pack_reads_;
      cv_.notify_all();
      // Overlapped: a pack read (the walk's) starts while the listing is under way.
      overlapped_ = cv_.wait_for(lock, std::chrono::seconds(5), [&] { return pack_reads_ > packs_before; });
    }
    ForwardingBackend::List(t, fn);
  }
  // Removals take 30 ms (a round trip) and the storage serves 5 requests at once.
  void Remove(const Handle& h) override {
    int now = ++removing_;
    int seen = max_removing_.load();
    while (now > seen && !max_removing_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --removing_;
    ForwardingBackend::Remove(h);
  }
  int Connections() const override { return 5; }
  int max_removing() const { return max_removing_.load(); }
  bool overlapped() const { return overlapped_; }
  int index_reads_at_listing() const { return index_reads_at_listing_; }
  int index_in_flight_at_listing() const { return index_in_flight_at_listing_; }

 private:
  void Note(FileType t, bool start) {
    std::unique_lock<std::mutex> lock(mu_);
    if (t == FileType::kIndex) {
      index_in_flight_ += start ? 1 : -1;
      if (!start) ++index_reads_;
    }
    if (t == FileType::kPack && start) {
      // The walk's first pack read gives the listing (started beside it) time to begin.
      if (pack_reads_ == 0) cv_.wait_for(lock, std::chrono::seconds(2), [&] { return listing_started_; });
      ++pack_reads_;
      cv_.notify_all();
    }
  }
  std::atomic<int> removing_{0}, max_removing_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool listing_started_ = false, overlapped_ = false;
  int pack_reads_ = 0, index_reads_ = 0, index_in_flight_ = 0;
  int index_reads_at_listing_ = -1, index_in_flight_at_listing_ = -1;
};

TEST(Prune, PackListingRunsBesideTheWalkAfterTheIndexReads) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  const uint64_t index_files = CountType(t.mem(), FileType::kIndex);
  auto watch = std::make_shared<WatchPackListing>(t.mem_ptr());
  auto repo = TestRepo::OpenOn(watch);
  PruneResult r = RunPrune(*repo, Quiet());
  EXPECT_TRUE(watch->overlapped()) << "the pack listing ran after the walk";
  EXPECT_EQ(watch->index_in_flight_at_listing(), 0);
  EXPECT_EQ(watch->index_reads_at_listing(), static_cast<int>(index_files));
  EXPECT_GT(r.plan.stats.blobs.remove + r.plan.stats.blobs.repackrm, 0u);
  ExpectHealthy(t, false);
}

// Over remote storage: the snapshots are listed and read beside the index load (their round
// trips cost no wall time), and the repack writes no index file of its own (RewriteIndex
// writes the new packs with the rest), so no index file is written and then deleted again.
class WatchIndexAndSnapshots : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    IndexRead(h.type, true);
    Bytes b = ForwardingBackend::Load(h, offset, length);
    IndexRead(h.type, false);
    return b;
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    IndexRead(h.type, true);
    ForwardingBackend::LoadInto(h, offset, out);
    IndexRead(h.type, false);
  }
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    if (t == FileType::kSnapshot) {
      std::unique_lock<std::mutex> lock(mu_);
      if (!snapshot_listing_) {
        // Beside the index load: before its first read, or while one waits (below). Run
        // after the load, the listing finds every read done and none in flight.
        overlapped_ = index_reads_done_ == 0 || index_in_flight_ > 0;
        snapshot_listing_ = true;
        cv_.notify_all();
      }
    }
    ForwardingBackend::List(t, fn);
  }
  void Save(const Handle& h, ByteView data) override {
    Saved(h);
    ForwardingBackend::Save(h, data);
  }
  void SaveFrom(const Handle& h, const SaveSource& src) override {
    Saved(h);
    ForwardingBackend::SaveFrom(h, src);
  }
  void Remove(const Handle& h) override {
    if (h.type == FileType::kIndex) {
      std::unique_lock<std::mutex> lock(mu_);
      if (saved_.contains(h.name)) ++written_then_removed_;
    }
    ForwardingBackend::Remove(h);
  }
  bool overlapped() const { return overlapped_; }
  int written_then_removed() const { return written_then_removed_; }

 private:
  void IndexRead(FileType t, bool start) {
    if (t != FileType::kIndex) return;
    std::unique_lock<std::mutex> lock(mu_);
    index_in_flight_ += start ? 1 : -1;
    if (!start) ++index_reads_done_;
    // An index read waits for the snapshot listing to begin beside it (it never blocks the
    // listing, which waits for nothing).
    if (start && !snapshot_listing_)
      cv_.wait_for(lock, std::chrono::seconds(10), [&] { return snapshot_listing_; });
  }
  void Saved(const Handle& h) {
    std::unique_lock<std::mutex> lock(mu_);
    if (h.type == FileType::kIndex) saved_.insert(h.name);
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool snapshot_listing_ = false, overlapped_ = false;
  int index_in_flight_ = 0, index_reads_done_ = 0, written_then_removed_ = 0;
  std::set<std::string> saved_;
};

TEST(Prune, SnapshotsLoadBesideTheIndexAndNoIndexFileIsWrittenTwice) {
  TestRepo t;
  auto snaps = t.BackupMany(4);
  t.Forget(snaps[0]);
  t.Forget(snaps[2]);
  auto watch = std::make_shared<WatchIndexAndSnapshots>(t.mem_ptr());
  auto repo = TestRepo::OpenOn(watch);
  PruneResult r = RunPrune(*repo, Quiet());
  ASSERT_FALSE(r.plan.repack.empty());
  EXPECT_GT(r.packs_written, 0u);
  EXPECT_TRUE(watch->overlapped()) << "the snapshots were listed after the index load";
  EXPECT_EQ(watch->written_then_removed(), 0);
  EXPECT_EQ(CountType(t.mem(), FileType::kIndex), r.index_files_written);
  ExpectHealthy(t, false);
}

// Removals are round trips, not CPU: as many at once as the storage serves, not --jobs.
TEST(Prune, RemovesAsManyFilesAtOnceAsTheStorageServes) {
  TestRepo t;
  auto snaps = t.BackupMany(6);
  for (int i = 0; i < 5; ++i) t.Forget(snaps[i]);
  auto watch = std::make_shared<WatchPackListing>(t.mem_ptr());
  auto repo = TestRepo::OpenOn(watch, 1);
  PruneOptions o = Quiet();
  o.jobs = 1;
  PruneResult r = RunPrune(*repo, o);
  EXPECT_GE(r.plan.remove.size() + r.plan.repack.size(), 4u);
  EXPECT_GE(watch->max_removing(), 4);
  ExpectHealthy(t, false);
}

TEST(Prune, Version1Repository) {
  TestRepo t(1);
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[1]);
  auto repo = t.Open();
  RunPrune(*repo, Quiet());
  ExpectHealthy(t, false);
}

TEST(Prune, DryRunChangesNothing) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  t.WriteUnreferencedPack(77);
  auto listing = Listing(t.mem());
  auto repo = t.Open();
  PruneOptions o = Quiet();
  o.dry_run = true;
  PruneResult r = RunPrune(*repo, o);
  EXPECT_GT(r.plan.stats.blobs.remove + r.plan.stats.blobs.repackrm, 0u);
  EXPECT_EQ(r.plan.remove_first.size(), 1u);
  EXPECT_EQ(Listing(t.mem()), listing);
}

// forget --prune --dry-run: the plan with ignore_snapshots equals the plan after the
// snapshots are really gone, and the snapshots stay.
TEST(Prune, IgnoreSnapshotsPlansAsIfForgotten) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  auto listing = Listing(t.mem());
  PruneOptions o = Quiet();
  o.dry_run = true;
  o.ignore_snapshots = {snaps[0], snaps[1]};
  PrunePlan ignored = RunPrune(*t.Open(), o).plan;
  EXPECT_EQ(Listing(t.mem()), listing);
  t.Forget(snaps[0]);
  t.Forget(snaps[1]);
  o.ignore_snapshots.clear();
  PrunePlan forgotten = RunPrune(*t.Open(), o).plan;
  EXPECT_GT(forgotten.stats.blobs.remove + forgotten.stats.blobs.repackrm, 0u);
  EXPECT_EQ(ignored.stats.blobs.remove, forgotten.stats.blobs.remove);
  EXPECT_EQ(ignored.stats.blobs.repackrm, forgotten.stats.blobs.repackrm);
  EXPECT_EQ(ignored.stats.size.used, forgotten.stats.size.used);
  EXPECT_EQ(ignored.remove, forgotten.remove);
  EXPECT_EQ(ignored.repack, forgotten.repack);
}

TEST(Prune, DeletesUnreferencedPacksAndRemovesNothingUsed) {
  TestRepo t;
  t.BackupMany(2);
  PackId junk = t.WriteUnreferencedPack(5);
  auto repo = t.Open();
  PruneResult r = RunPrune(*repo, Quiet());
  EXPECT_EQ(r.plan.remove_first, std::vector<PackId>{junk});
  EXPECT_FALSE(t.mem().Stat({FileType::kPack, junk.Hex()}));
  ExpectHealthy(t, false);
}

// RELIABILITY.md case 19: on eventually consistent storage a pack's index may be listed
// late; with a grace period prune keeps packs in no index that the storage got recently
// (by the storage's clock, here an hour behind the machine's) and removes them later.
TEST(Prune, UnreferencedGraceKeepsYoungPacksByTheStoragesClock) {
  TestRepo t;
  t.BackupMany(2);
  int64_t storage_now = std::time(nullptr) - 3600;
  t.mem().set_clock([&] { return storage_now; });
  PackId young = t.WriteUnreferencedPack(5);
  storage_now += 600;  // ten minutes later
  std::vector<std::string> warnings;
  PruneOptions o = Quiet();
  o.unreferenced_grace = ParseUnreferencedGrace("1h");
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  PruneResult r = RunPrune(*t.Open(), o);
  EXPECT_TRUE(r.plan.remove_first.empty());
  EXPECT_EQ(r.plan.young, std::vector<PackId>{young});
  EXPECT_EQ(r.plan.stats.size.unref, 0u);
  EXPECT_TRUE(t.mem().Stat({FileType::kPack, young.Hex()}));
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.back().find("kept 1 unreferenced pack(s) younger than"), std::string::npos) << warnings.back();
  storage_now += 3600;  // now older than the grace period
  r = RunPrune(*t.Open(), o);
  EXPECT_EQ(r.plan.remove_first, std::vector<PackId>{young});
  EXPECT_FALSE(t.mem().Stat({FileType::kPack, young.Hex()}));
  ExpectHealthy(t, false);
}

TEST(PruneOptionsParse, UnreferencedGrace) {
  EXPECT_EQ(ParseUnreferencedGrace(""), 0);
  EXPECT_EQ(ParseUnreferencedGrace("2h"), 7200);
  EXPECT_EQ(ParseUnreferencedGrace("1d3h"), 27 * 3600);
  EXPECT_THROW(ParseUnreferencedGrace("-1h"), Error);
  EXPECT_THROW(ParseUnreferencedGrace("5"), Error);
}

TEST(Prune, DuplicatesAreDeduplicated) {
  TestRepo t;
  t.BackupMany(2);
  // A second writer that did not see the index stores everything again.
  {
    auto repo = t.Open();  // index not loaded: every blob is saved again
    t.Backup(*repo, 1);
  }
  auto repo = t.Open();
  repo->LoadIndex();
  size_t blobs_with_dups = repo->index().BlobCount();
  PruneOptions o = Quiet();
  o.max_unused = "0%";
  PruneResult r = RunPrune(*repo, o);
  EXPECT_GT(r.plan.stats.blobs.duplicate, 0u);
  ExpectHealthy(t, false);
  auto again = t.Open();
  again->LoadIndex();
  EXPECT_LT(again->index().BlobCount(), blobs_with_dups);
  // every (type, id) exactly once
  std::set<std::pair<int, BlobId>> seen;
  again->index().ForEach([&](const PackId&, const PackedBlob& b) {
    EXPECT_TRUE(seen.insert({static_cast<int>(b.type), b.id}).second) << b.id.Hex();
  });
}

TEST(Prune, PackSplitAcrossIndexFilesKeepsEveryEntry) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  // Rewrite the index so that every pack's entries are split over two files.
  {
    auto repo = t.Open();
    repo->LoadIndex();
    PackTable all = PackTable::FromIndex(repo->index());
    IndexFile a, b;
    for (size_t i = 0; i < all.size(); ++i) {
      const auto& blobs = all.blobs(i);
      size_t half = blobs.size() / 2;
      a.packs.push_back({all.id(i), {blobs.begin(), blobs.begin() + half}});
      b.packs.push_back({all.id(i), {blobs.begin() + half, blobs.end()}});
    }
    std::vector<FileId> old = repo->index_files();
    repo->SaveJson(FileType::kIndex, a.ToJson());
    repo->SaveJson(FileType::kIndex, b.ToJson());
    for (const auto& id : old) t.mem().Remove({FileType::kIndex, id.Hex()});
  }
  t.Forget(snaps[0]);
  auto repo = t.Open();
  RunPrune(*repo, Quiet());
  ExpectHealthy(t, false);
}

TEST(Prune, MaxUnusedAndMaxRepackSize) {
  // One large data pack (> 16 MiB / 25) with one used and one unused blob.
  auto make = [](TestRepo& t) {
    auto repo = t.Open();
    repo->LoadIndex();
    Bytes used = RandomBytes(1, 400000), unused = RandomBytes(2, 400000);
    BlobId u = t.Data(*repo, used);
    t.Data(*repo, unused);
    BlobId root = t.Tree(*repo, {FileNode("f", {u}, used.size())});
    SaveSnapshotOf(*repo, root);
  };
  {
    TestRepo t;
    make(t);
    auto repo = t.Open();
    PruneOptions o = Quiet();
    o.max_unused = "unlimited";
    PruneResult r = RunPrune(*repo, o);
    EXPECT_TRUE(r.plan.repack.empty());
    EXPECT_EQ(r.plan.stats.packs.keep, 2u);
  }
  {
    TestRepo t;
    make(t);
    auto repo = t.Open();
    PruneOptions o = Quiet();
    o.max_unused = "0%";
    o.max_repack_size = "0";
    PruneResult r = RunPrune(*repo, o);
    EXPECT_TRUE(r.plan.repack.empty());
  }
  {
    TestRepo t;
    make(t);
    auto repo = t.Open();
    PruneOptions o = Quiet();
    o.max_unused = "0%";
    PruneResult r = RunPrune(*repo, o);
    EXPECT_EQ(r.plan.repack.size(), 1u);
    EXPECT_EQ(r.plan.stats.blobs.repackrm, 1u);
    ExpectHealthy(t, false);
  }
}

// One large pack (used 1 MiB, 3 MiB unused, used 1 MiB, 6 MiB unused, used 1 MiB) and six
// small packs of a used and an unused blob each; returns the first blob of the large pack.
BlobId MakeHoleyPacks(TestRepo& t) {
  std::vector<Node> files;
  BlobId first;
  auto repo = t.Open(1);
  repo->LoadIndex();
  repo->set_pack_size(64 << 20);
  repo->set_compression(Compression::kOff);
  int seed = 1;
  for (size_t size : {1 << 20, 3 << 20, 1 << 20, 6 << 20, 1 << 20}) {
    Bytes b = RandomBytes(seed, size);
    BlobId id = t.Data(*repo, b);
    if (seed % 2) files.push_back(FileNode("big" + std::to_string(seed), {id}, b.size()));
    if (seed == 1) first = id;
    seed++;
  }
  repo->Flush();
  for (int i = 0; i < 6; ++i) {
    Bytes used = RandomBytes(100 + i, 5000);
    files.push_back(FileNode("small" + std::to_string(i), {t.Data(*repo, used)}, used.size()));
    t.Data(*repo, RandomBytes(200 + i, 5000));
    repo->Flush();
  }
  std::sort(files.begin(), files.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
  BlobId root = t.Tree(*repo, files);
  SaveSnapshotOf(*repo, root);
  return first;
}

// Prunes MakeHoleyPacks' repository through `traced` with --max-unused 0% (all seven packs
// repacked); returns the large pack's name and its loads.
struct HoleyLoads {
  std::string big;
  std::vector<testing::LoadTraceBackend::Record> loads;
};
HoleyLoads PruneHoleyPacks(const BlobId& first,
                           const std::shared_ptr<testing::LoadTraceBackend>& traced, int jobs = 0) {
  auto repo = TestRepo::OpenOn(traced, 1);
  repo->LoadIndex();
  HoleyLoads out;
  out.big = repo->index().Lookup(BlobType::kData, first)[0].pack.Hex();
  traced->Reset();
  PruneOptions o;
  o.max_unused = "0%";
  o.jobs = jobs;
  PruneResult r = RunPrune(*repo, o);
  EXPECT_EQ(r.plan.repack.size(), 7u);
  for (const auto& l : traced->Loads(FileType::kPack))
    if (l.h.name == out.big) out.loads.push_back(l);
  return out;
}

// Over a slow link (issue 16): repack reads the wanted blobs of a pack with one ranged
// request per run whose holes are at most 4 MiB, the runs of one pack in parallel, and
// (without --jobs) as many streams at once as the storage has connections less the ones
// kept for the new packs' uploads (4 - 2 here).
TEST(Prune, RepackReadsCoalescedRangesInParallel) {
  for (int jobs : {0, 1}) {
    SCOPED_TRACE(jobs);
    TestRepo t;
    const BlobId first = MakeHoleyPacks(t);
    auto traced = std::make_shared<testing::LoadTraceBackend>(t.mem_ptr(), std::chrono::milliseconds(50), 4);
    traced->HoldUntilQuiet(FileType::kPack, std::chrono::milliseconds(300));
    const HoleyLoads h = PruneHoleyPacks(first, traced, jobs);
    ASSERT_EQ(h.loads.size(), 2u);  // through the 3 MiB hole, not the 6 MiB one
    uint64_t bytes = 0;
    for (const auto& l : h.loads) bytes += l.length;
    EXPECT_LT(bytes, uint64_t{7} << 20);  // of the 12 MiB the wanted blobs span
    // Both streams: every pack at once, the two ranges of a pack at once (with one pack
    // at a time, --jobs 1, nothing else takes the two streams).
    EXPECT_EQ(traced->PeakOfType(FileType::kPack), 4 - WriteSession::kRoundTripUploads);
    if (jobs == 1) {
      EXPECT_EQ(traced->PeakFor(h.big), 2);
    }
    ExpectHealthy(t, false);
  }
}

// Over storage with round trips each range is streamed and each blob copied as its bytes
// come, here in pieces that do not line up with the blobs: the same two requests for the
// large pack, none for a blob on its own (a bad copy would be loaded again by LoadBlob).
TEST(Prune, RepackStreamsItsRangesInPieces) {
  TestRepo t;
  const BlobId first = MakeHoleyPacks(t);
  auto trickle = std::make_shared<testing::TrickleBackend>(t.mem_ptr(), 4093);
  auto traced = std::make_shared<testing::LoadTraceBackend>(trickle, std::chrono::milliseconds(1), 4);
  const HoleyLoads h = PruneHoleyPacks(first, traced);
  ASSERT_EQ(h.loads.size(), 2u);
  uint64_t bytes = 0;
  for (const auto& l : h.loads) bytes += l.length;
  EXPECT_LT(bytes, uint64_t{7} << 20);
  ExpectHealthy(t, false);
}

// A stream holds its connection while its blobs are copied, and a copy that fills a pack
// waits for its upload, which needs a connection too: repack streams over the storage's
// connections less the session's uploads, so the uploads always find theirs (with streams
// on every connection a prune like this one hung). One-blob packs: every copy is an upload.
TEST(Prune, RepackStreamsLeaveConnectionsForUploads) {
  for (int connections : {3, 5}) {
    SCOPED_TRACE(connections);
    TestRepo t;
    MakeHoleyPacks(t);
    auto pooled = std::make_shared<testing::PooledBackend>(t.mem_ptr(), connections, 4093,
                                                           std::chrono::seconds(10));
    auto repo = TestRepo::OpenOn(pooled, 2);
    PruneOptions o = Quiet();
    o.max_unused = "0%";
    o.write.pack_size = 4096;
    PruneResult r = RunPrune(*repo, o);
    EXPECT_GE(r.packs_written, 9u);
    EXPECT_GE(pooled->streams(), 7);  // the ranges were streamed, not loaded whole
    ExpectHealthy(t, false);
  }
}

// On a local disk a request is a system call, not a round trip: repack reads no hole over
// 256 KiB and no range over 2 MiB plus one blob, so the buffers it holds stay small
// (issue 15, B7's peak RSS).
TEST(Prune, RepackReadsSmallRangesFromLocalStorage) {
  TestRepo t;
  const BlobId first = MakeHoleyPacks(t);
  auto traced = std::make_shared<testing::LoadTraceBackend>(t.mem_ptr(), std::chrono::milliseconds(0), 1);
  ASSERT_FALSE(traced->RoundTrips());
  const HoleyLoads h = PruneHoleyPacks(first, traced);
  ASSERT_EQ(h.loads.size(), 3u);  // each wanted 1 MiB blob on its own
  uint64_t bytes = 0;
  for (const auto& l : h.loads) {
    EXPECT_LE(l.length, (uint64_t{1} << 20) + 64);
    bytes += l.length;
  }
  EXPECT_LE(bytes, (uint64_t{3} << 20) + 192);  // no hole read through
  ExpectHealthy(t, false);
}

TEST(Prune, RepackUncompressedCompressesData) {
  TestRepo t;
  {
    auto repo = t.Open();
    repo->LoadIndex();
    repo->set_compression(Compression::kOff);
    t.Backup(*repo, 0);
  }
  auto repo = t.Open();
  PruneOptions o = Quiet();
  o.repack_uncompressed = true;
  PruneResult r = RunPrune(*repo, o);
  EXPECT_FALSE(r.plan.repack.empty());
  ExpectHealthy(t, false);
  auto again = t.Open();
  again->LoadIndex();
  again->index().ForEach([&](const PackId&, const PackedBlob& b) {
    EXPECT_NE(b.uncompressed_length, 0u) << b.id.Hex();
  });
  TestRepo v1(1);
  auto r1 = v1.Open();
  EXPECT_THROW(RunPrune(*r1, o), Error);
}

// ---- refusals: nothing may be deleted -----------------------------------------------------

void ExpectRefused(TestRepo& t, const std::string& want_in_message) {
  auto listing = Listing(t.mem());
  auto repo = t.Open();
  try {
    RunPrune(*repo, Quiet());
    ADD_FAILURE() << "prune did not refuse";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want_in_message), std::string::npos) << e.what();
  }
  EXPECT_EQ(Listing(t.mem()), listing);
}

TEST(PruneRefuses, MissingPackWithUsedBlobs) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  PackId p;
  // Pick a pack of the newest generation: its blobs are used.
  {
    auto repo = t.Open();
    repo->LoadIndex();
    PackTable all = PackTable::FromIndex(repo->index());
    for (size_t i = 0; i < all.size(); ++i)
      if (all.blobs(i)[0].type == BlobType::kData) p = all.id(i);
  }
  t.mem().Remove({FileType::kPack, p.Hex()});
  ExpectRefused(t, "missing");
}

TEST(PruneRefuses, MissingIndexFile) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  std::vector<std::string> idx;
  t.mem().List(FileType::kIndex, [&](const FileInfo& fi) { idx.push_back(fi.name); });
  ASSERT_GE(idx.size(), 2u);
  auto repo = t.Open();
  repo->LoadIndex();
  // find an index file that lists the newest snapshot's root tree
  auto snaps_loaded = repo->LoadSnapshots();
  BlobId root = snaps_loaded.back().second.tree;
  for (const auto& name : idx) {
    IndexFile f = IndexFile::Parse(repo->LoadJson(FileType::kIndex, *FileId::FromHex(name)), name);
    for (const auto& p : f.packs)
      for (const auto& b : p.blobs)
        if (b.id == root) {
          t.mem().Remove({FileType::kIndex, name});
          // The walk meets the tree first (restic: "unable to load a tree").
          ExpectRefused(t, root.Hex() + " is not in the index");
          return;
        }
  }
  FAIL() << "root tree not found in any index";
}

TEST(PruneRefuses, DamagedIndexFile) {
  TestRepo t;
  auto snaps = t.BackupMany(2);
  t.Forget(snaps[0]);
  std::string name;
  t.mem().List(FileType::kIndex, [&](const FileInfo& fi) { name = fi.name; });
  Bytes b = t.mem().Load({FileType::kIndex, name});
  b[b.size() / 2] ^= 1;
  t.mem().Remove({FileType::kIndex, name});
  t.mem().Save({FileType::kIndex, name}, b);
  ExpectRefused(t, name);
}

TEST(PruneRefuses, UsedBlobMissingFromIndex) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  auto repo = t.Open();
  repo->LoadIndex();
  auto snaps_loaded = repo->LoadSnapshots();
  // a data blob of the newest snapshot
  BlobId victim;
  for (const Node& n : repo->LoadTree(snaps_loaded.back().second.tree))
    if (n.name == "gen.txt") victim = n.content[0];
  PackTable all = PackTable::FromIndex(repo->index());
  IndexFile f;
  for (size_t i = 0; i < all.size(); ++i) {
    IndexFile::Pack p{all.id(i), {}};
    for (const auto& b : all.blobs(i))
      if (b.id != victim) p.blobs.push_back(b);
    f.packs.push_back(p);
  }
  std::vector<FileId> old = repo->index_files();
  repo->SaveJson(FileType::kIndex, f.ToJson());
  for (const auto& id : old) t.mem().Remove({FileType::kIndex, id.Hex()});
  ExpectRefused(t, victim.Hex());
}

TEST(PruneRefuses, UsedPackSizeDiffers) {
  TestRepo t;
  auto snaps = t.BackupMany(2);
  auto repo = t.Open();
  repo->LoadIndex();
  PackTable all = PackTable::FromIndex(repo->index());
  PackId p = all.id(all.size() - 1);
  Bytes b = t.mem().Load({FileType::kPack, p.Hex()});
  b.push_back(0);
  t.mem().Remove({FileType::kPack, p.Hex()});
  t.mem().Save({FileType::kPack, p.Hex()}, b);
  ExpectRefused(t, "does not match");
}

TEST(PruneRefuses, MissingTree) {
  TestRepo t;
  auto repo = t.Open();
  repo->LoadIndex();
  BlobId root = t.Tree(*repo, {DirNode("gone", IdOf(AsBytes("nothing")))});
  repo->Flush();
  Snapshot s;
  s.time.sec = 1;
  s.tree = root;
  s.paths = {"/"};
  s.hostname = "h";
  FileId sid = repo->SaveJson(FileType::kSnapshot, s.ToJson());
  ExpectRefused(t, sid.Short());
}

TEST(Prune, MissingUnusedPackIsForgotten) {
  TestRepo t;
  auto snaps = t.BackupMany(3);
  t.Forget(snaps[0]);
  t.Forget(snaps[1]);
  // the first generation's packs hold only blobs of snapshot 0 or shared ones; find a
  // pack whose blobs are all unused now
  auto repo = t.Open();
  PruneOptions o = Quiet();
  o.dry_run = true;
  PrunePlan plan = RunPrune(*repo, o).plan;
  ASSERT_FALSE(plan.remove.empty());
  t.mem().Remove({FileType::kPack, plan.remove[0].Hex()});
  std::vector<std::string> warnings;
  PruneOptions o2 = Quiet();
  o2.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto repo2 = t.Open();
  PruneResult r = RunPrune(*repo2, o2);
  EXPECT_EQ(r.plan.ignore, std::vector<PackId>{plan.remove[0]});
  EXPECT_FALSE(warnings.empty());
  ExpectHealthy(t, false);
}

// ---- interrupted prune: every backend call from the Nth on fails ------------------------

TEST(PruneKill, EveryStepLeavesARepairableRepository) {
  TestRepo base;
  auto snaps = base.BackupMany(4);
  base.Forget(snaps[0]);
  base.Forget(snaps[2]);
  base.WriteUnreferencedPack(9);
  // a duplicate of some blobs, so that repacking has something to deduplicate
  {
    auto repo = base.Open();
    base.Backup(*repo, 3);
  }

  // A full prune's number of backend calls.
  uint64_t total = 0;
  {
    auto mem = Clone(base.mem());
    auto fault = std::make_shared<FaultBackend>(mem);
    auto repo = TestRepo::OpenOn(fault);
    uint64_t start = fault->TotalCalls();
    PruneResult r = RunPrune(*repo, Quiet());
    total = fault->TotalCalls() - start;
    EXPECT_FALSE(r.plan.repack.empty());
    EXPECT_FALSE(r.plan.remove.empty());
    EXPECT_FALSE(r.plan.remove_first.empty());
  }
  ASSERT_GT(total, 10u);
  int failed_runs = 0;
  for (uint64_t n = 1; n <= total; ++n) {
    const std::string ctx = "fail from call " + std::to_string(n) + " of " + std::to_string(total);
    auto mem = Clone(base.mem());
    auto fault = std::make_shared<FaultBackend>(mem);
    {
      auto repo = TestRepo::OpenOn(fault);
      fault->FailFrom(fault->TotalCalls() + n);
      try {
        RunPrune(*repo, Quiet());
      } catch (const Error& e) {
        ++failed_runs;
      }
      fault->ClearFaults();
    }
    // The repository is usable: check is clean (unreferenced packs are hints only).
    {
      auto repo = TestRepo::OpenOn(mem);
      CheckOptions co;
      co.read_data = true;
      CheckResult cr = RunCheck(*repo, co);
      ASSERT_TRUE(cr.ok()) << ctx << "\n" << Join(cr.errors);
      for (const auto& h : cr.hints) {
        EXPECT_TRUE(h.find("not referenced in any index") != std::string::npos ||
                    h.find("contained in several indexes") != std::string::npos)
            << ctx << ": " << h;
      }
      ASSERT_NO_THROW(LoadAllSnapshotData(*repo)) << ctx;
    }
    // A second prune finishes the job.
    {
      auto repo = TestRepo::OpenOn(mem);
      ASSERT_NO_THROW(RunPrune(*repo, Quiet())) << ctx;
    }
    {
      auto repo = TestRepo::OpenOn(mem);
      CheckOptions co;
      co.read_data = true;
      CheckResult cr = RunCheck(*repo, co);
      ASSERT_TRUE(cr.ok()) << ctx << "\n" << Join(cr.errors);
      EXPECT_TRUE(cr.hints.empty()) << ctx << "\n" << Join(cr.hints);
      ASSERT_EQ(LoadAllSnapshotData(*repo), 2u * 3 + 5) << ctx;
    }
  }
  EXPECT_GT(failed_runs, 0);
}

// ---- repair index -------------------------------------------------------------------------

TEST(RepairIndex, RebuildsFromPackHeaders) {
  TestRepo t;
  t.BackupMany(3);
  std::vector<std::string> idx;
  t.mem().List(FileType::kIndex, [&](const FileInfo& fi) { idx.push_back(fi.name); });
  for (const auto& n : idx) t.mem().Remove({FileType::kIndex, n});
  {
    auto repo = t.Open();
    RepairIndexResult r = RepairIndex(*repo, {});
    EXPECT_EQ(r.packs_read, CountType(t.mem(), FileType::kPack));
    EXPECT_EQ(r.packs_trusted, 0u);
    EXPECT_EQ(r.index_files_removed, 0u);
  }
  ExpectHealthy(t, false);
  // Again, trusting the index now; then reading everything.
  {
    auto repo = t.Open();
    RepairIndexResult r = RepairIndex(*repo, {});
    EXPECT_EQ(r.packs_read, 0u);
    EXPECT_EQ(r.packs_trusted, CountType(t.mem(), FileType::kPack));
    RepairIndexOptions all;
    all.read_all_packs = true;
    auto repo2 = t.Open();
    RepairIndexResult r2 = RepairIndex(*repo2, all);
    EXPECT_EQ(r2.packs_read, CountType(t.mem(), FileType::kPack));
  }
  ExpectHealthy(t, false);
}

TEST(RepairIndex, SkipsDamagedPackHeaderAndForgetsMissingPacks) {
  TestRepo t;
  auto snaps = t.BackupMany(2);
  auto repo = t.Open();
  repo->LoadIndex();
  PackTable all = PackTable::FromIndex(repo->index());
  // damage one pack's header (last bytes before the length field), drop another pack
  PackId damaged = all.id(0), gone = all.id(1);
  Bytes b = t.mem().Load({FileType::kPack, damaged.Hex()});
  b[b.size() - 10] ^= 0x55;
  t.mem().Remove({FileType::kPack, damaged.Hex()});
  t.mem().Save({FileType::kPack, damaged.Hex()}, b);
  t.mem().Remove({FileType::kPack, gone.Hex()});
  RepairIndexOptions o;
  o.read_all_packs = true;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto r = RepairIndex(*t.Open(), o);
  EXPECT_EQ(r.packs_invalid, 1u);
  auto after = t.Open();
  after->LoadIndex();
  PackTable now = PackTable::FromIndex(after->index());
  EXPECT_LT(now.Find(damaged), 0);
  EXPECT_LT(now.Find(gone), 0);
  EXPECT_EQ(now.size(), all.size() - 2);
}

TEST(RepairIndex, DamagedIndexFileIsReplaced) {
  TestRepo t;
  t.BackupMany(2);
  std::string name;
  t.mem().List(FileType::kIndex, [&](const FileInfo& fi) { name = fi.name; });
  Bytes b = t.mem().Load({FileType::kIndex, name});
  b[40] ^= 1;
  t.mem().Remove({FileType::kIndex, name});
  t.mem().Save({FileType::kIndex, name}, b);
  auto r = RepairIndex(*t.Open(), {});
  EXPECT_EQ(r.invalid_index_files, 1u);
  EXPECT_GT(r.packs_read, 0u);
  ExpectHealthy(t, false);
}

TEST(RepairIndex, InterruptedRepairLeavesAUsableRepository) {
  TestRepo base;
  base.BackupMany(3);
  std::vector<std::string> idx;
  base.mem().List(FileType::kIndex, [&](const FileInfo& fi) { idx.push_back(fi.name); });
  base.mem().Remove({FileType::kIndex, idx[0]});
  uint64_t total = 0;
  {
    auto mem = Clone(base.mem());
    auto fault = std::make_shared<FaultBackend>(mem);
    auto repo = TestRepo::OpenOn(fault);
    uint64_t start = fault->TotalCalls();
    RepairIndex(*repo, {});
    total = fault->TotalCalls() - start;
  }
  for (uint64_t n = 1; n <= total; ++n) {
    auto mem = Clone(base.mem());
    auto fault = std::make_shared<FaultBackend>(mem);
    {
      auto repo = TestRepo::OpenOn(fault);
      fault->FailFrom(fault->TotalCalls() + n);
      try {
        RepairIndex(*repo, {});
      } catch (const Error&) {
      }
      fault->ClearFaults();
    }
    auto repo = TestRepo::OpenOn(mem);
    RepairIndex(*repo, {});
    auto checked = TestRepo::OpenOn(mem);
    CheckOptions co;
    co.read_data = true;
    CheckResult cr = RunCheck(*checked, co);
    ASSERT_TRUE(cr.ok()) << n << "\n" << Join(cr.errors);
    EXPECT_TRUE(cr.hints.empty()) << n << "\n" << Join(cr.hints);
  }
}

}  // namespace
}  // namespace haven
