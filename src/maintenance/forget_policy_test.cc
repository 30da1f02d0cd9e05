#include "maintenance/forget_policy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "core/error.h"

namespace haven::forget {
namespace {

gojson::Timestamp T(const std::string& rfc3339) {
  auto t = gojson::ParseTime(rfc3339);
  EXPECT_TRUE(t.has_value()) << rfc3339;
  return t.value_or(gojson::Timestamp{});
}

// A snapshot id that encodes a small number (for readable expectations).
FileId Id(int n) {
  char hex[65];
  std::snprintf(hex, sizeof(hex), "%064x", n);
  return *FileId::FromHex(hex);
}

SnapshotEntry Snap(int n, const std::string& time, std::vector<std::string> tags = {},
                   std::string host = "h", std::vector<std::string> paths = {"/p"}) {
  Snapshot s;
  s.time = T(time);
  s.tags = std::move(tags);
  s.hostname = std::move(host);
  s.paths = std::move(paths);
  return {Id(n), s};
}

std::vector<int> Numbers(const std::vector<SnapshotEntry>& v) {
  std::vector<int> out;
  for (const auto& e : v) out.push_back(std::stoi(e.first.Hex().substr(56), nullptr, 16));
  return out;
}

const gojson::Timestamp kNow = T("2030-01-01T00:00:00Z");

// ---- Durations ------------------------------------------------------------------------------

TEST(ForgetDuration, Parses) {
  EXPECT_EQ(ParseDuration("1y5m7d2h"), (Duration{1, 5, 7, 2}));
  EXPECT_EQ(ParseDuration("2h"), (Duration{0, 0, 0, 2}));
  EXPECT_EQ(ParseDuration("  3d  "), (Duration{0, 0, 3, 0}));
  EXPECT_EQ(ParseDuration("5m1y"), (Duration{1, 5, 0, 0}));  // any order
  EXPECT_EQ(ParseDuration("1d2d"), (Duration{0, 0, 2, 0}));  // a repeated unit overwrites
  EXPECT_EQ(ParseDuration("-1d"), (Duration{0, 0, -1, 0}));  // restic parses negatives
  EXPECT_EQ(ParseDuration("007d"), (Duration{0, 0, 7, 0}));
  EXPECT_TRUE(ParseDuration("").Zero());
  EXPECT_TRUE(ParseDuration("0d0h").Zero());
}

TEST(ForgetDuration, RejectsWithResticMessages) {
  auto msg = [](const char* s) -> std::string {
    try {
      ParseDuration(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(msg("1"), "no unit found after number 1");
  EXPECT_EQ(msg("d"), "no number found");
  EXPECT_EQ(msg("1x"), "invalid unit 'x' found after number 1");
  EXPECT_EQ(msg("2d3"), "no unit found after number 3");
  EXPECT_EQ(msg("1d 2h"), "no number found");  // inner space
  EXPECT_EQ(msg("1D"), "invalid unit 'D' found after number 1");
}

TEST(ForgetDuration, String) {
  EXPECT_EQ((Duration{1, 5, 7, 2}).String(), "1y5m7d2h");
  EXPECT_EQ((Duration{0, 0, 14, 0}).String(), "14d");
  EXPECT_EQ((Duration{1, 0, 1, 0}).String(), "1y1d");
  EXPECT_EQ(Duration{}.String(), "");
}

// ---- Calendar ---------------------------------------------------------------------------------

TEST(ForgetCalendar, IsoWeekYearBoundaries) {
  struct Case {
    const char* time;
    int64_t year;
    int week;
  };
  const Case cases[] = {
      {"2020-12-31T12:00:00Z", 2020, 53},  // Thursday: 2020 has 53 weeks
      {"2021-01-01T00:00:00Z", 2020, 53},  // Friday
      {"2021-01-03T23:59:59Z", 2020, 53},  // Sunday
      {"2021-01-04T00:00:00Z", 2021, 1},   // Monday
      {"2019-12-30T00:00:00Z", 2020, 1},   // Monday of 2020's week 1
      {"2019-12-29T23:59:59Z", 2019, 52},  // Sunday
      {"2018-12-31T10:00:00Z", 2019, 1},
      {"2016-01-03T10:00:00Z", 2015, 53},
      {"2015-12-31T10:00:00Z", 2015, 53},
      {"2026-01-01T00:00:00Z", 2026, 1},  // Thursday
      {"2027-01-01T00:00:00Z", 2026, 53},  // Friday
      {"2022-01-02T00:00:00Z", 2021, 52},
      {"2024-12-30T00:00:00Z", 2025, 1},
  };
  for (const Case& c : cases) {
    auto [y, w] = IsoWeek(T(c.time));
    EXPECT_EQ(y, c.year) << c.time;
    EXPECT_EQ(w, c.week) << c.time;
    EXPECT_EQ(KeyWeek(T(c.time)), c.year * 100 + c.week) << c.time;
  }
}

TEST(ForgetCalendar, KeysUseTheRecordedOffset) {
  // 2021-01-01T01:30:00+02:00 is 2020-12-31T23:30Z: the keys follow the recorded wall clock.
  gojson::Timestamp t = T("2021-01-01T01:30:00+02:00");
  EXPECT_EQ(KeyHour(t), 2021010101);
  EXPECT_EQ(KeyDay(t), 20210101);
  EXPECT_EQ(KeyMonth(t), 202101);
  EXPECT_EQ(KeyYear(t), 2021);
  EXPECT_EQ(KeyWeek(t), 202053);
  gojson::Timestamp u = T("2020-12-31T23:30:00Z");  // the same instant
  EXPECT_EQ(KeyDay(u), 20201231);
  EXPECT_EQ(KeyYear(u), 2020);
  gojson::Timestamp w = T("2021-01-03T20:00:00-05:00");  // Monday 01:00 UTC, Sunday locally
  EXPECT_EQ(KeyWeek(w), 202053);
}

TEST(ForgetCalendar, AddDateNormalisesLikeGo) {
  // Go: Mar 31 minus one month is "Feb 31" = Mar 3 (Mar 2 in a leap year).
  EXPECT_EQ(AddDate(T("2021-03-31T10:00:00Z"), 0, -1, 0), T("2021-03-03T10:00:00Z"));
  EXPECT_EQ(AddDate(T("2020-03-31T10:00:00Z"), 0, -1, 0), T("2020-03-02T10:00:00Z"));
  EXPECT_EQ(AddDate(T("2020-02-29T00:00:00Z"), -1, 0, 0), T("2019-03-01T00:00:00Z"));
  EXPECT_EQ(AddDate(T("2021-01-15T00:00:00Z"), 0, -13, 0), T("2019-12-15T00:00:00Z"));
  EXPECT_EQ(AddDate(T("2021-01-01T00:00:00Z"), 0, 0, -1), T("2020-12-31T00:00:00Z"));
  EXPECT_EQ(AddDate(T("2021-01-01T00:00:00Z"), -1, -2, -3), T("2019-10-29T00:00:00Z"));
  // A fixed offset: calendar arithmetic on the recorded wall clock.
  gojson::Timestamp r = AddDate(T("2021-07-01T12:00:00-04:00"), 0, -6, 0);
  EXPECT_EQ(r, T("2021-01-01T12:00:00-04:00"));
  EXPECT_EQ(r.offset, -4 * 3600);
  // Go's zero time minus a year.
  EXPECT_EQ(AddDate(kZeroTime, -1, 0, 0).sec, kZeroTime.sec - 366 * 86400);  // year 0 is leap
}

TEST(ForgetCalendar, AddDateInTheLocalZoneCrossesDst) {
  // A zone like America/New_York in 2021: -04:00 from Mar 14 07:00Z to Nov 7 06:00Z.
  auto ny = [](int64_t sec) -> int32_t {
    return (sec >= 1615705200 && sec < 1636264800) ? -4 * 3600 : -5 * 3600;
  };
  // Recorded offset -04:00 matches the local zone: Go uses time.Local, so 12:00 on Jan 1
  // is 12:00 EST (-05:00), one hour later as an instant than in a fixed -04:00 zone.
  gojson::Timestamp r = AddDate(T("2021-07-01T12:00:00-04:00"), 0, -6, 0, ny);
  EXPECT_EQ(r, T("2021-01-01T12:00:00-05:00"));
  EXPECT_EQ(r.offset, -5 * 3600);
  // Recorded offset that does not match the zone at that instant: fixed zone.
  EXPECT_EQ(AddDate(T("2021-07-01T12:00:00-05:00"), 0, -6, 0, ny),
            T("2021-01-01T12:00:00-05:00"));
  // "Z" stays UTC even when the local zone happens to be at offset 0.
  auto utc0 = [](int64_t) -> int32_t { return 0; };
  EXPECT_EQ(AddDate(T("2021-07-01T12:00:00Z"), 0, -6, 0, utc0), T("2021-01-01T12:00:00Z"));
}

// ---- Tags and filters --------------------------------------------------------------------------

TEST(ForgetTags, SplitAndMatch) {
  EXPECT_EQ(SplitTagList("a, b ,c"), (TagList{"a", "b", "c"}));
  EXPECT_EQ(SplitTagList(""), (TagList{""}));
  EXPECT_EQ(SplitTagList("a,"), (TagList{"a", ""}));
  EXPECT_EQ(TagListString({"a", "b"}), "[a, b]");
  EXPECT_EQ(TagListsString({{"a"}, {"b", "c"}}), "[[a] [b, c]]");
  EXPECT_EQ(TagListsString({{""}}), "[[]]");

  Snapshot none, ab;
  ab.tags = {"a", "b"};
  EXPECT_TRUE(HasTags(ab, {"a"}));
  EXPECT_TRUE(HasTags(ab, {"b", "a"}));
  EXPECT_FALSE(HasTags(ab, {"a", "c"}));
  EXPECT_TRUE(HasTags(ab, {}));
  // "" selects untagged snapshots only.
  EXPECT_TRUE(HasTags(none, {""}));
  EXPECT_FALSE(HasTags(ab, {""}));
  EXPECT_FALSE(HasTags(none, {"a", ""}));
  EXPECT_TRUE(HasTagList(none, {}));
  EXPECT_TRUE(HasTagList(ab, {{"x"}, {"b"}}));
  EXPECT_FALSE(HasTagList(ab, {{"x"}, {"a", "y"}}));
}

// ---- Grouping ----------------------------------------------------------------------------------

TEST(ForgetGroups, ByHostAndPaths) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T00:00:00Z", {}, "h1", {"/b", "/a"}),
      Snap(2, "2021-01-02T00:00:00Z", {}, "h1", {"/a", "/b"}),
      Snap(3, "2021-01-03T00:00:00Z", {}, "h2", {"/a", "/b"}),
      Snap(4, "2021-01-04T00:00:00Z", {"x"}, "h1", {"/a"}),
  };
  auto g = GroupSnapshots(list, GroupBy::Parse("host,paths"));
  ASSERT_EQ(g.size(), 3u);
  // sorted by key text: ',' sorts before ']'
  EXPECT_EQ(g[0].key, R"({"hostname":"h1","paths":["/a","/b"],"tags":null})");
  EXPECT_EQ(Numbers(g[0].snapshots), (std::vector<int>{1, 2}));
  EXPECT_EQ(g[1].key, R"({"hostname":"h1","paths":["/a"],"tags":null})");
  EXPECT_EQ(Numbers(g[1].snapshots), (std::vector<int>{4}));
  // paths are sorted in place, as restic does
  EXPECT_EQ(g[0].snapshots[0].second.paths, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(g[2].hostname, "h2");
  EXPECT_FALSE(g[2].tags.has_value());
}

TEST(ForgetGroups, ByTagsNoneAndErrors) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T00:00:00Z", {"b", "a"}, "h1"),
      Snap(2, "2021-01-02T00:00:00Z", {"a", "b"}, "h2"),
      Snap(3, "2021-01-03T00:00:00Z", {}, "h1"),
  };
  auto g = GroupSnapshots(list, GroupBy::Parse("tags"));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].key, R"({"hostname":"","paths":null,"tags":["a","b"]})");
  EXPECT_EQ(Numbers(g[0].snapshots), (std::vector<int>{1, 2}));
  EXPECT_EQ(g[0].snapshots[0].second.tags, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(g[1].key, R"({"hostname":"","paths":null,"tags":null})");

  auto one = GroupSnapshots(list, GroupBy::Parse(""));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].key, R"({"hostname":"","paths":null,"tags":null})");
  EXPECT_FALSE(GroupBy::Parse("").Any());
  GroupBy all = GroupBy::Parse("hosts,path,tag,");
  EXPECT_TRUE(all.host && all.paths && all.tags);
  try {
    GroupBy::Parse("host,bogus");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown grouping option: 'bogus'");
  }
  EXPECT_THROW(GroupBy::Parse("host, paths"), Error);  // no trimming
}

