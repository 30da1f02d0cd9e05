#include "cli/snapshot_table.h"

#include <algorithm>
#include <map>

#include "cli/common.h"
#include "cli/table.h"

namespace haven::cli {

namespace {

bool Older(const forget::SnapshotEntry& a, const forget::SnapshotEntry& b) {
  if (a.second.time.sec != b.second.time.sec) return a.second.time.sec < b.second.time.sec;
  return a.second.time.nsec < b.second.time.nsec;
}

}  // namespace

std::string SnapshotTable(std::vector<forget::SnapshotEntry> list,
                          const std::vector<forget::KeepReason>* reasons, bool compact) {
  std::map<FileId, std::vector<std::string>> why;
  if (reasons)
    for (const auto& r : *reasons) why[r.id] = r.matches;
  std::stable_sort(list.begin(), list.end(), Older);
  const bool with_reasons = reasons && !reasons->empty();
  Table t;
  if (compact) {
    t.headers = {"ID", "Time", "Host", "Tags  "};
  } else {
    t.headers = {"ID", "Time", "Host      ", "Tags      "};
    if (with_reasons) t.headers.push_back("Reasons");
    t.headers.push_back("Paths");
  }
  for (const auto& [id, s] : list) {
    std::vector<std::string> row = {id.Short(), FormatTimeShort(s.time), s.hostname};
    if (compact) {
      row.push_back(Join(s.tags, "\n"));
    } else {
      row.push_back(Join(s.tags, ","));
      if (with_reasons) row.push_back(Join(why[id], "\n"));
      row.push_back(Join(s.paths, "\n"));
      if (s.paths.size() > 1) t.blank_between_rows = true;
    }
    t.rows.push_back(std::move(row));
  }
  t.footer.push_back(std::to_string(list.size()) + " snapshots");
  return t.Render();
}

std::vector<forget::SnapshotEntry> LatestPerHostAndPaths(std::vector<forget::SnapshotEntry> list,
                                                         size_t n) {
  std::stable_sort(list.begin(), list.end(),
                   [](const auto& a, const auto& b) { return Older(b, a); });  // newest first
  std::map<std::pair<std::string, std::vector<std::string>>, size_t> seen;
  std::vector<forget::SnapshotEntry> out;
  for (auto& e : list) {
    std::vector<std::string> paths = e.second.paths;
    std::sort(paths.begin(), paths.end());
    if (seen[{e.second.hostname, std::move(paths)}]++ < n) out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), Older);
  return out;
}

std::string GroupHeader(const forget::SnapshotGroup& g) {
  if (g.hostname.empty() && !g.tags && !g.paths) return "";
  std::vector<std::string> info;
  if (!g.hostname.empty()) info.push_back("host [" + g.hostname + "]");
  if (g.tags) info.push_back("tags [" + Join(*g.tags, ", ") + "]");
  if (g.paths) info.push_back("paths [" + Join(*g.paths, ", ") + "]");
  return "snapshots for (" + Join(info, ", ") + "):\n";
}

}  // namespace haven::cli
