// The conformance suite (backend_conformance_test.h) run against LocalBackend in a temp
// folder and MemBackend, then LocalBackend's on-disk behaviour, FaultBackend and RetryBackend.
#include "backend/backend.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend_conformance_test.h"
#include "backend/dry_run_backend.h"
#include "backend/fault_backend.h"
#include "backend/forwarding_backend.h"
#include "backend/kill_backend.h"
#include "backend/limit_backend.h"
#include "backend/local_backend.h"
#include "backend/mem_backend.h"
#include "backend/retry_backend.h"
#include "backend/spool_pack_stream.h"
#include "core/error.h"
#include "core/id.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
using namespace conformance;  // NOLINT: the suite's helpers are used throughout

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "haven_backend_XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Every file below root whose name contains "-tmp-".
std::vector<std::string> TempFilesUnder(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(root, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (Contains(e.path().filename().string(), "-tmp-")) out.push_back(e.path().string());
  }
  return out;
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// Runs body in a forked child (for process-wide state: rlimits, mount namespaces) and
// returns the text it reports: "" for success, "SKIP ..." when the environment cannot run
// the test, anything else is a failure description.
std::string RunInChild(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    std::string result;
    try {
      result = body();
    } catch (const std::exception& e) {
      result = std::string("unexpected exception: ") + e.what();
    }
    if (::write(fds[1], result.data(), result.size()) < 0) ::_exit(2);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out += " (child process failed)";
  return out;
}

// ---------------------------------------------------------------------------------------
// Conformance suite, typed over backend environments.

struct LocalEnv {
  static constexpr const char* kName = "Local";
  TempDir dir;
  LocalBackend backend{dir.path() + "/repo"};
  LocalEnv() { backend.Create(); }
};

struct MemEnv {
  static constexpr const char* kName = "Mem";
  MemBackend backend;
  MemEnv() { backend.Create(); }
};

using BackendEnvs = ::testing::Types<LocalEnv, MemEnv>;
INSTANTIATE_TYPED_TEST_SUITE_P(Base, BackendConformanceTest, BackendEnvs, EnvNames);

// ---------------------------------------------------------------------------------------
// LocalBackend on disk.

class LocalBackendTest : public ::testing::Test {
 protected:
  LocalBackendTest() : root_(dir_.path() + "/repo"), be_(root_) { be_.Create(); }
  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  TempDir dir_;
  std::string root_;
  LocalBackend be_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

TEST_F(LocalBackendTest, CreateMakesResticLayout) {
  int dirs = 0;
  for (const auto& e : fs::recursive_directory_iterator(root_)) {
    ASSERT_TRUE(e.is_directory()) << e.path();
    EXPECT_EQ(ModeOf(e.path().string()), 0700u) << e.path();
    ++dirs;
  }
  EXPECT_EQ(dirs, 256 + 5);
  for (const char* d : {"keys", "locks", "snapshots", "index", "data/00", "data/7f", "data/ff"}) {
    EXPECT_TRUE(fs::is_directory(Path(d))) << d;
  }
  EXPECT_EQ(ModeOf(root_), 0700u);
  EXPECT_FALSE(fs::exists(Path("config")));
  be_.Create();  // no config yet: creating again is harmless
  be_.Save(Handle{FileType::kConfig, "config"}, AsBytes("c"));
  Error e = CatchError([&] { be_.Create(); });
  EXPECT_EQ(e.code(), ErrorCode::kFatal);
  EXPECT_TRUE(Contains(e.what(), root_)) << e.what();
}

TEST_F(LocalBackendTest, CreateMakesMissingParents) {
  LocalBackend nested(dir_.path() + "/a/b/c/");
  nested.Create();
  EXPECT_TRUE(fs::is_directory(dir_.path() + "/a/b/c/data/ab"));
  EXPECT_EQ(nested.Location(), dir_.path() + "/a/b/c");
}

TEST_F(LocalBackendTest, SavedFilesAreReadOnlyInTheDefaultLayout) {
  Handle pack{FileType::kPack, TestName(1, "ab")};
  Handle snap{FileType::kSnapshot, TestName(2)};
  be_.Save(pack, AsBytes("pack"));
  be_.Save(snap, AsBytes("snap"));
  be_.Save(Handle{FileType::kConfig, "config"}, AsBytes("config"));
  EXPECT_EQ(ModeOf(Path("data/ab/" + pack.name)), 0400u);
  EXPECT_EQ(ModeOf(Path("snapshots/" + snap.name)), 0400u);
  EXPECT_EQ(ModeOf(Path("config")), 0400u);
  EXPECT_EQ(be_.PathOf(pack), Path("data/ab/" + pack.name));
  EXPECT_EQ(pack.ToString(), "data/ab/" + pack.name);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
  be_.Remove(pack);  // read-only files can still be removed
  EXPECT_FALSE(fs::exists(Path("data/ab/" + pack.name)));
}

TEST_F(LocalBackendTest, ListSkipsJunkAndTempFiles) {
  Handle snap{FileType::kSnapshot, TestName(1)};
  Handle pack{FileType::kPack, TestName(2, "ab")};
  be_.Save(snap, AsBytes("s"));
  be_.Save(pack, AsBytes("pp"));
  std::string upper = TestName(3);
  for (auto& c : upper) c = static_cast<char>(std::toupper(c));
  for (const std::string& junk :
       {std::string("junk"), snap.name + "-tmp-1234abcd", upper, TestName(4).substr(1),
        TestName(5) + "0", std::string(".hidden")}) {
    WriteFile(Path("snapshots/" + junk), "junk");
    WriteFile(Path("data/ab/" + junk), "junk");
  }
  fs::create_directory(Path("snapshots/" + TestName(6)));  // a folder with an object name
  WriteFile(Path("data/README"), "junk");
  WriteFile(Path("data/" + TestName(7)), "legacy layout");  // packs belong in data/XX
  fs::create_directory(Path("data/zz"));
  WriteFile(Path("data/zz/" + TestName(8)), "junk");
  fs::create_directory(Path("data/AB"));
  WriteFile(Path("data/AB/" + TestName(9, "ab")), "junk");

  EXPECT_EQ(ListAll(be_, FileType::kSnapshot), (std::map<std::string, uint64_t>{{snap.name, 1}}));
  EXPECT_EQ(ListAll(be_, FileType::kPack), (std::map<std::string, uint64_t>{{pack.name, 2}}));
}

TEST_F(LocalBackendTest, RemoveStaleTempFilesTakesOnlyOldTempFiles) {
  Handle snap{FileType::kSnapshot, TestName(1)};
  be_.Save(snap, AsBytes("s"));
  const std::vector<std::string> old = {"snapshots/" + snap.name + "-tmp-1111",
                                        "data/ab/" + TestName(2, "ab") + "-tmp-2222",
                                        "index/" + TestName(3) + "-tmp-3333",
                                        "locks/" + TestName(4) + "-tmp-4444",
                                        "keys/" + TestName(5) + "-tmp-5555"};
  const std::string fresh = "data/cd/" + TestName(6, "cd") + "-tmp-6666";
  const std::string junk = "snapshots/old-junk";
  for (const auto& rel : old) WriteFile(Path(rel), "partial");
  WriteFile(Path(fresh), "being written");
  WriteFile(Path(junk), "not a temp file");
  const auto two_days_ago = fs::file_time_type::clock::now() - std::chrono::hours(48);
  for (const auto& rel : old) fs::last_write_time(Path(rel), two_days_ago);
  fs::last_write_time(Path(junk), two_days_ago);
  EXPECT_EQ(be_.CountStaleTempFiles(24 * 3600), old.size());  // counting removes nothing
  EXPECT_EQ(be_.CountStaleTempFiles(-60), old.size() + 1);  // every one, however young
  for (const auto& rel : old) EXPECT_TRUE(fs::exists(Path(rel))) << rel;
  EXPECT_EQ(be_.RemoveStaleTempFiles(24 * 3600), old.size());
  for (const auto& rel : old) EXPECT_FALSE(fs::exists(Path(rel))) << rel;
  EXPECT_TRUE(fs::exists(Path(fresh)));
  EXPECT_TRUE(fs::exists(Path(junk)));
  EXPECT_TRUE(be_.Stat(snap));
  EXPECT_EQ(be_.RemoveStaleTempFiles(24 * 3600), 0u);
  EXPECT_EQ(be_.CountStaleTempFiles(24 * 3600), 0u);
  EXPECT_EQ(MemBackend().RemoveStaleTempFiles(0), 0u);
}

TEST_F(LocalBackendTest, ListsPacksAcrossDataSubfoldersAndToleratesMissingOnes) {
  std::map<std::string, uint64_t> want;
  for (int i = 0; i < 64; ++i) {
    Handle h{FileType::kPack, TestName(i)};
    be_.Save(h, TestBytes(static_cast<size_t>(i), i));
    want[h.name] = static_cast<uint64_t>(i);
  }
  int removed = 0;
  for (const auto& e : fs::directory_iterator(Path("data"))) {
    if (fs::is_empty(e.path())) {
      fs::remove(e.path());  // copy tools drop empty folders
      ++removed;
    }
  }
  EXPECT_GT(removed, 100);
  EXPECT_EQ(ListAll(be_, FileType::kPack), want);
}

TEST_F(LocalBackendTest, PackSubfolderThatIsAFileFailsTheListing) {
  be_.Save(Handle{FileType::kPack, TestName(1, "00")}, AsBytes("x"));
  fs::remove(Path("data/7f"));
  WriteFile(Path("data/7f"), "not a folder");
  Error e = CatchError([&] { ListAll(be_, FileType::kPack); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), Path("data/7f"))) << e.what();
}

TEST_F(LocalBackendTest, UnreadablePackSubfolderFailsTheListing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads folders regardless of their mode";
  be_.Save(Handle{FileType::kPack, TestName(1, "7f")}, AsBytes("x"));
  fs::permissions(Path("data/7f"), fs::perms::none);
  Error e = CatchError([&] { ListAll(be_, FileType::kPack); });
  fs::permissions(Path("data/7f"), fs::perms::owner_all);
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_FALSE(e.retryable());
  EXPECT_TRUE(Contains(e.what(), Path("data/7f"))) << e.what();
}

TEST_F(LocalBackendTest, MissingTypeFolderFailsTheListingExceptLocks) {
  for (const char* dir : {"index", "keys", "snapshots", "data"}) {
    fs::remove_all(Path(dir));
  }
  for (FileType t : {FileType::kIndex, FileType::kKey, FileType::kSnapshot, FileType::kPack}) {
    Error e = CatchError([&] { ListAll(be_, t); });
    EXPECT_EQ(e.code(), ErrorCode::kIo) << FileTypeName(t);
    EXPECT_TRUE(Contains(e.what(), Path(FileTypeDir(t)))) << e.what();
  }
  fs::remove(Path("locks"));
  EXPECT_TRUE(ListAll(be_, FileType::kLock).empty());
  Handle lock{FileType::kLock, TestName(1)};
  be_.Save(lock, AsBytes("lock"));  // recreates locks/
  EXPECT_EQ(ListAll(be_, FileType::kLock).size(), 1u);
}

TEST_F(LocalBackendTest, SaveRecreatesAMissingPackSubfolder) {
  fs::remove(Path("data/ab"));
  Handle h{FileType::kPack, TestName(1, "ab")};
  be_.Save(h, AsBytes("pack"));
  EXPECT_EQ(ModeOf(Path("data/ab")), 0700u);
  EXPECT_EQ(AsChars(be_.Load(h)), "pack");
}

TEST_F(LocalBackendTest, SaveIntoRemovedTypeFolderFailsWithoutLeftovers) {
  fs::remove_all(Path("snapshots"));
  Handle h{FileType::kSnapshot, TestName(1)};
  Error e = CatchError([&] { be_.Save(h, TestBytes(4096, 1)); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_FALSE(e.retryable());
  EXPECT_TRUE(Contains(e.what(), Path("snapshots/" + h.name))) << e.what();
  EXPECT_FALSE(fs::exists(Path("snapshots")));
  EXPECT_TRUE(TempFilesUnder(root_).empty());

  fs::remove_all(Path("data"));  // data/ itself is never recreated
  EXPECT_EQ(CatchError([&] {
              be_.Save(Handle{FileType::kPack, TestName(2)}, AsBytes("x"));
            }).code(),
            ErrorCode::kIo);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
}

TEST_F(LocalBackendTest, ConflictingSaveRemovesItsTempFile) {
  Handle h{FileType::kIndex, TestName(1)};
  be_.Save(h, AsBytes("0123456789"));
  Error e = CatchError([&] { be_.Save(h, AsBytes("0123456789a")); });
  EXPECT_EQ(e.code(), ErrorCode::kFatal);
  EXPECT_TRUE(Contains(e.what(), Path("index/" + h.name))) << e.what();
  EXPECT_TRUE(TempFilesUnder(root_).empty());
  EXPECT_EQ(AsChars(be_.Load(h)), "0123456789");
}

TEST_F(LocalBackendTest, LeftoverTempFileDoesNotBlockSave) {
  Handle h{FileType::kPack, TestName(1, "cd")};
  WriteFile(Path("data/cd/" + h.name + "-tmp-deadbeef"), "half a pack");
  be_.Save(h, AsBytes("whole pack"));
  EXPECT_EQ(ListAll(be_, FileType::kPack), (std::map<std::string, uint64_t>{{h.name, 10}}));
}

TEST_F(LocalBackendTest, ShortReadNamesPathAndSizes) {
  Handle h{FileType::kPack, TestName(1, "12")};
  be_.Save(h, TestBytes(100, 1));
  Error e = CatchError([&] { be_.Load(h, 50, 60); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_TRUE(Contains(e.what(), Path("data/12/" + h.name))) << e.what();
  EXPECT_TRUE(Contains(e.what(), "60")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "100")) << e.what();
}

TEST_F(LocalBackendTest, FolderWhereAnObjectShouldBeIsAnError) {
  Handle h{FileType::kSnapshot, TestName(1)};
  fs::create_directory(Path("snapshots/" + h.name));
  EXPECT_EQ(CatchError([&] { be_.Stat(h); }).code(), ErrorCode::kIo);
  EXPECT_EQ(CatchError([&] { be_.Load(h); }).code(), ErrorCode::kIo);
  EXPECT_EQ(CatchError([&] { be_.Save(h, AsBytes("x")); }).code(), ErrorCode::kFatal);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
}

TEST_F(LocalBackendTest, FailedWriteLeavesNoTempFile) {
  // RLIMIT_FSIZE makes write() fail with EFBIG part-way through the object.
  std::string result = RunInChild([&]() -> std::string {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit lim;
    ::getrlimit(RLIMIT_FSIZE, &lim);
    lim.rlim_cur = 4096;
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return "SKIP setrlimit failed";
    Handle h{FileType::kPack, TestName(1, "ee")};
    try {
      be_.Save(h, TestBytes(65536, 1));
      return "save beyond RLIMIT_FSIZE succeeded";
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kIo || e.retryable()) return std::string("bad error: ") + e.what();
      if (!Contains(e.what(), Path("data/ee/" + h.name))) return std::string("path? ") + e.what();
    }
    if (!TempFilesUnder(root_).empty()) return "temp file left: " + TempFilesUnder(root_)[0];
    if (fs::exists(Path("data/ee/" + h.name))) return "partial object under its final name";
    return "";
  });
  if (result.starts_with("SKIP")) GTEST_SKIP() << result;
  EXPECT_EQ(result, "");
}

TEST_F(LocalBackendTest, DiskFullIsPermanentAndLeavesNoTempFile) {
  // A 256 KiB tmpfs in a private mount namespace of a child process (needs CAP_SYS_ADMIN).
  const std::string mnt = dir_.path() + "/small";
  fs::create_directory(mnt);
  std::string result = RunInChild([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("SKIP unshare: ") + std::strerror(errno);
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("SKIP private mounts: ") + std::strerror(errno);
    }
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0) {
      return std::string("SKIP mount tmpfs: ") + std::strerror(errno);
    }
    LocalBackend small(mnt + "/repo");
    small.Create();
    Handle big{FileType::kPack, TestName(1)};
    try {
      small.Save(big, TestBytes(1 << 20, 1));
      return "1 MiB fit into 256 KiB";
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kIo || e.retryable()) return std::string("bad error: ") + e.what();
      if (!Contains(e.what(), "No space left")) return std::string("message: ") + e.what();
    }
    if (!TempFilesUnder(mnt).empty()) return "temp file left: " + TempFilesUnder(mnt)[0];
    if (small.Stat(big)) return "partial object under its final name";
    Handle ok{FileType::kPack, TestName(2)};
    small.Save(ok, TestBytes(1000, 2));  // the space of the failed save was released
    if (small.Load(ok) != TestBytes(1000, 2)) return "small object differs";
    return "";
  });
  if (result.starts_with("SKIP")) GTEST_SKIP() << result;
  EXPECT_EQ(result, "");
}

