// Capture tests: determinism, the secret gate, scan-version gating (counted reads),
// package discovery with fake managers, apply round trip, packages diff, the profile.
// Secrets are built at run time from random characters; none is real.
#include "capture/capture.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <random>

#include "backend/forwarding_backend.h"
#include "backend/mem_backend.h"
#include "capture/apply.h"
#include "archiver/folder_state.h"
#include "capture/fs.h"
#include "capture/package_diff.h"
#include "capture/packages.h"
#include "capture/profile.h"
#include "core/error.h"
#include "core/fd.h"
#include "core/mutex.h"
#include "repo/test_repository.h"
#include "repo/tree_path.h"
#include "repo/test_tree_builder.h"

namespace haven::capture {
namespace {

namespace fs = std::filesystem;
const crypto::ScryptParams kFastScrypt{1024, 8, 1};

std::string RandomToken(uint32_t seed) {
  static const std::string a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::mt19937 rng(seed);
  std::string s = "ghp_";
  for (int i = 0; i < 36; ++i) s.push_back(a[rng() % a.size()]);
  return s;
}

void WriteFile(const fs::path& p, const std::string& s, mode_t mode = 0644) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
  chmod(p.c_str(), mode);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/haven-capture-test.XXXXXX";
    root_ = mkdtemp(tmpl);
    home_ = root_ / "home";
    fs::create_directories(home_);
    be_ = std::make_shared<MemBackend>();
    Repository::Init(*be_, "pw", 2, kFastScrypt, 1);
    repo_ = haven::testing::TestRepository::Open(be_, "pw", 2);
    repo_->LoadIndex();
  }
  void TearDown() override { fs::remove_all(root_); }

  Profile MakeProfile(const std::string& extra = "") {
    return Profile::Parse("[track]\npaths = [\"~/.config\", \"~/.bashrc\"]\n[packages]\nmanagers = []\n" +
                              extra,
                          home_.string(), "test.toml");
  }
  // The options of the next capture of `p` (each one newer than the last).
  CaptureOptions Options(const Profile& p, int jobs, const std::string& tag = "") {
    CaptureOptions o;
    o.profile = p;
    o.home = home_.string();
    o.host = "testhost";
    o.jobs = jobs;
    o.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
    o.scan_tag_override = tag;
    o.state_dir = state_dir_;
    return o;
  }
  CaptureResult Capture(const Profile& p, int jobs, const std::string& tag = "",
                        bool skip_if_unchanged = false) {
    CaptureOptions o = Options(p, jobs, tag);
    o.skip_if_unchanged = skip_if_unchanged;
    return RunCapture(*repo_, scanner(), o);
  }
  static const Scanner& scanner() {
    // (the rule set compiled once for every test process: Scanner's cache)
    static Scanner s((std::filesystem::temp_directory_path() / "haven-test-scanner-cache").string());
    return s;
  }
  void MakeTree(int files_per_dir) {
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < files_per_dir; ++i)
        WriteFile(home_ / ".config" / ("app" + std::to_string(d)) / ("f" + std::to_string(i)),
                  std::string(1000, static_cast<char>('a' + (i % 26))) + std::to_string(i) + "\n");
    WriteFile(home_ / ".bashrc", "alias ll='ls -l'\n");
  }

  fs::path root_, home_;
  std::string state_dir_;  // CaptureOptions::state_dir of Capture()
  int runs_ = 0;
  std::shared_ptr<MemBackend> be_;
  std::unique_ptr<haven::testing::TestRepository> repo_;
};

// The home's tree is compared: the root tree also holds /tmp's metadata, which other
// processes change at any time (the captured home itself does not change here).
TEST_F(CaptureTest, SameTreeSameHomeTreeForAnyJobCount) {
  MakeTree(50);
  auto p = MakeProfile();
  auto a = Capture(p, 1), b = Capture(p, 4);
  ASSERT_TRUE(a.backup && b.backup && a.home_tree && b.home_tree);
  EXPECT_EQ(*a.home_tree, *b.home_tree);
  // A third capture with a different parent trust (another version) still gives the tree.
  auto c = Capture(p, 3, "haven-scan:0/00000000");
  ASSERT_TRUE(c.home_tree);
  EXPECT_EQ(*a.home_tree, *c.home_tree);
  EXPECT_EQ(c.files_read, a.files_read);
}

TEST_F(CaptureTest, BlockedCaptureStoresNothingAndNamesTheFirstFile) {
  MakeTree(5);
  WriteFile(home_ / ".config" / "zz" / "token", "t = " + RandomToken(1) + "\n");
  WriteFile(home_ / ".config" / "app1" / "late", "x\npassword: " + std::string("Q7v9xK2mPz4LwR8tYb3N") + "\n");
  WriteFile(home_ / ".config" / "app0" / "creds", "gh " + RandomToken(2) + "\n");
  auto p = MakeProfile();
  size_t objects_before = 0;
  be_->List(FileType::kPack, [&](const FileInfo&) { objects_before++; });
  std::vector<std::string> first;
  for (int jobs : {1, 2, 8, 1}) {
    auto r = Capture(p, jobs);
    ASSERT_TRUE(r.blocked);
    EXPECT_FALSE(r.backup);
    std::vector<std::string> lines;
    for (const auto& f : r.findings) lines.push_back(f.Text());
    if (first.empty()) first = lines;
    EXPECT_EQ(lines, first) << "jobs " << jobs;
    ASSERT_EQ(r.findings.size(), 3u);
    EXPECT_EQ(r.findings.front().path, (home_ / ".config/app0/creds").string());
  }
  size_t packs = 0, snaps = 0;
  be_->List(FileType::kPack, [&](const FileInfo&) { packs++; });
  be_->List(FileType::kSnapshot, [&](const FileInfo&) { snaps++; });
  EXPECT_EQ(packs, objects_before);
  EXPECT_EQ(snaps, 0u);
}

TEST_F(CaptureTest, WarnModeStoresAndReports) {
  MakeTree(2);
  WriteFile(home_ / ".bashrc", "export GH=" + RandomToken(3) + "\n");
  auto r = Capture(MakeProfile("[secrets]\nmode = \"warn\"\n"), 2);
  EXPECT_FALSE(r.blocked);
  ASSERT_TRUE(r.backup);
  EXPECT_EQ(r.findings.size(), 1u);
}

TEST_F(CaptureTest, AllowListsLetACaptureThrough) {
  MakeTree(2);
  WriteFile(home_ / ".bashrc", "export GH=" + RandomToken(4) + "\n");
  auto blocked = Capture(MakeProfile(), 2);
  ASSERT_TRUE(blocked.blocked);
  std::string fp = blocked.findings[0].fingerprint;
  EXPECT_FALSE(Capture(MakeProfile("[secrets]\nallow_fingerprints = [\"" + fp + "\"]\n"), 2).blocked);
  EXPECT_FALSE(Capture(MakeProfile("[secrets]\nallow_rules = [\"github-token\"]\n"), 2).blocked);
  EXPECT_FALSE(Capture(MakeProfile("[secrets]\nallow_paths = [\"~/.bashrc\"]\n"), 2).blocked);
}

