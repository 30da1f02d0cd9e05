// snapshots: list the snapshots, as restic 0.14's table (full or --compact) or JSON, optionally
// grouped (-g host,paths,tags: a "snapshots for (...):" line and a table per group). restic
// writes the listing straight to stdout, so -q does not silence it.
#include <algorithm>
#include <iostream>

#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "cli/snapshot_table.h"
#include "maintenance/forget_policy.h"

namespace haven::cli {

namespace {
struct SnapshotsOptions {
  SnapshotFilter filter;
  std::vector<std::string> ids;
  bool compact = false;
  int latest = 0;  // 0: all
  std::string group_by;
};

std::string ListJson(const std::vector<forget::SnapshotEntry>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out += ',';
    out += SnapshotListJson(list[i].first, list[i].second, nullptr);
  }
  return out + "]";
}

// -g: one table per group (groups in the order of their keys; restic's order is random),
// or JSON [{"group_key":{...},"snapshots":[newest first]}].
void PrintGrouped(std::vector<forget::SnapshotEntry> list, const SnapshotsOptions& o,
                  const forget::GroupBy& by) {
  auto groups = forget::GroupSnapshots(std::move(list), by);
  std::string out = Globals().json ? "[" : "";
  for (size_t i = 0; i < groups.size(); ++i) {
    auto& g = groups[i];
    if (o.latest > 0) g.snapshots = LatestPerHostAndPaths(std::move(g.snapshots), size_t(o.latest));
    if (Globals().json) {
      std::stable_sort(g.snapshots.begin(), g.snapshots.end(), [](const auto& a, const auto& b) {
        const auto &ta = a.second.time, &tb = b.second.time;
        return ta.sec != tb.sec ? ta.sec > tb.sec : ta.nsec > tb.nsec;
      });
      if (i) out += ',';
      out += "{\"group_key\":" + g.key + ",\"snapshots\":" + ListJson(g.snapshots) + "}";
      continue;
    }
    out += GroupHeader(g);
    out += SnapshotTable(std::move(g.snapshots), nullptr, o.compact);
  }
  if (Globals().json) out += "]\n";
  std::cout << out;
}
}  // namespace

void RegisterSnapshots(CLI::App& app) {
  static SnapshotsOptions o;
  auto* cmd = app.add_subcommand("snapshots", "list snapshots");
  cmd->add_option("snapshot-ids", o.ids, "only these snapshots");
  cmd->add_option("-H,--host", o.filter.hosts, "only snapshots of this host (repeatable)");
  cmd->add_option("--tag", o.filter.tags, "only snapshots with these tags (comma = all of)");
  cmd->add_option("--path", o.filter.paths, "only snapshots that include this path");
  cmd->add_flag("-c,--compact", o.compact, "compact table: ID, time, host and tags only");
  cmd->add_option("--latest", o.latest, "only the last n snapshots of each host and paths")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-g,--group-by", o.group_by,
                  "group snapshots by host, paths and/or tags, separated by comma");
  cmd->callback([] {
    const forget::GroupBy by = forget::GroupBy::Parse(o.group_by);  // before opening
    auto repo = OpenRepository();
    // The snapshots are listed and read while the lock's check runs (one round trip less
    // over a network); the lock is confirmed before anything is printed, on the error path
    // too (a conflicting lock is then the error).
    auto lock = LockRepositoryOverlapped(*repo, false);
    auto all = LoadSnapshotsThenConfirm(*repo, lock);
    auto list = o.filter.Apply(all);
    if (!o.ids.empty()) {
      std::vector<std::pair<FileId, Snapshot>> sel;
      for (const auto& a : o.ids) {
        FileId id = ResolveSnapshot(a, all);
        for (auto& e : all)
          if (e.first == id) sel.push_back(e);
      }
      list = sel;
    }
    if (by.Any()) {
      PrintGrouped(std::move(list), o, by);
      return;
    }
    if (o.latest > 0) list = LatestPerHostAndPaths(std::move(list), size_t(o.latest));
    // restic lists each snapshot's paths sorted (its grouping sorts them in place), in the
    // table and in JSON, whatever their stored order.
    for (auto& e : list) std::sort(e.second.paths.begin(), e.second.paths.end());
    if (Globals().json) {
      std::string out = "[";
      for (size_t i = 0; i < list.size(); ++i) {
        if (i) out += ',';
        out += SnapshotListJson(list[i].first, list[i].second, nullptr);
      }
      out += "]\n";
      std::cout << out;
      return;
    }
    std::cout << SnapshotTable(std::move(list), nullptr, o.compact);
  });
}

}  // namespace haven::cli