// ---- Streamed packs (NewPackStream) ------------------------------------------------------

// Appends `data` to a new stream in pieces of `piece` bytes.
std::unique_ptr<PackStream> StreamOf(Backend& be, ByteView data, size_t piece) {
  auto out = be.NewPackStream();
  for (size_t off = 0; off < data.size(); off += piece)
    out->Append(data.subspan(off, std::min(piece, data.size() - off)));
  return out;
}

TEST_F(LocalBackendTest, PackStreamIsATempFileUntilItsCommit) {
  Bytes pack = TestBytes(100000, 7);
  Handle h{FileType::kPack, TestName(1, "5a")};
  auto out = StreamOf(be_, pack, 4096);
  // Written as it comes, outside the process's memory, under a temp name nobody lists.
  std::vector<std::string> tmp = TempFilesUnder(root_);
  ASSERT_EQ(tmp.size(), 1u);
  EXPECT_TRUE(Contains(tmp[0], "/data/")) << tmp[0];
  EXPECT_TRUE(Contains(tmp[0], "pack-tmp-")) << tmp[0];
  EXPECT_EQ(fs::file_size(tmp[0]), pack.size());
  EXPECT_TRUE(ListAll(be_, FileType::kPack).empty());
  EXPECT_EQ(be_.CountStaleTempFiles(-10), 1u);  // what check reports after a crash

  out->Commit(h.name);
  EXPECT_EQ(be_.Load(h), pack);
  EXPECT_EQ(ModeOf(Path("data/5a/" + h.name)), 0400u);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
  EXPECT_EQ(ListAll(be_, FileType::kPack), (std::map<std::string, uint64_t>{{h.name, pack.size()}}));
}

