// forget: which snapshots a retention policy keeps (restic 0.14's rules,
// internal/restic/snapshot_policy.go). Pure logic, no I/O: the caller loads the
// snapshots, passes "now" and (optionally) the local time zone, and deletes what
// ApplyPolicy puts into `remove`.
//
// Semantics are restic 0.14's (cmd/restic/cmd_forget.go, internal/restic/snapshot_policy.go,
// snapshot_group.go, duration.go, tag_list.go):
//  * groups: key = hostname / sorted paths / sorted tags as chosen by --group-by
//    ("host,paths" by default; "" = one group);
//  * within a group: stable sort newest first; "latest" = the newest snapshot time that is
//    strictly before now (zero time 0001-01-01 UTC when there is none);
//  * per snapshot, in order: keep-tag lists (not counted), keep-within (time strictly after
//    latest - duration), the count buckets last/hourly/daily/weekly/monthly/yearly (keep
//    when the bucket has count left and the key differs from the last kept key), then the
//    keep-within-{hourly,...} buckets (uncounted, only inside the duration);
//  * bucket keys use the wall clock in the snapshot's own recorded offset; weeks are ISO
//    8601 weeks (year*100 + week);
//  * "latest - duration" is Go's time.AddDate (calendar y/m/d, normalised like Go's
//    time.Date: Mar 31 - 1 month = Mar 3 or Mar 2) followed by subtracting the hours.
//    AddDate works in latest's location: a fixed offset, except when the recorded offset
//    is non-zero and equals the local zone's offset at that instant, where Go parses the
//    time into time.Local and the calendar step crosses DST transitions in the local zone.
//
// restic 0.16 changed two things, available here behind PolicyOptions::restic016 (off by
// default, as haven targets 0.14): a count of -1 means "unlimited", and when a bucket still
// has count left at the oldest snapshot of the group, that snapshot is kept too.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/id.h"
#include "repo/gojson.h"
#include "repo/snapshot.h"

namespace haven::forget {

// ---- Durations: "1y5m7d2h" -----------------------------------------------------------------

struct Duration {
  int years = 0, months = 0, days = 0, hours = 0;
  bool Zero() const { return years == 0 && months == 0 && days == 0 && hours == 0; }
  bool Negative() const { return years < 0 || months < 0 || days < 0 || hours < 0; }
  // restic's Duration.String(): non-zero parts in the order y m d h, e.g. "1y2d"; "" if zero.
  std::string String() const;
  friend bool operator==(const Duration&, const Duration&) = default;
};

// restic's ParseDuration: surrounding white space trimmed, then (optionally negative)
// number + unit pairs, units y, m, d, h; a repeated unit overwrites; "" is the zero duration.
// Throws Error(kInvalidArgument) with restic's message ("no number found", "no unit found
// after number 5", "invalid unit 'x' found after number 5").
Duration ParseDuration(std::string_view s);

// ---- Tags ----------------------------------------------------------------------------------

using TagList = std::vector<std::string>;

// "a, b,c" -> {"a","b","c"} (split on ',', white space trimmed around each tag; "" -> {""}).
TagList SplitTagList(std::string_view s);
// restic's TagList.String(): "[a, b]".
std::string TagListString(const TagList& l);
// restic's TagLists.String(): "[[a] [b, c]]".
std::string TagListsString(const std::vector<TagList>& l);

// restic's Snapshot.HasTags: every tag of l is present; an empty tag "" met while the
// snapshot has no tags at all matches immediately (so {""} selects untagged snapshots).
bool HasTags(const Snapshot& s, const TagList& l);
// At least one list matches, or lists is empty.
bool HasTagList(const Snapshot& s, const std::vector<TagList>& lists);

// ---- Policy --------------------------------------------------------------------------------

struct ExpirePolicy {
  int last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0;
  Duration within, within_hourly, within_daily, within_weekly, within_monthly, within_yearly;
  std::vector<TagList> keep_tags;

