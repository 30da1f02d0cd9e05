#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace haven {

ThreadPool::ThreadPool(int threads, size_t queue_limit) : limit_(queue_limit ? queue_limit : 1) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::Push(std::function<void()> job) {
  std::unique_lock lock(mu_);
  not_full_.wait(lock, [&] { return queue_.size() < limit_; });
  queue_.push_back(std::move(job));
  lock.unlock();
  not_empty_.notify_one();
}

void ThreadPool::Work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      not_empty_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    not_full_.notify_one();
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
  std::exception_ptr err;
  std::mutex err_mu;
  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(err_mu);
        if (!err) err = std::current_exception();
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
  if (err) std::rethrow_exception(err);
}

}  // namespace haven
