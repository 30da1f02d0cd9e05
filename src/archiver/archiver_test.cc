// Archiver tests for the unchanged path: a backup against a parent reuses the parent's
// extended attributes and unchanged trees, and must give exactly the trees a backup
// without a parent (every file read, every xattr listed) gives.
#include "archiver/archiver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "archiver/folder_state.h"
#include "backend/mem_backend.h"
#include "crypto/seal.h"
#include "repo/compress.h"
#include "repo/test_log_lines.h"
#include "repo/test_repository.h"
#include "core/error.h"
#include "repo/write_session.h"

namespace haven {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

struct timespec Ctime(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0);
  return st.st_ctim;
}

bool SameTs(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

class ArchiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/haven-archiver-test.XXXXXX";
    root_ = mkdtemp(tmpl);
    be_ = std::make_shared<MemBackend>();
    Repository::Init(*be_, "pw", 2, crypto::ScryptParams{1024, 8, 1}, 1);
    repo_ = haven::testing::TestRepository::Open(be_, "pw", 2);
    repo_->LoadIndex();
  }
  void TearDown() override { fs::remove_all(root_); }

  // A backup of root_/src; `parent` false = no parent (everything read and listed).
  BackupResult Backup(bool parent, int jobs = 2) {
    return RunBackup(*repo_, Options(parent ? std::nullopt : std::optional<FileId>(), !parent,
                                     jobs),
                     false);
  }
  // A backup of root_/src against `parent` (none and not `force`: found automatically),
  // each one a minute after the last.
  BackupOptions Options(std::optional<FileId> parent, bool force, int jobs = 2) {
    BackupOptions o;
    o.targets = {(root_ / "src").string()};
    o.host = "h";
    o.jobs = jobs;
    o.parent = parent;
    o.force = force;
    o.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
    return o;
  }
  // The node at `rel` (below src) in the snapshot tree `root`.
  Node Find(const BlobId& root, const std::string& rel) {
    std::vector<std::string> parts;
    for (const auto& c : fs::path(root_ / "src").relative_path()) parts.push_back(c.string());
    for (const auto& c : fs::path(rel)) parts.push_back(c.string());
    BlobId cur = root;
    for (size_t i = 0; i < parts.size(); ++i) {
      bool found = false;
      for (Node& n : repo_->LoadTree(cur)) {
        if (n.name != parts[i]) continue;
        if (i + 1 == parts.size()) return n;
        EXPECT_TRUE(n.subtree) << parts[i];
        cur = *n.subtree;
        found = true;
        break;
      }
      if (!found) ADD_FAILURE() << "no " << parts[i] << " in the tree";
      if (!found) return {};
    }
    return {};
  }
  // A backup with options `o` during which `gone` is removed right after `read_first` is
  // read: incomplete, with one warning, naming `gone`.
  BackupResult BackupLosing(BackupOptions o, const fs::path& read_first, const std::string& gone) {
    o.after_read = [&](const std::string& path, int) {
      if (path == read_first.string()) fs::remove(gone);
    };
    std::vector<std::string> warnings;
    o.warn = [&](const std::string& w) { warnings.push_back(w); };
    BackupResult r = RunBackup(*repo_, o, false);
    EXPECT_TRUE(r.incomplete);
    EXPECT_EQ(warnings.size(), 1u);
    for (const std::string& w : warnings) EXPECT_NE(w.find(gone), std::string::npos) << w;
    return r;
  }
  // The bytes the snapshot `root` holds for the file at `rel` (below src).
  std::string Content(const BlobId& root, const std::string& rel) { return Content(Find(root, rel)); }
  std::string Content(const Node& file) {
    std::string got;
    for (const BlobId& id : file.content) {
      Bytes b = repo_->LoadBlob(BlobType::kData, id);
      got.append(reinterpret_cast<const char*>(b.data()), b.size());
    }
    return got;
  }
  // The tree of src itself: the directories above it (/tmp) may change under parallel tests.
  BlobId Src(const BackupResult& r) {
    std::optional<BlobId> t = Find(r.tree, "").subtree;
    EXPECT_TRUE(t);
    return t ? *t : BlobId();
  }
  // Sets user.k on `p` and waits until that moved its ctime (the kernel clock is coarse).
  bool SetXattr(const fs::path& p, const std::string& value) {
    struct timespec before = Ctime(p);
    for (int i = 0; i < 100; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      if (setxattr(p.c_str(), "user.k", value.data(), value.size(), 0) != 0) return false;
      if (!SameTs(Ctime(p), before)) return true;
    }
    ADD_FAILURE() << "ctime of " << p << " did not move";
    return true;
  }

  fs::path root_;
  std::shared_ptr<MemBackend> be_;
  std::unique_ptr<haven::testing::TestRepository> repo_;
  int runs_ = 0;
};

