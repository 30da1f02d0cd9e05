#include "repo/lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "backend/mem_backend.h"
#include "core/error.h"
#include "repo/host_info.h"
#include "repo/repository.h"

namespace haven {
namespace {

std::unique_ptr<Repository> NewRepo(int version = 2) {
  auto be = std::make_shared<MemBackend>();
  Repository::Init(*be, "pw", version, crypto::ScryptParams{1024, 8, 1}, 1);
  return Repository::Open(be, "pw", 1);
}

// A pid that belonged to a process which has exited and been reaped.
pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  EXPECT_GT(pid, 0);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return pid;
}

LockInfo Info(int64_t age_seconds, const std::string& host, int64_t pid, bool exclusive = false) {
  LockInfo l;
  l.time = NowLocal();
  l.time.sec -= age_seconds;
  l.exclusive = exclusive;
  l.hostname = host;
  l.username = "tester";
  l.pid = pid;
  return l;
}

// Saves a lock file as its writer would have: the storage got it at the lock's own time
// (both clocks right), so its age is the same by either clock.
FileId SaveLock(Repository& repo, const LockInfo& info) {
  auto* mem = dynamic_cast<MemBackend*>(&repo.backend());
  EXPECT_NE(mem, nullptr);
  mem->set_clock([t = info.time.sec] { return t; });
  FileId id = repo.SaveJson(FileType::kLock, info.ToJson());
  mem->set_clock(nullptr);
  return id;
}

size_t LockCount(Repository& repo) { return repo.ListIds(FileType::kLock).size(); }

ErrorCode CodeOf(const std::function<void()>& fn, std::string* what = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (what) *what = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorCode::kFatal;
}

TEST(LockInfo, JsonRoundTrip) {
  LockInfo l;
  l.time = {1795997775, 727379653, 0};
  l.exclusive = false;
  l.hostname = "vm";
  l.username = "root";
  l.pid = 25858;
  // restic's real shape: uid/gid omitted when 0.
  EXPECT_EQ(l.ToJson(),
            R"({"time":"2026-11-30T00:16:15.727379653Z","exclusive":false,"hostname":"vm",)"
            R"("username":"root","pid":25858})");
  l.exclusive = true;
  l.uid = 1000;
  l.gid = 100;
  l.time.offset = -5 * 3600;
  l.hostname = "h\"<2>";
  const std::string json = l.ToJson();
  EXPECT_NE(json.find(R"("exclusive":true)"), std::string::npos);
  EXPECT_NE(json.find(R"("uid":1000,"gid":100})"), std::string::npos);
  LockInfo back = LockInfo::Parse(json, "x");
  EXPECT_EQ(back.time, l.time);
  EXPECT_EQ(back.exclusive, true);
  EXPECT_EQ(back.hostname, l.hostname);
  EXPECT_EQ(back.username, "root");
  EXPECT_EQ(back.pid, 25858);
  EXPECT_EQ(back.uid, 1000u);
  EXPECT_EQ(back.gid, 100u);
  EXPECT_EQ(back.ToJson(), json);
  EXPECT_NE(back.Describe().find("PID 25858 on h\"<2> by root"), std::string::npos);
}

TEST(LockInfo, ParseErrors) {
  EXPECT_EQ(CodeOf([] { LockInfo::Parse("{", "bad"); }), ErrorCode::kCorrupt);
  std::string what;
  CodeOf([] { LockInfo::Parse("", "abc"); }, &what);
  EXPECT_NE(what.find("lock abc"), std::string::npos);
  // Missing fields default (an unparsable time reads as very old: stale).
  LockInfo l = LockInfo::Parse(R"({"pid":5,"time":"garbage"})", "x");
  EXPECT_EQ(l.pid, 5);
  EXPECT_EQ(l.time.sec, 0);
  EXPECT_TRUE(l.IsStale());
}

TEST(LockInfo, StaleByAge) {
  EXPECT_TRUE(Info(31 * 60, "some-other-host", getpid()).IsStale());
  EXPECT_TRUE(Info(31 * 60, HostName(), getpid()).IsStale());
  EXPECT_FALSE(Info(29 * 60, "some-other-host", getpid()).IsStale());
  EXPECT_FALSE(Info(29 * 60, HostName(), getpid()).IsStale());
}

TEST(LockInfo, StaleByDeadProcessOnThisHostOnly) {
  const pid_t dead = DeadPid();
  EXPECT_TRUE(Info(0, HostName(), dead).IsStale());
  EXPECT_FALSE(Info(0, HostName(), getpid()).IsStale());
  EXPECT_FALSE(Info(0, HostName(), 1).IsStale());  // init exists (maybe not ours to signal)
  // Another host: the pid means nothing here, so only age counts.
  EXPECT_FALSE(Info(0, HostName() + "-other", dead).IsStale());
  EXPECT_FALSE(Info(0, "other-host.example", dead).IsStale());
}

TEST(Lock, SharedLocksCoexist) {
  auto repo = NewRepo();
  auto a = Lock::Acquire(*repo, false);
  auto b = Lock::Acquire(*repo, false);
  EXPECT_EQ(LockCount(*repo), 2u);
  // The lock files are unpacked files with this process's details.
  for (const FileId& id : repo->ListIds(FileType::kLock)) {
    LockInfo l = LockInfo::Parse(repo->LoadJson(FileType::kLock, id), id.Hex());
    EXPECT_FALSE(l.exclusive);
    EXPECT_EQ(l.pid, getpid());
    EXPECT_EQ(l.hostname, HostName());
    EXPECT_FALSE(l.IsStale());
  }
  a.reset();
  EXPECT_EQ(LockCount(*repo), 1u);
  b.reset();
  EXPECT_EQ(LockCount(*repo), 0u);
}

TEST(Lock, ExclusiveConflictsWithShared) {
  auto repo = NewRepo();
  auto shared = Lock::Acquire(*repo, false);
  std::string what;
  EXPECT_EQ(CodeOf([&] { Lock::Acquire(*repo, true); }, &what), ErrorCode::kLocked);
  EXPECT_NE(what.find("already locked"), std::string::npos) << what;
  EXPECT_NE(what.find("PID " + std::to_string(getpid())), std::string::npos) << what;
  EXPECT_EQ(LockCount(*repo), 1u);  // the failed attempt left nothing behind
  shared.reset();
  auto ex = Lock::Acquire(*repo, true);
  EXPECT_EQ(LockCount(*repo), 1u);
}

TEST(Lock, SharedConflictsWithExclusive) {
  auto repo = NewRepo();
  auto ex = Lock::Acquire(*repo, true);
  std::string what;
  EXPECT_EQ(CodeOf([&] { Lock::Acquire(*repo, false); }, &what), ErrorCode::kLocked);
  EXPECT_NE(what.find("exclusively"), std::string::npos) << what;
  EXPECT_EQ(CodeOf([&] { Lock::Acquire(*repo, true); }), ErrorCode::kLocked);
  EXPECT_EQ(LockCount(*repo), 1u);
  ex.reset();
  EXPECT_EQ(LockCount(*repo), 0u);
  auto s = Lock::Acquire(*repo, false);
  EXPECT_EQ(LockCount(*repo), 1u);
}

// AcquireOverlapped returns once its file is written; the conflict comes at Confirm (or at
// the first commit's CheckHeld), which removes that file again, and repeats.
TEST(Lock, OverlappedAcquireReportsTheConflictAtConfirm) {
  auto repo = NewRepo();
  auto ex = Lock::Acquire(*repo, true);
  auto pending = Lock::AcquireOverlapped(*repo, false);
  EXPECT_EQ(LockCount(*repo), 2u);  // written before the check ends
  std::string what;
  EXPECT_EQ(CodeOf([&] { pending->Confirm(); }, &what), ErrorCode::kLocked);
  EXPECT_NE(what.find("exclusively"), std::string::npos) << what;
  EXPECT_EQ(LockCount(*repo), 1u);
  EXPECT_EQ(CodeOf([&] { pending->Confirm(); }), ErrorCode::kLocked);
  EXPECT_EQ(CodeOf([&] { pending->CheckHeld(); }), ErrorCode::kLocked);
  pending.reset();
  EXPECT_EQ(LockCount(*repo), 1u);

  // Unconfirmed, the commit's check confirms.
  auto other = Lock::AcquireOverlapped(*repo, true);
  EXPECT_EQ(CodeOf([&] { other->CheckHeld(); }), ErrorCode::kLocked);
  other.reset();
  ex.reset();
  EXPECT_EQ(LockCount(*repo), 0u);

  // Without a conflict: confirmed, held, released.
  auto ok = Lock::AcquireOverlapped(*repo, false);
  ok->Confirm();
  ok->CheckHeld();
  EXPECT_EQ(LockCount(*repo), 1u);
  ok.reset();
  EXPECT_EQ(LockCount(*repo), 0u);
  // Never confirmed: still removed, its check waited for.
  Lock::AcquireOverlapped(*repo, true).reset();
  EXPECT_EQ(LockCount(*repo), 0u);
}

TEST(Lock, ForeignLockFilesConflict) {
  // Locks written by another process/host (e.g. restic) are honoured; stale ones too,
  // until removed with unlock.
  auto repo = NewRepo(1);
  FileId other = SaveLock(*repo, Info(60, "elsewhere", 4242, true));
  EXPECT_EQ(CodeOf([&] { Lock::Acquire(*repo, false); }), ErrorCode::kLocked);
  repo->backend().Remove({FileType::kLock, other.Hex()});
  SaveLock(*repo, Info(3600, "elsewhere", 4242, true));
  std::string what;
  EXPECT_EQ(CodeOf([&] { Lock::Acquire(*repo, false); }, &what), ErrorCode::kLocked);
  EXPECT_NE(what.find("stale"), std::string::npos) << what;
  EXPECT_EQ(RemoveLocks(*repo, false), 1);
  auto l = Lock::Acquire(*repo, false);
  EXPECT_EQ(LockCount(*repo), 1u);
}

TEST(Lock, RemoveLocksOnlyStaleUnlessAll) {
  auto repo = NewRepo();
  const pid_t dead = DeadPid();
  SaveLock(*repo, Info(31 * 60, "elsewhere", 1));       // old: stale
  SaveLock(*repo, Info(10, HostName(), dead));          // dead: stale
  SaveLock(*repo, Info(10, "elsewhere", dead, true));   // live elsewhere
  SaveLock(*repo, Info(10, HostName(), getpid()));      // us: live
  EXPECT_EQ(LockCount(*repo), 4u);
  EXPECT_EQ(RemoveLocks(*repo, false), 2);
  EXPECT_EQ(LockCount(*repo), 2u);
  for (const FileId& id : repo->ListIds(FileType::kLock))
    EXPECT_FALSE(LockInfo::Parse(repo->LoadJson(FileType::kLock, id), id.Hex()).IsStale());
  EXPECT_EQ(RemoveLocks(*repo, false), 0);
  EXPECT_EQ(RemoveLocks(*repo, true), 2);
  EXPECT_EQ(LockCount(*repo), 0u);
  EXPECT_EQ(RemoveLocks(*repo, true), 0);
}

// This machine's clock runs an hour fast: a live lock another client wrote a minute ago
// (by the true time, which the storage shares) looks 61 minutes old here. unlock must
// keep it (the storage got it a minute ago) and say why; a lock old by both clocks goes.
TEST(Lock, RemoveLocksTrustsTheStorageClockOverAFastLocalClock) {
  ResetClockSkewWarning();  // an earlier test in this process may have had its one warning
  auto be = std::make_shared<MemBackend>();
  Repository::Init(*be, "pw", 2, crypto::ScryptParams{1024, 8, 1}, 1);
  auto repo = Repository::Open(be, "pw", 1);
  std::vector<std::string> warnings;
  repo->set_warn([&](const std::string& w) { warnings.push_back(w); });
  const int64_t fast = 3600;
  auto true_now = [fast] { return static_cast<int64_t>(std::time(nullptr)) - fast; };
  be->set_clock([&] { return true_now() - 2 * 3600; });  // saved two hours ago
  repo->SaveJson(FileType::kLock, Info(fast + 2 * 3600, "elsewhere", 1).ToJson());
  be->set_clock([&] { return true_now() - 60; });  // saved a minute ago
  repo->SaveJson(FileType::kLock, Info(fast + 60, "elsewhere", 2).ToJson());
  be->set_clock(true_now);
  EXPECT_EQ(RemoveLocks(*repo, false), 1);
  ASSERT_EQ(LockCount(*repo), 1u);
  const FileId kept = repo->ListIds(FileType::kLock)[0];
  EXPECT_EQ(LockInfo::Parse(repo->LoadJson(FileType::kLock, kept), kept.Hex()).pid, 2);
  bool skew = false, kept_reported = false;
  for (const auto& w : warnings) {
    // 3600 s, or one second off when the clock ticked between the two readings
    for (const char* s : {"clock is 3599 s ahead of", "clock is 3600 s ahead of",
                          "clock is 3601 s ahead of"})
      skew |= w.find(s) != std::string::npos;
    kept_reported |= w.find("lock " + kept.Short()) != std::string::npos;
  }
  EXPECT_TRUE(skew) << ::testing::PrintToString(warnings);
  EXPECT_TRUE(kept_reported) << ::testing::PrintToString(warnings);
  // Without modification times (the default of a backend) the local clock decides alone.
  EXPECT_TRUE(Info(fast + 60, "elsewhere", 2).IsStale());
  EXPECT_FALSE(Info(fast + 60, "elsewhere", 2).IsStale(60));
}

}  // namespace
}  // namespace haven
