// BoxBackend: the conformance suite, then the box's own rules (docs/box.md): one
// transaction per command, snapshot reads, space returned after removals, parts, and
// files that are not boxes.
#include "backend/box_backend.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend_conformance_test.h"
#include "core/error.h"

namespace haven {
namespace {

namespace fs = std::filesystem;
using namespace conformance;  // NOLINT: the suite's helpers

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "haven_box_XXXXXX";
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

struct BoxEnv {
  static constexpr const char* kName = "Box";
  TempDir dir;
  BoxBackend backend{dir.path() + "/repo.hbox"};
  BoxEnv() { backend.Create(); }
};

// Small pages and parts, so that objects of the suite span several parts.
struct SmallPartBoxEnv {
  static constexpr const char* kName = "BoxSmallParts";
  TempDir dir;
  BoxBackend backend{dir.path() + "/repo.hbox", BoxOptions{4096, 4096}};
  SmallPartBoxEnv() { backend.Create(); }
};

// Every write transaction holds the box alone (BoxOptions::alone: rollback journal).
struct AloneBoxEnv {
  static constexpr const char* kName = "BoxAlone";
  TempDir dir;
  BoxBackend backend{dir.path() + "/repo.hbox", BoxOptions{.alone = true}};
  AloneBoxEnv() { backend.Create(); }
};

using BoxEnvs = ::testing::Types<BoxEnv, SmallPartBoxEnv, AloneBoxEnv>;
INSTANTIATE_TYPED_TEST_SUITE_P(Box, BackendConformanceTest, BoxEnvs, EnvNames);

const Handle kConfig{FileType::kConfig, "config"};

class BoxBackendTest : public ::testing::Test {
 protected:
  std::string Path() const { return dir_.path() + "/b.hbox"; }
  std::unique_ptr<BoxBackend> Open(BoxOptions o = {}) {
    return std::make_unique<BoxBackend>(Path(), o);
  }
  // A box with a config, committed.
  void MakeBox(BoxOptions o = {}) {
    auto b = Open(o);
    b->Create();
    b->Save(kConfig, AsBytes("cfg"));
    b->Commit();
  }
  uint64_t FileSize() const { return fs::file_size(Path()); }
  TempDir dir_;
};

TEST_F(BoxBackendTest, MissingFileIsNoRepositoryAndIsNotCreated) {
  auto b = Open();
  EXPECT_FALSE(b->Exists());
  EXPECT_EQ(b->Stat(Handle{FileType::kPack, TestName(1)}), std::nullopt);
  EXPECT_FALSE(fs::exists(Path()));
}

TEST_F(BoxBackendTest, ChangesAreInvisibleToOthersUntilCommit) {
  MakeBox();
  auto writer = Open();
  Bytes data = TestBytes(3000, 1);
  Handle h = HandleFor(FileType::kPack, data);
  writer->Save(h, data);
  EXPECT_TRUE(writer->HasChanges());
  {
    auto reader = Open();
    EXPECT_TRUE(reader->Exists());
    EXPECT_EQ(reader->Stat(h), std::nullopt);
  }
  writer->Commit();
  EXPECT_FALSE(writer->HasChanges());
  auto reader = Open();
  EXPECT_EQ(reader->Load(h), data);
}

TEST_F(BoxBackendTest, ReaderKeepsItsStateWhileAnotherProcessCommits) {
  MakeBox();
  auto reader = Open();
  EXPECT_TRUE(reader->Exists());  // the read transaction starts here
  Bytes data = TestBytes(100, 2);
  Handle h = HandleFor(FileType::kSnapshot, data);
  {
    auto writer = Open();
    writer->Save(h, data);
    writer->Commit();
  }
  EXPECT_EQ(reader->Stat(h), std::nullopt);
  EXPECT_TRUE(ListAll(*reader, FileType::kSnapshot).empty());
  // A reader that wants to write now would act on an old state: refused.
  Error e = CatchError([&] { reader->Save(HandleFor(FileType::kIndex, data), data); });
  EXPECT_EQ(e.code(), ErrorCode::kLocked) << e.what();
}

// Reads of a process that has not written run on the pool of read connections, from many
// threads at once; every one sees the command's state, also after another process commits.
TEST_F(BoxBackendTest, ParallelReadsKeepTheCommandsState) {
  MakeBox();
  constexpr int kThreads = 6, kReps = 15;
  std::vector<Bytes> data;
  std::vector<Handle> handles;
  {
    auto w = Open();
    for (int i = 0; i < kThreads; ++i) {
      data.push_back(TestBytes(300000 + size_t(i), 20 + i));
      handles.push_back(HandleFor(FileType::kPack, data.back()));
      w->Save(handles.back(), data.back());
    }
    w->Commit();
  }
  auto reader = Open();
  Bytes late = TestBytes(5000, 40);
  Handle late_h = HandleFor(FileType::kPack, late);
  std::atomic<int> bad{0}, unseen{0};
  auto read_all = [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&, t] {
        for (int rep = 0; rep < kReps; ++rep) {
          Bytes got(data[t].size() - 1000);
          reader->LoadInto(handles[t], 1000, got);
          if (got != Bytes(data[t].begin() + 1000, data[t].end())) bad++;
          if (reader->Load(handles[(t + 1) % kThreads]) != data[(t + 1) % kThreads]) bad++;
          if (CatchError([&] { reader->Load(late_h); }).code() == ErrorCode::kNotFound) unseen++;
        }
      });
    for (auto& t : ts) t.join();
  };
  read_all();
  {
    auto w = Open();
    w->Save(late_h, late);
    w->Commit();
  }
  read_all();  // readers opened now see the newer state: they must not be used
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(unseen.load(), 2 * kThreads * kReps);
  EXPECT_EQ(reader->Stat(late_h), std::nullopt);
}