TEST_F(LocalBackendTest, DroppedPackStreamLeavesNothing) {
  {
    auto out = StreamOf(be_, TestBytes(5000, 1), 1000);
  }
  EXPECT_TRUE(TempFilesUnder(root_).empty());
  EXPECT_TRUE(ListAll(be_, FileType::kPack).empty());
}

TEST_F(LocalBackendTest, PackStreamRecreatesMissingPackFolders) {
  // Copy tools drop empty folders: neither the temp file's data/XX nor the pack's exists.
  for (const auto& e : fs::directory_iterator(Path("data"))) fs::remove(e.path());
  Bytes pack = TestBytes(3000, 2);
  Handle h{FileType::kPack, TestName(1, "e7")};
  StreamOf(be_, pack, 700)->Commit(h.name);
  EXPECT_EQ(be_.Load(h), pack);
  EXPECT_EQ(ModeOf(Path("data/e7")), 0700u);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
}

TEST_F(LocalBackendTest, PackStreamCommitKeepsSavesRules) {
  Handle h{FileType::kPack, TestName(1, "0c")};
  be_.Save(h, AsBytes("0123456789"));
  // The same name and size: a retried upload of the same bytes, accepted.
  StreamOf(be_, AsBytes("0123456789"), 3)->Commit(h.name);
  // Another size under an existing name: refused, nothing replaced, nothing left behind.
  Error e = CatchError([&] { StreamOf(be_, AsBytes("0123456789a"), 4)->Commit(h.name); });
  EXPECT_EQ(e.code(), ErrorCode::kFatal);
  EXPECT_TRUE(Contains(e.what(), Path("data/0c/" + h.name))) << e.what();
  EXPECT_EQ(AsChars(be_.Load(h)), "0123456789");
  EXPECT_TRUE(TempFilesUnder(root_).empty());
  // A name that is no pack name.
  EXPECT_EQ(CatchError([&] { StreamOf(be_, AsBytes("x"), 1)->Commit("../config"); }).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
}

TEST_F(LocalBackendTest, PackStreamOnAFullDiskFailsPermanentlyAndLeavesNothing) {
  const std::string mnt = dir_.path() + "/small";
  fs::create_directory(mnt);
  std::string result = RunInChild([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0) return std::string("SKIP unshare: ") + std::strerror(errno);
    if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return std::string("SKIP private mounts: ") + std::strerror(errno);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k") != 0)
      return std::string("SKIP mount tmpfs: ") + std::strerror(errno);
    LocalBackend small(mnt + "/repo");
    small.Create();
    try {
      StreamOf(small, TestBytes(1 << 20, 1), 64 << 10)->Commit(TestName(1));
      return "1 MiB fit into 256 KiB";
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kIo || e.retryable()) return std::string("bad error: ") + e.what();
      if (!Contains(e.what(), "No space left") || !Contains(e.what(), "pack-tmp-"))
        return std::string("message: ") + e.what();
    }
    if (!TempFilesUnder(mnt).empty()) return "temp file left: " + TempFilesUnder(mnt)[0];
    if (!ListAll(small, FileType::kPack).empty()) return "a pack was stored";
    return "";
  });
  if (result.starts_with("SKIP")) GTEST_SKIP() << result;
  EXPECT_EQ(result, "");
}

