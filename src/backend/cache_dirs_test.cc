#include "backend/cache_dirs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace haven {
namespace {

namespace fs = std::filesystem;

TEST(CacheDirs, ListsRepositoryFoldersOldestFirstWithSizes) {
  char tmpl[] = "/tmp/haven-cache-dirs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path base = tmpl;
  const std::string a(64, 'a'), b(64, 'B');
  fs::create_directories(base / a / "snapshots");
  fs::create_directories(base / b);
  fs::create_directories(base / "restic-check-cache-12");
  fs::create_directories(base / "not-a-cache");
  fs::create_directories(base / std::string(63, 'c'));
  std::ofstream(base / a / "snapshots" / "x") << "12345";
  std::ofstream(base / b / "y") << "1";
  std::ofstream(base / std::string(64, 'd')) << "a file, not a folder";
  struct utimbuf old {1000000, 1000000};
  ASSERT_EQ(utime((base / b).c_str(), &old), 0);
  auto dirs = ListCacheDirs(base.string(), true);
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0].name, b);  // oldest first
  EXPECT_EQ(dirs[0].bytes, 1u);
  EXPECT_TRUE(IsOldCacheDir(dirs[0], 30, 1000000 + 31 * 86400));
  EXPECT_FALSE(IsOldCacheDir(dirs[0], 30, 1000000 + 29 * 86400));
  for (const auto& d : dirs) {
    if (d.name == a) {
      EXPECT_EQ(d.bytes, 5u);
    }
  }
  EXPECT_TRUE(ListCacheDirs((base / "missing").string(), false).empty());
  fs::remove_all(base);
}

TEST(CacheDirs, Names) {
  EXPECT_TRUE(IsCacheDirName(std::string(64, 'f')));
  EXPECT_TRUE(IsCacheDirName("restic-check-cache-1"));
  EXPECT_FALSE(IsCacheDirName("restic-check-cache-"));
  EXPECT_FALSE(IsCacheDirName(std::string(64, 'g')));
}

}  // namespace
}  // namespace haven
