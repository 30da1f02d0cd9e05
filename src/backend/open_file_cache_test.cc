// OpenFileCache: the bound (least recently used closed first, RLIMIT_NOFILE's share), and
// descriptors in use surviving eviction.
#include "backend/open_file_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

namespace haven {
namespace {

std::shared_ptr<const OpenFileCache::File> DevNull() {
  auto f = std::make_shared<OpenFileCache::File>();
  f->fd = Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  return f;
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(OpenFileCache, KeepsAtMostTheBoundClosingTheLeastRecentlyUsed) {
  OpenFileCache cache(3);
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    auto f = DevNull();
    fds.push_back(f->fd.get());
    cache.Put("p" + std::to_string(i), std::move(f));
  }
  ASSERT_NE(cache.Get("p0"), nullptr);  // p1 is now the least recently used
  auto held = cache.Get("p2");
  cache.Put("p3", DevNull());
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.Get("p1"), nullptr);
  EXPECT_FALSE(IsOpen(fds[1]));
  cache.Put("p4", DevNull());
  cache.Put("p5", DevNull());
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.Get("p2"), nullptr);
  EXPECT_TRUE(IsOpen(fds[2])) << "a file in use stays open after its eviction";
  held.reset();
  EXPECT_FALSE(IsOpen(fds[2]));
  cache.Drop("p5");
  EXPECT_EQ(cache.size(), 2u);
}

TEST(OpenFileCache, BoundLeavesAReserveBelowTheDescriptorLimit) {
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  struct rlimit low = saved;
  low.rlim_cur = 512;
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 512) GTEST_SKIP() << "hard limit too low";
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  OpenFileCache cache;
  EXPECT_EQ(cache.Bound(), (512 - OpenFileCache::kReserve) / 2);
  for (int i = 0; i < 300; ++i) cache.Put("p" + std::to_string(i), DevNull());
  EXPECT_EQ(cache.size(), (512 - OpenFileCache::kReserve) / 2);
  low.rlim_cur = 200;  // below the reserve: nothing is kept
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  OpenFileCache none;
  none.Put("p", DevNull());
  EXPECT_EQ(none.size(), 0u);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_cur >= 2 * OpenFileCache::kDefaultMaxOpen + OpenFileCache::kReserve) {
    EXPECT_EQ(OpenFileCache().Bound(), OpenFileCache::kDefaultMaxOpen);
  }
}

}  // namespace
}  // namespace haven
