#include "cli/snapshot_table.h"

#include <algorithm>
#include <map>

#include "cli/common.h"

namespace haven::cli {

namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
}

bool Older(const forget::SnapshotEntry& a, const forget::SnapshotEntry& b) {
  if (a.second.time.sec != b.second.time.sec) return a.second.time.sec < b.second.time.sec;
  return a.second.time.nsec < b.second.time.nsec;
}

}  // namespace

std::string Table::Render() const {
  const size_t n = headers.size();
  std::vector<size_t> width(n, 0);
  for (size_t i = 0; i < n; ++i) width[i] = headers[i].size();
  for (const auto& r : rows)
    for (size_t i = 0; i < n; ++i)
      for (const auto& l : Lines(r[i])) width[i] = std::max(width[i], l.size());
  size_t total = 0;
  for (size_t w : width) total += w;
  total += (n - 1) * 2;

  auto line = [&](const std::vector<std::string>& cells, std::string& out, bool lead_blank) {
    std::vector<std::vector<std::string>> f;
    size_t max_lines = 1;
    for (const auto& c : cells) {
      f.push_back(Lines(c));
      max_lines = std::max(max_lines, f.back().size());
    }
    for (size_t k = 0; k < max_lines; ++k) {
      std::string s;
      for (size_t i = 0; i < f.size(); ++i) {
        std::string v = k < f[i].size() ? f[i][k] : "";
        if (v.size() < width[i]) v.append(width[i] - v.size(), ' ');
        if (i > 0) v = "  " + v;
        s += v;
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      if (lead_blank && k == 0) out += '\n';
      out += s + '\n';
    }
  };
  std::string out;
  line(headers, out, false);
  out += std::string(total, '-') + '\n';
  for (size_t r = 0; r < rows.size(); ++r) line(rows[r], out, blank_between_rows && r > 0);
  out += std::string(total, '-') + '\n';
  for (const auto& f : footer) out += f + '\n';
  return out;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

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