TEST_F(CaptureTest, ScanVersionGatesReuse) {
  MakeTree(20);
  const uint64_t n = 41;
  auto p = MakeProfile();
  auto cold = Capture(p, 2);
  EXPECT_EQ(cold.files, n);
  EXPECT_EQ(cold.files_read, n);
  EXPECT_FALSE(cold.parent);
  auto warm = Capture(p, 2);
  EXPECT_TRUE(warm.parent_trusted);
  EXPECT_EQ(warm.files_read, 0u) << "an unchanged tree reads no file contents";
  EXPECT_EQ(warm.backup->tree, cold.backup->tree);
  // A parent recorded with another scan version is not trusted: every file is re-read.
  Capture(p, 2, "haven-scan:999/00000000");
  auto after_other = Capture(p, 2);
  EXPECT_TRUE(after_other.parent);
  EXPECT_FALSE(after_other.parent_trusted);
  EXPECT_EQ(after_other.files_read, n);
  EXPECT_EQ(after_other.files_scanned, n);
  // A changed allowlist is another scan policy: no trust either.
  auto other_policy = Capture(MakeProfile("[secrets]\nallow_rules = [\"jwt\"]\n"), 2);
  EXPECT_FALSE(other_policy.parent_trusted);
  EXPECT_EQ(other_policy.files_read, n);
  // One changed file: read once (scanned bytes are what the archiver stores).
  Capture(p, 2);
  WriteFile(home_ / ".config" / "app0" / "f3", "changed\n");
  auto one = Capture(p, 2);
  EXPECT_EQ(one.files_read, 1u);
}

// --skip-if-unchanged: an unchanged tracked set against a trusted parent writes nothing; a
// parent of another scan version is not compared (the new scan tag must be recorded), and a
// change is stored.
TEST_F(CaptureTest, SkipIfUnchangedWritesNoSnapshotForATrustedEqualTree) {
  MakeTree(5);
  auto p = MakeProfile();
  auto first = Capture(p, 2, "", true);  // no parent: written
  ASSERT_TRUE(first.backup);
  EXPECT_FALSE(first.backup->skipped);
  auto snapshots = [&] { return repo_->ListIds(FileType::kSnapshot).size(); };
  EXPECT_EQ(snapshots(), 1u);

  auto same = Capture(p, 2, "", true);
  ASSERT_TRUE(same.backup);
  EXPECT_TRUE(same.parent_trusted);
  EXPECT_TRUE(same.backup->skipped);
  EXPECT_TRUE(same.backup->snapshot_id.IsZero());
  EXPECT_EQ(same.backup->tree, first.backup->tree);
  EXPECT_EQ(same.home_tree, first.home_tree);
  EXPECT_EQ(snapshots(), 1u);
  EXPECT_FALSE(Capture(p, 2).backup->skipped) << "without the option a snapshot is written";
  EXPECT_EQ(snapshots(), 2u);

  auto other_version = Capture(p, 2, "haven-scan:0/00000000", true);
  EXPECT_FALSE(other_version.parent_trusted);
  EXPECT_FALSE(other_version.backup->skipped);
  EXPECT_EQ(snapshots(), 3u);

  Capture(p, 2);  // a parent of this scan version again
  WriteFile(home_ / ".config" / "app1" / "f2", "changed\n");
  auto changed = Capture(p, 2, "", true);
  EXPECT_TRUE(changed.parent_trusted);
  EXPECT_FALSE(changed.backup->skipped);
  EXPECT_NE(changed.backup->tree, first.backup->tree);
  EXPECT_EQ(snapshots(), 5u);
}

// Counts reads of pack ranges (each a blob), by pack, offset and length.
class CountingBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  Bytes Load(const Handle& h, uint64_t offset, uint64_t length) override {
    Note(h, offset, length);
    return inner_->Load(h, offset, length);
  }
  void LoadInto(const Handle& h, uint64_t offset, std::span<uint8_t> out) override {
    Note(h, offset, out.size());
    inner_->LoadInto(h, offset, out);
  }
  // The most times one blob of a pack was read.
  int MaxReadsOfOneBlob() {
    MutexLock lock(mu_);
    int most = 0;
    for (const auto& [key, n] : reads_) most = std::max(most, n);
    return most;
  }
  size_t BlobsRead() {
    MutexLock lock(mu_);
    return reads_.size();
  }

 private:
  void Note(const Handle& h, uint64_t offset, uint64_t length) {
    if (h.type != FileType::kPack) return;
    MutexLock lock(mu_);
    reads_[h.name + "@" + std::to_string(offset) + "+" + std::to_string(length)]++;
  }
  Mutex mu_;
  std::map<std::string, int> reads_ GUARDED_BY(mu_);
};

// The archiver takes the parent trees the planning walk loaded: each is read (and
// decoded) once per capture, and a changed file is still found, scanned and stored, with
// the tree a capture without a trusted parent makes.
TEST_F(CaptureTest, ParentTreesAreReadOnceAndChangesStillFound) {
  MakeTree(20);
  auto p = MakeProfile();
  Capture(p, 2);
  auto counting = std::make_shared<CountingBackend>(be_);
  auto repo = haven::testing::TestRepository::Open(counting, "pw", 2);
  repo->LoadIndex();
  auto capture = [&](const std::string& tag = "") {
    return RunCapture(*repo, scanner(), Options(p, 2, tag));
  };
  auto same = capture();
  EXPECT_TRUE(same.parent_trusted);
  EXPECT_EQ(same.files_read, 0u);
  EXPECT_GE(counting->BlobsRead(), 4u) << "the parent's trees down to the tracked files";
  EXPECT_EQ(counting->MaxReadsOfOneBlob(), 1) << "a parent tree was read twice";

  WriteFile(home_ / ".config" / "app1" / "f7", "a longer, changed f7\n");
  auto changed = capture();
  EXPECT_TRUE(changed.parent_trusted);
  EXPECT_EQ(changed.files_scanned, 1u);
  EXPECT_EQ(changed.files_read, 1u);
  ASSERT_TRUE(changed.home_tree && same.home_tree);
  EXPECT_NE(*changed.home_tree, *same.home_tree);
  auto untrusted = capture("haven-scan:0/00000000");
  EXPECT_FALSE(untrusted.parent_trusted);
  ASSERT_TRUE(untrusted.home_tree);
  EXPECT_EQ(*untrusted.home_tree, *changed.home_tree);
}

TEST_F(CaptureTest, UnrelatedChangesBesideTheTrackedSetKeepTheTree) {
  MakeTree(5);
  auto p = MakeProfile();
  auto first = Capture(p, 2);
  // Files created beside the tracked paths change the mtime of the home, of its parent
  // and of the tracked paths' other ancestors; none of them is tracked.
  WriteFile(home_ / ".bash_history", "ls\n");
  WriteFile(root_ / "elsewhere", "x");
  fs::create_directories(home_ / ".cache" / "tool");
  struct timespec old_times[2] = {{1, 0}, {1, 0}};
  utimensat(AT_FDCWD, home_.c_str(), old_times, 0);
  auto second = Capture(p, 2);
  EXPECT_EQ(second.backup->tree, first.backup->tree);
  EXPECT_EQ(second.files_read, 0u);
}

