// forget: remove snapshots by policy (--keep-*) per group, or the snapshots named on the
// command line. Flags, output (text tables and --json) and exit codes follow restic 0.14;
// the policy itself is maintenance/forget_policy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "backend/forwarding_backend.h"
#include "cli/common.h"
#include "cli/prune_report.h"
#include "cli/snapshot_filter.h"
#include "cli/snapshot_table.h"
#include "core/error.h"
#include "maintenance/forget_policy.h"
#include "maintenance/prune.h"

namespace haven::cli {

namespace {

using forget::SnapshotEntry;

struct ForgetOptions {
  int last = 0, hourly = 0, daily = 0, weekly = 0, monthly = 0, yearly = 0;
  std::string within, within_hourly, within_daily, within_weekly, within_monthly,
      within_yearly;
  std::vector<std::string> keep_tags;
  std::vector<std::string> hosts, tags, paths;
  bool compact = false;
  std::string group_by = "host,paths";
  bool dry_run = false;
  bool prune = false;
  // prune's options (restic adds them to forget for --prune)
  std::string max_unused = "5%", max_repack_size;
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

// ---- JSON ---------------------------------------------------------------------------------

void AppendSnapshotList(std::string& out, const std::vector<SnapshotEntry>& list) {
  if (list.empty()) {
    out += "null";  // a nil slice in restic's ForgetGroup
    return;
  }
  out += '[';
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    out += SnapshotListJson(list[i].first, list[i].second, nullptr);
  }
  out += ']';
}

// One element of restic's ForgetGroup array.
std::string GroupJson(const forget::SnapshotGroup& g, const forget::PolicyResult& r) {
  std::string out = "{\"tags\":";
  gojson::AppendStringList(out, g.tags);
  out += ",\"host\":";
  gojson::AppendString(out, g.hostname);
  out += ",\"paths\":";
  gojson::AppendStringList(out, g.paths);
  out += ",\"keep\":";
  AppendSnapshotList(out, r.keep);
  out += ",\"remove\":";
  AppendSnapshotList(out, r.remove);
  out += ",\"reasons\":";
  if (r.reasons.empty()) {
    out += "null";
  } else {
    out += '[';
    for (size_t i = 0; i < r.reasons.size(); ++i) {
      const auto& k = r.reasons[i];
      if (i) out += ',';
      out += "{\"snapshot\":" + k.snapshot.ToJson() + ",\"matches\":";
      gojson::AppendStringList(out, k.matches);
      out += ",\"counters\":{";
      bool first = true;
      auto counter = [&](const char* name, int v) {
        if (v == 0) return;  // omitempty
        if (!first) out += ',';
        first = false;
        out += std::string("\"") + name + "\":" + std::to_string(v);
      };
      counter("last", k.counters.last);
      counter("hourly", k.counters.hourly);
      counter("daily", k.counters.daily);
      counter("weekly", k.counters.weekly);
      counter("monthly", k.counters.monthly);
      counter("yearly", k.counters.yearly);
      out += "}}";
    }
    out += ']';
  }
  out += '}';
  return out;
}

// restic's IDSet.String(): sorted short ids in braces.
std::string IdSetString(const std::set<FileId>& ids) {
  std::string s = "{";
  bool first = true;
  for (const auto& id : ids) {
    if (!first) s += ' ';
    first = false;
    s += id.Short();
  }
  return s + "}";
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

// Deletes the snapshot files (restic's DeleteFilesChecked: stop at the first error).
void DeleteSnapshots(Repository& repo, const std::set<FileId>& ids) {
  std::vector<FileId> list(ids.begin(), ids.end());
  const auto start = std::chrono::steady_clock::now();
  std::mutex mu;
  std::optional<Error> first_error;
  size_t next = 0;
  const int workers =
      std::max(1, std::min<int>(repo.backend().Connections(), static_cast<int>(list.size())));
  if (!list.empty()) repo.CheckLock();  // a command that lost its lock deletes nothing
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      while (true) {
        size_t i;
        {
          std::lock_guard g(mu);
          if (first_error || next >= list.size()) return;
          i = next++;
        }
        Handle h{FileType::kSnapshot, list[i].Hex()};
        try {
          repo.backend().Remove(h);
          if (Globals().verbose >= 2 && !Globals().json) Verbose("removed " + h.ToString());
        } catch (const Error& e) {
          std::lock_guard g(mu);
          if (!Globals().json) Warn("unable to remove " + h.ToString() + " from the repository");
          if (!first_error) first_error = e;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_error) throw *first_error;
  if (!Globals().json && !Globals().quiet) {
    auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    char buf[128];
    std::snprintf(buf, sizeof(buf), "[%lld:%02lld] 100.00%%  %zu / %zu files deleted",
                  static_cast<long long>(secs / 60), static_cast<long long>(secs % 60),
                  list.size(), list.size());
    Print(buf);
  }
}

// The snapshots named on the command line (restic's FindFilteredSnapshots with ids):
// unknown or ambiguous ids are reported and skipped.
std::vector<SnapshotEntry> SelectByIds(const std::vector<SnapshotEntry>& all,
                                       const forget::Filter& filter,
                                       const std::vector<std::string>& args) {
  std::vector<FileId> ids;
  bool used_filter = false;
  for (const std::string& a : args) {
    if (a == "latest") {
      used_filter = true;
      const SnapshotEntry* best = nullptr;
      for (const auto& e : all)
        if (filter.Matches(e.second) &&
            (!best || e.second.time.sec > best->second.time.sec ||
             (e.second.time.sec == best->second.time.sec &&
              e.second.time.nsec >= best->second.time.nsec)))
          best = &e;
      if (!best) {
        Warn("Ignoring \"latest\", no snapshot matched given filter (Paths:[" +
             Join(filter.paths, " ") + "] Tags:" + forget::TagListsString(filter.tags) +
             " Hosts:[" + Join(filter.hosts, " ") + "])");
        continue;
      }
      ids.push_back(best->first);
      continue;
    }
    std::optional<FileId> match;
    bool multiple = false;
    for (const auto& e : all) {
      if (e.first.Hex().compare(0, a.size(), a) == 0 && a.size() <= 64) {
        if (match) multiple = true;
        match = e.first;
      }
    }
    if (multiple) {
      Warn("Ignoring \"" + a + "\": multiple IDs with prefix \"" + a + "\" found");
      continue;
    }
    if (!match) {
      Warn("Ignoring \"" + a + "\": no matching ID found for prefix \"" + a + "\"");
      continue;
    }
    ids.push_back(*match);
  }
  if (!used_filter && !filter.Empty())
    Warn("Ignoring filters as there are explicit snapshot ids given");
  std::vector<SnapshotEntry> out;
  std::set<FileId> seen;
  for (const FileId& id : ids) {
    if (!seen.insert(id).second) continue;
    for (const auto& e : all)
      if (e.first == id) out.push_back(e);
  }
  return out;
}

// A view of a backend without some snapshot files: `forget --dry-run --prune` plans the
// prune as if the snapshots it would remove were gone (restic passes them to planPrune as
// ignoreSnapshots). Everything else is passed through.
class HideSnapshotsBackend : public ForwardingBackend {
 public:
  HideSnapshotsBackend(std::shared_ptr<Backend> inner, std::set<std::string> hidden)
      : ForwardingBackend(std::move(inner)), hidden_(std::move(hidden)) {}
  void List(FileType t, const std::function<void(const FileInfo&)>& fn) override {
    inner_->List(t, [&](const FileInfo& fi) {
      if (t == FileType::kSnapshot && hidden_.count(fi.name)) return;
      fn(fi);
    });
  }

 private:
  std::set<std::string> hidden_;
};

void RunPruneAfterForget(Repository& repo, const ForgetOptions& o,
                         const std::set<FileId>& removed) {
  const GlobalOptions& g = Globals();
  if (!g.json) Print(std::to_string(removed.size()) + " snapshots have been removed, running prune");
  PruneOptions p;
  p.max_unused = o.max_unused;
  p.max_repack_size = o.max_repack_size;
  p.repack_cacheable_only = o.repack_cacheable_only;
  p.repack_small = o.repack_small;
  p.repack_uncompressed = o.repack_uncompressed;
  p.dry_run = o.dry_run;
  p.jobs = Jobs();
  p.write = GlobalWriteOptions();
  p.progress = [](const std::string& s) { Print(s); };
  p.warn = [](const std::string& s) { Warn(s); };
  std::unique_ptr<Repository> hiding;  // a dry run's view without the forgotten snapshots
  if (o.dry_run) {
    std::set<std::string> hidden;
    for (const auto& id : removed) hidden.insert(id.Hex());
    hiding = repo.WithBackend(std::make_shared<HideSnapshotsBackend>(repo.backend_ptr(), hidden));
  }
  // The same report as `prune` (restic runs prune's code with forget's repository).
  const bool dry_run = o.dry_run;
  PruneResult r = RunPrune(hiding ? *hiding : repo, p, [dry_run](const PrunePlan& plan) {
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
  forget::Filter filter;
  filter.hosts = o.hosts;
  for (const auto& t : o.tags) filter.tags.push_back(forget::SplitTagList(t));
  filter.paths = o.paths;
  forget::GroupBy group_by = forget::GroupBy::Parse(o.group_by);

  if (g.no_lock && !o.dry_run)
    Fail(ErrorCode::kInvalidArgument,
         "--no-lock is only applicable in combination with --dry-run for forget command");

  auto repo = OpenRepository();
  auto lock = LockRepository(*repo, true);  // nullptr with --no-lock (dry run only)
  auto all = repo->LoadSnapshots();

  std::set<FileId> remove_ids;
  std::string json_out;  // the groups' JSON, comma separated
  size_t json_groups = 0;

  if (!o.ids.empty()) {
    for (const auto& e : SelectByIds(all, filter, o.ids)) remove_ids.insert(e.first);
  } else {
    std::vector<SnapshotEntry> selected;
    for (const auto& e : all)
      if (filter.Matches(e.second)) selected.push_back(e);
    auto groups = forget::GroupSnapshots(std::move(selected), group_by);
    if (policy.Empty()) {
      if (!g.json) Print("no policy was specified, no snapshots will be removed");
    } else {
      if (!g.json) Print("Applying Policy: " + policy.String());
      forget::PolicyOptions popts;
      popts.local_offset = LocalOffset;
      const gojson::Timestamp now = Now();
      for (const auto& grp : groups) {
        if (g.verbose >= 1 && !g.json) std::cout << GroupHeader(grp);
        auto r = forget::ApplyPolicy(grp.snapshots, policy, now, popts);
        if (!r.keep.empty() && !g.quiet && !g.json)
          std::cout << "keep " << r.keep.size() << " snapshots:\n"
                    << SnapshotTable(r.keep, &r.reasons, o.compact) << '\n';
        if (!r.remove.empty() && !g.quiet && !g.json)
          std::cout << "remove " << r.remove.size() << " snapshots:\n"
                    << SnapshotTable(r.remove, nullptr, o.compact) << '\n';
        if (json_groups++) json_out += ',';
        json_out += GroupJson(grp, r);
        for (const auto& e : r.remove) remove_ids.insert(e.first);
      }
    }
  }

  if (!remove_ids.empty()) {
    if (!o.dry_run) {
      DeleteSnapshots(*repo, remove_ids);
    } else if (!g.json) {
      // restic prints this even with --quiet
      std::cout << "Would have removed the following snapshots:\n"
                << IdSetString(remove_ids) << "\n\n";
    }
  }
  if (g.json && json_groups > 0) std::cout << '[' << json_out << "]\n";
  std::cout.flush();
  if (!remove_ids.empty() && o.prune) RunPruneAfterForget(*repo, o, remove_ids);
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
  cmd->add_option("--host,--hostname", o.hosts,
                  "only consider snapshots with the given host (can be specified multiple "
                  "times)")
      ->allow_extra_args(false);
  cmd->add_option("--tag", o.tags,
                  "only consider snapshots which include this taglist in the format "
                  "tag[,tag,...] (can be specified multiple times)")
      ->allow_extra_args(false);
  cmd->add_option("--path", o.paths,
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
  cmd->callback(RunForget);
}

}  // namespace haven::cli
