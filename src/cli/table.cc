#include "cli/table.h"

#include <algorithm>

namespace haven::cli {

std::vector<std::string> SplitLines(const std::string& s) {
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

std::string Table::Render() const {
  const size_t n = headers.size();
  std::vector<size_t> width(n, 0);
  for (size_t i = 0; i < n; ++i) width[i] = headers[i].size();
  for (const auto& r : rows)
    for (size_t i = 0; i < n; ++i)
      for (const auto& l : SplitLines(r[i])) width[i] = std::max(width[i], l.size());
  size_t total = 0;
  for (size_t w : width) total += w;
  total += (n - 1) * 2;

  auto line = [&](const std::vector<std::string>& cells, std::string& out, bool lead_blank) {
    std::vector<std::vector<std::string>> f;
    size_t max_lines = 1;
    for (const auto& c : cells) {
      f.push_back(SplitLines(c));
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

}  // namespace haven::cli
