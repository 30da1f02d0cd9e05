// A fixed set of worker threads fed through a bounded queue: Submit blocks while the
// queue is full, so a fast producer (the directory walk) cannot run ahead of the workers
// by more than `queue_limit` jobs. Jobs must not Submit to the same pool.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "core/mutex.h"

namespace haven {

class ThreadPool {
 public:
  ThreadPool(int threads, size_t queue_limit);
  ~ThreadPool();  // finishes queued jobs, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <typename Fn>
  auto Submit(Fn fn) -> std::future<decltype(fn())> {
    using R = decltype(fn());
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> f = task->get_future();
    Push([task] { (*task)(); });
    return f;
  }

  // Queues a job whose completion the caller learns some other way (a promise it sets).
  void Post(std::function<void()> job) { Push(std::move(job)); }

  int size() const { return threads_; }

 private:
  void Push(std::function<void()> job) EXCLUDES(mu_);
  void Work() EXCLUDES(mu_);
  void Start() REQUIRES(mu_);

  Mutex mu_;
  CondVar not_empty_, not_full_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  const size_t limit_;
  bool stop_ GUARDED_BY(mu_) = false;
  const int threads_;
  // Started by the first job (a pool that gets none, e.g. an unchanged backup's, starts no
  // thread), joined by the destructor.
  std::vector<std::thread> workers_ GUARDED_BY(mu_);
};

// Number of threads for "--jobs": 0 means all hardware threads.
int ResolveJobs(int jobs);

// Runs fn(i) for i in [0, n) on up to `threads` threads (the caller's thread when one);
// after the first error the remaining items are skipped, and the error is rethrown once
// every thread stopped.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn);

}  // namespace haven

namespace haven {

// Threads a recursive walk may still start (the archiver's and the capture's): a subfolder
// goes to a thread of its own while one is spare, else the caller walks it inline.
class SpareThreads {
 public:
  explicit SpareThreads(int n) : n_(n) {}
  // fn() on a new thread when one is spare (given back when fn returns); an invalid future
  // when none is.
  template <typename Fn>
  auto TryAsync(Fn fn) -> std::future<decltype(fn())> {
    int n = n_.load();
    do {
      if (n <= 0) return {};
    } while (!n_.compare_exchange_weak(n, n - 1));
    return std::async(std::launch::async, [this, fn = std::move(fn)]() mutable {
      struct Give {
        std::atomic<int>& n;
        ~Give() { n++; }
      } give{n_};
      return fn();
    });
  }

 private:
  std::atomic<int> n_;
};

// A budget of bytes in flight: Acquire blocks until the bytes fit (a single request
// larger than the whole budget is admitted when nothing else is in flight), so the
// memory held by queued work stays bounded whatever the file sizes.
class ByteBudget {
 public:
  explicit ByteBudget(size_t capacity) : capacity_(capacity) {}
  void Acquire(size_t n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (used_ != 0 && used_ + n > capacity_) cv_.Wait(mu_);
    used_ += n;
  }
  void Release(size_t n) EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      used_ -= n;
    }
    cv_.NotifyAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  const size_t capacity_;
  size_t used_ GUARDED_BY(mu_) = 0;
};

}  // namespace haven