TEST_F(LocalBackendTest, OnlyDecoratorsThatKeepSaveStreamPacks) {
  auto local = std::make_shared<LocalBackend>(root_);
  EXPECT_NE(local->NewPackStream(), nullptr);
  EXPECT_NE(RetryBackend(local).NewPackStream(), nullptr);
  EXPECT_NE(KillBackend(local, 1000).NewPackStream(), nullptr);
  // Their Save is not the inner one: they take whole packs.
  EXPECT_EQ(DryRunBackend(local).NewPackStream(), nullptr);
  EXPECT_EQ(LimitBackend(local, 1 << 20, 0).NewPackStream(), nullptr);
  EXPECT_EQ(FaultBackend(local).NewPackStream(), nullptr);
  EXPECT_EQ(MemBackend().NewPackStream(), nullptr);
  EXPECT_TRUE(TempFilesUnder(root_).empty());
}

// ---------------------------------------------------------------------------------------
// FaultBackend.

class FaultBackendTest : public ::testing::Test {
 protected:
  std::shared_ptr<MemBackend> mem_ = std::make_shared<MemBackend>();
  FaultBackend fault_{mem_};
};

TEST_F(FaultBackendTest, CountsCallsPerKind) {
  Handle h{FileType::kSnapshot, TestName(1)};
  fault_.Save(h, AsBytes("abc"));
  fault_.Load(h);
  fault_.Load(h, 1, 1);
  fault_.Stat(h);
  ListAll(fault_, FileType::kSnapshot);
  fault_.Remove(h);
  EXPECT_EQ(fault_.saves(), 1u);
  EXPECT_EQ(fault_.loads(), 2u);
  EXPECT_EQ(fault_.stats(), 1u);
  EXPECT_EQ(fault_.lists(), 1u);
  EXPECT_EQ(fault_.removes(), 1u);
  EXPECT_EQ(fault_.TotalCalls(), 6u);
}