  // No rule at all (all counts 0, all durations zero, no keep-tag lists). Note that, as in
  // restic, a negative count makes the policy non-empty.
  bool Empty() const;
  // restic's ExpirePolicy.String(), e.g. "keep 2 latest, 7 daily snapshots and all snapshots
  // with tags [[a]] and all snapshots within 1m of the newest".
  std::string String() const;
};

using SnapshotEntry = std::pair<FileId, Snapshot>;

// Counters after evaluating a snapshot (restic prints them, omitting zeros, in JSON).
struct KeepCounters {
  int last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0;
};

struct KeepReason {
  FileId id;
  Snapshot snapshot;
  std::vector<std::string> matches;  // e.g. "last snapshot", "daily within 2d", "has tags [a]"
  KeepCounters counters;
};

struct PolicyResult {
  std::vector<SnapshotEntry> keep;    // newest first
  std::vector<SnapshotEntry> remove;  // newest first
  std::vector<KeepReason> reasons;    // parallel to keep
};

// Local time zone: seconds east of UTC in effect at a Unix instant.
using LocalOffsetFn = std::function<int32_t(int64_t unix_sec)>;

struct PolicyOptions {
  // The local zone (Go's time.Local), see the header comment; empty = treat every recorded
  // offset as a fixed zone.
  LocalOffsetFn local_offset;
  // restic >= 0.16 semantics: count -1 = unlimited, and keep the oldest snapshot while a
  // bucket has count left.
  bool restic016 = false;
};

// Applies p to one group. `now` only serves to find "latest" (snapshots in the future are
// ignored for it). An empty policy keeps everything with the reason "policy is empty".
PolicyResult ApplyPolicy(std::vector<SnapshotEntry> list, const ExpirePolicy& p,
                         const gojson::Timestamp& now, const PolicyOptions& opts = {});

// ---- Grouping ------------------------------------------------------------------------------

struct GroupBy {
  bool host = false, paths = false, tags = false;
  // "host,paths", "tags", "" ...; accepts host/hosts, path/paths, tag/tags and empty
  // elements. Throws Error(kInvalidArgument) "unknown grouping option: 'x'".
  static GroupBy Parse(std::string_view s);
  bool Any() const { return host || paths || tags; }
};

struct SnapshotGroup {
  // restic's group key: JSON of {"hostname":..,"paths":..,"tags":..}; groups are returned
  // sorted by it (restic iterates a Go map, i.e. in random order).
  std::string key;
  std::string hostname;                           // "" unless grouped by host
  std::optional<std::vector<std::string>> paths;  // nullopt = JSON null
  std::optional<std::vector<std::string>> tags;   // nullopt = JSON null
  std::vector<SnapshotEntry> snapshots;           // input order
};

// Like restic, the snapshots' paths are sorted in place (always) and so are their tags
// (when grouping by tags); this shows in the JSON output.
std::vector<SnapshotGroup> GroupSnapshots(std::vector<SnapshotEntry> list, const GroupBy& by);

// ---- Calendar helpers (Go's time package semantics; exposed for tests) ---------------------

struct WallClock {
  int64_t year;
  int month, day, hour, minute, second;
  int weekday;  // 0 = Sunday
  int yday;     // 0-based day of the year
};
// Wall clock of t in its recorded offset.
WallClock Wall(const gojson::Timestamp& t);
// Go's Time.ISOWeek: {ISO year, week 1..53}.
std::pair<int64_t, int> IsoWeek(const gojson::Timestamp& t);
// Go's t.AddDate(years, months, days) in t's location (see the header comment for when
// that is the local zone). The result's offset is t's (fixed zone) or the local one.
gojson::Timestamp AddDate(const gojson::Timestamp& t, int years, int months, int days,
                          const LocalOffsetFn& local_offset = {});
// Bucket keys: YYYYMMDDHH, YYYYMMDD, ISO year*100+week, YYYYMM, YYYY.
int64_t KeyHour(const gojson::Timestamp& t);
int64_t KeyDay(const gojson::Timestamp& t);
int64_t KeyWeek(const gojson::Timestamp& t);
int64_t KeyMonth(const gojson::Timestamp& t);
int64_t KeyYear(const gojson::Timestamp& t);

// Go's zero time.Time (0001-01-01T00:00:00Z).
constexpr gojson::Timestamp kZeroTime{-62135596800, 0, 0};

}  // namespace haven::forget
