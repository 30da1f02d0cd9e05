#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "cli/snapshot_filter.h"

namespace haven::cli {

void RegisterSnapshots(CLI::App& app) {
  static SnapshotFilter f;
  static std::vector<std::string> ids;
  auto* cmd = app.add_subcommand("snapshots", "list snapshots");
  cmd->add_option("snapshot-ids", ids, "only these snapshots");
  cmd->add_option("-H,--host", f.hosts, "only snapshots of this host (repeatable)");
  cmd->add_option("--tag", f.tags, "only snapshots with these tags (comma = all of)");
  cmd->add_option("--path", f.paths, "only snapshots that include this path");
  cmd->callback([] {
    auto repo = OpenRepository();
    auto lock = LockRepository(*repo, false);
    auto all = repo->LoadSnapshots();
    auto list = f.Apply(all);
    if (!ids.empty()) {
      std::vector<std::pair<FileId, Snapshot>> sel;
      for (const auto& a : ids) {
        FileId id = repo->ResolveSnapshot(a, all);
        for (auto& e : all)
          if (e.first == id) sel.push_back(e);
      }
      list = sel;
    }
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
    char line[512];
    std::snprintf(line, sizeof(line), "%-9s %-20s %-10s %-10s %s", "ID", "Time", "Host", "Tags",
                  "Paths");
    std::string sep(std::string(line).size() + 10, '-');
    Print(line);
    Print(sep);
    for (const auto& [id, s] : list) {
      std::string tags;
      for (size_t i = 0; i < s.tags.size(); ++i) tags += (i ? "," : "") + s.tags[i];
      for (size_t i = 0; i < std::max<size_t>(1, s.paths.size()); ++i) {
        std::string p = i < s.paths.size() ? s.paths[i] : "";
        if (i == 0)
          std::snprintf(line, sizeof(line), "%-9s %-20s %-10s %-10s %s", id.Short().c_str(),
                        FormatTimeShort(s.time).c_str(), s.hostname.c_str(), tags.c_str(),
                        p.c_str());
        else
          std::snprintf(line, sizeof(line), "%-9s %-20s %-10s %-10s %s", "", "", "", "",
                        p.c_str());
        Print(line);
      }
    }
    Print(sep);
    Print(std::to_string(list.size()) + " snapshots");
  });
}

}  // namespace haven::cli