TEST_F(CaptureTest, VerifyContentRereadsWithoutStoring) {
  MakeTree(10);
  auto p = MakeProfile();
  Capture(p, 2);
  uint64_t added = repo_->stats().data_added.load();
  CaptureOptions o;
  o.profile = p;
  o.home = home_.string();
  o.host = "testhost";
  o.jobs = 2;
  o.verify_content = true;
  auto r = RunCapture(*repo_, scanner(), o);
  EXPECT_EQ(r.files_verified, 21u);
  EXPECT_EQ(r.verify_mismatches, 0u);
  EXPECT_EQ(r.files_scanned, 0u);
  EXPECT_EQ(r.files_read, 21u);
  EXPECT_EQ(repo_->stats().data_added.load(), added) << "no new data for unchanged files";
}

// --verify-content's mismatch path: a trusted parent whose node has the file's metadata
// but other content (a change that kept size, mtime and ctime) is found, warned about,
// scanned and stored again; the next verification finds nothing.
TEST_F(CaptureTest, VerifyContentFindsAndStoresAMismatch) {
  MakeTree(3);
  const std::string note = (home_ / ".config" / "app0" / "note").string();
  WriteFile(note, "plain text\n");
  auto p = MakeProfile();
  Capture(p, 2);
  BackupOptions bo;
  bo.targets = {(home_ / ".config").string(), (home_ / ".bashrc").string()};
  bo.tags = {kCaptureTag, ScanTag(p), kHomeTagPrefix + home_.string()};
  bo.host = "testhost";
  bo.force = true;
  bo.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
  bo.stable_intermediate_dirs = true;
  bo.content_for = [&](const std::string& path,
                       const struct stat&) -> std::shared_ptr<const std::string> {
    if (path == note) return std::make_shared<const std::string>("plain tex!\n");  // same size
    return std::make_shared<const std::string>(ReadFile(path));
  };
  RunBackup(*repo_, bo, false);

  auto verify = [&] {
    CaptureOptions o;
    o.profile = p;
    o.home = home_.string();
    o.host = "testhost";
    o.jobs = 2;
    o.verify_content = true;
    o.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
    std::vector<std::string> warnings;
    o.warn = [&](const std::string& w) { warnings.push_back(w); };
    auto r = RunCapture(*repo_, scanner(), o);
    return std::make_pair(r, warnings);
  };
  auto [r, warnings] = verify();
  EXPECT_TRUE(r.parent_trusted);
  EXPECT_EQ(r.files_verified, 8u);
  EXPECT_EQ(r.verify_mismatches, 1u);
  EXPECT_EQ(r.files_scanned, 1u);
  ASSERT_TRUE(r.backup);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "verify-content: " + note + " changed without a metadata change; stored again");
  auto [again, w2] = verify();
  EXPECT_EQ(again.verify_mismatches, 0u) << "the mismatching file was stored with its real bytes";
  EXPECT_TRUE(w2.empty());
}

// A change after the scan: a small file (its scanned bytes kept, its stat unchanged through
// the read) is stored as scanned, with the planning walk's stat, and not stat'ed again; a
// large file, read again by the archiver, is left out (it would not be the bytes scanned).
TEST_F(CaptureTest, FilesChangedAfterTheirScanAreStoredAsScannedOrLeftOut) {
  MakeTree(2);
  const fs::path small = home_ / ".config" / "app0" / "f1";
  const std::string scanned = ReadFile(small);
  struct stat planned;
  ASSERT_EQ(lstat(small.c_str(), &planned), 0);
  std::string big;
  std::mt19937 rng(7);
  while (big.size() < (9u << 20)) big += "line " + std::to_string(rng()) + "\n";
  const fs::path large = home_ / ".config" / "big.log";
  WriteFile(large, big);
  CaptureOptions o;
  o.profile = MakeProfile();
  o.home = home_.string();
  o.host = "testhost";
  o.jobs = 2;
  o.time = gojson::Timestamp{1700000000 + 60 * runs_++, 0, 0};
  o.after_scan = [&] {
    std::ofstream(small, std::ios::app) << "appended after the scan\n";
    std::ofstream(large, std::ios::app) << "appended after the scan\n";
  };
  std::vector<std::string> warnings;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto r = RunCapture(*repo_, scanner(), o);
  ASSERT_TRUE(r.backup && !r.blocked);
  EXPECT_TRUE(r.backup->incomplete);
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  EXPECT_NE(warnings[0].find(large.string() + " changed during the capture"), std::string::npos)
      << warnings[0];
  Snapshot snap = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, r.backup->snapshot_id), "s");
  ApplyOptions ao;
  ao.home = (root_ / "out").string();
  RunApply(*repo_, snap, ao);
  EXPECT_EQ(ReadFile(root_ / "out" / ".config" / "app0" / "f1"), scanned);
  EXPECT_FALSE(fs::exists(root_ / "out" / ".config" / "big.log"));
  ASSERT_TRUE(r.home_tree);
  TreePath at = FindTreePath(repo_->indexed(), *r.home_tree, SplitTreePath(".config/app0/f1"));
  ASSERT_TRUE(at.found());
  const Node& n = at.nodes.back();
  EXPECT_EQ(n.size, static_cast<uint64_t>(planned.st_size));
  EXPECT_EQ(n.inode, static_cast<uint64_t>(planned.st_ino));
}

// A file over the kept-bytes limit is scanned as a stream and read again by the archiver
// under the scan's stat: stored whole, found when it holds a secret.
TEST_F(CaptureTest, LargeFilesAreScannedAsAStream) {
  MakeTree(2);
  std::string big;
  std::mt19937 rng(5);
  while (big.size() < (9u << 20)) big += "line " + std::to_string(rng()) + "\n";
  const fs::path path = home_ / ".config" / "big.log";
  WriteFile(path, big);
  auto p = MakeProfile();
  auto r = Capture(p, 2);
  ASSERT_TRUE(r.backup && !r.blocked);
  EXPECT_EQ(r.files_scanned, 6u);
  EXPECT_EQ(r.files_read, 7u) << "the large file is read twice: scan, then store";
  Snapshot snap = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, r.backup->snapshot_id), "s");
  ApplyOptions ao;
  ao.home = (root_ / "out").string();
  RunApply(*repo_, snap, ao);
  EXPECT_EQ(ReadFile(root_ / "out" / ".config" / "big.log"), big);
  // A secret past the first windows blocks the capture.
  WriteFile(path, big + "gh = " + RandomToken(9) + "\n");
  auto blocked = Capture(p, 2);
  ASSERT_TRUE(blocked.blocked);
  ASSERT_EQ(blocked.findings.size(), 1u);
  EXPECT_EQ(blocked.findings[0].path, path.string());
}

