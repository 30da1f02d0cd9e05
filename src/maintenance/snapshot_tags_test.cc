#include "maintenance/snapshot_tags.h"

#include <gtest/gtest.h>

namespace haven {
namespace {

using Tags = std::vector<std::string>;

TEST(SnapshotTags, FlattenSplitsTrimsAndDropsEmptyTags) {
  EXPECT_EQ(FlattenTagLists({"a, b", "", "c,,d"}), (Tags{"a", "b", "c", "d"}));
  EXPECT_TRUE(FlattenTagLists({""}).empty());
}

TEST(SnapshotTags, SetReplacesAndAlwaysCounts) {
  Snapshot s;
  s.tags = {"x"};
  EXPECT_TRUE(ChangeTags(s, {"x"}, {}, {}));
  EXPECT_EQ(s.tags, (Tags{"x"}));
  EXPECT_TRUE(ChangeTags(s, {"b", "a"}, {}, {}));
  EXPECT_EQ(s.tags, (Tags{"b", "a"}));
}

TEST(SnapshotTags, AddSkipsPresentTagsRemoveSwapsTheLastIn) {
  Snapshot s;
  s.tags = {"a", "b", "c", "d"};
  EXPECT_FALSE(ChangeTags(s, {}, {"a"}, {"zz"}));
  EXPECT_TRUE(ChangeTags(s, {}, {"e", "a"}, {"b"}));
  // add e -> a b c d e; remove b: e moves into its place.
  EXPECT_EQ(s.tags, (Tags{"a", "e", "c", "d"}));
  EXPECT_TRUE(ChangeTags(s, {}, {}, {"a", "c", "d", "e"}));
  EXPECT_TRUE(s.tags.empty());
}

}  // namespace
}  // namespace haven
