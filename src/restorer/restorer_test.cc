#include "restorer/restorer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "archiver/archiver.h"
#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "backend/test_load_trace.h"
#include "core/error.h"
#include "core/fd.h"
#include "crypto/kdf.h"
#include "repo/test_repository.h"
#include "repo/node.h"
#include "repo/test_tree_builder.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPassword = "restore-test";

std::string Random(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

void WriteFile(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << data;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A new repository in `mem` (cheap key derivation) with one backup of `src`: its root tree.
BlobId BackUpInto(const std::shared_ptr<MemBackend>& mem, const fs::path& src) {
  Repository::Init(*mem, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto repo = haven::testing::TestRepository::Open(mem, kPassword, 2);
  repo->LoadIndex();
  BackupOptions opts;
  opts.targets = {src.string()};
  opts.jobs = 2;
  return RunBackup(*repo, opts, false).tree;
}

// A tree whose files share blobs across files and packs: restore must read each pack
// once and write every use of a blob.
class RestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("haven-restore-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    src_ = root_ / "src";
    std::string big = Random(1, 5 << 20);  // several chunks
    files_["big.bin"] = big;
    files_["big-copy.bin"] = big;                       // every blob used twice
    files_["twice.bin"] = big.substr(0, 3 << 20) + big;  // chunks repeat inside one file
    files_["sparse.bin"] = std::string(3 << 20, '\0') + Random(2, 100000) +
                           std::string(2 << 20, '\0');
    // One blob ending in a whole 4 KiB block of zeros: a new file gets its size from its
    // last write, which must not leave that block as a hole.
    files_["zero-tail.bin"] = Random(3, 4096) + std::string(4096, '\0');
    files_["empty"] = "";
    for (int i = 0; i < 300; i++)
      files_["many/f" + std::to_string(i)] = "small file " + std::to_string(i % 50) + "\n";
    for (const auto& [name, data] : files_) WriteFile(src_ / name, data);
    // Hard links restore as links to one inode.
    ASSERT_EQ(link((src_ / "big.bin").c_str(), (src_ / "big-link.bin").c_str()), 0);
    files_["big-link.bin"] = big;

    mem_ = std::make_shared<MemBackend>();
    tree_ = BackUpInto(mem_, src_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // The subtree that holds the backed-up folder's entries.
  BlobId SourceTree(haven::testing::TestRepository& repo) {
    BlobId t = tree_;
    for (const auto& part : src_) {
      if (part == "/") continue;
      for (const Node& n : repo.LoadTree(t))
        if (n.name == part.string()) t = *n.subtree;
    }
    return t;
  }

  RestoreResult Restore(int jobs, const fs::path& target, std::vector<std::string>* warnings,
                        Overwrite overwrite = Overwrite::kAlways) {
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, jobs);
    repo->LoadIndex();
    RestoreOptions opts;
    opts.target = target.string();
    opts.jobs = jobs;
    opts.verify = true;
    opts.overwrite = overwrite;
    opts.warn = [&](const std::string& w) { warnings->push_back(w); };
    return RunRestore(*repo, SourceTree(*repo), opts);
  }

  // The plain lengths of the blobs of file `name` in the backup (the chunker's polynomial
  // is random per repository, so chunk boundaries differ from run to run).
  std::vector<uint64_t> BlobLengths(const std::string& name) {
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 1);
    repo->LoadIndex();
    std::vector<uint64_t> out;
    for (const Node& n : repo->LoadTree(SourceTree(*repo)))
      if (n.name == name)
        for (const BlobId& id : n.content)
          out.push_back(repo->index().Lookup(BlobType::kData, id).at(0).PlainLength());
    return out;
  }

  fs::path root_, src_;
  std::map<std::string, std::string> files_;
  std::shared_ptr<MemBackend> mem_;
  BlobId tree_;
};

TEST_F(RestoreTest, EveryFileIdenticalWithAnyThreadCount) {
  for (int jobs : {1, 3}) {
    fs::path out = root_ / ("out" + std::to_string(jobs));
    std::vector<std::string> warnings;
    RestoreResult r = Restore(jobs, out, &warnings);
    EXPECT_TRUE(warnings.empty()) << warnings[0];
    EXPECT_EQ(r.errors, 0u);
    EXPECT_EQ(r.verified, files_.size() - 1);  // the hard link is not a file of its own
    for (const auto& [name, data] : files_) {
      ASSERT_TRUE(fs::exists(out / name)) << name;
      EXPECT_EQ(ReadFile(out / name), data) << name << " with " << jobs << " jobs";
    }
    struct stat a, b;
    ASSERT_EQ(stat((out / "big.bin").c_str(), &a), 0);
    ASSERT_EQ(stat((out / "big-link.bin").c_str(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    struct stat sp;
    ASSERT_EQ(stat((out / "sparse.bin").c_str(), &sp), 0);
    EXPECT_LT(static_cast<uint64_t>(sp.st_blocks) * 512, uint64_t{1} << 20);  // holes kept
  }
}

// Files are created with their final mode in folders the restore makes (no chown or
// chmod afterwards when nothing differs): every mode and owner still ends as the snapshot
// says, whatever the umask, with setuid, setgid and sticky bits, read-only and unreadable
// files, another owner and a setgid folder whose group a new file would inherit.
TEST(RestoreModes, ModesAndOwnersAsTheSnapshotSaysWhateverTheUmask) {
  const fs::path root = fs::temp_directory_path() / ("haven-restore-modes-" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path src = root / "src";
  struct Want {
    std::string name;
    mode_t mode;
    uid_t uid;
    gid_t gid;
  };
  const bool root_user = geteuid() == 0;
  const uid_t me = geteuid();
  const gid_t my_group = getegid();
  std::vector<Want> want = {
      {"suid", 04755, me, my_group},  {"sgid", 02755, me, my_group}, {"sticky", 01644, me, my_group},
      {"ro", 0400, me, my_group},     {"none", 0, me, my_group},     {"open", 0666, me, my_group},
      {"big-ro", 0444, me, my_group}, {"sg", 02775, me, root_user ? gid_t{999} : my_group},
      {"sg/inside", 0664, me, my_group}};
  if (root_user) {
    want.push_back({"other", 0640, 1234, 5678});
    want.push_back({"sg/grp", 0604, 0, 4321});
  }
  fs::create_directories(src / "sg");
  for (const Want& w : want) {
    if (w.name == "sg") continue;
    WriteFile(src / w.name, w.name == "big-ro" ? Random(9, 3 << 20) : w.name + "\n");
  }
  // Folders first (a setgid folder makes its new files' group its own), then the files.
  for (int pass = 0; pass < 2; pass++)
    for (const Want& w : want) {
      const fs::path p = src / w.name;
      if (fs::is_directory(p) != (pass == 0)) continue;
      ASSERT_EQ(lchown(p.c_str(), w.uid, w.gid), 0) << w.name;
      ASSERT_EQ(chmod(p.c_str(), w.mode), 0) << w.name;
    }
  auto mem = std::make_shared<MemBackend>();
  const BlobId tree = BackUpInto(mem, src);
  // 022: most files are created with their mode and keep it; 077: every group and other
  // bit was masked at creation and must be set afterwards.
  for (mode_t mask : {mode_t{022}, mode_t{077}}) {
    const fs::path target = root / ("out" + std::to_string(mask));
    const mode_t old_umask = umask(mask);
    auto repo = haven::testing::TestRepository::Open(mem, kPassword, 2);
    repo->LoadIndex();
    RestoreOptions ro;
    ro.target = target.string();
    ro.jobs = 2;
    std::vector<std::string> warnings;
    ro.warn = [&](const std::string& w) { warnings.push_back(w); };
    RestoreResult r = RunRestore(*repo, tree, ro);
    umask(old_umask);
    EXPECT_EQ(r.errors, 0u) << (warnings.empty() ? "" : warnings[0]);
    const fs::path out = target / src.relative_path();
    for (const Want& w : want) {
      struct stat st;
      ASSERT_EQ(lstat((out / w.name).c_str(), &st), 0) << w.name;
      EXPECT_EQ(st.st_mode & 07777, w.mode) << w.name << " umask " << mask;
      if (root_user) {
        EXPECT_EQ(st.st_uid, w.uid) << w.name;
        EXPECT_EQ(st.st_gid, w.gid) << w.name;
      }
    }
    EXPECT_EQ(ReadFile(out / "big-ro"), Random(9, 3 << 20));
  }
  fs::remove_all(root);
}

void SetMtime(const fs::path& p, time_t sec) {
  struct timespec ts[2] = {{sec, 0}, {sec, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0) << p;
}

// A second restore into a target that an interrupted or edited earlier restore left:
// changed, cut, grown and half-written files are repaired by rewriting only what differs;
// links in the way are replaced, never written through.
TEST_F(RestoreTest, OverwriteAlwaysRepairsAnEditedTargetFetchingOnlyWhatDiffers) {
  fs::path out = root_ / "out";
  std::vector<std::string> warnings;
  ASSERT_EQ(Restore(2, out, &warnings).errors, 0u);
  // twice.bin: one byte changed in the middle; sparse.bin cut short; many/f1 grown;
  // big-copy.bin as a half-written file (right size, its end zeros, mtime now);
  // many/f2 a symlink to a file outside; many/f3 hard-linked from outside.
  std::string twice = files_["twice.bin"];
  twice[4 << 20] ^= 1;
  WriteFile(out / "twice.bin", twice);
  ASSERT_EQ(truncate((out / "sparse.bin").c_str(), 1000), 0);
  WriteFile(out / "many/f1", files_["many/f1"] + "more");
  // big-copy.bin's last blob zeroed; every blob before it is intact and must be kept.
  const std::vector<uint64_t> lens = BlobLengths("big-copy.bin");
  ASSERT_FALSE(lens.empty());
  const uint64_t intact = files_["big-copy.bin"].size() - lens.back();
  std::string half = files_["big-copy.bin"];
  std::fill(half.begin() + static_cast<long>(intact), half.end(), '\0');
  WriteFile(out / "big-copy.bin", half);
  WriteFile(root_ / "outside", "outside\n");
  fs::remove(out / "many/f2");
  fs::create_symlink(root_ / "outside", out / "many/f2");
  WriteFile(out / "many/f3", "edited\n");
  ASSERT_EQ(link((out / "many/f3").c_str(), (root_ / "outside-link").c_str()), 0);

  for (Overwrite mode : {Overwrite::kIfChanged, Overwrite::kAlways}) {
    warnings.clear();
    RestoreResult r = Restore(2, out, &warnings, mode);
    EXPECT_TRUE(warnings.empty()) << warnings[0];
    EXPECT_EQ(r.errors, 0u);
    EXPECT_EQ(r.verified, files_.size() - 1);
    for (const auto& [name, data] : files_) EXPECT_EQ(ReadFile(out / name), data) << name;
    EXPECT_EQ(ReadFile(root_ / "outside"), "outside\n");
    EXPECT_EQ(ReadFile(root_ / "outside-link"), "edited\n");
    EXPECT_FALSE(fs::is_symlink(out / "many/f2"));
    // At least big-copy.bin's intact blobs (all of it, once repaired) were not fetched again.
    const uint64_t kept = mode == Overwrite::kIfChanged ? intact : files_["big-copy.bin"].size();
    EXPECT_GE(r.bytes_kept, kept) << static_cast<int>(mode);
  }
  // Everything is in place now: nothing is written on a third run but the hard-linked
  // big.bin, which is replaced (a file with several links is never written through).
  RestoreResult r = Restore(1, out, &warnings);
  EXPECT_EQ(r.bytes_kept + files_["big.bin"].size(), r.bytes);
}

TEST_F(RestoreTest, OverwriteNeverAndIfNewerKeepExistingFiles) {
  fs::path out = root_ / "out";
  std::vector<std::string> warnings;
  ASSERT_EQ(Restore(1, out, &warnings).errors, 0u);
  WriteFile(out / "many/f1", "mine\n");
  WriteFile(out / "many/f2", "mine too\n");
  SetMtime(out / "many/f2", 1);  // older than the snapshot's file
  fs::remove(out / "many/f4");
  RestoreResult r = Restore(1, out, &warnings, Overwrite::kNever);
  EXPECT_EQ(ReadFile(out / "many/f1"), "mine\n");
  EXPECT_EQ(ReadFile(out / "many/f2"), "mine too\n");
  EXPECT_EQ(ReadFile(out / "many/f4"), files_["many/f4"]);  // missing: restored
  EXPECT_EQ(r.skipped, files_.size() - 1);  // every name but f4
  SetMtime(out / "many/f1", 4102444800);  // 2100: newer than the snapshot's
  r = Restore(1, out, &warnings, Overwrite::kIfNewer);
  EXPECT_EQ(ReadFile(out / "many/f1"), "mine\n");
  EXPECT_EQ(ReadFile(out / "many/f2"), files_["many/f2"]);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
}

TEST(ParseOverwriteTest, NamesAndErrors) {
  EXPECT_EQ(ParseOverwrite("if-changed"), Overwrite::kIfChanged);
  EXPECT_EQ(ParseOverwrite("never"), Overwrite::kNever);
  EXPECT_THROW(ParseOverwrite("sometimes"), Error);
}

TEST_F(RestoreTest, LostPackFailsOnlyItsFiles) {
  // Drop the pack holding the small files' blobs (they are not in big.bin's packs).
  auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 1);
  repo->LoadIndex();
  std::vector<std::pair<std::string, Node>> nodes;
  for (Node& n : repo->LoadTree(SourceTree(*repo))) {
    if (n.name == "many")
      for (Node& m : repo->LoadTree(*n.subtree)) nodes.emplace_back("/many/" + m.name, m);
    nodes.emplace_back("/" + n.name, n);
  }
  auto locs = repo->index().Lookup(BlobType::kData, nodes[0].second.content.empty()
                                                        ? BlobId()
                                                        : nodes[0].second.content[0]);
  for (const auto& [path, n] : nodes)
    if (path == "/many/f0") locs = repo->index().Lookup(BlobType::kData, n.content[0]);
  ASSERT_FALSE(locs.empty());
  std::set<std::string> lost_files;
  for (const auto& [path, n] : nodes)
    for (const BlobId& id : n.content)
      for (const BlobLocation& l : repo->index().Lookup(BlobType::kData, id))
        if (l.pack == locs[0].pack) lost_files.insert(path);
  mem_->Remove({FileType::kPack, locs[0].pack.Hex()});

  std::vector<std::string> warnings;
  fs::path out = root_ / "out";
  RestoreResult r = Restore(2, out, &warnings);
  EXPECT_GE(lost_files.size(), 300u);
  EXPECT_EQ(r.errors, warnings.size());
  for (const auto& w : warnings) {
    EXPECT_NE(w.find(locs[0].pack.Hex()), std::string::npos) << w;
    std::string path = w.substr(8, w.find(':') - 8);  // "restore /path: ..."
    EXPECT_TRUE(lost_files.count(path)) << w;
  }
  // Hard-linked names share one planned file: only the first name is reported.
  EXPECT_GE(warnings.size(), lost_files.size() - 1);
  for (const auto& [name, data] : files_) {
    if (lost_files.count("/" + name)) continue;
    EXPECT_EQ(ReadFile(out / name), data) << name;
  }
}

// An in-memory repository whose files' blobs lie in one uncompressed data pack, in the
// order given (name, size, seed); names starting with "hole" are stored but left out of
// the tree (blobs of files that are not restored). Restore() runs RunRestore into a fresh
// temporary folder, removed with the object.
class OnePackRepo {
 public:
  OnePackRepo(const std::string& tag, const std::vector<std::tuple<std::string, size_t, int>>& spec)
      : root_(fs::temp_directory_path() / ("haven-restore-" + tag + "-" + std::to_string(getpid()))) {
    fs::remove_all(root_);
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 1);
    repo->LoadIndex();
    repo->set_pack_size(64 << 20);
    repo->set_compression(Compression::kOff);
    testing::TreeBuilder trees(*repo);
    std::vector<Node> nodes;
    for (const auto& [name, size, seed] : spec) {
      std::string data = Random(seed, size);
      Node n = trees.File(name, data);
      if (name.rfind("hole", 0) == 0) continue;
      files_[name] = data;
      nodes.push_back(n);
    }
    tree_ = trees.Tree(nodes);
    repo->Flush();
  }
  ~OnePackRepo() { fs::remove_all(root_); }

  const std::shared_ptr<MemBackend>& mem() const { return mem_; }
  const std::map<std::string, std::string>& files() const { return files_; }
  const std::string& file(const std::string& name) const { return files_.at(name); }
  fs::path out() const { return root_ / "out"; }
  // Where `name`'s only blob is stored, as the index of `repo` says.
  static BlobLocation Where(IndexedRepository& repo, const std::string& data) {
    return repo.index().Lookup(BlobType::kData, BlobId(Sha256(AsBytes(data))))[0];
  }
  RestoreResult Restore(IndexedRepository& repo, int jobs, std::vector<std::string>* warnings) const {
    RestoreOptions opts;
    opts.target = out().string();
    opts.jobs = jobs;
    opts.warn = [warnings](const std::string& w) { warnings->push_back(w); };
    return RunRestore(repo, tree_, opts);
  }

 private:
  fs::path root_;
  std::shared_ptr<MemBackend> mem_ = std::make_shared<MemBackend>();
  BlobId tree_;
  std::map<std::string, std::string> files_;
};

// Over a slow link (issue 16): the wanted blobs of a pack are read with one ranged
// request per run whose holes are at most 4 MiB, and the runs of one pack in parallel.
TEST(RestoreRangeReads, HolesUpTo4MiBCoalescedAndRangesOfOnePackInParallel) {
  // One data pack, in this order: a, a 3 MiB hole, b, a 6 MiB hole, c.
  const OnePackRepo t("ranges", {{"a", 1 << 20, 1}, {"hole1", 3 << 20, 2}, {"b", 1 << 20, 3},
                                 {"hole2", 6 << 20, 4}, {"c", 1 << 20, 5}});
  auto traced = std::make_shared<testing::LoadTraceBackend>(t.mem(), std::chrono::milliseconds(100), 4);
  traced->HoldUntilQuiet(FileType::kPack, std::chrono::milliseconds(300));
  auto repo = haven::testing::TestRepository::Open(traced, kPassword, 2);
  repo->LoadIndex();
  const PackId data_pack = OnePackRepo::Where(repo->indexed(), t.file("a")).pack;
  traced->Reset();
  std::vector<std::string> warnings;
  RestoreResult r = t.Restore(repo->indexed(), 2, &warnings);
  EXPECT_EQ(r.errors, 0u) << (warnings.empty() ? "" : warnings[0]);
  for (const auto& [name, data] : t.files()) EXPECT_EQ(ReadFile(t.out() / name), data) << name;
  std::vector<testing::LoadTraceBackend::Record> loads;
  for (const auto& l : traced->Loads(FileType::kPack))
    if (l.h.name == data_pack.Hex()) loads.push_back(l);
  // a and b in one range (through the 3 MiB hole), c in another (past the 6 MiB hole)...
  ASSERT_EQ(loads.size(), 2u);
  uint64_t bytes = 0;
  for (const auto& l : loads) bytes += l.length;
  EXPECT_LT(bytes, uint64_t{7} << 20);  // of the 12 MiB the blobs span
  // ...both in flight at once.
  EXPECT_EQ(traced->PeakFor(data_pack.Hex()), 2);
}

// Over storage with round trips the ranges stream: the blobs that arrived before a read
// failed are written, the files of the others fail (after the fallback to another copy).
TEST(RestoreRangeReads, AStreamThatBreaksFailsOnlyTheBlobsThatDidNotArrive) {
  const OnePackRepo t("stream", {{"a", 1 << 20, 1}, {"b", 1 << 20, 2}, {"c", 1 << 20, 3}});
  // Data packs stream their first 1.5 MiB, then the connection breaks for good; a plain
  // load of them (the fallback) fails too.
  class Breaks : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    bool RoundTrips() const override { return true; }
    Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
      if (h.type == FileType::kPack && data_.count(h.name)) Fail(ErrorCode::kIo, "gone");
      return inner_->Load(h, offset, length);
    }
    void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
      if (h.type == FileType::kPack && data_.count(h.name)) Fail(ErrorCode::kIo, "gone");
      inner_->LoadInto(h, offset, out);
    }
    void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                    const std::function<void(ByteView)>& sink) override {
      if (!data_.count(h.name)) return Backend::LoadStream(h, offset, length, sink);
      streams++;
      Bytes all = inner_->Load(h, offset, length);
      for (size_t at = 0; at < all.size(); at += 64 << 10) {
        if (offset + at >= (3u << 19)) Fail(ErrorCode::kIo, "connection reset");
        sink(ByteView(all).subspan(at, std::min<size_t>(64 << 10, all.size() - at)));
      }
    }
    std::set<std::string> data_;
    std::atomic<int> streams{0};
  };
  auto breaks = std::make_shared<Breaks>(t.mem());
  auto repo = haven::testing::TestRepository::Open(breaks, kPassword, 2);
  repo->LoadIndex();
  breaks->data_.insert(OnePackRepo::Where(repo->indexed(), t.file("a")).pack.Hex());
  std::vector<std::string> warnings;
  RestoreResult r = t.Restore(repo->indexed(), 2, &warnings);
  EXPECT_EQ(breaks->streams.load(), 1);
  // The pack holds a, b, c in the order they were saved: a arrived whole, b and c did not.
  EXPECT_EQ(r.errors, 2u);
  ASSERT_EQ(warnings.size(), 2u);
  std::sort(warnings.begin(), warnings.end());
  EXPECT_NE(warnings[0].find("/b"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("/c"), std::string::npos) << warnings[1];
  EXPECT_EQ(ReadFile(t.out() / "a"), t.file("a"));
}

// A damaged blob in a streamed range is loaded from elsewhere only after the stream ends:
// the stream holds a connection, and with one connection (or every one held by a stream)
// a load from inside it would wait forever. The storage here has one "connection"; a call
// that waits more than 5 s for it fails instead of hanging the test.
TEST(RestoreRangeReads, ADamagedBlobIsLoadedAgainOnlyAfterItsStreamEnded) {
  const OnePackRepo t("onecon", {{"a", 100000, 1}, {"b", 100000, 2}});
  class OneConnection : public ForwardingBackend {
   public:
    using ForwardingBackend::ForwardingBackend;
    bool RoundTrips() const override { return true; }
    int Connections() const override { return 1; }
    Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
      Hold hold(*this);
      return inner_->Load(h, offset, length);
    }
    void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                    const std::function<void(ByteView)>& sink) override {
      Hold hold(*this);
      Bytes all = inner_->Load(h, offset, length);
      for (size_t at = 0; at < all.size(); at += 4096)
        sink(ByteView(all).subspan(at, std::min<size_t>(4096, all.size() - at)));
    }

   private:
    struct Hold {
      OneConnection& b;
      explicit Hold(OneConnection& be) : b(be) {
        std::unique_lock<std::mutex> l(b.mu_);
        if (!b.cv_.wait_for(l, std::chrono::seconds(5), [&] { return !b.busy_; }))
          Fail(ErrorCode::kIo, "no connection came free in 5 s (a load inside a stream?)");
        b.busy_ = true;
      }
      ~Hold() {
        std::lock_guard<std::mutex> l(b.mu_);
        b.busy_ = false;
        b.cv_.notify_all();
      }
    };
    std::mutex mu_;
    std::condition_variable cv_;
    bool busy_ = false;
  };
  // Damage a's blob in its pack.
  {
    auto repo0 = haven::testing::TestRepository::Open(t.mem(), kPassword, 1);
    repo0->LoadIndex();
    const BlobLocation loc = OnePackRepo::Where(repo0->indexed(), t.file("a"));
    const Handle ph{FileType::kPack, loc.pack.Hex()};
    Bytes pack = t.mem()->Load(ph);
    pack[loc.offset + 100] ^= 1;
    t.mem()->Remove(ph);
    t.mem()->Save(ph, pack);
  }
  auto one = std::make_shared<OneConnection>(t.mem());
  auto repo = haven::testing::TestRepository::Open(one, kPassword, 1);
  repo->LoadIndex();
  std::vector<std::string> warnings;
  RestoreResult r = t.Restore(repo->indexed(), 1, &warnings);
  // a has no other copy: it fails with the decode error, not with a connection timeout.
  EXPECT_EQ(r.errors, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/a"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].find("no connection came free"), std::string::npos) << warnings[0];
  EXPECT_EQ(ReadFile(t.out() / "b"), t.file("b"));
}

// Packs are read while the walk goes on: a pack starts once kPackHorizon (4) packs first
// used after it have been found. A blob of a started pack that a later file shares is
// read again by one more job of that pack, after the walk; every file is whole.
TEST(RestoreDuringWalk, ALaterUseOfAStartedPackIsReadAgainAndRestored) {
  char tmpl[] = "/tmp/haven-walk-test.XXXXXX";
  const fs::path root = mkdtemp(tmpl);
  auto mem = std::make_shared<MemBackend>();
  Repository::Init(*mem, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
  std::map<std::string, std::string> files;
  BlobId tree;
  {
    auto w = haven::testing::TestRepository::Open(mem, kPassword, 1);
    w->LoadIndex();
    testing::TreeBuilder b(*w);
    std::vector<Node> nodes;
    for (int i = 0; i < 12; i++) {
      const std::string name = "f" + std::to_string(10 + i);
      files[name] = Random(100 + i, 4096);
      nodes.push_back(b.File(name, files[name]));
      w->Flush();  // a pack per file
    }
    files["late"] = files["f10"];  // the first pack's blob, after it has started
    nodes.push_back(b.File("late", files["late"]));
    tree = b.Tree(nodes);
    w->Flush();
  }
  auto trace = std::make_shared<haven::testing::LoadTraceBackend>(mem, std::chrono::milliseconds(0), 2);
  auto repo = haven::testing::TestRepository::Open(trace, kPassword, 2);
  repo->LoadIndex();
  const std::string first_pack =
      repo->index().Lookup(BlobType::kData, BlobId(Sha256(AsBytes(files["f10"]))))[0].pack.Hex();
  RestoreOptions opts;
  opts.target = (root / "out").string();
  opts.jobs = 2;
  std::vector<std::string> warnings;
  opts.warn = [&](const std::string& w) { warnings.push_back(w); };
  RestoreResult r = RunRestore(*repo, tree, opts);
  EXPECT_EQ(r.errors, 0u);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  for (const auto& [name, data] : files) EXPECT_EQ(ReadFile(root / "out" / name), data) << name;
  size_t first_pack_reads = 0;
  for (const auto& rec : trace->Loads(FileType::kPack)) first_pack_reads += rec.h.name == first_pack;
  EXPECT_EQ(first_pack_reads, 2u);  // started during the walk, then again for "late"
  fs::remove_all(root);
}

// Trees made by hand, as a hostile repository would hold them (repeated names, links to
// outside the target, unsafe names, deep nesting), and targets that already hold links.
// Nothing may ever be written outside the target.
class HostileTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/haven-hostile-test.XXXXXX";
    root_ = mkdtemp(tmpl);
    outside_ = root_ / "outside";
    target_ = root_ / "target";
    fs::create_directories(outside_);
    mem_ = std::make_shared<MemBackend>();
    Repository::Init(*mem_, kPassword, 2, crypto::ScryptParams{1024, 8, 1}, 1);
    repo_ = haven::testing::TestRepository::Open(mem_, kPassword, 1);
    repo_->LoadIndex();
  }
  void TearDown() override { fs::remove_all(root_); }

  Node File(const std::string& name, const std::string& data) { return trees().File(name, data); }
  static Node Dir(const std::string& name, const BlobId& t) { return testing::TreeBuilder::Dir(name, t); }
  static Node Link(const std::string& name, const std::string& to) {
    return testing::TreeBuilder::Link(name, to);
  }
  BlobId Tree(const std::vector<Node>& nodes) { return trees().Tree(nodes); }
  testing::TreeBuilder trees() { return testing::TreeBuilder(*repo_); }
  // `tweak`: sets the options' test hooks.
  RestoreResult Restore(const BlobId& tree, std::function<void(RestoreOptions&)> tweak = nullptr) {
    repo_->Flush();
    auto repo = haven::testing::TestRepository::Open(mem_, kPassword, 2);
    repo->LoadIndex();
    RestoreOptions opts;
    opts.target = target_.string();
    opts.jobs = 2;
    opts.warn = [&](const std::string& w) { warnings_.push_back(w); };
    opts.note = [&](const std::string& w) { notes_.push_back(w); };
    if (tweak) tweak(opts);
    return RunRestore(*repo, tree, opts);
  }
  bool OutsideEmpty() { return fs::is_empty(outside_); }
  std::string Joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& w : v) s += w + "\n";
    return s;
  }

  fs::path root_, outside_, target_;
  std::shared_ptr<MemBackend> mem_;
  std::unique_ptr<haven::testing::TestRepository> repo_;
  std::vector<std::string> warnings_, notes_;
};