// ---- Policies ----------------------------------------------------------------------------------

TEST(ForgetPolicy, EmptyAndString) {
  ExpirePolicy p;
  EXPECT_TRUE(p.Empty());
  p.keep_tags = {{""}};
  EXPECT_FALSE(p.Empty());
  ExpirePolicy q;
  q.last = -1;
  EXPECT_FALSE(q.Empty());  // as in restic 0.14
  ExpirePolicy r;
  r.last = 2;
  r.daily = 7;
  r.within_daily = Duration{0, 0, 2, 0};
  r.keep_tags = {{"a"}, {"b", "c"}};
  r.within = Duration{0, 1, 0, 0};
  EXPECT_EQ(r.String(),
            "keep 2 latest, 7 daily snapshots, daily snapshots within 2d and all snapshots "
            "with tags [[a] [b, c]] and all snapshots within 1m of the newest");
  ExpirePolicy w;
  w.within = Duration{0, 0, 1, 2};
  EXPECT_EQ(w.String(), "keep all snapshots within 1d2h of the newest");
  auto res = ApplyPolicy({Snap(1, "2021-01-01T00:00:00Z")}, ExpirePolicy{}, kNow);
  ASSERT_EQ(res.reasons.size(), 1u);
  EXPECT_EQ(res.reasons[0].matches, (std::vector<std::string>{"policy is empty"}));
}

