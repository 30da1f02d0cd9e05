#include "core/path_match.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace haven {
namespace {

TEST(PathMatch, FoldCaseAsciiAndUnicode) {
  EXPECT_EQ(FoldCase("/Home/USER/Foo.TXT"), "/home/user/foo.txt");
  EXPECT_EQ(FoldCase("\xc3\x84rger/\xc3\x9c"), "\xc3\xa4rger/\xc3\xbc");  // Ärger/Ü
  EXPECT_EQ(FoldCase("\xce\xa3\xce\x91"), "\xcf\x83\xce\xb1");            // ΣΑ -> σα
  // Invalid UTF-8 bytes become U+FFFD, as Go's strings.ToLower.
  EXPECT_EQ(FoldCase(std::string("A\xff") + "B"), std::string("a\xef\xbf\xbd") + "b");
  EXPECT_EQ(FoldCase("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(PathMatch, CaseInsensitiveMatchThroughFoldCase) {
  PatternList p({FoldCase("*.JPG"), FoldCase("/Data/Cache")});
  EXPECT_TRUE(p.Matches(FoldCase("/a/Photo.jpg")));
  EXPECT_TRUE(p.Matches(FoldCase("/a/photo.JpG")));
  EXPECT_TRUE(p.Matches(FoldCase("/DATA/cache/x")));
  EXPECT_FALSE(p.Matches(FoldCase("/a/photo.png")));
}

TEST(PathMatch, ExpandEnvAsGoOsExpand) {
  setenv("HAVEN_PM_TEST", "val", 1);
  unsetenv("HAVEN_PM_UNSET");
  EXPECT_EQ(ExpandEnv("plain"), "plain");
  EXPECT_EQ(ExpandEnv("$HAVEN_PM_TEST/x"), "val/x");
  EXPECT_EQ(ExpandEnv("${HAVEN_PM_TEST}x"), "valx");
  EXPECT_EQ(ExpandEnv("a$HAVEN_PM_UNSET/b"), "a/b");
  EXPECT_EQ(ExpandEnv("cost$$"), "cost$");
  EXPECT_EQ(ExpandEnv("end$"), "end$");
  EXPECT_EQ(ExpandEnv("a$/b"), "a$/b");  // no name: '$' kept
  EXPECT_EQ(ExpandEnv("a${}b"), "ab");   // bad syntax: eaten
  EXPECT_EQ(ExpandEnv("a${b"), "ab");    // "${" eaten
}

}  // namespace
}  // namespace haven