// "auto" compression of a large file: its first 8 chunks at level 3, later ones at the
// level the trial on chunk 8 chose (level 1 for log lines), each stored as exactly the
// frame that level gives; the file restores byte for byte.
TEST_F(ArchiverTest, LargeFilesChunksUseTheLevelTheTrialChose) {
  const Bytes log = haven::testing::LogLines(24 << 20, 11);
  WriteFile(root_ / "src/app.log", std::string(log.begin(), log.end()));
  BackupResult r = Backup(false);
  Node f = Find(r.tree, "app.log");
  ASSERT_GE(f.content.size(), 10u);
  int chosen = 0;
  Bytes joined;
  for (size_t i = 0; i < f.content.size(); ++i) {
    Bytes plain = repo_->LoadBlob(BlobType::kData, f.content[i]);
    joined.insert(joined.end(), plain.begin(), plain.end());
    if (i == 8) chosen = ChooseAutoLevel(plain);
    const int level = i < 8 ? 3 : chosen;
    auto loc = repo_->index().Lookup(BlobType::kData, f.content[i]);
    ASSERT_EQ(loc.size(), 1u);
    EXPECT_EQ(loc[0].uncompressed_length, plain.size()) << "chunk " << i;
    EXPECT_EQ(loc[0].length, ZstdCompress(plain, level).size() + 32) << "chunk " << i;
  }
  EXPECT_EQ(chosen, 1);
  EXPECT_TRUE(joined == log);
}

// Trees, the index and the snapshot are compressed at kJsonLevel (zstd 1: smaller and
// faster than 3 on JSON of hex ids, docs/format.md §12); with --compression max, trees at
// the mode's level 11. Each stored frame is exactly the frame of that level.
TEST_F(ArchiverTest, TreesAndJsonFilesUseTheJsonLevel) {
  for (int i = 0; i < 40; ++i)
    WriteFile(root_ / "src" / ("file" + std::to_string(i) + ".txt"),
              "content " + std::to_string(i));
  for (Compression mode : {Compression::kAuto, Compression::kMax}) {
    // A file per mode: both trees are new in each backup (an unchanged tree would be the
    // first backup's blob, stored at the first mode's level).
    WriteFile(root_ / "src" / ("mode" + std::to_string(static_cast<int>(mode))), "x");
    WriteSession session(*repo_, WriteOptions{.compression = mode});
    BackupResult r = RunBackup(session, Options(std::nullopt, true), false);
    const Node src = Find(r.tree, "");  // the tree of src/ (40 entries)
    for (const BlobId& id : {r.tree, *src.subtree}) {
      Bytes plain = repo_->LoadBlob(BlobType::kTree, id);
      auto loc = repo_->index().Lookup(BlobType::kTree, id);
      ASSERT_EQ(loc.size(), 1u);
      EXPECT_EQ(loc[0].uncompressed_length, plain.size());
      const int level = mode == Compression::kMax ? 11 : 1;
      EXPECT_EQ(loc[0].length, ZstdCompress(plain, level).size() + 32) << "level " << level;
    }
    // The snapshot: 0x02, then the frame of its JSON at level 1.
    Bytes sealed = be_->Load({FileType::kSnapshot, r.snapshot_id.Hex()});
    auto opened = crypto::Open(repo_->key(), sealed);
    ASSERT_TRUE(opened);
    ASSERT_FALSE(opened->empty());
    EXPECT_EQ((*opened)[0], 2);
    const std::string json = repo_->LoadJson(FileType::kSnapshot, r.snapshot_id);
    const Bytes frame(opened->begin() + 1, opened->end());
    EXPECT_TRUE(frame == ZstdCompress(AsBytes(json), kJsonLevel));
  }
}

// A data blob under kSmallBlobMax is stored at level 1 under auto (its frame is exactly
// level 1's); from kSmallBlobMax up at level 3; the other modes keep their own level.
TEST_F(ArchiverTest, SmallDataBlobsUseLevelOneUnderAuto) {
  std::string text;
  for (int i = 0; text.size() < 3 * kSmallBlobMax; ++i)
    text += "line " + std::to_string(i * 7919 % 1000) + " of a small text file\n";
  const size_t sizes[] = {kSmallBlobMax / 4, kSmallBlobMax - 1, kSmallBlobMax, 2 * kSmallBlobMax};
  for (Compression mode : {Compression::kAuto, Compression::kBetter}) {
    const std::string dir = "m" + std::to_string(static_cast<int>(mode));
    for (size_t n : sizes)  // (the mode's name first: each mode's blobs are new)
      WriteFile(root_ / "src" / dir / ("f" + std::to_string(n)),
                dir + text.substr(0, n - dir.size()));
    WriteSession session(*repo_, WriteOptions{.compression = mode});
    BackupResult r = RunBackup(session, Options(std::nullopt, true), false);
    for (size_t n : sizes) {
      const Node f = Find(r.tree, dir + "/f" + std::to_string(n));
      ASSERT_EQ(f.content.size(), 1u) << n;
      const Bytes plain = repo_->LoadBlob(BlobType::kData, f.content[0]);
      ASSERT_EQ(plain.size(), n);
      auto loc = repo_->index().Lookup(BlobType::kData, f.content[0]);
      ASSERT_EQ(loc.size(), 1u);
      const int level = mode == Compression::kBetter ? 7 : n < kSmallBlobMax ? 1 : 3;
      EXPECT_EQ(DataZstdLevel(mode, n), level) << n;
      EXPECT_EQ(loc[0].length, ZstdCompress(plain, level).size() + 32) << n << " level " << level;
      EXPECT_NE(ZstdCompress(plain, 1).size(), ZstdCompress(plain, 3).size()) << n;  // tells
    }
  }
}

