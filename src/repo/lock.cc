#include "repo/lock.h"

#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cstdio>

#include "core/error.h"
#include "repo/host_info.h"
#include "repo/repository.h"

namespace haven {

namespace {
// restic's times: a lock is refreshed every 5 minutes and looks stale to others after 30.
// HAVEN_DEBUG_LOCK_TIMES="REFRESH,STALE" (seconds) shortens both for tests.
struct Times {
  int64_t refresh = 5 * 60, stale = 30 * 60;
};
const Times& LockTimes() {
  static const Times t = [] {
    Times t;
    if (const char* e = std::getenv("HAVEN_DEBUG_LOCK_TIMES")) {
      long long r = 0, st = 0;
      if (std::sscanf(e, "%lld,%lld", &r, &st) == 2 && r > 0 && st > r) {
        t.refresh = r;
        t.stale = st;
      }
    }
    return t;
  }();
  return t;
}
// Seconds on CLOCK_BOOTTIME: it goes on while the process is stopped (SIGSTOP) and while
// the machine is suspended, which is when a lock silently ages.
double BootSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}
// A lock not refreshed for this long may look stale to others soon: 5/6 of the stale age
// (25 of 30 minutes), so the holder stops before anyone could have removed it.
double ValidFor() { return static_cast<double>(LockTimes().stale) * 5 / 6; }
}  // namespace

namespace {
// A killed process whose parent has not reaped it yet (an orphan waiting for a slow init
// in a container) still answers kill(pid, 0), but holds nothing: its lock is stale.
bool IsZombie(int64_t pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return false;
  char buf[512];
  size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* close_paren = std::strrchr(buf, ')');  // the name may hold spaces and ')'
  return close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}
}  // namespace

std::string LockInfo::ToJson() const {
  std::string out = "{\"time\":\"" + gojson::FormatTime(time) + "\",\"exclusive\":";
  out += exclusive ? "true" : "false";
  out += ",\"hostname\":";
  gojson::AppendString(out, hostname);
  out += ",\"username\":";
  gojson::AppendString(out, username);
  out += ",\"pid\":" + std::to_string(pid);
  if (uid) out += ",\"uid\":" + std::to_string(uid);
  if (gid) out += ",\"gid\":" + std::to_string(gid);
  out += '}';
  return out;
}

LockInfo LockInfo::Parse(std::string_view json, std::string_view name) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (json.empty() || parser.parse(json.data(), json.size()).get(doc))
    Fail(ErrorCode::kCorrupt, "lock " + std::string(name) + ": invalid JSON");
  LockInfo l;
  std::string_view sv;
  if (!doc["time"].get(sv))
    if (auto t = gojson::ParseTime(sv)) l.time = *t;
  bool ex;
  if (!doc["exclusive"].get(ex)) l.exclusive = ex;
  if (!doc["hostname"].get(sv)) l.hostname = sv;
  if (!doc["username"].get(sv)) l.username = sv;
  int64_t v;
  if (!doc["pid"].get(v)) l.pid = v;
  if (!doc["uid"].get(v)) l.uid = static_cast<uint32_t>(v);
  if (!doc["gid"].get(v)) l.gid = static_cast<uint32_t>(v);
  return l;
}

namespace {
// Same host and its process is gone: stale whatever the clocks say.
bool OwnerGone(const LockInfo& l) {
  if (l.hostname != HostName()) return false;
  if (l.pid <= 0) return true;
  if (kill(static_cast<pid_t>(l.pid), 0) != 0) return errno == ESRCH;
  return IsZombie(l.pid);
}
}  // namespace

bool LockInfo::IsStale(std::optional<int64_t> storage_age) const {
  const int64_t stale = LockTimes().stale;
  if (NowLocal().sec - time.sec > stale && (!storage_age || *storage_age > stale)) return true;
  return OwnerGone(*this);
}

std::string LockInfo::Describe() const {
  return "PID " + std::to_string(pid) + " on " + hostname + " by " + username + " (UID " +
         std::to_string(uid) + ", GID " + std::to_string(gid) + "), created at " +
         gojson::FormatTime(time);
}

