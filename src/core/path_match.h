// restic-compatible path patterns for --exclude/--include: a pattern is split on '/',
// each part is a glob (* ? [..] \), "**" matches any number of components, a leading
// '/' anchors the pattern at the root; otherwise it matches any run of components
// (so "foo" matches /a/foo and everything below it). A leading '!' negates.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace haven {

class PatternList {
 public:
  PatternList() = default;
  explicit PatternList(std::vector<std::string> patterns);
  bool empty() const { return patterns_.empty(); }
  // True when the last pattern that matches `path` is not negated.
  bool Matches(std::string_view path) const;
  // True when a descendant of the directory `path` could match (for include filters).
  bool ChildCouldMatch(std::string_view path) const;

 private:
  struct Pattern {
    std::vector<std::string> parts;  // first part "/" when anchored; "" for "**"
    bool negated = false;
  };
  std::vector<Pattern> patterns_;
};

// Reads patterns from a file, one per line; blank lines and lines starting with '#' are
// skipped, surrounding whitespace is trimmed. Throws kInvalidArgument naming the file.
std::vector<std::string> ReadPatternFile(const std::string& file);

}  // namespace haven