TEST(ForgetPolicy, LastAndCounters) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T00:00:00Z"), Snap(3, "2021-01-03T00:00:00Z"),
      Snap(2, "2021-01-02T00:00:00Z"), Snap(4, "2021-01-04T00:00:00Z")};
  ExpirePolicy p;
  p.last = 2;
  p.daily = 3;
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{4, 3, 2}));
  EXPECT_EQ(Numbers(r.remove), (std::vector<int>{1}));
  ASSERT_EQ(r.reasons.size(), 3u);
  EXPECT_EQ(r.reasons[0].matches, (std::vector<std::string>{"last snapshot", "daily snapshot"}));
  EXPECT_EQ(r.reasons[0].counters.last, 1);
  EXPECT_EQ(r.reasons[0].counters.daily, 2);
  EXPECT_EQ(r.reasons[2].matches, (std::vector<std::string>{"daily snapshot"}));
  EXPECT_EQ(r.reasons[2].counters.last, 0);
  EXPECT_EQ(r.reasons[2].counters.daily, 0);
}

TEST(ForgetPolicy, BucketsKeepTheNewestOfEachPeriod) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T08:00:00Z"), Snap(2, "2021-01-01T20:00:00Z"),
      Snap(3, "2021-01-02T08:00:00Z"), Snap(4, "2021-01-02T09:00:00Z"),
      Snap(5, "2021-01-03T10:00:00Z")};
  ExpirePolicy p;
  p.daily = 10;
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{5, 4, 2}));
  // weekly: Jan 1-3 2021 are all in ISO week 2020-53; Jan 4 starts week 1.
  list.push_back(Snap(6, "2021-01-04T00:30:00Z"));
  ExpirePolicy w;
  w.weekly = 5;
  r = ApplyPolicy(list, w, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{6, 5}));
  // yearly with 2: the newest of 2021 and of... 2021 only; nothing older in another year.
  ExpirePolicy y;
  y.yearly = 2;
  r = ApplyPolicy(list, y, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{6}));
}

