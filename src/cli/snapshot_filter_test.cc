#include "cli/snapshot_filter.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace haven::cli {
namespace {

// Moved from forget_policy_test.cc (ForgetTags.SplitAndMatch) with forget::Filter.
TEST(SnapshotFilter, HostsAndPaths) {
  SnapshotFilter f;
  f.hosts = {"h1", "h2"};
  f.paths = {"/p"};
  Snapshot s;
  s.hostname = "h2";
  s.paths = {"/q", "/p"};
  EXPECT_TRUE(f.Matches(s));
  s.hostname = "h3";
  EXPECT_FALSE(f.Matches(s));
  s.hostname = "h1";
  f.paths = {"/p", "/r"};
  EXPECT_FALSE(f.Matches(s));
}

TEST(SnapshotFilter, TagsAndString) {
  SnapshotFilter f;
  Snapshot none, ab;
  ab.tags = {"a", "b"};
  f.tags = {"x", " a ,b"};
  EXPECT_TRUE(f.Matches(ab));
  EXPECT_FALSE(f.Matches(none));
  f.tags = {""};
  EXPECT_TRUE(f.Matches(none));
  EXPECT_FALSE(f.Matches(ab));
  f.hosts = {"h1", "h2"};
  f.paths = {"/a"};
  EXPECT_EQ(f.String(), "(Paths:[/a] Tags:[[]] Hosts:[h1 h2])");
}

TEST(SnapshotResolve, LatestPrefixAmbiguous) {
  auto id = [](char c) { return *FileId::FromHex(std::string(63, '0') + c); };
  std::vector<SnapshotEntry> snaps = {{id('1'), {}}, {id('2'), {}}};
  EXPECT_EQ(ResolveSnapshot("latest", snaps), id('2'));
  EXPECT_EQ(ResolveSnapshot(std::string(63, '0') + "1", snaps), id('1'));
  EXPECT_THROW(ResolveSnapshot("0000", snaps), Error);
  EXPECT_THROW(ResolveSnapshot("ff", snaps), Error);
  EXPECT_THROW(ResolveSnapshot("latest", {}), Error);
  EXPECT_EQ(MatchIdPrefix(snaps, "000").count, 2u);
  EXPECT_EQ(MatchIdPrefix(snaps, "").count, 2u);
}

}  // namespace
}  // namespace haven::cli