// The archiver reads a file left to it only under the expected stat: a file that changed
// after its scan is left out (never stored unscanned).
TEST_F(CaptureTest, ExpectedStatKeepsOutAFileChangedAfterItsScan) {
  MakeTree(1);
  const std::string f = (home_ / ".bashrc").string();
  struct stat stale;
  ASSERT_EQ(lstat(f.c_str(), &stale), 0);
  stale.st_mtim.tv_sec -= 10;  // as scanned before a change
  BackupOptions bo;
  bo.targets = {f};
  bo.host = "testhost";
  bo.content_for = [](const std::string&, const struct stat&) -> std::shared_ptr<const std::string> {
    return nullptr;
  };
  bo.expected_stat = [&](const std::string& p) -> const struct stat* {
    return p == f ? &stale : nullptr;
  };
  std::vector<std::string> warnings;
  bo.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto r = RunBackup(*repo_, bo, false);
  EXPECT_TRUE(r.incomplete);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("changed after it was scanned"), std::string::npos) << warnings[0];
  bo.expected_stat = [&](const std::string&) -> const struct stat* { return nullptr; };
  warnings.clear();
  auto ok = RunBackup(*repo_, bo, false);
  EXPECT_FALSE(ok.incomplete);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(CaptureTest, FakePackageManagersHangFailAndSucceed) {
  MakeTree(1);
  fs::path bin = root_ / "bin";
  fs::create_directories(bin);
  WriteFile(bin / "dpkg-query", "#!/bin/sh\nprintf 'zlib1g\\t1:1.2\\tinstalled\\nbash\\t5.2\\tinstalled\\nold\\t1\\tconfig-files\\n'\n", 0755);
  WriteFile(bin / "apt-mark", "#!/bin/sh\necho bash\n", 0755);
  WriteFile(bin / "pip3", "#!/bin/sh\necho 'pip is broken' >&2\nexit 2\n", 0755);
  WriteFile(bin / "npm", "#!/bin/sh\nexec /bin/sleep 30\n", 0755);  // hangs
  const char* old_path = std::getenv("PATH");
  std::string saved = old_path ? old_path : "";
  setenv("PATH", bin.c_str(), 1);  // no flatpak, no snap: skipped quietly
  auto p = MakeProfile();
  p.managers.reset();
  p.package_timeout_s = 1;
  std::vector<std::string> warnings;
  CaptureOptions o;
  o.profile = p;
  o.home = home_.string();
  o.jobs = 2;
  o.warn = [&](const std::string& w) { warnings.push_back(w); };
  scanner();  // compiled before timing (seconds under ThreadSanitizer; not what is timed)
  auto t0 = std::chrono::steady_clock::now();
  auto r = RunCapture(*repo_, scanner(), o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  setenv("PATH", saved.c_str(), 1);
  EXPECT_LT(secs, 10.0) << "a hanging manager must not hang the capture";
  std::vector<std::string> want = {"apt-manual.txt", "dpkg.txt"};
  EXPECT_EQ(r.package_files, want);
  std::string all;
  for (const auto& w : warnings) all += w + "\n";
  EXPECT_NE(all.find("npm.txt"), std::string::npos) << all;
  EXPECT_NE(all.find("timed out"), std::string::npos) << all;
  EXPECT_NE(all.find("pip.txt"), std::string::npos) << all;
  EXPECT_NE(all.find("pip is broken"), std::string::npos) << all;
  EXPECT_EQ(all.find("flatpak"), std::string::npos) << "a missing manager is skipped quietly";
  Snapshot snap = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, r.backup->snapshot_id), "s");
  auto files = LoadPackageFiles(*repo_, snap);
  EXPECT_EQ(files["dpkg.txt"], "bash\t5.2\nzlib1g\t1:1.2\n");
  EXPECT_EQ(files["apt-manual.txt"], "bash\n");
}

