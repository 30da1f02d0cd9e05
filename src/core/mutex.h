// Locks a tool checks: `Mutex`, `SharedMutex` and `CondVar` wrap the standard types and
// carry clang's thread-safety attributes, so a field marked GUARDED_BY(mu_) read without
// mu_ held, or a helper marked REQUIRES(mu_) called without it, fails the clang build
// with -Wthread-safety -Werror (`make thread-safety`, part of `make test`). Under g++ the
// attributes expand to nothing and the wrappers cost nothing.
//
// Usage:
//   Mutex mu_;
//   size_t pending_ GUARDED_BY(mu_) = 0;
//   void Drain() REQUIRES(mu_);
//   { MutexLock lock(mu_); ++pending_; }
//   { MutexLock lock(mu_); while (pending_ > 0) done_.Wait(mu_); }
//
// A condition is waited for in a loop written at the call site (not a predicate lambda:
// the analysis cannot see that a lambda runs with the lock held).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define HAVEN_TSA(x) __attribute__((x))
#else
#define HAVEN_TSA(x)
#endif

#define CAPABILITY(x) HAVEN_TSA(capability(x))
#define SCOPED_CAPABILITY HAVEN_TSA(scoped_lockable)
#define GUARDED_BY(x) HAVEN_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) HAVEN_TSA(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) HAVEN_TSA(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) HAVEN_TSA(acquired_before(__VA_ARGS__))
#define REQUIRES(...) HAVEN_TSA(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) HAVEN_TSA(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) HAVEN_TSA(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) HAVEN_TSA(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) HAVEN_TSA(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) HAVEN_TSA(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) HAVEN_TSA(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) HAVEN_TSA(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) HAVEN_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) HAVEN_TSA(assert_capability(x))
#define RETURN_CAPABILITY(x) HAVEN_TSA(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS HAVEN_TSA(no_thread_safety_analysis)

namespace haven {

class CondVar;

// An exclusive lock (std::mutex).
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the lock (where it cannot see it).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// A readers-writer lock (std::shared_mutex).
class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a Mutex for its scope; Unlock/Lock give it up and take it back inside the scope
// (e.g. around a slow write that must not block other threads).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex shared for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

// A condition variable used with a held Mutex: Wait releases it while blocked and holds
// it again on return (spurious wake-ups happen: wait in a loop on the condition).
class CondVar {
 public:
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // Returns false when `timeout` passed without a notification.
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    bool notified = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  // Returns false when `deadline` passed (a loop: `while (!cond) if (!WaitUntil(...)) break;`).
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace haven
