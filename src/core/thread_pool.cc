#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace haven {

ThreadPool::ThreadPool(int threads, size_t queue_limit)
    : limit_(queue_limit ? queue_limit : 1), threads_(std::max(1, threads)) {}

ThreadPool::~ThreadPool() {
  std::vector<std::thread> workers;
  {
    MutexLock lock(mu_);
    stop_ = true;
    workers.swap(workers_);
  }
  not_empty_.NotifyAll();
  for (auto& w : workers) w.join();
}

void ThreadPool::Start() {
  workers_.reserve(static_cast<size_t>(threads_));
  for (int i = 0; i < threads_; ++i) workers_.emplace_back([this] { Work(); });
}

void ThreadPool::Push(std::function<void()> job) {
  MutexLock lock(mu_);
  if (workers_.empty()) Start();
  while (queue_.size() >= limit_) not_full_.Wait(mu_);
  queue_.push_back(std::move(job));
  lock.Unlock();
  not_empty_.NotifyOne();
}

void ThreadPool::Work() {
  for (;;) {
    std::function<void()> job;
    {
      MutexLock lock(mu_);
      while (!stop_ && queue_.empty()) not_empty_.Wait(mu_);
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    not_full_.NotifyOne();
    job();
  }
}

int ResolveJobs(int jobs) {
  if (jobs > 0) return jobs;
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  size_t workers = std::min<size_t>(n, static_cast<size_t>(std::max(1, threads)));
  std::atomic<size_t> next{0};
  struct FirstError {
    Mutex mu;
    std::exception_ptr err GUARDED_BY(mu);
  } first;
  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        fn(i);
      } catch (...) {
        MutexLock lock(first.mu);
        if (!first.err) first.err = std::current_exception();
        next = n;
        return;
      }
    }
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t w = 0; w < workers; ++w) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  MutexLock lock(first.mu);
  if (first.err) std::rethrow_exception(first.err);
}

}  // namespace haven