TEST(ForgetPolicy, Restic014DoesNotKeepTheOldestWhileCountsRemain) {
  std::vector<SnapshotEntry> list = {Snap(1, "2021-01-01T08:00:00Z"),
                                     Snap(2, "2021-01-01T09:00:00Z")};
  ExpirePolicy p;
  p.daily = 5;
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{2}));
  PolicyOptions v16;
  v16.restic016 = true;
  r = ApplyPolicy(list, p, kNow, v16);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{2, 1}));
  ExpirePolicy unlimited;
  unlimited.monthly = -1;
  list.push_back(Snap(3, "2021-02-01T00:00:00Z"));
  EXPECT_EQ(Numbers(ApplyPolicy(list, unlimited, kNow).keep), (std::vector<int>{}));
  EXPECT_EQ(Numbers(ApplyPolicy(list, unlimited, kNow, v16).keep), (std::vector<int>{3, 2, 1}));
}

TEST(ForgetPolicy, KeepTagIsNotCounted) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T00:00:00Z", {"keep"}), Snap(2, "2021-01-02T00:00:00Z", {"a", "b"}),
      Snap(3, "2021-01-03T00:00:00Z"), Snap(4, "2021-01-04T00:00:00Z", {"a"})};
  ExpirePolicy p;
  p.keep_tags = {{"keep"}, {"a", "b"}};
  p.last = 1;
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(r.reasons[1].matches, (std::vector<std::string>{"has tags [a, b]"}));
  EXPECT_EQ(r.reasons[0].matches, (std::vector<std::string>{"last snapshot"}));
  ExpirePolicy untagged;
  untagged.keep_tags = {{""}};
  EXPECT_EQ(Numbers(ApplyPolicy(list, untagged, kNow).keep), (std::vector<int>{3}));
}