TEST_F(BoxBackendTest, SecondWriterIsRefusedWhileTheFirstWrites) {
  MakeBox();
  auto a = Open();
  auto b = Open();
  EXPECT_TRUE(b->Exists());
  a->Save(Handle{FileType::kKey, TestName(1)}, AsBytes("k1"));
  Error e = CatchError([&] { b->Save(Handle{FileType::kKey, TestName(2)}, AsBytes("k2")); });
  EXPECT_EQ(e.code(), ErrorCode::kLocked);
  EXPECT_NE(std::string(e.what()).find(Path()), std::string::npos) << e.what();
  a->Commit();
}

TEST_F(BoxBackendTest, DestructionCommitsUnlessAnExceptionIsInFlight) {
  MakeBox();
  Handle kept{FileType::kKey, TestName(1)}, dropped{FileType::kKey, TestName(2)};
  {
    auto b = Open();
    b->Save(kept, AsBytes("kept"));
  }
  try {
    auto b = Open();
    b->Save(dropped, AsBytes("dropped"));
    throw std::runtime_error("command failed");
  } catch (const std::runtime_error&) {
  }
  auto b = Open();
  EXPECT_EQ(AsChars(b->Load(kept)), "kept");
  EXPECT_EQ(b->Stat(dropped), std::nullopt);
}

TEST_F(BoxBackendTest, RollbackDropsEverythingSinceTheFirstWrite) {
  MakeBox();
  auto b = Open();
  Handle h{FileType::kIndex, TestName(3)};
  b->Save(h, AsBytes("x"));
  b->Remove(kConfig);
  b->Rollback();
  EXPECT_TRUE(b->Exists());
  EXPECT_EQ(b->Stat(h), std::nullopt);
}

TEST_F(BoxBackendTest, LockFilesStayInTheProcess) {
  MakeBox();
  auto a = Open();
  Handle lock{FileType::kLock, TestName(5)};
  a->Save(lock, AsBytes("{}"));
  EXPECT_EQ(ListAll(*a, FileType::kLock).size(), 1u);
  EXPECT_FALSE(a->HasChanges());  // a lock opens no write transaction
  auto b = Open();
  EXPECT_TRUE(ListAll(*b, FileType::kLock).empty());
  a->Remove(lock);
  EXPECT_TRUE(ListAll(*a, FileType::kLock).empty());
}