TEST_F(ArchiverTest, WithoutSnapshotOnlyTreesAndDataAreStored) {
  WriteFile(root_ / "src/a.txt", "alpha");
  BackupOptions o;
  o.targets = {(root_ / "src").string()};
  o.force = true;
  o.save_snapshot = false;
  BackupResult r = RunBackup(*repo_, o, false);
  EXPECT_TRUE(r.snapshot_id.IsZero());
  EXPECT_TRUE(repo_->ListIds(FileType::kSnapshot).empty());
  Node a = Find(r.tree, "a.txt");  // the trees and the content are stored and indexed
  ASSERT_EQ(a.content.size(), 1u);
  EXPECT_EQ(AsChars(repo_->LoadBlob(BlobType::kData, a.content[0])), "alpha");
}

// restic 0.17's --skip-if-unchanged: no file at all is written when the tree equals the
// parent's; a change, or no parent to compare with, still gives a snapshot.
TEST_F(ArchiverTest, SkipIfUnchangedWritesNothingForTheParentsTree) {
  WriteFile(root_ / "src/a.txt", "alpha");
  WriteFile(root_ / "src/d/b.txt", "beta");
  auto files = [&] {
    size_t n = 0;
    for (FileType t : {FileType::kSnapshot, FileType::kIndex, FileType::kPack})
      n += repo_->ListIds(t).size();
    return n;
  };
  auto backup = [&](std::optional<FileId> parent) {
    BackupOptions o;
    o.targets = {(root_ / "src").string()};
    o.host = "h";
    o.stable_intermediate_dirs = true;  // /tmp's own times do not count
    o.parent = parent;
    o.force = !parent;
    o.skip_if_unchanged = true;
    o.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
    return RunBackup(*repo_, o, false);
  };
  BackupResult first = backup(std::nullopt);  // no parent: written
  EXPECT_FALSE(first.skipped);
  ASSERT_FALSE(first.snapshot_id.IsZero());
  const size_t before = files();

  BackupResult same = backup(first.snapshot_id);
  EXPECT_TRUE(same.skipped);
  EXPECT_TRUE(same.snapshot_id.IsZero());
  EXPECT_EQ(same.tree, first.tree);
  EXPECT_EQ(files(), before);  // no snapshot, pack or index

  WriteFile(root_ / "src/d/b.txt", "beta, longer");
  BackupResult changed = backup(first.snapshot_id);
  EXPECT_FALSE(changed.skipped);
  EXPECT_FALSE(changed.snapshot_id.IsZero());
  EXPECT_NE(changed.tree, first.tree);
  EXPECT_EQ(repo_->ListIds(FileType::kSnapshot).size(), 2u);
}

TEST_F(ArchiverTest, XattrsOfUnchangedFilesAreReusedAndChangesAreSeen) {
  WriteFile(root_ / "src/d/f", "hello");
  WriteFile(root_ / "src/d/g", "world");
  if (!SetXattr(root_ / "src/d/f", "v1")) GTEST_SKIP() << "no user xattrs here";
  ASSERT_TRUE(SetXattr(root_ / "src/d", "dir"));

  BackupResult first = Backup(false);
  ASSERT_EQ(Find(first.tree, "d/f").xattrs.size(), 1u);
  EXPECT_EQ(Find(first.tree, "d/f").xattrs[0].value, std::optional<std::string>("v1"));
  EXPECT_EQ(Find(first.tree, "d").xattrs.at(0).value, std::optional<std::string>("dir"));

  // Unchanged: the same tree as the first backup, nothing read.
  BackupResult second = Backup(true);
  EXPECT_EQ(Src(second), Src(first));
  EXPECT_EQ(second.stats.files_read, 0u);
  EXPECT_EQ(second.stats.files_unmodified, 2u);

  // A changed xattr moves the ctime: the new value is stored, the content is reused.
  ASSERT_TRUE(SetXattr(root_ / "src/d/f", "v2"));
  BackupResult third = Backup(true);
  EXPECT_NE(Src(third), Src(first));
  Node f = Find(third.tree, "d/f");
  ASSERT_EQ(f.xattrs.size(), 1u);
  EXPECT_EQ(f.xattrs[0].value, std::optional<std::string>("v2"));
  EXPECT_EQ(f.content, Find(first.tree, "d/f").content);
  EXPECT_EQ(Src(third), Src(Backup(false))) << "same tree as with every xattr listed";

  // A removed xattr, on the directory this time.
  struct timespec before = Ctime(root_ / "src/d");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(removexattr((root_ / "src/d").c_str(), "user.k"), 0);
  ASSERT_FALSE(SameTs(Ctime(root_ / "src/d"), before));
  BackupResult fourth = Backup(true);
  EXPECT_TRUE(Find(fourth.tree, "d").xattrs.empty());
  EXPECT_EQ(Find(fourth.tree, "d/f").xattrs.size(), 1u);
  EXPECT_EQ(Src(fourth), Src(Backup(false)));
}

