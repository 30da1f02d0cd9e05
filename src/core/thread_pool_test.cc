#include "core/thread_pool.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace haven {
namespace {

// Threads of this process (entries of /proc/self/task).
int ThreadCount() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  while (struct dirent* e = readdir(d))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

// A pool starts its threads with its first job: one that gets none (an unchanged backup's
// read pools) starts and joins no thread.
TEST(ThreadPool, StartsItsThreadsWithTheFirstJob) {
  // The process's first thread may bring helpers of its own (ThreadSanitizer starts its
  // background thread then): start and join one before counting.
  std::thread([] {}).join();
  const int before = ThreadCount();
  ASSERT_GT(before, 0);
  {
    ThreadPool idle(4, 8);
    EXPECT_EQ(idle.size(), 4);
    EXPECT_EQ(ThreadCount(), before);
  }
  ThreadPool pool(3, 8);
  EXPECT_EQ(ThreadCount(), before);
  EXPECT_EQ(pool.Submit([] { return 7; }).get(), 7);
  EXPECT_EQ(ThreadCount(), before + 3);
}

// Every queued job runs, also those still queued when the pool is destroyed; a queue
// limit smaller than the jobs only makes Push wait.
TEST(ThreadPool, RunsEveryJobThroughASmallQueue) {
  std::atomic<int> done{0};
  std::vector<std::future<int>> results;
  {
    ThreadPool pool(2, 1);
    for (int i = 0; i < 200; ++i)
      results.push_back(pool.Submit([i, &done] {
        done++;
        return i * i;
      }));
    for (int i = 0; i < 50; ++i) pool.Post([&done] { done++; });
  }
  EXPECT_EQ(done.load(), 250);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(results[static_cast<size_t>(i)].get(), i * i);
}

// A job's exception reaches its future, and the pool goes on.
TEST(ThreadPool, AJobsErrorReachesItsFuture) {
  ThreadPool pool(2, 4);
  auto bad = pool.Submit([]() -> int { throw std::runtime_error("job failed"); });
  EXPECT_THROW(bad.get(), std::runtime_error);
  EXPECT_EQ(pool.Submit([] { return 1; }).get(), 1);
}

TEST(ParallelFor, CoversEveryItemOnceAndRethrowsTheFirstError) {
  for (int threads : {1, 2, 8}) {
    std::vector<std::atomic<int>> seen(1000);
    ParallelFor(seen.size(), threads, [&](size_t i) { seen[i]++; });
    for (const auto& s : seen) EXPECT_EQ(s.load(), 1) << threads;
    EXPECT_THROW(ParallelFor(100, threads,
                             [](size_t i) {
                               if (i == 10) throw std::runtime_error("item 10");
                             }),
                 std::runtime_error)
        << threads;
  }
}

}  // namespace
}  // namespace haven