TEST_F(CaptureTest, ApplyRoundTripIntoAnotherHome) {
  MakeTree(3);
  WriteFile(home_ / ".ssh" / "config", "Host x\n", 0600);
  chmod((home_ / ".ssh").c_str(), 0700);
  symlink(".config/app0/f1", (home_ / ".link").c_str());
  auto p = Profile::Parse("[track]\npaths = [\"~/.config\", \"~/.bashrc\", \"~/.ssh\", \"~/.link\"]\n"
                          "[packages]\nmanagers = []\n",
                          home_.string(), "t");
  auto r = Capture(p, 2);
  ASSERT_TRUE(r.backup && !r.blocked);
  Snapshot snap = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, r.backup->snapshot_id), "s");
  EXPECT_EQ(CapturedHome(snap), home_.string());

  fs::path other = root_ / "newhome";
  WriteFile(other / ".bashrc", "mine\n");
  WriteFile(other / "unrelated", "keep me\n");
  ApplyOptions ao;
  ao.home = other.string();
  ao.dry_run = true;
  std::vector<std::string> actions;
  ao.action = [&](const std::string& s) { actions.push_back(s); };
  auto dry = RunApply(*repo_, snap, ao);
  EXPECT_EQ(ReadFile(other / ".bashrc"), "mine\n") << "dry run writes nothing";
  EXPECT_FALSE(fs::exists(other / ".ssh"));
  EXPECT_EQ(dry.updated, 1u);
  ASSERT_FALSE(actions.empty());
  ao.dry_run = false;
  actions.clear();
  auto res = RunApply(*repo_, snap, ao);
  EXPECT_EQ(res.errors, 0u);
  EXPECT_EQ(res.created + res.updated, dry.created + dry.updated);
  EXPECT_EQ(ReadFile(other / ".bashrc"), ReadFile(home_ / ".bashrc"));
  EXPECT_EQ(ReadFile(other / ".bashrc.haven-orig"), "mine\n");
  EXPECT_EQ(ReadFile(other / "unrelated"), "keep me\n");
  EXPECT_EQ(ReadFile(other / ".config/app1/f2"), ReadFile(home_ / ".config/app1/f2"));
  EXPECT_EQ(fs::read_symlink(other / ".link"), ".config/app0/f1");
  struct stat st;
  ASSERT_EQ(stat((other / ".ssh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((other / ".ssh/config").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  struct stat src;
  stat((home_ / ".ssh/config").c_str(), &src);
  EXPECT_EQ(st.st_mtim.tv_sec, src.st_mtim.tv_sec);
  EXPECT_EQ(st.st_mtim.tv_nsec, src.st_mtim.tv_nsec);
  // Again: nothing to do.
  auto again = RunApply(*repo_, snap, ao);
  EXPECT_EQ(again.created + again.updated, 0u);

  // A symlink on the way out of the target is refused, and nothing is written through it.
  fs::path third = root_ / "third";
  fs::path outside = root_ / "outside";
  fs::create_directories(third);
  fs::create_directories(outside);
  symlink(outside.c_str(), (third / ".config").c_str());
  ao.home = third.string();
  std::vector<std::string> warned;
  ao.warn = [&](const std::string& s) { warned.push_back(s); };
  auto esc = RunApply(*repo_, snap, ao);
  EXPECT_GT(esc.refused, 0u);
  EXPECT_TRUE(fs::is_empty(outside));
}

// apply on crafted snapshots (RELIABILITY.md case 20): repeated names (a link and a directory
// of one name), unsafe names, a link chain already in the target, and nesting past PATH_MAX.
// Nothing is ever written outside the target; the rest is applied.
TEST_F(CaptureTest, ApplyOfHostileTreesStaysInsideTheTarget) {
  testing::TreeBuilder b(*repo_);
  fs::path target = root_ / "target", outside = root_ / "outside";
  fs::create_directories(target);
  fs::create_directories(outside);
  BlobId pwned = b.Tree({b.File("pwned", "written through a link\n")});
  BlobId deep = b.Tree({b.File("bottom", "deep\n")});
  for (int i = 0; i < 1200; ++i) deep = b.Tree({testing::TreeBuilder::Dir("dd", deep)});
  BlobId root = b.Tree({
      testing::TreeBuilder::Link("a", outside.string()), testing::TreeBuilder::Dir("a", pwned),
      testing::TreeBuilder::Dir("..", pwned), b.File("x/y", "slash\n"), b.File("", "empty\n"),
      testing::TreeBuilder::Dir("chain", pwned), testing::TreeBuilder::Dir("deep", deep),
      b.File("ok", "applied\n")});
  repo_->Flush();
  // An earlier link chain in the target: chain -> hop -> outside.
  ASSERT_EQ(symlink("hop", (target / "chain").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (target / "hop").c_str()), 0);
  Snapshot snap;
  snap.tree = root;
  ApplyOptions ao;
  ao.target = target.string();
  std::vector<std::string> warned;
  ao.warn = [&](const std::string& s) { warned.push_back(s); };
  ApplyResult r = RunApply(*repo_, snap, ao);
  EXPECT_TRUE(fs::is_empty(outside)) << fs::directory_iterator(outside)->path();
  EXPECT_EQ(ReadFile(target / "ok"), "applied\n");
  EXPECT_GE(r.refused, 4u);  // "..", "x/y", "", and chain/pwned through the link
  std::string all;
  for (const auto& w : warned) all += w + "\n";
  EXPECT_NE(all.find("unsafe"), std::string::npos) << all;
  // The deep file is below the target, past PATH_MAX.
  std::string rel = "deep";
  for (int i = 0; i < 1200; ++i) rel += "/dd";
  Fd dir(open(target.c_str(), O_RDONLY | O_DIRECTORY));
  Fd f(OpenBeneath(dir.get(), rel + "/bottom", O_RDONLY));
  EXPECT_TRUE(f.valid()) << strerror(errno) << "\n" << all;
}

// apply restores extended attributes (files and tracked directories) and the times of
// tracked directories, set after their entries were written.
TEST_F(CaptureTest, ApplyRestoresXattrsAndDirectoryTimes) {
  MakeTree(2);
  const fs::path f = home_ / ".config" / "app0" / "f1";
  ASSERT_EQ(setxattr(f.c_str(), "user.haven.test", "v1", 2, 0), 0) << strerror(errno);
  ASSERT_EQ(setxattr((home_ / ".config" / "app1").c_str(), "user.haven.dir", "d", 1, 0), 0);
  struct timespec old_times[2] = {{1600000000, 5}, {1600000000, 123456789}};
  ASSERT_EQ(utimensat(AT_FDCWD, (home_ / ".config" / "app1").c_str(), old_times, 0), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, (home_ / ".config").c_str(), old_times, 0), 0);
  auto r = Capture(MakeProfile(), 2);
  ASSERT_TRUE(r.backup && !r.blocked);
  Snapshot snap = Snapshot::Parse(repo_->LoadJson(FileType::kSnapshot, r.backup->snapshot_id), "s");

  fs::path other = root_ / "applied";
  ApplyOptions ao;
  ao.home = other.string();
  std::vector<std::string> warned;
  ao.warn = [&](const std::string& s) { warned.push_back(s); };
  auto res = RunApply(*repo_, snap, ao);
  EXPECT_EQ(res.errors, 0u);
  EXPECT_TRUE(warned.empty()) << warned.front();
  char buf[16];
  ssize_t k = getxattr((other / ".config/app0/f1").c_str(), "user.haven.test", buf, sizeof(buf));
  ASSERT_EQ(k, 2) << strerror(errno);
  EXPECT_EQ(std::string(buf, 2), "v1");
  k = getxattr((other / ".config/app1").c_str(), "user.haven.dir", buf, sizeof(buf));
  ASSERT_EQ(k, 1);
  for (const char* d : {".config/app1", ".config"}) {
    struct stat st;
    ASSERT_EQ(stat((other / d).c_str(), &st), 0);
    EXPECT_EQ(st.st_mtim.tv_sec, 1600000000) << d;
    EXPECT_EQ(st.st_mtim.tv_nsec, 123456789) << d;
  }
  // A changed xattr makes the file differ: apply updates it.
  ASSERT_EQ(setxattr((other / ".config/app0/f1").c_str(), "user.haven.test", "v2", 2, 0), 0);
  ao.no_backup = true;
  auto again = RunApply(*repo_, snap, ao);
  EXPECT_EQ(again.updated, 1u);
  k = getxattr((other / ".config/app0/f1").c_str(), "user.haven.test", buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, static_cast<size_t>(std::max<ssize_t>(k, 0))), "v1");
}

TEST(CapturePackages, DiffAgainstARecordedList) {
  std::vector<std::string> recorded = {"bash\t5.2", "curl\t7.88", "jq\t1.6"};
  std::vector<std::string> here = {"bash\t5.2", "jq\t1.7", "zsh\t5.9"};
  PackageDiff d = DiffPackageList("dpkg.txt", recorded, here);
  EXPECT_EQ(d.missing_here, std::vector<std::string>{"curl\t7.88"});
  EXPECT_EQ(d.extra_here, std::vector<std::string>{"zsh\t5.9"});
  ASSERT_EQ(d.other_version.size(), 1u);
  EXPECT_EQ(d.other_version[0], std::make_pair(std::string("jq\t1.6"), std::string("jq\t1.7")));
  EXPECT_EQ(d.install, "sudo apt-get install -y curl");
  // A snap is installed from the channel it tracked.
  EXPECT_EQ(DiffPackageList("snap.txt", {"core22\t20230801\tlatest/stable", "lxd\t5.0\t5.0/edge"}, {})
                .install,
            "sudo snap install core22 --channel=latest/stable && sudo snap install lxd --channel=5.0/edge");
  EXPECT_TRUE(DiffPackageList("pip.txt", {"six\t1.16.0"}, {"six\t1.16.0"}).other_version.empty());
  EXPECT_EQ(DiffPackageList("pip-user.txt", {"requests\t2.31"}, {}).install,
            "pip3 install --user 'requests==2.31'");
  EXPECT_EQ(DiffPackageList("npm.txt", {"@scope/x\t1.0.0"}, {}).install, "npm install -g @scope/x@1.0.0");
}

TEST(CapturePackages, Parsers) {
  EXPECT_EQ(ParsePipFreeze("requests==2.31.0\n-e git+x\nfoo @ file:///x\n"),
            (std::vector<std::string>{"requests\t2.31.0", "foo\t@ file:///x"}));
  EXPECT_EQ(ParseNpmParseable("/usr/lib\n/usr/lib/node_modules/@a/b:@a/b@1.2.3:undefined\n"),
            std::vector<std::string>{"@a/b\t1.2.3"});
  EXPECT_EQ(ParseSnapList("Name Version Rev Tracking Publisher Notes\ncore 16 1 latest/stable canonical base\n"),
            std::vector<std::string>{"core\t16\tlatest/stable"});
  EXPECT_EQ(ParseFlatpakColumns("org.x.App\t1.0\tflathub\n"),
            std::vector<std::string>{"org.x.App\t1.0\tflathub"});
  EXPECT_EQ(RenderPackageList({"b\t1", "a\t2", "b\t1"}), "a\t2\nb\t1\n");
}

