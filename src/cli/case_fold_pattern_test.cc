#include "cli/case_fold_pattern.h"

#include <gtest/gtest.h>

#include "core/path_match.h"

namespace haven::cli {
namespace {

TEST(CaseFoldPattern, Rewrites) {
  EXPECT_EQ(CaseInsensitiveGlob("*.JPG"), "*.[jJ][pP][gG]");
  EXPECT_EQ(CaseInsensitiveGlob("!/a/**"), "!/[aA]/**");
  EXPECT_EQ(CaseInsensitiveGlob("[a-c]x"), "[a-cA-C][xX]");
  EXPECT_EQ(CaseInsensitiveGlob("[!Q]"), "[!Qq]");
  EXPECT_EQ(CaseInsensitiveGlob("\\A1"), "[aA]1");
  EXPECT_EQ(CaseInsensitiveGlob("x[y"), "[xX]\\[[yY]");
}

TEST(CaseFoldPattern, MatchesAnyCase) {
  PatternList p(CaseInsensitiveGlobs({"/Home/*.Txt", "[a-c]Dir"}));
  EXPECT_TRUE(p.Matches("/home/NOTE.TXT"));
  EXPECT_TRUE(p.Matches("/HOME/note.txt"));
  EXPECT_FALSE(p.Matches("/home/note.txz"));
  EXPECT_TRUE(p.Matches("/x/BDIR/f"));
  EXPECT_FALSE(p.Matches("/x/DDIR/f"));
}

}  // namespace
}  // namespace haven::cli
