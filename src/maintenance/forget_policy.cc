#include "maintenance/forget_policy.h"

#include <algorithm>
#include <array>
#include <map>

#include "core/error.h"

namespace haven::forget {

namespace {

// ---- Proleptic Gregorian calendar (H. Hinnant's days_from_civil / civil_from_days) ---------

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t mp = (m + 9) % 12;
  const int64_t doy = (153 * mp + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, int& m, int& d) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2);
}

// Go's norm(hi, lo, base): lo into [0, base), overflow carried into hi.
void Norm(int64_t& hi, int64_t& lo, int64_t base) {
  if (lo < 0) {
    int64_t n = (-lo - 1) / base + 1;
    hi -= n;
    lo += n * base;
  }
  if (lo >= base) {
    int64_t n = lo / base;
    hi += n;
    lo -= n * base;
  }
}

bool Before(const gojson::Timestamp& a, const gojson::Timestamp& b) {
  if (a.sec != b.sec) return a.sec < b.sec;
  return a.nsec < b.nsec;
}
bool After(const gojson::Timestamp& a, const gojson::Timestamp& b) { return Before(b, a); }

std::string TrimSpace(std::string_view s) {
  auto sp = [](unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  size_t b = 0, e = s.size();
  while (b < e && sp(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && sp(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

// ---- Durations -----------------------------------------------------------------------------

std::string Duration::String() const {
  std::string s;
  if (years) s += std::to_string(years) + "y";
  if (months) s += std::to_string(months) + "m";
  if (days) s += std::to_string(days) + "d";
  if (hours) s += std::to_string(hours) + "h";
  return s;
}

Duration ParseDuration(std::string_view input) {
  std::string s = TrimSpace(input);
  Duration d;
  size_t i = 0;
  while (i < s.size()) {
    bool negative = false;
    if (s[i] == '-') {
      negative = true;
      ++i;
    }
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) Fail(ErrorCode::kInvalidArgument, "no number found");
    int64_t num = 0;
    for (size_t k = start; k < i; ++k) {
      num = num * 10 + (s[k] - '0');
      if (num > INT32_MAX) Fail(ErrorCode::kInvalidArgument, "number too large in duration");
    }
    if (negative) num = -num;
    if (i == s.size())
      Fail(ErrorCode::kInvalidArgument, "no unit found after number " + std::to_string(num));
    switch (s[i]) {
      case 'y': d.years = static_cast<int>(num); break;
      case 'm': d.months = static_cast<int>(num); break;
      case 'd': d.days = static_cast<int>(num); break;
      case 'h': d.hours = static_cast<int>(num); break;
      default: {
        // Go's %q of a byte: a quoted character literal.
        unsigned char c = static_cast<unsigned char>(s[i]);
        std::string q;
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
          q = std::string("'") + static_cast<char>(c) + "'";
        } else if (c == '\'') {
          q = "'\\''";
        } else if (c == '\\') {
          q = "'\\\\'";
        } else {
          char buf[16];
          std::snprintf(buf, sizeof(buf), "'\\x%02x'", c);
          q = buf;
        }
        Fail(ErrorCode::kInvalidArgument,
             "invalid unit " + q + " found after number " + std::to_string(num));
      }
    }
    ++i;
  }
  return d;
}

// ---- Tags ----------------------------------------------------------------------------------

TagList SplitTagList(std::string_view s) {
  TagList l;
  size_t start = 0;
  while (true) {
    size_t end = s.find(',', start);
    if (end == std::string_view::npos) {
      l.push_back(TrimSpace(s.substr(start)));
      break;
    }
    l.push_back(TrimSpace(s.substr(start, end - start)));
    start = end + 1;
  }
  return l;
}

std::string TagListString(const TagList& l) {
  std::string s = "[";
  for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i];
  return s + "]";
}

std::string TagListsString(const std::vector<TagList>& l) {
  std::string s = "[";
  for (size_t i = 0; i < l.size(); ++i) s += (i ? " " : "") + TagListString(l[i]);
  return s + "]";
}

bool HasTags(const Snapshot& s, const TagList& l) {
  for (const std::string& tag : l) {
    if (tag.empty() && s.tags.empty()) return true;
    if (std::find(s.tags.begin(), s.tags.end(), tag) == s.tags.end()) return false;
  }
  return true;
}

bool HasTagList(const Snapshot& s, const std::vector<TagList>& lists) {
  if (lists.empty()) return true;
  for (const TagList& l : lists)
    if (HasTags(s, l)) return true;
  return false;
}

// ---- Policy --------------------------------------------------------------------------------

bool ExpirePolicy::Empty() const {
  return keep_tags.empty() && last == 0 && hourly == 0 && daily == 0 && weekly == 0 &&
         monthly == 0 && yearly == 0 && within.Zero() && within_hourly.Zero() &&
         within_daily.Zero() && within_weekly.Zero() && within_monthly.Zero() &&
         within_yearly.Zero();
}

std::string ExpirePolicy::String() const {
  std::vector<std::string> keeps, keepw;
  if (last > 0) keeps.push_back(std::to_string(last) + " latest");
  if (hourly > 0) keeps.push_back(std::to_string(hourly) + " hourly");
  if (daily > 0) keeps.push_back(std::to_string(daily) + " daily");
  if (weekly > 0) keeps.push_back(std::to_string(weekly) + " weekly");
  if (monthly > 0) keeps.push_back(std::to_string(monthly) + " monthly");
  if (yearly > 0) keeps.push_back(std::to_string(yearly) + " yearly");
  if (!within_hourly.Zero())
    keepw.push_back("hourly snapshots within " + within_hourly.String());
  if (!within_daily.Zero()) keepw.push_back("daily snapshots within " + within_daily.String());
  if (!within_weekly.Zero())
    keepw.push_back("weekly snapshots within " + within_weekly.String());
  if (!within_monthly.Zero())
    keepw.push_back("monthly snapshots within " + within_monthly.String());
  if (!within_yearly.Zero())
    keepw.push_back("yearly snapshots within " + within_yearly.String());
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  };
  std::string s;
  if (!keeps.empty()) s = join(keeps) + " snapshots";
  if (!keepw.empty()) {
    if (!s.empty()) s += ", ";
    s += join(keepw);
  }
  if (!keep_tags.empty()) {
    if (!s.empty()) s += " and ";
    s += "all snapshots with tags " + TagListsString(keep_tags);
  }
  if (!within.Zero()) {
    if (!s.empty()) s += " and ";
    s += "all snapshots within " + within.String() + " of the newest";
  }
  return "keep " + s;
}

// ---- Calendar ------------------------------------------------------------------------------

WallClock Wall(const gojson::Timestamp& t) {
  int64_t local = t.sec + t.offset;
  int64_t days = FloorDiv(local, 86400);
  int64_t rem = local - days * 86400;
  WallClock w{};
  CivilFromDays(days, w.year, w.month, w.day);
  w.hour = static_cast<int>(rem / 3600);
  w.minute = static_cast<int>(rem / 60 % 60);
  w.second = static_cast<int>(rem % 60);
  // 1970-01-01 was a Thursday (4).
  w.weekday = static_cast<int>(((days % 7) + 7 + 4) % 7);
  w.yday = static_cast<int>(days - DaysFromCivil(w.year, 1, 1));
  return w;
}

std::pair<int64_t, int> IsoWeek(const gojson::Timestamp& t) {
  WallClock w = Wall(t);
  // Move to the Thursday of the same Monday-based week.
  int d = 4 - w.weekday;
  if (d == 4) d = -3;  // Sunday belongs to the week that started six days earlier
  int64_t days = DaysFromCivil(w.year, w.month, w.day) + d;
  int64_t y;
  int m, dd;
  CivilFromDays(days, y, m, dd);
  int yday = static_cast<int>(days - DaysFromCivil(y, 1, 1));
  return {y, yday / 7 + 1};
}

gojson::Timestamp AddDate(const gojson::Timestamp& t, int years, int months, int days,
                          const LocalOffsetFn& local_offset) {
  // Go parses a recorded non-zero offset that matches the local zone at that instant into
  // time.Local; "Z" (offset 0) is always UTC.
  bool local = local_offset && t.offset != 0 && local_offset(t.sec) == t.offset;
  WallClock w = Wall(t);
  int64_t year = w.year + years;
  int64_t m = static_cast<int64_t>(w.month) - 1 + months;
  Norm(year, m, 12);
  int64_t day = static_cast<int64_t>(w.day) + days;
  int64_t unix_wall = (DaysFromCivil(year, static_cast<int>(m) + 1, 1) + day - 1) * 86400 +
                      w.hour * 3600 + w.minute * 60 + w.second;
  gojson::Timestamp r;
  r.nsec = t.nsec;
  if (!local) {
    r.sec = unix_wall - t.offset;
    r.offset = t.offset;
    return r;
  }
  // Go's Date() for a zone with transitions: look up the offset for the wall time taken as
  // UTC; if the resulting instant lies in another zone period, use that period's offset.
  int32_t off = local_offset(unix_wall);
  if (off != 0) {
    int32_t off2 = local_offset(unix_wall - off);
    if (off2 != off) off = off2;
  }
  r.sec = unix_wall - off;
  r.offset = local_offset(r.sec);
  return r;
}

int64_t KeyHour(const gojson::Timestamp& t) {
  WallClock w = Wall(t);
  return w.year * 1000000 + w.month * 10000 + w.day * 100 + w.hour;
}
int64_t KeyDay(const gojson::Timestamp& t) {
  WallClock w = Wall(t);
  return w.year * 10000 + w.month * 100 + w.day;
}
int64_t KeyWeek(const gojson::Timestamp& t) {
  auto [y, wk] = IsoWeek(t);
  return y * 100 + wk;
}
int64_t KeyMonth(const gojson::Timestamp& t) {
  WallClock w = Wall(t);
  return w.year * 100 + w.month;
}
int64_t KeyYear(const gojson::Timestamp& t) { return Wall(t).year; }

// ---- ApplyPolicy ---------------------------------------------------------------------------

namespace {

gojson::Timestamp WithinLimit(const gojson::Timestamp& latest, const Duration& d,
                              const LocalOffsetFn& local) {
  gojson::Timestamp t = AddDate(latest, -d.years, -d.months, -d.days, local);
  t.sec -= static_cast<int64_t>(d.hours) * 3600;
  return t;
}

using Bucker = int64_t (*)(const gojson::Timestamp&, int64_t nr);

int64_t Always(const gojson::Timestamp&, int64_t nr) { return nr; }
int64_t BHour(const gojson::Timestamp& t, int64_t) { return KeyHour(t); }
int64_t BDay(const gojson::Timestamp& t, int64_t) { return KeyDay(t); }
int64_t BWeek(const gojson::Timestamp& t, int64_t) { return KeyWeek(t); }
int64_t BMonth(const gojson::Timestamp& t, int64_t) { return KeyMonth(t); }
int64_t BYear(const gojson::Timestamp& t, int64_t) { return KeyYear(t); }

}  // namespace

PolicyResult ApplyPolicy(std::vector<SnapshotEntry> list, const ExpirePolicy& p,
                         const gojson::Timestamp& now, const PolicyOptions& opts) {
  // Newest first, stable (Go's sort.Stable with Less = Time.After).
  std::stable_sort(list.begin(), list.end(), [](const SnapshotEntry& a, const SnapshotEntry& b) {
    return After(a.second.time, b.second.time);
  });
  PolicyResult res;
  if (p.Empty()) {
    for (auto& e : list) res.reasons.push_back({e.first, e.second, {"policy is empty"}, {}});
    res.keep = std::move(list);
    return res;
  }
  if (list.empty()) return res;

  struct Bucket {
    int count;
    Bucker bucker;
    int64_t last;
    const char* reason;
  };
  std::array<Bucket, 6> buckets{{
      {p.last, Always, -1, "last snapshot"},
      {p.hourly, BHour, -1, "hourly snapshot"},
      {p.daily, BDay, -1, "daily snapshot"},
      {p.weekly, BWeek, -1, "weekly snapshot"},
      {p.monthly, BMonth, -1, "monthly snapshot"},
      {p.yearly, BYear, -1, "yearly snapshot"},
  }};
  struct WithinBucket {
    Duration within;
    Bucker bucker;
    int64_t last;
    const char* reason;
  };
  std::array<WithinBucket, 5> within_buckets{{
      {p.within_hourly, BHour, -1, "hourly within"},
      {p.within_daily, BDay, -1, "daily within"},
      {p.within_weekly, BWeek, -1, "weekly within"},
      {p.within_monthly, BMonth, -1, "monthly within"},
      {p.within_yearly, BYear, -1, "yearly within"},
  }};

  // "latest": the newest snapshot time strictly before now; Go's zero time if none.
  gojson::Timestamp latest = kZeroTime;
  for (const auto& e : list)
    if (After(e.second.time, latest) && Before(e.second.time, now)) latest = e.second.time;

  const bool v16 = opts.restic016;
  for (size_t nr = 0; nr < list.size(); ++nr) {
    const Snapshot& cur = list[nr].second;
    const bool oldest = v16 && nr == list.size() - 1;
    bool keep = false;
    std::vector<std::string> why;

    for (const TagList& l : p.keep_tags) {
      if (HasTags(cur, l)) {
        keep = true;
        why.push_back("has tags " + TagListString(l));
      }
    }

    if (!p.within.Zero()) {
      gojson::Timestamp t = WithinLimit(latest, p.within, opts.local_offset);
      if (After(cur.time, t)) {
        keep = true;
        why.push_back("within " + p.within.String());
      }
    }

    for (Bucket& b : buckets) {
      if (b.count > 0 || (v16 && b.count == -1)) {
        int64_t val = b.bucker(cur.time, static_cast<int64_t>(nr));
        if (val != b.last || oldest) {
          keep = true;
          b.last = val;
          if (b.count > 0) --b.count;
          why.push_back(b.reason);
        }
      }
    }

    for (WithinBucket& b : within_buckets) {
      if (b.within.Zero()) continue;
      gojson::Timestamp t = WithinLimit(latest, b.within, opts.local_offset);
      if (!After(cur.time, t)) continue;
      int64_t val = b.bucker(cur.time, static_cast<int64_t>(nr));
      if (val != b.last || oldest) {
        keep = true;
        b.last = val;
        why.push_back(std::string(b.reason) + " " + b.within.String());
      }
    }

    if (keep) {
      KeepCounters c{buckets[0].count, buckets[1].count, buckets[2].count,
                     buckets[3].count, buckets[4].count, buckets[5].count};
      res.reasons.push_back({list[nr].first, cur, std::move(why), c});
      res.keep.push_back(std::move(list[nr]));
    } else {
      res.remove.push_back(std::move(list[nr]));
    }
  }
  return res;
}

// ---- Grouping ------------------------------------------------------------------------------

GroupBy GroupBy::Parse(std::string_view s) {
  GroupBy g;
  size_t start = 0;
  while (true) {
    size_t end = s.find(',', start);
    std::string_view opt =
        s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (opt == "host" || opt == "hosts") {
      g.host = true;
    } else if (opt == "path" || opt == "paths") {
      g.paths = true;
    } else if (opt == "tag" || opt == "tags") {
      g.tags = true;
    } else if (!opt.empty()) {
      Fail(ErrorCode::kInvalidArgument, "unknown grouping option: '" + std::string(opt) + "'");
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return g;
}

std::vector<SnapshotGroup> GroupSnapshots(std::vector<SnapshotEntry> list, const GroupBy& by) {
  std::map<std::string, SnapshotGroup> groups;
  for (auto& e : list) {
    Snapshot& sn = e.second;
    std::optional<std::vector<std::string>> tags, paths;
    std::string host;
    if (by.tags) {
      std::sort(sn.tags.begin(), sn.tags.end());
      if (!sn.tags.empty()) tags = sn.tags;  // a snapshot without tags has nil tags
    }
    if (by.host) host = sn.hostname;
    std::sort(sn.paths.begin(), sn.paths.end());
    if (by.paths && !sn.paths.empty()) paths = sn.paths;
    std::string key = "{\"hostname\":";
    gojson::AppendString(key, host);
    key += ",\"paths\":";
    gojson::AppendStringList(key, paths);
    key += ",\"tags\":";
    gojson::AppendStringList(key, tags);
    key += '}';
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) {
      it->second.key = key;
      it->second.hostname = host;
      it->second.paths = paths;
      it->second.tags = tags;
    }
    it->second.snapshots.push_back(std::move(e));
  }
  std::vector<SnapshotGroup> out;
  out.reserve(groups.size());
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

}  // namespace haven::forget
