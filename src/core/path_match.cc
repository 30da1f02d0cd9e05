#include "core/path_match.h"

#include <fnmatch.h>

#include <fstream>

#include "core/error.h"

namespace haven {

namespace {

std::vector<std::string> Split(std::string_view p) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    parts.emplace_back(p.substr(start, end - start));
    start = end + 1;
  }
  if (!parts.empty() && parts[0].empty()) parts[0] = "/";
  // Clean: drop empty and "." components after the first.
  std::vector<std::string> out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && (parts[i].empty() || parts[i] == ".")) continue;
    out.push_back(parts[i]);
  }
  return out;
}

bool PartMatch(const std::string& pat, const std::string& s) {
  return fnmatch(pat.c_str(), s.c_str(), 0) == 0;
}


// Matches pat[pi..] against a contiguous window of s starting at si (prefix of s[si..]).
bool MatchPrefix(const std::vector<std::string>& pat, size_t pi,
                 const std::vector<std::string>& s, size_t si) {
  if (pi == pat.size()) return true;
  if (pat[pi].empty()) {
    for (size_t k = si; k <= s.size(); ++k)
      if (MatchPrefix(pat, pi + 1, s, k)) return true;
    return false;
  }
  if (si == s.size()) return false;
  if (!PartMatch(pat[pi], s[si])) return false;
  return MatchPrefix(pat, pi + 1, s, si + 1);
}

bool MatchParts(const std::vector<std::string>& pat, const std::vector<std::string>& s) {
  if (pat.empty()) return false;
  if (pat[0] == "/") {
    if (s.empty() || s[0] != "/") return false;
    return MatchPrefix(pat, 1, s, 1);
  }
  size_t start = (!s.empty() && s[0] == "/") ? 1 : 0;
  for (size_t off = start; off <= s.size(); ++off)
    if (MatchPrefix(pat, 0, s, off)) return true;
  return false;
}

}  // namespace

PatternList::PatternList(std::vector<std::string> patterns) {
  for (std::string& p : patterns) {
    if (p.empty()) continue;
    Pattern pat;
    std::string_view v = p;
    if (v[0] == '!') {
      pat.negated = true;
      v.remove_prefix(1);
    }
    pat.parts = Split(v);
    for (auto& part : pat.parts)
      if (part == "**") part.clear();
    patterns_.push_back(std::move(pat));
  }
}

bool PatternList::Matches(std::string_view path) const {
  auto s = Split(path);
  bool matched = false;
  for (const Pattern& p : patterns_)
    if (MatchParts(p.parts, s)) matched = !p.negated;
  return matched;
}

bool PatternList::ChildCouldMatch(std::string_view path) const {
  auto s = Split(path);
  for (const Pattern& p : patterns_) {
    if (p.negated) continue;
    if (p.parts.empty() || p.parts[0] != "/") return true;
    // Anchored: the directory's components must match a prefix of the pattern.
    size_t i = 1;
    bool ok = true;
    for (; i < p.parts.size() && i < s.size(); ++i) {
      if (p.parts[i].empty()) return true;
      if (!PartMatch(p.parts[i], s[i])) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

std::vector<std::string> ReadPatternFile(const std::string& file) {
  std::ifstream in(file);
  if (!in) Fail(ErrorCode::kInvalidArgument, "cannot read pattern file " + file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t\r");
    size_t e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, e - b + 1);
    if (line[0] == '#') continue;
    out.push_back(line);
  }
  return out;
}

}  // namespace haven