TEST_F(ArchiverTest, ReusedParentTreesGiveTheTreesOfAFullBackup) {
  for (int d = 0; d < 3; ++d)
    for (int i = 0; i < 40; ++i)
      WriteFile(root_ / "src" / ("d" + std::to_string(d)) / ("sub" + std::to_string(i % 3)) /
                    ("f" + std::to_string(i)),
                std::string(100 + i, static_cast<char>('a' + d)));
  ASSERT_EQ(symlink("d0/sub0/f0", (root_ / "src/link").c_str()), 0);

  BackupResult full = Backup(false);
  BackupResult warm1 = Backup(true, 1);
  BackupResult warm3 = Backup(true, 3);
  EXPECT_EQ(Src(warm1), Src(full));
  EXPECT_EQ(Src(warm3), Src(full));
  EXPECT_EQ(warm1.stats.files_read, 0u);

  // One changed file: only its directories change, and the result equals a full backup.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteFile(root_ / "src/d1/sub2/f5", "changed");
  BackupResult changed = Backup(true, 2);
  EXPECT_NE(Src(changed), Src(full));
  EXPECT_EQ(changed.stats.files_read, 1u);
  EXPECT_EQ(Src(changed), Src(Backup(false, 2)));
  EXPECT_EQ(Find(changed.tree, "d0").subtree, Find(full.tree, "d0").subtree);
  EXPECT_NE(Find(changed.tree, "d1").subtree, Find(full.tree, "d1").subtree);
}

// `backup lnk/file` with `lnk` a symlink to a directory: the symlinked component above the
// target becomes a directory node holding `file` (as restic stores it); the target itself
// and everything under it stay unresolved (a symlink target is stored as a symlink).
TEST_F(ArchiverTest, SymlinkedDirectoryAboveATargetIsStoredAsTheDirectory) {
  WriteFile(root_ / "src" / "real" / "file", "through the link\n");
  WriteFile(root_ / "src" / "real" / "sub" / "deep", "deeper\n");
  ASSERT_EQ(symlink("real", (root_ / "src" / "lnk").c_str()), 0);
  ASSERT_EQ(symlink("real/sub", (root_ / "src" / "sublink").c_str()), 0);
  BackupOptions o;
  o.targets = {(root_ / "src" / "lnk" / "file").string(),
               (root_ / "src" / "lnk" / "sub").string(),
               (root_ / "src" / "sublink").string()};
  o.host = "h";
  o.jobs = 2;
  BackupResult r = RunBackup(*repo_, o, false);
  EXPECT_FALSE(r.incomplete);
  EXPECT_EQ(r.stats.total_files, 2u);
  Node lnk = Find(r.tree, "lnk");
  EXPECT_EQ(lnk.type, NodeType::kDir);
  Node file = Find(r.tree, "lnk/file");
  EXPECT_EQ(file.type, NodeType::kFile);
  EXPECT_EQ(file.size, 17u);
  EXPECT_EQ(Find(r.tree, "lnk/sub/deep").type, NodeType::kFile);
  Node sublink = Find(r.tree, "sublink");  // a target: kept as the link it is
  EXPECT_EQ(sublink.type, NodeType::kSymlink);
  EXPECT_EQ(sublink.linktarget, "real/sub");
}

// A file written while it is read is read again; a file that changes during both reads is
// stored as read and reported (incomplete snapshot), never silently.
TEST_F(ArchiverTest, FileChangedWhileReadIsReadAgainOrReported) {
  const fs::path f = root_ / "src" / "growing.log";
  WriteFile(f, std::string(300000, 'a'));
  WriteFile(root_ / "src" / "quiet.txt", "quiet\n");
  auto backup = [&](int changes) {
    BackupOptions o;
    o.targets = {(root_ / "src").string()};
    o.host = "h";
    o.jobs = 2;
    o.force = true;
    std::vector<std::string> warnings;
    o.warn = [&](const std::string& w) { warnings.push_back(w); };
    std::atomic<int> reads{0};
    o.after_read = [&](const std::string& path, int attempt) {
      if (path != f.string()) return;
      reads++;
      if (attempt < changes) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new mtime
        std::ofstream(f, std::ios::app) << std::string(1000, char('b' + attempt));
      }
    };
    BackupResult r = RunBackup(*repo_, o, false);
    return std::make_tuple(r, warnings, reads.load());
  };
  // Changed during the first read only: read twice, stored whole, no warning.
  auto [r1, w1, n1] = backup(1);
  EXPECT_EQ(n1, 2);
  EXPECT_FALSE(r1.incomplete);
  EXPECT_TRUE(w1.empty()) << w1[0];
  Node n = Find(r1.tree, "growing.log");
  EXPECT_EQ(n.size, 301000u);
  // Changed during both reads: stored as read (the second read), reported.
  auto [r2, w2, n2] = backup(2);
  EXPECT_EQ(n2, 2);
  EXPECT_TRUE(r2.incomplete);
  ASSERT_EQ(w2.size(), 1u);
  EXPECT_NE(w2[0].find(f.string()), std::string::npos) << w2[0];
  EXPECT_NE(w2[0].find("changed while it was read"), std::string::npos) << w2[0];
  EXPECT_EQ(Find(r2.tree, "growing.log").size, 302000u);
  // Unchanged: read once.
  auto [r3, w3, n3] = backup(0);
  EXPECT_EQ(n3, 1);
  EXPECT_FALSE(r3.incomplete);
}