TEST_F(HostileTreeTest, RepeatedNameLinkThenDirectoryStaysInside) {
  BlobId inner = Tree({File("pwned", "written through the link\n")});
  // Both orders: link first (the attack), directory first.
  BlobId t1 = Tree({Link("a", outside_.string()), Dir("a", inner), File("ok", "fine\n")});
  RestoreResult r = Restore(t1);
  EXPECT_TRUE(OutsideEmpty());
  EXPECT_FALSE(fs::exists(outside_ / "pwned"));
  struct stat st;
  EXPECT_NE(lstat((target_ / "a").c_str(), &st), 0);  // neither entry of the name
  EXPECT_EQ(ReadFile(target_ / "ok"), "fine\n");
  EXPECT_GE(r.errors, 1u);
  ASSERT_FALSE(warnings_.empty());
  EXPECT_NE(Joined(warnings_).find("repeated name \"a\""), std::string::npos) << Joined(warnings_);

  warnings_.clear();
  fs::remove_all(target_);
  BlobId t2 = Tree({Dir("a", inner), Link("a", outside_.string())});
  Restore(t2);
  EXPECT_TRUE(OutsideEmpty());
  EXPECT_NE(Joined(warnings_).find("repeated name"), std::string::npos);
}

TEST_F(HostileTreeTest, LinkLeftInTheTargetIsReplacedNotFollowed) {
  // An earlier restore left `a` -> outside; this snapshot has `a` as a directory.
  fs::create_directories(target_);
  ASSERT_EQ(symlink(outside_.c_str(), (target_ / "a").c_str()), 0);
  // And a chain: `b` -> `c` -> outside.
  ASSERT_EQ(symlink("c", (target_ / "b").c_str()), 0);
  ASSERT_EQ(symlink(outside_.c_str(), (target_ / "c").c_str()), 0);
  // A file's own name as a link: `f` -> outside/f must not be written through.
  ASSERT_EQ(symlink((outside_ / "f").c_str(), (target_ / "f").c_str()), 0);
  BlobId inner = Tree({File("pwned", "inside\n")});
  BlobId t = Tree({Dir("a", inner), Dir("b", inner), File("f", "mine\n")});
  RestoreResult r = Restore(t);
  EXPECT_EQ(r.errors, 0u) << Joined(warnings_);
  EXPECT_TRUE(OutsideEmpty());
  struct stat st;
  ASSERT_EQ(lstat((target_ / "a").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(ReadFile(target_ / "a" / "pwned"), "inside\n");
  EXPECT_EQ(ReadFile(target_ / "b" / "pwned"), "inside\n");
  ASSERT_EQ(lstat((target_ / "f").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(ReadFile(target_ / "f"), "mine\n");
  ASSERT_EQ(lstat((target_ / "c").c_str(), &st), 0);  // not the snapshot's: left alone
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_NE(Joined(notes_).find("symlink"), std::string::npos) << Joined(notes_);
}

TEST_F(HostileTreeTest, FileWhereADirectoryBelongsIsReplacedAndReported) {
  fs::create_directories(target_);
  WriteFile(target_ / "d", "the user's file\n");
  ASSERT_EQ(chmod((target_ / "d").c_str(), 0600), 0);
  // A user's non-empty directory where the snapshot has a file: not removed, reported.
  WriteFile(target_ / "e" / "keep", "keep me\n");
  BlobId inner = Tree({File("x", "x\n")});
  BlobId t = Tree({Dir("d", inner), File("e", "snapshot's e\n")});
  RestoreResult r = Restore(t);
  struct stat st;
  ASSERT_EQ(lstat((target_ / "d").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));  // replaced by the snapshot's directory, and reported
  EXPECT_EQ(ReadFile(target_ / "d" / "x"), "x\n");
  EXPECT_NE(Joined(notes_).find(target_.string() + "/d"), std::string::npos) << Joined(notes_);
  EXPECT_EQ(ReadFile(target_ / "e" / "keep"), "keep me\n");
  EXPECT_EQ(r.errors, 1u);
  EXPECT_NE(Joined(warnings_).find("is in the way"), std::string::npos) << Joined(warnings_);
}

TEST_F(HostileTreeTest, UnsafeNamesAreRefused) {
  BlobId inner = Tree({File("pwned", "x\n")});
  BlobId t = Tree({Dir("..", inner), Dir(".", inner), Dir("", inner), File("a/b", "x\n"),
                   File(std::string("n\0ul", 4), "x\n"), File("good", "g\n")});
  RestoreResult r = Restore(t);
  EXPECT_EQ(r.errors, 5u) << Joined(warnings_);
  EXPECT_FALSE(fs::exists(root_ / "pwned"));
  EXPECT_FALSE(fs::exists(target_ / "pwned"));
  EXPECT_EQ(ReadFile(target_ / "good"), "g\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(target_)) entries++;
  EXPECT_EQ(entries, 1u);
}

TEST_F(HostileTreeTest, NestingPastPathMaxRestoresBelowTheTarget) {
  constexpr int kDepth = 1500;  // 1500 * "dd/" = 4500 bytes > PATH_MAX
  BlobId t = Tree({File("bottom", "deep\n")});
  for (int i = 0; i < kDepth; ++i) t = Tree({Dir("dd", t)});
  RestoreResult r = Restore(t);
  EXPECT_EQ(r.errors, 0u) << (warnings_.empty() ? "" : warnings_[0]);
  EXPECT_EQ(r.dirs, static_cast<uint64_t>(kDepth));
  std::string rel;
  for (int i = 0; i < kDepth; ++i) rel += "dd/";
  rel += "bottom";
  Fd dir(open(target_.c_str(), O_RDONLY | O_DIRECTORY));
  Fd f(OpenBeneath(dir.get(), rel, O_RDONLY));
  ASSERT_TRUE(f.valid()) << strerror(errno);
  char buf[16] = {};
  EXPECT_EQ(read(f.get(), buf, sizeof(buf)), 5);
  EXPECT_STREQ(buf, "deep\n");
  EXPECT_TRUE(OutsideEmpty());
}

// In a directory the restore has just made, entries are created exclusively without a
// look first. An entry put in the way meanwhile (a case-insensitive twin, another process)
// is never opened or followed: a fifo where a file goes fails that file (no hang, nothing
// written into it); a file where a symlink or a directory goes is replaced, as in a
// directory that existed.
TEST_F(HostileTreeTest, EntriesPutInTheWayOfAFreshDirectoryAreNeverOpened) {
  BlobId sub = Tree({File("a", "file content\n")});
  BlobId d = Tree({File("f", "not into the fifo\n"), Link("l", "elsewhere"), Dir("s", sub),
                   File("g", "fine\n")});
  BlobId root = Tree({Dir("d", d)});
  RestoreResult r = Restore(root, [&](RestoreOptions& o) {
    o.after_mkdir_for_testing = [&](const std::string& rel) {
      if (rel != "d") return;
      ASSERT_EQ(mkfifo((target_ / "d" / "f").c_str(), 0600), 0);
      WriteFile(target_ / "d" / "l", "in the way of the link\n");
      WriteFile(target_ / "d" / "s", "in the way of the directory\n");
    };
  });
  EXPECT_EQ(r.errors, 1u) << Joined(warnings_);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("/d/f"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("appeared during the restore"), std::string::npos) << warnings_[0];
  struct stat st;
  ASSERT_EQ(lstat((target_ / "d" / "f").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // left as it was
  ASSERT_EQ(lstat((target_ / "d" / "l").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(fs::read_symlink(target_ / "d" / "l"), "elsewhere");
  EXPECT_EQ(ReadFile(target_ / "d" / "s" / "a"), "file content\n");
  EXPECT_EQ(ReadFile(target_ / "d" / "g"), "fine\n");
  EXPECT_NE(Joined(notes_).find("/d/s"), std::string::npos) << Joined(notes_);
  EXPECT_TRUE(OutsideEmpty());
}

// A file whose blobs lie in two packs is opened once per pack. Another process that swaps
// a fifo in before the second open (with a reader waiting on it, or none) must neither
// make the restore wait nor get a byte: the file is reported and the fifo left alone.
TEST_F(HostileTreeTest, AFifoSwappedInBeforeAFileIsOpenedAgainIsRefused) {
  for (bool reader : {false, true}) {
    SCOPED_TRACE(reader ? "a reader waits on the fifo" : "no reader");
    fs::remove_all(target_);
    warnings_.clear();
    const std::string a = Random(1, 5000), b = Random(2, 7000);
    Node fa = File("part-a", a);
    repo_->Flush();  // the two blobs in two packs
    Node fb = File("part-b", b);
    Node big = fa;
    big.name = "big";
    big.size = a.size() + b.size();
    big.content = {fa.content[0], fb.content[0]};
    BlobId t = Tree({big, File("other", "fine\n")});
    Fd read_end;
    int swaps = 0;  // re-opens of "big"; the fifo is swapped in at the first
    RestoreResult r = Restore(t, [&](RestoreOptions& o) {
      o.before_reopen_for_testing = [&](const std::string& rel) {
        if (rel != "big" || swaps++) return;
        const fs::path fifo = root_ / "fifo";
        ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
        if (reader) read_end = Fd(open(fifo.c_str(), O_RDONLY | O_NONBLOCK));
        ASSERT_EQ(rename(fifo.c_str(), (target_ / "big").c_str()), 0);
      };
    });
    EXPECT_GE(swaps, 1);  // opened again by one pack's job or by both
    EXPECT_EQ(r.errors, 1u) << Joined(warnings_);
    EXPECT_NE(Joined(warnings_).find("no longer a regular file"), std::string::npos)
        << Joined(warnings_);
    struct stat st;
    ASSERT_EQ(lstat((target_ / "big").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    if (reader) {
      char c;
      EXPECT_LE(read(read_end.get(), &c, 1), 0);  // nothing was written into it
    }
    EXPECT_EQ(ReadFile(target_ / "other"), "fine\n");
    EXPECT_TRUE(OutsideEmpty());
  }
}

TEST_F(HostileTreeTest, WithoutOpenat2TheComponentWalkGivesTheSameResults) {
  UseOpenBeneathWalkForTesting(true);
  fs::create_directories(target_);
  ASSERT_EQ(symlink(outside_.c_str(), (target_ / "a").c_str()), 0);
  BlobId inner = Tree({File("pwned", "inside\n")});
  BlobId t = inner;
  for (int i = 0; i < 1200; ++i) t = Tree({Dir("dd", t)});
  RestoreResult r = Restore(Tree({Dir("a", inner), Dir("deep", t)}));
  UseOpenBeneathWalkForTesting(false);
  EXPECT_EQ(r.errors, 0u) << (warnings_.empty() ? "" : warnings_[0]);
  EXPECT_TRUE(OutsideEmpty());
  EXPECT_EQ(ReadFile(target_ / "a" / "pwned"), "inside\n");
}

class OpenBeneathTest : public ::testing::TestWithParam<bool> {};

TEST_P(OpenBeneathTest, RefusesLinksInEveryComponentAndEscapes) {
  UseOpenBeneathWalkForTesting(GetParam());
  char tmpl[] = "/tmp/haven-beneath-test.XXXXXX";
  fs::path root = mkdtemp(tmpl);
  fs::create_directories(root / "in" / "d");
  fs::create_directories(root / "out");
  WriteFile(root / "out" / "secret", "s");
  WriteFile(root / "in" / "d" / "f", "f");
  ASSERT_EQ(symlink("../out", (root / "in" / "up").c_str()), 0);
  ASSERT_EQ(symlink("d", (root / "in" / "rel").c_str()), 0);
  Fd in(open((root / "in").c_str(), O_RDONLY | O_DIRECTORY));
  Fd ok(OpenBeneath(in.get(), "d/f", O_RDONLY));
  EXPECT_TRUE(ok.valid());
  for (const char* bad : {"up/secret", "rel/f", "rel", "../out/secret", "d/../f", "./d/f", "d//f",
                          "/etc/passwd", ""}) {
    Fd fd(OpenBeneath(in.get(), bad, O_RDONLY));
    EXPECT_FALSE(fd.valid()) << bad;
  }
  errno = 0;
  EXPECT_FALSE(Fd(OpenBeneath(in.get(), "up/secret", O_RDONLY)).valid());
  EXPECT_EQ(errno, ELOOP);
  UseOpenBeneathWalkForTesting(false);
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Openat2AndWalk, OpenBeneathTest, ::testing::Bool());

}  // namespace
}  // namespace haven