TEST(CapturePackages, RealDpkgRun) {
  if (FindOnPath("dpkg-query").empty()) GTEST_FAIL() << "dpkg-query missing (Debian CI has it)";
  DiscoveryOptions d;
  d.managers = std::vector<std::string>{"dpkg"};
  d.timeout_ms = 60000;
  auto r = DiscoverPackages(d);
  ASSERT_EQ(r.lists.size(), 1u);
  bool has_libc = false;
  for (const auto& l : r.lists[0].lines) has_libc |= l.starts_with("libc6");
  EXPECT_TRUE(has_libc);
}

TEST(CaptureProfile, ParsesAndRejects) {
  auto p = Profile::Parse(
      "repository = \"~/r\"\n[track]\npaths = [\"~/.a\"]\nexclude = [\"*.swp\"]\n"
      "[secrets]\nmode = \"warn\"\nallow_paths = [\"~/x/*\"]\n[packages]\ntimeout = 5\n",
      "/h", "p");
  EXPECT_EQ(p.repository, "/h/r");
  EXPECT_EQ(p.track, std::vector<std::string>{"/h/.a"});
  EXPECT_EQ(p.mode, SecretMode::kWarn);
  EXPECT_EQ(p.allow.path_globs, std::vector<std::string>{"/h/x/*"});
  EXPECT_FALSE(p.managers);
  EXPECT_EQ(p.package_timeout_s, 5);
  for (const char* bad : {"[track]\npath = [\"x\"]\n", "[secrets]\nmode = \"loud\"\n",
                          "[track]\npaths = \"x\"\n", "[packages]\ntimeout = 0\n", "x = = 1\n"}) {
    try {
      Profile::Parse(bad, "/h", "bad.toml");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("bad.toml:"), std::string::npos) << e.what();
    }
  }
}

// The Rivet benchmark shape (issue 3): 2,000 files of ~1 KiB in two directories, 2 threads,
// in process, into a memory repository. Run by hand:
//   build/haven_unit_tests --gtest_also_run_disabled_tests --gtest_filter='*TwoThousand*'
// The capture state (archiver/folder_state.h): a second capture of an unchanged set takes every
// folder's tree from it; after each kind of change, the capture with a state gives the
// same home tree as one without, and still reuses the folders the change did not touch.
TEST_F(CaptureTest, StateGivesTheTreesOfACaptureWithoutIt) {
  MakeTree(20);
  WriteFile(home_ / ".config" / "app0" / "deep" / "er" / "x", "x\n");
  symlink("app0/f1", (home_ / ".config" / "lnk").c_str());
  auto p = MakeProfile();
  const std::string state_dir = (root_ / "state").string();
  state_dir_ = state_dir;
  auto first = Capture(p, 2);
  ASSERT_TRUE(first.backup && first.home_tree);
  EXPECT_FALSE(first.state_used);
  auto again = Capture(p, 2);
  ASSERT_TRUE(again.home_tree);
  EXPECT_TRUE(again.state_used);
  EXPECT_EQ(again.dirs_reused, 1u);  // ~/.config as a whole (~/.bashrc is a file target)
  EXPECT_EQ(again.files_read, 0u);
  EXPECT_EQ(*again.home_tree, *first.home_tree);
  // Every tracked file is unmodified; the one file more is the profile, stored from memory.
  EXPECT_EQ(again.backup->stats.files_unmodified + 1, first.backup->stats.total_files);
  EXPECT_EQ(again.backup->stats.total_files, first.backup->stats.total_files);
  EXPECT_EQ(again.backup->stats.total_bytes, first.backup->stats.total_bytes);
  EXPECT_EQ(again.backup->stats.dirs_unmodified, first.backup->stats.dirs_new);

  const fs::path cfg = home_ / ".config";
  struct Change {
    const char* what;
    std::function<void()> apply;
  };
  std::vector<Change> changes = {
      {"rewrite, same size", [&] { WriteFile(cfg / "app0" / "f3", std::string(1000, 'z') + "3\n"); }},
      {"chmod", [&] { chmod((cfg / "app1" / "f2").c_str(), 0600); }},
      {"new file deep down", [&] { WriteFile(cfg / "app0" / "deep" / "er" / "y", "y\n"); }},
      {"remove", [&] { fs::remove(cfg / "app1" / "f4"); }},
      {"rename", [&] { fs::rename(cfg / "app0" / "f5", cfg / "app0" / "f5b"); }},
      {"relink", [&] {
         fs::remove(cfg / "lnk");
         symlink("app1/f1", (cfg / "lnk").c_str());
       }},
      {"folder time", [&] {
         struct timespec ts[2] = {{1600000000, 0}, {1600000000, 0}};
         utimensat(AT_FDCWD, (cfg / "app0" / "deep").c_str(), ts, 0);
       }},
      {"new folder", [&] { WriteFile(cfg / "app2" / "g", "g\n"); }},
  };
  for (const auto& c : changes) {
    c.apply();
    state_dir_ = state_dir;
    auto with = Capture(p, 2);
    state_dir_.clear();
    auto without = Capture(p, 1);
    ASSERT_TRUE(with.home_tree && without.home_tree) << c.what;
    EXPECT_TRUE(with.state_used) << c.what;
    EXPECT_EQ(*with.home_tree, *without.home_tree) << c.what;
    EXPECT_EQ(with.backup->stats.total_files, without.backup->stats.total_files) << c.what;
    EXPECT_EQ(with.backup->stats.total_bytes, without.backup->stats.total_bytes) << c.what;
    EXPECT_LE(with.files_read, 2u) << c.what;
    EXPECT_GE(with.dirs_reused, 1u) << c.what;  // a folder beside or below the change
    // The capture without a state moved the parent on; its root tree is `with`'s, so the
    // state (written with `with`) is still used.
    state_dir_ = state_dir;
    auto settle = Capture(p, 2);
    EXPECT_EQ(settle.state_used, with.backup->tree == without.backup->tree) << c.what;
    auto reuse = Capture(p, 2);
    EXPECT_TRUE(reuse.state_used && reuse.dirs_reused == 1) << c.what;
    ASSERT_TRUE(reuse.home_tree);
    EXPECT_EQ(*reuse.home_tree, *without.home_tree) << c.what;
  }
}