TEST(ForgetPolicy, WithinIsRelativeToTheLatestSnapshotNotInTheFuture) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2021-01-01T00:00:00Z"), Snap(2, "2021-01-09T12:00:00Z"),
      Snap(3, "2021-01-10T00:00:00Z"),
      Snap(4, "2021-01-11T00:00:00Z"),  // exactly 2d before "latest": not kept (strict)
      Snap(5, "2021-01-13T00:00:00Z"),
      Snap(6, "2040-01-01T00:00:00Z")};  // in the future: ignored for "latest", but kept
  ExpirePolicy p;
  p.within = Duration{0, 0, 2, 0};
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{6, 5}));
  EXPECT_EQ(r.reasons[1].matches, (std::vector<std::string>{"within 2d"}));
  p.within = Duration{0, 0, 3, 1};
  EXPECT_EQ(Numbers(ApplyPolicy(list, p, kNow).keep), (std::vector<int>{6, 5, 4, 3}));
  // When every snapshot is in the future, latest is Go's zero time: all are within.
  p.within = Duration{1, 0, 0, 0};
  EXPECT_EQ(Numbers(ApplyPolicy(list, p, T("2000-01-01T00:00:00Z")).keep),
            (std::vector<int>{6, 5, 4, 3, 2, 1}));
}

TEST(ForgetPolicy, WithinBucketsAreUncountedAndBounded) {
  std::vector<SnapshotEntry> list = {
      Snap(1, "2020-12-01T10:00:00Z"), Snap(2, "2021-01-01T10:00:00Z"),
      Snap(3, "2021-01-01T11:00:00Z"), Snap(4, "2021-01-02T10:00:00Z"),
      Snap(5, "2021-01-03T10:00:00Z"), Snap(6, "2021-01-03T12:00:00Z")};
  ExpirePolicy p;
  p.within_daily = Duration{0, 0, 2, 0};  // after 2021-01-01T12:00Z
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{6, 4}));
  EXPECT_EQ(r.reasons[0].matches, (std::vector<std::string>{"daily within 2d"}));
  p.within_daily = Duration{0, 0, 2, 1};  // after 2021-01-01T11:00Z (strict)
  EXPECT_EQ(Numbers(ApplyPolicy(list, p, kNow).keep), (std::vector<int>{6, 4}));
  p.within_daily = Duration{0, 0, 2, 2};
  EXPECT_EQ(Numbers(ApplyPolicy(list, p, kNow).keep), (std::vector<int>{6, 4, 3}));
  ExpirePolicy m;
  m.within_monthly = Duration{1, 0, 0, 0};
  EXPECT_EQ(Numbers(ApplyPolicy(list, m, kNow).keep), (std::vector<int>{6, 1}));
}

TEST(ForgetPolicy, NewestFirstStableForEqualTimes) {
  std::vector<SnapshotEntry> list = {Snap(1, "2021-01-01T00:00:00Z"),
                                     Snap(2, "2021-01-01T00:00:00Z"),
                                     Snap(3, "2021-01-01T00:00:00Z")};
  ExpirePolicy p;
  p.last = 2;
  auto r = ApplyPolicy(list, p, kNow);
  EXPECT_EQ(Numbers(r.keep), (std::vector<int>{1, 2}));
  EXPECT_EQ(Numbers(r.remove), (std::vector<int>{3}));
  // The same instant recorded in two offsets is one instant but two different days.
  std::vector<SnapshotEntry> tz = {Snap(1, "2021-01-01T23:30:00Z"),
                                   Snap(2, "2021-01-02T01:30:00+02:00")};
  ExpirePolicy d;
  d.daily = 5;
  EXPECT_EQ(Numbers(ApplyPolicy(tz, d, kNow).keep), (std::vector<int>{1, 2}));
}

TEST(ForgetPolicy, SubSecondOrdering) {
  std::vector<SnapshotEntry> list = {Snap(1, "2021-01-01T00:00:00.2Z"),
                                     Snap(2, "2021-01-01T00:00:00.1Z")};
  ExpirePolicy p;
  p.last = 1;
  EXPECT_EQ(Numbers(ApplyPolicy(list, p, kNow).keep), (std::vector<int>{1}));
}

}  // namespace
}  // namespace haven::forget