// A file's first read is checked against the walk's lstat, not an fstat of its own, and
// stops at the size the walk saw: a file that grew or shrank between the walk and the read
// (here: the walk handed a stale stat) is read again and stored whole, without a warning.
TEST_F(ArchiverTest, FileChangedBetweenTheWalkAndItsReadIsReadAgainWhole) {
  const fs::path grew = root_ / "src" / "grew.txt", shrank = root_ / "src" / "shrank.txt";
  const fs::path same = root_ / "src" / "same.txt", moved = root_ / "src" / "moved.txt";
  WriteFile(moved, std::string(6000, 'm'));
  WriteFile(grew, std::string(5000, 'g'));
  WriteFile(shrank, std::string(9000, 's'));
  WriteFile(same, std::string(7000, 'x'));
  std::map<std::string, struct stat> stale;
  for (const fs::path& p : {grew, shrank}) {
    struct stat st {};
    ASSERT_EQ(lstat(p.c_str(), &st), 0);
    stale[p.string()] = st;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a new mtime
  WriteFile(grew, std::string(5000, 'g') + std::string(3000, 'G'));
  WriteFile(shrank, std::string(2000, 's'));
  // moved.txt: the walk saw another inode of the same size and times (a file renamed over).
  ASSERT_EQ(lstat(moved.c_str(), &stale[moved.string()]), 0);
  stale[moved.string()].st_ino ^= 1;
  BackupOptions o = Options(std::nullopt, true);
  o.known_stat = [&](const std::string& path) -> const struct stat* {
    auto it = stale.find(path);
    return it == stale.end() ? nullptr : &it->second;
  };
  std::map<std::string, int> reads;
  std::mutex mu;
  o.after_read = [&](const std::string& path, int) {
    std::lock_guard<std::mutex> l(mu);
    reads[fs::path(path).filename().string()]++;
  };
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  BackupResult r = RunBackup(*repo_, o, false);
  EXPECT_FALSE(r.incomplete);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(reads["grew.txt"], 2);
  EXPECT_EQ(reads["shrank.txt"], 2);
  EXPECT_EQ(reads["moved.txt"], 2);
  EXPECT_EQ(reads["same.txt"], 1);
  for (const auto& [name, body] :
       std::map<std::string, std::string>{{"grew.txt", std::string(5000, 'g') + std::string(3000, 'G')},
                                          {"shrank.txt", std::string(2000, 's')},
                                          {"same.txt", std::string(7000, 'x')},
                                          {"moved.txt", std::string(6000, 'm')}}) {
    ASSERT_EQ(Find(r.tree, name).size, body.size()) << name;
    EXPECT_EQ(Content(r.tree, name), body) << name;
  }
}

// A file whose stat says 0 bytes is read to its end: /proc's files (and some FUSE file
// systems') have content their size does not tell, and hand it out a page at a time.
TEST_F(ArchiverTest, FileOfSizeZeroIsReadToItsEnd) {
  auto read_all = [] {
    std::ifstream in("/proc/kallsyms", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  struct stat st {};
  if (lstat("/proc/kallsyms", &st) != 0 || st.st_size != 0)
    GTEST_SKIP() << "no /proc/kallsyms of size 0 on this kernel";
  const std::string want = read_all();
  if (want.size() < (size_t{64} << 10))
    GTEST_SKIP() << "/proc/kallsyms holds " << want.size() << " bytes: one read, nothing to test";
  ASSERT_EQ(read_all(), want) << "/proc/kallsyms changed between two reads";
  BackupOptions o = Options(std::nullopt, true);
  o.targets = {"/proc/kallsyms"};
  BackupResult r = RunBackup(*repo_, o, false);
  EXPECT_FALSE(r.incomplete);
  Node proc;
  for (Node& n : repo_->LoadTree(r.tree))
    if (n.name == "proc") proc = n;
  ASSERT_TRUE(proc.subtree);
  std::string got;
  for (Node& n : repo_->LoadTree(*proc.subtree))
    if (n.name == "kallsyms") got = Content(n);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
}

// Small files are stored by one worker job per batch: each file still gets its own
// content, in name order around subdirectories and a large file, and a file that cannot
// be read is reported alone (the rest of its batch is stored).
TEST_F(ArchiverTest, SmallFilesStoredInBatchesKeepTheirOwnResults) {
  const fs::path src = root_ / "src";
  std::map<std::string, std::string> want;  // path below src -> content
  for (int i = 0; i < 90; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f%03d", i);
    std::string body(static_cast<size_t>((i * 977) % 5000 + 1), char('a' + i % 26));
    body += name;
    WriteFile(src / name, body);
    want[name] = body;
  }
  std::string big(200000, 'z');  // above the batch limit: a job of its own
  WriteFile(src / "f035big", big);
  want["f035big"] = big;
  for (const char* sub : {"f040dir/x", "f040dir/y", "f080dir/deeper/z"}) {
    WriteFile(src / sub, std::string("sub ") + sub);
    want[sub] = std::string("sub ") + sub;
  }
  const std::string gone = (src / "f011").string();
  want.erase("f011");
  BackupOptions o;
  o.targets = {src.string()};
  o.host = "h";
  o.jobs = 2;
  o.force = true;
  // f010 and f011 share a batch, stored in order: f011 disappears before its turn.
  BackupResult r = BackupLosing(o, src / "f010", gone);
  for (const auto& [rel, body] : want) {
    ASSERT_EQ(Find(r.tree, rel).size, body.size()) << rel;
    EXPECT_EQ(Content(r.tree, rel), body) << rel;
  }
  std::vector<std::string> names;
  for (const Node& n : repo_->LoadTree(Src(r))) names.push_back(n.name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::count(names.begin(), names.end(), "f011"), 0);
  EXPECT_EQ(names.size(), 90u - 1 + 1 + 2);  // files, f035big, the two directories
}

// A folder's walk leaves two subfolders started and not finished (the workers store one
// folder's files while the next is walked): at any job count the snapshot holds the same
// trees, each folder's tree is saved once and after those of its subfolders, the counts
// are whole, and a file that fails in one folder fails that file only.
TEST_F(ArchiverTest, FoldersLeftOpenGiveTheSameTreesAtAnyJobCount) {
  const fs::path src = root_ / "src";
  uint64_t files = 0;
  size_t folders = 1;  // src
  for (int a = 0; a < 5; ++a) {
    folders++;
    for (int b = 0; b < 6; ++b) {
      const fs::path d = src / ("a" + std::to_string(a)) / ("b" + std::to_string(b));
      folders++;
      for (int f = 0; f < 7; ++f, ++files)
        WriteFile(d / ("f" + std::to_string(f)), std::string(100 + 37 * f + b, char('a' + a)));
      if (b % 2 == 0) {
        WriteFile(d / "c" / "deep", "deep " + d.string());
        files++;
        folders++;
      }
    }
  }
  std::optional<BlobId> first;
  for (int jobs : {1, 2, 4}) {
    BackupOptions o = Options(std::nullopt, true, jobs);
    std::mutex mu;
    std::vector<std::string> saved;  // below src, in the order their trees were saved
    o.tree_saved = [&](const std::string& path, const BlobId&) {
      std::lock_guard<std::mutex> l(mu);
      if (path.rfind(src.string(), 0) == 0) saved.push_back(path);
    };
    BackupResult r = RunBackup(*repo_, o, false);
    EXPECT_FALSE(r.incomplete) << jobs;
    EXPECT_EQ(r.stats.files_new, files) << jobs;
    ASSERT_EQ(saved.size(), folders) << jobs;
    std::map<std::string, size_t> at;
    for (size_t i = 0; i < saved.size(); ++i) {
      EXPECT_TRUE(at.emplace(saved[i], i).second) << saved[i];
    }
    for (const auto& [path, i] : at) {
      const std::string up = fs::path(path).parent_path().string();
      if (auto it = at.find(up); it != at.end()) {
        EXPECT_LT(i, it->second) << path << " saved after its folder " << up << " (jobs " << jobs
                                 << ")";
      }
    }
    if (!first) {
      first = Src(r);
      // Every file in its own folder's tree with its own size (the folders differ in both).
      for (int a = 0; a < 5; ++a)
        for (int b = 0; b < 6; ++b)
          for (int f = 0; f < 7; ++f) {
            const std::string rel = "a" + std::to_string(a) + "/b" + std::to_string(b) + "/f" +
                                    std::to_string(f);
            EXPECT_EQ(Find(r.tree, rel).size, static_cast<uint64_t>(100 + 37 * f + b)) << rel;
          }
    } else {
      EXPECT_EQ(Src(r), *first) << "jobs " << jobs;
    }
  }
  // f4 of a2/b3 shares its folder's batch with f3, read first: it is gone by its turn.
  const std::string gone = (src / "a2" / "b3" / "f4").string();
  BackupResult r = BackupLosing(Options(std::nullopt, true, 2), src / "a2" / "b3" / "f3", gone);
  std::vector<std::string> names;
  for (const Node& n : repo_->LoadTree(*Find(r.tree, "a2/b3").subtree)) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"f0", "f1", "f2", "f3", "f5", "f6"}));
  EXPECT_EQ(Find(r.tree, "a4/b5/f6").size, 100u + 37 * 6 + 5);
  EXPECT_EQ(Find(r.tree, "a4/b4/c/deep").size, ("deep " + (src / "a4" / "b4").string()).size());
}