// With the state's blobs (the trees above the tracked paths, the profile under /.haven), a
// capture of an unchanged set never reads the index, run after run; one that stores
// something reads it. Each run opens the repository as `haven capture` does (the index
// deferred) and gives the tree a capture without a state gives.
TEST_F(CaptureTest, UnchangedCaptureWithStateReadsNoIndex) {
  MakeTree(10);
  auto p = MakeProfile();
  const std::string state_dir = (root_ / "state").string();
  struct Run {
    CaptureResult r;
    bool index_read;
  };
  auto run = [&](const Profile& prof, bool with_state) {
    auto opened = Repository::Open(be_, "pw", 2);
    auto lazy = IndexedRepository::Load(*opened, IndexLoad::kOnFirstUse);
    WriteSession session(*lazy);
    CaptureOptions o = Options(prof, 2);
    o.state_dir = with_state ? state_dir : "";
    CaptureResult r = RunCapture(session, scanner(), o);
    EXPECT_TRUE(r.backup && r.home_tree);
    return Run{std::move(r), lazy->index_loaded()};
  };
  auto same_as_without = [&](const Run& with, const Profile& prof, const char* what) {
    Run without = run(prof, false);
    EXPECT_EQ(with.r.backup->tree, without.r.backup->tree) << what;
    EXPECT_EQ(with.r.backup->stats.total_files, without.r.backup->stats.total_files) << what;
    run(prof, true);  // (`without` is the parent now: a capture with the state settles)
  };
  Run first = run(p, true);
  EXPECT_TRUE(first.index_read);
  for (int i = 0; i < 2; ++i) {  // the second run uses the state the first unchanged one wrote
    Run again = run(p, true);
    EXPECT_TRUE(again.r.state_used) << i;
    EXPECT_FALSE(again.index_read) << i;
    EXPECT_EQ(again.r.backup->tree, first.r.backup->tree) << i;
    EXPECT_FALSE(again.r.backup->snapshot_id.IsZero()) << i;
  }
  // An unchanged run leaves the state file as it is (it names an earlier snapshot of the
  // same root tree, which the parent has).
  auto state_bytes = [&] {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(state_dir)) files.push_back(e.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? std::string() : ReadFile(files[0]);
  };
  const std::string before = state_bytes();
  Run unchanged = run(p, true);
  EXPECT_TRUE(unchanged.r.state_used);
  EXPECT_EQ(state_bytes(), before);
  same_as_without(unchanged, p, "unchanged");

  // A changed file, then a changed profile (a new blob under /.haven): the index is read.
  WriteFile(home_ / ".config" / "app1" / "f2", "changed\n");
  Run file = run(p, true);
  EXPECT_TRUE(file.r.state_used);
  EXPECT_TRUE(file.index_read);
  same_as_without(file, p, "a file");
  auto p2 = MakeProfile("# a comment\n");
  Run profile = run(p2, true);
  EXPECT_TRUE(profile.index_read);
  same_as_without(profile, p2, "the profile");
  EXPECT_FALSE(run(p2, true).index_read);

  // A record whose location is wrong (sealed with the key, as only haven writes it): the
  // blob is read through the index, and the capture is right.
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(state_dir)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  auto st = ParseFolderState(AsBytes(repo_->DecodeUnpacked(AsBytes(ReadFile(files[0])), "s")));
  ASSERT_TRUE(st);
  ASSERT_FALSE(st->blobs.empty());
  for (KnownBlob& b : st->blobs) b.where.offset += 1;
  SaveFolderState(*repo_, files[0].string(), *st);
  Run wrong = run(p2, true);
  EXPECT_TRUE(wrong.r.state_used);
  EXPECT_TRUE(wrong.index_read);
  same_as_without(wrong, p2, "wrong locations");
}

// A state that is damaged, sealed by another repository's key, older than an index
// rewrite, written for another scan version, or asked for with --verify-content is not
// used; the capture is still right.
TEST_F(CaptureTest, StateIsUsedOnlyWhenItIsThisRepositorysAndThisScans) {
  MakeTree(5);
  auto p = MakeProfile();
  state_dir_ = (root_ / "state").string();
  auto first = Capture(p, 2);
  ASSERT_TRUE(first.home_tree);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(state_dir_)) files.push_back(e.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string good = ReadFile(files[0]);

  std::string bad = good;
  bad[bad.size() / 2] ^= 1;
  WriteFile(files[0], bad, 0600);
  auto damaged = Capture(p, 2);
  EXPECT_FALSE(damaged.state_used);
  ASSERT_TRUE(damaged.home_tree);
  EXPECT_EQ(*damaged.home_tree, *first.home_tree);

  // Another repository's state under this one's name.
  auto other_be = std::make_shared<MemBackend>();
  Repository::Init(*other_be, "pw", 2, kFastScrypt, 1);
  auto other = haven::testing::TestRepository::Open(other_be, "pw", 2);
  auto current = ParseFolderState(AsBytes(repo_->DecodeUnpacked(AsBytes(ReadFile(files[0])), "s")));
  ASSERT_TRUE(current);
  SaveFolderState(*other, files[0].string(), *current);
  auto foreign = Capture(p, 2);
  EXPECT_FALSE(foreign.state_used);

  // An index rewritten since (as prune and repair index do): the state is not used.
  auto before_rewrite = Capture(p, 2);
  EXPECT_TRUE(before_rewrite.state_used);
  std::vector<std::string> index_names;
  be_->List(FileType::kIndex, [&](const FileInfo& fi) { index_names.push_back(fi.name); });
  ASSERT_FALSE(index_names.empty());
  {
    const Bytes raw = be_->Load({FileType::kIndex, index_names[0]});
    const std::string json = repo_->DecodeUnpacked(raw, index_names[0]);
    repo_->SaveJson(FileType::kIndex, json);
    be_->Remove({FileType::kIndex, index_names[0]});
    repo_->LoadIndex();
  }
  auto rewritten = Capture(p, 2);
  EXPECT_FALSE(rewritten.state_used);
  ASSERT_TRUE(rewritten.home_tree);
  EXPECT_EQ(*rewritten.home_tree, *first.home_tree);
  EXPECT_TRUE(Capture(p, 2).state_used);  // (the capture above wrote a new state)

  auto v2 = Capture(p, 2, "haven-scan:999/00000000");  // another scan version: re-scans
  EXPECT_FALSE(v2.state_used);
  EXPECT_EQ(v2.files_scanned, v2.files);
  auto v2_again = Capture(p, 2, "haven-scan:999/00000000");
  EXPECT_TRUE(v2_again.state_used);

  CaptureOptions o = Options(p, 2, "haven-scan:999/00000000");
  o.verify_content = true;
  auto verified = RunCapture(*repo_, scanner(), o);
  EXPECT_FALSE(verified.state_used);
  EXPECT_EQ(verified.files_verified, verified.files);
}

