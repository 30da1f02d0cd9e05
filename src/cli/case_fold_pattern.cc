#include "cli/case_fold_pattern.h"

namespace haven::cli {

namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
char OtherCase(char c) { return IsLower(c) ? char(c - 'a' + 'A') : char(c + 'a' - 'A'); }

std::string LetterClass(char c) {
  char lo = IsLower(c) ? c : OtherCase(c);
  return std::string("[") + lo + OtherCase(lo) + "]";
}

// The bracket expression starting at p[i] == '['; appends its case-insensitive form to out
// and returns the index after its closing ']'. Without a closing ']' the '[' is a literal
// (as fnmatch treats it) and npos is returned.
size_t Bracket(std::string_view p, size_t i, std::string& out) {
  size_t j = i + 1;
  std::string head = "[";
  if (j < p.size() && (p[j] == '!' || p[j] == '^')) head += p[j++];
  if (j < p.size() && p[j] == ']') head += p[j++];  // a leading ']' is a member
  std::string body, extra;
  while (j < p.size() && p[j] != ']') {
    char c = p[j];
    if (c == '\\' && j + 1 < p.size()) {
      body += p.substr(j, 2);
      if (IsLetter(p[j + 1])) extra += OtherCase(p[j + 1]);
      j += 2;
      continue;
    }
    if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
      char lo = c, hi = p[j + 2];
      body += p.substr(j, 3);
      if (IsLetter(lo) && IsLetter(hi) && IsLower(lo) == IsLower(hi))
        extra += std::string{OtherCase(lo), '-', OtherCase(hi)};
      j += 3;
      continue;
    }
    body += c;
    if (IsLetter(c)) extra += OtherCase(c);
    ++j;
  }
  if (j >= p.size()) return std::string_view::npos;
  out += head + body + extra + "]";
  return j + 1;
}

}  // namespace

std::string CaseInsensitiveGlob(std::string_view p) {
  std::string out;
  size_t i = 0;
  if (!p.empty() && p[0] == '!') out += p[i++];  // negation stays a negation
  while (i < p.size()) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      if (IsLetter(p[i + 1])) {
        out += LetterClass(p[i + 1]);
      } else {
        out += p.substr(i, 2);
      }
      i += 2;
    } else if (c == '[') {
      size_t next = Bracket(p, i, out);
      if (next == std::string_view::npos) {
        out += "\\[";
        ++i;
      } else {
        i = next;
      }
    } else if (IsLetter(c)) {
      out += LetterClass(c);
      ++i;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::vector<std::string> CaseInsensitiveGlobs(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  out.reserve(patterns.size());
  for (const auto& p : patterns) out.push_back(CaseInsensitiveGlob(p));
  return out;
}

}  // namespace haven::cli