// The folder state (folder_state.h): a backup that takes unchanged folders' trees from it
// stores exactly the snapshot a backup without it stores against the same parent, with
// the same counts, through every kind of change; only the changed folders are listed.
TEST_F(ArchiverTest, FolderStateGivesTheTreesOfABackupWithoutIt) {
  const fs::path src = root_ / "src";
  for (int i = 0; i < 5; ++i) {
    WriteFile(src / "a" / ("f" + std::to_string(i)), "file a" + std::to_string(i));
    WriteFile(src / "a/deep/deeper" / ("g" + std::to_string(i)), "deep " + std::to_string(i));
    WriteFile(src / "b" / ("h" + std::to_string(i)), "b " + std::to_string(i));
  }
  WriteFile(src / "top.txt", "top");
  fs::create_directories(src / "empty");
  fs::create_symlink("a/f1", src / "link");
  const fs::path state = root_ / "state";
  auto run = [&](std::optional<FileId> parent, bool with_state) {
    BackupOptions o = Options(parent, !parent);
    if (with_state) o.folder_state_dir = state.string();
    return RunBackup(*repo_, o, false);
  };
  BackupResult first = run(std::nullopt, true);
  EXPECT_FALSE(first.folder_state_used);
  EXPECT_EQ(first.dirs_reused, 0u);
  ASSERT_EQ(std::distance(fs::directory_iterator(state), fs::directory_iterator()), 1);
  FileId parent = first.snapshot_id;
  // Each step changes the source, then backs it up against `parent` without and with the
  // state; `reused` is how many folders (src included) keep their tree from the state.
  // same_counts false: a moved folder keeps its tree, and its files count as unmodified
  // where the path without a state (restic's rule) reads them again as new.
  auto step = [&](const std::string& what, uint64_t reused, bool same_counts = true) {
    SCOPED_TRACE(what);
    BackupResult plain = run(parent, false);
    BackupResult fast = run(parent, true);
    EXPECT_FALSE(plain.folder_state_used);
    EXPECT_TRUE(fast.folder_state_used);
    EXPECT_EQ(Src(fast), Src(plain));
    const BackupStats& a = plain.stats;
    const BackupStats& b = fast.stats;
    if (!same_counts) {
      EXPECT_GT(a.files_new, b.files_new);
      EXPECT_EQ(a.files_new + a.files_unmodified, b.files_new + b.files_unmodified);
      EXPECT_EQ(a.total_bytes, b.total_bytes);
    } else {
      EXPECT_EQ(std::tie(a.files_new, a.files_changed, a.files_unmodified, a.dirs_new,
                       a.dirs_changed, a.dirs_unmodified, a.total_files, a.total_bytes, a.errors),
              std::tie(b.files_new, b.files_changed, b.files_unmodified, b.dirs_new,
                       b.dirs_changed, b.dirs_unmodified, b.total_files, b.total_bytes, b.errors));
    }
    EXPECT_EQ(fast.dirs_reused, reused);
    parent = fast.snapshot_id;
  };
  step("unchanged", 6);  // src, a, deep, deeper, b, empty
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteFile(src / "a/deep/deeper/g2", "DEEP 2");  // same size, written in place
  // deeper relisted; deep, a and src take their recorded entries but store new trees
  step("a file deep down rewritten", 2);
  WriteFile(src / "b/new", "new file");
  step("a file added", 4);  // b relisted, src (b's times) too
  fs::remove(src / "a/f3");
  step("a file removed", 4);  // a and src
  fs::permissions(src / "b/h1", fs::perms::owner_read);
  step("a mode changed", 4);
  fs::rename(src / "a/deep", src / "a/deep2");
  step("a folder renamed", 4, false);  // a and src relisted; deep2, deeper kept
  ASSERT_TRUE(SetXattr(src / "b", "v"));
  step("an xattr on a folder", 5);  // src relisted (b's ctime); b's own entries kept
  fs::remove_all(src / "empty");
  step("a folder removed", 4);
  step("unchanged again", 5);
  // Against another parent than the one it was written with, the state is not used.
  BackupResult other = run(first.snapshot_id, true);
  EXPECT_FALSE(other.folder_state_used);
  EXPECT_EQ(other.dirs_reused, 0u);
}

