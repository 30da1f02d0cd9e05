#include "archiver/exclude.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace haven {
namespace {

namespace fs = std::filesystem;

TEST(Exclude, ParseSizeAsRestic) {
  EXPECT_EQ(ParseSize("100"), 100);
  EXPECT_EQ(ParseSize("100b"), 100);
  EXPECT_EQ(ParseSize("2k"), 2048);
  EXPECT_EQ(ParseSize("2K"), 2048);
  EXPECT_EQ(ParseSize("3m"), 3 << 20);
  EXPECT_EQ(ParseSize("1g"), int64_t{1} << 30);
  EXPECT_EQ(ParseSize("1T"), int64_t{1} << 40);
  EXPECT_EQ(ParseSize("+5k"), 5120);
  EXPECT_FALSE(ParseSize(""));
  EXPECT_FALSE(ParseSize("k"));
  EXPECT_FALSE(ParseSize("1.5k"));
  EXPECT_FALSE(ParseSize("10x"));
  EXPECT_FALSE(ParseSize("1kb"));
  EXPECT_FALSE(ParseSize("+-1"));
  EXPECT_FALSE(ParseSize("99999999999999999999"));
  EXPECT_FALSE(ParseSize("9999999999t"));  // overflows 64 bits
}

TEST(Exclude, ParseExcludeIfPresent) {
  auto a = ParseExcludeIfPresent(".nobackup");
  EXPECT_EQ(a.file, ".nobackup");
  EXPECT_EQ(a.header, "");
  auto b = ParseExcludeIfPresent("TAG:Sig: x");
  EXPECT_EQ(b.file, "TAG");
  EXPECT_EQ(b.header, "Sig: x");
  EXPECT_THROW(ParseExcludeIfPresent(""), Error);
  EXPECT_THROW(ParseExcludeIfPresent(":hdr"), Error);
}

class ExcludeDir : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("haven_exclude_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "cache");
    fs::create_directories(root_ / "fake");
    std::ofstream(root_ / "cache" / "CACHEDIR.TAG")
        << "Signature: 8a477f597d28d172789f06886806bc55\n# comment";
    std::ofstream(root_ / "fake" / "CACHEDIR.TAG")
        << "Signature: 00000000000000000000000000000000 (wrong)";
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ExcludeDir, CacheDirTagKeepsTheTagOnly) {
  ExcludeRules rules;
  rules.if_present.push_back(CacheDirTag());
  std::vector<std::string> notices;
  Excluder ex(rules, {root_.string()}, [&](const std::string& m) { notices.push_back(m); });
  std::string cache = (root_ / "cache").string(), fake = (root_ / "fake").string();
  Excluder::DirState cache_state, fake_state, root_state;
  EXPECT_TRUE(ex.ExcludedByName(cache + "/data", cache, "data", cache_state));
  EXPECT_FALSE(ex.ExcludedByName(cache + "/CACHEDIR.TAG", cache, "CACHEDIR.TAG", cache_state));
  EXPECT_FALSE(ex.ExcludedByName(cache, root_.string(), "cache", root_state));
  EXPECT_FALSE(ex.ExcludedByName(fake + "/data", fake, "data", fake_state));
  EXPECT_FALSE(ex.ExcludedByName(fake + "/more", fake, "more", fake_state));
  ASSERT_EQ(notices.size(), 1u);  // once per directory
  EXPECT_NE(notices[0].find("invalid signature in exclusion tagfile"), std::string::npos);
}

TEST_F(ExcludeDir, SizeAppliesToAllButDirectories) {
  ExcludeRules rules;
  rules.larger_than = 10;
  Excluder ex(rules, {root_.string()}, nullptr);
  struct stat st {};
  st.st_mode = S_IFREG | 0644;
  st.st_size = 11;
  EXPECT_TRUE(ex.ExcludedByStat("/x", st));
  st.st_size = 10;
  EXPECT_FALSE(ex.ExcludedByStat("/x", st));
  st.st_mode = S_IFDIR | 0755;
  st.st_size = 4096;
  EXPECT_FALSE(ex.ExcludedByStat("/x", st));
  st.st_mode = S_IFLNK | 0777;
  st.st_size = 40;
  EXPECT_TRUE(ex.ExcludedByStat("/x", st));
}

TEST_F(ExcludeDir, OneFileSystemComparesWithTheNearestSource) {
  ExcludeRules rules;
  rules.one_file_system = true;
  Excluder ex(rules, {root_.string()}, nullptr);
  struct stat rst {};
  ASSERT_EQ(lstat(root_.c_str(), &rst), 0);
  struct stat st = rst;
  st.st_mode = S_IFREG | 0644;
  EXPECT_FALSE(ex.ExcludedByStat((root_ / "cache" / "f").string(), st));
  st.st_dev = rst.st_dev + 1;
  EXPECT_TRUE(ex.ExcludedByStat((root_ / "cache" / "f").string(), st));
  // A directory on another device whose parent is on the source's device: a mount point,
  // kept.
  st.st_mode = S_IFDIR | 0755;
  EXPECT_FALSE(ex.ExcludedByStat((root_ / "cache").string(), st));
  // Below it (its parent is not on an allowed device: here it does not exist): left out.
  EXPECT_TRUE(ex.ExcludedByStat((root_ / "nope" / "sub").string(), st));
}

}  // namespace
}  // namespace haven