// The checkpoint runs right after the commit of a write, not inside it (no automatic
// checkpoint) and not only at close: while the backend is still open the box file itself
// holds the data, and the commit's timings give the checkpoint its own share.
TEST_F(BoxBackendTest, CommitCheckpointsIntoTheFileAndTimesItApart) {
  MakeBox();
  auto b = Open();
  const uint64_t before = FileSize();
  for (int i = 0; i < 6; ++i) {
    Bytes data = TestBytes(4 << 20, 40 + i);
    b->Save(HandleFor(FileType::kPack, data), data);
  }
  EXPECT_LT(FileSize(), before + (1u << 20));  // nothing in the file before the commit
  b->Commit();
  EXPECT_GE(FileSize(), before + (24u << 20));
  const BoxBackend::CommitTimes t = b->LastCommitTimes();
  EXPECT_GT(t.commit, 0.0);
  EXPECT_GT(t.checkpoint, 0.0);
}

// A command that returns without calling Commit() commits in the destructor, and that
// path checkpoints too: with another process's connection open (so the close is not the
// last one, which would checkpoint anyway) the data is in the box file afterwards. Before,
// a WAL under the automatic checkpoint's 1000 pages stayed in the -wal file.
TEST_F(BoxBackendTest, DestructorCommitCheckpointsWhileOthersHaveTheBoxOpen) {
  MakeBox();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open_v2(Path().c_str(), &other, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "SELECT count(*) FROM files", nullptr, nullptr, nullptr),
            SQLITE_OK);  // attached to the WAL index, no transaction left open
  const uint64_t before = FileSize();
  {
    auto b = Open();
    for (int i = 0; i < 6; ++i) {
      Bytes data = TestBytes(4 << 20, 60 + i);
      b->Save(HandleFor(FileType::kPack, data), data);
    }
  }
  EXPECT_GE(FileSize(), before + (24u << 20));
  sqlite3_close_v2(other);
}

// ---- BoxOptions::alone (docs/box.md §3) ----

// The journal mode stored in the box file, read by a connection of its own.
std::string JournalModeOf(const std::string& path) {
  sqlite3* db = nullptr;
  std::string mode;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      mode = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
  }
  sqlite3_close_v2(db);
  return mode;
}

// SQLite's result of one read by another connection that does not wait for locks.
int ReadWithoutWaiting(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, "SELECT count(*) FROM files", nullptr, nullptr, nullptr);
  sqlite3_close_v2(db);
  return rc & 0xff;
}

uint64_t SizeOrZero(const std::string& path) {
  std::error_code ec;
  uint64_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// Held alone, a transaction's pages go straight into the box file (the WAL does not grow
// with them), nobody else reads meanwhile, and after the commit the box is one file in
// WAL mode again with every object in it.
TEST_F(BoxBackendTest, AloneWritesIntoTheFileOnceAndEndsInWalMode) {
  MakeBox();
  std::vector<std::pair<Handle, Bytes>> saved;
  {
    auto b = Open(BoxOptions{.alone = true});
    for (int i = 0; i < 12; ++i) {  // 48 MiB: more than the 32 MiB page cache holds
      Bytes data = TestBytes(4 << 20, 80 + i);
      saved.emplace_back(HandleFor(FileType::kPack, data), data);
      b->Save(saved.back().first, data);
    }
    EXPECT_LT(SizeOrZero(Path() + "-wal"), 1u << 20);
    EXPECT_GT(FileSize(), 8u << 20);  // spilled into the file itself
    EXPECT_EQ(ReadWithoutWaiting(Path()), SQLITE_BUSY);
    b->Commit();
    EXPECT_EQ(ReadWithoutWaiting(Path()), SQLITE_OK);  // released at the commit
    EXPECT_FALSE(fs::exists(Path() + "-journal"));
  }
  EXPECT_EQ(JournalModeOf(Path()), "wal");
  EXPECT_FALSE(fs::exists(Path() + "-wal"));
  EXPECT_FALSE(fs::exists(Path() + "-shm"));
  auto r = Open();
  for (const auto& [h, data] : saved) EXPECT_EQ(r->Load(h), data);
}

// Another connection has the box open: the command runs in WAL mode beside it (the WAL
// grows, the other reads on), as every command did before.
TEST_F(BoxBackendTest, AloneFallsBackToWalWhileOthersHaveTheBoxOpen) {
  MakeBox();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open_v2(Path().c_str(), &other, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "SELECT count(*) FROM files", nullptr, nullptr, nullptr),
            SQLITE_OK);
  Bytes data = TestBytes(40 << 20, 99);
  Handle h = HandleFor(FileType::kPack, data);
  {
    auto b = Open(BoxOptions{.alone = true});
    b->Save(h, data);
    EXPECT_GT(SizeOrZero(Path() + "-wal"), 8u << 20);
    EXPECT_EQ(sqlite3_exec(other, "SELECT count(*) FROM files", nullptr, nullptr, nullptr),
              SQLITE_OK);
    b->Commit();
  }
  sqlite3_close_v2(other);
  EXPECT_EQ(JournalModeOf(Path()), "wal");
  EXPECT_EQ(Open()->Load(h), data);
}