TEST_F(FaultBackendTest, FailNextThenRecovers) {
  Handle h{FileType::kPack, TestName(1)};
  fault_.FailNext(FaultBackend::Op::kSave, 2);
  for (int i = 0; i < 2; ++i) {
    Error e = CatchError([&] { fault_.Save(h, AsBytes("x")); });
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_TRUE(e.retryable());
  }
  EXPECT_EQ(mem_->Size(), 0u);  // failed before reaching the inner backend
  fault_.Save(h, AsBytes("x"));
  EXPECT_EQ(mem_->Size(), 1u);
  EXPECT_EQ(fault_.saves(), 3u);
}

TEST_F(FaultBackendTest, TypeFilterAndErrorCode) {
  Handle pack{FileType::kPack, TestName(1)};
  Handle snap{FileType::kSnapshot, TestName(2)};
  mem_->Save(pack, AsBytes("p"));
  mem_->Save(snap, AsBytes("s"));
  fault_.FailNext(FaultBackend::Op::kLoad, FaultBackend::kAlways, false, ErrorCode::kCorrupt,
                  FileType::kPack);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(CatchError([&] { fault_.Load(pack); }).code(), ErrorCode::kCorrupt);
    EXPECT_EQ(AsChars(fault_.Load(snap)), "s");
  }
  fault_.ClearFaults();
  EXPECT_EQ(AsChars(fault_.Load(pack)), "p");
}

TEST_F(FaultBackendTest, FailNthCountsEveryKind) {
  Handle h{FileType::kIndex, TestName(1)};
  fault_.FailNth(3);
  fault_.Save(h, AsBytes("x"));                                           // 1
  fault_.Stat(h);                                                         // 2
  EXPECT_EQ(CatchError([&] { fault_.Load(h); }).code(), ErrorCode::kIo);  // 3
  fault_.Load(h);                                                         // 4
}

TEST_F(FaultBackendTest, FailFromStopsEverythingAfterNCalls) {
  fault_.FailFrom(3);
  fault_.Save(Handle{FileType::kPack, TestName(1)}, AsBytes("x"));
  fault_.Save(Handle{FileType::kPack, TestName(2)}, AsBytes("x"));
  for (int i = 0; i < 3; ++i) {
    Error e = CatchError([&] { fault_.Save(Handle{FileType::kPack, TestName(3 + i)}, {}); });
    EXPECT_FALSE(e.retryable());
  }
  EXPECT_EQ(CatchError([&] { ListAll(fault_, FileType::kPack); }).code(), ErrorCode::kIo);
  EXPECT_EQ(mem_->Size(), 2u);
}

TEST_F(FaultBackendTest, TruncateAndFlipLoads) {
  Bytes data = TestBytes(100, 1);
  Handle h = HandleFor(FileType::kPack, data);
  mem_->Save(h, data);
  fault_.TruncateLoads(40, 1);
  EXPECT_EQ(fault_.Load(h), Bytes(data.begin(), data.begin() + 40));
  EXPECT_EQ(fault_.Load(h), data);  // used up

  fault_.FlipLoadedByte(-1, 2);
  Bytes flipped = data;
  flipped.back() ^= 0xff;
  EXPECT_EQ(fault_.Load(h), flipped);
  Bytes range = fault_.Load(h, 10, 5);
  EXPECT_EQ(range[4], static_cast<uint8_t>(data[14] ^ 0xff));
  EXPECT_EQ(fault_.Load(h), data);
  EXPECT_EQ(mem_->Load(h), data);  // the stored object is untouched
}

TEST_F(FaultBackendTest, ListFailsMidway) {
  for (int i = 0; i < 10; ++i) mem_->Save(Handle{FileType::kSnapshot, TestName(i)}, {});
  fault_.FailListAfter(4);
  int seen = 0;
  Error e = CatchError([&] { fault_.List(FileType::kSnapshot, [&](const FileInfo&) { ++seen; }); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_EQ(seen, 4);
  EXPECT_EQ(ListAll(fault_, FileType::kSnapshot).size(), 10u);

  fault_.FailListAfter(100);  // shorter than the limit: still fails, after all entries
  seen = 0;
  CatchError([&] { fault_.List(FileType::kSnapshot, [&](const FileInfo&) { ++seen; }); });
  EXPECT_EQ(seen, 10);
}

TEST_F(FaultBackendTest, HookSeesEveryCallAndMayThrow) {
  std::vector<std::pair<FaultBackend::Op, uint64_t>> calls;
  fault_.SetHook([&](FaultBackend::Op op, uint64_t seq) {
    calls.emplace_back(op, seq);
    if (seq == 3) throw Error(ErrorCode::kInterrupted, "killed after 2 calls");
  });
  Handle h{FileType::kKey, TestName(1)};
  fault_.Save(h, AsBytes("k"));
  fault_.Stat(h);
  EXPECT_EQ(CatchError([&] { fault_.Remove(h); }).code(), ErrorCode::kInterrupted);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0], std::make_pair(FaultBackend::Op::kSave, uint64_t{1}));
  EXPECT_EQ(calls[2], std::make_pair(FaultBackend::Op::kRemove, uint64_t{3}));
  EXPECT_TRUE(mem_->Stat(h).has_value());
}