namespace {

LockInfo MakeInfo(bool exclusive) {
  LockInfo l;
  l.time = NowLocal();
  l.exclusive = exclusive;
  l.hostname = HostName();
  l.username = CurrentUserName();
  l.pid = getpid();
  l.uid = getuid();
  l.gid = getgid();
  return l;
}

std::atomic<bool> g_skew_warned{false};

// Warns (once per process) when this machine's clock is `skew` seconds ahead of the
// storage's (negative: behind) by more than kClockSkewWarnSeconds.
void WarnOnClockSkew(const Repository& repo, int64_t skew) {
  if (std::llabs(skew) <= kClockSkewWarnSeconds || g_skew_warned.exchange(true)) return;
  repo.Warn("this machine's clock is " + std::to_string(std::llabs(skew)) + " s " +
            (skew > 0 ? "ahead of" : "behind") +
            " the repository storage's clock: lock ages and snapshot times depend on it "
            "(set the clock right, e.g. with NTP)");
}

// The same for the lock file `id` just written with `written_at` as its time.
void WarnOnClockSkew(const Repository& repo, Backend& be, const FileId& id, int64_t written_at) {
  try {
    if (auto mtime = be.ModTime({FileType::kLock, id.Hex()}))
      WarnOnClockSkew(repo, written_at - *mtime);
  } catch (const Error&) {
    // No modification time to compare with: nothing to say.
  }
}

// Throws kLocked if a lock other than `self` conflicts with taking `exclusive`.
void CheckConflicts(Repository& repo, bool exclusive, const FileId* self) {
  for (const FileId& id : repo.ListIds(FileType::kLock)) {
    if (self && id == *self) continue;
    LockInfo other;
    try {
      other = LockInfo::Parse(repo.LoadJson(FileType::kLock, id), id.Hex());
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kNotFound) continue;  // removed meanwhile
      // An unreadable lock (empty, damaged) is ignored, as restic 0.14 does.
      std::fprintf(stderr, "warning: ignoring unreadable lock %s: %s\n", id.Short().c_str(),
                   e.what());
      continue;
    }
    if (exclusive || other.exclusive) {
      std::string kind = other.exclusive ? "exclusively " : "";
      Fail(ErrorCode::kLocked, "unable to create lock in backend: repository is already locked " +
                                   kind + "by " + other.Describe() + "\nstorage ID " +
                                   id.Short() +
                                   (other.IsStale() ? "\nthe lock looks stale; `haven unlock` "
                                                      "removes stale locks"
                                                    : ""));
    }
  }
}

}  // namespace

// The lock file is written first and the others are listed once, after it (restic lists
// before writing too): a conflicting lock written before ours is seen by that listing, one
// written after ours sees ours, so the listing before added no safety, only a round trip
// (50 ms over a slow link). A refused attempt removes its own file again.
std::unique_ptr<Lock> Lock::Acquire(Repository& repo, bool exclusive) {
  std::unique_ptr<Lock> lock = AcquireOverlapped(repo, exclusive);
  lock->Confirm();
  return lock;
}

std::unique_ptr<Lock> Lock::AcquireOverlapped(Repository& repo, bool exclusive) {
  std::unique_ptr<Lock> lock(new Lock(repo, exclusive));
  // Registered before the lock file is written: writing it and setting id_ happen under
  // mu_ (here and in the refresher), so an interrupt at any moment removes the file.
  lock->on_interrupt_ = std::make_unique<interrupt::Cleanup>([l = lock.get()] {
    MutexLock lk(l->mu_);
    if (!l->id_.IsZero()) l->backend_->Remove({FileType::kLock, l->id_.Hex()});
  });
  FileId own;
  {
    MutexLock lk(lock->mu_);
    // The clock is read before the file is written: a process stopped right after the
    // write must not count its lock as fresh from when it resumes.
    const double written_from = BootSeconds();
    lock->id_ = lock->Write();
    lock->refreshed_at_ = written_from;
    own = lock->id_;
    WarnOnClockSkew(repo, *lock->backend_, own, lock->written_at_);
  }
  {
    MutexLock lk(lock->confirm_mu_);
    lock->check_ = std::async(std::launch::async, [&repo, exclusive, own, l = lock.get()] {
      struct Done {
        std::atomic<bool>& done;
        ~Done() { done.store(true); }
      } done{l->check_done_};
      CheckConflicts(repo, exclusive, &own);
    });
  }
  // Refreshed from now on, as a lock taken at once is (a command that never confirms still
  // keeps its lock fresh); a refresh waits for the check, whose listing excludes `own` only.
  lock->refresher_ = std::thread([l = lock.get()] { l->RefreshLoop(); });
  repo.set_lock_check([l = lock.get()] { l->CheckHeld(); });
  return lock;
}

void Lock::Confirm() {
  MutexLock ck(confirm_mu_);
  if (!confirmed_) {
    confirmed_ = true;
    try {
      check_.get();
    } catch (...) {
      conflict_ = std::current_exception();
      {
        MutexLock lk(mu_);
        stop_ = true;  // the refresher writes no more
        try {
          backend_->Remove({FileType::kLock, id_.Hex()});
        } catch (...) {
        }
        id_ = FileId();
      }
      cv_.NotifyAll();
    }
  }
  if (conflict_) std::rethrow_exception(conflict_);
}

Lock::Lock(Repository& repo, bool exclusive)
    : repo_(repo), backend_(repo.backend_ptr()), exclusive_(exclusive) {}

FileId Lock::Write() {
  const LockInfo info = MakeInfo(exclusive_);
  Bytes b = repo_.EncodeJson(info.ToJson());
  FileId id(Sha256(b));
  backend_->Save({FileType::kLock, id.Hex()}, b);
  written_at_ = info.time.sec;
  return id;
}

