#include "cli/snapshot_args.h"

#include <gtest/gtest.h>

namespace haven::cli {
namespace {

std::vector<SnapshotEntry> Snaps() {
  std::vector<SnapshotEntry> v;
  const char* ids[] = {"aa11", "aa22", "bb33"};
  const char* hosts[] = {"h1", "h2", "h1"};
  for (int i = 0; i < 3; ++i) {
    FileId id;
    id.bytes[0] = static_cast<uint8_t>(std::stoi(std::string(ids[i], 2), nullptr, 16));
    id.bytes[1] = static_cast<uint8_t>(std::stoi(std::string(ids[i] + 2, 2), nullptr, 16));
    Snapshot s;
    s.hostname = hosts[i];
    s.time.sec = i;
    v.push_back({id, s});
  }
  return v;
}

TEST(SelectSnapshots, WithoutIdsTheFilterSelects) {
  std::vector<std::string> warnings;
  SnapshotFilter f;
  f.hosts = {"h1"};
  auto got = SelectSnapshots(Snaps(), {}, f, [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first.Short(), "aa110000");
  EXPECT_EQ(got[1].first.Short(), "bb330000");
  EXPECT_TRUE(warnings.empty());
}

TEST(SelectSnapshots, IdsInOrderOnceUnknownAndAmbiguousWarned) {
  std::vector<std::string> warnings;
  SnapshotFilter none;
  auto got = SelectSnapshots(Snaps(), {"bb", "aa2", "aa", "ff", "bb33"}, none,
                             [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first.Short(), "bb330000");
  EXPECT_EQ(got[1].first.Short(), "aa220000");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("Ignoring \"aa\""), std::string::npos);
  EXPECT_NE(warnings[0].find("ambiguous"), std::string::npos);
  EXPECT_NE(warnings[1].find("Ignoring \"ff\""), std::string::npos);
}

TEST(SelectSnapshots, LatestUsesTheFilterOtherwiseItIsReportedUnused) {
  std::vector<std::string> warnings;
  SnapshotFilter f;
  f.hosts = {"h2"};
  auto warn = [&](const std::string& w) { warnings.push_back(w); };
  auto got = SelectSnapshots(Snaps(), {"latest"}, f, warn);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first.Short(), "aa220000");
  EXPECT_TRUE(warnings.empty());
  got = SelectSnapshots(Snaps(), {"bb"}, f, warn);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "Ignoring filters as there are explicit snapshot ids given");
  f.hosts = {"nobody"};
  got = SelectSnapshots(Snaps(), {"latest"}, f, warn);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(warnings.back(),
            "Ignoring \"latest\", no snapshot matched given filter (Paths:[] Tags:[] Hosts:[nobody])");
}

}  // namespace
}  // namespace haven::cli