// ---------------------------------------------------------------------------------------
// RetryBackend over FaultBackend.

class RetryBackendTest : public ::testing::Test {
 protected:
  RetryOptions Options(int attempts) {
    RetryOptions o;
    o.max_attempts = attempts;
    o.base_delay = std::chrono::milliseconds(0);
    o.jitter = false;
    return o;
  }
  std::shared_ptr<MemBackend> mem_ = std::make_shared<MemBackend>();
  std::shared_ptr<FaultBackend> fault_ = std::make_shared<FaultBackend>(mem_);
};

// Storage whose requests are round trips (as S3, REST, SFTP): counts SaveFrom calls and
// the bytes its sources were read in, then saves through the default (read, then Save).
class RoundTripBackend : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  bool RoundTrips() const override { return true; }
  void SaveFrom(const Handle& h, const SaveSource& src) override {
    save_froms++;
    Backend::SaveFrom(h, src);
  }
  std::atomic<int> save_froms{0};
};

// Over remote storage a data pack is spooled to an unnamed temp file under $TMPDIR and
// uploaded from it by SaveFrom, retried as a whole (each attempt reads the file again);
// nothing is left in $TMPDIR, committed or not. A local directory keeps its own stream,
// and storage without round trips builds packs in memory.
TEST_F(RetryBackendTest, SpoolsPacksForRemoteStorageAndRetriesTheirUpload) {
  const std::string tmp = ::testing::TempDir() + "spool-" + std::to_string(::getpid());
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  auto remote = std::make_shared<RoundTripBackend>(fault_);
  RetryBackend retry(remote, Options(3));
  Bytes pack = TestBytes(3 << 20, 7);
  {
    auto stream = retry.NewPackStream();
    ASSERT_NE(stream, nullptr);
    for (size_t at = 0; at < pack.size(); at += 1 << 20)
      stream->Append(ByteView(pack).subspan(at, std::min<size_t>(1 << 20, pack.size() - at)));
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "the spool file has no name";
    fault_->FailNext(FaultBackend::Op::kSave, 2);
    stream->Commit(Sha256(pack).Hex());
  }
  EXPECT_EQ(remote->save_froms, 3);  // two failed attempts, each read the file again
  EXPECT_EQ(mem_->Load(Handle{FileType::kPack, Sha256(pack).Hex()}), pack);
  {
    auto dropped = retry.NewPackStream();
    dropped->Append(pack);
  }  // no Commit: nothing stored
  EXPECT_EQ(ListAll(*mem_, FileType::kPack).size(), 1u);
  EXPECT_TRUE(std::filesystem::is_empty(tmp));
  EXPECT_EQ(RetryBackend(fault_).NewPackStream(), nullptr);  // no round trips: in memory
  // A temp folder that cannot be written: the spool's error names it and TMPDIR, and the
  // RetryBackend gives no stream (the pack is then built in memory, the backup goes on).
  ::setenv("TMPDIR", (tmp + "/missing").c_str(), 1);
  Error e = CatchError([&] { SpoolPackStream spool(retry); });
  EXPECT_TRUE(Contains(e.what(), tmp + "/missing")) << e.what();
  EXPECT_TRUE(Contains(e.what(), "TMPDIR")) << e.what();
  EXPECT_EQ(retry.NewPackStream(), nullptr);
  if (old_tmpdir) ::setenv("TMPDIR", saved.c_str(), 1); else ::unsetenv("TMPDIR");
  std::filesystem::remove_all(tmp);
}

TEST_F(RetryBackendTest, RecoversFromTransientFailures) {
  RetryBackend retry(fault_, Options(4));
  Bytes data = TestBytes(500, 1);
  Handle h = HandleFor(FileType::kPack, data);
  fault_->FailNext(FaultBackend::Op::kSave, 3);
  retry.Save(h, data);
  EXPECT_EQ(fault_->saves(), 4u);
  fault_->FailNext(FaultBackend::Op::kLoad, 2);
  EXPECT_EQ(retry.Load(h), data);
  fault_->FailNext(FaultBackend::Op::kStat, 1);
  EXPECT_EQ(retry.Stat(h), data.size());
  fault_->FailNext(FaultBackend::Op::kExists, 1);
  EXPECT_FALSE(retry.Exists());
}

