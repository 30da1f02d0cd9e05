// Repository locks (docs/format.md §13), compatible with restic: lock files under locks/,
// exclusive vs shared, stale detection (older than 30 minutes, or a dead process on this
// host), refresh every 5 minutes while held. A Lock releases its file when destroyed, and
// when the process is interrupted.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "backend/backend.h"
#include "core/id.h"
#include "core/interrupt.h"
#include "core/mutex.h"
#include "repo/gojson.h"

namespace haven {

class Repository;

struct LockInfo {
  gojson::Timestamp time;
  bool exclusive = false;
  std::string hostname, username;
  int64_t pid = 0;
  uint32_t uid = 0, gid = 0;

  std::string ToJson() const;
  static LockInfo Parse(std::string_view json, std::string_view name);
  // Stale: its process is gone (this host only), or it is older than the stale age by
  // this machine's clock and, when the storage keeps modification times, also by the
  // storage's clock (`storage_age`: how long ago the storage got the file), so that a
  // machine whose clock runs fast never calls a live lock stale.
  bool IsStale(std::optional<int64_t> storage_age = std::nullopt) const;
  std::string Describe() const;  // "PID 123 on host by user (UID 0, GID 0), created at ..."
};

class Lock {
 public:
  // Acquires the lock or throws kLocked describing the conflicting lock.
  static std::unique_ptr<Lock> Acquire(Repository& repo, bool exclusive);
  // The same in two steps: returns once the lock file is written, while the listing of the
  // other locks runs, so that the caller's first listings and reads overlap it (a round
  // trip on remote storage). What is listed or read after the write is as protected as
  // after the check: a lock that conflicts with ours was either written before ours, and
  // the check sees it, or after, and its own check sees ours. The caller must Confirm
  // before it acts on what it read (writes anything, reports a result); CheckHeld (every
  // commit) confirms too. The lock is refreshed from the write on, once its check is done.
  static std::unique_ptr<Lock> AcquireOverlapped(Repository& repo, bool exclusive);
  // Waits for AcquireOverlapped's check: throws its kLocked (our lock file removed and no
  // longer refreshed), or returns. Later calls repeat the outcome.
  void Confirm() EXCLUDES(confirm_mu_);
  // Throws kLocked when the lock may no longer be held: it was not refreshed for 5/6 of
  // the stale age (the process was stopped, the machine suspended, the storage slow) or
  // its file was removed. Acquire makes the repository call it before every commit
  // (snapshot write, deletions), so a command that lost its lock stops before writing.
  void CheckHeld() EXCLUDES(mu_);
  ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  Lock(Repository& repo, bool exclusive);
  void RefreshLoop() EXCLUDES(mu_);
  FileId Write() REQUIRES(mu_);

  Repository& repo_;
  std::shared_ptr<Backend> backend_;  // the lock outlives backend swaps (dry-run)
  bool exclusive_;
  Mutex mu_;  // held while the lock file is written or removed
  CondVar cv_;
  FileId id_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  bool lost_ GUARDED_BY(mu_) = false;
  double refreshed_at_ GUARDED_BY(mu_) = 0;  // CLOCK_BOOTTIME seconds of the last write
  int64_t written_at_ GUARDED_BY(mu_) = 0;   // the time field of the last file written
  std::thread refresher_;
  // AcquireOverlapped's check of the other locks, until Confirm takes its outcome.
  Mutex confirm_mu_;
  std::future<void> check_ GUARDED_BY(confirm_mu_);
  std::atomic<bool> check_done_{false};  // set by the check itself: refreshes wait for it
  bool confirmed_ GUARDED_BY(confirm_mu_) = false;
  std::exception_ptr conflict_ GUARDED_BY(confirm_mu_);
  // Removes the lock file when the process is interrupted (Ctrl-C, SIGTERM, SIGHUP).
  std::unique_ptr<interrupt::Cleanup> on_interrupt_;
};

// Differences between this machine's clock and the storage's larger than this are
// reported (lock ages and snapshot times depend on both).
inline constexpr int64_t kClockSkewWarnSeconds = 5 * 60;
// Tests: the next skew is reported again (a process reports one, the first it sees).
void ResetClockSkewWarning();

// The storage's clock now: the modification time of a shared lock file written and removed
// at once (warning when this machine's clock differs), or nullopt when the backend keeps no
// modification times or the probe cannot be written.
std::optional<int64_t> StorageNow(Repository& repo);

// Removes stale locks (or all with remove_all). Returns the number removed. Ages are
// checked against the storage's clock as well, read off a probe lock file written and
// removed at once (see LockInfo::IsStale); a lock kept for that reason is reported.
int RemoveLocks(Repository& repo, bool remove_all);

}  // namespace haven