// The planning walk on several threads reports the same files in the same order and the
// same folder records and keys as on one; a changed entry changes the keys of its folder
// and of every folder above it, and no other.
TEST(CaptureWalk, ThreadsGiveTheSameOrderAndKeys) {
  char tmpl[] = "/tmp/haven-walk-test.XXXXXX";
  const fs::path root = mkdtemp(tmpl);
  for (int d = 0; d < 6; ++d)
    for (int i = 0; i < 5; ++i)
      WriteFile(root / ("d" + std::to_string(d)) / ("s" + std::to_string(i % 2)) /
                    ("f" + std::to_string(i)), std::string(i + 1, 'x'));
  WriteFile(root / "top", "t");
  WriteFile(root / "d2" / "skip.swp", "excluded");
  PatternList excludes(std::vector<std::string>{"*.swp"});
  struct Result {
    std::vector<std::string> files;
    DirKeyWalk keys;
  };
  auto walk = [&](int threads) {
    Result r;
    r.keys.context.bytes.fill(7);
    WalkRegularFiles(
        root.string(), &excludes,
        [&](const std::string& p, const struct stat&) { r.files.push_back(p); },
        [](const std::string&, const std::string&) {}, nullptr, &r.keys, threads);
    return r;
  };
  const Result one = walk(1);
  ASSERT_EQ(one.files.size(), 31u);
  EXPECT_TRUE(std::is_sorted(one.files.begin(), one.files.end()));
  ASSERT_EQ(one.keys.dirs.size(), 1u + 6 + 12);
  EXPECT_EQ(one.keys.dirs.back().path, root.string());
  EXPECT_EQ(one.keys.dirs.back().files, 31u);
  EXPECT_EQ(one.keys.dirs.back().dirs, 18u);
  for (int threads : {2, 4, 16}) {
    const Result many = walk(threads);
    EXPECT_EQ(many.files, one.files) << threads;
    ASSERT_EQ(many.keys.dirs.size(), one.keys.dirs.size()) << threads;
    for (size_t i = 0; i < one.keys.dirs.size(); ++i) {
      EXPECT_EQ(many.keys.dirs[i].path, one.keys.dirs[i].path) << threads;
      EXPECT_EQ(many.keys.dirs[i].key, one.keys.dirs[i].key) << many.keys.dirs[i].path;
      EXPECT_TRUE(many.keys.dirs[i].complete);
    }
  }
  WriteFile(root / "d2" / "skip.swp", "excluded, changed");  // excluded: no key moves
  WriteFile(root / "d4" / "s1" / "f1", "yy");                // same size, new mtime/ctime
  const Result after = walk(2);
  ASSERT_EQ(after.keys.dirs.size(), one.keys.dirs.size());
  for (size_t i = 0; i < one.keys.dirs.size(); ++i) {
    const std::string& p = one.keys.dirs[i].path;
    const bool above = p == root.string() || p == (root / "d4").string() ||
                       p == (root / "d4" / "s1").string();
    EXPECT_EQ(after.keys.dirs[i].key != one.keys.dirs[i].key, above) << p;
  }
  fs::remove_all(root);
}

// With DirKeyWalk::known, a complete folder whose key is known reports none of its own files
// (they are counted instead); its subfolders and every other folder report theirs, and the
// folder records and keys are those of a walk without it, on one thread or several.
TEST(CaptureWalk, KnownFoldersReportNoFilesOfTheirOwn) {
  char tmpl[] = "/tmp/haven-walk-test.XXXXXX";
  const fs::path root = mkdtemp(tmpl);
  for (int d = 0; d < 3; ++d) {
    const fs::path dir = root / ("d" + std::to_string(d));
    for (int i = 0; i < 4; ++i) WriteFile(dir / ("f" + std::to_string(i)), "x");
    for (int i = 0; i < 2; ++i) WriteFile(dir / "sub" / ("g" + std::to_string(i)), "y");
  }
  WriteFile(root / "top", "t");
  auto walk = [&](int threads, std::function<bool(const RawId&)> known) {
    std::pair<std::vector<std::string>, DirKeyWalk> r;
    r.second.context.bytes.fill(3);
    r.second.known = std::move(known);
    WalkRegularFiles(
        root.string(), nullptr,
        [&](const std::string& p, const struct stat&) { r.first.push_back(p); },
        [](const std::string&, const std::string&) {}, nullptr, &r.second, threads);
    return r;
  };
  const auto all = walk(1, nullptr);
  ASSERT_EQ(all.first.size(), 19u);
  EXPECT_EQ(all.second.files_not_reported, 0u);
  RawId d1_key, d2_sub_key;
  for (const WalkedDir& d : all.second.dirs) {
    if (d.path == (root / "d1").string()) d1_key = d.key;
    if (d.path == (root / "d2" / "sub").string()) d2_sub_key = d.key;
  }
  for (int threads : {1, 2, 4}) {
    auto [files, keys] =
        walk(threads, [&](const RawId& k) { return k == d1_key || k == d2_sub_key; });
    EXPECT_EQ(keys.files_not_reported, 4u + 2u) << threads;
    std::vector<std::string> want;
    for (const auto& f : all.first) {
      const fs::path dir = fs::path(f).parent_path();
      if (dir != root / "d1" && dir != root / "d2" / "sub") want.push_back(f);
    }
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, want) << threads;  // (d1/sub's files are reported: only d1's own are not)
    ASSERT_EQ(keys.dirs.size(), all.second.dirs.size());
    for (size_t i = 0; i < keys.dirs.size(); ++i) {
      EXPECT_EQ(keys.dirs[i].path, all.second.dirs[i].path);
      EXPECT_EQ(keys.dirs[i].key, all.second.dirs[i].key) << keys.dirs[i].path;
      EXPECT_EQ(keys.dirs[i].files, all.second.dirs[i].files) << keys.dirs[i].path;
    }
  }
  fs::remove_all(root);
}

TEST_F(CaptureTest, DISABLED_BenchTwoThousandFiles) {
  MakeTree(1000);
  auto p = Profile::Parse("[track]\npaths = [\"~/.config\"]\n[packages]\nmanagers = []\n",
                          home_.string(), "t");
  scanner();  // compiled before timing (the CLI loads it from its cache in a few ms)
  auto time = [&](const char* what) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = Capture(p, 2);
    double ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3;
    std::printf("%-10s %.1f ms (files %llu, read %llu)\n", what, ms,
                (unsigned long long)r.files, (unsigned long long)r.files_read);
  };
  time("cold");
  for (int i = 0; i < 3; ++i) time("unchanged");
}

// ReadWholeFile with the size the caller expects: exact (read and stat agree: the end), too
// small (the file grew: read on to the end), too large (it shrank) or none: always the whole
// file, and *after is the stat taken at its end.
TEST(ReadWholeFileTest, ReadsTheWholeFileWhateverTheHint) {
  const std::string path = ::testing::TempDir() + "haven-readwhole-" + std::to_string(getpid());
  for (size_t len : {size_t{0}, size_t{1}, size_t{1000}, size_t{70000}, size_t{200000}}) {
    std::string body(len, 'a');
    for (size_t i = 0; i < len; ++i) body[i] = static_cast<char>('a' + i * 7 % 26);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << body;
    }
    for (uint64_t hint : {uint64_t{0}, uint64_t{len}, uint64_t{len / 2}, uint64_t{len + 10}}) {
      struct stat after {};
      EXPECT_EQ(ReadWholeFile(path, &after, hint), body) << len << " " << hint;
      EXPECT_EQ(static_cast<size_t>(after.st_size), len);
      EXPECT_EQ(ReadWholeFile(path, nullptr, hint), body) << len << " " << hint;
    }
  }
  std::remove(path.c_str());
  EXPECT_THROW(ReadWholeFile(path), Error);
}

}  // namespace
}  // namespace haven::capture
