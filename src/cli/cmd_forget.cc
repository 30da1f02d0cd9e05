// forget: remove snapshots by policy (--keep-*) per group, or the snapshots named on the
// command line. Flags, output (text tables and --json) and exit codes follow restic 0.14.
// This file wires options: the policy is maintenance/forget_policy, the selection
// cli/snapshot_filter, the output cli/forget_report, deletion RemoveFiles
// (maintenance/index_writer) and the prune after it maintenance/prune.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>

#include "cli/common.h"
#include "cli/forget_report.h"
#include "cli/prune_report.h"
#include "cli/snapshot_filter.h"
#include "cli/snapshot_table.h"
#include "core/error.h"
#include "maintenance/forget_policy.h"
#include "maintenance/index_writer.h"
#include "maintenance/prune.h"

namespace haven::cli {

namespace {

struct ForgetOptions {
  int last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0;
  std::string within, within_hourly, within_daily, within_weekly, within_monthly,
      within_yearly;
  std::vector<std::string> keep_tags;
  SnapshotFilter filter;  // --host, --tag, --path
  bool compact = false;
  std::string group_by = "host,paths";
  bool dry_run = false;
  bool prune = false;
  // prune's options (restic adds them to forget for --prune)
  std::string max_unused = "5%", max_repack_size, unreferenced_grace;
  bool repack_cacheable_only = false, repack_small = false, repack_uncompressed = false;
  std::vector<std::string> ids;
};

ForgetOptions& Opts() {
  static ForgetOptions o;
  return o;
}

forget::Duration ParseDurationFlag(const std::string& value, const char* flag) {
  try {
    return forget::ParseDuration(value);
  } catch (const Error& e) {
    Fail(ErrorCode::kInvalidArgument, "invalid argument \"" + value + "\" for \"" + flag +
                                          "\" flag: " + e.what());
  }
}

gojson::Timestamp Now() {
  auto d = std::chrono::system_clock::now().time_since_epoch();
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  return gojson::LocalTime(ns / 1000000000, static_cast<int32_t>(ns % 1000000000));
}

int32_t LocalOffset(int64_t sec) {
  time_t t = static_cast<time_t>(sec);
  struct tm tm;
  if (!localtime_r(&t, &tm)) return 0;
  return static_cast<int32_t>(tm.tm_gmtoff);
}

// The --keep-* options as a policy; negative counts and durations are refused.
forget::ExpirePolicy PolicyFromOptions(const ForgetOptions& o) {
  for (int v : {o.last, o.hourly, o.daily, o.weekly, o.monthly, o.yearly})
    if (v < 0)
      // restic 0.14 accepts negative counts and then removes every snapshot the bucket
      // would have kept; 0.16 rejects them (except -1 = unlimited). haven refuses them.
      Fail(ErrorCode::kInvalidArgument, "negative values are not allowed for --keep-*");
  forget::ExpirePolicy policy;
  policy.last = o.last;
  policy.hourly = o.hourly;
  policy.daily = o.daily;
  policy.weekly = o.weekly;
  policy.monthly = o.monthly;
  policy.yearly = o.yearly;
  policy.within = ParseDurationFlag(o.within, "--keep-within");
  policy.within_hourly = ParseDurationFlag(o.within_hourly, "--keep-within-hourly");
  policy.within_daily = ParseDurationFlag(o.within_daily, "--keep-within-daily");
  policy.within_weekly = ParseDurationFlag(o.within_weekly, "--keep-within-weekly");
  policy.within_monthly = ParseDurationFlag(o.within_monthly, "--keep-within-monthly");
  policy.within_yearly = ParseDurationFlag(o.within_yearly, "--keep-within-yearly");
  for (const auto* d : {&policy.within, &policy.within_hourly, &policy.within_daily,
                        &policy.within_weekly, &policy.within_monthly, &policy.within_yearly})
    if (d->Negative())
      Fail(ErrorCode::kInvalidArgument,
           "durations containing negative values are not allowed for --keep-within*");
  for (const auto& t : o.keep_tags) policy.keep_tags.push_back(forget::SplitTagList(t));
  return policy;
}

// The snapshots named on the command line (restic's FindFilteredSnapshots with ids):
// unknown or ambiguous ids are reported and skipped.
std::set<FileId> SelectByIds(const std::vector<SnapshotEntry>& all, const SnapshotFilter& filter,
                             const std::vector<std::string>& args) {
  std::set<FileId> ids;
  bool used_filter = false;
  for (const std::string& a : args) {
    if (a == "latest") {
      used_filter = true;
      auto matching = filter.Apply(all);
      if (matching.empty()) {
        Warn("Ignoring \"latest\", no snapshot matched given filter " + filter.String());
        continue;
      }
      ids.insert(ResolveSnapshot(a, matching));
      continue;
    }
    const PrefixMatch m = MatchIdPrefix(all, a);
    if (m.count > 1) {
      Warn("Ignoring \"" + a + "\": multiple IDs with prefix \"" + a + "\" found");
    } else if (m.count == 0) {
      Warn("Ignoring \"" + a + "\": no matching ID found for prefix \"" + a + "\"");
    } else {
      ids.insert(m.id);
    }
  }
  if (!used_filter && !filter.Empty())
    Warn("Ignoring filters as there are explicit snapshot ids given");
  return ids;
}

// Applies the policy to each group of the filtered snapshots, prints the groups' tables
// and returns the snapshots to remove; `json` gets the groups' JSON array ("" if none).
std::set<FileId> SelectByPolicy(const std::vector<SnapshotEntry>& all, const ForgetOptions& o,
                                const forget::ExpirePolicy& policy,
                                const forget::GroupBy& group_by, std::string& json) {
  const GlobalOptions& g = Globals();
  std::set<FileId> remove_ids;
  auto groups = forget::GroupSnapshots(o.filter.Apply(all), group_by);
  if (policy.Empty()) {
    if (!g.json) Print("no policy was specified, no snapshots will be removed");
    return remove_ids;
  }
  if (!g.json) Print("Applying Policy: " + policy.String());
  forget::PolicyOptions popts;
  popts.local_offset = LocalOffset;
  const gojson::Timestamp now = Now();
  for (const auto& grp : groups) {
    if (g.verbose >= 1 && !g.json) std::cout << GroupHeader(grp);
    auto r = forget::ApplyPolicy(grp.snapshots, policy, now, popts);
    if (!g.quiet && !g.json) std::cout << ForgetGroupText(r, o.compact);
    json += json.empty() ? "[" : ",";
    json += ForgetGroupJson(grp, r);
    for (const auto& e : r.remove) remove_ids.insert(e.first);
  }
  if (!json.empty()) json += "]\n";
  return remove_ids;
}

// Deletes the snapshot files (restic's DeleteFilesChecked: stop at the first error).
void DeleteSnapshots(Repository& repo, const std::set<FileId>& ids) {
  const auto start = std::chrono::steady_clock::now();
  const GlobalOptions& g = Globals();
  const std::vector<RawId> list(ids.begin(), ids.end());
  const int workers =
      std::max(1, std::min<int>(repo.backend().Connections(), static_cast<int>(list.size())));
  RemoveFiles(repo, FileType::kSnapshot, list, workers, false, {},
              [&g](const Handle& h, const Error* e) {
                if (g.json) return;
                if (e) {
                  Warn("unable to remove " + h.ToString() + " from the repository");
                } else if (g.verbose >= 2) {
                  Verbose("removed " + h.ToString());
                }
              });
  if (g.json || g.quiet) return;
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  char buf[128];
  std::snprintf(buf, sizeof(buf), "[%lld:%02lld] 100.00%%  %zu / %zu files deleted",
                static_cast<long long>(secs / 60), static_cast<long long>(secs % 60),
                list.size(), list.size());
  Print(buf);
}

// `--prune`: prune's run and report with forget's repository. A dry run plans it as if
// the snapshots forget would remove were gone (restic's ignoreSnapshots).
void RunPruneAfterForget(Repository& repo, const ForgetOptions& o,
                         const std::set<FileId>& removed, EarlyIndex* early_index) {
  if (!Globals().json)
    Print(std::to_string(removed.size()) + " snapshots have been removed, running prune");
  PruneOptions p;
  p.max_unused = o.max_unused;
  p.max_repack_size = o.max_repack_size;
  p.repack_cacheable_only = o.repack_cacheable_only;
  p.repack_small = o.repack_small;
  p.repack_uncompressed = o.repack_uncompressed;
  p.unreferenced_grace = ParseUnreferencedGrace(o.unreferenced_grace);
  p.dry_run = o.dry_run;
  p.early_index = early_index;  // forget removes snapshot files only: the index files match
  p.jobs = JobsOrAuto();
  p.progress = [](const std::string& s) { Print(s); };
  p.warn = [](const std::string& s) { Warn(s); };
  if (o.dry_run) p.ignore_snapshots = removed;
  const bool dry_run = o.dry_run;
  PruneResult r = RunPrune(repo, p, [dry_run](const PrunePlan& plan) {
    PrintPrunePlan(plan, dry_run);
  });
  if (r.remove_failures > 0)
    Warn("warning: " + std::to_string(r.remove_failures) +
         " file(s) could not be removed; a later prune removes them");
}

void RunForget() {
  ForgetOptions& o = Opts();
  const GlobalOptions& g = Globals();

  // Everything that can be rejected is rejected before the repository is touched.
  ParseMaxUnused(o.max_unused);
  if (!o.max_repack_size.empty()) ParsePruneSize(o.max_repack_size, "--max-repack-size");
  ParseUnreferencedGrace(o.unreferenced_grace);
  const forget::ExpirePolicy policy = PolicyFromOptions(o);
  const forget::GroupBy group_by = forget::GroupBy::Parse(o.group_by);
  if (g.no_lock && !o.dry_run)
    Fail(ErrorCode::kInvalidArgument,
         "--no-lock is only applicable in combination with --dry-run for forget command");

  auto repo = OpenRepository({.prefetch_index = o.prune});
  // With --prune on remote storage the index loads from the open's listing meanwhile.
  auto early_index = o.prune ? StartEarlyIndex(*repo) : nullptr;
  // nullptr with --no-lock (dry run only); its check runs beside the snapshot listing and
  // is confirmed before anything is printed or removed.
  auto lock = LockRepositoryOverlapped(*repo, true);
  auto all = LoadSnapshotsThenConfirm(*repo, lock);
  std::string json;  // the groups' JSON array
  const std::set<FileId> remove_ids = o.ids.empty()
                                          ? SelectByPolicy(all, o, policy, group_by, json)
                                          : SelectByIds(all, o.filter, o.ids);
  if (!remove_ids.empty()) {
    if (!o.dry_run) {
      DeleteSnapshots(*repo, remove_ids);
    } else if (!g.json) {
      // restic prints this even with --quiet
      std::cout << "Would have removed the following snapshots:\n"
                << IdSetString(remove_ids) << "\n\n";
    }
  }
  if (g.json) std::cout << json;
  std::cout.flush();
  if (!remove_ids.empty() && o.prune) RunPruneAfterForget(*repo, o, remove_ids, early_index.get());
}

}  // namespace

void RegisterForget(CLI::App& app) {
  ForgetOptions& o = Opts();
  auto* cmd = app.add_subcommand("forget", "remove snapshots from the repository");
  cmd->add_option("snapshot-ids", o.ids, "forget exactly these snapshots (no policy)");
  cmd->add_option("-l,--keep-last", o.last, "keep the last n snapshots");
  cmd->add_option("-H,--keep-hourly", o.hourly, "keep the last n hourly snapshots");
  cmd->add_option("-d,--keep-daily", o.daily, "keep the last n daily snapshots");
  cmd->add_option("-w,--keep-weekly", o.weekly, "keep the last n weekly snapshots");
  cmd->add_option("-m,--keep-monthly", o.monthly, "keep the last n monthly snapshots");
  cmd->add_option("-y,--keep-yearly", o.yearly, "keep the last n yearly snapshots");
  const char* rel = " (eg. 1y5m7d2h) relative to the latest snapshot";
  cmd->add_option("--keep-within", o.within,
                  std::string("keep snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-within-hourly", o.within_hourly,
                  std::string("keep hourly snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-within-daily", o.within_daily,
                  std::string("keep daily snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-within-weekly", o.within_weekly,
                  std::string("keep weekly snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-within-monthly", o.within_monthly,
                  std::string("keep monthly snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-within-yearly", o.within_yearly,
                  std::string("keep yearly snapshots that are newer than duration") + rel);
  cmd->add_option("--keep-tag", o.keep_tags,
                  "keep snapshots with this taglist (can be specified multiple times)")
      ->allow_extra_args(false);
  cmd->add_option("--host,--hostname", o.filter.hosts,
                  "only consider snapshots with the given host (can be specified multiple "
                  "times)")
      ->allow_extra_args(false);
  cmd->add_option("--tag", o.filter.tags,
                  "only consider snapshots which include this taglist in the format "
                  "tag[,tag,...] (can be specified multiple times)")
      ->allow_extra_args(false);
  cmd->add_option("--path", o.filter.paths,
                  "only consider snapshots which include this (absolute) path (can be "
                  "specified multiple times)")
      ->allow_extra_args(false);
  cmd->add_flag("-c,--compact", o.compact, "use compact output format");
  cmd->add_option("-g,--group-by", o.group_by,
                  "group snapshots by host, paths and/or tags, separated by comma (disable "
                  "grouping with '')");
  cmd->add_flag("-n,--dry-run", o.dry_run, "do not delete anything, just print what would be done");
  cmd->add_flag("--prune", o.prune,
                "automatically run the 'prune' command if snapshots have been removed");
  cmd->add_option("--max-unused", o.max_unused, "prune: tolerated unused data (with --prune)");
  cmd->add_option("--max-repack-size", o.max_repack_size, "prune: maximum size to repack");
  cmd->add_flag("--repack-cacheable-only", o.repack_cacheable_only,
                "prune: only repack packs which are cacheable");
  cmd->add_flag("--repack-small", o.repack_small, "prune: repack pack files below 80% of target");
  cmd->add_flag("--repack-uncompressed", o.repack_uncompressed,
                "prune: repack all uncompressed data");
  cmd->add_option("--unreferenced-grace", o.unreferenced_grace,
                  "prune: keep packs in no index that are younger than this duration (e.g. 2h; "
                  "for eventually consistent storage)");
  cmd->callback(RunForget);
}

}  // namespace haven::cli