TEST_F(RetryBackendTest, GivesUpAfterMaxAttempts) {
  RetryBackend retry(fault_, Options(3));
  Handle h{FileType::kPack, TestName(1)};
  mem_->Save(h, AsBytes("x"));
  fault_->FailNext(FaultBackend::Op::kLoad, FaultBackend::kAlways);
  Error e = CatchError([&] { retry.Load(h); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_TRUE(Contains(e.what(), "gave up after 3 attempts")) << e.what();
  EXPECT_EQ(fault_->loads(), 3u);
}

TEST_F(RetryBackendTest, NeverRetriesPermanentErrors) {
  RetryBackend retry(fault_, Options(5));
  Handle h{FileType::kPack, TestName(1)};
  fault_->FailNext(FaultBackend::Op::kSave, 1, /*retryable=*/false);
  Error e = CatchError([&] { retry.Save(h, AsBytes("x")); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_FALSE(e.retryable());
  EXPECT_EQ(fault_->saves(), 1u);
  EXPECT_EQ(mem_->Size(), 0u);

  EXPECT_EQ(CatchError([&] { retry.Load(h); }).code(), ErrorCode::kNotFound);
  EXPECT_EQ(fault_->loads(), 1u);
  mem_->Save(h, AsBytes("x"));
  EXPECT_EQ(CatchError([&] { retry.Save(h, AsBytes("xy")); }).code(), ErrorCode::kFatal);
  EXPECT_EQ(fault_->saves(), 2u);
}

TEST_F(RetryBackendTest, ShortReadIsRetriedOnce) {
  RetryBackend retry(fault_, Options(5));
  Handle h{FileType::kIndex, TestName(1)};
  mem_->Save(h, AsBytes("index"));
  fault_->FailNext(FaultBackend::Op::kLoad, 1, false, ErrorCode::kCorrupt);
  EXPECT_EQ(AsChars(retry.Load(h)), "index");
  EXPECT_EQ(fault_->loads(), 2u);

  fault_->FailNext(FaultBackend::Op::kLoad, 2, false, ErrorCode::kCorrupt);
  EXPECT_EQ(CatchError([&] { retry.Load(h); }).code(), ErrorCode::kCorrupt);
  EXPECT_EQ(fault_->loads(), 4u);

  // A real short read (past the end) is also tried exactly twice.
  EXPECT_EQ(CatchError([&] { retry.Load(h, 0, 100); }).code(), ErrorCode::kCorrupt);
  EXPECT_EQ(fault_->loads(), 6u);
}

TEST_F(RetryBackendTest, SaveAndRemoveWhoseReplyWasLostSucceed) {
  RetryBackend retry(fault_, Options(3));
  Handle h{FileType::kSnapshot, TestName(1)};
  fault_->FailNextAfterInner(FaultBackend::Op::kSave);
  retry.Save(h, AsBytes("snapshot"));
  EXPECT_EQ(fault_->saves(), 2u);
  EXPECT_EQ(AsChars(mem_->Load(h)), "snapshot");

  fault_->FailNextAfterInner(FaultBackend::Op::kRemove);
  retry.Remove(h);
  EXPECT_EQ(fault_->removes(), 2u);
  EXPECT_FALSE(mem_->Stat(h));
  // Without a failed attempt before it, kNotFound is reported.
  EXPECT_EQ(CatchError([&] { retry.Remove(h); }).code(), ErrorCode::kNotFound);
}

TEST_F(RetryBackendTest, RetriedListDeliversEachEntryOnce) {
  RetryBackend retry(fault_, Options(3));
  for (int i = 0; i < 10; ++i) mem_->Save(Handle{FileType::kSnapshot, TestName(i)}, {});
  fault_->FailListAfter(4);
  std::vector<std::string> names;
  retry.List(FileType::kSnapshot, [&](const FileInfo& fi) { names.push_back(fi.name); });
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 10u);
  EXPECT_EQ(fault_->lists(), 2u);

  fault_->FailNext(FaultBackend::Op::kList, FaultBackend::kAlways);
  EXPECT_EQ(CatchError([&] { ListAll(retry, FileType::kSnapshot); }).code(), ErrorCode::kIo);
}

TEST_F(RetryBackendTest, CallbackErrorsAreNotRetried) {
  RetryBackend retry(fault_, Options(5));
  mem_->Save(Handle{FileType::kLock, TestName(1)}, {});
  Error e = CatchError([&] {
    retry.List(FileType::kLock, [](const FileInfo&) {
      Fail(ErrorCode::kIo, "callback failed", /*retryable=*/true);
    });
  });
  EXPECT_STREQ(e.what(), "callback failed");
  EXPECT_EQ(fault_->lists(), 1u);
}

// Streams a MemBackend's bytes in pieces of `piece` bytes; the first call fails (retryable)
// after delivering `fail_after` bytes. Records each call's range.
class FlakyStream : public ForwardingBackend {
 public:
  FlakyStream(std::shared_ptr<Backend> inner, size_t piece, uint64_t fail_after)
      : ForwardingBackend(std::move(inner)), piece_(piece), fail_after_(fail_after) {}
  void LoadStream(const Handle& h, uint64_t offset, uint64_t length,
                  const std::function<void(ByteView)>& sink) override {
    calls.emplace_back(offset, length);
    Bytes all = inner_->Load(h, offset, length);
    for (size_t at = 0; at < all.size(); at += piece_) {
      if (calls.size() == 1 && at >= fail_after_) Fail(ErrorCode::kIo, "connection reset", true);
      sink(ByteView(all).subspan(at, std::min(piece_, all.size() - at)));
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> calls;

 private:
  const size_t piece_;
  const uint64_t fail_after_;
};

TEST_F(RetryBackendTest, RetriedStreamResumesAfterTheBytesDelivered) {
  Bytes data = TestBytes(1000, 7);
  Handle h = HandleFor(FileType::kPack, data);
  mem_->Save(h, data);
  auto flaky = std::make_shared<FlakyStream>(mem_, 64, 300);
  RetryBackend retry(flaky, Options(3));
  Bytes got;
  retry.LoadStream(h, 100, 800, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
  EXPECT_EQ(got, Bytes(data.begin() + 100, data.begin() + 900));
  ASSERT_EQ(flaky->calls.size(), 2u);
  EXPECT_EQ(flaky->calls[1], std::make_pair(uint64_t{100 + 320}, uint64_t{800 - 320}));

  // What the sink throws is not retried, even a retryable error.
  auto flaky2 = std::make_shared<FlakyStream>(mem_, 64, 1 << 20);
  RetryBackend retry2(flaky2, Options(3));
  Error e = CatchError([&] {
    retry2.LoadStream(h, 0, 1000, [](ByteView) { Fail(ErrorCode::kIo, "sink failed", true); });
  });
  EXPECT_STREQ(e.what(), "sink failed");
  EXPECT_EQ(flaky2->calls.size(), 1u);

  // The default LoadStream (through Load) delivers the range whole, and short reads fail.
  got.clear();
  mem_->LoadStream(h, 10, 20, [&](ByteView p) { got.insert(got.end(), p.begin(), p.end()); });
  EXPECT_EQ(got, Bytes(data.begin() + 10, data.begin() + 30));
  EXPECT_EQ(CatchError([&] { mem_->LoadStream(h, 990, 20, [](ByteView) {}); }).code(),
            ErrorCode::kCorrupt);
}

TEST_F(RetryBackendTest, BackoffDoublesUpToTheCap) {
  RetryOptions o;
  o.max_attempts = 10;
  o.base_delay = std::chrono::milliseconds(10);
  o.max_delay = std::chrono::milliseconds(50);
  o.jitter = false;
  std::vector<int64_t> slept;
  std::vector<std::string> reports;
  o.sleep = [&](std::chrono::milliseconds d) { slept.push_back(d.count()); };
  o.on_retry = [&](const std::string& what, const Error&, int attempt, std::chrono::milliseconds) {
    reports.push_back(what + " #" + std::to_string(attempt));
  };
  RetryBackend retry(fault_, o);
  Handle h{FileType::kSnapshot, TestName(1)};
  fault_->FailNext(FaultBackend::Op::kStat, 5);
  EXPECT_EQ(retry.Stat(h), std::nullopt);
  EXPECT_EQ(slept, (std::vector<int64_t>{10, 20, 40, 50, 50}));
  ASSERT_EQ(reports.size(), 5u);
  EXPECT_EQ(reports[0], "stat snapshots/" + h.name + " #1");

  o.jitter = true;
  RetryBackend jittered(fault_, o);
  slept.clear();
  fault_->FailNext(FaultBackend::Op::kStat, 3);
  jittered.Stat(h);
  ASSERT_EQ(slept.size(), 3u);
  for (size_t i = 0; i < slept.size(); ++i) {
    EXPECT_GE(slept[i], 5 << i);
    EXPECT_LE(slept[i], 10 << i);
  }
}

TEST_F(RetryBackendTest, RecoversOverLocalBackend) {
  TempDir dir;
  auto local = std::make_shared<LocalBackend>(dir.path() + "/repo");
  local->Create();
  auto fault = std::make_shared<FaultBackend>(local);
  RetryBackend retry(fault, Options(3));
  Bytes data = TestBytes(2000, 3);
  Handle h = HandleFor(FileType::kPack, data);
  fault->FailNextAfterInner(FaultBackend::Op::kSave);  // the file landed, the reply did not
  retry.Save(h, data);
  fault->TruncateLoads(10, 1);
  EXPECT_EQ(retry.Load(h, 0, 10).size(), 10u);
  EXPECT_EQ(retry.Load(h), data);
  EXPECT_TRUE(TempFilesUnder(dir.path()).empty());
}

TEST(BackendNamesTest, TypesHandlesAndNames) {
  EXPECT_STREQ(FileTypeDir(FileType::kConfig), "");
  EXPECT_STREQ(FileTypeDir(FileType::kKey), "keys");
  EXPECT_STREQ(FileTypeDir(FileType::kLock), "locks");
  EXPECT_STREQ(FileTypeDir(FileType::kSnapshot), "snapshots");
  EXPECT_STREQ(FileTypeDir(FileType::kIndex), "index");
  EXPECT_STREQ(FileTypeDir(FileType::kPack), "data");
  EXPECT_STREQ(FileTypeName(FileType::kPack), "pack");
  EXPECT_STREQ(FileTypeName(FileType::kKey), "key");
  const std::string n = TestName(1, "ab");
  EXPECT_EQ((Handle{FileType::kPack, n}.ToString()), "data/ab/" + n);
  EXPECT_EQ((Handle{FileType::kIndex, n}.ToString()), "index/" + n);
  EXPECT_EQ((Handle{FileType::kConfig, ""}.ToString()), "config");
  EXPECT_TRUE(IsValidObjectName(n));
  EXPECT_FALSE(IsValidObjectName(n.substr(1)));
  EXPECT_FALSE(IsValidObjectName("AB" + n.substr(2)));
  EXPECT_FALSE(IsValidObjectName(n.substr(0, 63) + "g"));
}

}  // namespace
}  // namespace haven

namespace haven {
namespace {

// --limit-upload / --limit-download: 1 MiB through a 512 KiB/s bucket that starts full
// takes about one second (the first 512 KiB pass at once), in each direction.
TEST(LimitBackendTest, KeepsEachDirectionUnderItsRate) {
  auto mem = std::make_shared<MemBackend>();
  LimitBackend be(mem, 512, 512);
  Bytes chunk(256 * 1024, 7);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) be.Save(Handle{FileType::kPack, TestName(i, "ab")}, chunk);
  double up = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(up, 0.9);
  EXPECT_LT(up, 3.0);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(be.Load(Handle{FileType::kPack, TestName(i, "ab")}), chunk);
  double down = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(down, 0.9);
  EXPECT_LT(down, 3.0);
  // Unlimited directions and metadata calls do not wait.
  LimitBackend free(mem, 0, 0);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) free.Load(Handle{FileType::kPack, TestName(i, "ab")});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
}

// A Save that fails before its bytes went out (the server is gone) costs no wait: under a
// 64 KiB/s limit, ten failed 1 MiB saves take no time, where paying up front would have
// held each back ~16 s (integration.rest_bad_input: a backup's retries of its packs must
// give up in time). A save that succeeds is still paid in full.
TEST(LimitBackendTest, AFailedSaveIsNotPaidFor) {
  auto mem = std::make_shared<MemBackend>();
  auto faulty = std::make_shared<FaultBackend>(mem);
  LimitBackend be(faulty, 64, 0);
  Bytes pack(1 << 20, 3);
  faulty->FailNext(FaultBackend::Op::kSave, 10);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i)
    EXPECT_THROW(be.Save(Handle{FileType::kPack, TestName(i, "cd")}, pack), Error);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
  LimitBackend small(mem, 256, 0);
  Bytes half(384 << 10, 4);
  t0 = std::chrono::steady_clock::now();
  small.Save(Handle{FileType::kPack, TestName(1, "cd")}, half);
  small.Save(Handle{FileType::kPack, TestName(2, "cd")}, half);  // waits for the first
  EXPECT_GT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.6);
}

}  // namespace
}  // namespace haven