// A reader that comes while the box is held waits for the commit (busy timeout) and then
// sees the committed state.
TEST_F(BoxBackendTest, ReaderWaitsForTheCommitOfAHeldBox) {
  MakeBox();
  auto a = Open(BoxOptions{.alone = true});
  Bytes data = TestBytes(1 << 20, 98);
  Handle h = HandleFor(FileType::kPack, data);
  a->Save(h, data);
  std::thread committer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    a->Commit();
  });
  struct Join {
    std::thread& t;
    ~Join() { t.join(); }  // also when the read below throws
  } join{committer};
  auto r = Open();
  EXPECT_EQ(r->Load(h), data);
}

TEST_F(BoxBackendTest, AloneRollbackLeavesThePreviousStateInWalMode) {
  MakeBox();
  Handle h{FileType::kIndex, TestName(4)};
  {
    auto b = Open(BoxOptions{.alone = true});
    b->Save(h, AsBytes("x"));
    b->Remove(kConfig);
    b->Rollback();
    EXPECT_TRUE(b->Exists());
    EXPECT_EQ(b->Stat(h), std::nullopt);
  }
  EXPECT_EQ(JournalModeOf(Path()), "wal");
  EXPECT_FALSE(fs::exists(Path() + "-journal"));
  EXPECT_TRUE(Open()->Exists());
}

// A process that held the box alone and died between its commit and the switch back
// leaves the box in rollback-journal mode (and a journal whose header says "done"): the
// next command that opens it switches it back to WAL mode and reads everything.
TEST_F(BoxBackendTest, BoxLeftInRollbackModeGoesBackToWal) {
  MakeBox();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(Path().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close_v2(db);
  }
  ASSERT_EQ(JournalModeOf(Path()), "delete");
  {
    auto b = Open();
    EXPECT_TRUE(b->Exists());
    EXPECT_EQ(AsChars(b->Load(kConfig)), "cfg");
  }
  EXPECT_EQ(JournalModeOf(Path()), "wal");
}

TEST_F(BoxBackendTest, RemovedSpaceIsReturnedAtCommit) {
  MakeBox();
  std::vector<Handle> hs;
  {
    auto b = Open();
    for (int i = 0; i < 8; ++i) {
      Bytes data = TestBytes(2 << 20, 10 + i);
      hs.push_back(HandleFor(FileType::kPack, data));
      b->Save(hs.back(), data);
    }
    b->Commit();
  }
  uint64_t full = FileSize();
  EXPECT_GT(full, 16u << 20);
  {
    auto b = Open();
    for (const Handle& h : hs) b->Remove(h);
    b->Commit();
    EXPECT_EQ(b->PageCounts().second, 0u);  // no free pages left in the file
  }
  // The last connection's close checkpoints the WAL into the file and truncates it.
  EXPECT_LT(FileSize(), 1u << 20) << "was " << full;
  EXPECT_FALSE(fs::exists(Path() + "-wal"));
}

