#include "core/path_match.h"

#include <fnmatch.h>
#include <locale.h>
#include <wctype.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <utility>

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
    out.push_back(ExpandEnv(line));
  }
  return out;
}

namespace {

bool ShellSpecial(char c) {
  return c == '*' || c == '#' || c == '$' || c == '@' || c == '!' || c == '?' || c == '-' ||
         (c >= '0' && c <= '9');
}

bool AlphaNum(char c) {
  return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Go's os.getShellName: the name after a '$' and the bytes it takes; an empty name with a
// width > 0 is bad syntax (the bytes are dropped).
std::pair<std::string_view, size_t> ShellName(std::string_view s) {
  if (s[0] == '{') {
    if (s.size() > 2 && ShellSpecial(s[1]) && s[2] == '}') return {s.substr(1, 1), 3};
    for (size_t i = 1; i < s.size(); ++i)
      if (s[i] == '}') {
        if (i == 1) return {{}, 2};
        return {s.substr(1, i - 1), i + 1};
      }
    return {{}, 1};
  }
  if (ShellSpecial(s[0])) return {s.substr(0, 1), 1};
  size_t i = 0;
  while (i < s.size() && AlphaNum(s[i])) ++i;
  return {s.substr(0, i), i};
}

// Decodes one UTF-8 character as Go does: nullopt for an invalid or truncated sequence,
// a surrogate, an overlong form or a value past U+10FFFF (one byte is then consumed).
std::optional<char32_t> DecodeUtf8(std::string_view s, size_t& len) {
  unsigned char c = static_cast<unsigned char>(s[0]);
  len = 1;
  if (c < 0x80) return c;
  size_t n;
  char32_t cp, min;
  if ((c & 0xe0) == 0xc0) {
    n = 2, cp = c & 0x1f, min = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, cp = c & 0x0f, min = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (s.size() < n) return std::nullopt;
  for (size_t i = 1; i < n; ++i) {
    unsigned char cc = static_cast<unsigned char>(s[i]);
    if ((cc & 0xc0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
  len = n;
  return cp;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// The Unicode case tables of glibc's C.UTF-8 locale, whatever the process's locale is.
locale_t Utf8Locale() {
  static locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  return loc;
}

}  // namespace

std::string ExpandEnv(std::string_view s) {
  if (s.find('$') == std::string_view::npos) return std::string(s);
  std::string out;
  size_t i = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    if (s[j] != '$' || j + 1 >= s.size()) continue;
    out.append(s.substr(i, j - i));
    auto [name, w] = ShellName(s.substr(j + 1));
    if (name.empty() && w > 0) {
      // bad syntax: dropped
    } else if (name.empty()) {
      out += '$';
    } else if (name == "$") {
      out += '$';
    } else {
      const char* v = std::getenv(std::string(name).c_str());
      if (v) out += v;
    }
    j += w;
    i = j + 1;
  }
  out.append(s.substr(std::min(i, s.size())));
  return out;
}

std::string FoldCase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool ascii = true;
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
  if (ascii) {
    for (char c : s) out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return out;
  }
  locale_t loc = Utf8Locale();
  for (size_t i = 0; i < s.size();) {
    size_t len;
    std::optional<char32_t> cp = DecodeUtf8(s.substr(i), len);
    if (!cp) {
      AppendUtf8(out, 0xfffd);
    } else if (*cp < 0x80) {
      char c = static_cast<char>(*cp);
      out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    } else {
      char32_t lower = loc ? static_cast<char32_t>(towlower_l(static_cast<wint_t>(*cp), loc)) : *cp;
      AppendUtf8(out, lower);
    }
    i += len;
  }
  return out;
}

}  // namespace haven
