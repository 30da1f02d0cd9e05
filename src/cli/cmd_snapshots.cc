// snapshots: list the snapshots, as restic 0.14's table (full or --compact) or JSON.
#include <algorithm>
#include <iostream>

#include "cli/common.h"
#include "cli/snapshot_filter.h"
#include "cli/snapshot_table.h"

namespace haven::cli {

namespace {
struct SnapshotsOptions {
  SnapshotFilter filter;
  std::vector<std::string> ids;
  bool compact = false;
  int latest = 0;  // 0: all
};
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
  cmd->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto all = repo->LoadSnapshots();
    auto list = o.filter.Apply(all);
    if (!o.ids.empty()) {
      std::vector<std::pair<FileId, Snapshot>> sel;
      for (const auto& a : o.ids) {
        FileId id = repo->ResolveSnapshot(a, all);
        for (auto& e : all)
          if (e.first == id) sel.push_back(e);
      }
      list = sel;
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
    std::string table = SnapshotTable(std::move(list), nullptr, o.compact);
    table.pop_back();  // Print adds the last line break
    Print(table);
  });
}

}  // namespace haven::cli