void Lock::RefreshLoop() {
  MutexLock lk(mu_);
  for (;;) {
    const auto due = std::chrono::steady_clock::now() + std::chrono::seconds(LockTimes().refresh);
    while (!stop_ && cv_.WaitUntil(mu_, due)) {
    }
    if (stop_) return;
    // AcquireOverlapped's check still listing: it excludes our first file only, so a
    // second one now would look like another process's lock to it.
    if (!check_done_.load()) continue;
    if (BootSeconds() - refreshed_at_ >= ValidFor()) {
      // Stopped or starved past the point where others may call the lock stale: it is
      // not renewed (that would hide the gap); CheckHeld stops the command.
      lost_ = true;
      return;
    }
    try {
      if (!backend_->Stat({FileType::kLock, id_.Hex()})) {
        lost_ = true;  // removed by someone else (e.g. `unlock --remove-all`)
        return;
      }
      const double written_from = BootSeconds();  // before the write, as in Acquire
      FileId fresh = Write();
      FileId old = id_;
      id_ = fresh;
      refreshed_at_ = written_from;
      backend_->Remove({FileType::kLock, old.Hex()});
    } catch (const Error& e) {
      std::fprintf(stderr, "warning: refreshing lock failed: %s\n", e.what());
    }
  }
}

void Lock::CheckHeld() {
  Confirm();
  MutexLock lk(mu_);
  double age = BootSeconds() - refreshed_at_;
  if (!lost_ && age < ValidFor()) return;
  Fail(ErrorCode::kLocked,
       "the repository lock " + id_.Short() + " was not refreshed for " +
           std::to_string(static_cast<int64_t>(age)) +
           " s (the process was stopped or the storage was slow) or was removed: another "
           "process may have taken the repository meanwhile. Stopping before writing; run the "
           "command again");
}

Lock::~Lock() {
  repo_.set_lock_check(nullptr);
  {
    MutexLock ck(confirm_mu_);  // an unconfirmed check reads through repo_: waited for
    if (check_.valid()) check_.wait();
  }
  {
    MutexLock lk(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (refresher_.joinable()) refresher_.join();
  MutexLock lk(mu_);  // the interrupt cleanup stays armed until the file is gone
  if (!id_.IsZero()) {
    try {
      backend_->Remove({FileType::kLock, id_.Hex()});
    } catch (const Error& e) {
      if (!(lost_ && e.code() == ErrorCode::kNotFound))
        std::fprintf(stderr, "warning: removing lock %s failed: %s\n", id_.Short().c_str(),
                     e.what());
    }
    id_ = FileId();
  }
}

void ResetClockSkewWarning() { g_skew_warned = false; }

std::optional<int64_t> StorageNow(Repository& repo) {
  const LockInfo info = MakeInfo(false);
  try {
    Bytes b = repo.EncodeJson(info.ToJson());
    const FileId id(Sha256(b));
    const Handle h{FileType::kLock, id.Hex()};
    repo.backend().Save(h, b);
    std::optional<int64_t> now;
    try {
      now = repo.backend().ModTime(h);
    } catch (const Error&) {
    }
    repo.backend().Remove(h);
    if (now) WarnOnClockSkew(repo, info.time.sec - *now);
    return now;
  } catch (const Error&) {
    return std::nullopt;
  }
}

namespace {

// Whether to remove the lock `id` (stale, not by age alone when the storage's clock says
// it is fresh: then it is reported and kept).
bool ShouldRemove(Repository& repo, const FileId& id, std::optional<int64_t> storage_now) {
  LockInfo info;
  try {
    info = LockInfo::Parse(repo.LoadJson(FileType::kLock, id), id.Hex());
  } catch (const Error&) {
    return false;
  }
  std::optional<int64_t> age;
  if (storage_now) {
    try {
      if (auto mtime = repo.backend().ModTime({FileType::kLock, id.Hex()}))
        age = *storage_now - *mtime;
    } catch (const Error&) {
    }
  }
  if (info.IsStale(age)) return true;
  if (info.IsStale())
    repo.Warn("lock " + id.Short() + " (" + info.Describe() + ") looks stale by its time, but " +
              "the storage got it " + std::to_string(age.value_or(0)) +
              " s ago: kept (the clocks differ; `unlock --remove-all` removes it)");
  return false;
}

}  // namespace

int RemoveLocks(Repository& repo, bool remove_all) {
  int n = 0;
  const std::optional<int64_t> storage_now =
      remove_all ? std::nullopt : StorageNow(repo);
  for (const FileId& id : repo.ListIds(FileType::kLock)) {
    const bool remove = remove_all || ShouldRemove(repo, id, storage_now);
    if (remove) {
      repo.backend().Remove({FileType::kLock, id.Hex()});
      ++n;
    }
  }
  return n;
}

}  // namespace haven