// Removed objects leave no trace of their bytes in the box file (a removed key file must
// not stay readable to whoever knows its old password): secure_delete is FAST, so cells
// are zeroed where they lie, and the incremental vacuum at the commit must put a moved page
// or the end of the file over every overflow page they held, also when other objects come
// after them. (With secure_delete OFF the start of the big object stayed in its leaf.)
TEST_F(BoxBackendTest, RemovedBytesDoNotStayInTheFile) {
  MakeBox();
  const std::string marker = "haven-box-removed-object-marker-";
  Bytes secret;
  while (secret.size() < (3u << 20)) secret.insert(secret.end(), marker.begin(), marker.end());
  Handle gone = HandleFor(FileType::kPack, secret);
  Bytes small(secret.begin(), secret.begin() + 4 * static_cast<long>(marker.size()));
  Handle gone_key = HandleFor(FileType::kKey, small);
  std::vector<std::pair<Handle, Bytes>> kept;
  {
    auto b = Open();
    b->Save(gone_key, small);
    b->Save(gone, secret);
    for (int i = 0; i < 3; ++i) {  // after the removed one in the file
      Bytes data = TestBytes(2 << 20, 120 + i);
      kept.emplace_back(HandleFor(FileType::kPack, data), data);
      b->Save(kept.back().first, data);
    }
    b->Commit();
    b->Remove(gone);
    b->Remove(gone_key);
    b->Commit();
  }
  std::ifstream f(Path(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find(marker), std::string::npos);
  auto r = Open();
  EXPECT_EQ(r->Stat(gone), std::nullopt);
  EXPECT_EQ(r->Stat(gone_key), std::nullopt);
  for (const auto& [h, data] : kept) EXPECT_EQ(r->Load(h), data);
}

TEST_F(BoxBackendTest, ObjectsSpanPartsAndRangesCrossThem) {
  MakeBox();
  auto b = Open(BoxOptions{4096, 4096});
  Bytes data = TestBytes(4096 * 3 + 17, 3);
  Handle h = HandleFor(FileType::kPack, data);
  b->Save(h, data);
  for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 0}, {4095, 2}, {4096, 4096}, {100, 4096 * 2 + 3000}, {4096 * 3, 17}, {12000, 0}}) {
    Bytes want(data.begin() + long(off), len ? data.begin() + long(off + len) : data.end());
    EXPECT_EQ(b->Load(h, off, len), want) << off << "+" << len;
  }
}

// Writes `sql` into a plain SQLite file at path (a box made by someone else).
void MakeSqlite(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(BoxBackendTest, ForeignSqliteFileIsRefused) {
  MakeSqlite(Path(), "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  Error e = CatchError([&] { Open()->Exists(); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt);
  EXPECT_NE(std::string(e.what()).find("not a haven box"), std::string::npos) << e.what();
}

TEST_F(BoxBackendTest, GarbageFileIsRefused) {
  std::ofstream(Path()) << std::string(8192, 'x');
  Error e = CatchError([&] { Open()->Exists(); });
  EXPECT_NE(e.code(), ErrorCode::kNotFound) << e.what();
}

TEST_F(BoxBackendTest, BoxWithTriggersIsRefused) {
  MakeBox();
  MakeSqlite(Path(),
             "CREATE TRIGGER t AFTER INSERT ON files BEGIN DELETE FROM files; END;");
  Error e = CatchError([&] { Open()->Exists(); });
  EXPECT_EQ(e.code(), ErrorCode::kCorrupt) << e.what();
}

TEST_F(BoxBackendTest, DamagedRowsAreCorruptNotCrashes) {
  MakeBox(BoxOptions{4096, 4096});
  Bytes data = TestBytes(10000, 4);
  Handle h = HandleFor(FileType::kPack, data);
  {
    auto b = Open(BoxOptions{4096, 4096});
    b->Save(h, data);
    b->Commit();
  }
  // A part cut short, then a part missing, then a size larger than the parts.
  MakeSqlite(Path(), "UPDATE parts SET data = substr(data, 1, 100) WHERE id % 16777216 = 1");
  EXPECT_EQ(CatchError([&] { Open()->Load(h); }).code(), ErrorCode::kCorrupt);
  MakeSqlite(Path(), "DELETE FROM parts WHERE id % 16777216 = 1");
  EXPECT_EQ(CatchError([&] { Open()->Load(h, 5000, 10); }).code(), ErrorCode::kCorrupt);
  MakeSqlite(Path(), "UPDATE files SET part_size = 0");
  EXPECT_EQ(CatchError([&] { Open()->Load(h); }).code(), ErrorCode::kCorrupt);
}

TEST_F(BoxBackendTest, CompactShrinksAndKeepsObjects) {
  MakeBox();
  Bytes data = TestBytes(1 << 20, 6);
  Handle h = HandleFor(FileType::kPack, data);
  auto b = Open();
  b->Save(h, data);
  b->Commit();
  b->Compact();
  EXPECT_EQ(b->Load(h), data);
}

}  // namespace
}  // namespace haven