// The state is a cache that must never be trusted blindly: a state sealed by another
// repository's key, or one written before the index was rewritten, is not used.
TEST_F(ArchiverTest, FolderStateOnlyWhenItIsThisRepositorysAndItsIndexRemains) {
  WriteFile(root_ / "src/a/x", "x");
  WriteFile(root_ / "src/b/y", "y");
  const fs::path state = root_ / "state";
  auto run = [&](std::optional<FileId> parent) {
    BackupOptions o = Options(parent, !parent);
    o.folder_state_dir = state.string();
    return RunBackup(*repo_, o, false);
  };
  BackupResult first = run(std::nullopt);
  BackupResult second = run(first.snapshot_id);
  EXPECT_TRUE(second.folder_state_used);
  EXPECT_GT(second.dirs_reused, 0u);
  const fs::path file = fs::directory_iterator(state)->path();
  // Another repository's seal over the same plaintext.
  auto plain = LoadFolderState(*repo_, file.string());
  ASSERT_TRUE(plain);
  auto other_be = std::make_shared<MemBackend>();
  Repository::Init(*other_be, "pw", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto other = haven::testing::TestRepository::Open(other_be, "pw", 2);
  SaveFolderState(*other, file.string(), *plain);
  BackupResult forged = run(second.snapshot_id);
  EXPECT_FALSE(forged.folder_state_used);
  EXPECT_EQ(forged.dirs_reused, 0u);
  // An index file it recorded is gone (prune and repair rewrite the index).
  BackupResult third = run(forged.snapshot_id);
  EXPECT_TRUE(third.folder_state_used);
  auto now = LoadFolderState(*repo_, file.string());
  ASSERT_TRUE(now);
  FileId gone;
  gone.bytes.fill(0xee);
  now->index_files.push_back(gone);
  std::sort(now->index_files.begin(), now->index_files.end());
  SaveFolderState(*repo_, file.string(), *now);
  BackupResult after_rewrite = run(third.snapshot_id);
  EXPECT_FALSE(after_rewrite.folder_state_used);
  EXPECT_EQ(Src(after_rewrite), Src(third));
}

// With the state, a backup in which nothing changed takes every folder's tree from it,
// the directories above the target included: it reads no index file and no tree of the
// parent (the CLI's backup defers its index for this). Once a file changes, the index is
// read and the snapshot is the one a backup without the state stores.
TEST_F(ArchiverTest, FolderStateUnchangedBackupReadsNoIndex) {
  const fs::path src = root_ / "src";
  WriteFile(src / "a/x", "x");
  WriteFile(src / "a/deep/y", "y");
  WriteFile(src / "top", "t");
  const fs::path state = root_ / "state";
  BackupOptions o = Options(std::nullopt, true);
  o.folder_state_dir = state.string();
  BackupResult last = RunBackup(*repo_, o, false);
  // Each run opens the repository as `haven backup` does, the index deferred.
  struct Run {
    BackupResult r;
    bool index_read;
  };
  auto run = [&](const FileId& parent, bool with_state) {
    auto opened = Repository::Open(be_, "pw", 2);
    auto lazy = IndexedRepository::Load(*opened, IndexLoad::kOnFirstUse);
    EXPECT_FALSE(lazy->index_loaded());
    WriteSession session(*lazy);
    BackupOptions b = Options(parent, false);
    if (with_state) b.folder_state_dir = state.string();
    BackupResult r = RunBackup(session, b, false);
    return Run{r, lazy->index_loaded()};
  };
  // /tmp (a child of /, above the target) changes whenever another test writes there; a
  // run during which its stat moved, or moved since the run that wrote the state, has a
  // new key for / and reads the parent's root: such a pair of runs is tried again.
  auto tmp_stat = [] {
    struct stat st {};
    EXPECT_EQ(lstat("/tmp", &st), 0);
    return std::tuple(st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
                      st.st_ctim.tv_nsec, st.st_nlink);
  };
  bool quiet_pair = false;
  for (int attempt = 0; attempt < 100 && !quiet_pair; ++attempt) {
    const auto before = tmp_stat();
    Run a = run(last.snapshot_id, true);
    Run b = run(a.r.snapshot_id, true);
    const bool quiet = tmp_stat() == before;
    EXPECT_EQ(b.r.dirs_reused, 3u);  // src, a, deep (the folders above are not counted)
    EXPECT_EQ(b.r.stats.files_unmodified, 3u);
    EXPECT_EQ(b.r.stats.files_new + b.r.stats.files_changed, 0u);
    last = b.r;
    if (!quiet) continue;
    quiet_pair = true;
    EXPECT_FALSE(b.index_read);
    EXPECT_EQ(b.r.tree, a.r.tree);
  }
  ASSERT_TRUE(quiet_pair) << "/tmp changed during each of 100 pairs of backups";
  // A file rewritten: the index is read (its folder's parent tree, the new blob), and the
  // snapshot is the one a backup without the state stores against the same parent.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteFile(src / "a/deep/y", "Y");
  Run plain = run(last.snapshot_id, false);
  Run fast = run(last.snapshot_id, true);
  EXPECT_TRUE(fast.index_read);
  repo_->LoadIndex();  // (the trees the runs stored)
  EXPECT_EQ(Src(fast.r), Src(plain.r));
  EXPECT_EQ(fast.r.stats.files_changed, 1u);
  EXPECT_EQ(fast.r.dirs_reused, 0u);  // deep relisted; a and src store new trees
}

}  // namespace
}  // namespace haven
